// What call-path sampling saw (docs/sampling.md): `scalea report --view functions`, the report's
// JSON "sampled" object, the sampled children of a region that the CSV and Hatchet exports and
// the database hold (findings/sampled_where.hpp words the findings).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/samples.hpp"

namespace scalea::cli {

// `--view functions`: the flat profile (functions and lines by self time) and, per region, the
// functions below it. `rows`: at most this many per table.
void print_functions_text(const drg::MergedTree& t, size_t rows);

// The report JSON's "sampled" (docs/json-schema.md): null without samples.
nlohmann::json sampled_json(const drg::MergedTree& t);

// Whether the experiment holds call-path samples (a sampled region in its table): without, a
// SampleProfile need not read the threads.
bool has_samples(const drg::Experiment& e);

// A sampled region's place: "md.c:88", or the symbol and offset without line information.
std::string sampled_location(const drg::MergedTree& t, uint32_t region);

// The sampled children of a region (the merged nodes of one call path, each alone: not the
// regions below it): the functions with own time there, by own time, each with its lines (one per
// location). Their own times add up to `cpu`. Sampled rows are never regions: no overhead class
// meets them.
struct SampledChild {
  drg::SampledFunction function;
  std::vector<drg::SampledLine> lines;  // by own time; their own times add up to the function's
};
struct SampledChildren {
  double cpu = 0, samples = 0;  // sampled at the nodes, summed over threads
  std::vector<SampledChild> functions;
};
SampledChildren sampled_children(const drg::MergedTree& t, const drg::SampleProfile& s,
                                 const std::vector<uint32_t>& nodes);

}  // namespace scalea::cli
