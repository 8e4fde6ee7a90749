// Light mode (SCALEA_OPENMP=light): the constructs inside a parallel region are not recorded,
// the parallel regions, barriers and their waits still are, and the report says what it cannot
// see.
#include "harness.hpp"

namespace scalea::test {
namespace {

const Env kLight = {{"SCALEA_OPENMP", "light"}};

Env with(Env env, const Env& more) {
  env.insert(env.end(), more.begin(), more.end());
  return env;
}

TEST(Light, SingleIsNotRecordedItsBarrierWaitIs) {
  constexpr int kP = 4, kR = 2;
  constexpr double kS = 0.050;
  AppRun r = run_with_tool({app("single"), "50", std::to_string(kR)},
                           with(kLight, {{"OMP_NUM_THREADS", std::to_string(kP)}}));
  Measured m(r);
  ASSERT_TRUE(m.ok());
  const auto& omp = m.exp().meta["openmp"];
  EXPECT_EQ(omp["events"], "light") << omp.dump();
  EXPECT_EQ(omp["callbacks"]["work"], "off") << omp.dump();
  EXPECT_EQ(omp["callbacks"]["mutex_acquire"], "off") << omp.dump();
  EXPECT_NE(omp["callbacks"]["sync_region_wait"], "off") << omp.dump();
  EXPECT_TRUE(m.find_all(RegionKind::Single).empty()) << m.dump();
  uint32_t par = m.child(m.root(), RegionKind::Parallel, "single.c");
  ASSERT_NE(par, kNone) << m.dump();
  // The single's barrier keeps its place and source line: the p-1 others wait S there.
  uint32_t bar = m.child(par, RegionKind::BarrierImplicit, at("single.c", "SINGLE"));
  ASSERT_NE(bar, kNone) << m.dump();
  EXPECT_EQ(m.sum(bar, "visits"), kP * kR);
  EXPECT_TIME_NEAR(m.sum(bar, "wait"), truth(r, "wait", (kP - 1) * kR * kS * 0.9));
  // The executor's work is the parallel region's own time now.
  EXPECT_GE(m.max(par, "time_max"), truth(r, "body", kR * kS));
}

TEST(Light, LocksAreNotRecordedBarriersAre) {
  constexpr int kP = 4, kK = 3;
  AppRun r = run_with_tool({app("locks"), "10", std::to_string(kK)},
                           with(kLight, {{"OMP_NUM_THREADS", std::to_string(kP)}}));
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m.find_all(RegionKind::Lock).empty()) << m.dump();
  EXPECT_TRUE(m.find_all(RegionKind::Critical).empty()) << m.dump();
  uint32_t par = m.child(m.root(), RegionKind::Parallel, "locks.c");
  ASSERT_NE(par, kNone) << m.dump();
  // The explicit barrier starting each round: 2K rounds on every thread.
  std::vector<uint32_t> bars = m.children(par, RegionKind::BarrierExplicit);
  ASSERT_FALSE(bars.empty()) << m.dump();
  double visits = 0;
  for (uint32_t b : bars) visits += m.sum(b, "visits");
  EXPECT_EQ(visits, 2 * kK * kP);
}

TEST(Light, ReportSaysWhatItCannotSee) {
  AppRun light = run_scalea_cli({"run", "-q", "--light", "-o", "{exp}", "--", app("single"), "5", "1"},
                                {{"OMP_NUM_THREADS", "2"}});
  ASSERT_EQ(light.status, 0) << light.describe();
  AppRun rep = run_scalea_cli({"report", light.experiment});
  ASSERT_EQ(rep.status, 0) << rep.describe();
  EXPECT_NE(rep.out.find("events      light mode (SCALEA_OPENMP=light): loops, single"),
            std::string::npos) << rep.out;
  // A full recording says nothing of the kind.
  AppRun full = run_scalea_cli({"run", "-q", "-o", "{exp}", "--", app("single"), "5", "1"},
                               {{"OMP_NUM_THREADS", "2"}});
  ASSERT_EQ(full.status, 0) << full.describe();
  AppRun rep_full = run_scalea_cli({"report", full.experiment});
  ASSERT_EQ(rep_full.status, 0) << rep_full.describe();
  EXPECT_EQ(rep_full.out.find("light mode"), std::string::npos) << rep_full.out;
}

}  // namespace
}  // namespace scalea::test
