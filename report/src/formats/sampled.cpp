#include "sampled.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "scalea/drg/meta.hpp"

namespace scalea::cli {
namespace {

std::string shortened(std::string s, size_t width) {
  if (s.size() > width) s = s.substr(0, width - 3) + "...";
  return s;
}

void print_sampling_line(const drg::MergedTree& t, const drg::SampleProfile& s) {
  const drg::Meta meta = drg::read_meta(t.experiment().meta);
  const drg::SamplingMeta sm = meta.sampling.value_or(drg::SamplingMeta{});
  fmt::print(
      "SAMPLED     {:.0f} samples, {:.3f} s of CPU time (one every {:.1f} ms asked{}); {} in the "
      "tool's own code, {} not recorded{}\n",
      s.total_samples(), s.total_cpu(), sm.period_s * 1e3,
      meta.mpi ? "" : fmt::format(", on {} thread(s)", sm.threads), sm.in_tool, sm.dropped,
      meta.mpi ? " (on rank 0)" : "");
}

void print_function_rows(const drg::MergedTree& t, const std::vector<drg::SampledFunction>& fns,
                         double total, size_t rows, const char* indent) {
  size_t shown = 0;
  for (const drg::SampledFunction& f : fns) {
    if (f.own <= 0 || shown++ == rows) break;  // sorted by own: the rest are context
    fmt::print("{}{:>9.3f} {:>7.3f} {:>6.1f}% {:>9.3f} {:>9.3f}  {:<36} {}\n", indent, f.own,
               f.own_error, total > 0 ? 100 * f.own / total : 0.0, f.self, f.inclusive,
               shortened(f.name + (f.module.empty() ? "" : " (" + f.module + ")"), 36),
               sampled_location(t, f.hot_region));
  }
}

}  // namespace

void print_functions_text(const drg::MergedTree& t, size_t rows) {
  drg::SampleProfile s(t);
  if (!s.present()) {
    const auto sm = drg::read_meta(t.experiment().meta).sampling;
    fmt::print("no call-path samples in this experiment{}\n",
               !sm                       ? " (recorded before sampling existed)"
               : !sm->off_reason.empty() ? ": sampling was off, " + sm->off_reason
               : !sm->on ? ": sampling was off (SCALEA_SAMPLE=off or scalea run --sample off)"
                         : ": the threads ran too little on a CPU (one sample per period)");
    return;
  }
  print_sampling_line(t, s);
  const double total = s.total_cpu();
  fmt::print("\nfunctions, all threads (s of CPU time summed over threads)\n");
  const std::string head =
      fmt::format("{:>9} {:>7} {:>7} {:>9} {:>9}  {:<36} {}\n", "own s", "+-", "own%", "self s",
                  "incl s", "function (object)", "hottest line");
  fmt::print("{}", head);
  print_function_rows(t, s.flat(), total, rows, "");
  fmt::print("\nlines, by own time\n");
  size_t shown = 0;
  for (const drg::SampledLine& l : s.lines()) {
    if (shown++ == rows) break;
    fmt::print("{:>9.3f} {:>7.3f} {:>6.1f}%  {:<28} {}\n", l.own, l.own_error, 100 * l.own / total,
               shortened(sampled_location(t, l.region), 28), l.function);
  }
  fmt::print(
      "\nby region: the functions sampled while it was a thread's current region (not in a region "
      "below it)\n");
  for (uint32_t n : t.preorder()) {
    const double here = s.cpu(n);
    if (here <= 0) continue;
    fmt::print("{}  {:.3f} s on a CPU ({:.1f}%)\n", t.path(n), here, 100 * here / total);
    print_function_rows(t, s.functions(n), here, rows, "  ");
  }
  fmt::print(
      "\nsampled: a sample every period of a thread's CPU time (a perf task-clock event per "
      "thread, "
      "else a timer). own: charged to the innermost "
      "function of the program's own code on the sample's stack (a call into a system library, "
      "the OpenMP or MPI runtime counts for the function that made it; the hottest line is then "
      "the call); self: the sample's innermost function; incl: anywhere on its stack; +-: one "
      "standard deviation of the count. Time off a CPU (waiting, sleeping, blocked in I/O) is "
      "not sampled (docs/sampling.md)\n");
}

namespace {
constexpr size_t kJsonRows = 100;       // flat functions and lines listed
constexpr size_t kJsonRegionRows = 10;  // functions listed per region

nlohmann::json function_json(const drg::MergedTree& t, const drg::SampledFunction& f) {
  return {{"function", f.name},
          {"module", f.module},
          {"own_s", f.own},
          {"own_error_s", f.own_error},
          {"self_s", f.self},
          {"inclusive_s", f.inclusive},
          {"on_every_path", f.on_every_path},
          {"hottest_line", sampled_location(t, f.hot_region)}};
}
}  // namespace

nlohmann::json sampled_json(const drg::MergedTree& t) {
  drg::SampleProfile s(t);
  if (!s.present()) return nullptr;
  nlohmann::json functions = nlohmann::json::array(), lines = nlohmann::json::array(),
                 regions = nlohmann::json::array();
  for (const drg::SampledFunction& f : s.flat()) {
    if (functions.size() == kJsonRows) break;
    functions.push_back(function_json(t, f));
  }
  for (const drg::SampledLine& l : s.lines()) {
    if (lines.size() == kJsonRows) break;
    lines.push_back({{"line", sampled_location(t, l.region)},
                     {"function", l.function},
                     {"own_s", l.own},
                     {"own_error_s", l.own_error}});
  }
  for (uint32_t n : t.preorder()) {
    if (s.cpu(n) <= 0) continue;
    nlohmann::json fns = nlohmann::json::array();
    for (const drg::SampledFunction& f : s.functions(n)) {
      if (fns.size() == kJsonRegionRows || f.own <= 0) break;
      fns.push_back(function_json(t, f));
    }
    regions.push_back({{"id", n},
                       {"path", t.path(n)},
                       {"cpu_s", s.cpu(n)},
                       {"cpu_below_s", s.inclusive_cpu(n)},
                       {"functions", fns}});
  }
  const auto sm = drg::read_meta(t.experiment().meta).sampling;
  return {{"period_s", sm ? sm->period_s : 0.0},
          {"samples", s.total_samples()},
          {"cpu_s", s.total_cpu()},
          {"functions", functions},
          {"lines", lines},
          {"regions", regions}};
}

bool has_samples(const drg::Experiment& e) {
  return std::any_of(e.regions.begin(), e.regions.end(),
                     [](const drg::Region& r) { return r.kind == drg::RegionKind::Sampled; });
}

std::string sampled_location(const drg::MergedTree& t, uint32_t region) {
  if (region == format::kNoIndex) return "";
  return t.experiment().regions[region].location();
}

namespace {
// Lines of one function at one place (code inlined into several callers, columns of one line)
// are one line: their own times and samples added up.
void merge_lines(const drg::MergedTree& t, std::vector<drg::SampledLine>& lines) {
  std::map<std::string, size_t> at;  // location -> index into kept
  std::vector<drg::SampledLine> kept;
  for (drg::SampledLine& l : lines) {
    auto [it, added] = at.emplace(sampled_location(t, l.region), kept.size());
    if (added) {
      kept.push_back(std::move(l));
      continue;
    }
    drg::SampledLine& k = kept[it->second];
    k.own += l.own, k.samples += l.samples;
    k.own_error = k.samples > 0 ? k.own / std::sqrt(k.samples) : 0;
  }
  std::stable_sort(
      kept.begin(), kept.end(),
      [](const drg::SampledLine& a, const drg::SampledLine& b) { return a.own > b.own; });
  lines = std::move(kept);
}
}  // namespace

SampledChildren sampled_children(const drg::MergedTree& t, const drg::SampleProfile& s,
                                 const std::vector<uint32_t>& nodes) {
  SampledChildren out;
  for (uint32_t n : nodes) out.cpu += s.cpu(n), out.samples += s.samples(n);
  if (out.samples <= 0) return out;
  std::map<std::pair<std::string, std::string>, size_t> index;  // (name, module) -> function
  for (drg::SampledFunction& f : s.functions_at(nodes)) {
    if (f.own <= 0) break;  // by own time: the rest are the region's context (main, _start, ...)
    index.emplace(std::make_pair(f.name, f.module), out.functions.size());
    out.functions.push_back({std::move(f), {}});
  }
  for (drg::SampledLine& l : s.lines_at(nodes)) {
    auto it = index.find({l.function, l.module});
    if (it != index.end()) out.functions[it->second].lines.push_back(std::move(l));
  }
  for (SampledChild& c : out.functions) {
    merge_lines(t, c.lines);
    if (!c.lines.empty()) c.function.hot_region = c.lines.front().region;  // of the merged lines
  }
  return out;
}

}  // namespace scalea::cli
