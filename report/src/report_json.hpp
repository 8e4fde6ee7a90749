// The single-experiment JSON document (schema scalea-report/1, docs/json-schema.md), shared by
// `scalea report --format json` and `scalea export --format json`.
#pragma once
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "scalea/drg/cct.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::cli {

struct ReportJsonOptions {
  std::function<bool(uint32_t)> shown;  // which merged nodes to list (all when empty)
  std::string machine_used;             // machine file that priced NOISE, "" when none
  bool compensate = false;
  size_t findings = 5;
};

// A key of an experiment's meta.json, or null when absent (meta.json from other writers, or
// older ones, may lack any key; const json::operator[] must not see a missing key).
const nlohmann::json& meta_at(const nlohmann::json& meta, const char* key);
// A nested value with a default: meta_value(meta, "clock", "source", "").
template <class T>
T meta_value(const nlohmann::json& meta, const char* key, const char* sub, T fallback) {
  const nlohmann::json& v = meta_at(meta, key);
  if (!v.is_object() || !v.contains(sub)) return fallback;
  try {
    return v[sub].get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

// Merged nodes on a call path some thread throttled (SCALEA_THROTTLE), from meta.json's
// "throttle" list (rank, thread and node of the data files).
std::set<uint32_t> throttled_nodes(const drg::Experiment& e, const drg::MergedTree& t);

nlohmann::json overheads_json(const overheads::RegionOverheads& r);
nlohmann::json report_json(const drg::Experiment& e, const drg::MergedTree& t,
                           const overheads::Analysis& a, const drg::Experiment* ref,
                           const ReportJsonOptions& o);

}  // namespace scalea::cli
