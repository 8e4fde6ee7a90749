// What the counters say an unidentified overhead was (report/src/findings/counter_causes.cpp), on the
// figures of real codes at 2 threads against 1 (docs/results-log.md).
#include "findings/counter_causes.hpp"

#include <gtest/gtest.h>

namespace scalea::cli {
namespace {

UnidentifiedEvidence evidence(double seconds, double faults, double cpu, double reads) {
  UnidentifiedEvidence e;
  e.seconds = seconds;
  e.p = 2;
  e.reference = true;
  e.extra_faults = faults;
  e.extra_cpu = cpu;
  e.extra_reads = reads;
  return e;
}

TEST(UnidentifiedCause, PageFaultsOfArraysAllocatedAtEveryCall) {
  // LULESH lulesh.cc:782: 0.175 s, 126,250 faults more than at 1 thread (force arrays allocated
  // at every call with more than one thread): at least 63 ms at 1 us each, all at 2.8 us.
  std::string h = unidentified_cause(evidence(0.175, 126250, 0, 0));
  EXPECT_EQ(h.rfind("page faults take at least 0.063 s of it (126,250 more", 0), 0u) << h;
  EXPECT_NE(h.find("all of it if each took 2.8 us"), std::string::npos) << h;
  EXPECT_NE(h.find("allocate it once"), std::string::npos) << h;
  // Faults far too few to matter (5 ms of 175 at 1 us each), or that would each have to cost
  // 50 us to be all of it: not named.
  EXPECT_EQ(unidentified_cause(evidence(0.175, 10000, 0, 0)), "");
  EXPECT_EQ(unidentified_cause(evidence(1.0, 40000, 0, 0)), "");
}

TEST(UnidentifiedCause, CountsAreGroupedByThousands) {
  EXPECT_EQ(grouped(0), "0");
  EXPECT_EQ(grouped(999), "999");
  EXPECT_EQ(grouped(126250), "126,250");
  EXPECT_EQ(grouped(1234567), "1,234,567");
  EXPECT_EQ(grouped(-1234), "-1,234");
}

TEST(UnidentifiedCause, TheToolsOwnCounterReadsComeFirst) {
  // NPB SP.W sp.c:1126: 927,112 visits at 2 threads against 463,556 at 1, two reads of 838 ns
  // per visit: 0.78 PE-seconds more, 0.39 s per PE of an overhead of 0.346 s.
  std::string h = unidentified_cause(evidence(0.346, 0, 0.674, 0.777));
  EXPECT_EQ(h.rfind("the tool's own counter reads take up to 0.346 s of it", 0), 0u) << h;
  EXPECT_NE(h.find("SCALEA_COUNTERS=none"), std::string::npos) << h;
  // Without a reference there is no "more visits than the reference's" to speak of.
  UnidentifiedEvidence alone = evidence(0.346, 0, 0, 0.777);
  alone.reference = false;
  EXPECT_EQ(unidentified_cause(alone), "");
}

TEST(UnidentifiedCause, CpuTimeThatGrewIsWorkThatRanLonger) {
  // NPB LU.W lu.c:3170: 0.127 s; the loop's CPU time 0.289 s at 2 threads against 0.035 s.
  std::string h = unidentified_cause(evidence(0.127, 0, 0.254, 0));
  EXPECT_EQ(h.rfind("the threads' CPU time in it grew by 0.127 s per PE", 0), 0u) << h;
  EXPECT_NE(h.find("not waiting for them"), std::string::npos) << h;
  // CPU time that grew by less than half of it: waiting may be the rest; nothing is named.
  EXPECT_EQ(unidentified_cause(evidence(0.127, 0, 0.100, 0)), "");
}

}  // namespace
}  // namespace scalea::cli
