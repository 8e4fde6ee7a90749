// The merged calling-context tree of one run: every thread's sub-DRG (of every rank) folded into
// one tree whose node identity is the call path of regions (the canonical key). Each merged node
// keeps references to the per-thread nodes it came from, so per-thread and per-rank values stay
// available for imbalance analysis without being copied.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalea/drg/experiment.hpp"

namespace scalea::drg {

struct Member {
  uint32_t thread;  // index into Experiment::threads
  uint32_t node;    // node within that thread's tree
};

struct MergedNode {
  uint32_t parent = format::kNoIndex;
  uint32_t region = 0;
  uint32_t depth = 0;
  std::vector<uint32_t> children;  // in order of first appearance
  std::vector<Member> members;
};

class MergedTree {
 public:
  explicit MergedTree(const Experiment& e);

  const Experiment& experiment() const { return *e_; }
  const std::vector<MergedNode>& nodes() const { return nodes_; }
  const MergedNode& node(uint32_t i) const { return nodes_[i]; }
  const Region& region_of(uint32_t i) const { return e_->regions[nodes_[i].region]; }
  // The merged node of every node of a thread (old -> new), so analyses can stream over each
  // thread's arrays in memory order instead of walking the member lists.
  const std::vector<uint32_t>& merged_of(uint32_t thread) const { return map_[thread]; }

  double sum(uint32_t node, int metric) const;
  double max(uint32_t node, int metric) const;
  double min(uint32_t node, int metric) const;
  // Value of the metric on each thread that ran the node (others are absent, not zero).
  std::vector<std::pair<uint32_t, double>> per_thread(uint32_t node, int metric) const;
  // Value of the metric summed per rank.
  std::vector<double> per_rank(uint32_t node, int metric) const;

  // "program/parallel@md.c:88/loop@md.c:90"
  std::string path(uint32_t node) const;
  // Depth-first order (children in order of appearance).
  std::vector<uint32_t> preorder() const;

 private:
  const Experiment* e_;
  std::vector<MergedNode> nodes_;
  std::vector<std::vector<uint32_t>> map_;  // per thread: node -> merged node
};

}  // namespace scalea::drg
