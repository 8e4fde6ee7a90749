// What call-path sampling saw (docs/sampling.md): `scalea report --view functions`, the report's
// JSON "sampled" object (findings/sampled_where.hpp words the findings).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/samples.hpp"

namespace scalea::cli {

// `--view functions`: the flat profile (functions and lines by self time) and, per region, the
// functions below it. `rows`: at most this many per table.
void print_functions_text(const drg::MergedTree& t, size_t rows);

// The report JSON's "sampled" (docs/json-schema.md): null without samples.
nlohmann::json sampled_json(const drg::MergedTree& t);

}  // namespace scalea::cli
