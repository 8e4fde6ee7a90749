// The recorder's data, written by the real writer and read back by drg's loader.
#include <gtest/gtest.h>

#include "ompt/callbacks.hpp"
#include "core/recorder.hpp"
#include "core/writer.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/scalea.h"

namespace scalea::collect {
namespace {

TEST(RecorderRoundTrip, UserRegionsAndMetricsSurviveWriteAndLoad) {
  char tmpl[] = "/tmp/scalea-unit-rt-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  setenv("SCALEA_QUIET", "1", 1);
  if (g_state.load() == 0) {
    setenv("SCALEA_OUTPUT", (std::string(tmpl) + "/unused").c_str(), 1);
    ASSERT_TRUE(Recorder::get().start("test"));
  }
  g_fake_now.store(1000000);
  scalea_region_begin_loc("outer", "roundtrip.c", 7, "main");
  g_fake_now.store(1000100);
  scalea_region_begin_loc("inner", "roundtrip.c", 8, "main");
  g_fake_now.store(1000400);
  scalea_region_end("inner");
  scalea_region_begin_loc("inner", "roundtrip.c", 8, "main");
  g_fake_now.store(1000500);
  scalea_region_end("inner");
  g_fake_now.store(1001000);
  scalea_region_end("outer");

  std::string dir = std::string(tmpl) + "/exp", written, error;
  WriteSummary summary;
  ASSERT_TRUE(write_experiment(Recorder::get(), dir, "test", written, summary, error)) << error;
  EXPECT_EQ(written, dir);
  // A second experiment aimed at the same directory does not overwrite it.
  ASSERT_TRUE(write_experiment(Recorder::get(), dir, "test", written, summary, error)) << error;
  EXPECT_EQ(written, dir + ".1");

  drg::Experiment e = drg::load_experiment(dir);
  drg::MergedTree t(e);
  int visits = e.metric("visits"), time = e.metric("time"), tmin = e.metric("time_min"),
      tmax = e.metric("time_max"), sumsq = e.metric("time_sumsq");
  bool found = false;
  for (uint32_t n : t.preorder()) {
    const drg::Region& r = t.region_of(n);
    if (r.kind != drg::RegionKind::User || r.name != "inner") continue;
    found = true;
    EXPECT_EQ(t.path(n).substr(t.path(n).find('/') + 1), "outer@roundtrip.c:7/inner@roundtrip.c:8");
    EXPECT_EQ(t.sum(n, visits), 2);
    EXPECT_EQ(t.sum(n, time), 400);
    EXPECT_EQ(t.min(n, tmin), 100);
    EXPECT_EQ(t.max(n, tmax), 300);
    EXPECT_DOUBLE_EQ(t.sum(n, sumsq), 300.0 * 300 + 100.0 * 100);
    EXPECT_EQ(r.function, "main");
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(e.meta["format_version"], 1);
  EXPECT_TRUE(e.complete());
}

}  // namespace
}  // namespace scalea::collect
