// Locks and critical sections: the planted acquire waits of lock-step contention.
#include "harness.hpp"

namespace scalea::test {
namespace {

constexpr int kP = 4, kK = 3;
constexpr double kH = 0.010;

class Locks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setup_.run([] {
      run_ = new AppRun(run_with_tool({app("locks"), "10", std::to_string(kK)},
                                   {{"OMP_NUM_THREADS", std::to_string(kP)}}));
      m_ = new Measured(*run_);
    });
  }
  void SetUp() override { setup_.check(); }
  static inline SuiteSetup setup_;
  static void TearDownTestSuite() {
    delete m_;
    delete run_;
  }
  // In each round the j-th thread to get the lock waits j*H: K*H*p(p-1)/2 in all.
  // The program reports the waits and holds it measured (truth <what>_wait, <what>_hold).
  static void expect_contention(uint32_t n, const std::string& what) {
    const Measured& m = *m_;
    EXPECT_EQ(m.sum(n, "visits"), kP * kK);
    EXPECT_EQ(m.thread_count(n), size_t(kP));
    double hold = truth(*run_, what + "_hold", kK * kP * kH);
    double wait = truth(*run_, what + "_wait", 0.9 * kK * kH * kP * (kP - 1) / 2);
    EXPECT_TIME_NEAR(m.sum(n, "wait"), wait);
    EXPECT_TIME_NEAR(m.sum(n, "time"), wait + hold);
    EXPECT_TIME_NEAR(m.sum(n, "time") - m.sum(n, "wait"), hold);
  }
  static AppRun* run_;
  static Measured* m_;
};
AppRun* Locks::run_ = nullptr;
Measured* Locks::m_ = nullptr;

TEST_F(Locks, LockWait) {
  ASSERT_TRUE(m_->ok());
  uint32_t par = m_->child(m_->root(), RegionKind::Parallel, "locks.c");
  uint32_t lock = m_->child(par, RegionKind::Lock, at("locks.c", "LOCK"));
  ASSERT_NE(lock, kNone);
  expect_contention(lock, "lock");
}

TEST_F(Locks, CriticalWait) {
  ASSERT_TRUE(m_->ok());
  uint32_t par = m_->child(m_->root(), RegionKind::Parallel, "locks.c");
  uint32_t crit = m_->child(par, RegionKind::Critical, at("locks.c", "CRITICAL"));
  ASSERT_NE(crit, kNone);
  expect_contention(crit, "critical");
}

TEST_F(Locks, RoundBarriers) {
  ASSERT_TRUE(m_->ok());
  uint32_t par = m_->child(m_->root(), RegionKind::Parallel, "locks.c");
  std::vector<uint32_t> bars = m_->children(par, RegionKind::BarrierExplicit);
  ASSERT_EQ(bars.size(), 2u) << m_->dump();
  for (uint32_t b : bars) EXPECT_EQ(m_->sum(b, "visits"), kP * kK);
  EXPECT_EQ(m_->exp().meta["anomalies"]["unclosed"], 0);
}

}  // namespace
}  // namespace scalea::test
