// scalea cache: the cache-miss drill-down (the SCALEA paper's Figure 6): per region and thread,
// misses and accesses per cache level, miss ratio, misses per 1000 instructions; threads whose
// ratio stands out are marked. With only software events it shows those and says what is missing.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "output/text.hpp"
#include "analysis/meta.hpp"
#include "formats/report_json.hpp"
#include "analysis/source.hpp"
#include "analysis/thread_values.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "output/json_stream.hpp"

namespace scalea::cli {
namespace {

// PAPI presets per level: data-cache first, total (unified) cache as the alternative.
struct Level {
  const char* name;
  const char* misses[2];
  const char* accesses[2];
};
constexpr Level kLevels[] = {
    {"L1", {"PAPI_L1_DCM", "PAPI_L1_TCM"}, {"PAPI_L1_DCA", "PAPI_L1_TCA"}},
    {"L2", {"PAPI_L2_DCM", "PAPI_L2_TCM"}, {"PAPI_L2_DCA", "PAPI_L2_TCA"}},
    {"L3", {"PAPI_L3_TCM", "PAPI_L3_DCM"}, {"PAPI_L3_TCA", "PAPI_L3_DCA"}},
};
// A thread's miss ratio "stands out" when it is this many times the median of the others.
constexpr double kStandOut = 1.5;

int column(const drg::Experiment& e, const char* const (&names)[2]) {
  for (const char* n : names) {
    int m = e.metric(std::string("papi:") + n);
    if (m >= 0) return m;
  }
  return -1;
}

struct CacheOptions {
  std::string dir;
  std::string format = "text";
  int top = 10;
  std::string region;
};

struct LevelCols {
  const char* name;
  int misses, accesses;
};

// The counter columns of an experiment: cache levels, instructions, and the others.
struct CounterCols {
  std::vector<LevelCols> levels;
  int instructions = -1;
  std::vector<int> other;  // measured counters that are not cache levels (e.g. software events)
  bool any() const { return !levels.empty() || instructions >= 0 || !other.empty(); }
  // Every counter column above (each is one of them only).
  std::vector<int> all() const {
    std::vector<int> out = other;
    if (instructions >= 0) out.push_back(instructions);
    for (const LevelCols& l : levels)
      for (int m : {l.misses, l.accesses})
        if (m >= 0) out.push_back(m);
    return out;
  }
};

// One region's values of the counter columns on each thread that ran it (read by file).
class RegionCounters {
 public:
  RegionCounters(const std::vector<int>& columns, const NodeThreads& holders, size_t metrics)
      : holders_(holders), at_(metrics, -1) {
    for (size_t k = 0; k < columns.size(); ++k) at_[size_t(columns[k])] = int(k);
  }
  size_t count() const { return holders_.count; }
  uint32_t thread(size_t i) const { return holders_.thread[i]; }
  // The value of column `metric` on holder i; 0 for -1, as Experiment::value reads it.
  double value(size_t i, int metric) const {
    return metric < 0 ? 0.0 : holders_.value(i, size_t(at_[size_t(metric)]));
  }

 private:
  const NodeThreads& holders_;
  std::vector<int> at_;  // per column of the experiment: its place among the holders' values
};

CounterCols counter_columns(const drg::Experiment& e) {
  CounterCols c;
  for (const Level& l : kLevels) {
    int m = column(e, l.misses), a = column(e, l.accesses);
    if (m >= 0) c.levels.push_back({l.name, m, a});
  }
  c.instructions = e.metric("papi:PAPI_TOT_INS");
  for (size_t m = 0; m < e.metrics.size(); ++m) {
    if (e.metrics[m].rfind("papi:", 0) != 0) continue;
    bool used = int(m) == c.instructions;
    for (const LevelCols& l : c.levels) used = used || int(m) == l.misses || int(m) == l.accesses;
    if (!used) c.other.push_back(int(m));
  }
  return c;
}

// The regions with counts, largest time first (at most o.top). --region matches a region's name,
// label, source location ("md.c:90", "md.c"), function or call path; throws UserError when it
// matches none.
std::vector<uint32_t> counted_regions(const drg::Experiment& e, const drg::MergedTree& t,
                                      const CounterCols& cols, const CacheOptions& o) {
  const std::vector<LevelCols>& levels = cols.levels;
  const std::vector<int>& other = cols.other;
  int time = e.metric(format::CoreMetric::TimeSum);
  auto matches = [&](uint32_t n) {
    if (o.region.empty()) return true;
    const drg::Region& r = t.region_of(n);
    for (const std::string& s : {r.label(), r.name, r.location(), r.function})
      if (!s.empty() && s.find(o.region) != std::string::npos) return true;
    return t.path(n).find(o.region) != std::string::npos;
  };
  std::vector<uint32_t> regions;
  size_t matched = 0;
  for (uint32_t n : t.preorder()) {
    if (!matches(n)) continue;
    ++matched;
    bool counted = false;
    for (const LevelCols& l : levels) counted = counted || t.sum(n, l.misses) > 0;
    for (int m : other) counted = counted || t.sum(n, m) > 0;
    if (counted) regions.push_back(n);
  }
  if (matched == 0)
    throw UserError("no region of " + e.path + " matches --region '" + o.region +
                    "' (give part of a region's name, label, source file:line, function or path)");
  std::stable_sort(regions.begin(), regions.end(),
                   [&](uint32_t a, uint32_t b) { return t.max(a, time) > t.max(b, time); });
  if (o.top > 0 && regions.size() > size_t(o.top)) regions.resize(size_t(o.top));
  return regions;
}

// The program root reads no counters (a thread's counters are read by the thread, and its root
// closes when the run ends): the loader gives it the sum of the regions directly below it
// (drg/src/settlement.cpp). In an MPI rank without parallel regions those are its MPI calls.
std::string root_note(const drg::MergedTree& t) {
  size_t mpi = 0, all = t.node(0).children.size();
  for (uint32_t c : t.node(0).children) mpi += t.region_of(c).kind == drg::RegionKind::Mpi;
  std::string what = all > 0 && mpi == all ? "its MPI calls" : "the regions directly below it";
  if (mpi > 0 && mpi < all) what += fmt::format(" ({} of them MPI calls)", mpi);
  return "the program reads no counters of its own: each thread's values are the sums of " + what +
         ", and its code outside them is not counted";
}

// One region's rows, one per thread: printed as text, and returned as JSON.
nlohmann::json region_threads(const drg::Experiment& e, const drg::MergedTree& t, uint32_t n,
                              const RegionCounters& threads, const CounterCols& cols,
                              const CacheOptions& o) {
  const std::vector<LevelCols>& levels = cols.levels;
  const std::vector<int>& other = cols.other;
  const int instructions = cols.instructions, time = e.metric(format::CoreMetric::TimeSum);
  const drg::Region& reg = t.region_of(n);
  std::string label =
      reg.label() +
      (reg.location().empty() || reg.kind == drg::RegionKind::Program ? "" : " @" + reg.location());
  nlohmann::json jr = {{"path", t.path(n)}, {"label", label}};
  nlohmann::json jthreads = nlohmann::json::array();
  if (o.format == "text") {
    fmt::print("{}   (time {:.4f} s)\n", label, ns_to_s(t.max(n, time)));
    if (n == 0) fmt::print("  {}\n", root_note(t));
    std::string head = fmt::format("  {:<8}", "thread");
    for (const LevelCols& l : levels)
      head += fmt::format(" {:>12} {:>12} {:>7}", std::string(l.name) + " miss",
                          std::string(l.name) + " access", "ratio");
    if (instructions >= 0) head += fmt::format(" {:>9}", "MPKI");
    for (int m : other) head += fmt::format(" {:>16}", e.metrics[size_t(m)].substr(5));
    fmt::print("{}\n", head);
  }
  // Per level, each thread's ratio; those far above the median of the region's threads stand out.
  std::vector<std::vector<double>> ratios(levels.size());
  for (size_t k = 0; k < threads.count(); ++k)
    for (size_t li = 0; li < levels.size(); ++li) {
      double miss = threads.value(k, levels[li].misses);
      double acc = levels[li].accesses >= 0 ? threads.value(k, levels[li].accesses) : 0;
      ratios[li].push_back(acc > 0 ? miss / acc : std::nan(""));
    }
  std::vector<double> med(levels.size());
  for (size_t li = 0; li < levels.size(); ++li) {
    std::vector<double> ok;
    for (double r : ratios[li])
      if (!std::isnan(r)) ok.push_back(r);
    med[li] = median(ok);
  }
  for (size_t k = 0; k < threads.count(); ++k) {
    const drg::ThreadTree& th = e.threads[threads.thread(k)];
    std::string who =
        th.rank >= 0 ? fmt::format("r{}.t{}", th.rank, th.thread) : fmt::format("t{}", th.thread);
    std::string line = fmt::format("  {:<8}", who);
    nlohmann::json jt = {{"rank", th.rank}, {"thread", th.thread}};
    bool stands_out = false;
    for (size_t li = 0; li < levels.size(); ++li) {
      double miss = threads.value(k, levels[li].misses);
      double acc = levels[li].accesses >= 0 ? threads.value(k, levels[li].accesses) : 0;
      double r = ratios[li][k];
      bool out_li = !std::isnan(r) && med[li] > 0 && r > kStandOut * med[li];
      stands_out = stands_out || out_li;
      line +=
          fmt::format(" {:>12.0f} {:>12} {:>7}", miss, acc > 0 ? fmt::format("{:.0f}", acc) : "-",
                      std::isnan(r) ? "-" : fmt::format("{:.3f}{}", r, out_li ? "*" : ""));
      jt[levels[li].name] = {{"misses", miss},
                             {"accesses", acc > 0 ? nlohmann::json(acc) : nlohmann::json(nullptr)},
                             {"ratio", std::isnan(r) ? nlohmann::json(nullptr) : nlohmann::json(r)},
                             {"stands_out", out_li}};
    }
    if (instructions >= 0) {
      double ins = threads.value(k, instructions);
      double mpki =
          ins > 0 && !levels.empty() ? 1000.0 * threads.value(k, levels.back().misses) / ins : 0;
      line += fmt::format(" {:>9.3f}", mpki);
      jt["mpki"] = mpki;
    }
    for (int m : other) {
      // In the text: CPU-time counters (ns) in seconds, counts with thousands separators.
      line += fmt::format(" {:>16}", counter_value(e.metrics[size_t(m)], threads.value(k, m)));
      jt[e.metrics[size_t(m)].substr(5)] = threads.value(k, m);
    }
    jt["stands_out"] = stands_out;
    if (o.format == "text") fmt::print("{}\n", line);
    jthreads.push_back(jt);
  }
  if (o.format == "text") fmt::print("\n");
  jr["threads"] = jthreads;
  return jr;
}

void run_cache(const CacheOptions& o) {
  const Source run(o.dir);
  const drg::MergedTree& t = run.tree();
  const drg::Experiment& e = run.experiment();
  const CounterCols cols = counter_columns(e);
  const std::vector<LevelCols>& levels = cols.levels;
  const bool any_counter = cols.any();
  std::vector<uint32_t> regions = counted_regions(e, t, cols, o);
  std::string missing;
  if (levels.empty()) missing = "no cache-miss counters were measured";
  else if (levels.size() < 3) missing = "only some cache levels were measured";
  std::string have;
  for (size_t m = 0; m < e.metrics.size(); ++m)
    if (e.metrics[m].rfind("papi:", 0) == 0)
      have += (have.empty() ? "" : ", ") + e.metrics[m].substr(5);

  nlohmann::json out;
  out["experiment"] = e.path;
  out["measured"] = have;
  out["levels"] = nlohmann::json::array();
  for (const LevelCols& l : levels) out["levels"].push_back(l.name);
  out["missing"] = missing;
  nlohmann::json jregions = nlohmann::json::array();
  if (o.format == "text") {
    fmt::print("experiment  {}\n", e.path);
    fmt::print("counters    {}\n", have.empty() ? "none" : have);
    if (!missing.empty())
      fmt::print(
          "note        {}: this machine offers none, or the run did not ask for them\n"
          "            (scalea run --counters PAPI_L2_DCM,PAPI_L2_DCA,... on a machine "
          "with hardware counters; docs/counters.md)\n",
          missing);
    if (!any_counter)
      fmt::print(
          "\nno counters were measured in this run, so there is nothing per region and "
          "thread to show: run it with `scalea run --counters LIST` (the software events "
          "perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES work everywhere; cache misses where the "
          "machine has hardware counters)\n");
    else if (regions.empty())
      fmt::print("\nno{} region has counts\n", o.region.empty() ? "" : " matching");
    fmt::print("\n");
  }
  const std::vector<int> counters = cols.all();
  for_each_node_threads(t, regions, counters, [&](const NodeThreads& holders) {
    RegionCounters threads(counters, holders, e.metric_count());
    jregions.push_back(region_threads(e, t, holders.node, threads, cols, o));
  });
  if (o.format == "json") {
    out["regions"] = jregions;
    std::cout << json_text(out, 2) << "\n";
  } else if (!levels.empty()) {
    fmt::print(
        "ratio = misses / accesses; * : more than {}x the median of the region's threads "
        "(e.g. a master thread whose data is not in its cache)\n",
        kStandOut);
  }
}

}  // namespace

void add_cache(CLI::App& app) {
  auto o = std::make_shared<CacheOptions>();
  CLI::App* cmd = app.add_subcommand("cache", "Cache-miss drill-down per region and thread");
  cmd->footer(
      "Examples:\n"
      "  scalea run --counters PAPI_L2_DCM,PAPI_L2_DCA,PAPI_TOT_INS -o md.p4 -- ./md\n"
      "  scalea cache md.p4                       misses, accesses, ratio per level and thread\n"
      "  scalea cache md.p4 --region compute      one region\n"
      "  scalea cache md.p4 --format json\n\n"
      "Extra misses over a reference run are priced as data movement by `scalea report -r REF`\n"
      "with a machine file (scalea calibrate). Without hardware counters the software events\n"
      "measured (e.g. perf::PAGE-FAULTS) are shown per region and thread.");
  cmd->add_option("experiment", o->dir, "Experiment directory")->required();
  cmd->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--top", o->top, "Regions to show, largest time first (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--region", o->region, "Only regions whose name or label contains this");
  cmd->callback([o] { run_cache(*o); });
}

}  // namespace scalea::cli
