// Parallel regions: structure, fork/join, the imbalanced loop's barrier waits, a serial section
// between parallel regions, and the report command on a real experiment.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace scalea::test {
namespace {

constexpr int kP = 4, kReps = 2;
constexpr double kX = 0.020;  // s

class Imbalance : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setup_.run([] {
      run_ = new AppRun(run_with_tool({app("imbalance"), "20", std::to_string(kReps)},
                                   {{"OMP_NUM_THREADS", std::to_string(kP)}}));
    });
  }
  void SetUp() override { setup_.check(); }
  static inline SuiteSetup setup_;
  static void TearDownTestSuite() { delete run_; }
  static AppRun* run_;
};
AppRun* Imbalance::run_ = nullptr;

TEST_F(Imbalance, Structure) {
  Measured m(*run_);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.exp().threads.size(), size_t(kP));
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("imbalance.c", "PARALLEL"));
  ASSERT_NE(par, kNone);
  // One implicit task per thread and repetition; the master counts the team sizes.
  EXPECT_EQ(m.sum(par, "visits"), kP * kReps);
  EXPECT_EQ(m.sum(par, "team_size"), kP * kReps);
  EXPECT_EQ(m.thread_count(par), size_t(kP));
  uint32_t loop = m.child(par, RegionKind::Loop, at("imbalance.c", "LOOP"));
  EXPECT_EQ(m.sum(loop, "visits"), kP * kReps);
  // OMPT gives every thread the loop's whole iteration count (p iterations per visit).
  for (double it : m.per_thread(loop, "iterations")) EXPECT_EQ(it, kP * kReps);
  uint32_t bar = m.child(par, RegionKind::BarrierImplicit, at("imbalance.c", "LOOP"));
  EXPECT_EQ(m.sum(bar, "visits"), kP * kReps);
  uint32_t join = m.child(par, RegionKind::BarrierImplicit, "barrier (implicit, join)");
  EXPECT_EQ(m.sum(join, "visits"), kP * kReps);
  EXPECT_EQ(m.region(join).location(), at("imbalance.c", "PARALLEL"));
  EXPECT_EQ(m.exp().meta["anomalies"]["unmatched_end"], 0);
  EXPECT_EQ(m.exp().meta["anomalies"]["unclosed"], 0);
}

TEST_F(Imbalance, LoopTimesAndBarrierWaits) {
  Measured m(*run_);
  ASSERT_TRUE(m.ok());
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("imbalance.c", "PARALLEL"));
  uint32_t loop = m.child(par, RegionKind::Loop, at("imbalance.c", "LOOP"));
  uint32_t bar = m.child(par, RegionKind::BarrierImplicit, at("imbalance.c", "LOOP"));
  uint32_t join = m.child(par, RegionKind::BarrierImplicit, "barrier (implicit, join)");
  // Planted: thread i sleeps (i+1)X and waits (p-1-i)X per repetition; the program reports what
  // its sleeps really lasted (truth body.i, wait.i), which the tool must recover.
  std::vector<double> loop_truth, wait_truth;
  double wait_total = 0;
  for (int i = 0; i < kP; ++i) {
    loop_truth.push_back(truth(*run_, "body." + std::to_string(i), kReps * (i + 1) * kX));
    wait_truth.push_back(truth(*run_, "wait." + std::to_string(i)));
    EXPECT_NEAR(wait_truth.back(), kReps * (kP - 1 - i) * kX, 0.5 * kX) << "planted wait, thread " << i;
    wait_total += wait_truth.back();
  }
  expect_times_near_sorted(m.per_thread(loop, "time"), loop_truth, "loop time per thread");
  expect_times_near_sorted(m.per_thread(bar, "wait"), wait_truth, "loop barrier wait per thread");
  EXPECT_TIME_NEAR(m.sum(bar, "wait"), wait_total);
  // Nothing is planted at the join: all threads arrive together from the loop's barrier (only
  // scheduling delays on a loaded machine with more threads than cores).
  for (double w : m.per_thread(join, "wait")) EXPECT_LT(w, 0.5 * kX * kReps) << "join barrier wait";
  // Each region lasts as long as its slowest thread (p*X planted).
  double longest = *std::max_element(loop_truth.begin(), loop_truth.end());
  EXPECT_TIME_NEAR(m.max(par, "time"), longest);
  EXPECT_TIME_NEAR(m.max(par, "time_max"), longest / kReps);
}

TEST_F(Imbalance, ForkAndJoin) {
  Measured m(*run_);
  ASSERT_TRUE(m.ok());
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("imbalance.c", "PARALLEL"));
  // Fork (parallel begin -> implicit task begin) is recorded on every thread; join on the master.
  std::vector<double> fork = m.per_thread(par, "fork");
  ASSERT_EQ(fork.size(), size_t(kP));
  for (double f : fork) {
    EXPECT_GT(f, 0.0);
    EXPECT_LT(f, 0.05);
  }
  EXPECT_GT(m.sum(par, "join"), 0.0);
  EXPECT_LT(m.sum(par, "join"), 0.01);
}

TEST_F(Imbalance, ReportCommand) {
  AppRun text = run_scalea_cli({"report", run_->experiment});
  ASSERT_EQ(text.status, 0) << text.describe();
  EXPECT_NE(text.out.find("parallel @" + at("imbalance.c", "PARALLEL")), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("@" + at("imbalance.c", "LOOP")), std::string::npos) << text.out;
  AppRun json = run_scalea_cli({"report", run_->experiment, "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.describe();
  nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;
  ASSERT_TRUE(doc.contains("regions"));
  bool loop = false;
  for (const auto& r : doc["regions"])
    if (r.value("kind", "") == "loop") {
      loop = true;
      EXPECT_EQ(r.value("visits", 0.0), kP * kReps);
    }
  EXPECT_TRUE(loop) << json.out;
}

TEST(Serial, UserRegionBetweenParallelRegions) {
  constexpr double kS = 0.060, kA = 0.020;
  AppRun r = run_with_tool({app("serial"), "60", "20"}, {{"OMP_NUM_THREADS", std::to_string(kP)}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  std::vector<uint32_t> pars = m.children(m.root(), RegionKind::Parallel);
  ASSERT_EQ(pars.size(), 2u) << m.dump();
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(m.sum(pars[k], "visits"), kP);
    // The region's longest implicit task lasts at least the longest sleep and at most the wall
    // time around the construct (which, for the first, includes the runtime's start-up).
    std::string n = std::to_string(k + 1);
    EXPECT_GE(m.max(pars[k], "time"), truth(r, "sleep" + n, kA) - tolerance(kA));
    EXPECT_LE(m.max(pars[k], "time"), truth(r, "par" + n, kA) + tolerance(kA));
  }
  const double s_truth = truth(r, "serial", kS);
  uint32_t serial = m.child(m.root(), RegionKind::User, "serial");
  ASSERT_NE(serial, kNone);
  EXPECT_EQ(m.region(serial).location(), "serial.c:" + std::to_string(line_of("serial.c", "SERIAL")));
  EXPECT_EQ(m.sum(serial, "visits"), 1);
  EXPECT_EQ(m.thread_count(serial), 1u);
  EXPECT_TIME_NEAR(m.sum(serial, "time"), s_truth);
  EXPECT_EQ(m.find_all(RegionKind::User, "serial").size(), 1u) << "the serial region is recorded once";
  // The program's wall time covers both regions and the serial section.
  EXPECT_GE(m.max(m.root(), "time"), kS + 2 * kA - tolerance(kS + 2 * kA));
}

}  // namespace
}  // namespace scalea::test
