#include "sampled_where.hpp"

#include <fmt/format.h>

namespace scalea::cli {

std::string sampled_where(const drg::SampleProfile& s, const drg::MergedTree& t, uint32_t node,
                          bool below) {
  constexpr double kMinSamples = 10;  // fewer: a share is mostly noise (±30% and more)
  constexpr double kMinShare = 0.1;   // functions under this share are not named
  const double total = below ? s.inclusive_cpu(node) : s.cpu(node);
  if (s.samples(node, below) < kMinSamples || total <= 0) return "";
  std::string out;
  int named = 0;
  for (const drg::SampledFunction& f : s.functions(node, below)) {
    if (f.own < kMinShare * total || named == 3) break;
    std::string where =
        f.hot_region == format::kNoIndex ? "" : t.experiment().regions[f.hot_region].location();
    out += fmt::format("{}{:.0f}% in {}{}", named ? ", " : "", 100 * f.own / total, f.name,
                       where.empty() ? "" : " @" + where);
    ++named;
  }
  return out.empty() ? "" : out + " (sampled on-CPU time)";
}

}  // namespace scalea::cli
