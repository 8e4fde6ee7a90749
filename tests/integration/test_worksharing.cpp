// Worksharing and the other constructs: single (the planted barrier wait of its non-executors),
// sections, masked, loops (ordered, reduction, cancel), flush, explicit barrier.
#include "harness.hpp"

namespace scalea::test {
namespace {

TEST(Single, ExecutorAndBarrierWait) {
  constexpr int kP = 4, kR = 2;
  constexpr double kS = 0.050;
  AppRun r = run_with_tool({app("single"), "50", std::to_string(kR)},
                        {{"OMP_NUM_THREADS", std::to_string(kP)}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  uint32_t par = m.child(m.root(), RegionKind::Parallel, "single.c");
  uint32_t single = m.child(par, RegionKind::Single, at("single.c", "SINGLE"));
  EXPECT_EQ(m.sum(single, "visits"), kP * kR);
  EXPECT_EQ(m.sum(single, "executed"), kR);
  EXPECT_TIME_NEAR(m.sum(single, "time"), truth(r, "body", kR * kS));  // only executors spend time
  uint32_t bar = m.child(par, RegionKind::BarrierImplicit, at("single.c", "SINGLE"));
  EXPECT_EQ(m.sum(bar, "visits"), kP * kR);
  // The p-1 others wait S at each single's barrier; the executor ~0.
  EXPECT_TIME_NEAR(m.sum(bar, "wait"), truth(r, "wait", (kP - 1) * kR * kS * 0.9));
  EXPECT_TIME_NEAR(m.max(bar, "time_max"), truth(r, "body") / kR);
}

class Constructs : public ::testing::Test {
 protected:
  static constexpr int kP = 4;
  static void SetUpTestSuite() {
    setup_.run([] {
      run_ = new AppRun(run_with_tool({app("constructs")}, {{"OMP_NUM_THREADS", std::to_string(kP)},
                                                        {"OMP_CANCELLATION", "true"}}));
      m_ = new Measured(*run_);
    });
  }
  void SetUp() override { setup_.check(); }
  static inline SuiteSetup setup_;
  static void TearDownTestSuite() {
    delete m_;
    delete run_;
  }
  // The one region of this kind at the marker, anywhere in the tree.
  static uint32_t at_marker(RegionKind k, const char* marker) {
    return m_->find(k, at("constructs.c", marker));
  }
  static AppRun* run_;
  static Measured* m_;
};
AppRun* Constructs::run_ = nullptr;
Measured* Constructs::m_ = nullptr;

TEST_F(Constructs, ProgramRuns) {
  ASSERT_EQ(run_->status, 0) << run_->describe();
  EXPECT_NE(run_->out.find("counter=20 sum=499500 ordered=4"), std::string::npos) << run_->out;
  EXPECT_NE(run_->out.find("cancellation=1"), std::string::npos) << run_->out;
}

TEST_F(Constructs, Worksharing) {
  const Measured& m = *m_;
  ASSERT_TRUE(m.ok());
  uint32_t sections = at_marker(RegionKind::Sections, "SECTIONS");
  EXPECT_EQ(m.sum(sections, "visits"), kP);
  uint32_t single = at_marker(RegionKind::Single, "SINGLE");
  EXPECT_EQ(m.sum(single, "visits"), kP);
  EXPECT_EQ(m.sum(single, "executed"), 1);
  uint32_t masked = at_marker(RegionKind::Masked, "MASKED");
  EXPECT_EQ(m.sum(masked, "visits"), 1);
  EXPECT_EQ(m.thread_count(masked), 1u);
  uint32_t ordered_loop = at_marker(RegionKind::Loop, "ORDERED_LOOP");
  EXPECT_EQ(m.sum(ordered_loop, "visits"), kP);
  for (double it : m.per_thread(ordered_loop, "iterations")) EXPECT_EQ(it, kP);
  uint32_t ordered = m.child(ordered_loop, RegionKind::Ordered, at("constructs.c", "ORDERED"));
  EXPECT_EQ(m.sum(ordered, "visits"), kP);
}

TEST_F(Constructs, TaskingConstructs) {
  const Measured& m = *m_;
  ASSERT_TRUE(m.ok());
  uint32_t single = at_marker(RegionKind::Single, "SINGLE_TASKS");
  // taskloop: 4 tasks of one iteration each, below the taskloop.
  std::vector<uint32_t> taskloops = m.find_all(RegionKind::Taskloop);
  ASSERT_EQ(taskloops.size(), 1u) << m.dump();
  EXPECT_EQ(m.sum(taskloops[0], "visits"), 1);
  uint32_t tl_task = m.child(taskloops[0], RegionKind::Task);
  EXPECT_EQ(m.sum(tl_task, "visits"), 4);
  uint32_t group = m.child(single, RegionKind::Taskgroup, at("constructs.c", "TASKGROUP"));
  uint32_t in_group = m.child(group, RegionKind::Task, at("constructs.c", "TASK_IN_GROUP"));
  EXPECT_EQ(m.sum(in_group, "visits"), 1);
  uint32_t task = m.child(single, RegionKind::Task, at("constructs.c", "TASK"));
  EXPECT_EQ(m.sum(task, "visits"), 1);
  uint32_t tw = m.child(single, RegionKind::Taskwait, at("constructs.c", "TASKWAIT"));
  EXPECT_EQ(m.sum(tw, "visits"), 1);
  // Creation counts sit on the creating context: the plain task on the single, the grouped one
  // on the taskgroup, the taskloop's on the taskloop.
  EXPECT_EQ(m.sum(single, "tasks_created"), 1);
  EXPECT_EQ(m.sum(group, "tasks_created"), 1);
  EXPECT_EQ(m.sum(taskloops[0], "tasks_created"), 4);
}

TEST_F(Constructs, Synchronization) {
  const Measured& m = *m_;
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.sum(at_marker(RegionKind::Flush, "FLUSH"), "visits"), kP);
  EXPECT_EQ(m.sum(at_marker(RegionKind::Critical, "CRITICAL"), "visits"), kP);
  // (Summed over paths: where it sits is NothingLeftOpen's business.)
  double barrier_visits = 0;
  for (uint32_t n : m.find_all(RegionKind::BarrierExplicit, at("constructs.c", "BARRIER")))
    barrier_visits += m.sum(n, "visits");
  EXPECT_EQ(barrier_visits, kP);
  // Nest lock: each thread acquires it twice, nested; the outer acquisition is the region.
  std::vector<uint32_t> nest = m.find_all(RegionKind::NestLock, at("constructs.c", "NEST_LOCK"));
  ASSERT_FALSE(nest.empty()) << m.dump();
  double nest_visits = 0;
  for (uint32_t n : nest) nest_visits += m.sum(n, "visits");
  EXPECT_EQ(nest_visits, kP);
  // Test lock: one region visit per successful test (the program prints how many succeeded).
  size_t pos = run_->out.find("tested=");
  ASSERT_NE(pos, std::string::npos);
  int tested = std::atoi(run_->out.c_str() + pos + 7);
  double lock_visits = 0;
  for (uint32_t n : m.find_all(RegionKind::Lock, at("constructs.c", "TEST_LOCK")))
    lock_visits += m.sum(n, "visits");
  EXPECT_EQ(lock_visits, tested) << m.dump();
  // Cancel: thread 0 cancels the loop.
  std::vector<uint32_t> cancels = m.find_all(RegionKind::Cancel, at("constructs.c", "CANCEL"));
  ASSERT_EQ(cancels.size(), 1u) << m.dump();
  EXPECT_GE(m.sum(cancels[0], "visits"), 1);
  EXPECT_EQ(m.region(m.parent(cancels[0])).kind, RegionKind::Loop);
  // Reduction: libomp reports the reduction's combining barrier as a runtime barrier at the loop
  // (and a reduction region where it combines through a tree, see ManyThreads).
  uint32_t red = at_marker(RegionKind::Loop, "REDUCTION");
  ASSERT_NE(red, kNone);
  bool seen = !m.find_all(RegionKind::Reduction).empty() ||
              !m.children(m.parent(red), RegionKind::BarrierImplementation,
                           at("constructs.c", "REDUCTION")).empty();
  EXPECT_TRUE(seen) << m.dump();
}

// Every construct of the region is its own child of the parallel region: nothing is left open
// and swallows what follows (e.g. a nested nest-lock acquisition).
TEST_F(Constructs, NothingLeftOpen) {
  const Measured& m = *m_;
  ASSERT_TRUE(m.ok());
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("constructs.c", "PARALLEL"));
  ASSERT_NE(par, kNone);
  for (auto [kind, marker] : std::vector<std::pair<RegionKind, const char*>>{
           {RegionKind::Critical, "CRITICAL"}, {RegionKind::NestLock, "NEST_LOCK"},
           {RegionKind::BarrierExplicit, "BARRIER"}, {RegionKind::Loop, "CANCEL_LOOP"}}) {
    uint32_t n = m.child(par, kind, at("constructs.c", marker));
    EXPECT_EQ(m.sum(n, "visits"), kP) << marker;
  }
  uint32_t join = m.child(par, RegionKind::BarrierImplicit, "barrier (implicit, join)");
  EXPECT_EQ(m.sum(join, "visits"), kP);
  EXPECT_EQ(m.exp().meta["anomalies"]["unclosed"], 0);
  EXPECT_EQ(m.exp().meta["anomalies"]["unmatched_end"], 0);
}

}  // namespace
}  // namespace scalea::test
