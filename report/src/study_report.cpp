// scalea report STUDYDIR: per region and for the program, time, speedup, efficiency and the six
// overhead classes per configuration (the paper's Table 2), plus gnuplot plots (docs/study.md).
#include "study_report.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "commands.hpp"
#include "text.hpp"
#include "export_formats.hpp"
#include "findings.hpp"
#include "report_json.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/overheads/classify.hpp"

extern char** environ;

namespace scalea::cli {
namespace {

using namespace study;
using overheads::kClassCount;
using overheads::kClassKeys;

// ---- options (registered on the `report` subcommand) ----

struct StudyReportOptions {
  std::string plots, region;
  int top = -1;
};
auto g_opts = std::make_shared<StudyReportOptions>();
CLI::App* g_report = nullptr;

std::string option_string(const char* name, const std::string& fallback) {
  CLI::Option* opt = g_report ? g_report->get_option_no_throw(name) : nullptr;
  if (!opt || opt->count() == 0) return fallback;
  return opt->as<std::string>();
}

// ---- statistics ----

struct Stat {
  double med = 0, min = 0, max = 0;
  size_t n = 0;
};

Stat stat_of(std::vector<double> v) {
  Stat s;
  s.n = v.size();
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.med = median(std::move(v));
  return s;
}

// ---- the study's data, per region (union of the runs' call trees) and configuration ----

struct Sample {
  double t_p = 0, t_o = 0;
  std::array<double, kClassCount> cls{};
  bool in_run = true;
};

struct Node {
  uint32_t key = 0;  // call-path key (Data::keys)
  int parent = -1;
  int depth = 0;
  std::string label, location, kind, name, file, function;
  std::string component;  // this level of the call path (drg::path_component)
  size_t root = 0;        // the root component of the run that added the node (Data::roots)
  uint32_t line = 0;
  std::vector<int> children;
  std::optional<double> t_s;  // reference time
};

struct Cell {  // one region at one configuration, over repetitions
  std::vector<Sample> samples;
  Stat time;
  std::array<Stat, kClassCount> cls;
  Stat total_rep;  // T_o per repetition
  std::array<double, kClassCount> cls_med{};
  double total = 0;  // sum of the class medians
  std::optional<double> speedup, efficiency;
};

struct ConfigData {
  Config config;
  std::vector<std::string> experiments;  // relative paths of the runs used
  std::vector<double> lb, ce, pe;        // POP metrics per repetition
};

struct Data {
  std::string dir;
  Study study;
  std::vector<ConfigData> configs;  // reference first, then by p
  std::vector<Node> nodes;          // preorder not guaranteed: use children
  std::shared_ptr<overheads::CallPathKeys> keys = std::make_shared<overheads::CallPathKeys>();
  std::unordered_map<uint32_t, int> index;  // call-path key -> node
  std::vector<std::string> roots;           // root components of the runs, distinct
  std::vector<std::vector<Cell>> cells;  // [node][config]
  std::string reference_experiment;
  double reference_program_time = 0;
  size_t reference_reps = 0;
  // Per call-path key: the smallest and largest time of the region over the reference's
  // repetitions (their spread is part of the run-to-run noise).
  std::unordered_map<uint32_t, std::pair<double, double>> reference_range;
  size_t runs_ok = 0, runs_failed = 0, runs_pending = 0;
  std::vector<std::string> warnings;
};

double program_time(const drg::MergedTree& t) {
  int m = t.experiment().metric("time");
  return m < 0 ? 0.0 : t.max(0, m) * 1e-9;
}

struct Loaded {
  std::unique_ptr<drg::Experiment> e;
  std::unique_ptr<drg::MergedTree> t;
};

std::optional<Loaded> load(const std::string& dir, const Run& r, std::vector<std::string>& warnings) {
  try {
    Loaded l;
    l.e = std::make_unique<drg::Experiment>(drg::load_experiment(dir + "/" + r.experiment()));
    l.t = std::make_unique<drg::MergedTree>(*l.e);
    return l;
  } catch (const drg::LoadError& e) {
    warnings.push_back("run " + r.id() + " left out: " + e.what());
  }
  return std::nullopt;
}

// The call path of a node as the run that added it printed it (drg::call_path).
std::string node_path(const Data& d, int n) {
  const Node& nd = d.nodes[size_t(n)];
  return drg::call_path(
      uint32_t(n), uint32_t(nd.depth), 0, [&](uint32_t i) { return uint32_t(d.nodes[i].parent); },
      [&](uint32_t i) -> const std::string& { return i == 0 ? d.roots[nd.root] : d.nodes[i].component; });
}

int add_node(Data& d, const drg::MergedTree& t, const overheads::Analysis& a, uint32_t n,
             const std::vector<int>& mapped, size_t root) {
  uint32_t key = a.regions[n].key;
  auto it = d.index.find(key);
  if (it != d.index.end()) return it->second;
  Node nd;
  nd.key = key;
  uint32_t parent = t.node(n).parent;
  nd.parent = parent == format::kNoIndex ? -1 : mapped[parent];
  nd.depth = nd.parent < 0 ? 0 : d.nodes[size_t(nd.parent)].depth + 1;
  const drg::Region& reg = t.region_of(n);
  nd.label = reg.label();
  nd.location = reg.kind == drg::RegionKind::Program ? "" : reg.location();
  nd.kind = std::string(format::region_kind_name(reg.kind));
  nd.name = reg.name;
  nd.file = reg.file;
  nd.function = reg.function;
  nd.line = reg.line;
  nd.component = drg::path_component(reg);
  nd.root = root;
  int id = int(d.nodes.size());
  d.nodes.push_back(nd);
  d.index.emplace(key, id);
  if (nd.parent >= 0) d.nodes[size_t(nd.parent)].children.push_back(id);
  d.cells.emplace_back();
  return id;
}

// Whether a region's speedup means anything: not for a synchronization construct, whose time is
// waiting (a barrier that took 0.1 ms at p = 1 and 10 ms at p = 4 has no "speedup of 0.01").
bool has_speedup(const Node& n) {
  static const std::set<std::string> waiting = {"barrier_implicit", "barrier_explicit",
                                                "barrier_implementation", "taskwait", "taskgroup",
                                                "reduction", "flush"};
  return !waiting.count(n.kind);
}

Data gather(const std::string& dir) {
  Data d;
  d.dir = dir;
  d.study = load_study(dir);
  for (const Run& r : d.study.runs) {
    if (r.status == Status::Ok) ++d.runs_ok;
    else if (r.status == Status::Failed) ++d.runs_failed;
    else ++d.runs_pending;
  }
  // The reference: the repetition of the 1 x 1 configuration with the median program time.
  std::vector<std::pair<double, const Run*>> refs;
  Loaded ref;
  for (const Run& r : d.study.runs) {
    if (!r.reference() || r.status != Status::Ok) continue;
    auto l = load(dir, r, d.warnings);
    if (!l) continue;
    refs.emplace_back(program_time(*l->t), &r);
    std::vector<uint32_t> keys = d.keys->intern(*l->t);
    int time = l->e->metric("time");
    for (uint32_t n = 0; n < keys.size(); ++n) {
      double t_p = l->t->max(n, time) * 1e-9;
      auto [it, added] = d.reference_range.emplace(keys[n], std::make_pair(t_p, t_p));
      if (!added) it->second = {std::min(it->second.first, t_p), std::max(it->second.second, t_p)};
    }
  }
  if (refs.empty())
    throw UserError("the study in " + dir + " has no completed reference run (1 thread, 1 rank); " +
                    "run it with: scalea study -o " + dir + " --resume");
  std::sort(refs.begin(), refs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const Run* ref_run = refs[(refs.size() - 1) / 2].second;
  ref = *load(dir, *ref_run, d.warnings);
  d.reference_experiment = ref_run->experiment();
  d.reference_program_time = refs[(refs.size() - 1) / 2].first;
  d.reference_reps = refs.size();

  // Configurations in plan order; the chosen reference repetition is classified first so the
  // union tree follows the reference's order.
  std::vector<const Run*> order{ref_run};
  for (const Config& c : d.study.configs())
    for (const Run& r : d.study.runs)
      if (r.config == c && r.status == Status::Ok && &r != ref_run) order.push_back(&r);
  auto config_index = [&](const Config& c) {
    for (size_t i = 0; i < d.configs.size(); ++i)
      if (d.configs[i].config == c) return i;
    d.configs.push_back({c, {}, {}, {}, {}});
    return d.configs.size() - 1;
  };
  (void)config_index(Config{1, 1});
  for (const Config& c : d.study.configs()) (void)config_index(c);
  std::vector<bool> config_used(d.configs.size(), false);

  for (const Run* r : order) {
    std::optional<Loaded> own;
    const drg::MergedTree* t = ref.t.get();
    if (r != ref_run) {
      own = load(dir, *r, d.warnings);
      if (!own) continue;
      t = own->t.get();
    }
    overheads::Options opts;
    opts.p = r->config.p();
    opts.keys = d.keys;
    opts.paths = false;  // node_path builds the ones printed
    overheads::Analysis a = overheads::classify(*t, ref.t.get(), opts);
    std::string root_component = drg::path_component(t->region_of(0));
    size_t root = size_t(std::find(d.roots.begin(), d.roots.end(), root_component) - d.roots.begin());
    if (root == d.roots.size()) d.roots.push_back(root_component);
    size_t ci = config_index(r->config);
    config_used[ci] = true;
    ConfigData& cd = d.configs[ci];
    cd.experiments.push_back(r->experiment());
    cd.lb.push_back(a.program.load_balance);
    cd.ce.push_back(a.program.communication_efficiency);
    cd.pe.push_back(a.program.parallel_efficiency);
    // One sample per region and run. Merged nodes with the same call-path key (the same source
    // construct recorded as several regions) are added up, in the run and in the reference.
    std::vector<int> mapped(t->nodes().size(), -1);
    std::map<int, Sample> run_samples;
    for (uint32_t n : t->preorder()) {
      int id = add_node(d, *t, a, n, mapped, root);
      mapped[n] = id;
      const auto& ro = a.regions[n];
      if (r == ref_run) d.nodes[size_t(id)].t_s = d.nodes[size_t(id)].t_s.value_or(0.0) + ro.t_p;
      Sample& s = run_samples[id];
      s.t_p += ro.t_p;
      s.t_o += ro.t_o;
      for (int k = 0; k < kClassCount; ++k) s.cls[size_t(k)] += ro.classes[size_t(k)];
    }
    for (const auto& [id, s] : run_samples) {
      auto& cells = d.cells[size_t(id)];
      if (cells.size() < d.configs.size()) cells.resize(d.configs.size());
      cells[ci].samples.push_back(s);
    }
    // Regions the reference ran and this run did not: their work is gone.
    std::map<int, Sample> gone;
    for (const auto& ro : a.only_in_reference) {
      auto it = d.index.find(ro.key);
      if (it == d.index.end()) continue;
      if (run_samples.count(it->second)) continue;  // the run has the construct elsewhere
      Sample& s = gone[it->second];
      s.in_run = false;
      s.t_o += ro.t_o;
      for (int k = 0; k < kClassCount; ++k) s.cls[size_t(k)] += ro.classes[size_t(k)];
    }
    for (const auto& [id, s] : gone) {
      auto& cells = d.cells[size_t(id)];
      if (cells.size() < d.configs.size()) cells.resize(d.configs.size());
      cells[ci].samples.push_back(s);
    }
  }
  // Drop configurations without any usable run.
  std::vector<size_t> keep;
  for (size_t i = 0; i < d.configs.size(); ++i)
    if (config_used[i]) keep.push_back(i);
  std::vector<ConfigData> configs;
  for (size_t i : keep) configs.push_back(d.configs[i]);
  for (auto& cells : d.cells) {
    cells.resize(d.configs.size());
    std::vector<Cell> kept;
    for (size_t i : keep) kept.push_back(cells[i]);
    cells = std::move(kept);
  }
  d.configs = std::move(configs);

  for (size_t n = 0; n < d.nodes.size(); ++n)
    for (size_t c = 0; c < d.configs.size(); ++c) {
      Cell& cell = d.cells[n][c];
      if (cell.samples.empty()) continue;
      std::vector<double> tp, to;
      std::array<std::vector<double>, kClassCount> cls;
      for (const Sample& s : cell.samples) {
        tp.push_back(s.t_p);
        to.push_back(s.t_o);
        for (int k = 0; k < kClassCount; ++k) cls[size_t(k)].push_back(s.cls[size_t(k)]);
      }
      cell.time = stat_of(tp);
      cell.total_rep = stat_of(to);
      cell.total = 0;
      for (int k = 0; k < kClassCount; ++k) {
        cell.cls[size_t(k)] = stat_of(cls[size_t(k)]);
        cell.cls_med[size_t(k)] = cell.cls[size_t(k)].med;
        cell.total += cell.cls_med[size_t(k)];
      }
      const auto& ts = d.nodes[n].t_s;
      if (ts && cell.time.med > 0 && has_speedup(d.nodes[n])) {
        cell.speedup = *ts / cell.time.med;
        cell.efficiency = *cell.speedup / d.configs[c].config.p();
      }
    }
  return d;
}

// ---- selection: --region, --top ----

std::vector<int> preorder(const Data& d) {
  std::vector<int> out, stack{0};
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    out.push_back(n);
    const auto& ch = d.nodes[size_t(n)].children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

// A region's weight for --top: its largest median total overhead over the parallel configurations.
double weight(const Data& d, int n) {
  double w = -1e300;
  for (size_t c = 0; c < d.configs.size(); ++c) {
    const Cell& cell = d.cells[size_t(n)][c];
    if (d.configs[c].config.p() > 1 && !cell.samples.empty()) w = std::max(w, cell.total);
  }
  return w;
}

bool matches(const Data& d, int id, const std::string& q) {
  const Node& n = d.nodes[size_t(id)];
  for (const std::string* s : {&n.label, &n.name, &n.function, &n.location})
    if (s->find(q) != std::string::npos) return true;
  return node_path(d, id).find(q) != std::string::npos;
}

// Regions to detail (beyond the program): matching --region, else the --top N by overhead.
std::vector<int> detailed(const Data& d, int default_top) {
  std::vector<int> out;
  if (!g_opts->region.empty()) {
    for (int n : preorder(d))
      if (matches(d, n, g_opts->region)) out.push_back(n);
    if (out.empty()) throw UserError("no region of the study matches --region '" + g_opts->region + "'");
    if (g_opts->top >= 0 && out.size() > size_t(g_opts->top)) out.resize(size_t(g_opts->top));
    return out;
  }
  int top = g_opts->top >= 0 ? g_opts->top : default_top;
  for (int n : preorder(d))
    if (n != 0) out.push_back(n);
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return weight(d, a) > weight(d, b); });
  if (top >= 0 && out.size() > size_t(top)) out.resize(size_t(top));
  return out;
}

// ---- findings at the largest p ----

// The findings of the largest configuration: those of its repetition with the median program T_o,
// against the reference, where the run-to-run noise of each region (the spread of its T_o over
// the repetitions, and of its time over the reference's repetitions, / p) is the floor.
struct StudyFindings {
  std::string experiment;  // relative path of the repetition the findings come from
  int p = 0;
  bool noise_measured = false;
  std::vector<Finding> findings;
  overheads::Analysis analysis;
};

std::optional<StudyFindings> study_findings(const Data& d) {
  size_t c = d.configs.size();
  while (c > 0 && (d.cells[0][c - 1].samples.empty() || d.configs[c - 1].config.p() <= 1)) --c;
  if (c == 0) return std::nullopt;
  --c;
  const ConfigData& cd = d.configs[c];
  const std::vector<Sample>& reps = d.cells[0][c].samples;
  if (reps.size() != cd.experiments.size()) return std::nullopt;
  std::vector<size_t> order(reps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return reps[a].t_o < reps[b].t_o; });
  StudyFindings out;
  out.experiment = cd.experiments[order[(order.size() - 1) / 2]];
  out.p = cd.config.p();
  drg::Experiment e = drg::load_experiment(d.dir + "/" + out.experiment);
  drg::Experiment ref = drg::load_experiment(d.dir + "/" + d.reference_experiment);
  drg::MergedTree t(e), rt(ref);
  overheads::Options opts;
  opts.p = out.p;
  opts.keys = d.keys;
  opts.paths = false;
  out.analysis = overheads::classify(t, &rt, opts);
  FindingContext context;
  context.reference = &rt;
  context.hidden = fold_recursion(t).hidden;
  out.noise_measured = reps.size() > 1 || d.reference_reps > 1;
  if (out.noise_measured) {
    context.noise.assign(t.nodes().size(), 0.0);
    for (uint32_t n = 0; n < t.nodes().size(); ++n) {
      uint32_t key = out.analysis.regions[n].key;
      auto id = d.index.find(key);
      if (id != d.index.end()) {
        const Cell& cell = d.cells[size_t(id->second)][c];
        if (cell.samples.size() > 1) context.noise[n] += cell.total_rep.max - cell.total_rep.min;
      }
      auto r = d.reference_range.find(key);
      if (r != d.reference_range.end()) context.noise[n] += (r->second.second - r->second.first) / out.p;
    }
  }
  out.findings = find_findings(t, out.analysis, findings_limit(), context);
  return out;
}

void print_study_findings(const Data& d) {
  std::optional<StudyFindings> f = study_findings(d);
  if (!f || findings_limit() == 0) return;
  fmt::print("\nFindings at p = {} (its repetition with the median T_o, {}; {})", f->p, f->experiment,
             f->noise_measured
                 ? "an overhead within the run-to-run noise of its region, the spread over the "
                   "repetitions, is not a finding"
                 : "one repetition: the run-to-run noise is not measured, --repeat 3 measures it");
  print_findings(f->findings, f->analysis, f->noise_measured);
}

// ---- text and markdown ----

std::string config_label(const Data& d, const Config& c) {
  if (!d.study.use_launcher) return std::to_string(c.p());
  return std::to_string(c.p()) + " (" + std::to_string(c.threads) + "x" + std::to_string(c.ranks) + ")";
}

std::string command_text(const Study& s) {
  std::string cmd;
  for (const auto& w : s.command) cmd += (cmd.empty() ? "" : " ") + w;
  return cmd;
}

std::string node_title(const Node& n) {
  std::string t = n.label;
  if (!n.location.empty()) t += " @" + n.location;
  return t;
}

std::string fit(std::string s, size_t width) {
  if (s.size() > width) s = s.substr(0, width - 3) + "...";
  return s;
}

// A value printed with 4 decimals, without "-0.0000".
double z4(double v) { return std::fabs(v) < 5e-5 ? 0.0 : v; }

std::string num(std::optional<double> v, int prec = 2) {
  return v ? fmt::format("{:.{}f}", *v, prec) : "-";
}

std::string plan_text(const Data& d) {
  const Study& s = d.study;
  std::string threads, ranks;
  for (int t : s.threads) threads += (threads.empty() ? "" : ",") + std::to_string(t);
  for (int r : s.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
  return fmt::format("threads {} x ranks {}, {} repetition(s): {} of {} runs ok{}{}", threads, ranks,
                     s.repeat, d.runs_ok, s.runs.size(),
                     d.runs_failed ? fmt::format(", {} failed", d.runs_failed) : "",
                     d.runs_pending ? fmt::format(", {} pending", d.runs_pending) : "");
}

void print_text(const Data& d, bool markdown) {
  const Study& s = d.study;
  std::vector<int> detail = detailed(d, 5);
  auto row = [&](const std::vector<std::string>& cells) {
    std::string line = "|";
    for (const auto& c : cells) line += " " + c + " |";
    fmt::print("{}\n", line);
  };
  if (markdown) {
    fmt::print("# Scaling study `{}`\n\n", d.dir);
    fmt::print("- command: `{}`\n- plan: {}\n", command_text(s), plan_text(d));
    fmt::print("- reference: 1 thread x 1 rank, median of {} repetition(s): `{}` (program {:.4f} s)\n",
               d.reference_reps, d.reference_experiment, d.reference_program_time);
    if (s.use_launcher) fmt::print("- launcher: `{}`\n", s.launcher);
  } else {
    fmt::print("study       {}\n", d.dir);
    fmt::print("command     {}\n", command_text(s));
    fmt::print("plan        {}\n", plan_text(d));
    if (s.use_launcher) fmt::print("launcher    {}\n", s.launcher);
    fmt::print("reference   1 thread x 1 rank, median of {} repetition(s): {} (program {:.4f} s)\n",
               d.reference_reps, d.reference_experiment, d.reference_program_time);
  }
  for (const auto& w : d.warnings) fmt::print(markdown ? "- warning: {}\n" : "warning     {}\n", w);
  for (const Run& r : s.runs)
    if (r.status == Status::Failed)
      fmt::print(markdown ? "- failed run `{}`: {}\n" : "failed      {}: {}\n", r.id(), r.error);

  // Speedup per region vs p.
  std::vector<int> tree = preorder(d);
  if (!g_opts->region.empty()) {
    std::vector<int> keep{0};
    for (int n : tree)
      if (n != 0 && matches(d, n, g_opts->region)) keep.push_back(n);
    tree = keep;
  }
  const size_t W = 44;
  if (markdown) {
    fmt::print("\n## Speedup per region\n\nspeedup = T_s / median T_p; T_s from the reference run.\n\n");
    std::vector<std::string> head{"region", "location", "T_s s"};
    for (const auto& c : d.configs) head.push_back("p=" + config_label(d, c.config));
    row(head);
    row(std::vector<std::string>(head.size(), "---"));
    for (int n : tree) {
      const Node& nd = d.nodes[size_t(n)];
      // Dots for the depth, up to drg::kPathLevels levels (deeper rows would make the table grow
      // with depth^2).
      std::vector<std::string> cells{std::string(std::min<size_t>(size_t(nd.depth), drg::kPathLevels) * 2, '.') + nd.label,
                                     nd.location, num(nd.t_s, 4)};
      for (size_t c = 0; c < d.configs.size(); ++c) cells.push_back(num(d.cells[size_t(n)][c].speedup));
      row(cells);
    }
  } else {
    fmt::print("\nSpeedup per region (T_s / median T_p)\n");
    fmt::print("{:<{}} {:>9}", "region (call tree)", W, "T_s s");
    for (const auto& c : d.configs) fmt::print(" {:>10}", "p=" + config_label(d, c.config));
    fmt::print("\n");
    for (int n : tree) {
      const Node& nd = d.nodes[size_t(n)];
      // (indentation past W + 1 characters would be cut anyway)
      fmt::print("{:<{}} {:>9}", fit(std::string(std::min<size_t>(size_t(nd.depth) * 2, W + 1), ' ') + node_title(nd), W), W,
                 num(nd.t_s, 4));
      for (size_t c = 0; c < d.configs.size(); ++c) fmt::print(" {:>10}", num(d.cells[size_t(n)][c].speedup));
      fmt::print("\n");
    }
  }

  // Table 2 per region: the program, then the detailed regions.
  std::vector<int> blocks{0};
  for (int n : detail)
    if (n != 0) blocks.push_back(n);
  static const char* short_names[] = {"data", "sync", "control", "addl", "loss", "unident"};
  for (int n : blocks) {
    const Node& nd = d.nodes[size_t(n)];
    std::string path = node_path(d, n);
    std::string title = n == 0 ? "program " + nd.label : path.empty() ? node_title(nd) : path;
    if (n != 0 && !nd.location.empty() && title.find(nd.location) == std::string::npos)
      title += " @" + nd.location;
    if (markdown) {
      fmt::print("\n## {}\n\n", n == 0 ? "Program `" + nd.label + "`" : "Region `" + title + "`");
      fmt::print("{}. Time: median (min-max) over repetitions; classes: medians, in s; "
                 "T_o = sum of the class medians.\n\n",
                 nd.t_s ? fmt::format("T_s = {:.4f} s", *nd.t_s) : std::string("Not in the reference run"));
      std::vector<std::string> head{"p", "threads x ranks", "reps", "time s", "min-max s", "speedup",
                                    "efficiency", "T_o s"};
      for (int k = 0; k < kClassCount; ++k) head.emplace_back(kClassKeys[size_t(k)]);
      row(head);
      row(std::vector<std::string>(head.size(), "---:"));
      for (size_t c = 0; c < d.configs.size(); ++c) {
        const Cell& cell = d.cells[size_t(n)][c];
        const Config& cf = d.configs[c].config;
        if (cell.samples.empty()) {
          row({std::to_string(cf.p()), fmt::format("{} x {}", cf.threads, cf.ranks), "0", "-", "-", "-", "-",
               "-", "-", "-", "-", "-", "-", "-"});
          continue;
        }
        std::vector<std::string> cells{std::to_string(cf.p()), fmt::format("{} x {}", cf.threads, cf.ranks),
                                       std::to_string(cell.samples.size()), fmt::format("{:.4f}", cell.time.med),
                                       fmt::format("{:.4f}-{:.4f}", cell.time.min, cell.time.max),
                                       num(cell.speedup), num(cell.efficiency, 3),
                                       fmt::format("{:.4f}", z4(cell.total))};
        for (int k = 0; k < kClassCount; ++k) cells.push_back(fmt::format("{:.4f}", z4(cell.cls_med[size_t(k)])));
        row(cells);
      }
      continue;
    }
    fmt::print("\n{}   ({})\n", fit(title, 100),
               nd.t_s ? fmt::format("T_s = {:.4f} s", *nd.t_s) : std::string("not in the reference run"));
    fmt::print("{:>9} {:>8} {:>4} {:>9} {:>17} {:>7} {:>6} {:>9}", "p", "thr x rk", "reps", "time s",
               "(min - max)", "speedup", "effic", "T_o s");
    for (const char* h : short_names) fmt::print(" {:>8}", h);
    fmt::print("\n");
    for (size_t c = 0; c < d.configs.size(); ++c) {
      const Cell& cell = d.cells[size_t(n)][c];
      const Config& cf = d.configs[c].config;
      fmt::print("{:>9} {:>8} {:>4}", std::to_string(cf.p()),
                 std::to_string(cf.threads) + " x " + std::to_string(cf.ranks), cell.samples.size());
      if (cell.samples.empty()) {
        fmt::print("   (not run)\n");
        continue;
      }
      fmt::print(" {:>9.4f} {:>17} {:>7} {:>6} {:>9.4f}", cell.time.med,
                 fmt::format("({:.4f} - {:.4f})", cell.time.min, cell.time.max), num(cell.speedup),
                 num(cell.efficiency, 3), z4(cell.total));
      for (int k = 0; k < kClassCount; ++k) fmt::print(" {:>8.4f}", z4(cell.cls_med[size_t(k)]));
      fmt::print("\n");
    }
  }
  if (!markdown) {
    fmt::print("\nPOP efficiencies of the program per p (medians): ");
    for (size_t c = 0; c < d.configs.size(); ++c)
      fmt::print("{}p={}: LB {:.3f} CommE {:.3f} PE {:.3f}", c ? "; " : "", config_label(d, d.configs[c].config),
                 stat_of(d.configs[c].lb).med, stat_of(d.configs[c].ce).med, stat_of(d.configs[c].pe).med);
    fmt::print("\ntime: median over repetitions (min - max); speedup = T_s / median time; efficiency = "
               "speedup / p;\nclasses: data movement, synchronization, control of parallelism, additional "
               "computation, loss of\nparallelism, unidentified: medians over repetitions in s of wall "
               "time, T_o = their sum (docs/study.md)\n");
    if (g_opts->region.empty() && d.nodes.size() > blocks.size())
      fmt::print("{} more region(s): --top N or --region NAME to show them\n", d.nodes.size() - blocks.size());
    print_study_findings(d);
  }
}

// ---- CSV ----

std::string opt_csv(const std::optional<double>& v) { return v ? fmt::format("{:.9g}", *v) : ""; }

// The regions CSV and JSON list: all, or the program and the --region / --top selection, in
// call-tree order.
std::vector<int> selected_for_lists(const Data& d) {
  std::vector<int> all = preorder(d);
  if (g_opts->region.empty() && g_opts->top < 0) return all;
  std::vector<char> chosen(d.nodes.size(), 0);
  for (int n : detailed(d, -1)) chosen[size_t(n)] = 1;
  std::vector<int> out;
  for (int n : all)
    if (n == 0 || chosen[size_t(n)]) out.push_back(n);
  return out;
}

// Calls fn(n, node, path, config, cell) for each of `nodes` and each configuration it ran in: one
// row of the CSV and JSON lists. The path is built once per node.
template <class Fn>
void for_each_cell(const Data& d, const std::vector<int>& nodes, Fn fn) {
  for (int n : nodes) {
    const Node& nd = d.nodes[size_t(n)];
    const std::string path = node_path(d, n);
    for (size_t c = 0; c < d.configs.size(); ++c) {
      const Cell& cell = d.cells[size_t(n)][c];
      if (!cell.samples.empty()) fn(n, nd, path, d.configs[c].config, cell);
    }
  }
}

void print_csv(const Data& d) {
  fmt::print("region_id,parent_id,depth,path,kind,label,location,p,threads,ranks,repetitions,time_median,"
             "time_min,time_max,reference_time,speedup,efficiency");
  for (int k = 0; k < kClassCount; ++k) fmt::print(",{}", kClassKeys[size_t(k)]);
  fmt::print(",total\n");
  for_each_cell(d, selected_for_lists(d), [](int n, const Node& nd, const std::string& path,
                                              const Config& cf, const Cell& cell) {
    fmt::print("{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{},{},{}", n,
               nd.parent < 0 ? "" : std::to_string(nd.parent), nd.depth, csv_field(path), nd.kind, csv_field(nd.label),
               csv_field(nd.location), cf.p(), cf.threads, cf.ranks, cell.samples.size(), cell.time.med,
               cell.time.min, cell.time.max, opt_csv(nd.t_s), opt_csv(cell.speedup), opt_csv(cell.efficiency));
    for (int k = 0; k < kClassCount; ++k) fmt::print(",{:.9g}", cell.cls_med[size_t(k)]);
    fmt::print(",{:.9g}\n", cell.total);
  });
}

// ---- JSON ----

nlohmann::ordered_json opt_json(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); }

void print_json(const Data& d) {
  const Study& s = d.study;
  nlohmann::ordered_json out;
  out["schema"] = "scalea-study-report/1";
  out["study"] = {{"path", d.dir},
                  {"command", s.command},
                  {"threads", s.threads},
                  {"ranks", s.ranks},
                  {"repeat", s.repeat},
                  {"launcher", s.use_launcher ? nlohmann::ordered_json(s.launcher) : nlohmann::ordered_json(nullptr)},
                  {"runs", s.runs.size()},
                  {"runs_ok", d.runs_ok},
                  {"runs_failed", d.runs_failed},
                  {"runs_pending", d.runs_pending}};
  out["reference"] = {{"config", Config{1, 1}.id()},
                      {"experiment", d.reference_experiment},
                      {"repetitions", d.reference_reps},
                      {"program_time", d.reference_program_time}};
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const auto& c : d.configs)
    configs.push_back({{"config", c.config.id()},
                       {"p", c.config.p()},
                       {"threads", c.config.threads},
                       {"ranks", c.config.ranks},
                       {"experiments", c.experiments},
                       {"program_efficiency",
                        {{"load_balance", stat_of(c.lb).med},
                         {"communication_efficiency", stat_of(c.ce).med},
                         {"parallel_efficiency", stat_of(c.pe).med}}}});
  out["configurations"] = configs;
  // Written one row at a time (dump_streamed): the document tree of 100,000 regions at three
  // configurations took 2.4 GB. The selection is made first: it may fail (--region), and nothing
  // is written then.
  const std::vector<int> selected = selected_for_lists(d);
  auto regions = [&](const std::function<void(const nlohmann::ordered_json&)>& emit) {
    for_each_cell(d, selected, [&](int n, const Node& nd, const std::string& path, const Config& cf,
                                   const Cell& cell) {
      nlohmann::ordered_json ov, ov_min, ov_max;
      for (int k = 0; k < kClassCount; ++k) {
        std::string key(kClassKeys[size_t(k)]);
        ov[key] = cell.cls_med[size_t(k)];
        ov_min[key] = cell.cls[size_t(k)].min;
        ov_max[key] = cell.cls[size_t(k)].max;
      }
      ov["total"] = cell.total;
      ov_min["total"] = cell.total_rep.min;
      ov_max["total"] = cell.total_rep.max;
      emit({
          {"id", n},
          {"parent", nd.parent < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(nd.parent)},
          {"path", path},
          {"depth", nd.depth},
          {"kind", nd.kind},
          {"label", nd.label},
          {"name", nd.name},
          {"source", {{"file", nd.file}, {"line", nd.line}, {"function", nd.function}}},
          {"config", cf.id()},
          {"p", cf.p()},
          {"threads", cf.threads},
          {"ranks", cf.ranks},
          {"repetitions", cell.samples.size()},
          {"time", cell.time.med},
          {"time_min", cell.time.min},
          {"time_max", cell.time.max},
          {"reference_time", opt_json(nd.t_s)},
          {"speedup", opt_json(cell.speedup)},
          {"efficiency", opt_json(cell.efficiency)},
          {"overheads", ov},
          {"overheads_min", ov_min},
          {"overheads_max", ov_max},
      });
    });
  };
  out["regions"] = nullptr;  // streamed
  out["warnings"] = d.warnings;
  if (std::optional<StudyFindings> f = study_findings(d))
    out["findings"] = {{"p", f->p}, {"experiment", f->experiment}, {"noise_measured", f->noise_measured},
                       {"list", nlohmann::ordered_json::parse(findings_json(f->findings).dump())}};
  else
    out["findings"] = nullptr;
  dump_streamed<nlohmann::ordered_json>(write_to(std::cout), std::move(out), {{"regions", regions}});
  std::cout << "\n";
}

// ---- plots (gnuplot) ----

std::string gp_string(const std::string& s) {  // a gnuplot single-quoted string
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("''") : std::string(1, ch);
  return q + "'";
}

std::string slug(const std::string& s) {
  std::string out;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (ok) out += ch;
    else if (!out.empty() && out.back() != '-') out += '-';
    if (out.size() >= 32) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

void make_plots(const Data& d, const std::string& outdir) {
  std::error_code ec;
  std::filesystem::create_directories(outdir, ec);
  if (ec) throw UserError("cannot create plot directory " + outdir + ": " + ec.message());
  std::vector<int> regions{0};
  for (int n : detailed(d, 5))
    if (n != 0 && regions.size() < 7) regions.push_back(n);
  auto xlabel = [&](const Config& c) { return config_label(d, c); };
  // The speedup plot shows the regions the reference ran (the others have no speedup).
  std::vector<int> with_speedup;
  for (int n : regions)
    if (d.nodes[size_t(n)].t_s) with_speedup.push_back(n);

  // speedup.dat: x, label, ideal, one column per region.
  std::string dat = "# scalea study speedup: x label ideal";
  for (int n : with_speedup) dat += " \"" + node_title(d.nodes[size_t(n)]) + "\"";
  dat += "\n";
  for (size_t c = 0; c < d.configs.size(); ++c) {
    dat += fmt::format("{} \"{}\" {}", c, xlabel(d.configs[c].config), d.configs[c].config.p());
    for (int n : with_speedup) dat += " " + (d.cells[size_t(n)][c].speedup ? fmt::format("{:.6g}", *d.cells[size_t(n)][c].speedup) : "?");
    dat += "\n";
  }
  write_output(outdir + "/speedup.dat", dat);

  std::string title_cmd = command_text(d.study);
  std::string gp =
      "# Generated by scalea report --plots: run `gnuplot study.gp` in this directory.\n"
      "set datafile missing '?'\n"
      "set encoding utf8\n"
      "png_cairo = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0\n"
      "set grid ytics\n"
      "set border 3\n"
      "set tics nomirror\n"
      "colors = '#1f77b4 #d62728 #ff7f0e #9467bd #8c564b #7f7f7f'\n";
  auto terminal = [](const std::string& ext, const std::string& size) {
    if (ext == "svg") return "  set terminal svg size " + size + " dynamic noenhanced font 'sans,12' background '#ffffff'\n";
    return "  if (png_cairo) { set terminal pngcairo size " + size +
           " noenhanced font 'sans,10' background '#ffffff' } else { set terminal png size " + size + " }\n";
  };
  std::vector<std::string> outputs;
  // Speedup per region vs p.
  gp += "\n# Speedup per region vs p\n";
  for (const std::string ext : {"svg", "png"}) {
    gp += terminal(ext, "900,560");
    gp += "  set output 'speedup." + ext + "'\n";
    gp += "  set title " + gp_string("Speedup per region: " + title_cmd) + "\n";
    gp += "  set xlabel 'p (processing elements" + std::string(d.study.use_launcher ? ": threads x ranks" : "") +
          ")'\n  set ylabel 'speedup  T_s / T_p'\n  set key left top box opaque\n  set yrange [0:*]\n"
          "  set style data linespoints\n";
    gp += "  plot 'speedup.dat' using 1:3:xtic(2) title 'ideal' dashtype 2 linecolor rgb '#999999' lw 1.5 pt -1";
    for (size_t i = 0; i < with_speedup.size(); ++i)
      gp += fmt::format(", '' using 1:{} title {} lw {} pt 7 ps 0.8", 4 + i,
                        gp_string(with_speedup[i] == 0 ? "program" : node_title(d.nodes[size_t(with_speedup[i])])),
                        with_speedup[i] == 0 ? 2.5 : 1.5);
    gp += "\n  set output\n  unset yrange\n";
    outputs.push_back("speedup." + ext);
  }
  // Stacked overhead classes per p, for the program and the top regions.
  static const char* class_titles[] = {"data movement", "synchronization", "control of parallelism",
                                       "additional computation", "loss of parallelism", "unidentified"};
  static const char* class_colors[] = {"#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#7f7f7f"};
  for (int n : regions) {
    const Node& nd = d.nodes[size_t(n)];
    std::string name = n == 0 ? "program" : "r" + std::to_string(n) + "-" + slug(nd.label);
    std::string data = "# scalea study overheads (medians, s): label";
    for (int k = 0; k < kClassCount; ++k) data += " " + std::string(kClassKeys[size_t(k)]);
    data += " total\n";
    for (size_t c = 0; c < d.configs.size(); ++c) {
      const Cell& cell = d.cells[size_t(n)][c];
      data += "\"" + xlabel(d.configs[c].config) + "\"";
      for (int k = 0; k < kClassCount; ++k)
        data += cell.samples.empty() ? " 0" : fmt::format(" {:.6g}", cell.cls_med[size_t(k)]);
      data += cell.samples.empty() ? " ?" : fmt::format(" {:.6g}", cell.total);
      data += "\n";
    }
    write_output(outdir + "/overheads-" + name + ".dat", data);
    std::string title = n == 0 ? "Overheads of the program (" + nd.label + ")" : "Overheads of " + node_title(nd);
    gp += "\n# Overhead classes per p: " + node_title(nd) + "\n";
    for (const std::string ext : {"svg", "png"}) {
      gp += terminal(ext, "900,560");
      gp += "  set output 'overheads-" + name + "." + ext + "'\n";
      gp += "  set title " + gp_string(title) + "\n";
      gp += "  set xlabel 'p'\n  set ylabel 'overhead, s of wall time (median)'\n"
            "  set style data histograms\n  set style histogram rowstacked\n"
            "  set style fill solid 0.85 border rgb '#333333'\n  set boxwidth 0.6\n"
            "  set key outside right top noopaque nobox\n  set xzeroaxis lt -1\n";
      gp += "  plot 'overheads-" + name + ".dat'";
      for (int k = 0; k < kClassCount; ++k)
        gp += fmt::format("{} using {}{} title '{}' linecolor rgb '{}'", k ? ", ''" : "", k + 2,
                          k == 0 ? ":xtic(1)" : "", class_titles[k], class_colors[k]);
      gp += ", '' using 0:8 with points pointtype 7 pointsize 1.2 linecolor rgb '#000000' title 'T_o (net: sum of the classes)'";
      gp += "\n  set output\n  unset style\n  set style data linespoints\n  unset xzeroaxis\n";
      outputs.push_back("overheads-" + name + "." + ext);
    }
  }
  write_output(outdir + "/study.gp", gp);

  if (find_program("gnuplot").empty()) {
    std::fprintf(stderr, "scalea report: gnuplot not found: wrote the data and %s/study.gp, no plots "
                 "(install gnuplot-nox, then run gnuplot study.gp there)\n", outdir.c_str());
    return;
  }
  std::string log = outdir + "/gnuplot.log";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np(&fa, outdir.c_str());
  const char* argv[] = {"gnuplot", "study.gp", nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "gnuplot", &fa, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw UserError(std::string("cannot start gnuplot: ") + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line))
      if (!line.empty() && line.find_first_not_of(" ^") != std::string::npos) last = line;
    throw UserError("gnuplot failed on " + outdir + "/study.gp: " + (last.empty() ? "no message" : last) +
                    " (see " + log + ")");
  }
  std::fprintf(stderr, "scalea report: wrote %zu plots to %s/ (speedup.svg, overheads-*.svg, and .png; "
               "script study.gp)\n", outputs.size(), outdir.c_str());
}

}  // namespace

void add_study_report_options(CLI::App& app) {
  CLI::App* rep = nullptr;
  try {
    rep = app.get_subcommand("report");
  } catch (const CLI::OptionNotFound&) {
    return;
  }
  g_report = rep;
  if (!rep->get_option_no_throw("--plots"))
    rep->add_option("--plots", g_opts->plots,
                    "Study: draw speedup and stacked overhead plots (SVG, PNG) with gnuplot into this directory");
  if (!rep->get_option_no_throw("--region"))
    rep->add_option("--region", g_opts->region,
                    "Study: only regions whose name, label, source location or path contains this");
  if (!rep->get_option_no_throw("--top"))
    rep->add_option("--top", g_opts->top, "Study: detail the N regions with the largest overhead (default 5)")
        ->check(CLI::NonNegativeNumber);
  rep->footer(rep->get_footer() +
              "\n\nScaling studies (scalea study):\n"
              "  scalea report md.study                   speedup and overhead classes per region vs p\n"
              "  scalea report md.study --top 3           the program and the 3 regions with most overhead\n"
              "  scalea report md.study --region loop     regions whose name or location contains 'loop'\n"
              "  scalea report md.study --format csv      also: json, markdown (docs/study.md)\n"
              "  scalea report md.study --plots plots/    gnuplot SVG and PNG plots");
}

void study_report(const std::string& dir) {
  for (const char* name : {"--reference", "-r"}) {
    CLI::Option* o = g_report ? g_report->get_option_no_throw(name) : nullptr;
    if (o && o->count() > 0)
      throw UserError("--reference does not apply to a study: its reference run (1 thread, 1 rank) is part of it");
  }
  std::string view = option_string("--view", "overheads");
  if (view != "overheads")
    throw UserError("--view " + view + " is for one experiment: use scalea report " + dir + "/runs/<run id> --view " + view);
  std::string format = option_string("--format", "text");
  // --plots, --region, --top may be report's own options (added before add_study ran).
  g_opts->plots = option_string("--plots", g_opts->plots);
  g_opts->region = option_string("--region", g_opts->region);
  std::string top = option_string("--top", "");
  if (!top.empty()) {
    try {
      g_opts->top = std::stoi(top);
    } catch (const std::exception&) {
      throw UserError("--top needs a number, not '" + top + "'");
    }
  }
  Data d = gather(dir);
  if (!g_opts->plots.empty()) make_plots(d, g_opts->plots);
  if (format == "json") print_json(d);
  else if (format == "csv") print_csv(d);
  else if (format == "markdown") print_text(d, true);
  else print_text(d, false);
}

}  // namespace scalea::cli
