// Each thread's values of merged nodes, gathered a group of nodes at a time
// (report/src/analysis/thread_values.cpp): the same holders, values and order as the member lists of the
// tree in memory, whatever the budget that splits the nodes into groups.
#include "analysis/thread_values.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "builder.hpp"

namespace scalea::cli {
namespace {

using test::Builder;
using format::RegionKind;

// Three threads; thread 1 holds the loop twice (two nodes with one call path) and thread 2 has no
// loop at all.
struct ThreeThreads {
  Builder b;
  ThreeThreads() {
    uint32_t par = b.region(RegionKind::Parallel, "par"), loop = b.region(RegionKind::Loop, "loop");
    for (uint32_t i = 0; i < 3; ++i) {
      uint32_t th = b.thread(i == 0, 100 + i);
      uint32_t p = b.node(th, 0, par, {{"time", 50.0 + i}, {"visits", 1}, {"wait", 0.5 * i}});
      if (i == 2) continue;
      b.node(th, p, loop, {{"time", 10.0 + i}, {"visits", 2.0 + i}});
      if (i == 1) b.node(th, p, loop, {{"time", 7}, {"visits", 3}});
    }
  }
};

// The holders of node n, thread by thread (each thread's nodes in order): (thread, values of
// `metrics`), read straight from the experiment's threads.
std::vector<std::pair<uint32_t, std::vector<double>>> members(const drg::MergedTree& t, uint32_t n,
                                                              const std::vector<int>& metrics) {
  const drg::Experiment& e = t.experiment();
  std::vector<std::pair<uint32_t, std::vector<double>>> out;
  for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
    const std::vector<uint32_t>& merged = t.merged_of(ti);
    for (uint32_t node = 0; node < merged.size(); ++node) {
      if (merged[node] != n) continue;
      std::vector<double> v;
      for (int k : metrics) v.push_back(e.value(e.threads[ti], node, k));
      out.emplace_back(ti, v);
    }
  }
  return out;
}

void expect_member_lists(size_t budget) {
  ThreeThreads x;
  const drg::Experiment& e = x.b.experiment();
  drg::MergedTree t(e);
  const std::vector<int> metrics = {e.metric("time"), -1, e.metric("visits"), e.metric("wait")};
  std::vector<uint32_t> nodes = t.preorder();
  std::reverse(nodes.begin(), nodes.end());  // any order the caller asks for
  std::vector<uint32_t> visited;
  for_each_node_threads(
      t, nodes, metrics,
      [&](const NodeThreads& h) {
        visited.push_back(h.node);
        ASSERT_EQ(h.metrics, metrics.size());
        auto want = members(t, h.node, metrics);
        ASSERT_EQ(h.count, want.size()) << "node " << h.node;
        for (size_t i = 0; i < h.count; ++i) {
          EXPECT_EQ(h.thread[i], want[i].first);
          for (size_t k = 0; k < metrics.size(); ++k)
            EXPECT_EQ(h.value(i, k), want[i].second[k]) << "node " << h.node << " holder " << i;
        }
      },
      budget);
  EXPECT_EQ(visited, nodes);
}

TEST(ThreadValues, GivesTheMemberListsInOneGroup) { expect_member_lists(kThreadValuesBytes); }

TEST(ThreadValues, GivesTheMemberListsWhenEachNodeIsAGroup) { expect_member_lists(1); }

TEST(ThreadValues, TheLoopHasThreeHoldersOnTwoThreads) {
  ThreeThreads x;
  drg::MergedTree t(x.b.experiment());
  std::vector<uint32_t> threads;
  for_each_node_threads(t, {2}, {}, [&](const NodeThreads& h) {
    threads.assign(h.thread, h.thread + h.count);
  });
  EXPECT_EQ(t.region_of(2).name, "loop");
  EXPECT_EQ(threads, (std::vector<uint32_t>{0, 1, 1}));
}

}  // namespace
}  // namespace scalea::cli
