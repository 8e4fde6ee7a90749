// A gcc -fopenmp program (libgomp) measured through `scalea run`, which preloads LLVM's libomp.
#include "harness.hpp"

namespace scalea::test {
namespace {

TEST(Gcc, ImbalanceViaScaleaRun) {
  if (!SCALEA_HAVE_GCC_APP) GTEST_SKIP() << "gcc not found: imbalance_gcc not built";
  constexpr int kP = 4, kReps = 2;
  constexpr double kX = 0.020;
  AppRun r = run_scalea_cli({"run", "-q", "-o", "{exp}", "--", app("imbalance_gcc"), "20",
                          std::to_string(kReps)},
                         {{"OMP_NUM_THREADS", std::to_string(kP)}});
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_NE(r.out.find("imbalance: 4 threads"), std::string::npos) << r.out;
  Measured m(r);
  ASSERT_TRUE(m.ok());
  // Measured by LLVM's runtime in place of libgomp.
  const auto& omp = m.exp().meta["openmp"];
  ASSERT_TRUE(omp.is_object()) << m.exp().meta.dump();
  EXPECT_NE(omp.value("runtime", "").find("LLVM OMP"), std::string::npos) << omp.dump();
  EXPECT_NE(omp.value("runtime_path", "").find("libomp"), std::string::npos) << omp.dump();
  // The tool, preloaded ahead of libomp, started with the program.
  EXPECT_EQ(m.exp().meta.value("program_start", ""), "measured");
  EXPECT_EQ(m.exp().threads.size(), size_t(kP));
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("imbalance.c", "PARALLEL"));
  ASSERT_NE(par, kNone);
  EXPECT_EQ(m.sum(par, "visits"), kP * kReps);
  EXPECT_EQ(m.sum(par, "team_size"), kP * kReps);
  EXPECT_TIME_NEAR(m.max(par, "time"), truth(r, "body." + std::to_string(kP - 1), kReps * kP * kX));
  // gcc inlines the static loop (no runtime event) and merges its barrier with the join barrier:
  // thread i's planted wait (p-1-i)X per repetition is in the barriers below the region.
  std::vector<uint32_t> barriers = m.descendants(par, RegionKind::BarrierImplicit);
  ASSERT_FALSE(barriers.empty()) << m.dump();
  std::vector<double> waits;
  for (int i = 0; i < kP; ++i) {
    waits.push_back(truth(r, "wait." + std::to_string(i)));
    EXPECT_NEAR(waits.back(), kReps * (kP - 1 - i) * kX, 0.5 * kX) << "planted wait, thread " << i;
  }
  expect_times_near_sorted(m.per_thread_sum(barriers, "wait"), waits,
                           "barrier wait per thread (gcc build)");
  for (uint32_t b : barriers) EXPECT_EQ(m.parent(b), par) << m.dump();
}

}  // namespace
}  // namespace scalea::test
