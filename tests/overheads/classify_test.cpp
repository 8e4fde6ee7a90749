// The classifier on small literal experiments whose overheads are known exactly. Times are in
// milliseconds here; the experiment stores nanoseconds.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "scalea/drg/encode.hpp"
#include "scalea/drg/region_key.hpp"
#include "scalea/overheads/classify.hpp"
#include "scalea/overheads/keys.hpp"
#include "scalea/overheads/rules.hpp"
#include "scalea/overheads/share.hpp"
#include "../temp_dir.hpp"
#include "builder.hpp"

namespace scalea::overheads {
namespace {

using drg::RegionKind;
using test::Builder;

double cls(const RegionOverheads& r, Class c) { return r.classes[size_t(c)] * 1e3; }  // ms
double sub(const RegionOverheads& r, const std::string& k) {
  auto it = r.subclasses.find(k);
  return it == r.subclasses.end() ? 0 : it->second * 1e3;
}
const RegionOverheads& find(const drg::MergedTree& t, const Analysis& a, const std::string& name) {
  for (uint32_t n = 0; n < t.nodes().size(); ++n)
    if (t.region_of(n).name == name) return a.regions[n];
  throw std::runtime_error("no region " + name);
}
void expect_identity(const Analysis& a) {
  for (const auto& r : a.regions) {
    double s = 0;
    for (double v : r.classes) s += v;
    EXPECT_NEAR(s, r.t_o, 1e-12) << r.path;
  }
  for (const auto& r : a.only_in_reference) {
    double s = 0;
    for (double v : r.classes) s += v;
    EXPECT_NEAR(s, r.t_o, 1e-12) << r.path;
  }
}

// Two threads; a parallel region with a loop where thread 0 works 10 ms and thread 1 30 ms,
// then the barrier: thread 0 waits 20 ms.
Builder imbalanced_loop() {
  Builder b;
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t loop = b.region(RegionKind::Loop, "loop");
  uint32_t bar = b.region(RegionKind::BarrierImplicit, "bar");
  uint32_t t0 = b.thread(true, 42), t1 = b.thread(false, 41);
  uint32_t p0 =
      b.node(t0, 0, par, {{"time", 32}, {"fork", 1}, {"join", 1}, {"team_size", 2}, {"visits", 1}});
  b.node(t0, p0, loop, {{"time", 10}, {"iterations", 100}, {"visits", 1}});
  b.node(t0, p0, bar, {{"time", 20}, {"wait", 20}, {"visits", 1}});
  uint32_t p1 = b.node(t1, 0, par, {{"time", 30}, {"fork", 1}, {"visits", 1}});
  b.node(t1, p1, loop, {{"time", 30}, {"iterations", 100}, {"visits", 1}});
  b.node(t1, p1, bar, {{"time", 0}, {"visits", 1}});
  return b;
}

TEST(Classify, ImbalancedLoopWaitIsSynchronization) {
  Builder b = imbalanced_loop();
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  ASSERT_EQ(a.p, 2);
  expect_identity(a);
  const auto& par = find(t, a, "par");
  EXPECT_NEAR(par.t_p * 1e3, 32, 1e-9);
  // U = 40 ms of loop work; no reference: T_s = U, T_o = 32 - 20 = 12 ms.
  EXPECT_NEAR(par.t_o * 1e3, 12, 1e-9);
  EXPECT_NEAR(sub(par, "synchronization.barrier"), 10, 1e-9);          // 20 ms wait / 2
  EXPECT_NEAR(sub(par, "control_of_parallelism.fork_join"), 2, 1e-9);  // (1+1 + worker 1+1) / 2
  EXPECT_NEAR(cls(par, Class::AdditionalComputation), 0, 1e-9);
  const auto& loop = find(t, a, "loop");
  EXPECT_NEAR(loop.t_o * 1e3, 10, 1e-9);                               // 30 - 40/2
  EXPECT_NEAR(sub(loop, "synchronization.load_imbalance"), 10, 1e-9);  // thread 0 idle 20 / 2
  EXPECT_NEAR(loop.imbalance, 1.5, 1e-9);
  EXPECT_EQ(loop.most_loaded, 1);
}

// Each PE's own time split by the rules (Analysis::pe_own): thread 0's barrier wait is its
// synchronization, the fork and join its control, the loop its useful work; the thread that
// waited after a single loses that time (loss, partially parallelized). Only when asked for and
// small enough.
TEST(Classify, EachPesOwnTimeSplitByTheRules) {
  Builder b = imbalanced_loop();
  drg::MergedTree t(b.experiment());
  Options o;
  EXPECT_TRUE(classify(t, nullptr, o).pe_own.empty());  // not asked
  o.pe_own_cells = 2 * t.nodes().size() - 1;
  EXPECT_TRUE(classify(t, nullptr, o).pe_own.empty());  // too large
  o.pe_own_cells = 2 * t.nodes().size();
  Analysis a = classify(t, nullptr, o);
  ASSERT_EQ(a.pe_own.size(), 2 * t.nodes().size());
  auto at = [&](uint32_t thread, const char* name) {
    return a.pe_own[thread * t.nodes().size() + find(t, a, name).node];
  };
  auto in = [](const PeOwn& pe, Class c) { return pe.classes[size_t(c)] * 1e3; };
  EXPECT_NEAR(in(at(0, "bar"), Class::Synchronization), 20, 1e-9);
  EXPECT_NEAR(at(0, "bar").useful, 0, 1e-12);
  EXPECT_NEAR(in(at(1, "bar"), Class::Synchronization), 0, 1e-9);
  EXPECT_NEAR(at(0, "loop").useful * 1e3, 10, 1e-9);
  EXPECT_NEAR(at(1, "loop").useful * 1e3, 30, 1e-9);
  EXPECT_NEAR(in(at(0, "par"), Class::ControlOfParallelism), 2, 1e-9);  // fork 1 + join 1
  // The worker's 2 ms before and after its part is idle time, not its own: not split per PE.
  EXPECT_NEAR(in(at(1, "par"), Class::ControlOfParallelism), 0, 1e-9);
  for (const PeOwn& pe : a.pe_own) {
    EXPECT_EQ(pe.classes[size_t(Class::AdditionalComputation)], 0);
    EXPECT_EQ(pe.classes[size_t(Class::Unidentified)], 0);
  }

  Builder single;
  uint32_t par = single.region(RegionKind::Parallel, "par");
  uint32_t one = single.region(RegionKind::Single, "single");
  uint32_t bar = single.region(RegionKind::BarrierImplicit, "bar");
  uint32_t t0 = single.thread(true, 50), t1 = single.thread(false, 50);
  uint32_t p0 = single.node(t0, 0, par, {{"time", 50}, {"team_size", 2}, {"visits", 1}});
  single.node(t0, p0, one, {{"time", 50}, {"executed", 1}, {"visits", 1}});
  single.node(t0, p0, bar, {{"time", 0}, {"visits", 1}});
  uint32_t p1 = single.node(t1, 0, par, {{"time", 50}, {"visits", 1}});
  single.node(t1, p1, one, {{"time", 0}, {"visits", 1}});
  single.node(t1, p1, bar, {{"time", 50}, {"wait", 50}, {"visits", 1}});
  drg::MergedTree ts(single.experiment());
  o.pe_own_cells = 1000;
  Analysis as = classify(ts, nullptr, o);
  const PeOwn& waited = as.pe_own[1 * ts.nodes().size() + find(ts, as, "bar").node];
  EXPECT_NEAR(in(waited, Class::LossOfParallelism), 50, 1e-9);
  EXPECT_NEAR(in(waited, Class::Synchronization), 0, 1e-9);
}

TEST(Classify, SerialRegionIsUnparallelizedLoss) {
  Builder b;
  uint32_t serial = b.region(RegionKind::User, "serial");
  uint32_t t0 = b.thread(true, 100);
  b.thread(false, 90);
  b.thread(false, 90);
  b.thread(false, 90);
  b.node(t0, 0, serial, {{"time", 40}, {"visits", 1}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& r = find(t, a, "serial");
  EXPECT_NEAR(r.t_o * 1e3, 30, 1e-9);  // 40 - 40/4
  EXPECT_NEAR(sub(r, "loss_of_parallelism.unparallelized"), 30, 1e-9);
  // At the program level: worker roots idle 90 each (no parallel region): loss, plus 10 ms
  // each before they existed.
  EXPECT_NEAR(cls(a.regions[0], Class::LossOfParallelism), (3 * 100) / 4.0, 1e-9);
}

TEST(Classify, BarrierAfterSingleIsPartialParallelism) {
  Builder b;
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t single = b.region(RegionKind::Single, "single");
  uint32_t bar = b.region(RegionKind::BarrierImplicit, "bar");
  uint32_t t0 = b.thread(true, 50), t1 = b.thread(false, 50), t2 = b.thread(false, 50);
  uint32_t p0 = b.node(t0, 0, par, {{"time", 50}, {"team_size", 3}, {"visits", 1}});
  b.node(t0, p0, single, {{"time", 50}, {"executed", 1}, {"visits", 1}});
  b.node(t0, p0, bar, {{"time", 0}, {"visits", 1}});
  for (uint32_t th : {t1, t2}) {
    uint32_t p = b.node(th, 0, par, {{"time", 50}, {"visits", 1}});
    b.node(th, p, single, {{"time", 0}, {"visits", 1}});
    b.node(th, p, bar, {{"time", 50}, {"wait", 50}, {"visits", 1}});
  }
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& p = find(t, a, "par");
  EXPECT_NEAR(sub(p, "loss_of_parallelism.partially_parallelized"), 100 / 3.0, 1e-9);
  EXPECT_NEAR(cls(p, Class::Synchronization), 0, 1e-9);
}

TEST(Classify, LockWaitIsSynchronizationHoldIsWork) {
  Builder b;
  uint32_t lock = b.region(RegionKind::Lock, "lk");
  uint32_t t0 = b.thread(true, 30), t1 = b.thread(false, 30);
  b.node(t0, 0, lock, {{"time", 10}, {"wait", 0}, {"visits", 1}});
  b.node(t1, 0, lock, {{"time", 20}, {"wait", 10}, {"visits", 1}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& r = find(t, a, "lk");
  EXPECT_NEAR(r.useful_pe * 1e3, 20, 1e-9);
  EXPECT_NEAR(sub(r, "synchronization.lock"), 5, 1e-9);  // 10 ms wait / 2
}

TEST(Classify, ReferenceRevealsReplicatedAndExtraWork) {
  Builder ref;
  uint32_t rset = ref.region(RegionKind::User, "setup");
  uint32_t rt = ref.thread(true, 100);
  ref.node(rt, 0, rset, {{"time", 20}, {"visits", 1}});
  Builder run;
  uint32_t set = run.region(RegionKind::User, "setup");
  uint32_t pack = run.region(RegionKind::User, "pack");
  for (int r = 0; r < 4; ++r) {
    uint32_t th = run.thread(true, 40, r);
    run.node(th, 0, set, {{"time", 20}, {"visits", 1}});  // every rank repeats setup
    run.node(th, 0, pack, {{"time", 5}, {"visits", 1}});  // only the parallel version packs
  }
  drg::MergedTree rt_tree(ref.experiment()), t(run.experiment());
  Analysis a = classify(t, &rt_tree);
  expect_identity(a);
  const auto& s = find(t, a, "setup");
  EXPECT_FALSE(s.t_s_estimated);
  EXPECT_NEAR(s.t_o * 1e3, 20 - 20 / 4.0, 1e-9);
  EXPECT_NEAR(sub(s, "loss_of_parallelism.replicated"), 60 / 4.0, 1e-9);
  EXPECT_NEAR(cls(s, Class::Unidentified), 0, 1e-9);
  const auto& pk = find(t, a, "pack");
  EXPECT_NEAR(pk.t_o * 1e3, 5, 1e-9);
  EXPECT_NEAR(cls(pk, Class::AdditionalComputation), 20 / 4.0, 1e-9);
}

TEST(Classify, SuperlinearShowsAsNegativeUnidentified) {
  Builder ref;
  uint32_t rl = ref.region(RegionKind::Loop, "loop");
  uint32_t rt = ref.thread(true, 100);
  ref.node(rt, 0, rl, {{"time", 100}, {"iterations", 1000}, {"visits", 1}});
  Builder run;
  uint32_t l = run.region(RegionKind::Loop, "loop");
  for (int i = 0; i < 2; ++i) {
    uint32_t th = run.thread(i == 0, 40);
    run.node(th, 0, l, {{"time", 40}, {"iterations", 1000}, {"visits", 1}});  // 80 < 100: cache
  }
  drg::MergedTree rtree(ref.experiment()), t(run.experiment());
  Analysis a = classify(t, &rtree);
  expect_identity(a);
  const auto& r = find(t, a, "loop");
  EXPECT_NEAR(r.t_o * 1e3, 40 - 50, 1e-9);
  EXPECT_NEAR(cls(r, Class::Unidentified), -10, 1e-9);
  EXPECT_NEAR(r.speedup, 2.5, 1e-9);
}

TEST(Classify, RegionsMissingFromEitherRun) {
  Builder ref;
  uint32_t rold = ref.region(RegionKind::User, "old");
  uint32_t rt = ref.thread(true, 100);
  ref.node(rt, 0, rold, {{"time", 30}, {"visits", 1}});
  Builder run;
  uint32_t nw = run.region(RegionKind::User, "new");
  uint32_t t0 = run.thread(true, 50);
  run.thread(false, 50);
  run.node(t0, 0, nw, {{"time", 10}, {"visits", 1}});
  drg::MergedTree rtree(ref.experiment()), t(run.experiment());
  Analysis a = classify(t, &rtree);
  expect_identity(a);
  const auto& n = find(t, a, "new");
  EXPECT_FALSE(n.in_reference);
  EXPECT_NEAR(n.t_o * 1e3, 10, 1e-9);
  EXPECT_NEAR(cls(n, Class::AdditionalComputation), 5, 1e-9);
  EXPECT_NEAR(sub(n, "loss_of_parallelism.unparallelized"), 5, 1e-9);
  ASSERT_EQ(a.only_in_reference.size(), 1u);
  EXPECT_NEAR(a.only_in_reference[0].t_o * 1e3, -15, 1e-9);
  EXPECT_NEAR(cls(a.only_in_reference[0], Class::AdditionalComputation), -15, 1e-9);
}

// A recursion one run took deeper than the other (the depth of a depth-first search by stolen
// tasks follows the schedule): the run's extra level of f, and the region below it, are not
// additional computation, and the reference's extra level of h is not a region "only in the
// reference"; a region new in the run and one gone from it still are.
TEST(Classify, DeeperRecursionIsNotAdditionalOrRemovedWork) {
  Builder ref;
  uint32_t rf = ref.region(RegionKind::User, "f"), rg = ref.region(RegionKind::User, "g"),
           rh = ref.region(RegionKind::User, "h"), rold = ref.region(RegionKind::User, "old");
  uint32_t rt = ref.thread(true, 100);
  uint32_t f1 = ref.node(rt, 0, rf, {{"time", 40}, {"visits", 1}});
  uint32_t f2 = ref.node(rt, f1, rf, {{"time", 20}, {"visits", 1}});
  ref.node(rt, f2, rg, {{"time", 5}, {"visits", 1}});
  uint32_t h1 = ref.node(rt, 0, rh, {{"time", 30}, {"visits", 1}});
  uint32_t h2 = ref.node(rt, h1, rh, {{"time", 20}, {"visits", 1}});
  ref.node(rt, h2, rh, {{"time", 10}, {"visits", 1}});
  ref.node(rt, 0, rold, {{"time", 6}, {"visits", 1}});
  Builder run;
  uint32_t f = run.region(RegionKind::User, "f"), g = run.region(RegionKind::User, "g"),
           h = run.region(RegionKind::User, "h"), nw = run.region(RegionKind::User, "new");
  uint32_t t0 = run.thread(true, 50);
  run.thread(false, 50);
  uint32_t n1 = run.node(t0, 0, f, {{"time", 20}, {"visits", 1}});
  uint32_t n2 = run.node(t0, n1, f, {{"time", 15}, {"visits", 1}});
  uint32_t n3 = run.node(t0, n2, f, {{"time", 8}, {"visits", 1}});  // deeper than the reference
  run.node(t0, n3, g, {{"time", 3}, {"visits", 1}});
  uint32_t m1 = run.node(t0, 0, h, {{"time", 15}, {"visits", 1}});
  run.node(t0, m1, h, {{"time", 10}, {"visits", 1}});  // the reference went one level deeper
  run.node(t0, 0, nw, {{"time", 4}, {"visits", 1}});
  drg::MergedTree rtree(ref.experiment()), t(run.experiment());
  Analysis a = classify(t, &rtree);
  expect_identity(a);
  // The third f and the g below it: the merged nodes at depth 3 and 4 of the f chain.
  uint32_t deep_f = format::kNoIndex, deep_g = format::kNoIndex;
  for (uint32_t n = 0; n < t.nodes().size(); ++n) {
    if (t.region_of(n).name == "f" && t.node(n).depth == 3) deep_f = n;
    if (t.region_of(n).name == "g") deep_g = n;
  }
  ASSERT_NE(deep_f, format::kNoIndex);
  ASSERT_NE(deep_g, format::kNoIndex);
  EXPECT_FALSE(a.regions[deep_f].in_reference);
  EXPECT_NEAR(cls(a.regions[deep_f], Class::AdditionalComputation), 0, 1e-9)
      << "a deeper level of f called extra work";
  EXPECT_NEAR(cls(a.regions[deep_g], Class::AdditionalComputation), 0, 1e-9)
      << "the region below a deeper level called extra work";
  EXPECT_GT(cls(find(t, a, "new"), Class::AdditionalComputation), 0) << "a new region is extra";
  ASSERT_EQ(a.only_in_reference.size(), 1u);
  const std::string& gone = a.only_in_reference[0].path;
  EXPECT_EQ(gone.substr(gone.rfind('/') + 1, 4), "old@") << gone;
  // The reference's third h, and its g below the second f (the run's g is below the third).
  EXPECT_EQ(a.recursion_only_in_reference, 2u);
}

// Three ranks spend 1, 2 and 3 ms in a collective; the message model allows `model_ms` of
// transfer on each (the collector's "transfer" metric).
Analysis collective_spread(Builder& b, double model_ms) {
  uint32_t ar = b.region(RegionKind::Mpi, "MPI_Allreduce", uint16_t(format::MpiClass::Collective));
  for (int r = 0; r < 3; ++r) {
    uint32_t th = b.thread(true, 10, r);
    b.node(th, 0, ar, {{"time", double(r + 1)}, {"transfer", model_ms}, {"visits", 1}});
  }
  return classify(drg::MergedTree(b.experiment()), nullptr);
}

TEST(Classify, CollectiveWaitingFromSpreadAcrossRanks) {
  Builder b;
  Analysis a = collective_spread(b, 5);
  expect_identity(a);
  const auto& r = a.regions[1];
  // Transfer: the fastest rank's 1 ms on each rank (the model allows more); waiting 0 + 1 + 2;
  // idle vs T_p: 2 + 1 + 0.
  EXPECT_NEAR(sub(r, "data_movement.mpi_collective"), 3 / 3.0, 1e-9);
  EXPECT_NEAR(sub(r, "synchronization.mpi_waiting"), 3 / 3.0, 1e-9);
  EXPECT_NEAR(sub(r, "synchronization.load_imbalance"), 3 / 3.0, 1e-9);
}

TEST(Classify, CollectiveTransferBoundedByTheMessageModel) {
  // Every rank waits in the call (the fastest one too): the model's 0.01 ms of transfer per rank
  // is all the data movement; the rest is waiting.
  Builder b;
  Analysis a = collective_spread(b, 0.01);
  expect_identity(a);
  const auto& r = a.regions[1];
  EXPECT_NEAR(sub(r, "data_movement.mpi_collective"), 0.03 / 3.0, 1e-9);
  EXPECT_NEAR(sub(r, "synchronization.mpi_waiting"), (6 - 0.03) / 3.0, 1e-9);
}

TEST(Classify, TaskTimeCountedWhereCreatedNotTwice) {
  // Thread 1 runs a 5 ms task created in thread 0's single, inside its barrier (6 ms).
  Builder b;
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t single = b.region(RegionKind::Single, "single");
  uint32_t task = b.region(RegionKind::Task, "task");
  uint32_t bar = b.region(RegionKind::BarrierImplicit, "bar");
  uint32_t t0 = b.thread(true, 6), t1 = b.thread(false, 6);
  uint32_t p0 = b.node(t0, 0, par, {{"time", 6}, {"team_size", 2}, {"visits", 1}});
  b.node(t0, p0, single, {{"time", 0}, {"tasks_created", 1}, {"visits", 1}});
  b.node(t0, p0, bar, {{"time", 6}, {"wait", 6}, {"visits", 1}});
  uint32_t p1 = b.node(t1, 0, par, {{"time", 6}, {"task_exec", 5}, {"visits", 1}});
  uint32_t s1 = b.node(t1, p1, single, {{"time", 0}, {"visits", 1}});
  b.node(t1, s1, task, {{"time", 5}, {"visits", 1}});
  b.node(t1, p1, bar, {{"time", 6}, {"wait", 1}, {"task_exec", 5}, {"visits", 1}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& p = find(t, a, "par");
  EXPECT_NEAR(p.useful_pe * 1e3, 5, 1e-9);  // the task, once
  // The single created the task that thread 1 ran: the barrier's waits are waiting for the
  // team's tasks (synchronization), not for a single body run by one thread.
  EXPECT_NEAR(sub(p, "synchronization.barrier"), (6 + 1) / 2.0, 1e-9);
  EXPECT_NEAR(sub(p, "loss_of_parallelism.partially_parallelized"), 0, 1e-9);
  EXPECT_NEAR(cls(p, Class::Unidentified), 0, 1e-9);
  // The single's row holds the task it created (thread 1 ran it): T_p 5 ms, all useful.
  const auto& s = find(t, a, "single");
  EXPECT_NEAR(s.t_p * 1e3, 5, 1e-9);
  EXPECT_NEAR(s.useful_pe * 1e3, 5, 1e-9);
  // The barrier's row holds its waits, not the task that ran inside it.
  const auto& bar_row = find(t, a, "bar");
  EXPECT_NEAR(bar_row.t_p * 1e3, 6, 1e-9);
  EXPECT_NEAR(bar_row.useful_pe, 0, 1e-12);
}

// ---- the reference is classified by the same rules ---------------------------------------------

TEST(Classify, ReferenceOverheadsAreSubtractedClassByClass) {
  // One rank against one rank: MPI_Init takes 250 ms in the run, 260 in the reference; 100 ms of
  // work in both. Nothing is an overhead of the run: start-up beyond the reference's is -10 ms.
  auto one_rank = [](double init_ms) {
    Builder b;
    uint32_t init = b.region(RegionKind::Mpi, "MPI_Init", uint16_t(format::MpiClass::Management));
    uint32_t th = b.thread(true, init_ms + 100, 0);
    b.node(th, 0, init, {{"time", init_ms}, {"visits", 1}});
    return b;
  };
  Builder run = one_rank(250), ref = one_rank(260);
  drg::MergedTree t(run.experiment()), rt(ref.experiment());
  Analysis a = classify(t, &rt);
  expect_identity(a);
  const auto& init = find(t, a, "MPI_Init");
  EXPECT_NEAR(init.t_o * 1e3, -10, 1e-9);
  EXPECT_NEAR(sub(init, "control_of_parallelism.startup"), -10, 1e-9);
  EXPECT_NEAR(cls(init, Class::Unidentified), 0, 1e-9);
  EXPECT_NEAR(sub(init, "control_of_parallelism.mpi_management"), 0, 1e-9);
  EXPECT_NEAR(cls(a.regions[0], Class::Unidentified), 0, 1e-9);
}

TEST(Classify, ReplicatedOnlyWhereTheWorkIsNotDivided) {
  // Reference: a user region and a loop of 40 ms each on one thread. Run on two threads: each
  // thread spends 40 ms in the user region (every thread runs it all: replicated) and 40 ms in
  // the loop (a worksharing loop ran slower: not replicated, unidentified).
  auto build = [](int threads, double per_thread_ms) {
    Builder b;
    uint32_t user = b.region(RegionKind::User, "setup");
    uint32_t par = b.region(RegionKind::Parallel, "par");
    uint32_t loop = b.region(RegionKind::Loop, "loop");
    for (int i = 0; i < threads; ++i) {
      uint32_t th = b.thread(i == 0, 80);
      uint32_t p = b.node(
          th, 0, par, {{"time", 80}, {"visits", 1}, {"team_size", i == 0 ? double(threads) : 0.0}});
      b.node(th, p, user, {{"time", per_thread_ms}, {"visits", 1}});
      b.node(th, p, loop, {{"time", per_thread_ms}, {"visits", 1}, {"iterations", 8}});
    }
    return b;
  };
  Builder run = build(2, 40), ref = build(1, 40);
  drg::MergedTree t(run.experiment()), rt(ref.experiment());
  Analysis a = classify(t, &rt);
  expect_identity(a);
  EXPECT_NEAR(sub(find(t, a, "setup"), "loss_of_parallelism.replicated"), 40 / 2.0, 1e-9);
  const auto& loop = find(t, a, "loop");
  EXPECT_NEAR(sub(loop, "loss_of_parallelism.replicated"), 0, 1e-9);
  EXPECT_NEAR(cls(loop, Class::Unidentified), 40 / 2.0, 1e-9);
}

TEST(Classify, ReplicatedCopiesThatRanSlowerAreNotAllReplication) {
  // The reference's 40 ms repeated on two ranks, one of which took 60 ms: one copy is useful, one
  // is replicated (40 ms), the 20 ms beyond it are unidentified.
  Builder run, ref;
  uint32_t w = run.region(RegionKind::User, "work"), rw = ref.region(RegionKind::User, "work");
  for (int r = 0; r < 2; ++r)
    run.node(run.thread(true, 60, r), 0, w, {{"time", r ? 60.0 : 40.0}, {"visits", 1}});
  ref.node(ref.thread(true, 40, 0), 0, rw, {{"time", 40}, {"visits", 1}});
  drg::MergedTree t(run.experiment()), rt(ref.experiment());
  Analysis a = classify(t, &rt);
  expect_identity(a);
  const auto& r = find(t, a, "work");
  EXPECT_NEAR(sub(r, "loss_of_parallelism.replicated"), 40 / 2.0, 1e-9);
  EXPECT_NEAR(cls(r, Class::Unidentified), 20 / 2.0, 1e-9);
}

TEST(Classify, RanksOwnCodeOfUnequalLengthIsNotReplicated) {
  // 4 ranks whose own code took 53 to 180 ms against a 1-rank reference's 68 ms (LULESH at 8 ranks,
  // docs/validation.md W4): each did its own part, not the reference's work again.
  Builder run, ref;
  const double own[] = {53, 90, 120, 180};
  for (int r = 0; r < 4; ++r) run.thread(true, own[r], r);
  ref.thread(true, 68, 0);
  drg::MergedTree t(run.experiment()), rt(ref.experiment());
  Analysis a = classify(t, &rt);
  expect_identity(a);
  EXPECT_NEAR(sub(a.regions[0], "loss_of_parallelism.replicated"), 0, 1e-9);
}

TEST(Classify, ReplicatedWorkInTheProgramsOwnCode) {
  // MPI ranks doing their work in main, with no regions: each repeats the reference's 50 ms.
  Builder run, ref;
  for (int r = 0; r < 4; ++r) run.thread(true, 50, r);
  ref.thread(true, 50, 0);
  drg::MergedTree t(run.experiment()), rt(ref.experiment());
  Analysis a = classify(t, &rt);
  expect_identity(a);
  EXPECT_NEAR(sub(a.regions[0], "loss_of_parallelism.replicated"), 3 * 50 / 4.0, 1e-9);
}

TEST(Classify, ParallelRegionOwnCodeBetweenManySmallConstructsIsControl) {
  // A parallel region whose own code (1 ms) only reaches 1,000 tiny loops: 1 us per construct.
  Builder b;
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t loop = b.region(RegionKind::Loop, "loop");
  uint32_t th = b.thread(true, 11);
  uint32_t p = b.node(th, 0, par, {{"time", 11}, {"visits", 1}, {"team_size", 1}});
  b.node(th, p, loop, {{"time", 10}, {"visits", 1000}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  EXPECT_NEAR(sub(find(t, a, "par"), "control_of_parallelism.scheduling"), 1, 1e-9);
}

TEST(Classify, LaunchSkewIsStartupNotSerialCode) {
  // Rank 1 started 50 ms after rank 0; rank 0 waits for it in MPI_Init (60 ms, rank 1 10 ms).
  Builder b;
  uint32_t init = b.region(RegionKind::Mpi, "MPI_Init", uint16_t(format::MpiClass::Management));
  uint32_t r0 = b.thread(true, 160, 0), r1 = b.thread(true, 110, 1);
  b.node(r0, 0, init, {{"time", 60}, {"visits", 1}});
  b.node(r1, 0, init, {{"time", 10}, {"visits", 1}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& root = a.regions[0];
  EXPECT_NEAR(sub(root, "loss_of_parallelism.unparallelized"), 0, 1e-9);
  // Rank 0's 60 ms in MPI_Init, rank 1's 10, and rank 1's 50 ms before it started: start-up.
  EXPECT_NEAR(sub(root, "control_of_parallelism.startup"), (60 + 10 + 50) / 2.0, 1e-9);
  const auto& i = find(t, a, "MPI_Init");
  EXPECT_NEAR(sub(i, "synchronization.load_imbalance"), 0, 1e-9);
  EXPECT_NEAR(sub(i, "control_of_parallelism.startup"), (60 + 10 + 50) / 2.0, 1e-9);
}

TEST(Classify, OneRankHasNoPartnerToWaitFor) {
  // A rank sending to itself: the message model called 8 of its 10 ms waiting.
  Builder b;
  uint32_t sr = b.region(RegionKind::Mpi, "MPI_Sendrecv", uint16_t(format::MpiClass::P2P));
  uint32_t th = b.thread(true, 20, 0);
  b.node(th, 0, sr, {{"time", 10}, {"wait", 8}, {"transfer", 2}, {"visits", 100}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& r = find(t, a, "MPI_Sendrecv");
  EXPECT_NEAR(sub(r, "synchronization.mpi_waiting"), 0, 1e-9);
  EXPECT_NEAR(sub(r, "data_movement.mpi_p2p"), 10, 1e-9);
}

TEST(Classify, ThreadsStartedByTheRuntimeAfterSerialCode) {
  // The OpenMP runtime started 30 ms into the initial thread's 100 ms, the worker began at 40 ms:
  // 30 ms of serial code (loss) and 10 ms of the runtime starting (control).
  Builder b;
  b.experiment().meta = {{"openmp", {{"runtime_init_s", 0.030}}}};
  b.thread(true, 100);
  b.thread(false, 60);
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  EXPECT_NEAR(sub(a.regions[0], "control_of_parallelism.startup"), 10 / 2.0, 1e-9);
  // The worker's 60 ms at its root outside parallel regions are idle too.
  EXPECT_NEAR(sub(a.regions[0], "loss_of_parallelism.unparallelized"), (30 + 60) / 2.0, 1e-9);
}

TEST(Classify, ThreadsCreatedByLaterForksWereAbsentFromASmallerTeam) {
  // 100 ms: an API call started the runtime at 5 ms (ready at 6), serial code until the first
  // parallel region forked at 40 ms; its worker started at 42. A nested region forked at 70 ms
  // and created one more thread, which started at 71.
  Builder b;
  b.experiment().meta = {
      {"openmp", {{"runtime_init_s", 0.005}, {"runtime_ready_s", 0.006}, {"init_by_fork", false}}},
      {"affinity",
       {{"threads",
         {{{"index", 0}, {"created_s", nullptr}},
          {{"index", 1}, {"created_s", 0.040}},
          {{"index", 2}, {"created_s", 0.070}}}}}}};
  b.thread(true, 100);
  b.thread(false, 58);
  b.thread(false, 29);
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& root = a.regions[0];
  // Thread 1: 42 ms absent: 2 of creation and 1 of the runtime's initialization (start-up), 39 of
  // serial code. Thread 2: 71 ms: 1 of creation, 1 of initialization, 39 serial, 30 with a smaller
  // team. (Their roots' own time, outside parallel regions, is idle too: 58 + 29.)
  EXPECT_NEAR(sub(root, "control_of_parallelism.startup"), (3 + 2) / 3.0, 1e-9);
  EXPECT_NEAR(sub(root, "loss_of_parallelism.partially_parallelized"), 30 / 3.0, 1e-9);
  EXPECT_NEAR(sub(root, "loss_of_parallelism.unparallelized"), (39 + 39 + 58 + 29) / 3.0, 1e-9);
}

TEST(Classify, TheFirstForkStartingTheRuntimeIsAllStartup) {
  // A parallel construct started the runtime at 10 ms; its fork began at 13, the worker at 14.
  Builder b;
  b.experiment().meta = {
      {"openmp", {{"runtime_init_s", 0.010}, {"runtime_ready_s", 0.011}, {"init_by_fork", true}}},
      {"affinity",
       {{"threads",
         {{{"index", 0}, {"created_s", nullptr}}, {{"index", 1}, {"created_s", 0.013}}}}}}};
  b.thread(true, 50);
  b.thread(false, 36);
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  EXPECT_NEAR(sub(a.regions[0], "control_of_parallelism.startup"), 4 / 2.0, 1e-9);
  EXPECT_NEAR(sub(a.regions[0], "loss_of_parallelism.unparallelized"), (10 + 36) / 2.0, 1e-9);
}

TEST(Classify, ThreadsIdleInTheirRanksMpiStartupAreStartupNotSerialCode) {
  // 100 ms: MPI_Init_thread 30 ms, 5 ms of serial code, a parallel region of 40 ms whose fork
  // created the worker at 35 ms, 5 ms of serial code, MPI_Finalize 20 ms. The worker did not exist
  // during MPI_Init_thread and idled at its root during MPI_Finalize: start-up, as those calls'
  // own rows count it, not serial code; only the 5 + 5 ms of real serial code are loss.
  Builder b;
  b.experiment().meta = {
      {"openmp", {{"runtime_init_s", 0.035}, {"init_by_fork", true}}},
      {"affinity",
       {{"threads",
         {{{"index", 0}, {"created_s", nullptr}}, {{"index", 1}, {"created_s", 0.035}}}}}}};
  uint32_t init = b.region(RegionKind::Mpi, "MPI_Init_thread");
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t fin = b.region(RegionKind::Mpi, "MPI_Finalize");
  uint32_t t0 = b.thread(true, 100), t1 = b.thread(false, 65);
  b.node(t0, 0, init, {{"time", 30}, {"visits", 1}});
  b.node(t0, 0, par, {{"time", 40}, {"team_size", 2}, {"visits", 1}});
  b.node(t0, 0, fin, {{"time", 20}, {"visits", 1}});
  b.node(t1, 0, par, {{"time", 40}, {"visits", 1}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& root = a.regions[0];
  // The calls' own 30 + 20 ms on the initial thread and the worker's 30 + 20 ms beside them.
  EXPECT_NEAR(sub(root, "control_of_parallelism.startup"), (50 + 50) / 2.0, 1e-9);
  EXPECT_NEAR(sub(root, "loss_of_parallelism.unparallelized"), (5 + 5) / 2.0, 1e-9);
  EXPECT_NEAR(sub(find(t, a, "MPI_Finalize"), "control_of_parallelism.startup"), (20 + 20) / 2.0,
              1e-9);
}

TEST(Classify, WorkerHoldingOnlyThePathIsIdleInTheSerialPart) {
  // A user region on the master (100 ms): 40 ms serial, then a parallel region of 60 ms in which
  // both threads work 50 ms (fork 5, join 5 on the master; the worker starts 5 ms late and ends
  // at the release). The worker's copy of the user region was never entered (visits 0).
  Builder b;
  uint32_t user = b.region(RegionKind::User, "compute");
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t t0 = b.thread(true, 100), t1 = b.thread(false, 100);
  uint32_t u0 = b.node(t0, 0, user, {{"time", 100}, {"visits", 1}});
  b.node(t0, u0, par, {{"time", 60}, {"fork", 5}, {"join", 5}, {"team_size", 2}, {"visits", 1}});
  uint32_t u1 = b.node(t1, 0, user, {{"time", 0}, {"visits", 0}});
  b.node(t1, u1, par, {{"time", 55}, {"fork", 5}, {"visits", 1}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& u = find(t, a, "compute");
  EXPECT_EQ(u.pes_ran, 1u);
  // U: the master's 40 serial + 50 in the parallel region (60 - fork - join), the worker's 55.
  EXPECT_NEAR(u.useful_pe * 1e3, 145, 1e-9);
  // The worker is idle 40 ms in the serial part (loss) and 5 ms before its implicit task began
  // (fork, control); nothing is counted twice.
  EXPECT_NEAR(sub(u, "loss_of_parallelism.unparallelized"), 40 / 2.0, 1e-9);
  EXPECT_NEAR(sub(u, "control_of_parallelism.fork_join"), (10 + 5) / 2.0, 1e-9);
  EXPECT_NEAR(cls(u, Class::Unidentified), 0, 1e-9);
  EXPECT_NEAR(cls(a.regions[0], Class::Unidentified), 0, 1e-9);
  EXPECT_GT(a.program.load_balance, 0);
}

TEST(Classify, AWorkerOutsideItsRegionsIsLateOrNotInTheTeamNotSerial) {
  // The initial thread (100 ms): 10 ms of serial code, a parallel region of 80 ms the worker ran
  // for 60 of them (it started 10 ms after the fork and ended 10 ms before the join), a region of
  // 10 ms with a team of one. The worker's 40 ms at the root are 20 late (fork/join), 10 in the
  // smaller team and 10 of serial code: not 40 of serial code.
  Builder b;
  uint32_t par = b.region(RegionKind::Parallel, "par");
  uint32_t par2 = b.region(RegionKind::Parallel, "par2");
  uint32_t t0 = b.thread(true, 100), t1 = b.thread(false, 100);
  b.node(t0, 0, par, {{"time", 80}, {"fork", 1}, {"join", 1}, {"team_size", 2}, {"visits", 1}});
  b.node(t0, 0, par2, {{"time", 10}, {"fork", 1}, {"join", 1}, {"team_size", 1}, {"visits", 1}});
  b.node(t1, 0, par, {{"time", 60}, {"visits", 1}});
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& root = a.regions[0];
  // In PE-ms: fork and join 2 + 2 on the initial thread, 20 late, 10 not in the team, 10 serial.
  EXPECT_NEAR(sub(root, "control_of_parallelism.fork_join"), (2 + 2 + 20) / 2.0, 1e-9);
  EXPECT_NEAR(sub(root, "loss_of_parallelism.partially_parallelized"), 10 / 2.0, 1e-9);
  EXPECT_NEAR(sub(root, "loss_of_parallelism.unparallelized"), 10 / 2.0, 1e-9);
  EXPECT_NEAR(cls(root, Class::Unidentified), 0, 1e-9);
}

TEST(Classify, WaitForSerialWorkOnOnePeIsLoss) {
  // Rank 0 computes 30 ms alone (region "solo"), then every rank enters MPI_Bcast: ranks 1 and 2
  // wait 30 ms there. A late arrival at MPI_Barrier after a rank's own code stays synchronization.
  Builder b;
  uint32_t solo = b.region(RegionKind::User, "solo");
  uint32_t bc = b.region(RegionKind::Mpi, "MPI_Bcast", uint16_t(format::MpiClass::Collective));
  for (int r = 0; r < 3; ++r) {
    uint32_t th = b.thread(true, 31, r);
    if (r == 0) b.node(th, 0, solo, {{"time", 30}, {"visits", 1}});
    b.node(th, 0, bc, {{"time", r == 0 ? 1.0 : 31.0}, {"transfer", 1}, {"visits", 1}});
  }
  drg::MergedTree t(b.experiment());
  Analysis a = classify(t, nullptr);
  expect_identity(a);
  const auto& root = a.regions[0];
  EXPECT_NEAR(sub(root, "loss_of_parallelism.unparallelized"), 2 * 30 / 3.0, 1e-9);
  EXPECT_NEAR(sub(root, "synchronization.mpi_waiting"), 0, 1e-9);
}

// The passes over the PEs split the work between workers without changing the order of any sum:
// every number must be the same, bit for bit, whatever the number of workers.
// Six ranks of three threads, 40 random nodes each: every kind of PE-time the passes split.
Builder random_ranks() {
  Builder b;
  std::vector<uint32_t> regions = {
      b.region(RegionKind::Parallel, "par"),
      b.region(RegionKind::Loop, "loop"),
      b.region(RegionKind::BarrierImplicit, "bar"),
      b.region(RegionKind::Single, "single"),
      b.region(RegionKind::Critical, "crit"),
      b.region(RegionKind::User, "user"),
      b.region(RegionKind::Mpi, "MPI_Allreduce", uint16_t(format::MpiClass::Collective)),
      b.region(RegionKind::Task, "task")};
  uint64_t seed = 88172645463325252ull;
  auto rnd = [&](uint64_t n) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed % n;
  };
  for (int rank = 0; rank < 6; ++rank) {
    for (int th = 0; th < 3; ++th) {
      uint32_t t = b.thread(th == 0, 500 + double(rnd(100)), rank);
      // Each thread adds its nodes in its own order, so the merged node numbers of later threads
      // are not in node order; some nodes were never entered (visits 0): paths only held.
      std::vector<uint32_t> nodes{0};
      for (int i = 0; i < 40; ++i) {
        uint32_t parent = nodes[rnd(nodes.size())];
        uint32_t region = regions[rnd(regions.size())];
        double visits = rnd(5) == 0 ? 0 : double(1 + rnd(9));
        double time = double(rnd(400)) + 0.5;
        // time_sumsq: a column of floating-point numbers, whose sums depend on their order.
        nodes.push_back(b.node(t, parent, region,
                               {{"time", time},
                                {"time_sumsq", time * time * 0.1},
                                {"visits", visits},
                                {"wait", double(rnd(50))},
                                {"fork", double(rnd(5))},
                                {"join", double(rnd(5))},
                                {"team_size", double(rnd(2) * 3)},
                                {"task_exec", double(rnd(3))},
                                {"iterations", double(rnd(100))}}));
      }
    }
  }
  return b;
}

// The file name of rank file i of an experiment RankFilesOnDisk wrote.
std::string rank_file_name(size_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%06zu.sdrg", i);
  return name;
}

// The two trees are the same node for node, with the same values bit for bit.
void expect_same_tree(const drg::MergedTree& a, const drg::MergedTree& b) {
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (uint32_t n = 0; n < a.nodes().size(); ++n) {
    EXPECT_EQ(a.node(n).parent, b.node(n).parent);
    EXPECT_EQ(a.node(n).region, b.node(n).region);
    EXPECT_EQ(a.node(n).children, b.node(n).children);
    EXPECT_EQ(a.holders(n), b.holders(n));
    for (int m = 0; m < int(a.experiment().metric_count()); ++m) {
      EXPECT_EQ(a.sum(n, m), b.sum(n, m)) << a.experiment().metrics[size_t(m)];
      EXPECT_EQ(a.max(n, m), b.max(n, m));
      EXPECT_EQ(a.min(n, m), b.min(n, m));
    }
  }
  EXPECT_EQ(a.experiment().threads.size(), b.experiment().threads.size());
  EXPECT_EQ(a.experiment().regions.size(), b.experiment().regions.size());
}

// Every number of the two analyses is the same, bit for bit.
void expect_same_numbers(const Analysis& a, const Analysis& b) {
  ASSERT_EQ(a.regions.size(), b.regions.size());
  for (size_t n = 0; n < a.regions.size(); ++n) {
    const RegionOverheads &x = a.regions[n], &y = b.regions[n];
    SCOPED_TRACE(x.path);
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.t_p, y.t_p);
    EXPECT_EQ(x.t_s, y.t_s);
    EXPECT_EQ(x.t_o, y.t_o);
    EXPECT_EQ(x.classes, y.classes);
    EXPECT_EQ(x.subclasses, y.subclasses);
    EXPECT_EQ(x.useful_pe, y.useful_pe);
    EXPECT_EQ(x.pes_ran, y.pes_ran);
    EXPECT_EQ(x.imbalance, y.imbalance);
    EXPECT_EQ(x.most_loaded, y.most_loaded);
    EXPECT_EQ(x.least_loaded, y.least_loaded);
    EXPECT_EQ(x.noise, y.noise);
    EXPECT_EQ(x.events_below, y.events_below);
  }
  EXPECT_EQ(a.program.load_balance, b.program.load_balance);
  EXPECT_EQ(a.program.communication_efficiency, b.program.communication_efficiency);
  EXPECT_EQ(a.program.computation_scalability, b.program.computation_scalability);
}

MachineModel test_machine() {
  MachineModel machine;
  machine.tool_cost_ns = {{"default", 40}, {"parallel", 300}, {"barrier", 100}};
  return machine;
}

TEST(Classify, WorkersGiveTheSameNumbersAsOne) {
  Builder b = random_ranks();
  MachineModel machine = test_machine();
  drg::MergedTree t(b.experiment());
  const MachineModel* none = nullptr;
  for (const MachineModel* m : {none, static_cast<const MachineModel*>(&machine)}) {
    Options one;
    one.threads = 1;
    one.machine = m;
    Analysis serial = classify(t, &t, one);
    for (unsigned workers : {2u, 3u, 7u}) {
      SCOPED_TRACE(std::to_string(workers) + " workers");
      Options many = one;
      many.threads = workers;
      expect_same_numbers(classify(t, &t, many), serial);
    }
  }
}

// An experiment of random_ranks() written as rank files, in a directory that goes with it.
struct RankFilesOnDisk {
  const test::TempDir tmp{"scalea-classify"};
  const std::string dir = tmp.path();
  explicit RankFilesOnDisk(const drg::Experiment& e) { drg::write_experiment(e, dir, true); }
};

void expect_by_file_as_in_memory(size_t keep_bytes) {
  Builder b = random_ranks();
  RankFilesOnDisk disk(b.experiment());
  drg::Experiment whole = drg::load_experiment(disk.dir);
  drg::RankFiles files(disk.dir);
  drg::MergedTree in_memory(whole), by_file(files, keep_bytes);
  ASSERT_EQ(by_file.nodes().size(), in_memory.nodes().size());
  const int time = whole.metric("time");
  for (uint32_t n = 0; n < in_memory.nodes().size(); ++n) {
    EXPECT_EQ(by_file.holders(n), in_memory.holders(n));
    EXPECT_EQ(by_file.sum(n, time), in_memory.sum(n, time));
    EXPECT_EQ(by_file.max(n, time), in_memory.max(n, time));
    EXPECT_EQ(by_file.min(n, time), in_memory.min(n, time));
    EXPECT_EQ(by_file.per_thread(n, time), in_memory.per_thread(n, time));
    EXPECT_EQ(by_file.per_rank(n, time), in_memory.per_rank(n, time));
  }
  MachineModel machine = test_machine();
  Options options;
  options.machine = &machine;
  expect_same_numbers(classify(by_file, &by_file, options),
                      classify(in_memory, &in_memory, options));
}

// The analysis of an experiment read one rank file at a time (drg::RankFiles) is the analysis
// of the experiment in memory: the same sums in the same order, whether the tree keeps every
// file's threads after its first pass, none (every pass reads the files again) or some.
TEST(Classify, ReadByFileGivesTheSameNumbersAsInMemory) {
  for (size_t keep : {drg::MergedTree::kKeepBytes, size_t(0), size_t(6000)}) {
    SCOPED_TRACE("keep_bytes " + std::to_string(keep));
    expect_by_file_as_in_memory(keep);
  }
}

// The processes of an MPI job played by threads: gather and broadcast meet at a barrier.
class ThreadJob {
 public:
  explicit ThreadJob(int size) : size_(size), slots_(static_cast<size_t>(size)) {}
  int size() const { return size_; }

  class Member : public Share {
   public:
    Member(ThreadJob& job, int rank) : job_(job), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return job_.size_; }
    std::vector<std::vector<char>> gather(const std::vector<char>& mine) override {
      job_.slots_[size_t(rank_)] = mine;
      job_.meet();
      std::vector<std::vector<char>> out;
      if (rank_ == 0) out = job_.slots_;
      job_.meet();
      return out;
    }
    std::vector<char> broadcast(const std::vector<char>& bytes) override {
      if (rank_ == 0) job_.root_ = bytes;
      job_.meet();
      std::vector<char> out = job_.root_;
      job_.meet();
      return out;
    }

   private:
    ThreadJob& job_;
    int rank_;
  };

  // Runs body(share) on `size` threads; returns what each returned.
  template <class R>
  std::vector<R> run(const std::function<R(Share&)>& body) {
    std::vector<R> out(static_cast<size_t>(size_));
    std::vector<std::thread> threads;
    for (int r = 0; r < size_; ++r)
      threads.emplace_back([&, r] {
        Member m(*this, r);
        out[size_t(r)] = body(m);
      });
    for (std::thread& t : threads) t.join();
    return out;
  }

 private:
  void meet() {
    std::unique_lock<std::mutex> lock(mutex_);
    uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
  }

  int size_;
  std::vector<std::vector<char>> slots_;
  std::vector<char> root_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

// Shared by several processes (each folding a block of the files; rank 0 combining the others'
// partials and doing their recorded additions in file order), the analysis is the serial one bit
// for bit, on every process, with more processes than files too.
TEST(Classify, SharedAmongProcessesGivesTheSerialNumbers) {
  Builder b = random_ranks();
  RankFilesOnDisk disk(b.experiment());
  drg::RankFiles files(disk.dir);
  drg::MergedTree tree(files);
  MachineModel machine = test_machine();
  Options options;
  options.machine = &machine;
  options.threads = 1;
  const Analysis serial = classify(tree, &tree, options);
  for (int size : {1, 2, 3, int(tree.batches()) + 2}) {
    SCOPED_TRACE(std::to_string(size) + " processes");
    ThreadJob job(size);
    std::vector<Analysis> shared = job.run<Analysis>([&](Share& share) {
      // A process of its own opens its block of the files itself, the others theirs.
      drg::Team team = team_of(share);
      drg::RankFiles own_files(disk.dir, {}, &team);
      drg::MergedTree own_tree(own_files);
      expect_same_tree(own_tree, tree);
      Options mine = options;
      mine.share = &share;
      Analysis a = classify(own_tree, &own_tree, mine);
      finish(share);
      return a;
    });
    for (const Analysis& a : shared) expect_same_numbers(a, serial);
  }
}

// Opens the experiment in `dir` with `processes` processes and builds its tree: how many times
// each process read each file (by name).
std::vector<std::map<std::string, int>> reads_opening_together(const std::string& dir,
                                                               int processes) {
  ThreadJob job(processes);
  return job.run<std::map<std::string, int>>([&](Share& share) {
    std::map<std::string, int> count;
    auto reader = [&](const std::string& path) {
      ++count[std::filesystem::path(path).filename().string()];
      std::ifstream in(path, std::ios::binary);
      return std::vector<char>(std::istreambuf_iterator<char>(in), {});
    };
    drg::Team team = team_of(share);
    drg::RankFiles own_files(dir, {}, reader, &team);
    drg::MergedTree own_tree(own_files);
    finish(share);
    return count;
  });
}

// Files read through a reader that counts nothing: as reads_opening_together opens them.
drg::RankFiles opened_by_reader(const std::string& dir) {
  auto reader = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  };
  return drg::RankFiles(dir, {}, reader);
}

// Opened together, each process reads its block of the rank files only (and the definitions).
TEST(Share, EachProcessOpensItsBlockOfFilesOnly) {
  Builder b = random_ranks();
  RankFilesOnDisk disk(b.experiment());
  const drg::RankFiles all = opened_by_reader(disk.dir);
  std::vector<std::map<std::string, int>> reads = reads_opening_together(disk.dir, 4);
  size_t covered = 0;
  for (int rank = 0; rank < 4; ++rank) {
    std::set<std::string> expected = {"meta.json", "definitions.sdrg"}, read;
    auto [first, last] = all.block_of(rank, 4);
    EXPECT_EQ(first, covered) << "rank " << rank << ": blocks follow each other in file order";
    covered = last;
    for (size_t f = first; f < last; ++f) expected.insert(rank_file_name(f));
    for (const auto& [name, times] : reads[size_t(rank)]) read.insert(name);
    EXPECT_EQ(read, expected) << "rank " << rank;
  }
  EXPECT_EQ(covered, all.files());
}

// On disk the files' sizes are known (stat): the processes open blocks of about equal bytes, so
// a rank with many threads (a large file) is a block of its own; the tree is the serial one.
TEST(Share, OnDiskBlocksAreOfAboutEqualBytes) {
  Builder b;
  const uint32_t work = b.region(RegionKind::User, "work");
  for (int rank = 0; rank < 4; ++rank)
    for (int k = 0; k < (rank == 0 ? 12 : 1); ++k) {
      uint32_t t = b.thread(k == 0, 10, rank);
      b.node(t, 0, work, {{"time", 5}, {"visits", 1}});
    }
  RankFilesOnDisk disk(b.experiment());
  drg::RankFiles files(disk.dir);
  drg::MergedTree tree(files);
  ASSERT_EQ(files.files(), 4u);
  EXPECT_EQ(files.block_of(0, 2), (std::pair<size_t, size_t>(0, 1))) << "the large file alone";
  EXPECT_EQ(files.block_of(1, 2), (std::pair<size_t, size_t>(1, 4)));
  ThreadJob job(2);
  std::vector<std::pair<size_t, size_t>> blocks =
      job.run<std::pair<size_t, size_t>>([&](Share& share) {
        drg::Team team = team_of(share);
        drg::RankFiles own_files(disk.dir, {}, &team);
        drg::MergedTree own_tree(own_files);
        expect_same_tree(own_tree, tree);
        finish(share);
        return own_files.block();
      });
  EXPECT_EQ(blocks[0], files.block_of(0, 2));
  EXPECT_EQ(blocks[1], files.block_of(1, 2));
}

// A process reads the files of its block only: twice in format version 3 (the opening reads
// the threads' structure and skips their values, the tree reads the values), once in older
// versions (the threads the opening parsed serve the tree); the settling reads none again (but
// for the outlined bodies where there are any).
TEST(Share, EachProcessReadsItsBlockOnly) {
  Builder b = random_ranks();
  RankFilesOnDisk disk(b.experiment());
  for (const auto& count : reads_opening_together(disk.dir, 2))
    for (const auto& [name, times] : count)
      if (name.rfind("rank-", 0) == 0) EXPECT_EQ(times, 2) << name;
}

// Sums of whole numbers beyond 2^53 round at each addition, so adding them by blocks would differ
// from adding them one after the other: the tree is then made from every file, as serially.
TEST(Share, WholeNumberSumsBeyondExactnessAreAddedInFileOrder) {
  Builder b;
  const uint32_t work = b.region(RegionKind::User, "work");
  for (int rank = 0; rank < 6; ++rank) {
    uint32_t t = b.thread(true, 10, rank);
    // 2^53 + 1 rounds to 2^53 serially, each time; the 1s of a block add up to 3 first.
    b.node(t, 0, work, {{"time", 5}, {"visits", rank == 0 ? 9007199254740992.0 : 1.0}});
  }
  RankFilesOnDisk disk(b.experiment());
  drg::RankFiles files(disk.dir);
  drg::MergedTree tree(files);
  const int visits = files.definitions().metric("visits");
  ASSERT_EQ(tree.sum(1, visits), 9007199254740992.0);
  ThreadJob job(2);
  job.run<int>([&](Share& share) {
    drg::Team team = team_of(share);
    drg::RankFiles own_files(disk.dir, {}, &team);
    drg::MergedTree own_tree(own_files);
    expect_same_tree(own_tree, tree);
    finish(share);
    return 0;
  });
}

// Rank files with definitions of their own (regions unified in file order) are opened whole by
// every process, and the tree is the serial one.
TEST(Share, FilesWithTheirOwnDefinitionsAreOpenedWholeByEveryProcess) {
  Builder b = random_ranks();
  RankFilesOnDisk disk(b.experiment());
  std::filesystem::remove_all(disk.dir);
  drg::write_experiment(b.experiment(), disk.dir, false);
  drg::RankFiles files(disk.dir);
  drg::MergedTree tree(files);
  ThreadJob job(3);
  std::vector<size_t> opened = job.run<size_t>([&](Share& share) {
    drg::Team team = team_of(share);
    drg::RankFiles own_files(disk.dir, {}, &team);
    drg::MergedTree own_tree(own_files);
    expect_same_tree(own_tree, tree);
    finish(share);
    return own_files.block().second - own_files.block().first;
  });
  for (size_t n : opened) EXPECT_EQ(n, files.files());
}

// Opened together, the error is the one of the first bad file in file order, on every process,
// as when one process opens every file.
TEST(Share, OpeningTogetherFailsAtTheFirstBadFile) {
  Builder b = random_ranks();
  RankFilesOnDisk disk(b.experiment());
  for (size_t bad : {size_t(1), size_t(4)})  // in the blocks of rank 0 and rank 2 of 3
    std::filesystem::resize_file(disk.dir + "/" + rank_file_name(bad), 10);
  std::string serial;
  try {
    drg::RankFiles files(disk.dir);
  } catch (const drg::LoadError& e) {
    serial = e.what();
  }
  ASSERT_NE(serial.find(rank_file_name(1)), std::string::npos) << serial;
  ThreadJob job(3);
  std::vector<std::string> seen = job.run<std::string>([&](Share& share) -> std::string {
    drg::Team team = team_of(share);
    try {
      drg::RankFiles files(disk.dir, {}, &team);
    } catch (const drg::LoadError& e) {
      return e.what();
    }
    return "opened";
  });
  for (const std::string& s : seen) EXPECT_EQ(s, serial);
}

// A process that fails takes part in the step the others are at: every process learns its status
// and message, that of the lowest rank when several fail.
TEST(Share, AFailureReachesEveryProcess) {
  ThreadJob job(3);
  std::vector<std::string> seen = job.run<std::string>([](Share& share) -> std::string {
    try {
      if (share.rank() == 0) finish(share);
      fail(share, 2, "rank " + std::to_string(share.rank()) + " cannot read its file");
    } catch (const SharedFailure& f) {
      return std::to_string(f.status) + " " + f.what();
    }
    return "no failure";
  });
  for (const std::string& s : seen) EXPECT_EQ(s, "2 rank 1 cannot read its file");
}

TEST(Share, FilesGoInContiguousBlocksInFileOrder) {
  using drg::file_block;
  EXPECT_EQ(file_block(10, 0, 3), (std::pair<size_t, size_t>(0, 4)));
  EXPECT_EQ(file_block(10, 1, 3), (std::pair<size_t, size_t>(4, 7)));
  EXPECT_EQ(file_block(10, 2, 3), (std::pair<size_t, size_t>(7, 10)));
  EXPECT_EQ(file_block(2, 2, 3), (std::pair<size_t, size_t>(2, 2)));  // more processes than files
}

// By cost: blocks of about equal bytes, each file where its middle falls; without costs, by count.
TEST(Share, FilesGoInBlocksOfAboutEqualCost) {
  using drg::cost_block;
  using B = std::pair<size_t, size_t>;
  // One large file and three small ones: the large one alone, the small ones together.
  const std::vector<uint64_t> uneven = {900, 100, 100, 100};
  EXPECT_EQ(cost_block(uneven, 0, 2), B(0, 1));
  EXPECT_EQ(cost_block(uneven, 1, 2), B(1, 4));
  // Equal files: blocks in file order whose sizes differ by one file at most.
  const std::vector<uint64_t> equal(10, 7);
  size_t next = 0;
  for (int r = 0; r < 3; ++r) {
    B b = cost_block(equal, r, 3);
    EXPECT_EQ(b.first, next) << "rank " << r;
    EXPECT_TRUE(b.second - b.first == 3 || b.second - b.first == 4) << "rank " << r;
    next = b.second;
  }
  EXPECT_EQ(next, 10u);
  // More processes than files: some take none, at their place in file order.
  const std::vector<uint64_t> two = {5, 5};
  size_t at = 0;
  for (int r = 0; r < 5; ++r) {
    B b = cost_block(two, r, 5);
    EXPECT_EQ(b.first, at) << "rank " << r;
    EXPECT_LE(b.first, b.second);
    at = b.second;
  }
  EXPECT_EQ(at, 2u);
  EXPECT_EQ(cost_block({0, 0, 0}, 1, 2), drg::file_block(3, 1, 2)) << "no costs: by count";
  EXPECT_EQ(cost_block({}, 0, 2), B(0, 0));
}

TEST(Rules, EveryRuleIsDocumented) {
  for (const Rule& r : rules()) {
    EXPECT_FALSE(r.formula.empty()) << r.id;
    EXPECT_FALSE(r.reason.empty()) << r.id;
    if (!r.useful) EXPECT_FALSE(r.subclass.empty()) << r.id;
  }
}

}  // namespace
}  // namespace scalea::overheads

namespace scalea::overheads {
namespace {
TEST(Rules, EveryRuleAppearsInTheDocs) {
  std::ifstream in(SCALEA_SOURCE_DIR "/docs/overhead-model.md");
  ASSERT_TRUE(in) << "docs/overhead-model.md missing";
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const Rule& r : rules())
    EXPECT_NE(doc.find("`" + std::string(r.id) + "`"), std::string::npos)
        << r.id << " is not documented";
  // The rule table section is the table itself, as rule_table_markdown() writes it.
  std::string table = rule_table_markdown();
  EXPECT_NE(doc.find("\n" + table), std::string::npos)
      << "docs/overhead-model.md's rule table differs from the rules; replace it with:\n"
      << table;
}
}  // namespace
}  // namespace scalea::overheads

namespace scalea::overheads {
namespace {

// ---- call-path keys (overheads/keys.hpp) --------------------------------------------------------

// A random tree of `nodes` nodes on one thread, its regions drawn from `names` (so paths repeat
// across trees and prefixes of names meet at every level); no region twice under one parent.
Builder random_tree(uint32_t seed, uint32_t nodes, const std::vector<std::string>& names,
                    const std::vector<const char*>& functions = {"f"}) {
  Builder b;
  std::vector<uint32_t> regions;
  // Regions of one name differ in their function only (same file and line).
  for (const std::string& n : names)
    for (const char* fn : functions) {
      uint32_t r = b.region(RegionKind::User, n);
      b.experiment().regions[r].line = 7;
      b.experiment().regions[r].function = fn;
      regions.push_back(r);
    }
  uint32_t t = b.thread(true, 1);
  std::set<std::pair<uint32_t, uint32_t>> used;
  uint64_t x = seed * 2654435761u + 1;
  auto next = [&](uint32_t bound) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t((x >> 33) % bound);
  };
  for (uint32_t count = 1, tries = 0; count < nodes && tries < 100 * nodes; ++tries) {
    uint32_t parent = next(count), region = regions[next(uint32_t(regions.size()))];
    if (!used.insert({parent, region}).second) continue;
    b.node(t, parent, region, {{"time", 1}, {"visits", 1}});
    ++count;
  }
  return b;
}

// The string key the analyses used before keys were interned: "" for the root, then "/" and the
// region's canonical key for every level.
std::vector<std::string> string_keys(const drg::MergedTree& t) {
  std::vector<std::string> out(t.nodes().size());
  for (uint32_t n : t.preorder())
    if (n != 0) out[n] = out[t.node(n).parent] + "/" + drg::region_key(t.region_of(n));
  return out;
}

const std::vector<std::string> kNames = {"a", "ab", "a-", "a0", "b", "a.b", "ab0", "z", "a b"};

TEST(CallPathKeys, EqualKeysExactlyForEqualPathsAcrossTrees) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    Builder b1 = random_tree(seed, 200, kNames), b2 = random_tree(seed + 100, 200, kNames);
    drg::MergedTree t1(b1.experiment()), t2(b2.experiment());
    CallPathKeys keys;
    std::vector<uint32_t> k1 = keys.intern(t1), k2 = keys.intern(t2);
    std::vector<std::string> s1 = string_keys(t1), s2 = string_keys(t2);
    size_t shared = 0;
    for (uint32_t a = 0; a < k1.size(); ++a)
      for (uint32_t b = 0; b < k2.size(); ++b) {
        ASSERT_EQ(k1[a] == k2[b], s1[a] == s2[b])
            << "seed " << seed << ": " << s1[a] << " vs " << s2[b];
        shared += s1[a] == s2[b];
      }
    EXPECT_GT(shared, 1u) << "seed " << seed << ": the trees share no path below the root";
  }
}

TEST(CallPathKeys, StringOrderIsTheByteOrderOfTheOldKeys) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    // Functions that extend each other: region keys that are prefixes of one another, followed by
    // characters on both sides of '/' (0x2f): '-', '.', '0', 'a'. (Not '/' itself: a key that is
    // a sibling's key + "/..." made the old string keys ambiguous, keys.hpp.)
    const std::vector<const char*> fns = {"f", "f-", "f.", "f0", "fa"};
    Builder b1 = random_tree(seed, 300, kNames, fns),
            b2 = random_tree(seed + 1000, 300, kNames, fns);
    drg::MergedTree t1(b1.experiment()), t2(b2.experiment());
    CallPathKeys keys;
    std::vector<uint32_t> k1 = keys.intern(t1), k2 = keys.intern(t2);
    std::vector<uint32_t> rank = keys.string_order();
    ASSERT_EQ(rank.size(), keys.size());
    std::map<std::string, uint32_t> by_string;  // sorted by bytes
    std::vector<std::string> s1 = string_keys(t1), s2 = string_keys(t2);
    for (uint32_t n = 0; n < k1.size(); ++n) by_string[s1[n]] = k1[n];
    for (uint32_t n = 0; n < k2.size(); ++n) by_string[s2[n]] = k2[n];
    ASSERT_EQ(by_string.size(), keys.size());
    uint32_t expected = 0;
    for (const auto& [s, key] : by_string)
      EXPECT_EQ(rank[key], expected++) << "seed " << seed << ": " << s;
  }
}

}  // namespace
}  // namespace scalea::overheads
