// Each thread's values of merged nodes, read from a tree that reads its experiment one rank file
// at a time (drg::MergedTree(RankFiles)), which keeps no member lists: for the outputs that list
// a region's threads (the JSON report's per_thread, the CSV export's rows, the HTML page's PEs,
// the cache drill-down, the database's per-PE statistics).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "scalea/drg/cct.hpp"

namespace scalea::cli {

// One merged node's holders, in the order of its in-memory member list: thread after thread (in
// the run's order), a thread's nodes in their order.
struct NodeThreads {
  uint32_t node = 0;
  size_t count = 0;                  // holders
  const uint32_t* thread = nullptr;  // per holder: index into Experiment::threads
  const double* values = nullptr;    // holder-major: the asked metrics of each holder
  size_t metrics = 0;

  double value(size_t holder, size_t k) const { return values[holder * metrics + k]; }
};

// At most this many bytes of values are gathered at once (a few passes over the files for an
// experiment of some million per-thread nodes).
inline constexpr size_t kThreadValuesBytes = size_t(64) << 20;

// Calls visit() for each of `nodes`, in that order, with the values of `metrics` (columns of the
// experiment; -1 reads as 0, as Experiment::value does) on every thread that holds it. The nodes
// are taken in groups whose values fit in `budget` bytes (a node alone may exceed it), one pass
// over the files per group: memory is bounded by the budget, one rank file and the merged nodes.
void for_each_node_threads(const drg::MergedTree& t, const std::vector<uint32_t>& nodes,
                           const std::vector<int>& metrics,
                           const std::function<void(const NodeThreads&)>& visit,
                           size_t budget = kThreadValuesBytes);

}  // namespace scalea::cli
