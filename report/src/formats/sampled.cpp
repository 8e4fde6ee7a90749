#include "sampled.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "scalea/drg/meta.hpp"

namespace scalea::cli {
namespace {

// A sampled region's place: "md.c:88", or the symbol and offset without line information.
std::string line_of(const drg::MergedTree& t, uint32_t region) {
  if (region == format::kNoIndex) return "";
  return t.experiment().regions[region].location();
}

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
               line_of(t, f.hot_region));
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
               shortened(line_of(t, l.region), 28), l.function);
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
          {"hottest_line", line_of(t, f.hot_region)}};
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
    lines.push_back({{"line", line_of(t, l.region)},
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

}  // namespace scalea::cli
