// Where inside a region its time went, from call-path sampling (docs/sampling.md), in the words
// of a finding: "62% in update @cells.c:288, 30% in halo @halo.c:248 (sampled on-CPU time)".
#pragma once
#include <string>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/samples.hpp"

namespace scalea::cli {

// The functions (not the node's context) that hold most of a node's sampled time, and their
// hottest line; "" when the node has too few samples to say. `below`: the node's measured
// descendants too.
std::string sampled_where(const drg::SampleProfile& s, const drg::MergedTree& t, uint32_t node,
                          bool below);

}  // namespace scalea::cli
