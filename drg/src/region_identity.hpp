// When the loader takes two regions for one (region_identity.cpp; docs/architecture.md, "Region
// identity"), in its two passes: reading a rank file's regions (rank_file_parser.cpp) and settling
// them once every thread is in (settlement.cpp); and the call paths that then become one node.
// Used by the loader (drg/src) only.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "scalea/drg/experiment.hpp"
#include "scalea/drg/flat_map.hpp"
#include "scalea/drg/region_key.hpp"
#include "scalea/drg/symbols.hpp"
#include "scalea/format.hpp"

namespace scalea::drg {

// Rebuilds a thread's tree so that every call path has one node: nodes whose regions became one
// (the same source position, inlined copies, `remap`) are folded into the first, metric by metric
// (the METR merge rule), and nodes of `drop`ped regions vanish, their children attaching to their
// parent (merging with its children of the same region). `remap` (old region -> new) and `drop`
// (by old region) may be null; `first` is scratch, kept by the caller across threads. A thread
// read without its values (MetricSet::none()) folds its structure only.
void fold_duplicate_paths(ThreadTree& t, const std::vector<format::MetricMerge>& merge,
                          FlatMap64& first, const std::vector<uint32_t>* remap = nullptr,
                          const std::vector<char>* drop = nullptr);

// The runtime entry points whose return address a region of this kind records: OMPT reports the
// caller of the libomp (or GOMP-interface) entry, the MPI layer the caller of the MPI function.
// "name*" is a prefix. Used to find the construct when the entry was reached by a tail jump.
EntryFilter runtime_entry(const Region& r);

// A region placed at a source position (a file and a line).
bool has_source(const Region& r);
// The copies of one construct are one region when their source keys (with full paths: one build)
// are equal, for the regions that resolution placed: at a source position, else at the resolved
// code address (a return address, or the jump the runtime was entered by), so that return
// addresses of calls that reached one tail jump are one region. Others keep their exact key.
std::optional<SourceKey> placed_key(const Region& r);
// A region that several recorded addresses became keeps the lowest of them (of its module), so
// that the address does not depend on which copy a run met first.
void keep_lowest_address(Region& kept, const Region& other);
// The resolved code of a region: where it is in its module, whatever the line tables say.
void set_code(Region& r, const SourceLocation& loc);

// The identity of a region the post-pass creates or changes, to find the region it now equals.
bool same_region(const Region& a, const Region& b);

}  // namespace scalea::drg
