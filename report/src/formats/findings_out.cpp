#include "findings_out.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

namespace scalea::cli {

using drg::MergedTree;

namespace {

// The finding's source lines (null when they cannot be read here).
nlohmann::json source_json(const Finding& f) {
  if (f.source.empty()) return nullptr;
  nlohmann::json lines = nlohmann::json::array();
  for (const SourceLine& l : f.source) lines.push_back({{"line", l.line}, {"text", l.text}});
  return {{"file", f.source_file}, {"line", f.line}, {"lines", lines}};
}

// The source under a finding, its region's line marked with the finding's seconds.
void print_source(const Finding& f) {
  if (f.source.empty()) return;
  fmt::print("     source {}\n", f.source_file.substr(f.source_file.rfind('/') + 1));
  for (const SourceLine& l : f.source)
    fmt::print("     {:>6} | {}{}\n", l.line, l.text,
               l.line == f.line ? fmt::format("    <- {:.3f} s here", f.seconds) : "");
}

}  // namespace

nlohmann::json findings_json(const std::vector<Finding>& fs) {
  nlohmann::json out = nlohmann::json::array();
  int rank = 0;
  for (const Finding& f : fs)
    out.push_back({{"rank", ++rank},
                   {"node", f.node},
                   {"path", f.path},
                   {"region", f.region},
                   {"location", f.location},
                   {"context", f.context},
                   {"class", f.cls},
                   {"subclass", f.subclass},
                   {"seconds", f.seconds},
                   {"percent", f.percent},
                   {"hint", f.hint},
                   {"actionable", f.actionable},
                   {"wait_state",
                    f.wait_state.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.wait_state)},
                   {"evidence", f.evidence},
                   {"sampled", f.sampled},
                   {"same_time_as", f.same_time},
                   {"noise", f.noise},
                   {"source", source_json(f)},
                   {"text", f.text}});
  return out;
}

std::string below_findings(const overheads::Analysis& a, double held) {
  if (a.regions.empty()) return "";
  const overheads::RegionOverheads& program = a.regions[0];
  // Shown to the millisecond: a smaller difference, or a smaller negative class, reads as none.
  constexpr double kShown = 0.0005;
  if (held - program.t_o < kShown) return "";
  std::vector<std::pair<double, size_t>> negative;
  for (size_t c = 0; c < program.classes.size(); ++c)
    if (program.classes[c] <= -kShown) negative.emplace_back(program.classes[c], c);
  if (negative.empty()) return "";
  std::sort(negative.begin(), negative.end());
  std::string parts;
  for (const auto& [v, c] : negative) {
    parts += fmt::format("{}{} {:.3f} s", parts.empty() ? "" : ", ", overheads::kClassKeys[c], v);
    if (c == size_t(overheads::Class::Unidentified))
      parts +=
          " (less busy time than the reference: super-linear work, such as data that fits in the "
          "caches of more cores, or a reference that did more work)";
  }
  return ", less than they hold: T_o is the sum of the classes, and it also nets what the run "
         "spent less than the reference, " +
         parts;
}

void print_findings(const std::vector<Finding>& fs, const overheads::Analysis& a,
                    bool noise_measured) {
  double floor = finding_floor(a);
  std::string why = fmt::format("below {:.3f} s ({}% of the program's time, at least {:.0f} ms){}",
                                floor, kFindingMinProgramShare * 100, kFindingMinSeconds * 1e3,
                                noise_measured ? " or within the run-to-run noise" : "");
  if (fs.empty()) {
    fmt::print("\nfindings: no overhead above the floor: nothing {} is listed\n", why);
    return;
  }
  fmt::print("\nfindings (largest overheads first):\n");
  int rank = 0;
  double sum = 0;
  for (const Finding& f : fs) {
    fmt::print("{:>3}. [{}{}{}] {}\n", ++rank, f.cls, f.subclass.empty() ? "" : ".", f.subclass,
               f.text);
    fmt::print("     region {}\n", f.path);
    print_source(f);
    sum += f.seconds;
  }
  double t_o = a.regions.empty() ? 0 : a.regions[0].t_o;
  fmt::print(
      "these findings hold {:.3f} s; the program's T_o is {:.3f} s{}. Nothing {} is listed{}\n",
      sum, t_o, below_findings(a, sum), why,
      noise_measured
          ? ""
          : "; the run-to-run noise is not measured (one run: use scalea study --repeat)");
}

void print_report_findings(const MergedTree& t, const overheads::Analysis& a, size_t limit,
                           const FindingContext& context) {
  if (limit == 0) return;
  for (const std::string& note : cpu_sharing(t.experiment()))
    fmt::print("\nfirst, threads shared CPUs: {}\n", note);
  if (std::string spin = spinning_note(t); !spin.empty())
    fmt::print("\nfirst, threads shared CPUs: {}\n", spin);
  print_findings(find_findings(t, a, limit, context), a, !context.noise.empty());
}

}  // namespace scalea::cli
