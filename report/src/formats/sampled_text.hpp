// What call-path sampling saw, as text (docs/sampling.md): `scalea report --view functions`, and
// the words findings use to say where inside a region its time went.
#pragma once
#include <string>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/samples.hpp"

namespace scalea::cli {

// `--view functions`: the flat profile (functions and lines by self time) and, per region, the
// functions below it. `rows`: at most this many per table.
void print_functions_text(const drg::MergedTree& t, size_t rows);

// "62% in update @cells.c:288, 30% in halo @halo.c:248 (sampled)": the functions (not the node's
// context) that hold most of a node's sampled time, and their hottest line; "" when the node has
// too few samples to say. `below`: the node's measured descendants too.
std::string sampled_where(const drg::SampleProfile& s, const drg::MergedTree& t, uint32_t node,
                          bool below);

}  // namespace scalea::cli
