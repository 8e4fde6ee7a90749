// 32 threads on 2 cores: exact visit counts of barriers, critical sections and loop iterations.
#include "harness.hpp"

namespace scalea::test {
namespace {

TEST(ManyThreads, ThirtyTwoThreads) {
  constexpr int kP = 32, kK = 5;
  constexpr double kH = 0.002;
  AppRun r = run_with_tool({app("many_threads"), std::to_string(kK), "2"},
                        {{"OMP_NUM_THREADS", std::to_string(kP)}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_NE(r.out.find("p=32 critical entries=160 iterations=128"), std::string::npos) << r.out;
  EXPECT_EQ(m.exp().threads.size(), size_t(kP));
  EXPECT_EQ(m.exp().meta["max_team_size"], kP);
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("many_threads.c", "PARALLEL"));
  ASSERT_NE(par, kNone);
  EXPECT_EQ(m.sum(par, "visits"), kP);
  EXPECT_EQ(m.sum(par, "team_size"), kP);
  EXPECT_EQ(m.thread_count(par), size_t(kP));

  uint32_t bar = m.child(par, RegionKind::BarrierExplicit, at("many_threads.c", "BARRIER"));
  EXPECT_EQ(m.sum(bar, "visits"), kP * kK);
  for (double v : m.per_thread(bar, "visits")) EXPECT_EQ(v, kK);
  EXPECT_EQ(m.thread_count(bar), size_t(kP));

  uint32_t crit = m.child(par, RegionKind::Critical, at("many_threads.c", "CRITICAL"));
  EXPECT_EQ(m.sum(crit, "visits"), kP * kK);
  for (double v : m.per_thread(crit, "visits")) EXPECT_EQ(v, kK);
  // Held p*K*H in all: the region's time less its wait is the holding time.
  EXPECT_TIME_NEAR(m.sum(crit, "time") - m.sum(crit, "wait"), truth(r, "hold", kP * kK * kH));

  uint32_t loop = m.child(par, RegionKind::Loop, at("many_threads.c", "DYNAMIC"));
  EXPECT_EQ(m.sum(loop, "visits"), kP);
  // OMPT gives every thread the loop's whole iteration count.
  for (double it : m.per_thread(loop, "iterations")) EXPECT_EQ(it, 4 * kP);
  // Chunk dispatch where the runtime grants it (libomp 19): one chunk per iteration (chunk 1).
  std::string dispatch = m.exp().meta["openmp"]["callbacks"].value("dispatch", "never");
  if (dispatch != "never") EXPECT_EQ(m.sum(loop, "dispatches"), 4 * kP);
  else EXPECT_EQ(m.sum(loop, "dispatches"), 0);

  uint32_t join = m.child(par, RegionKind::BarrierImplicit, "barrier (implicit, join)");
  EXPECT_EQ(m.sum(join, "visits"), kP);
  const auto& an = m.exp().meta["anomalies"];
  EXPECT_EQ(an["unmatched_end"], 0);
  EXPECT_EQ(an["unclosed"], 0);
  EXPECT_EQ(an["foreign_resume"], 0);
}

}  // namespace
}  // namespace scalea::test
