// Why threads waited at a barrier (report/src/findings/wait_causes.cpp), on literal experiments: the hint
// must follow what was measured before the barrier, never "imbalanced" after balanced work.
#include "findings/wait_causes.hpp"

#include <gtest/gtest.h>

#include "builder.hpp"

namespace scalea::cli {
namespace {

using test::Builder;
using Kind = BarrierCause::Kind;
using format::RegionKind;

// One parallel region with a loop and the barrier after it, on threads with these loop times and
// barrier waits (ms), each passing both `passes` times.
struct LoopBarrier {
  Builder b;
  uint32_t par, loop, bar;
  // `faults`: each thread's page faults in the loop, read as a counter (none when empty).
  LoopBarrier(const std::vector<double>& loop_ms, const std::vector<double>& wait_ms,
              double passes = 1, const std::vector<double>& faults = {}) {
    if (!faults.empty()) b.experiment().metrics.push_back("papi:perf::PAGE-FAULTS");
    par = b.region(RegionKind::Parallel, "par");
    loop = b.region(RegionKind::Loop, "loop");
    bar = b.region(RegionKind::BarrierImplicit, "bar");
    for (size_t i = 0; i < loop_ms.size(); ++i) {
      double in = loop_ms[i] + wait_ms[i];
      uint32_t th = b.thread(i == 0, in + 2);
      // The initial thread forks and joins (1 ms); the region has no code of its own.
      uint32_t p = b.node(th, 0, par,
                          {{"time", i == 0 ? in + 1 : in},
                           {"visits", 1},
                           {"fork", i == 0 ? 0.5 : 0},
                           {"join", i == 0 ? 0.5 : 0}});
      test::Metrics m{{"time", loop_ms[i]}, {"visits", passes}};
      if (!faults.empty()) m["papi:perf::PAGE-FAULTS"] = faults[i];
      b.node(th, p, loop, m);
      b.node(th, p, bar, {{"time", wait_ms[i]}, {"wait", wait_ms[i]}, {"visits", passes}});
    }
  }
  BarrierCause cause(bool shared = false) {
    drg::MergedTree t(b.experiment());
    return barrier_cause(t, find(t, "bar"), shared);
  }
  static uint32_t find(const drg::MergedTree& t, const std::string& name) {
    for (uint32_t n = 0; n < t.nodes().size(); ++n)
      if (t.region_of(n).name == name) return n;
    ADD_FAILURE() << "no region " << name;
    return 0;
  }
};

TEST(BarrierCause, UnevenWorkBeforeItIsImbalance) {
  LoopBarrier x({20, 40, 60, 80}, {60, 40, 20, 0});
  BarrierCause c = x.cause();
  EXPECT_EQ(c.kind, Kind::Imbalance);
  EXPECT_NEAR(c.waits, 0.120, 1e-9);
  EXPECT_NEAR(c.by_work, 0.120, 1e-9);
  EXPECT_NEAR(c.work_min, 0.020, 1e-9);
  EXPECT_NEAR(c.work_max, 0.080, 1e-9);
  drg::MergedTree t(x.b.experiment());
  std::string h = barrier_hint(t, c, "try schedule(dynamic)");
  EXPECT_NE(h.find("try schedule(dynamic)"), std::string::npos) << h;
  EXPECT_NE(h.find("20 ms to 80 ms per thread"), std::string::npos) << h;
}

TEST(BarrierCause, BalancedWorkOverManyPassesIsTheCostOfSynchronizingOften) {
  // 20,000 passes, 100 ms of work on each thread, 0.4 ms of waiting in all: 10 us per pass.
  LoopBarrier x({100, 100}, {0.2, 0.2}, 20000);
  BarrierCause c = x.cause();
  EXPECT_EQ(c.kind, Kind::ManyBarriers);
  EXPECT_NEAR(c.visits_per_pe, 20000, 1e-9);
  EXPECT_NEAR(c.wait_per_visit, 10e-9, 1e-15);
  drg::MergedTree t(x.b.experiment());
  std::string h = barrier_hint(t, c, "try schedule(dynamic)");
  EXPECT_EQ(h.find("try schedule(dynamic)"), std::string::npos) << h;
  EXPECT_NE(h.find("synchronize less often"), std::string::npos) << h;
}

TEST(BarrierCause, BalancedWorkWithFewPassesIsLateArrivalOrCpuSharing) {
  LoopBarrier x({50, 50, 51}, {6, 5, 0});
  EXPECT_EQ(x.cause().kind, Kind::LateArrival);
  EXPECT_EQ(x.cause(true).kind, Kind::CpuSharing);
  // The same waits after work that differs as much are imbalance, shared CPUs or not.
  LoopBarrier y({45, 46, 51}, {6, 5, 0});
  EXPECT_EQ(y.cause().kind, Kind::Imbalance);
  // ... but with shared CPUs the hint says first that the difference may be CPU time.
  BarrierCause c = y.cause(true);
  EXPECT_EQ(c.kind, Kind::Imbalance);
  drg::MergedTree t(y.b.experiment());
  std::string h = barrier_hint(t, c, "try schedule(dynamic)");
  EXPECT_LT(h.find("shared CPUs"), h.find("try schedule(dynamic)")) << h;
}

TEST(BarrierCause, UnevenWorkOfThreadsThatWaitedForACpuMayBeCpuTime) {
  // Thread 1 took 6 ms longer for the same work and waited 8 ms longer for a CPU (meta.json
  // runqueue_s): the hint must say first that the difference may be CPU time.
  LoopBarrier x({45, 51}, {6, 0});
  x.b.experiment().meta = {
      {"affinity",
       {{"threads",
         {{{"index", 0}, {"runqueue_s", 0.001}}, {{"index", 1}, {"runqueue_s", 0.009}}}}}}};
  BarrierCause c = x.cause();
  EXPECT_EQ(c.kind, Kind::Imbalance);
  EXPECT_TRUE(c.cpus_shared);
  // Without that difference in CPU waiting it is imbalance, plainly.
  LoopBarrier y({45, 51}, {6, 0});
  y.b.experiment().meta = {
      {"affinity",
       {{"threads",
         {{{"index", 0}, {"runqueue_s", 0.004}}, {{"index", 1}, {"runqueue_s", 0.004}}}}}}};
  EXPECT_FALSE(y.cause().cpus_shared);
}

TEST(BarrierCause, ADifferenceInWorkAsSmallAsTheWaitsForACpuIsNotCalledCertain) {
  // Equal work (sleeps) on two threads on two CPUs of a busy machine: 242 and 260 ms measured,
  // and each thread waited 20-30 ms for a CPU over the run (wake-ups, other processes), so the
  // 18 ms may be waiting; the hint says so before the advice on the schedule.
  LoopBarrier x({260, 242}, {0, 18});
  x.b.experiment().meta = {
      {"affinity",
       {{"threads",
         {{{"index", 0}, {"runqueue_s", 0.030}}, {{"index", 1}, {"runqueue_s", 0.020}}}}}}};
  BarrierCause c = x.cause();
  EXPECT_EQ(c.kind, Kind::Imbalance);
  EXPECT_TRUE(c.cpu_waits_may_explain);
  EXPECT_NEAR(c.cpu_wait_max, 0.030, 1e-12);
  drg::MergedTree t(x.b.experiment());
  std::string h = barrier_hint(t, c, "try schedule(dynamic)");
  EXPECT_LT(h.find("30 ms for a CPU"), h.find("try schedule(dynamic)")) << h;
  // A difference far larger than the waits is the code's: the advice comes plainly.
  LoopBarrier y({20, 80}, {60, 0});
  y.b.experiment().meta = x.b.experiment().meta;
  BarrierCause d = y.cause();
  EXPECT_EQ(d.kind, Kind::Imbalance);
  EXPECT_FALSE(d.cpu_waits_may_explain);
  drg::MergedTree u(y.b.experiment());
  EXPECT_EQ(barrier_hint(u, d, "try schedule(dynamic)").find("for a CPU"), std::string::npos);
}

TEST(BarrierCause, WorkWithinAFewPerCentIsBalanced) {
  // Equal sleeps on two threads of a quiet machine: 239 and 246 ms of work, 4 ms of waits over
  // 1,000 passes. The difference explains the waits, but it is the OS's, not the schedule's.
  LoopBarrier x({246, 239}, {0, 4}, 1000);
  BarrierCause c = x.cause();
  EXPECT_EQ(c.kind, Kind::ManyBarriers);
  drg::MergedTree t(x.b.experiment());
  EXPECT_EQ(barrier_hint(t, c, "try schedule(dynamic)").find("schedule(dynamic)"),
            std::string::npos);
  // Twice that difference is uneven work; the hint says first that CPUs can make that much.
  LoopBarrier y({246, 226}, {0, 20}, 1000);
  BarrierCause d = y.cause();
  EXPECT_EQ(d.kind, Kind::Imbalance);
  drg::MergedTree u(y.b.experiment());
  std::string h = barrier_hint(u, d, "try schedule(dynamic)");
  EXPECT_LT(h.find("difference of 8 %"), h.find("try schedule(dynamic)")) << h;
  // A large difference gets the advice plainly.
  LoopBarrier z({246, 123}, {0, 123}, 1000);
  drg::MergedTree v(z.b.experiment());
  EXPECT_EQ(barrier_hint(v, z.cause(), "try schedule(dynamic)").rfind("try schedule(dynamic)", 0),
            0u);
}

TEST(BarrierCause, TheSlowerThreadsExtraPageFaultsComeFirst) {
  // The thread with 40 ms more work took 30,000 more page faults (30 ms at 1 us each): the hint
  // names the first touch of memory before the schedule.
  LoopBarrier x({100, 140}, {40, 0}, 1, {2000, 32000});
  BarrierCause c = x.cause();
  EXPECT_EQ(c.kind, Kind::Imbalance);
  EXPECT_EQ(c.faults_most_work, 32000);
  EXPECT_EQ(c.faults_least_work, 2000);
  drg::MergedTree t(x.b.experiment());
  std::string h = barrier_hint(t, c, "try schedule(dynamic)");
  EXPECT_LT(h.find("page faults there (32,000 against 2,000)"), h.find("try schedule(dynamic)")) << h;
  // A few faults on both threads: nothing to say about them.
  LoopBarrier y({100, 140}, {40, 0}, 1, {3000, 3100});
  drg::MergedTree u(y.b.experiment());
  EXPECT_EQ(barrier_hint(u, y.cause(), "try schedule(dynamic)").find("page faults"),
            std::string::npos);
}

TEST(BarrierCause, PageFaultsThatAreMuchOfTheWorkComeFirst) {
  // As many faults on both threads, but a large part of the work (LULESH's loop at
  // lulesh.cc:1009 at 2 threads: 102,041 and 105,661 faults in 290 and 400 ms of CPU time, six
  // scratch arrays allocated anew at each call): the faults do not explain the difference, but
  // allocating once removes much of the work, and the difference with it.
  LoopBarrier x({100, 140}, {40, 0}, 1, {30000, 31000});
  BarrierCause c = x.cause();
  EXPECT_EQ(c.kind, Kind::Imbalance);
  drg::MergedTree t(x.b.experiment());
  std::string h = barrier_hint(t, c, "try schedule(dynamic)");
  EXPECT_NE(h.find("30,000 to 31,000 page faults there (at least 30 ms of it"), std::string::npos)
      << h;
  EXPECT_LT(h.find("allocate it once"), h.find("try schedule(dynamic)")) << h;
  // Below a quarter of the least work (20,000 faults: 20 ms of 100 ms): not named.
  LoopBarrier y({100, 140}, {40, 0}, 1, {20000, 21000});
  drg::MergedTree u(y.b.experiment());
  EXPECT_EQ(barrier_hint(u, y.cause(), "try schedule(dynamic)").find("page faults"),
            std::string::npos);
}

// One parallel region of loops, each followed by its barrier, on two threads: loop i took
// work[i] = {thread 0, thread 1} ms (barrier waits even them out).
struct Loops {
  Builder b;
  uint32_t par;
  std::vector<uint32_t> bars;
  explicit Loops(const std::vector<std::pair<double, double>>& work) {
    par = b.region(RegionKind::Parallel, "par");
    std::vector<uint32_t> loop_r, bar_r;
    for (size_t i = 0; i < work.size(); ++i) {
      loop_r.push_back(b.region(RegionKind::Loop, "loop" + std::to_string(i)));
      bar_r.push_back(b.region(RegionKind::BarrierImplicit, "bar" + std::to_string(i)));
    }
    double total = 0;
    for (const auto& [w0, w1] : work) total += std::max(w0, w1);
    for (int th = 0; th < 2; ++th) {
      uint32_t t = b.thread(th == 0, total + 2);
      uint32_t p = b.node(t, 0, par, {{"time", total}, {"visits", 1}});
      for (size_t i = 0; i < work.size(); ++i) {
        double mine = th == 0 ? work[i].first : work[i].second;
        double wait = std::max(work[i].first, work[i].second) - mine;
        b.node(t, p, loop_r[i], {{"time", mine}, {"visits", 1}});
        b.node(t, p, bar_r[i], {{"time", wait}, {"wait", wait}, {"visits", 1}});
      }
    }
  }
  std::string hint(size_t i) {
    drg::MergedTree t(b.experiment());
    uint32_t bar = LoopBarrier::find(t, "bar" + std::to_string(i));
    return barrier_hint(t, barrier_cause(t, bar, false, slowest_thread(t)),
                        "try schedule(dynamic)");
  }
};

TEST(BarrierCause, TheSameThreadSlowestInEveryLoopIsItsCpuOrMemoryFirst) {
  // Thread 1 is 20-30 % slower in each of four loops (LULESH at 2 threads on this VM: thread 1
  // the slowest in 35 of 35 uneven loops, by 6 to 36 %, loops over elements of equal cost).
  Loops x({{80, 100}, {70, 100}, {40, 52}, {30, 40}});
  drg::MergedTree t(x.b.experiment());
  SlowThread s = slowest_thread(t);
  EXPECT_EQ(s.thread, 1u);
  EXPECT_EQ(s.slowest_in, 4u);
  EXPECT_EQ(s.uneven_loops, 4u);
  EXPECT_NEAR(s.lead_min, 0.2, 1e-9);
  EXPECT_NEAR(s.lead_max, 0.3, 1e-9);
  std::string h = x.hint(0);
  EXPECT_NE(h.find("thread 1 was the slowest in 4 of the run's 4 uneven loops, by 20 to 30 %"),
            std::string::npos)
      << h;
  EXPECT_LT(h.find("initialize the data in parallel"), h.find("try schedule(dynamic)")) << h;
  // The slowest thread changes from loop to loop: the iterations, not the thread.
  Loops y({{80, 100}, {100, 70}, {40, 52}, {40, 30}});
  EXPECT_FALSE(slowest_thread(drg::MergedTree(y.b.experiment())).consistent());
  EXPECT_EQ(y.hint(0).find("slowest in"), std::string::npos) << y.hint(0);
  // Too few uneven loops to tell.
  Loops z({{80, 100}, {70, 100}, {50, 50}});
  EXPECT_FALSE(slowest_thread(drg::MergedTree(z.b.experiment())).consistent());
  EXPECT_EQ(z.hint(0).find("slowest in"), std::string::npos) << z.hint(0);
}

TEST(BarrierCause, UnevenWorkThatExplainsFewOfTheWaitsIsNotCalledBalanced) {
  // 60 and 80 ms of work, 60 ms of waits: the 20 ms difference explains a third of them. The
  // hint must not call the work balanced (LULESH on a busy machine: "balanced (603 ms to 835 ms
  // per thread)").
  LoopBarrier x({60, 80}, {50, 10});
  BarrierCause c = x.cause(true);
  EXPECT_EQ(c.kind, Kind::CpuSharing);
  drg::MergedTree t(x.b.experiment());
  std::string h = barrier_hint(t, c, "try schedule(dynamic)");
  EXPECT_EQ(h.find("balanced"), std::string::npos) << h;
  EXPECT_NE(h.find("explains only 33 % of the waits"), std::string::npos) << h;
}

TEST(BarrierCause, QueueingAtACriticalBeforeTheBarrier) {
  // Balanced loop and barrier, then a critical section of 10 ms each: thread i waits 10 i ms to
  // enter it, so they reach the join barrier 10 ms apart.
  Builder b;
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t loop = b.region(RegionKind::Loop, "loop");
  uint32_t bar = b.region(RegionKind::BarrierImplicit, "bar");
  uint32_t crit = b.region(RegionKind::Critical, "crit");
  uint32_t join = b.region(RegionKind::BarrierImplicit, "join");
  for (int i = 0; i < 4; ++i) {
    uint32_t th = b.thread(i == 0, 100);
    uint32_t p = b.node(th, 0, par, {{"time", 90}, {"visits", 1}});
    b.node(th, p, loop, {{"time", 40}, {"visits", 1}});
    b.node(th, p, bar, {{"time", 0.1}, {"wait", 0.1}, {"visits", 1}});
    b.node(th, p, crit, {{"time", 10 + 10.0 * i}, {"wait", 10.0 * i}, {"visits", 1}});
    b.node(th, p, join, {{"time", 30 - 10.0 * i}, {"wait", 30 - 10.0 * i}, {"visits", 1}});
  }
  drg::MergedTree t(b.experiment());
  BarrierCause c = barrier_cause(t, LoopBarrier::find(t, "join"), false);
  EXPECT_EQ(c.kind, Kind::Queueing);
  EXPECT_EQ(t.region_of(c.queue_node).name, "crit");
  EXPECT_NEAR(c.by_queue, 0.060, 1e-9);
  EXPECT_NEAR(c.by_work, 0, 1e-9);  // the loop is before the previous barrier: not counted
  std::string h = barrier_hint(t, c, "imbalanced");
  EXPECT_NE(h.find("queued at the critical"), std::string::npos) << h;
}

}  // namespace
}  // namespace scalea::cli
