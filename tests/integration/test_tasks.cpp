// Explicit tasks: attributed under their creation context whichever thread runs them; taskwait,
// taskgroup, and tasks run inside a barrier (whose wait excludes them).
#include "harness.hpp"

namespace scalea::test {
namespace {

constexpr int kP = 4, kN = 8;
constexpr double kT = 0.020;

class Tasks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setup_.run([] {
      run_ = new AppRun(run_with_tool({app("tasks"), std::to_string(kN), "20"},
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
  // N tasks whose bodies took truth tasks.<part> in all (N*T planted).
  static void expect_tasks(uint32_t task, const char* part) {
    EXPECT_EQ(m_->sum(task, "visits"), kN);
    double total = truth(*run_, std::string("tasks.") + part, kN * kT);
    EXPECT_TIME_NEAR(m_->sum(task, "time"), total);
    EXPECT_GE(m_->max(task, "time_max"), kT);
    EXPECT_LE(m_->max(task, "time_max"), total - (kN - 1) * kT + tolerance(kT));
  }
  static AppRun* run_;
  static Measured* m_;
};
AppRun* Tasks::run_ = nullptr;
Measured* Tasks::m_ = nullptr;

TEST_F(Tasks, Taskwait) {
  const Measured& m = *m_;
  ASSERT_TRUE(m.ok());
  EXPECT_NE(run_->out.find("24 tasks run"), std::string::npos) << run_->out;
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("tasks.c", "PAR_A"));
  uint32_t single = m.child(par, RegionKind::Single, at("tasks.c", "SINGLE_A"));
  EXPECT_EQ(m.sum(single, "tasks_created"), kN);
  uint32_t task = m.child(single, RegionKind::Task, at("tasks.c", "TASK_A"));
  ASSERT_NE(task, kNone);
  expect_tasks(task, "A");
  EXPECT_TRUE(m.find_all(RegionKind::Task, at("tasks.c", "TASK_A")).size() == 1)
      << "tasks appear only under their creation context\n" << m.dump();
  uint32_t tw = m.child(single, RegionKind::Taskwait, at("tasks.c", "TASKWAIT_A"));
  EXPECT_EQ(m.sum(tw, "visits"), 1);
  // The creator runs tasks while it waits: its wait excludes them, and its time covers them.
  EXPECT_LE(m.sum(tw, "wait"), m.sum(tw, "time") - m.sum(tw, "task_exec") + 0.002);
}

TEST_F(Tasks, Taskgroup) {
  const Measured& m = *m_;
  ASSERT_TRUE(m.ok());
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("tasks.c", "PAR_B"));
  uint32_t single = m.child(par, RegionKind::Single, at("tasks.c", "SINGLE_B"));
  uint32_t group = m.child(single, RegionKind::Taskgroup, at("tasks.c", "TASKGROUP_B"));
  EXPECT_EQ(m.sum(group, "visits"), 1);
  EXPECT_EQ(m.sum(group, "tasks_created"), kN);
  uint32_t task = m.child(group, RegionKind::Task, at("tasks.c", "TASK_B"));
  ASSERT_NE(task, kNone);
  expect_tasks(task, "B");
}

TEST_F(Tasks, TasksRunInsideBarrier) {
  const Measured& m = *m_;
  ASSERT_TRUE(m.ok());
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("tasks.c", "PAR_C"));
  uint32_t single = m.child(par, RegionKind::Single, at("tasks.c", "SINGLE_C"));
  uint32_t task = m.child(single, RegionKind::Task, at("tasks.c", "TASK_C"));
  ASSERT_NE(task, kNone);
  expect_tasks(task, "C");
  EXPECT_GE(m.thread_count(task), 2u) << "the team shares the tasks";
  uint32_t bar = m.child(par, RegionKind::BarrierExplicit, at("tasks.c", "BARRIER_C"));
  EXPECT_EQ(m.sum(bar, "visits"), kP);
  // All N tasks ran inside the barrier; its wait is what is left, ~0 (the team was busy).
  double total = truth(*run_, "tasks.C");
  EXPECT_TIME_NEAR(m.sum(bar, "task_exec"), total);
  EXPECT_NEAR(m.sum(bar, "wait"), 0.0, tolerance(total));
  EXPECT_TIME_NEAR(m.sum(bar, "time"), m.sum(bar, "task_exec") + m.sum(bar, "wait"));
}

}  // namespace
}  // namespace scalea::test
