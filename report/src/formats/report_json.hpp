// The single-experiment JSON document (schema scalea-report/1, docs/json-schema.md), shared by
// `scalea report --format json` and `scalea export --format json`.
#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "output/json_stream.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::cli {

struct ReportJsonOptions {
  std::function<bool(uint32_t)> shown;  // which merged nodes to list (all when empty)
  std::string machine_used;             // machine file that priced NOISE, "" when none
  bool compensate = false;
  size_t findings = 5;
  const drg::MergedTree* reference_tree = nullptr;  // for the findings' counter evidence
};

nlohmann::json overheads_json(const overheads::RegionOverheads& r);

// The document as nlohmann::json::dump(2) writes it (no newline at the end), to `put`.
void report_json(const TextSink& put, const drg::Experiment& e, const drg::MergedTree& t,
                 const overheads::Analysis& a, const drg::Experiment* ref,
                 const ReportJsonOptions& o);

}  // namespace scalea::cli
