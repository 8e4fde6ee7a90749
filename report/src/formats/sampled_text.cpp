#include "sampled_text.hpp"

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
      "SAMPLED     {:.0f} periods of {:.1f} ms of CPU time ({:.3f} s on a CPU), on {} thread(s); "
      "{} in the tool's own code, {} not recorded{}\n",
      s.total_periods(), s.period_s() * 1e3, s.total_periods() * s.period_s(), sm.threads,
      sm.in_tool, sm.dropped, meta.mpi ? " (figures of rank 0)" : "");
}

void print_function_rows(const drg::MergedTree& t, const drg::SampleProfile& s,
                         const std::vector<drg::SampledFunction>& fns, double total, size_t rows,
                         const char* indent) {
  const double p = s.period_s();
  size_t shown = 0;
  for (const drg::SampledFunction& f : fns) {
    if (shown++ == rows) break;
    fmt::print("{}{:>9.3f} {:>7.3f} {:>9.3f} {:>6.1f}%  {:<36} {}\n", indent, f.self * p,
               drg::SampleProfile::error(f.self) * p, f.inclusive * p,
               total > 0 ? 100 * f.inclusive / total : 0.0,
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
               !sm ? " (recorded before sampling existed)"
               : !sm->off_reason.empty() ? ": sampling was off, " + sm->off_reason
               : !sm->on ? ": sampling was off (SCALEA_SAMPLE=off or scalea run --sample off)"
                         : ": the threads ran too little on a CPU (one sample per period)");
    return;
  }
  print_sampling_line(t, s);
  const double total = s.total_periods();
  fmt::print("\nfunctions, all threads, by self time (s of CPU time summed over threads)\n");
  fmt::print("{:>9} {:>7} {:>9} {:>7}  {:<36} {}\n", "self s", "+-", "incl s", "incl%",
             "function (object)", "hottest line");
  print_function_rows(t, s, s.flat(), total, rows, "");
  fmt::print("\nlines, by self time\n");
  size_t shown = 0;
  for (const drg::SampledLine& l : s.lines()) {
    if (shown++ == rows) break;
    fmt::print("{:>9.3f} {:>7.3f} {:>6.1f}%  {:<28} {}\n", l.self * s.period_s(),
               drg::SampleProfile::error(l.self) * s.period_s(), 100 * l.self / total,
               shortened(line_of(t, l.region), 28), l.function);
  }
  fmt::print(
      "\nby region: the functions sampled while it was a thread's current region (not in a region "
      "below it), by inclusive time; functions on every sampled path (its context) are left out\n");
  for (uint32_t n : t.preorder()) {
    const double here = s.periods(n);
    if (here <= 0) continue;
    fmt::print("{}  {:.3f} s on a CPU ({:.1f}%)\n", t.path(n), here * s.period_s(),
               100 * here / total);
    std::vector<drg::SampledFunction> fns = s.functions(n);
    fns.erase(std::remove_if(fns.begin(), fns.end(),
                             [](const drg::SampledFunction& f) {
                               return f.on_every_path && f.self <= 0;
                             }),
              fns.end());
    print_function_rows(t, s, fns, here, rows, "  ");
  }
  fmt::print(
      "\nsampled: one sample every period of a thread's CPU time; self: the sample's innermost "
      "function, incl: anywhere on its stack; +-: one standard deviation of the count; time off "
      "a CPU (waiting, sleeping, blocked in I/O) is not sampled (docs/sampling.md)\n");
}

std::string sampled_where(const drg::SampleProfile& s, const drg::MergedTree& t, uint32_t node,
                          bool below) {
  constexpr double kMinPeriods = 10;  // below this a share is mostly noise
  constexpr double kMinShare = 0.1;   // functions under this share are not named
  const double total = below ? s.inclusive_periods(node) : s.periods(node);
  if (total < kMinPeriods) return "";
  std::string out;
  int named = 0;
  for (const drg::SampledFunction& f : s.functions(node, below)) {
    if (f.on_every_path && f.self <= 0) continue;
    if (f.inclusive < kMinShare * total || named == 3) break;
    std::string where = line_of(t, f.hot_region);
    out += fmt::format("{}{:.0f}% in {}{}", named ? ", " : "", 100 * f.inclusive / total, f.name,
                       where.empty() ? "" : " @" + where);
    ++named;
  }
  return out.empty() ? "" : out + " (sampled on-CPU time)";
}

}  // namespace scalea::cli
