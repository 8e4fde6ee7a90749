// The single-experiment JSON document (schema scalea-report/1, docs/json-schema.md), shared by
// `scalea report --format json` and `scalea export --format json`.
#pragma once
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
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

nlohmann::json overheads_json(const overheads::RegionOverheads& r);
nlohmann::json report_json(const drg::Experiment& e, const drg::MergedTree& t,
                           const overheads::Analysis& a, const drg::Experiment* ref,
                           const ReportJsonOptions& o);

}  // namespace scalea::cli
