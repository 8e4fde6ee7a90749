// Exports: CSV, report JSON, Graphviz DOT, Hatchet literal JSON, Extra-P JSON Lines.
#include "export_formats.hpp"
#include "report_json.hpp"

#include <fcntl.h>
#include <signal.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <iostream>
#include <sstream>
#include <unordered_map>

#include "commands.hpp"
#include "findings.hpp"
#include "text.hpp"
#include "thread_values.hpp"
#include "html.hpp"
#include "scalea/drg/flat_map.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/format.hpp"
#include "scalea/launcher.hpp"

extern char** environ;

namespace scalea::cli {

using drg::MergedTree;
using overheads::kClassCount;
using overheads::kClassKeys;

const std::array<std::string_view, kClassCount> kClassColors = {
    "#9ecae1",  // data_movement: blue
    "#fc9272",  // synchronization: red
    "#fdd0a2",  // control_of_parallelism: orange
    "#a1d99b",  // additional_computation: green
    "#bcbddc",  // loss_of_parallelism: purple
    "#d9d9d9",  // unidentified: grey
};
const std::array<std::string_view, kClassCount> kClassShort = {"data", "sync", "control",
                                                               "addl", "loss", "unident"};

bool& reference_forced() {
  static bool forced = false;
  return forced;
}

namespace {
std::string base_name(const std::string& p) { return p.substr(p.rfind('/') + 1); }
std::string joined(const std::vector<std::string>& v, size_t from) {
  std::string s;
  for (size_t i = from; i < v.size(); ++i) s += (i > from ? " " : "") + v[i];
  return s;
}
}  // namespace

void check_reference(const drg::Experiment& run, const drg::Experiment& ref) {
  std::vector<std::string> a = drg::read_meta(run.meta).command,
                           b = drg::read_meta(ref.meta).command;
  std::string problem;
  size_t pes = std::max<size_t>(1, ref.threads.size());
  if (pes != 1)
    problem = fmt::format(
        "reference {} ran with p = {} ({} rank(s), {} thread(s)); the model "
        "compares with a run on one PE",
        ref.path, pes, ref.ranks(), ref.threads.size());
  else if (!a.empty() && !b.empty() && base_name(a[0]) != base_name(b[0]))
    problem = fmt::format("reference {} ran another program ({}; this run: {})", ref.path,
                          base_name(b[0]), base_name(a[0]));
  else if (!a.empty() && !b.empty() && joined(a, 1) != joined(b, 1))
    problem = fmt::format(
        "reference {} ran other arguments ('{}'; this run: '{}'): the inputs "
        "differ",
        ref.path, joined(b, 1), joined(a, 1));
  if (problem.empty()) return;
  if (!reference_forced()) throw UserError(problem + "; use --force to compare them anyway");
  static bool said = launcher_rank().value_or(0) != 0;  // under mpirun, rank 0 warns for the job
  if (!said)
    std::fprintf(stderr, "scalea: warning: %s (compared anyway: --force)\n", problem.c_str());
  said = true;
}

std::unique_ptr<Analyzed> analyze(const std::string& dir, const std::string& reference, int p,
                                  std::shared_ptr<overheads::CallPathKeys> keys,
                                  const overheads::MachineModel* machine, overheads::Share* share) {
  auto x = std::make_unique<Analyzed>();
  x->run = Source(dir);
  if (!reference.empty()) {
    x->ref = Source(reference);
    check_reference(x->experiment(), *x->reference());
  }
  overheads::Options opts;
  opts.p = p;
  opts.keys = std::move(keys);
  opts.paths = false;
  opts.machine = machine;
  opts.share = share;
  x->a = overheads::classify(x->tree(), x->reference_tree(), opts);
  return x;
}

std::string region_path(const MergedTree& run, const overheads::RegionOverheads& r) {
  if (!r.path.empty() || r.node == format::kNoIndex) return r.path;
  return run.path(r.node);
}

int dominant_class(const overheads::RegionOverheads& r) {
  int best = -1;
  double v = std::max(1e-9, 0.005 * r.t_p);
  for (int c = 0; c < kClassCount; ++c)
    if (r.classes[size_t(c)] > v) v = r.classes[size_t(c)], best = c;
  return best;
}

Folding fold_recursion(const MergedTree& t) {
  Folding f;
  f.hidden.assign(t.nodes().size(), 0);
  // Regions on the path from the root to the current node, as counts (a preorder walk).
  std::vector<uint32_t> on_path(t.experiment().regions.size(), 0);
  struct Frame {
    uint32_t node, next;
  };
  std::vector<Frame> stack{{0, 0}};
  ++on_path[t.node(0).region];
  while (!stack.empty()) {
    Frame& fr = stack.back();
    const drg::MergedNode& mn = t.node(fr.node);
    if (fr.next == mn.children.size()) {
      --on_path[mn.region];
      stack.pop_back();
      continue;
    }
    uint32_t c = mn.children[fr.next++];
    const drg::MergedNode& cn = t.node(c);
    if (f.hidden[fr.node] || on_path[cn.region] > 0) {
      if (!f.hidden[fr.node]) ++f.instances;
      f.hidden[c] = 1;
      ++f.rows;
      f.deepest = std::max(f.deepest, cn.depth);
    }
    ++on_path[cn.region];
    stack.push_back({c, 0});  // fr is not used after this
  }
  return f;
}

std::string node_label(const MergedTree& t, uint32_t n) {
  const drg::Region& reg = t.region_of(n);
  std::string loc = reg.location();
  return loc.empty() ? reg.label() : reg.label() + " @" + loc;
}

namespace {

std::string dot_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (ch == '\n') {
      o += "\\n";
      continue;
    }
    o += ch;
  }
  return o;
}

struct Cols {
  int visits, time, wait, fork, sent, recv, transfer;
  explicit Cols(const drg::Experiment& e)
      : visits(e.metric("visits")),
        time(e.metric("time")),
        wait(e.metric("wait")),
        fork(e.metric("fork")),
        sent(e.metric("bytes_sent")),
        recv(e.metric("bytes_recv")),
        transfer(e.metric("transfer")) {}
};

// Exclusive wall time of a node: its T_p minus its children's (never below zero; the children
// of a node can run on different PEs, so this is an estimate for the tree views).
double exclusive_time(const MergedTree& t, const overheads::Analysis& a, uint32_t n) {
  double v = a.regions[n].t_p;
  for (uint32_t c : t.node(n).children) v -= a.regions[c].t_p;
  return std::max(0.0, v);
}

}  // namespace

void export_csv(const TextSink& put, const Analyzed& x) {
  const MergedTree& t = x.tree();
  const drg::Experiment& e = x.experiment();
  const auto& a = x.a;
  Cols c(e);
  std::ostringstream out;
  out << "path,kind,label,source,function,rank,thread,visits,time,wait,fork,bytes_sent,bytes_recv,"
         "transfer,T_p,T_s,T_o";
  for (auto k : kClassKeys) out << "," << k;
  out << ",dominant\n";
  put(out.str());
  // One row per thread of each region, written region by region: its values read file by file.
  const std::vector<int> metrics = {c.visits, c.time, c.wait, c.fork, c.sent, c.recv, c.transfer};
  for_each_node_threads(t, t.preorder(), metrics, [&](const NodeThreads& holders) {
    const uint32_t n = holders.node;
    const auto& r = a.regions[n];
    const drg::Region& reg = t.region_of(n);
    int dom = dominant_class(r);
    std::string tail = fmt::format(",{:.9f},{:.9f},{:.9f}", r.t_p, r.t_s, r.t_o);
    for (double v : r.classes) tail += fmt::format(",{:.9f}", v);
    tail += "," + std::string(dom < 0 ? "" : kClassKeys[size_t(dom)]);
    std::string path = csv_field(region_path(t, r));
    out.str("");
    for (size_t i = 0; i < holders.count; ++i) {
      const drg::ThreadTree& tt = e.threads[holders.thread[i]];
      auto v = [&](size_t k) { return holders.value(i, k); };
      out << path << ',' << format::region_kind_name(reg.kind) << ',' << csv_field(reg.label())
          << ',' << csv_field(reg.location()) << ',' << csv_field(reg.function) << ',' << tt.rank
          << ',' << tt.thread << ',' << uint64_t(v(0)) << ','
          << fmt::format("{:.9f},{:.9f},{:.9f},{},{},{:.9f}", v(1) * 1e-9, v(2) * 1e-9,
                         v(3) * 1e-9, uint64_t(v(4)), uint64_t(v(5)), v(6) * 1e-9)
          << tail << '\n';
    }
    put(out.str());
  });
}

void export_json(const TextSink& put, const Analyzed& x, size_t findings) {
  ReportJsonOptions o;
  o.findings = findings;
  o.reference_tree = x.reference_tree();
  report_json(put, x.experiment(), x.tree(), x.a, x.reference(), o);
}

std::string export_dot(const Analyzed& x, const std::vector<char>* hidden) {
  auto shown = [&](uint32_t n) { return !hidden || n >= hidden->size() || !(*hidden)[n]; };
  const MergedTree& t = x.tree();
  const auto& a = x.a;
  Cols c(x.experiment());
  std::ostringstream o;
  o << "digraph scalea {\n"
    << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10, label=\""
    << dot_escape(x.experiment().path + ": call tree, p = " + std::to_string(a.p) +
                  "; colour = dominant overhead class")
    << "\", labelloc=t];\n"
    << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=9, "
       "fillcolor=\"#ffffff\"];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#666666\"];\n";
  for (uint32_t n : t.preorder()) {
    if (!shown(n)) continue;
    const auto& r = a.regions[n];
    int dom = dominant_class(r);
    std::string label =
        node_label(t, n) + fmt::format("\nT_p {:.4f} s  T_o {:.4f} s ({:.0f}%)", r.t_p, r.t_o,
                                       r.t_p > 0 ? 100 * r.t_o / r.t_p : 0.0);
    if (dom >= 0)
      label += fmt::format("\n{} {:.4f} s", kClassKeys[size_t(dom)], r.classes[size_t(dom)]);
    o << "  n" << n << " [label=\"" << dot_escape(label) << "\", tooltip=\""
      << dot_escape(region_path(t, r)) << "\"";
    if (dom >= 0) o << ", fillcolor=\"" << kClassColors[size_t(dom)] << "\"";
    o << ", class=\"" << (dom >= 0 ? kClassKeys[size_t(dom)] : "none") << "\"];\n";
  }
  for (uint32_t n : t.preorder()) {
    uint32_t p = t.node(n).parent;
    if (p == format::kNoIndex || !shown(n) || !shown(p)) continue;
    o << "  n" << p << " -> n" << n << " [label=\"" << uint64_t(t.sum(n, c.visits)) << "\"];\n";
  }
  // Legend: one box per class.
  o << "  subgraph cluster_legend {\n    label=\"dominant overhead class\"; fontsize=9; "
       "style=dashed;\n";
  // Declared in reverse: dot lays out a rank=same group right to left here.
  o << "    legend_none [label=\"none (< 0.5% of T_p)\", fontsize=8];\n";
  for (int k = kClassCount - 1; k >= 0; --k)
    o << "    legend_" << k << " [label=\"" << kClassKeys[size_t(k)] << "\", fillcolor=\""
      << kClassColors[size_t(k)] << "\", fontsize=8];\n";
  o << "    { rank=sink;";
  for (int k = 0; k < kClassCount; ++k) o << " legend_" << k << ";";
  o << " legend_none; }\n  }\n}\n";
  return o.str();
}

std::string export_hatchet(const Analyzed& x) {
  const MergedTree& t = x.tree();
  const auto& a = x.a;
  Cols c(x.experiment());
  uint32_t deepest = 0;
  for (const drg::MergedNode& mn : t.nodes()) deepest = std::max(deepest, mn.depth);
  // Written as nlohmann::json::dump(1) would write the nested document, without building it (and
  // without recursing: a node's children are written between its "children" key and its frame).
  const bool pretty = deepest <= drg::kPathLevels;
  std::string out;
  auto indent = [&](size_t n) {
    if (pretty) out.append(n, ' ');
  };
  auto text = [&](const char* pretty_text, const char* compact_text) {
    out += pretty ? pretty_text : compact_text;
  };
  // A flat object dumped at indentation `at`.
  auto value = [&](const nlohmann::json& j, size_t at) {
    if (!pretty) {
      out += json_text(j);
      return;
    }
    for (char ch : json_text(j, 1)) {
      out += ch;
      if (ch == '\n') out.append(at, ' ');
    }
  };
  // The end of a node's object at indentation `at`, after its children.
  auto finish = [&](uint32_t n, size_t at) {
    const auto& r = a.regions[n];
    const drg::Region& reg = t.region_of(n);
    nlohmann::json frame = {{"name", node_label(t, n)},
                            {"type", std::string(format::region_kind_name(reg.kind))}};
    nlohmann::json m;
    m["time (inc)"] = r.t_p;
    m["time"] = exclusive_time(t, a, n);
    m["visits"] = t.sum(n, c.visits);
    m["pes"] = double(r.pes_ran);
    m["T_s (inc)"] = r.t_s;
    m["T_o (inc)"] = r.t_o;
    for (int k = 0; k < kClassCount; ++k)
      m[std::string(kClassKeys[size_t(k)]) + " (inc)"] = r.classes[size_t(k)];
    text(",\n", ",");
    indent(at + 1);
    text("\"frame\": ", "\"frame\":");
    value(frame, at + 1);
    text(",\n", ",");
    indent(at + 1);
    text("\"metrics\": ", "\"metrics\":");
    value(m, at + 1);
    text("\n", "");
    indent(at);
    out += '}';
  };
  struct Open {
    uint32_t node;
    size_t at;     // indentation of the node's object
    size_t child;  // next child to write
  };
  std::vector<Open> stack;
  // Writes the start of a node's object; a node without children is finished at once.
  auto start = [&](uint32_t n, size_t at) {
    text("{\n", "{");
    indent(at + 1);
    text("\"children\": ", "\"children\":");
    if (t.node(n).children.empty()) {
      out += "[]";
      finish(n, at);
    } else {
      text("[\n", "[");
      stack.push_back({n, at, 0});
    }
  };
  std::vector<uint32_t> roots;
  for (uint32_t n = 0; n < t.nodes().size(); ++n)
    if (t.node(n).parent == format::kNoIndex) roots.push_back(n);
  if (roots.empty()) return "[]\n";
  text("[\n", "[");
  for (size_t i = 0; i < roots.size(); ++i) {
    if (i > 0) text(",\n", ",");
    indent(1);
    start(roots[i], 1);
    while (!stack.empty()) {
      Open& o = stack.back();
      const std::vector<uint32_t>& kids = t.node(o.node).children;
      if (o.child < kids.size()) {
        if (o.child > 0) text(",\n", ",");
        uint32_t ch = kids[o.child++];
        size_t at = o.at + 2;  // o is not used after start()
        indent(at);
        start(ch, at);
        continue;
      }
      Open done = o;
      stack.pop_back();
      text("\n", "");
      indent(done.at + 1);
      out += ']';
      finish(done.node, done.at);
    }
  }
  text("\n", "");
  out += "]\n";
  return out;
}

void export_extrap(const TextSink& put, const std::vector<const Analyzed*>& runs) {
  // Callpaths are the region labels joined by "->" (Extra-P's separator); every callpath seen in
  // any run gets a line for every run (0 where a run lacks the region), in call-tree order, so
  // Extra-P can build its call tree and fit a model on every point. Callpaths are interned as
  // (parent callpath, label) and numbered in order of first appearance; their text is built once,
  // for the lines written.
  std::unordered_map<std::string, uint32_t> label_ids;
  std::vector<std::string> labels;
  drg::FlatMap64 child;  // (parent callpath + 1, label) -> callpath
  std::vector<uint32_t> cp_parent, cp_label, cp_depth, cp_root;
  std::vector<std::vector<uint32_t>> cp_of(runs.size());  // per run: merged node -> callpath
  for (size_t i = 0; i < runs.size(); ++i) {
    const MergedTree& t = runs[i]->tree();
    std::vector<uint32_t>& cp = cp_of[i];
    cp.assign(t.nodes().size(), format::kNoIndex);
    for (uint32_t n : t.preorder()) {
      uint32_t p = t.node(n).parent;
      std::string own = node_label(t, n);
      for (size_t pos; (pos = own.find("->")) != std::string::npos;) own.replace(pos, 2, "-");
      auto [it, added] = label_ids.emplace(std::move(own), uint32_t(labels.size()));
      if (added) labels.push_back(it->first);
      uint32_t parent = p == format::kNoIndex ? format::kNoIndex : cp[p];
      uint64_t key = uint64_t(parent == format::kNoIndex ? 0 : parent + 1) << 32 | it->second;
      auto [id, fresh] = child.emplace(key, uint32_t(cp_parent.size()));
      if (fresh) {
        cp_parent.push_back(parent);
        cp_label.push_back(it->second);
        cp_depth.push_back(parent == format::kNoIndex ? 0 : cp_depth[parent] + 1);
        cp_root.push_back(parent == format::kNoIndex ? id : cp_root[parent]);
      }
      cp[n] = id;
    }
  }
  // Per run and callpath: the region (the last node of the run with that callpath).
  std::vector<std::vector<const overheads::RegionOverheads*>> per_run(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    per_run[i].assign(cp_parent.size(), nullptr);
    for (uint32_t n : runs[i]->tree().preorder()) per_run[i][cp_of[i][n]] = &runs[i]->a.regions[n];
  }
  auto line = [&](int p, const std::string& path, std::string_view metric, double v) {
    nlohmann::json j = {
        {"params", {{"p", p}}}, {"callpath", path}, {"metric", metric}, {"value", v}};
    put(json_text(j) + "\n");
  };
  for (uint32_t id = 0; id < cp_parent.size(); ++id) {
    std::string path = drg::call_path(
        id, cp_depth[id], cp_root[id], [&](uint32_t k) { return cp_parent[k]; },
        [&](uint32_t k) -> const std::string& { return labels[cp_label[k]]; }, "->");
    for (size_t i = 0; i < runs.size(); ++i) {
      const overheads::RegionOverheads* r = per_run[i][id];
      int p = runs[i]->a.p;
      line(p, path, "time", r ? r->t_p : 0.0);
      line(p, path, "overhead", r ? r->t_o : 0.0);
      for (int k = 0; k < kClassCount; ++k)
        line(p, path, kClassKeys[size_t(k)], r ? r->classes[size_t(k)] : 0.0);
    }
  }
}

std::optional<std::string> dot_to_svg(const std::string& dot, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<std::string> {
    if (why) *why = w;
    return std::nullopt;
  };
  const char* tmp = std::getenv("TMPDIR");
  std::string in_path = std::string(tmp && *tmp ? tmp : "/tmp") + "/scalea-dot-XXXXXX";
  std::vector<char> in_buf(in_path.begin(), in_path.end());
  in_buf.push_back(0);
  char* in_name = in_buf.data();
  int fd = mkstemp(in_name);
  if (fd < 0) return fail(std::string("cannot create a temporary file: ") + std::strerror(errno));
  bool ok = ::write(fd, dot.data(), dot.size()) == ssize_t(dot.size());
  ::close(fd);
  std::string out_name = std::string(in_name) + ".svg";
  if (!ok) {
    ::unlink(in_name);
    return fail("cannot write a temporary file");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  std::string o_arg = "-o" + out_name;
  const char* argv[] = {"dot", "-Tsvg", o_arg.c_str(), in_name, nullptr};
  pid_t pid;
  int rc = posix_spawnp(&pid, "dot", &fa, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  bool late = false;
  if (rc == 0) {
    // dot's layout grows faster than linearly with the graph: bounded, it cannot hang a report.
    for (int waited_ms = 0; waitpid(pid, &status, WNOHANG) == 0; waited_ms += 20) {
      if (waited_ms >= kDotTimeLimitS * 1000) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        late = true;
        break;
      }
      usleep(20000);
    }
  }
  ::unlink(in_name);
  if (rc != 0) return fail("Graphviz `dot` is not installed");
  if (late) {
    ::unlink(out_name.c_str());
    return fail(fmt::format("Graphviz `dot` took more than {} s", kDotTimeLimitS));
  }
  std::ifstream f(out_name);
  std::stringstream ss;
  ss << f.rdbuf();
  ::unlink(out_name.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !f)
    return fail("Graphviz `dot -Tsvg` failed");
  std::string svg = ss.str();
  size_t start = svg.find("<svg");
  if (start == std::string::npos) return fail("Graphviz `dot -Tsvg` wrote no SVG");
  return svg.substr(start);
}

namespace {
void write_json_format(const TextSink& put, const std::vector<const Analyzed*>& runs,
                       const ExportSettings& s) {
  export_json(put, *runs[0], s.findings);
  put("\n");
}
}  // namespace

const std::vector<ExportFormat>& export_formats() {
  static const std::vector<ExportFormat> formats = {
      {"csv", "one row per region and thread: metrics and the six overhead classes", false, true,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings&) {
         export_csv(put, *r[0]);
       }},
      {"json", "the report document (docs/json-schema.md) with the ranked findings", false, true,
       write_json_format},
      {"dot", "Graphviz call tree, coloured by dominant overhead class (dot -Tsvg)", false, true,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings&) {
         put(export_dot(*r[0]));
       }},
      {"hatchet", "Hatchet literal JSON: hatchet.GraphFrame.from_literal(json.load(f))", false,
       true,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings&) {
         put(export_hatchet(*r[0]));
       }},
      {"extrap",
       "Extra-P JSON Lines, one line per region, metric and run: give runs at\n"
       "           several p to fit scaling models (extrap --json-lines FILE)",
       true, false,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings&) {
         export_extrap(put, r);
       }},
      {"html",
       "one self-contained HTML report to explore, of an experiment or a scaling\n"
       "           study (same as scalea report --html)",
       false, true,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings& s) {
         put(render_html(*r[0], {s.findings, s.graphviz, s.source}));
       }},
  };
  return formats;
}

const ExportFormat* find_export_format(std::string_view name) {
  for (const ExportFormat& f : export_formats())
    if (f.name == name) return &f;
  return nullptr;
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  f << text;
  f.close();
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
}

namespace {
// Writes the text of write() to the file `path` as it is made, by way of `name` (the file itself,
// or a temporary file beside it).
void write_file(const std::string& path, const std::string& name,
                const std::function<void(const TextSink&)>& write) {
  std::ofstream f(name, std::ios::binary | std::ios::trunc);
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  write(write_to(f));
  f.close();
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
}
}  // namespace

void write_output(const std::string& path, const std::function<void(const TextSink&)>& write) {
  if (path.empty() || path == "-") {
    write(write_to(std::cout));
    std::cout.flush();
    return;
  }
  // A device, a pipe or a symbolic link (-o /dev/null) is written in place: renaming over it
  // would replace it. So is a file in a directory where no file can be created beside it.
  struct stat st;
  const bool exists = lstat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return write_file(path, path, write);
  // A file is written beside itself and renamed over it once complete: the text is never held
  // whole (a CSV export lists every thread of every region), and a write that throws leaves the
  // file as it was.
  std::string tmp = path + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0 && exists) return write_file(path, path, write);
  if (fd < 0) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask);  // the file's mode, or a new file's
  ::close(fd);
  try {
    write_file(path, tmp, write);
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw UserError("cannot write " + path + ": " + std::strerror(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace scalea::cli
