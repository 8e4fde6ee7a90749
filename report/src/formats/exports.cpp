// Exports: CSV, report JSON, Graphviz DOT, Hatchet literal JSON, Extra-P JSON Lines.
#include "exports.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <sstream>
#include <unordered_map>

#include "analysis/meta.hpp"
#include "analysis/thread_values.hpp"
#include "classes.hpp"
#include "report_json.hpp"
#include "sampled.hpp"
#include "output/text.hpp"
#include "scalea/drg/flat_map.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/format.hpp"

namespace scalea::cli {

using drg::MergedTree;
using overheads::kClassCount;
using overheads::kClassKeys;

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
      : visits(e.metric(format::CoreMetric::Visits)),
        time(e.metric(format::CoreMetric::TimeSum)),
        wait(e.metric(format::CoreMetric::Wait)),
        fork(e.metric(format::CoreMetric::Fork)),
        sent(e.metric(format::CoreMetric::BytesSent)),
        recv(e.metric(format::CoreMetric::BytesRecv)),
        transfer(e.metric(format::CoreMetric::Transfer)) {}
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
    std::string tail = "," + fixed(r.t_p, 9) + "," + fixed(r.t_s, 9) + "," + fixed(r.t_o, 9);
    for (double v : r.classes) tail += "," + fixed(v, 9);
    tail += "," + std::string(dom < 0 ? "" : kClassKeys[size_t(dom)]);
    std::string path = csv_field(region_path(t, r));
    out.str("");
    for (size_t i = 0; i < holders.count; ++i) {
      const drg::ThreadTree& tt = e.threads[holders.thread[i]];
      auto v = [&](size_t k) { return holders.value(i, k); };
      out << path << ',' << format::region_kind_name(reg.kind) << ',' << csv_field(reg.label())
          << ',' << csv_field(reg.location()) << ',' << csv_field(reg.function) << ',' << tt.rank
          << ',' << tt.thread << ',' << uint64_t(v(0)) << ','
          << fmt::format("{:.9f},{:.9f},{:.9f},{},{},{:.9f}", ns_to_s(v(1)), ns_to_s(v(2)),
                         ns_to_s(v(3)), uint64_t(v(4)), uint64_t(v(5)), ns_to_s(v(6)))
          << tail << '\n';
    }
    put(out.str());
  });
}

void export_sampled_csv(const TextSink& put, const Analyzed& x) {
  const MergedTree& t = x.tree();
  put("path,kind,label,source,sampled,function,module,location,samples,own,own_error,self,"
      "on_stack,region_cpu,share\n");
  if (!has_samples(x.experiment())) return;
  const drg::SampleProfile s(t);
  for (uint32_t n : t.preorder()) {
    const SampledChildren sc = sampled_children(t, s, {n});
    if (sc.functions.empty()) continue;
    const drg::Region& reg = t.region_of(n);
    const std::string region = csv_field(region_path(t, x.a.regions[n])) + ',' +
                               std::string(format::region_kind_name(reg.kind)) + ',' +
                               csv_field(reg.label()) + ',' + csv_field(reg.location());
    // What a function row and a line row share: its place, samples, own time and its error.
    auto row = [&](const char* what, const std::string& function, const std::string& module,
                   uint32_t where, double samples, double own, double error) {
      return region + ',' + what + ',' + csv_field(function) + ',' + csv_field(module) + ',' +
             csv_field(sampled_location(t, where)) + ',' + fmt::format("{}", samples) + ',' +
             fixed(own, 9) + ',' + fixed(error, 9);
    };
    const std::string tail = ',' + fixed(sc.cpu, 9) + ',';
    std::string out;
    for (const SampledChild& c : sc.functions) {
      const drg::SampledFunction& f = c.function;
      out += row("function", f.name, f.module, f.hot_region, f.own_samples, f.own, f.own_error) +
             ',' + fixed(f.self, 9) + ',' + fixed(f.inclusive, 9) + tail +
             fixed(f.own / sc.cpu, 6) + '\n';
      for (const drg::SampledLine& l : c.lines)
        out += row("line", l.function, l.module, l.region, l.samples, l.own, l.own_error) + ",," +
               tail + fixed(l.own / sc.cpu, 6) + '\n';
    }
    put(out);
  }
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

namespace {

// The Hatchet document, written as nlohmann::json::dump(1) would write the nested document,
// without building it (and without recursing: a node's children are written between its
// "children" key and its frame). A region's sampled functions (with their lines) follow its
// measured children; each is small and written whole.
class HatchetWriter {
 public:
  explicit HatchetWriter(const Analyzed& x) : x_(x), t_(x.tree()), c_(x.experiment()) {
    uint32_t deepest = 0;
    for (const drg::MergedNode& mn : t_.nodes()) deepest = std::max(deepest, mn.depth);
    pretty_ = deepest <= drg::kPathLevels;
    if (has_samples(x.experiment())) profile_.emplace(t_);
    if (!profile_ || !profile_->present()) {
      profile_.reset();
      return;
    }
    // The regions' sampled CPU time and samples with the regions below them, children first.
    cpu_below_.assign(t_.nodes().size(), 0.0);
    samples_below_.assign(t_.nodes().size(), 0.0);
    const std::vector<uint32_t>& order = t_.preorder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      cpu_below_[*it] += profile_->cpu(*it);
      samples_below_[*it] += profile_->samples(*it);
      uint32_t p = t_.node(*it).parent;
      if (p != format::kNoIndex)
        cpu_below_[p] += cpu_below_[*it], samples_below_[p] += samples_below_[*it];
    }
  }

  std::string write() {
    std::vector<uint32_t> roots;
    for (uint32_t n = 0; n < t_.nodes().size(); ++n)
      if (t_.node(n).parent == format::kNoIndex) roots.push_back(n);
    if (roots.empty()) return "[]\n";
    text("[\n", "[");
    for (size_t i = 0; i < roots.size(); ++i) {
      if (i > 0) text(",\n", ",");
      indent(1);
      start(roots[i], 1);
      write_open();
    }
    text("\n", "");
    out_ += "]\n";
    return std::move(out_);
  }

 private:
  struct Open {
    uint32_t node;
    size_t at;     // indentation of the node's object
    size_t child;  // next child to write: measured children, then sampled functions
    SampledChildren sampled;
  };

  void indent(size_t n) {
    if (pretty_) out_.append(n, ' ');
  }
  void text(const char* pretty_text, const char* compact_text) {
    out_ += pretty_ ? pretty_text : compact_text;
  }
  // An object dumped at indentation `at`.
  void value(const nlohmann::json& j, size_t at) {
    if (!pretty_) {
      out_ += json_text(j);
      return;
    }
    for (char ch : json_text(j, 1)) {
      out_ += ch;
      if (ch == '\n') out_.append(at, ' ');
    }
  }
  // The metrics every node has (Hatchet takes the columns from one node), those of a sampled
  // node 0. With samples: `sampled` (1 for a sampled function or line), `cpu (inc)` (sampled CPU
  // time: a region's with the regions below it, a function's and a line's own time), `cpu` (what
  // no child holds), `samples (inc)` and `cpu error (inc)` (one standard deviation), and a
  // function's `cpu self` and `cpu on stack`.
  nlohmann::json metrics(const overheads::RegionOverheads* r, uint32_t n) const {
    nlohmann::json m;
    m["time (inc)"] = r ? r->t_p : 0.0;
    m["time"] = r ? exclusive_time(t_, x_.a, n) : 0.0;
    m["visits"] = r ? t_.sum(n, c_.visits) : 0.0;
    m["pes"] = r ? double(r->pes_ran) : 0.0;
    m["T_s (inc)"] = r ? r->t_s : 0.0;
    m["T_o (inc)"] = r ? r->t_o : 0.0;
    for (int k = 0; k < kClassCount; ++k)
      m[std::string(kClassKeys[size_t(k)]) + " (inc)"] = r ? r->classes[size_t(k)] : 0.0;
    if (profile_) {
      m["sampled"] = 0;
      for (const char* k :
           {"cpu (inc)", "cpu", "samples (inc)", "cpu error (inc)", "cpu self", "cpu on stack"})
        m[k] = 0.0;
    }
    return m;
  }
  static void set_sampled(nlohmann::json& m, double own, double exclusive, double samples,
                          double error) {
    m["sampled"] = 1;
    m["cpu (inc)"] = own;
    m["cpu"] = exclusive;
    m["samples (inc)"] = samples;
    m["cpu error (inc)"] = error;
  }
  // A sampled function below its region, its lines below it.
  nlohmann::json sampled_node(const SampledChild& c) const {
    const drg::SampledFunction& f = c.function;
    nlohmann::json lines = nlohmann::json::array();
    double in_lines = 0;
    for (const drg::SampledLine& l : c.lines) {
      nlohmann::json m = metrics(nullptr, 0);
      set_sampled(m, l.own, l.own, l.samples, l.own_error);
      in_lines += l.own;
      lines.push_back(
          {{"children", nlohmann::json::array()},
           {"frame", {{"name", sampled_location(t_, l.region)}, {"type", "sampled line"}}},
           {"metrics", std::move(m)}});
    }
    nlohmann::json m = metrics(nullptr, 0);
    set_sampled(m, f.own, unlisted(f.own, in_lines), f.own_samples, f.own_error);
    m["cpu self"] = f.self;
    m["cpu on stack"] = f.inclusive;
    return {{"children", std::move(lines)},
            {"frame", {{"name", f.name}, {"type", "sampled function"}, {"module", f.module}}},
            {"metrics", std::move(m)}};
  }
  // What of `total` its children do not hold (0 within rounding).
  static double unlisted(double total, double in_children) {
    double v = total - in_children;
    return v > 1e-9 * total ? v : 0.0;
  }
  // The end of a node's object at indentation `at`, after its children.
  void finish(uint32_t n, size_t at, const SampledChildren& sampled) {
    const drg::Region& reg = t_.region_of(n);
    nlohmann::json frame = {{"name", node_label(t_, n)},
                            {"type", std::string(format::region_kind_name(reg.kind))}};
    nlohmann::json m = metrics(&x_.a.regions[n], n);
    if (profile_) {
      double in_functions = 0;
      for (const SampledChild& c : sampled.functions) in_functions += c.function.own;
      m["cpu (inc)"] = cpu_below_[n];
      m["cpu"] = unlisted(sampled.cpu, in_functions);
      m["samples (inc)"] = samples_below_[n];
      m["cpu error (inc)"] =
          samples_below_[n] > 0 ? cpu_below_[n] / std::sqrt(samples_below_[n]) : 0.0;
    }
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
    out_ += '}';
  }
  // Writes the start of a node's object; a node without children is finished at once.
  void start(uint32_t n, size_t at) {
    text("{\n", "{");
    indent(at + 1);
    text("\"children\": ", "\"children\":");
    SampledChildren sampled;
    if (profile_) sampled = sampled_children(t_, *profile_, {n});
    if (t_.node(n).children.empty() && sampled.functions.empty()) {
      out_ += "[]";
      finish(n, at, sampled);
    } else {
      text("[\n", "[");
      stack_.push_back({n, at, 0, std::move(sampled)});
    }
  }
  // Writes the open nodes' children, then closes the nodes, deepest first.
  void write_open() {
    while (!stack_.empty()) {
      Open& o = stack_.back();
      const std::vector<uint32_t>& kids = t_.node(o.node).children;
      if (o.child < kids.size() + o.sampled.functions.size()) {
        if (o.child > 0) text(",\n", ",");
        size_t at = o.at + 2;
        indent(at);
        if (o.child >= kids.size()) {
          value(sampled_node(o.sampled.functions[o.child++ - kids.size()]), at);
          continue;
        }
        uint32_t ch = kids[o.child++];
        start(ch, at);  // o is not used after start()
        continue;
      }
      Open done = std::move(o);
      stack_.pop_back();
      text("\n", "");
      indent(done.at + 1);
      out_ += ']';
      finish(done.node, done.at, done.sampled);
    }
  }

  const Analyzed& x_;
  const MergedTree& t_;
  Cols c_;
  bool pretty_ = true;
  std::optional<drg::SampleProfile> profile_;  // when the experiment has samples
  std::vector<double> cpu_below_, samples_below_;
  std::string out_;
  std::vector<Open> stack_;
};

}  // namespace

std::string export_hatchet(const Analyzed& x) { return HatchetWriter(x).write(); }

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

namespace {
void write_json_format(const TextSink& put, const std::vector<const Analyzed*>& runs,
                       const ExportSettings& s) {
  export_json(put, *runs[0], s.findings);
  put("\n");
}
}  // namespace

const std::vector<ExportFormat>& file_formats() {
  static const std::vector<ExportFormat> formats = {
      {"csv", "one row per region and thread: metrics and the six overhead classes", false, true,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings&) {
         export_csv(put, *r[0]);
       }},
      {"csv-sampled",
       "call-path samples: the functions and lines sampled in each region (CPU time,\n"
       "           samples, error), one row each, kept apart from the regions of csv",
       false, true,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings&) {
         export_sampled_csv(put, *r[0]);
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
       "Extra-P JSON Lines, one line per region, metric and run: give a study, or\n"
       "           runs at several p, to fit scaling models (extrap --json FILE)",
       true, false,
       [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings&) {
         export_extrap(put, r);
       }},
  };
  return formats;
}

}  // namespace scalea::cli
