// What the on-line tuner (SCALEA_TUNE=on, docs/tuning.md "On-line tuning") changed and gained, as
// `scalea report` shows it: a block of the text report and the JSON report's "online_tuning".
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"

namespace scalea::cli {

// The text block's lines (none when the run was not tuned on line). With the merged tree, each
// region's loops' directives as the source writes them.
std::vector<std::string> tuning_text(const drg::Experiment& e, const drg::MergedTree* t);
// meta.json's "online_tuning" with each region's label ("parallel @shapes.c:420") and its loops'
// directives ("source", null when not read), or null when the run was not tuned on line.
nlohmann::json tuning_json(const drg::Experiment& e, const drg::MergedTree* t);

}  // namespace scalea::cli
