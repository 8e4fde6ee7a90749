// The study report's data: every run loaded and classified against the study's reference, the
// statistics per region and configuration, the selection of regions, the findings.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "output/errors.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "analysis/meta.hpp"
#include "formats/report_json.hpp"
#include "analysis/source.hpp"
#include "study_data.hpp"
#include "output/text.hpp"

namespace scalea::cli::studyrep {

// ---- statistics ----

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

double program_time(const drg::MergedTree& t) {
  int m = t.experiment().metric(format::CoreMetric::TimeSum);
  return m < 0 ? 0.0 : ns_to_s(t.max(0, m));
}

// A run's experiment, read one rank file at a time (Source).
std::optional<Source> load(const std::string& dir, const Run& r, std::vector<std::string>& warnings,
                           overheads::Share* share) {
  try {
    return Source(dir + "/" + r.experiment(), share);
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
      [&](uint32_t i) -> const std::string& {
        return i == 0 ? d.roots[nd.root] : d.nodes[i].component;
      });
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
  nd.region_kind = reg.kind;
  nd.name = reg.name;
  nd.file = reg.file;
  nd.function = reg.function;
  nd.line = reg.line;
  nd.component = t.component(n);
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
  return !format::region_kind_has(n.region_kind, format::kGathers) &&
         !format::region_kind_has(n.region_kind, format::kSpins);
}

ReferenceRun reference_run(const std::string& dir, const Study& s,
                           std::vector<std::string>& warnings,
                           const std::function<void(const drg::MergedTree&)>& each,
                           overheads::Share* share) {
  std::vector<std::pair<double, const Run*>> refs;
  for (const Run& r : s.runs) {
    if (!r.reference() || r.status != Status::Ok) continue;
    auto l = load(dir, r, warnings, share);
    if (!l) continue;
    refs.emplace_back(program_time(l->tree()), &r);
    if (each) each(l->tree());
  }
  if (refs.empty())
    throw UserError("the study in " + dir + " has no completed reference run (1 thread, 1 rank); " +
                    "run it with: scalea study -o " + dir + " --resume");
  std::sort(refs.begin(), refs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto& median = refs[(refs.size() - 1) / 2];
  return {median.second, median.first, refs.size()};
}

namespace {

// The reference and, per call-path key, the spread of its repetitions' region times
// (Data::reference_range).
const Run* choose_reference(Data& d, Source& ref) {
  ReferenceRun chosen = reference_run(
      d.dir, d.study, d.warnings,
      [&](const drg::MergedTree& t) {
        std::vector<uint32_t> keys = d.keys->intern(t);
        int time = t.experiment().metric(format::CoreMetric::TimeSum);
        for (uint32_t n = 0; n < keys.size(); ++n) {
          double t_p = ns_to_s(t.max(n, time));
          auto [it, added] = d.reference_range.emplace(keys[n], std::make_pair(t_p, t_p));
          if (!added)
            it->second = {std::min(it->second.first, t_p), std::max(it->second.second, t_p)};
        }
      },
      d.share);
  ref = *load(d.dir, *chosen.run, d.warnings, d.share);
  d.reference_experiment = chosen.run->experiment();
  d.reference_program_time = chosen.program_time;
  d.reference_reps = chosen.repetitions;
  return chosen.run;
}

// Adds `samples` (per node id) to configuration ci's cells.
void add_samples(Data& d, size_t ci, const std::map<int, Sample>& samples) {
  for (const auto& [id, s] : samples) {
    auto& cells = d.cells[size_t(id)];
    if (cells.size() < d.configs.size()) cells.resize(d.configs.size());
    cells[ci].samples.push_back(s);
  }
}

// One run classified against the reference: its regions join the union tree, and each adds one
// sample to its cell of configuration ci. `is_reference`: the run is the reference itself (its
// times are the regions' T_s).
void add_run(Data& d, const drg::MergedTree& t, const Run& r, const drg::MergedTree& ref,
             bool is_reference, size_t ci) {
  overheads::Options opts;
  opts.p = r.config.p();
  opts.keys = d.keys;
  opts.paths = false;  // node_path builds the ones printed
  opts.share = d.share;
  overheads::Analysis a = overheads::classify(t, &ref, opts);
  std::string root_component = drg::path_component(t.region_of(0));
  size_t root = size_t(std::find(d.roots.begin(), d.roots.end(), root_component) - d.roots.begin());
  if (root == d.roots.size()) d.roots.push_back(root_component);
  ConfigData& cd = d.configs[ci];
  cd.experiments.push_back(r.experiment());
  cd.lb.push_back(a.program.load_balance);
  cd.ce.push_back(a.program.communication_efficiency);
  cd.pe.push_back(a.program.parallel_efficiency);
  CpuSharing cpus = cpu_sharing_evidence(t.experiment());
  if (cpus.shared()) {
    if (cd.cpu_shared_reps++ == 0 || cpus.waited_s > cd.cpu_sharing.waited_s)
      cd.cpu_sharing = std::move(cpus), cd.cpu_shared_experiment = r.experiment();
  }
  // One sample per region and run. Merged nodes with the same call-path key (the same source
  // construct recorded as several regions) are added up, in the run and in the reference.
  std::vector<int> mapped(t.nodes().size(), -1);
  std::map<int, Sample> run_samples;
  for (uint32_t n : t.preorder()) {
    int id = add_node(d, t, a, n, mapped, root);
    mapped[n] = id;
    const auto& ro = a.regions[n];
    if (is_reference) d.nodes[size_t(id)].t_s = d.nodes[size_t(id)].t_s.value_or(0.0) + ro.t_p;
    Sample& s = run_samples[id];
    s.t_p += ro.t_p;
    s.t_o += ro.t_o;
    for (int k = 0; k < kClassCount; ++k) s.cls[size_t(k)] += ro.classes[size_t(k)];
  }
  add_samples(d, ci, run_samples);
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
  add_samples(d, ci, gone);
}

// Drops the configurations without any usable run.
void drop_unused(Data& d, const std::vector<bool>& used) {
  std::vector<size_t> keep;
  for (size_t i = 0; i < d.configs.size(); ++i)
    if (used[i]) keep.push_back(i);
  std::vector<ConfigData> configs;
  for (size_t i : keep) configs.push_back(d.configs[i]);
  for (auto& cells : d.cells) {
    cells.resize(d.configs.size());
    std::vector<Cell> kept;
    for (size_t i : keep) kept.push_back(cells[i]);
    cells = std::move(kept);
  }
  d.configs = std::move(configs);
}

// Each cell's statistics over its samples, and its speedup.
void cell_statistics(Data& d) {
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
}

}  // namespace

Data gather(const std::string& dir, const StudyView& view, overheads::Share* share) {
  Data d;
  d.dir = dir;
  d.view = view;
  d.share = share;
  d.study = load_study(dir);
  for (const Run& r : d.study.runs) {
    if (r.status == Status::Ok) ++d.runs_ok;
    else if (r.status == Status::Failed) ++d.runs_failed;
    else ++d.runs_pending;
  }
  Source ref;
  const Run* ref_run = choose_reference(d, ref);

  // Configurations in plan order; the chosen reference repetition is classified first so the
  // union tree follows the reference's order.
  std::vector<const Run*> order{ref_run};
  for (const Config& c : d.study.configs())
    for (const Run& r : d.study.runs)
      if (r.config == c && r.status == Status::Ok && &r != ref_run) order.push_back(&r);
  auto config_index = [&](const Config& c) {
    for (size_t i = 0; i < d.configs.size(); ++i)
      if (d.configs[i].config == c) return i;
    ConfigData cd;
    cd.config = c;
    d.configs.push_back(std::move(cd));
    return d.configs.size() - 1;
  };
  (void)config_index(Config{1, 1});
  for (const Config& c : d.study.configs()) (void)config_index(c);
  std::vector<bool> config_used(d.configs.size(), false);
  for (const Run* r : order) {
    std::optional<Source> own;
    const drg::MergedTree* t = &ref.tree();
    if (r != ref_run) {
      own = load(dir, *r, d.warnings, share);
      if (!own) continue;
      t = &own->tree();
    }
    size_t ci = config_index(r->config);
    config_used[ci] = true;
    add_run(d, *t, *r, ref.tree(), r == ref_run, ci);
  }
  drop_unused(d, config_used);
  cell_statistics(d);
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
  if (!d.view.region.empty()) {
    for (int n : preorder(d))
      if (matches(d, n, d.view.region)) out.push_back(n);
    if (out.empty())
      throw UserError("no region of the study matches --region '" + d.view.region + "'");
    if (d.view.top >= 0 && out.size() > size_t(d.view.top)) out.resize(size_t(d.view.top));
    return out;
  }
  int top = d.view.top >= 0 ? d.view.top : default_top;
  for (int n : preorder(d))
    if (n != 0) out.push_back(n);
  std::stable_sort(out.begin(), out.end(),
                   [&](int a, int b) { return weight(d, a) > weight(d, b); });
  if (top >= 0 && out.size() > size_t(top)) out.resize(size_t(top));
  return out;
}

// ---- findings at the largest p ----

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
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return reps[a].t_o < reps[b].t_o; });
  StudyFindings out;
  out.experiment = cd.experiments[order[(order.size() - 1) / 2]];
  out.p = cd.config.p();
  const Source run(d.dir + "/" + out.experiment, d.share),
      ref(d.dir + "/" + d.reference_experiment, d.share);
  const drg::MergedTree &t = run.tree(), &rt = ref.tree();
  overheads::Options opts;
  opts.p = out.p;
  opts.keys = d.keys;
  opts.paths = false;
  opts.share = d.share;
  out.analysis = overheads::classify(t, &rt, opts);
  out.cpu_sharing = cpu_sharing(run.experiment());
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
      if (r != d.reference_range.end())
        context.noise[n] += (r->second.second - r->second.first) / out.p;
    }
  }
  out.findings = find_findings(t, out.analysis, d.view.findings, context);
  return out;
}

// ---- labels shared by the outputs ----

std::string config_label(const Data& d, const Config& c) {
  if (!d.study.use_launcher) return std::to_string(c.p());
  return std::to_string(c.p()) + " (" + std::to_string(c.threads) + "x" + std::to_string(c.ranks) +
         ")";
}

std::string marked_label(const Data& d, const ConfigData& c, bool markdown) {
  std::string label = config_label(d, c.config);
  return c.cpu_shared_reps ? label + (markdown ? "\\*" : "*") : label;
}

std::string cpu_note(const Data& d, const ConfigData& c, bool markdown) {
  if (!c.cpu_shared_reps) return {};
  const CpuSharing& e = c.cpu_sharing;
  std::string how;
  if (e.threads > 0) how = fmt::format("{} threads ran on {} CPU(s)", e.threads, e.cpus);
  if (e.ran_s + e.waited_s > 0)
    how += fmt::format(
        "{}the threads waited {:.3f} s for a CPU, {:.0f}% of their time on or waiting for one",
        how.empty() ? "" : "; ", e.waited_s, 100 * e.waited_s / (e.ran_s + e.waited_s));
  return fmt::format(
      "p={}: threads shared CPUs in {} of {} repetition(s) ({}{}): its times include waiting for a "
      "CPU; scalea report {}/{} says more",
      marked_label(d, c, markdown), c.cpu_shared_reps, c.experiments.size(), how,
      c.cpu_shared_reps > 1 ? ", the repetition that waited longest" : "", d.dir,
      c.cpu_shared_experiment);
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

}  // namespace scalea::cli::studyrep
