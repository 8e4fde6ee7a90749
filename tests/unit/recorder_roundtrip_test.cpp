// The recorder's data, written by the real writer and read back by drg's loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "ompt/callbacks.hpp"
#include "core/recorder.hpp"
#include "core/json_text.hpp"
#include "core/writer.hpp"
#include "recording.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/scalea.h"

namespace scalea::collect {
namespace {

TEST(RecorderRoundTrip, UserRegionsAndMetricsSurviveWriteAndLoad) {
  ASSERT_EQ(start_recording(), "");
  const test::TempDir tmp("scalea-unit-rt");
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

  std::string dir = tmp.path() + "/exp", written, error;
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
  EXPECT_EQ(e.meta["format_version"], format::kVersion);
  EXPECT_TRUE(e.complete());
}

// The return address into the caller: a call site, as the MPI wrappers take it.
__attribute__((noinline)) const void* call_site() {
  const void* ra = __builtin_return_address(0);
  asm volatile("" ::: "memory");  // not a tail call
  return ra;
}

// Call-site regions (name + code address, collect/mpi): one region per (kind, subkind, name,
// address); after the run each resolves to its own source line.
TEST(RecorderRoundTrip, SiteRegionsAreOnePerNameAndAddress) {
  ASSERT_EQ(start_recording(), "");
  const test::TempDir tmp("scalea-unit-rt");
  auto [a, line_a] = std::pair{call_site(), __LINE__};
  auto [b, line_b] = std::pair{call_site(), __LINE__};
  ASSERT_NE(a, b);
  Recorder& rec = Recorder::get();
  uint16_t coll = uint16_t(format::MpiClass::Collective);
  uint32_t ra = rec.site_region(RegionKind::Mpi, coll, "MPI_Allreduce", a);
  uint32_t rb = rec.site_region(RegionKind::Mpi, coll, "MPI_Allreduce", b);
  EXPECT_NE(ra, rb);
  EXPECT_EQ(rec.site_region(RegionKind::Mpi, coll, "MPI_Allreduce", a), ra);
  // Another function called from the same address (through a pointer) is another region, and
  // neither is the named region of the same name.
  uint32_t rc = rec.site_region(RegionKind::Mpi, coll, "MPI_Reduce", a);
  EXPECT_NE(rc, ra);
  ThreadState* t = rec.thread();
  EXPECT_NE(rec.named_region(*t, RegionKind::Mpi, "MPI_Allreduce", "", 0, "", coll), ra);
  point_event(*t, ra);
  point_event(*t, rb);

  std::string dir = tmp.path() + "/exp", written, error;
  WriteSummary summary;
  ASSERT_TRUE(write_experiment(rec, dir, "test", written, summary, error)) << error;
  drg::Experiment e = drg::load_experiment(written);
  std::vector<int> lines;
  for (const drg::Region& r : e.regions) {
    if (r.kind != drg::RegionKind::Mpi || r.name != "MPI_Allreduce" || r.address == 0) continue;
    EXPECT_EQ(r.subkind, coll);
    EXPECT_FALSE(r.module.empty());
    EXPECT_NE(r.file.find("recorder_roundtrip_test.cpp"), std::string::npos) << r.file;
    lines.push_back(int(r.line));
  }
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<int>{line_a, line_b}));
}

}  // namespace
}  // namespace scalea::collect

// meta.json is JSON, which must be UTF-8: bytes of another encoding (a program argument or a path
// in Latin-1) become U+FFFD, and well-formed sequences pass through as they are.
TEST(JsonEscape, KeepsUtf8ReplacesWhatIsNot) {
  using scalea::collect::json_escape;
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(json_escape("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");  // 2, 3 and 4 bytes
  EXPECT_EQ(json_escape("caf\xE9"), "\"caf" + fffd + "\"");    // Latin-1
  EXPECT_EQ(json_escape("\xC0\x80"), "\"" + fffd + fffd + "\"");  // overlong NUL
  EXPECT_EQ(json_escape("\xED\xA0\x80"), "\"" + fffd + fffd + fffd + "\"");  // a surrogate
  EXPECT_EQ(json_escape("\xF4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");  // > U+10FFFF
  EXPECT_EQ(json_escape("\xE2\x82"), "\"" + fffd + fffd + "\"");  // cut short
  EXPECT_EQ(json_escape("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}
