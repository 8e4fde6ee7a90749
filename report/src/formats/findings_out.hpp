// The findings as the outputs show them: a JSON list, and the text report's numbered section.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "findings/findings.hpp"

namespace scalea::cli {

nlohmann::json findings_json(const std::vector<Finding>& f);
// "findings (largest overheads first):" and one numbered paragraph each, on stdout; then what
// they add up to against the program's T_o, and the floor below which nothing was listed.
void print_findings(const std::vector<Finding>& f, const overheads::Analysis& a,
                    bool noise_measured);
// Why findings that hold `held` s can hold more than the program's T_o: its negative classes
// (unidentified below 0: the run was busy for less time than the reference, super-linear work),
// which T_o nets against the positive ones; as a clause to follow "the program's T_o is X s", or
// "" when the findings hold no more than T_o or no class is negative.
std::string below_findings(const overheads::Analysis& a, double held);

// The text report's findings section, at most `limit` of them (0: none): called by scalea report
// after its table.
void print_report_findings(const drg::MergedTree& t, const overheads::Analysis& a, size_t limit,
                           const FindingContext& context = {});

}  // namespace scalea::cli
