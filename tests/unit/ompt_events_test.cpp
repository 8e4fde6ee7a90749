// Synthetic OMPT event sequences, in the orders libomp 14 and 19 produce them, fed straight into
// the adapter. Times are set explicitly (fake clock, 1 tick = 1 ns), so every duration is exact.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <functional>
#include <thread>
#include <vector>

#include "ompt/callbacks.hpp"
#include "core/recorder.hpp"
#include "fake_clock.hpp"
#include "recording.hpp"
#include "worker.hpp"

namespace scalea::collect {
namespace {

using namespace scalea::collect::ompt;

class OmptEvents : public ::testing::Test {
 protected:
  // A failed assertion in SetUpTestSuite would make GoogleTest skip the tests (ctest counts them
  // as skipped, not failed): the set-up records what went wrong and every test fails on it.
  static void SetUpTestSuite() { setup_error_ = start_recording(); }
  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << "suite set-up: " << setup_error_; }
  static inline std::string setup_error_;
  ThreadState* me() { return Recorder::get().thread(); }
  uint32_t rid(RegionKind k, const void* code, uint16_t sub = 0) {
    return Recorder::get().region(*me(), k, sub, code);
  }
  // The node of thread t at the given path of region ids below the root, or nullptr.
  static const Node* node(const ThreadState* t, std::vector<uint32_t> path) {
    for (uint32_t i = 0; i < t->node_count; ++i) {
      const Node* n = t->node_at(i);
      std::vector<uint32_t> p;
      for (const Node* m = n; m->parent; m = m->parent) p.insert(p.begin(), m->region);
      if (p == path) return n;
    }
    return nullptr;
  }
};

// Distinct code addresses per scenario keep their regions apart.
#define CODE(n) reinterpret_cast<const void*>(uintptr_t(0x1000 * (n)))

TEST_F(OmptEvents, ForkJoinWithLateWorkerJoinEnd) {
  ompt_data_t par{}, task{};
  Worker w;
  at(100);
  on_parallel_begin(nullptr, nullptr, &par, 2, 0, CODE(1));
  at(110);
  on_implicit_task(ompt_scope_begin, &par, &task, 2, 0, ompt_task_implicit);
  w.run([&] {
    at(120);
    ompt_data_t wt{};
    on_implicit_task(ompt_scope_begin, &par, &wt, 2, 1, ompt_task_implicit);
    at(130);
    on_work(ompt_work_loop, ompt_scope_begin, &par, &wt, 50, CODE(2));
    at(290);
    on_work(ompt_work_loop, ompt_scope_end, &par, &wt, 0, CODE(3));
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &wt, CODE(4));
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &wt, CODE(4));
  });
  at(115);
  on_work(ompt_work_loop, ompt_scope_begin, &par, &task, 50, CODE(2));
  at(200);
  on_work(ompt_work_loop, ompt_scope_end, &par, &task, 0, CODE(3));
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &task, CODE(4));
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &task, CODE(4));
  at(300);
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &task, CODE(4));
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &task, CODE(4));
  w.run([&] {
    at(300);
    ompt_data_t wt{};
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &wt, CODE(4));
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &wt, CODE(4));
    at(440);  // the worker reaches the join barrier (no code address on workers)
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &wt, nullptr);
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &wt, nullptr);
  });
  at(400);
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &task, CODE(1));
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &task, CODE(1));
  at(450);
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, &task, CODE(1));
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, &task, CODE(1));
  on_implicit_task(ompt_scope_end, nullptr, &task, 2, 0, ompt_task_implicit);
  at(460);
  on_parallel_end(&par, nullptr, 0, CODE(1));
  // libomp reports the worker's join-barrier end only at the next fork, much later.
  w.run([&] {
    at(1000);
    ompt_data_t wt{};
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, &wt, nullptr);
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, &wt, nullptr);
    on_implicit_task(ompt_scope_end, nullptr, &wt, 0, 1, ompt_task_implicit);
  });

  uint32_t par_r = rid(RegionKind::Parallel, CODE(1));
  uint32_t loop_r = rid(RegionKind::Loop, CODE(2));
  uint32_t bar_r = rid(RegionKind::BarrierImplicit, CODE(4));
  uint32_t join_r =
      rid(RegionKind::BarrierImplicit, CODE(1), uint16_t(format::BarrierFlavour::Parallel));
  const Node* mp = node(me(), {par_r});
  ASSERT_NE(mp, nullptr);
  EXPECT_EQ(mp->s.visits, 1u);
  EXPECT_EQ(mp->s.time, 360u);  // 100 -> 460
  EXPECT_EQ(mp->s.fork, 10u);
  EXPECT_EQ(mp->s.join, 10u);  // implicit task end 450 -> parallel end 460
  EXPECT_EQ(mp->s.team_size, 2u);
  const Node* wp = node(w.state(), {par_r});
  ASSERT_NE(wp, nullptr);
  EXPECT_EQ(wp->s.fork, 20u);
  EXPECT_EQ(wp->s.time, 330u);  // 120 -> release at 450, not 1000
  EXPECT_EQ(node(me(), {par_r, loop_r})->s.time, 85u);
  EXPECT_EQ(node(me(), {par_r, loop_r})->s.iterations, 50u);
  EXPECT_EQ(node(w.state(), {par_r, loop_r})->s.time, 160u);
  EXPECT_EQ(node(me(), {par_r, bar_r})->s.wait, 100u);
  EXPECT_EQ(node(w.state(), {par_r, bar_r})->s.wait, 10u);
  ASSERT_NE(node(me(), {par_r, join_r}), nullptr);
  EXPECT_EQ(node(me(), {par_r, join_r})->s.wait, 50u);
  ASSERT_NE(node(w.state(), {par_r, join_r}), nullptr)
      << "worker's join barrier must merge with the master's";
  EXPECT_EQ(node(w.state(), {par_r, join_r})->s.wait, 10u);  // 440 -> release 450
  EXPECT_TRUE(w.state()->stack.empty());
}

TEST_F(OmptEvents, TaskRunInBarrierIsTakenOutOfTheWait) {
  ompt_data_t par{}, task{}, t1{};
  Worker w;
  at(10000);
  on_parallel_begin(nullptr, nullptr, &par, 2, 0, CODE(11));
  on_implicit_task(ompt_scope_begin, &par, &task, 2, 0, ompt_task_implicit);
  w.run([&] {
    ompt_data_t wt{};
    on_implicit_task(ompt_scope_begin, &par, &wt, 2, 1, ompt_task_implicit);
  });
  on_work(ompt_work_single_executor, ompt_scope_begin, &par, &task, 1, CODE(12));
  on_task_create(&task, nullptr, &t1, ompt_task_explicit, 0, CODE(13));
  on_work(ompt_work_single_executor, ompt_scope_end, &par, &task, 1, CODE(14));
  at(10010);
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &task, CODE(15));
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &task, CODE(15));
  w.run([&] {
    ompt_data_t wt{};
    at(10000);
    on_work(ompt_work_single_other, ompt_scope_begin, &par, &wt, 1, CODE(12));
    on_work(ompt_work_single_other, ompt_scope_end, &par, &wt, 1, CODE(12));
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &wt, CODE(15));
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, &par, &wt, CODE(15));
    at(10020);  // the worker picks the task up inside the barrier and runs it for 500 ns
    on_task_schedule(&wt, ompt_task_switch, &t1);
    at(10520);
    on_task_schedule(&t1, ompt_task_complete, &wt);
    at(10600);
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &wt, CODE(15));
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &wt, CODE(15));
  });
  at(10600);
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &task, CODE(15));
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, &par, &task, CODE(15));
  uint32_t par_r = rid(RegionKind::Parallel, CODE(11));
  uint32_t single_r = rid(RegionKind::Single, CODE(12));
  uint32_t task_r = rid(RegionKind::Task, CODE(13));
  uint32_t bar_r = rid(RegionKind::BarrierImplicit, CODE(15));
  // The task is attributed to its creation context (inside the single), in the worker's tree.
  const Node* wtask = node(w.state(), {par_r, single_r, task_r});
  ASSERT_NE(wtask, nullptr);
  EXPECT_EQ(wtask->s.visits, 1u);
  EXPECT_EQ(wtask->s.time, 500u);
  EXPECT_EQ(node(me(), {par_r, single_r})->s.tasks_created, 1u);
  EXPECT_EQ(node(me(), {par_r, single_r})->s.executed, 1u);
  EXPECT_EQ(node(w.state(), {par_r, single_r})->s.executed, 0u);
  const Node* wbar = node(w.state(), {par_r, bar_r});
  EXPECT_EQ(wbar->s.time, 600u);
  EXPECT_EQ(wbar->s.task_exec, 500u);
  EXPECT_EQ(wbar->s.wait, 100u);  // 600 in the barrier minus 500 running the task
  EXPECT_EQ(node(me(), {par_r, bar_r})->s.wait, 590u);
  // End the region so later scenarios start clean.
  on_implicit_task(ompt_scope_end, nullptr, &task, 2, 0, ompt_task_implicit);
  on_parallel_end(&par, nullptr, 0, CODE(11));
  w.run([&] {
    ompt_data_t wt{};
    on_implicit_task(ompt_scope_end, nullptr, &wt, 0, 1, ompt_task_implicit);
  });
}

TEST_F(OmptEvents, NestedTaskCountedOnceInEnclosingWait) {
  ompt_data_t outer{}, inner{}, implicit_task{};
  at(20000);
  on_sync_region(ompt_sync_region_taskgroup, ompt_scope_begin, nullptr, &implicit_task, CODE(21));
  on_sync_region_wait(ompt_sync_region_taskgroup, ompt_scope_begin, nullptr, &implicit_task,
                      CODE(21));
  on_task_create(&implicit_task, nullptr, &outer, ompt_task_explicit, 0, CODE(22));
  at(20100);
  on_task_schedule(&implicit_task, ompt_task_switch, &outer);
  on_task_create(&outer, nullptr, &inner, ompt_task_explicit, 0, CODE(23));
  at(20200);
  on_sync_region(ompt_sync_region_taskwait, ompt_scope_begin, nullptr, &outer, CODE(24));
  on_sync_region_wait(ompt_sync_region_taskwait, ompt_scope_begin, nullptr, &outer, CODE(24));
  on_task_schedule(&outer, ompt_task_switch, &inner);
  at(20500);
  on_task_schedule(&inner, ompt_task_complete, &outer);
  at(20550);
  on_sync_region_wait(ompt_sync_region_taskwait, ompt_scope_end, nullptr, &outer, CODE(24));
  on_sync_region(ompt_sync_region_taskwait, ompt_scope_end, nullptr, &outer, CODE(24));
  at(20600);
  on_task_schedule(&outer, ompt_task_complete, &implicit_task);
  at(20700);
  on_sync_region_wait(ompt_sync_region_taskgroup, ompt_scope_end, nullptr, &implicit_task,
                      CODE(21));
  on_sync_region(ompt_sync_region_taskgroup, ompt_scope_end, nullptr, &implicit_task, CODE(21));
  uint32_t tg = rid(RegionKind::Taskgroup, CODE(21)), to = rid(RegionKind::Task, CODE(22)),
           ti = rid(RegionKind::Task, CODE(23)), tw = rid(RegionKind::Taskwait, CODE(24));
  EXPECT_EQ(node(me(), {tg, to})->s.time, 500u);
  EXPECT_EQ(node(me(), {tg, to, ti})->s.time, 300u);
  EXPECT_EQ(node(me(), {tg, to, tw})->s.wait, 50u);  // 350 in taskwait - 300 inner task
  EXPECT_EQ(node(me(), {tg})->s.task_exec, 500u);    // the outer task, inner counted once
  EXPECT_EQ(node(me(), {tg})->s.wait, 200u);         // 700 - 500
}

TEST_F(OmptEvents, LocksReleasedOutOfOrder) {
  at(30000);
  on_mutex_acquire(ompt_mutex_lock, 0, 0, 0xA, CODE(31));
  at(30010);
  on_mutex_acquired(ompt_mutex_lock, 0xA, CODE(31));
  on_mutex_acquire(ompt_mutex_lock, 0, 0, 0xB, CODE(32));
  at(30040);
  on_mutex_acquired(ompt_mutex_lock, 0xB, CODE(32));
  at(30100);
  on_mutex_released(ompt_mutex_lock, 0xA, CODE(33));
  at(30200);
  on_mutex_released(ompt_mutex_lock, 0xB, CODE(34));
  uint32_t a = rid(RegionKind::Lock, CODE(31)), b = rid(RegionKind::Lock, CODE(32));
  EXPECT_EQ(node(me(), {a})->s.time, 100u);
  EXPECT_EQ(node(me(), {a})->s.wait, 10u);
  EXPECT_EQ(node(me(), {a, b})->s.time, 190u);  // acquire at 30010, release at 30200
  EXPECT_EQ(node(me(), {a, b})->s.wait, 30u);
  EXPECT_TRUE(me()->stack.empty());
}

TEST_F(OmptEvents, NestLockReacquisitionClosesItsOwnFrame) {
  // libomp: acquire/acquired, then for the nested set acquire + nest_lock(begin), nested unset
  // nest_lock(end), final unset mutex_released.
  at(45000);
  on_mutex_acquire(ompt_mutex_nest_lock, 0, 0, 0xE, CODE(81));
  at(45010);
  on_mutex_acquired(ompt_mutex_nest_lock, 0xE, CODE(81));
  at(45020);
  on_mutex_acquire(ompt_mutex_nest_lock, 0, 0, 0xE, CODE(82));
  on_nest_lock(ompt_scope_begin, 0xE, CODE(82));
  at(45030);
  on_nest_lock(ompt_scope_end, 0xE, CODE(83));
  at(45100);
  on_mutex_released(ompt_mutex_nest_lock, 0xE, CODE(84));
  on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_begin, nullptr, nullptr, CODE(85));
  on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_end, nullptr, nullptr, CODE(85));
  EXPECT_TRUE(me()->stack.empty());
  uint32_t outer = rid(RegionKind::NestLock, CODE(81)), inner = rid(RegionKind::NestLock, CODE(82));
  EXPECT_EQ(node(me(), {outer})->s.time, 100u);
  EXPECT_EQ(node(me(), {outer})->s.wait, 10u);
  EXPECT_EQ(node(me(), {outer, inner})->s.visits, 1u);
  EXPECT_NE(node(me(), {rid(RegionKind::BarrierExplicit, CODE(85))}), nullptr)
      << "the barrier after the lock must not nest under it";
}

TEST_F(OmptEvents, WaitStillOpenWhenFrameIsUnwoundIsKept) {
  at(46000);
  on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_begin, nullptr, nullptr, CODE(91));
  on_sync_region_wait(ompt_sync_region_barrier_explicit, ompt_scope_begin, nullptr, nullptr,
                      CODE(91));
  at(46070);
  unwind_to(*me(), 0, now());  // as at the end of a run, or when an enclosing task ends
  EXPECT_EQ(node(me(), {rid(RegionKind::BarrierExplicit, CODE(91))})->s.wait, 70u);
}

TEST_F(OmptEvents, FailedTestLockOpensNothing) {
  at(40000);
  on_mutex_acquire(ompt_mutex_test_lock, 0, 0, 0xC, CODE(41));  // the test fails: no more events
  on_mutex_acquire(ompt_mutex_test_lock, 0, 0, 0xC, CODE(41));
  on_mutex_acquired(ompt_mutex_test_lock, 0xC, CODE(41));
  at(40030);
  on_mutex_released(ompt_mutex_lock, 0xC, CODE(42));
  EXPECT_TRUE(me()->stack.empty());
  EXPECT_EQ(node(me(), {rid(RegionKind::Lock, CODE(41))})->s.time, 30u);
}

TEST_F(OmptEvents, FailedTestReportedAsPlainLockIsDroppedAtTheNextEvent) {
  // libomp 14 reports omp_test_lock's acquire with the plain lock kind; a failed test then
  // reports nothing more. A thread blocked in an acquisition reports nothing else either, so the
  // next event on the thread proves the test failed.
  at(47000);
  on_mutex_acquire(ompt_mutex_lock, 0, 0, 0xF, CODE(95));
  on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_begin, nullptr, nullptr, CODE(96));
  at(47010);
  on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_end, nullptr, nullptr, CODE(96));
  EXPECT_TRUE(me()->stack.empty());
  EXPECT_EQ(node(me(), {rid(RegionKind::BarrierExplicit, CODE(96))})->s.time, 10u)
      << "the barrier is not nested under the failed lock";
  EXPECT_EQ(node(me(), {rid(RegionKind::Lock, CODE(95))})->s.visits, 0u);
}

// A lock routine's caller when libomp reports an address inside itself: the frame after the
// runtime's, whatever stands before them. Under AddressSanitizer the innermost frame is its
// interceptor of backtrace(), outside both the tool and the runtime: it once named the lock's
// region "nest_lock @__interceptor_backtrace+0x5b" (the constructs test, 1 run in 200).
TEST(CallerAfterRuntime, SkipsWhatStandsBeforeTheRuntime) {
  auto p = [](uintptr_t a) { return reinterpret_cast<void*>(a); };
  constexpr uintptr_t kRtLo = 0x1000, kRtHi = 0x2000, kToolLo = 0x5000, kToolHi = 0x6000;
  const void* fallback = p(0x1500);
  void* intercepted[] = {p(0x9000), p(0x5100), p(0x5200), p(0x1100),
                         p(0x1200), p(0x7000), p(0x7100)};
  EXPECT_EQ(caller_after_runtime(intercepted, 7, kRtLo, kRtHi, kToolLo, kToolHi, fallback),
            p(0x7000));
  void* plain[] = {p(0x5100), p(0x1100), p(0x7000)};
  EXPECT_EQ(caller_after_runtime(plain, 3, kRtLo, kRtHi, kToolLo, kToolHi, fallback), p(0x7000));
  // No runtime frame (a routine inlined into the caller): the first frame outside the tool.
  void* no_runtime[] = {p(0x5100), p(0x7000)};
  EXPECT_EQ(caller_after_runtime(no_runtime, 2, kRtLo, kRtHi, kToolLo, kToolHi, fallback),
            p(0x7000));
  // Nothing after the runtime, or nothing at all: the address libomp gave.
  void* ends_in_runtime[] = {p(0x5100), p(0x1100)};
  EXPECT_EQ(caller_after_runtime(ends_in_runtime, 2, kRtLo, kRtHi, kToolLo, kToolHi, fallback),
            fallback);
  EXPECT_EQ(caller_after_runtime(nullptr, 0, kRtLo, kRtHi, kToolLo, kToolHi, fallback), fallback);
}

TEST_F(OmptEvents, UnmatchedEndIsCountedNotFatal) {
  uint64_t before = me()->anomalies.unmatched_end;
  on_work(ompt_work_loop, ompt_scope_end, nullptr, nullptr, 0, CODE(51));
  on_mutex_released(ompt_mutex_lock, 0xDEAD, CODE(52));
  EXPECT_EQ(me()->anomalies.unmatched_end, before + 2);
  EXPECT_TRUE(me()->stack.empty());
}

TEST_F(OmptEvents, RecordingSwitchedOffLeavesGhosts) {
  at(50000);
  g_measure_on.store(false);
  on_masked(ompt_scope_begin, nullptr, nullptr, CODE(61));
  g_measure_on.store(true);  // switched back on inside: the inner region is still not recorded
  on_work(ompt_work_loop, ompt_scope_begin, nullptr, nullptr, 5, CODE(62));
  on_work(ompt_work_loop, ompt_scope_end, nullptr, nullptr, 5, CODE(62));
  on_masked(ompt_scope_end, nullptr, nullptr, CODE(61));
  on_work(ompt_work_loop, ompt_scope_begin, nullptr, nullptr, 5, CODE(63));
  at(50010);
  on_work(ompt_work_loop, ompt_scope_end, nullptr, nullptr, 5, CODE(63));
  EXPECT_EQ(node(me(), {rid(RegionKind::Masked, CODE(61))}), nullptr);
  EXPECT_EQ(node(me(), {rid(RegionKind::Loop, CODE(63))})->s.time, 10u);
  EXPECT_TRUE(me()->stack.empty());
}

// Constructs met again are answered from the thread's construct cache: the same address below
// another node is another call path, and a construct met while recording is off stays a ghost.
TEST_F(OmptEvents, ConstructMetAgainKeepsItsCallPath) {
  at(60000);
  for (int i = 0; i < 3; ++i) {
    on_masked(ompt_scope_begin, nullptr, nullptr, CODE(81));
    on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_begin, nullptr, nullptr, CODE(83));
    on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_end, nullptr, nullptr, CODE(83));
    on_masked(ompt_scope_end, nullptr, nullptr, CODE(81));
    on_work(ompt_work_loop, ompt_scope_begin, nullptr, nullptr, 4, CODE(82));
    on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_begin, nullptr, nullptr, CODE(83));
    on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_end, nullptr, nullptr, CODE(83));
    on_work(ompt_work_loop, ompt_scope_end, nullptr, nullptr, 4, CODE(82));
  }
  uint32_t masked = rid(RegionKind::Masked, CODE(81)), loop = rid(RegionKind::Loop, CODE(82));
  uint32_t barrier = rid(RegionKind::BarrierExplicit, CODE(83));
  EXPECT_EQ(node(me(), {masked, barrier})->s.visits, 3u);
  EXPECT_EQ(node(me(), {loop, barrier})->s.visits, 3u);
  EXPECT_EQ(node(me(), {loop})->s.iterations, 12u);
  g_measure_on.store(false);
  on_work(ompt_work_loop, ompt_scope_begin, nullptr, nullptr, 4, CODE(82));
  on_work(ompt_work_loop, ompt_scope_end, nullptr, nullptr, 4, CODE(82));
  g_measure_on.store(true);
  EXPECT_EQ(node(me(), {loop})->s.visits, 3u);
  EXPECT_TRUE(me()->stack.empty());
}

TEST_F(OmptEvents, SteadyStateAllocatesNoNodes) {
  ompt_data_t task{};
  on_masked(ompt_scope_begin, nullptr, &task, CODE(71));
  on_masked(ompt_scope_end, nullptr, &task, CODE(71));
  uint32_t nodes = me()->node_count;
  for (int i = 0; i < 100000; ++i) {
    on_masked(ompt_scope_begin, nullptr, &task, CODE(71));
    on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_begin, nullptr, &task, CODE(72));
    on_sync_region(ompt_sync_region_barrier_explicit, ompt_scope_end, nullptr, &task, CODE(72));
    on_masked(ompt_scope_end, nullptr, &task, CODE(71));
  }
  EXPECT_EQ(me()->node_count, nodes + 1);  // the barrier's node, once
  EXPECT_EQ(node(me(), {rid(RegionKind::Masked, CODE(71))})->s.visits, 100001u);
}

// libomp may hand a finished nested team's structure to another thread's new region before the
// old master reports parallel_end: the parallel_data it passes then holds the new region's record.
// The end must close the master's own region and leave the new one intact (seen with 3-deep
// nesting, tests/load nested3).
TEST_F(OmptEvents, ParallelEndWithReusedParallelData) {
  ompt_data_t outer{}, task{}, shared_team{}, inner_task{};
  Worker other;
  Anomalies before = me()->anomalies;
  at(1000);
  on_parallel_begin(nullptr, nullptr, &outer, 1, 0, CODE(91));
  on_implicit_task(ompt_scope_begin, &outer, &task, 1, 0, ompt_task_implicit);
  at(1010);
  on_parallel_begin(nullptr, nullptr, &shared_team, 1, 0, CODE(92));
  on_implicit_task(ompt_scope_begin, &shared_team, &inner_task, 1, 0, ompt_task_implicit);
  at(1050);
  on_implicit_task(ompt_scope_end, nullptr, &inner_task, 1, 0, ompt_task_implicit);
  // Another thread reuses the team structure for a region of its own...
  other.run([&] {
    at(1060);
    on_parallel_begin(nullptr, nullptr, &shared_team, 1, 0, CODE(93));
  });
  void* others_record = shared_team.ptr;
  // ...before this thread reports the end of its inner region.
  at(1070);
  on_parallel_end(&shared_team, nullptr, 0, CODE(92));
  EXPECT_EQ(shared_team.ptr, others_record) << "the other thread's region was clobbered";
  at(1100);
  on_implicit_task(ompt_scope_end, nullptr, &task, 1, 0, ompt_task_implicit);
  on_parallel_end(&outer, nullptr, 0, CODE(91));
  EXPECT_EQ(me()->anomalies.unmatched_end, before.unmatched_end);
  EXPECT_EQ(me()->anomalies.unclosed, before.unclosed);
  EXPECT_TRUE(me()->stack.empty());
  uint32_t outer_r = rid(RegionKind::Parallel, CODE(91)),
           inner_r = rid(RegionKind::Parallel, CODE(92));
  ASSERT_NE(node(me(), {outer_r, inner_r}), nullptr);
  EXPECT_EQ(node(me(), {outer_r, inner_r})->s.time, 60u);  // 1010 -> 1070
  EXPECT_EQ(node(me(), {outer_r})->s.time, 100u);
  other.run([&] {
    ompt_data_t t2{};
    on_implicit_task(ompt_scope_begin, &shared_team, &t2, 1, 0, ompt_task_implicit);
    on_implicit_task(ompt_scope_end, nullptr, &t2, 1, 0, ompt_task_implicit);
    on_parallel_end(&shared_team, nullptr, 0, CODE(93));
    EXPECT_EQ(other.state()->anomalies.unmatched_end, 0u);
    EXPECT_TRUE(other.state()->stack.empty());
  });
}

// A league of two teams on the host (`teams distribute parallel for num_teams(2)`), in libomp 14's
// order: the league is a parallel region with the league flag; each team begins with an initial
// task (index: the team), inside which libomp forks a team of its own with no code address, then
// the team's distribute and its nested parallel region; the loop's end comes with the distribute
// work type. The teams barrier and the second team's initial task end come late, at the next
// league. Each team's work must sit under the teams region on its own thread, with no anomaly.
TEST_F(OmptEvents, LeagueOfTeams) {
  constexpr int kLeague = ompt_parallel_league | ompt_parallel_invoker_runtime;
  constexpr int kTeam = ompt_parallel_team | ompt_parallel_invoker_runtime;
  ompt_data_t league{}, t0{}, own0{}, own0_task{}, inner0{}, inner0_task{};
  ompt_data_t t1{};  // the second team's initial task: its end comes late, with the same data
  Worker w;
  Anomalies before = me()->anomalies;
  // One team's work: its own team, distribute, the nested parallel loop (ended as distribute).
  auto team = [](ompt_data_t* own, ompt_data_t* own_task, ompt_data_t* inner,
                 ompt_data_t* inner_task, uint64_t t, uint64_t end) {
    at(t);
    on_parallel_begin(nullptr, nullptr, own, 1, kTeam, nullptr);
    on_implicit_task(ompt_scope_begin, own, own_task, 1, 0, ompt_task_implicit);
    at(t + 5);
    on_work(ompt_work_distribute, ompt_scope_begin, nullptr, nullptr, 8, CODE(102));
    on_parallel_begin(nullptr, nullptr, inner, 1, kTeam, CODE(103));
    on_implicit_task(ompt_scope_begin, inner, inner_task, 1, 0, ompt_task_implicit);
    at(t + 10);
    on_work(ompt_work_loop, ompt_scope_begin, nullptr, nullptr, 4, CODE(104));
    at(end);
    on_work(ompt_work_distribute, ompt_scope_end, nullptr, nullptr, 0, CODE(105));
    on_implicit_task(ompt_scope_end, nullptr, inner_task, 1, 0, ompt_task_implicit);
    on_parallel_end(inner, nullptr, kTeam, CODE(103));
    at(end + 5);
    on_work(ompt_work_distribute, ompt_scope_end, nullptr, nullptr, 0, CODE(106));
    on_implicit_task(ompt_scope_end, nullptr, own_task, 1, 0, ompt_task_implicit);
    on_parallel_end(own, nullptr, kTeam, nullptr);
  };
  at(100);
  on_parallel_begin(nullptr, nullptr, &league, 2, kLeague, CODE(101));
  at(105);
  on_implicit_task(ompt_scope_begin, &league, &t0, 2, 0, ompt_task_initial);
  w.run([&] {
    at(120);
    on_implicit_task(ompt_scope_begin, &league, &t1, 2, 1, ompt_task_initial);
    ompt_data_t own{}, own_task{}, inner{}, inner_task{};
    team(&own, &own_task, &inner, &inner_task, 125, 300);
    at(310);
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, nullptr, nullptr, nullptr);
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, nullptr, nullptr,
                        nullptr);
  });
  team(&own0, &own0_task, &inner0, &inner0_task, 106, 400);
  at(410);
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_begin, nullptr, nullptr, CODE(101));
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_begin, nullptr, nullptr,
                      CODE(101));
  at(420);
  on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, nullptr,
                      CODE(101));
  on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, nullptr, CODE(101));
  at(421);
  on_implicit_task(ompt_scope_end, nullptr, &t0, 0, 0, ompt_task_initial);
  at(425);
  on_parallel_end(&league, nullptr, kLeague, CODE(101));
  w.run([&] {  // late, at the next league's fork
    at(1000);
    on_sync_region_wait(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, nullptr,
                        nullptr);
    on_sync_region(ompt_sync_region_barrier_implicit, ompt_scope_end, nullptr, nullptr, nullptr);
    on_implicit_task(ompt_scope_end, nullptr, &t1, 0, 1, ompt_task_initial);
  });
  // The program's own initial task ends at shutdown: it was never a team of ours.
  ompt_data_t program_task{};
  on_implicit_task(ompt_scope_end, nullptr, &program_task, 0, 0, ompt_task_initial);

  EXPECT_EQ(me()->anomalies.unmatched_end, before.unmatched_end);
  EXPECT_EQ(me()->anomalies.unclosed, before.unclosed);
  EXPECT_EQ(w.state()->anomalies.unmatched_end, 0u);
  EXPECT_EQ(w.state()->anomalies.unclosed, 0u);
  EXPECT_TRUE(me()->stack.empty());
  EXPECT_TRUE(w.state()->stack.empty());
  uint32_t teams_r = rid(RegionKind::Teams, CODE(101)),
           dist_r = rid(RegionKind::Distribute, CODE(102)),
           par_r = rid(RegionKind::Parallel, CODE(103)), loop_r = rid(RegionKind::Loop, CODE(104)),
           bar_r =
               rid(RegionKind::BarrierImplicit, CODE(101), uint16_t(format::BarrierFlavour::Teams));
  // Nothing of the runtime's own teams: no parallel region without an address anywhere.
  EXPECT_EQ(node(me(), {teams_r, rid(RegionKind::Parallel, nullptr)}), nullptr);
  EXPECT_EQ(node(w.state(), {rid(RegionKind::Parallel, nullptr)}), nullptr);
  const Node* mt = node(me(), {teams_r});
  ASSERT_NE(mt, nullptr);
  EXPECT_EQ(mt->s.visits, 1u);
  EXPECT_EQ(mt->s.time, 325u);  // 100 -> 425
  EXPECT_EQ(mt->s.fork, 5u);
  EXPECT_EQ(mt->s.join, 4u);  // the initial task's end 421 -> the league's end 425
  EXPECT_EQ(mt->s.team_size, 2u);
  const Node* wt = node(w.state(), {teams_r});
  ASSERT_NE(wt, nullptr);
  EXPECT_EQ(wt->s.visits, 1u);
  EXPECT_EQ(wt->s.time, 301u);  // 120 -> the league's release at 421, not 1000
  EXPECT_EQ(wt->s.fork, 20u);
  // Each team's distribute holds its nested parallel loop, which ended before it.
  ASSERT_NE(node(me(), {teams_r, dist_r, par_r, loop_r}), nullptr);
  EXPECT_EQ(node(me(), {teams_r, dist_r})->s.time, 294u);                 // 111 -> 405
  EXPECT_EQ(node(me(), {teams_r, dist_r, par_r, loop_r})->s.time, 284u);  // 116 -> 400
  ASSERT_NE(node(w.state(), {teams_r, dist_r, par_r, loop_r}), nullptr);
  EXPECT_EQ(node(w.state(), {teams_r, dist_r})->s.time, 175u);                 // 130 -> 305
  EXPECT_EQ(node(w.state(), {teams_r, dist_r, par_r, loop_r})->s.time, 165u);  // 135 -> 300
  EXPECT_EQ(node(w.state(), {teams_r, dist_r, par_r, loop_r})->s.iterations, 4u);
  // The teams barrier is one region on both threads, the worker's clipped at the release.
  ASSERT_NE(node(me(), {teams_r, bar_r}), nullptr);
  ASSERT_NE(node(w.state(), {teams_r, bar_r}), nullptr);
  EXPECT_EQ(node(me(), {teams_r, bar_r})->s.wait, 10u);
  EXPECT_EQ(node(w.state(), {teams_r, bar_r})->s.wait, 111u);  // 310 -> 421
}

// Workers drop the last reference to a parallel region's record (their join ends come late), and
// tasks are freed by the thread that ran them: the records must go back to the creating thread's
// pool, or it allocates new ones for every region while the others hoard the old ones.
TEST_F(OmptEvents, SharedRecordsReturnToTheirOwner) {
  Worker w;
  uint32_t par_blocks = me()->parallel_pool.blocks, task_blocks = me()->task_pool.blocks;
  for (int i = 0; i < 1000; ++i) {
    ompt_data_t par{}, task{}, t1{};
    on_parallel_begin(nullptr, nullptr, &par, 2, 0, CODE(81));
    on_implicit_task(ompt_scope_begin, &par, &task, 2, 0, ompt_task_implicit);
    on_task_create(&task, nullptr, &t1, ompt_task_explicit, 0, CODE(82));
    w.run([&] {
      ompt_data_t wt{};
      on_implicit_task(ompt_scope_begin, &par, &wt, 2, 1, ompt_task_implicit);
      on_task_schedule(&wt, ompt_task_switch, &t1);
      on_task_schedule(&t1, ompt_task_complete, &wt);
    });
    on_implicit_task(ompt_scope_end, nullptr, &task, 2, 0, ompt_task_implicit);
    on_parallel_end(&par, nullptr, 0, CODE(81));
    w.run([&] {
      ompt_data_t wt{};
      on_implicit_task(ompt_scope_end, nullptr, &wt, 0, 1, ompt_task_implicit);
    });
  }
  EXPECT_LE(me()->parallel_pool.blocks, par_blocks + 1);
  EXPECT_LE(me()->task_pool.blocks, task_blocks + 1);
  EXPECT_EQ(w.state()->parallel_pool.blocks, 0u);
  EXPECT_EQ(node(me(), {rid(RegionKind::Parallel, CODE(81))})->s.visits, 1000u);
  EXPECT_EQ(node(w.state(), {rid(RegionKind::Parallel, CODE(81)), rid(RegionKind::Task, CODE(82))})
                ->s.visits,
            1000u);
}

// A worker finds its own node on the master's call path however deep the path is.
TEST_F(OmptEvents, DeepCallPathIsMirroredWhole) {
  constexpr int kDepth = 600;
  Worker w;
  ThreadState* t = me();
  size_t base = t->stack.size();
  uint32_t a = rid(RegionKind::Function, CODE(90)), b = rid(RegionKind::Function, CODE(91));
  for (int i = 0; i < kDepth; ++i) enter(*t, i % 2 ? b : a, FrameType::Region, 1, 1);
  Node* deep = current_node(*t);
  Node* mirrored = nullptr;
  w.run([&] { mirrored = mirror_of(*w.state(), deep); });
  ASSERT_NE(mirrored, nullptr);
  EXPECT_EQ(mirrored->owner, w.state()->index);
  std::vector<uint32_t> theirs, mine;
  for (const Node* n = deep; n->parent; n = n->parent) theirs.push_back(n->region);
  for (const Node* n = mirrored; n->parent; n = n->parent) mine.push_back(n->region);
  EXPECT_EQ(mine.size(), size_t(kDepth) + base);
  EXPECT_EQ(mine, theirs);
  while (t->stack.size() > base) leave_at(*t, t->stack.size() - 1, 2);
}

}  // namespace
}  // namespace scalea::collect
