// What the commands read from an experiment's meta.json beyond drg::Meta.
#pragma once
#include <nlohmann/json.hpp>
#include <set>

#include "scalea/drg/cct.hpp"

namespace scalea::cli {

// A key of an experiment's meta.json, or null when absent (meta.json from other writers, or
// older ones, may lack any key; const json::operator[] must not see a missing key).
const nlohmann::json& meta_at(const nlohmann::json& meta, const char* key);

// Merged nodes on a call path some thread throttled (SCALEA_THROTTLE), from meta.json's
// "throttle" list (rank, thread and node of the data files).
std::set<uint32_t> throttled_nodes(const drg::Experiment& e, const drg::MergedTree& t);

}  // namespace scalea::cli
