// Adding a core metric is one row of SCALEA_CORE_METRICS plus the recorder's update of its Stats
// field: with a fake row (fake_metric.hpp) the recorder, the writer and drg compiled again carry
// it to what the reports read, the merged tree and `scalea drg`'s graph.
#include <gtest/gtest.h>

#include "core/recorder.hpp"
#include "core/writer.hpp"
#include "recording.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/drg/graph.hpp"
#include "scalea/scalea.h"

namespace scalea::collect {
namespace {

TEST(FakeMetric, OneRowReachesTheWriterTheLoaderAndTheReports) {
  ASSERT_NE(format::core_metric("fake"), nullptr);
  EXPECT_EQ(format::metric_unit("fake"), format::MetricUnit::Count);
  EXPECT_EQ(format::metric_scope("fake"), format::MetricScope::Own);
  ASSERT_EQ(start_recording(), "");
  const test::TempDir tmp("scalea-unit-fake");
  g_fake_now.store(1000);
  scalea_region_begin_loc("counted", "fake.c", 3, "main");
  g_fake_now.store(2000);
  scalea_region_end("counted");
  // The recorder's update, where a real metric's event is seen: 7 on every node of this thread.
  ThreadState* t = Recorder::get().thread();
  for (uint32_t i = 0; i < t->node_count; ++i) t->node_at(i)->s.fake = 7;

  std::string dir = tmp.path() + "/exp", written, error;
  WriteSummary summary;
  ASSERT_TRUE(write_experiment(Recorder::get(), dir, "test", written, summary, error)) << error;
  drg::Experiment e = drg::load_experiment(written);
  const int fake = e.metric("fake");
  ASSERT_GE(fake, 0);
  EXPECT_EQ(e.metric_merge[size_t(fake)], format::MetricMerge::Sum);

  drg::MergedTree m(e);
  drg::Drg g(e);
  bool found = false;
  for (uint32_t n : m.preorder()) {
    if (m.region_of(n).name != "counted") continue;
    found = true;
    EXPECT_EQ(m.sum(n, fake), 7);
    EXPECT_EQ(m.sum(n, e.metric("visits")), 1);
  }
  EXPECT_TRUE(found);
  found = false;
  for (uint32_t v = 0; v < g.size(); ++v) {
    if (g.region_of(v).name != "counted") continue;
    found = true;
    EXPECT_EQ(g.value(v, g.metric("fake")), 7);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace scalea::collect
