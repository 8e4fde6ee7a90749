// Snapshots (docs/online.md): the publisher's copy of the recorder's trees, encoded as it writes
// them, read back and subtracted by drg. Synthetic events on the fake clock (1 tick = 1 ns).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/recorder.hpp"
#include "core/snapshot.hpp"
#include "recording.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/snapshots.hpp"
#include "scalea/scalea.h"

namespace scalea::collect {
namespace {

class Snapshots : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(start_recording(), ""); }
  // A snapshot now, written to a file and read back as the readers read it.
  drg::SnapshotPart take(const std::string& name) {
    std::vector<char> bytes = snapshot::capture_for_test(Recorder::get());
    EXPECT_FALSE(bytes.empty());
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return drg::read_snapshot(path);
  }
  // Two snapshots of a region open at the first and closed 300 us earlier than that before the
  // second, 100 us later: a decrease no copy explains, so not the same run.
  std::pair<drg::SnapshotPart, drg::SnapshotPart> not_continued(const char* name, uint64_t at) {
    g_fake_now.store(at);
    scalea_region_begin_loc(name, "snap.c", 1, "main");
    g_fake_now.store(at + 500000);
    drg::SnapshotPart earlier = take("c.sdrg");
    g_fake_now.store(at + 200000);
    scalea_region_end(name);
    g_fake_now.store(at + 600000);
    return {earlier, take("e.sdrg")};
  }
  const test::TempDir tmp_{"scalea-unit-snap"};
  const std::string dir_ = tmp_.path();
};

// The user region `name` entered, left, and visited on the fake clock.
void begin(const char* name, uint64_t at) {
  g_fake_now.store(at);
  scalea_region_begin_loc(name, "snap.c", 1, "main");
}
void end(const char* name, uint64_t at) {
  g_fake_now.store(at);
  scalea_region_end(name);
}
void visit(const char* name, uint64_t from, uint64_t to) {
  begin(name, from);
  end(name, to);
}

// The statistics of the user region `name` (any parent) in a snapshot or a difference.
struct Figures {
  double visits = -1, time = -1;
};
Figures region(const drg::SnapshotPart& part, const std::string& name) {
  drg::Experiment e = drg::load_snapshot({part}, "snap");
  drg::MergedTree t(e);
  Figures f;
  for (uint32_t n : t.preorder())
    if (t.region_of(n).kind == drg::RegionKind::User && t.region_of(n).name == name) {
      f.visits = t.sum(n, e.metric("visits"));
      f.time = t.sum(n, e.metric("time"));
    }
  return f;
}

TEST_F(Snapshots, AnIntervalIsTheDifferenceOfTwoSnapshots) {
  begin("snap_outer", 50000000);
  visit("snap_inner", 50000100, 50000400);
  g_fake_now.store(50000500);
  drg::SnapshotPart a = take("a.sdrg");
  // A region open at the snapshot is closed at it in the copy: one visit, its time so far.
  EXPECT_EQ(region(a, "snap_outer").visits, 1);
  EXPECT_EQ(region(a, "snap_outer").time, 500);
  EXPECT_EQ(region(a, "snap_inner").visits, 1);
  EXPECT_EQ(region(a, "snap_inner").time, 300);

  visit("snap_inner", 50000500, 50000700);
  visit("snap_inner", 50000700, 50000750);
  end("snap_outer", 50001000);
  g_fake_now.store(50001200);
  drg::SnapshotPart b = take("b.sdrg");
  EXPECT_EQ(region(b, "snap_inner").visits, 3);
  EXPECT_EQ(region(b, "snap_inner").time, 550);

  drg::SnapshotPart d = drg::subtract(b, a);
  EXPECT_EQ(region(d, "snap_inner").visits, 2);
  EXPECT_EQ(region(d, "snap_inner").time, 250);
  // Open over the start of the interval: one visit (it ran in the interval), the rest of its time.
  EXPECT_EQ(region(d, "snap_outer").visits, 1);
  EXPECT_EQ(region(d, "snap_outer").time, 500);
  // Regions entered in the interval: the two visits of snap_inner (snap_outer was entered before).
  EXPECT_EQ(d.entered, 2u);
  // The interval's meta: its bounds in s since the process started.
  ASSERT_TRUE(d.meta["snapshot"]["interval"].is_array());
  EXPECT_DOUBLE_EQ(d.meta["snapshot"]["interval"][0].get<double>(), a.time_s());
  EXPECT_DOUBLE_EQ(d.meta["snapshot"]["interval"][1].get<double>(), b.time_s());

  // The copies did not change the recorder's own trees: the next snapshot still counts it all.
  g_fake_now.store(50001300);
  drg::SnapshotPart c = take("c.sdrg");
  EXPECT_EQ(region(c, "snap_outer").visits, 1);
  EXPECT_EQ(region(c, "snap_outer").time, 1000);
  EXPECT_EQ(region(drg::subtract(c, b), "snap_inner").visits, 0);
}

// Without membarrier(2) the recording state is 5 (recorder.hpp, tool_enter): every event takes
// the slow path, which fences and records; a snapshot's claims go from 5 to 3 and back to 5.
TEST_F(Snapshots, WithoutMembarrierEventsFenceAndRecord) {
  bool asymmetric = g_asymmetric_fence.load();
  g_asymmetric_fence.store(false);
  g_state.store(recording_state());
  ASSERT_EQ(g_state.load(), kStateRecordingFenced);
  visit("snap_fenced", 60000000, 60000250);
  g_fake_now.store(60000300);
  drg::SnapshotPart a = take("fenced.sdrg");
  EXPECT_EQ(g_state.load(), kStateRecordingFenced);
  g_asymmetric_fence.store(asymmetric);
  g_state.store(recording_state());
  EXPECT_EQ(region(a, "snap_fenced").visits, 1);
  EXPECT_EQ(region(a, "snap_fenced").time, 250);
}

TEST_F(Snapshots, SubtractRefusesWhatDoesNotContinue) {
  visit("snap_other", 60000000, 60000100);
  drg::SnapshotPart a = take("a.sdrg");
  visit("snap_other", 60000200, 60000300);
  drg::SnapshotPart b = take("b.sdrg");
  EXPECT_NO_THROW(drg::subtract(b, a));
  // Backwards: the later one lost visits.
  EXPECT_THROW(drg::subtract(a, b), drg::LoadError);
  // Another process.
  drg::SnapshotPart other = b;
  other.meta["pid"] = b.meta.value("pid", 0) + 1;
  EXPECT_THROW(drg::subtract(other, a), drg::LoadError);
  // Another rank.
  other = b;
  other.rank = b.rank + 1;
  EXPECT_THROW(drg::subtract(other, a), drg::LoadError);
}

// A snapshot closes an open region at the moment of its copy. A thread that had taken the time of
// its next event before the copy (and waited for the copy to let it in) ends the region at that
// earlier time: the later snapshot holds less time there, by less than the time between the two
// snapshots. That is 0 in the interval, not a run that does not continue; more still is.
TEST_F(Snapshots, AnEventTimedBeforeTheCopyIsNoDecrease) {
  begin("snap_late", 70000000);
  g_fake_now.store(70500000);
  drg::SnapshotPart a = take("a.sdrg");
  EXPECT_EQ(region(a, "snap_late").time, 500000);
  end("snap_late", 70450000);  // timed 50 us before the copy, recorded after it
  g_fake_now.store(70600000);
  drg::SnapshotPart b = take("b.sdrg");
  EXPECT_EQ(region(b, "snap_late").time, 450000);
  drg::SnapshotPart d;
  ASSERT_NO_THROW(d = drg::subtract(b, a));
  EXPECT_EQ(region(d, "snap_late").time, 0);
  // 300 us less over an interval of 100 us: not the same run.
  auto [c, e] = not_continued("snap_later", 71000000);
  EXPECT_THROW(drg::subtract(e, c), drg::LoadError);
}

// Settled to the later snapshot, the earlier one's overstatement is gone: the intervals (from the
// start to the first, then to the second) add up to the second exactly, not to 500 us + 0 for a
// region that ran 450 us.
TEST_F(Snapshots, SettledToTheLaterTheIntervalsAddUp) {
  begin("snap_capped", 80000000);
  g_fake_now.store(80500000);
  drg::SnapshotPart a = take("a.sdrg");
  end("snap_capped", 80450000);  // timed 50 us before the copy, recorded after it
  g_fake_now.store(80600000);
  drg::SnapshotPart b = take("b.sdrg");
  const drg::SnapshotPart as_taken = a;
  // Another process's later snapshot: left as it is (subtract() refuses it with the reason).
  drg::SnapshotPart other = b;
  other.meta["pid"] = b.meta.value("pid", 0) + 1;
  EXPECT_FALSE(drg::settle_to_later(a, other));
  EXPECT_EQ(a.bytes, as_taken.bytes);
  ASSERT_TRUE(drg::settle_to_later(a, b));
  EXPECT_EQ(region(a, "snap_capped").time, 450000);
  EXPECT_EQ(region(a, "snap_capped").visits, 1);
  drg::SnapshotPart d = drg::subtract(b, a);
  EXPECT_EQ(region(d, "snap_capped").time, 0);
  EXPECT_EQ(region(a, "snap_capped").time + region(d, "snap_capped").time,
            region(b, "snap_capped").time);
  // What only grew is unchanged: the thread's root holds its time up to each copy.
  auto root = [](const drg::SnapshotPart& p) {
    drg::Experiment e = drg::load_snapshot({p}, "snap");
    const std::vector<double>& v = e.threads.at(0).values;
    return std::vector<double>(v.begin(), v.begin() + long(e.metric_count()));
  };
  EXPECT_EQ(root(a), root(as_taken));
  EXPECT_FALSE(drg::settle_to_later(a, b));  // nothing left to lower

  // Less by more than the time between the two: not the same run, left for subtract() to refuse.
  auto [c, e] = not_continued("snap_gone", 81000000);
  EXPECT_FALSE(drg::settle_to_later(c, e));
  EXPECT_THROW(drg::subtract(e, c), drg::LoadError);
}

// Each snapshot converts ticks to ns with the clock ratio measured up to it. Settled, the earlier
// one's times are in the later one's ratio (as subtract() would convert them), so the intervals
// add up to the later one, to the ns.
TEST_F(Snapshots, SettledToTheLaterClockRatio) {
  visit("snap_ratio", 90000000, 90700000);
  g_fake_now.store(91000000);
  drg::SnapshotPart a = take("a.sdrg");
  visit("snap_ratio", 91000000, 91300000);
  g_fake_now.store(92000000);
  drg::SnapshotPart b = take("b.sdrg");
  const double ratio = a.meta["clock"]["ns_per_tick"].get<double>() * (1 + 3e-6);
  b.meta["clock"]["ns_per_tick"] = ratio;  // measured a little differently by then
  const drg::SnapshotPart as_taken = a;
  ASSERT_TRUE(drg::settle_to_later(a, b));
  EXPECT_DOUBLE_EQ(a.meta["clock"]["ns_per_tick"].get<double>(), ratio);
  EXPECT_EQ(region(a, "snap_ratio").time, std::llround(700000 * (1 + 3e-6)));
  EXPECT_EQ(region(a, "snap_ratio").visits, 1);  // counts are not times
  drg::SnapshotPart d = drg::subtract(b, a), d_taken = drg::subtract(b, as_taken);
  EXPECT_EQ(region(a, "snap_ratio").time + region(d, "snap_ratio").time,
            region(b, "snap_ratio").time);
  EXPECT_EQ(region(d, "snap_ratio").time, region(d_taken, "snap_ratio").time);
  EXPECT_FALSE(drg::settle_to_later(a, b));  // settled already
}

TEST_F(Snapshots, AnIncompleteFileIsNotRead) {
  drg::SnapshotPart a = take("a.sdrg");
  ASSERT_GT(a.bytes.size(), 64u);
  std::string path = dir_ + "/half.sdrg";
  std::ofstream(path, std::ios::binary).write(a.bytes.data(), std::streamsize(a.bytes.size() / 2));
  EXPECT_THROW(drg::read_snapshot(path), drg::LoadError);
  EXPECT_THROW(drg::read_snapshot(dir_ + "/missing.sdrg"), drg::LoadError);
}

}  // namespace
}  // namespace scalea::collect
