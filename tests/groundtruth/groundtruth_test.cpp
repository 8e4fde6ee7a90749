// Ground truth of the overhead classifier (docs/groundtruth.md): the planted-overhead apps run
// under the real tool at several p, and every planted overhead must be recovered by
// overheads::classify in its class, subclass and region within 10% of its planted size (or 2 ms,
// whichever is larger), with no more than that attributed elsewhere in the region.
//
// Shared helpers and units: groundtruth.hpp.
#include <nlohmann/json.hpp>

#include "groundtruth.hpp"

namespace scalea::test {
namespace {

class OmpP : public ::testing::TestWithParam<int> {};
std::string p_name(const ::testing::TestParamInfo<int>& info) { return "p" + sp(info.param); }

// ---- imbalance: waits at the loop's implicit barrier -> synchronization.barrier -----------------
// Thread i sleeps (i+1) X; thread i waits (p-1-i) X at the loop's barrier. The work grows with p
// (no strong scaling), so there is no reference run: T_s is the measured useful work and the
// barrier waits are the region's whole overhead (plus fork/join, which must stay small).
TEST_P(OmpP, ImbalanceBarrierWait) {
  const int p = GetParam();
  Classified c(run_omp(p, "imbalance", {"20"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  double waits = 0, longest = 0;
  for (int i = 0; i < p; ++i) {
    longest = std::max(longest, truth(c.run, "body." + sp(i), (i + 1) * 0.020));
    waits += truth(c.run, "wait." + sp(i));
  }
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("imbalance.c", "PARALLEL"));
  uint32_t bar = m.child(par, RegionKind::BarrierImplicit, at("imbalance.c", "LOOP"));
  Planted planted{{"synchronization.barrier"}, waits / p, "loop barrier waits (sum wait.i / p)"};
  double late = std::max(0.0, c.at(par).t_p - longest);
  expect_recovered(c.at(par), {planted}, true, "parallel region", {}, late);
  expect_recovered(c.at(bar), {planted}, false, "the loop's implicit barrier", {}, late);
}

// ---- locks: lock and critical waits -> synchronization.lock / .critical
// -------------------------- K rounds on a lock, then K on a critical section, each round started
// by an explicit barrier; the j-th thread to get the lock waits j H. The rounds are serialized, so
// the next round's barrier waits for the round's last holder: the same amount again (thread j waits
// (p-1-j) H), in the explicit barriers, the join barrier or, when libomp ends the region with the
// reduction's barrier, in synchronization.reduction. The app does not print those waits (they also
// carry every wake-up delay of the round), so they are not counted as elsewhere; the lock and
// critical waits, which it does print, must be recovered exactly, so none of them can hide there.
// Work grows with p: no reference run.
TEST_P(OmpP, LocksAndCritical) {
  const int p = GetParam();
  Classified c(run_omp(p, "locks", {"5", "2"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  // Waits are not sleeps (a thread that reaches the lock late waits less): only the holds are
  // checked against their nominal size, K p H.
  double lock_wait = truth(c.run, "lock_wait"), crit_wait = truth(c.run, "critical_wait");
  truth(c.run, "lock_hold", 2 * p * 0.005);
  truth(c.run, "critical_hold", 2 * p * 0.005);
  uint32_t par = m.child(m.root(), RegionKind::Parallel, "locks.c");
  uint32_t lock = m.child(par, RegionKind::Lock, at("locks.c", "LOCK"));
  uint32_t crit = m.child(par, RegionKind::Critical, at("locks.c", "CRITICAL"));
  Planted pl_lock{{"synchronization.lock"}, lock_wait / p, "lock acquire waits"};
  Planted pl_crit{{"synchronization.critical"}, crit_wait / p, "critical entry waits"};
  // Planted schedule: the holds, one after another.
  double late =
      std::max(0.0, c.at(par).t_p - (truth(c.run, "lock_hold") + truth(c.run, "critical_hold")));
  expect_recovered(c.at(par), {pl_lock, pl_crit}, true, "parallel region",
                   {"synchronization.barrier", "synchronization.reduction"}, late);
  // The round barriers wait about as long again (each round's waits, mirrored): a sanity bound.
  double bars = subclass(c.at(par), "synchronization.barrier") +
                subclass(c.at(par), "synchronization.reduction");
  EXPECT_GE(bars, 0.8 * (lock_wait + crit_wait) / p - 0.002) << describe(c.at(par));
  expect_recovered(c.at(lock), {pl_lock}, false, "lock region", {}, late);
  expect_recovered(c.at(crit), {pl_crit}, false, "critical region", {}, late);
}

// ---- serial: a user region on the initial thread only -> loss_of_parallelism.unparallelized
// ------ Parallel region (A on every thread), user region "serial" (S on the initial thread),
// parallel region (A). Without a reference: the serial region's T_o is S (p-1)/p, all
// unparallelized. The program's unparallelized loss holds it too, next to the serial start-up and
// shut-down of the runtime and the tool (unknown to the app, so only a lower bound is checked
// there).
TEST_P(OmpP, SerialSectionUnparallelized) {
  const int p = GetParam();
  Classified c(run_omp(p, "serial", {"40", "20"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  double serial = truth(c.run, "serial", 0.040);
  uint32_t user = m.child(m.root(), RegionKind::User, "serial");
  const double share = double(p - 1) / p;
  expect_recovered(c.at(user),
                   {{{"loss_of_parallelism.unparallelized"},
                     serial * share,
                     "serial section run by 1 of p PEs"}},
                   true, "user region serial");
  double prog = subclass(c.at(m.root()), "loss_of_parallelism.unparallelized");
  EXPECT_GE(prog, serial * share - tolerance(serial * share)) << describe(c.at(m.root()));
}

// With the p=1 reference: the serial region is unchanged (T_s = S). Each parallel region's body
// (every thread sleeps A, the reference's one thread A) is replicated work: DESIGN.md section 4,
// "every PE's useful time in r is about T_s(r): its share is loss, not addition", so
// (p-1)/p A of loss_of_parallelism.replicated in each parallel region. The sleeps of the run and
// of the reference differ a little (the truth lines say by how much): that difference is
// unplanned and may land anywhere.
TEST_P(OmpP, SerialWithReference) {
  const int p = GetParam();
  auto ref = std::make_unique<AppRun>(run_omp(1, "serial", {"40", "20"}));
  Classified c(run_omp(p, "serial", {"40", "20"}), std::move(ref));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  const double share = double(p - 1) / p;
  double serial = truth(c.run, "serial", 0.040);
  uint32_t user = m.child(m.root(), RegionKind::User, "serial");
  expect_recovered(c.at(user),
                   {{{"loss_of_parallelism.unparallelized"},
                     serial * share,
                     "serial section run by 1 of p PEs"}},
                   true, "user region serial");
  std::vector<uint32_t> pars = m.children(m.root(), RegionKind::Parallel, "serial.c");
  ASSERT_EQ(pars.size(), 2u) << m.dump();
  for (int k = 0; k < 2; ++k) {
    double a = truth(c.run, "sleep" + sp(k + 1), 0.020);
    double a_ref = truth(*c.ref_run, "sleep" + sp(k + 1), 0.020);
    double par_ref = truth(*c.ref_run, "par" + sp(k + 1)), par = truth(c.run, "par" + sp(k + 1));
    expect_recovered(
        c.at(pars[size_t(k)]),
        {{{"loss_of_parallelism.replicated"}, a_ref * share, "body replicated on every thread"}},
        true, "parallel region " + sp(k + 1), {},
        std::fabs(a - a_ref) + std::fabs((par - a) - (par_ref - a_ref)));
  }
}

// ---- single: the others wait for the body -> loss_of_parallelism.partially_parallelized ---------
// R single constructs whose body sleeps S; the p-1 others wait at the single's barrier. The total
// work does not depend on p, so the p=1 run is the reference.
TEST_P(OmpP, SinglePartiallyParallelized) {
  const int p = GetParam();
  auto ref = std::make_unique<AppRun>(run_omp(1, "single", {"20", "2"}));
  Classified c(run_omp(p, "single", {"20", "2"}), std::move(ref));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  double wait = truth(c.run, "wait", (p - 1) * 2 * 0.020 * 0.9);
  uint32_t par = m.child(m.root(), RegionKind::Parallel, "single.c");
  uint32_t bar = m.child(par, RegionKind::BarrierImplicit, at("single.c", "SINGLE"));
  Planted planted{{"loss_of_parallelism.partially_parallelized"},
                  wait / p,
                  "waits of the p-1 non-executors at the single's barrier"};
  // Unplanned: how much longer or shorter the run's bodies took than the reference's.
  // And how long the region lasted beyond its bodies (the waiters' wake-up after the last body).
  double body_diff = std::fabs(truth(c.run, "body") - truth(*c.ref_run, "body"));
  double late = std::max(0.0, c.at(par).t_p - truth(c.run, "body"));
  expect_recovered(c.at(par), {planted}, true, "parallel region", {}, body_diff + late);
  expect_recovered(c.at(bar), {planted}, false, "the single's implicit barrier", {}, late);
}

INSTANTIATE_TEST_SUITE_P(Threads, OmpP, ::testing::Values(1, 2, 4, 8), p_name);

// ---- nested: the inner master waits at the inner join -> synchronization.barrier ----------------
// 2 outer threads x 2 inner threads (p = 4 whatever OMP_NUM_THREADS says); inner thread j sleeps
// (j+1) T, so each inner master waits T at the inner join barrier. The outer threads are
// balanced. No reference (the structure fixes p).
TEST(Nested, InnerJoinWait) {
  Classified c(run_with_tool({app("nested"), "20"}, {{"SCALEA_QUIET", "1"}}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  const int p = c.a.p;
  EXPECT_EQ(p, 4);
  // A wait is the difference of two arrivals: shorter than T when the inner master started its
  // sleep after the other thread (a loaded machine), hence the nominal's 0.9.
  double wait =
      truth(c.run, "inner_master_wait", 2 * 0.020 * 0.9) + truth(c.run, "outer_master_wait");
  uint32_t outer = m.child(m.root(), RegionKind::Parallel, at("nested.c", "OUTER"));
  uint32_t inner = m.child(outer, RegionKind::Parallel, at("nested.c", "INNER"));
  Planted planted{{"synchronization.barrier"}, wait / p, "inner masters' join waits"};
  double late = std::max(0.0, c.at(outer).t_p - truth(c.run, "inner_longest"));
  expect_recovered(c.at(outer), {planted}, true, "outer parallel region", {}, late);
  expect_recovered(c.at(inner), {planted}, true, "inner parallel region", {}, late);
}

// ---- MPI ----------------------------------------------------------------------------------------
// apps/mpi print no truth lines. The planted sizes are their constants (read from the source)
// times the scale, and what really happened is read from the raw per-rank times the tool recorded
// (the user regions and MPI calls: two clock reads around them, like the OpenMP apps' truth
// lines; the classifier is what is under test, not these). On 2 cores with 4 ranks polling in
// MPI calls, a sleeping rank often wakes several ms late: that delay is nobody's planted overhead,
// so each region's wall time beyond its planted schedule is added to the "elsewhere" allowance.

bool have_mpi() { return std::string(SCALEA_GT_MPIRUN).size() > 0; }

class MpiNp : public ::testing::TestWithParam<int> {};
std::string np_name(const ::testing::TestParamInfo<int>& info) { return "np" + sp(info.param); }

// Seconds of a time metric of merged node n per rank (summed over the rank's threads).
std::map<int, double> per_rank(const Measured& m, uint32_t n, const std::string& metric) {
  std::map<int, double> out;
  if (!m.ok() || n == kNone) return out;
  for (const auto& [t, v] : m.tree().per_thread(n, m.exp().metric(metric)))
    out[m.exp().threads[t].rank] += v * 1e-9;
  return out;
}
double total(const std::map<int, double>& v) {
  double s = 0;
  for (const auto& kv : v) s += kv.second;
  return s;
}
double at_rank(const std::map<int, double>& v, int rank) {
  auto it = v.find(rank);
  return it == v.end() ? 0.0 : it->second;
}

// mpi_planted on np ranks against its 1-rank run (apps/mpi/mpi_planted.c):
//   replicated    every rank sleeps R: (p-1)/p T_s of loss_of_parallelism.replicated
//   serial        rank 0 sleeps S, the others wait for it in MPI_Bcast: (p-1)/p S of
//                 loss_of_parallelism.unparallelized (one rank works, the reference does the same
//                 S on its one rank)
//   late_barrier  the last rank sleeps L before MPI_Barrier: the others' waits, (p-1)/p L, are
//                 synchronization.mpi_barrier
//   late_sender   rank 0 sleeps D before sending to rank 1, whose MPI_Recv waits D: D/p of
//                 synchronization.mpi_waiting
//   late_allreduce  the last rank sleeps W before each of LA_REPS MPI_Allreduce calls: the
//                 others' waits are synchronization.mpi_waiting, not serial code (issue 32, 5)
const char* kPlantedSrc = "apps/mpi/mpi_planted.c";

struct MpiPlanted : Classified {
  using Classified::Classified;
  uint32_t region(const std::string& name) const {
    return m->child(m->root(), RegionKind::User, name);
  }
  uint32_t call(const std::string& parent, const std::string& fn) const {
    return m->child(region(parent), RegionKind::Mpi, fn);
  }
};

std::unique_ptr<MpiPlanted> planted_run(int np, double scale) {
  auto ref = std::make_unique<AppRun>(run_mpi(1, "mpi_planted", {std::to_string(scale)}));
  return std::make_unique<MpiPlanted>(run_mpi(np, "mpi_planted", {std::to_string(scale)}),
                                      std::move(ref));
}

TEST_P(MpiNp, PlantedReplicated) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  const double scale = 0.5, R = source_define(kPlantedSrc, "R") * scale;
  auto c = planted_run(np, scale);
  ASSERT_TRUE(c->ok()) << c->run.describe();
  const int p = c->a.p;
  EXPECT_EQ(p, np);
  uint32_t n = c->region("replicated");
  auto slept = per_rank(*c->m, n, "time");
  double t_s = c->ref->max(c->ref->child(c->ref->root(), RegionKind::User, "replicated"), "time");
  EXPECT_GE(t_s, 0.98 * R) << "the reference slept less than R";
  for (const auto& [rank, t] : slept)
    EXPECT_GE(t, 0.98 * R) << "rank " << rank << " slept less than R";
  expect_recovered(c->at(n),
                   {{{"loss_of_parallelism.replicated"},
                     t_s * (p - 1) / p,
                     "the reference's work repeated on every rank"}},
                   true, "user region replicated", {}, c->at(n).t_p - R);
}

TEST_P(MpiNp, PlantedSerialOnRank0) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  const double scale = 0.5, S = source_define(kPlantedSrc, "S") * scale;
  auto c = planted_run(np, scale);
  ASSERT_TRUE(c->ok()) << c->run.describe();
  const int p = c->a.p;
  uint32_t n = c->region("serial");
  // Rank 0's section: its time in the region outside MPI_Bcast.
  double work = at_rank(per_rank(*c->m, n, "time"), 0) -
                at_rank(per_rank(*c->m, c->call("serial", "MPI_Bcast"), "time"), 0);
  EXPECT_GE(work, 0.98 * S) << "rank 0 slept less than S";
  expect_recovered(c->at(n),
                   {{{"loss_of_parallelism.unparallelized"},
                     work * (p - 1) / p,
                     "rank 0 works S alone while the others wait in MPI_Bcast"}},
                   true, "user region serial", {}, c->at(n).t_p - work);
}

TEST_P(MpiNp, PlantedLateBarrier) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  const double scale = 0.5, L = source_define(kPlantedSrc, "L") * scale;
  auto c = planted_run(np, scale);
  ASSERT_TRUE(c->ok()) << c->run.describe();
  const int p = c->a.p;
  uint32_t n = c->region("late_barrier"), bar = c->call("late_barrier", "MPI_Barrier");
  auto in_region = per_rank(*c->m, n, "time"), in_barrier = per_rank(*c->m, bar, "time");
  double late_sleep = at_rank(in_region, np - 1) - at_rank(in_barrier, np - 1);
  if (np > 1) EXPECT_GE(late_sleep, 0.98 * L) << "the last rank slept less than L";
  // The early ranks wait in MPI_Barrier for the late one: their barrier times, at least L each.
  double waits = total(in_barrier) - at_rank(in_barrier, np - 1);
  EXPECT_GE(waits, 0.98 * L * (np - 1)) << "the early ranks waited less than L";
  Planted planted{{"synchronization.mpi_barrier"}, waits / p, "early ranks wait for the late one"};
  expect_recovered(c->at(n), {planted}, true, "user region late_barrier", {},
                   c->at(n).t_p - (np > 1 ? L : 0));
  expect_recovered(c->at(bar), {planted}, false, "MPI_Barrier", {},
                   c->at(n).t_p - (np > 1 ? L : 0));
}

TEST_P(MpiNp, PlantedLateSender) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  const double scale = 0.5, D = source_define(kPlantedSrc, "D") * scale;
  auto c = planted_run(np, scale);
  ASSERT_TRUE(c->ok()) << c->run.describe();
  const int p = c->a.p;
  uint32_t n = c->region("late_sender");
  double wait = 0;
  if (np >= 2) {
    // Rank 1's receives wait for rank 0's sleep (plus however late rank 0 left the barrier).
    double recv = at_rank(per_rank(*c->m, c->call("late_sender", "MPI_Recv"), "wait"), 1);
    EXPECT_GE(recv, 0.9 * D) << "rank 1 waited less than D";
    // The messages go by rendezvous: rank 0's sends also wait whenever rank 1 posts its next
    // receive late (descheduled). Not planted, but the same subclass: part of the expected sum.
    wait = recv + at_rank(per_rank(*c->m, c->call("late_sender", "MPI_Send"), "wait"), 0);
  }
  expect_recovered(
      c->at(n), {{{"synchronization.mpi_waiting"}, wait / p, "rank 1's MPI_Recv waits for rank 0"}},
      false, "user region late_sender");
}

TEST_P(MpiNp, PlantedLateAllreduceIsWaiting) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  const double scale = 0.5, W = source_define(kPlantedSrc, "W") * scale,
               reps = source_define(kPlantedSrc, "LA_REPS");
  // Without the reference: its one rank is also the last and does the late rank's work, which at
  // p ranks is then undivided work (loss of parallelism, rightly). The shape to judge is the
  // SPMD step: every rank its share, the last one's larger.
  auto c = std::make_unique<MpiPlanted>(run_mpi(np, "mpi_planted", {std::to_string(scale)}));
  ASSERT_TRUE(c->ok()) << c->run.describe();
  const int p = c->a.p;
  uint32_t n = c->region("late_allreduce"), ar = c->call("late_allreduce", "MPI_Allreduce");
  auto in_region = per_rank(*c->m, n, "time"), in_call = per_rank(*c->m, ar, "time");
  double late_work = at_rank(in_region, np - 1) - at_rank(in_call, np - 1);
  if (np > 1) EXPECT_GE(late_work, 0.98 * W * reps) << "the last rank slept less than W per call";
  // The early ranks' time in the calls: their waits for the late one, and the calls' own cost
  // (what the late rank's calls took: it never waits).
  double early = total(in_call) - at_rank(in_call, np - 1);
  double own = at_rank(in_call, np - 1) * (np - 1);
  if (np > 1) EXPECT_GE(early, 0.98 * W * reps * (np - 1)) << "the early ranks waited less than W";
  Planted planted{{"synchronization.mpi_waiting"},
                  (early - own) / p,
                  "the early ranks wait in MPI_Allreduce for the late one's share"};
  // The late rank's work is its share, not serial code: no loss of parallelism at all.
  expect_recovered(c->at(n), {planted}, false, "user region late_allreduce");
  const double none = 0.002 + 0.02 * W * reps;
  EXPECT_LT(cls(c->at(n), ov::Class::LossOfParallelism), none) << describe(c->at(n));
  EXPECT_LT(cls(c->at(ar), ov::Class::LossOfParallelism), none) << describe(c->at(ar));
  // The waiting finding names the rank the others wait for: the last, which spent the least
  // time in the call.
  if (np < 2) return;
  AppRun r = run_scalea_cli({"report", c->run.experiment, "--format", "json", "--findings", "20"});
  ASSERT_EQ(r.status, 0) << r.describe();
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  bool named = false;
  for (const auto& f : doc["findings"])
    if (f.value("subclass", "") == "mpi_waiting" && f.value("node", 0u) == ar) {
      std::string hint = f.value("hint", "");
      named = hint.find("rank " + std::to_string(np - 1) + " spent the least time here") !=
                  std::string::npos &&
              hint.find("the others wait for rank " + std::to_string(np - 1)) != std::string::npos;
      EXPECT_TRUE(named) << hint;
    }
  EXPECT_TRUE(named) << "no MPI waiting finding at the late MPI_Allreduce";
}

// A message model the run contradicts (a calibration at MPI_Init disturbed by other processes:
// 1 s of latency here, set as SCALEA_MPI_CALIBRATE) is not evidence: the analysis says it was
// not used, and rank 1's receives still wait for the late sender rather than "transfer" a
// message for the whole time.
TEST_P(MpiNp, DisturbedModelIsNotEvidence) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  if (np < 2) GTEST_SKIP() << "one rank has no partner to wait for";
  const double scale = 0.5, D = source_define(kPlantedSrc, "D") * scale;
  MpiPlanted c(run_mpi(np, "mpi_planted", {std::to_string(scale)},
                       {{"SCALEA_MPI_CALIBRATE", "1000000000,100"}}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  EXPECT_NE(c.a.message_model_doubt, "") << "a latency of 1 s was taken as the model";
  const int p = c.a.p;
  const auto& ls = c.at(c.region("late_sender"));
  EXPECT_GE(subclass(ls, "synchronization.mpi_waiting"), 0.8 * D / p) << describe(ls);
  EXPECT_LT(subclass(ls, "data_movement.mpi_p2p"), 0.2 * D / p) << describe(ls);
}

// A hybrid code whose ranks have different work in a loop (one thread per rank: every thread of
// a rank balanced, the last rank with the most): the lag is waited for in the MPI_Allreduce after
// the parallel region. One time, one finding (the loop's idle ranks are the call's waits), and
// no schedule advice: a schedule balances the threads of one rank, not the ranks (issue 32, 7).
TEST_P(MpiNp, RankLagIsOneFindingWithoutScheduleAdvice) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  if (np < 2) GTEST_SKIP() << "one rank has no lag";
  Classified c(run_mpi(np, "mpi_hybrid", {"1", "ranklag"}, {{"OMP_NUM_THREADS", "1"}}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  AppRun r = run_scalea_cli({"report", c.run.experiment, "--format", "json", "--findings", "10"});
  ASSERT_EQ(r.status, 0) << r.describe();
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out.substr(0, 400);
  double listed = 0;
  bool waiting = false;
  for (const auto& f : doc["findings"]) {
    std::string key = f.value("class", "") + "." + f.value("subclass", ""),
                text = f.value("text", "");
    listed += f.value("seconds", 0.0);
    EXPECT_EQ(text.find("schedule("), std::string::npos) << text;
    EXPECT_EQ(text.find("dynamic schedule"), std::string::npos) << text;
    EXPECT_NE(key, "synchronization.load_imbalance")
        << "the lag listed apart from its waits: " << text;
    if (key == "synchronization.mpi_waiting") {
      waiting = true;
      // Named with the idle region: the loop, or the parallel region around it.
      std::string same = f.value("same_time_as", "");
      EXPECT_TRUE(same.rfind("loop", 0) == 0 || same.rfind("parallel", 0) == 0) << text;
    }
  }
  EXPECT_TRUE(waiting) << r.out.substr(0, 2000);
  // No time in two findings: together they hold at most the program's T_o.
  EXPECT_LE(listed, c.at(c.m->root()).t_o + 1e-3) << r.out.substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(Ranks, MpiNp, ::testing::Values(1, 2, 4), np_name);

// ---- the shapes of real MPI codes (apps/mpi/mpi_shapes.c, mpi_sites.c) -------------------------

// The first child of `parent` that is the MPI call `fn` (at `line` when given).
uint32_t mpi_call(const Measured& m, uint32_t parent, const std::string& fn, int line = 0) {
  for (uint32_t n : m.children(parent, RegionKind::Mpi, fn))
    if (line == 0 || int(m.region(n).line) == line) return n;
  ADD_FAILURE() << "no " << fn << " (line " << line << ") below node " << parent << "\n"
                << m.dump();
  return kNone;
}

// Work in main that every rank repeats (no user regions): replicated, in the program's own code.
// MPI_Init against a one-rank reference's MPI_Init is start-up beyond the reference's only.
TEST_P(MpiNp, WorkInMainIsReplicated) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  const double work = 0.2;
  auto ref = std::make_unique<AppRun>(run_mpi(1, "mpi_shapes", {"main", std::to_string(work)}));
  Classified c(run_mpi(np, "mpi_shapes", {"main", std::to_string(work)}), std::move(ref));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const auto& root = c.at(c.m->root());
  double share = double(np - 1) / np;
  EXPECT_NEAR(subclass(root, "loss_of_parallelism.replicated"), work * share,
              tolerance(work * share))
      << describe(root);
  // Neither MPI_Init's own time nor the reference's is communicator management.
  uint32_t init = mpi_call(*c.m, c.m->root(), "MPI_Init");
  const auto& i = c.at(init);
  EXPECT_NEAR(subclass(i, "control_of_parallelism.mpi_management"), 0, 1e-9) << describe(i);
  EXPECT_NEAR(subclass(root, "control_of_parallelism.mpi_management"), 0, 1e-9) << describe(root);
  if (np == 1) {
    // One rank against one rank: MPI_Init is no overhead, up to its run-to-run spread.
    EXPECT_LT(std::fabs(i.t_o), 0.05) << describe(i);
    EXPECT_LT(std::fabs(cls(i, ov::Class::Unidentified)), tolerance(0)) << describe(i);
  }
}

// Ranks arrive at an 8-byte MPI_Allreduce at different times: they wait in it. The transfer is
// what the calibrated message model allows for 8 bytes (microseconds), not the fastest rank's
// time in the call.
TEST_P(MpiNp, CollectiveWaitingIsNotTransfer) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np < 2) GTEST_SKIP() << "one rank waits for nobody";
  const int n = 5;
  const double step = 0.02;
  Classified c(run_mpi(np, "mpi_shapes", {"allreduce", std::to_string(n), std::to_string(step)}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  uint32_t ar = mpi_call(*c.m, c.m->root(), "MPI_Allreduce");
  const auto& r = c.at(ar);
  EXPECT_LT(subclass(r, "data_movement.mpi_collective"), 0.002) << describe(r);
  // Rank k works (k + 1) step before each call: the others wait for the last one.
  double waits = 0;
  for (int k = 0; k < np; ++k) waits += (np - 1 - k) * step * n;
  const auto& root = c.at(c.m->root());
  EXPECT_NEAR(subclass(root, "synchronization.mpi_waiting"), waits / np, tolerance(waits / np))
      << describe(root);
}

// Ranks that arrive together (no work between the calls, as in the Intel MPI Benchmarks): the
// collectives' and barriers' time is their own cost, not waiting for a late rank. At 4 ranks on
// 2 CPUs the ranks really are late in turn (each waits for a CPU), so 1 and 2 ranks show it.
TEST_P(MpiNp, BalancedCollectivesAreTheirOwnCost) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np > 2) GTEST_SKIP() << "4 ranks on 2 CPUs wait for CPUs";
  Classified c(run_mpi(np, "mpi_shapes", {"balanced", "20000", "8"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  int line = source_line("apps/mpi/mpi_shapes.c", "i < n; ++i) MPI_Allreduce");
  const auto& ar = c.at(mpi_call(*c.m, c.m->root(), "MPI_Allreduce", line));
  EXPECT_LE(subclass(ar, "synchronization.mpi_waiting"), 0.25 * ar.t_p + tolerance(0))
      << describe(ar);
  line = source_line("apps/mpi/mpi_shapes.c", "i < n; ++i) MPI_Barrier");
  const auto& bar = c.at(mpi_call(*c.m, c.m->root(), "MPI_Barrier", line));
  EXPECT_LE(subclass(bar, "synchronization.mpi_barrier"), 0.25 * bar.t_p + tolerance(0))
      << describe(bar);
  if (np == 2)
    EXPECT_GE(subclass(bar, "synchronization.mpi_barrier_cost"), 0.5 * bar.t_p) << describe(bar);
}

// Two ranks bouncing small messages with no work between (IMB's PingPong): each receive waits
// for the round trip, a few microseconds per call, which is the exchange's own cost: data
// movement, not "waiting for a late sender" (docs/overhead-model.md, MPI).
TEST_P(MpiNp, PingPongIsTransferNotWaiting) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np != 2) GTEST_SKIP() << "two ranks bounce the message";
  Classified c(run_mpi(np, "mpi_shapes", {"pingpong", "20000", "64"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  double recv_time = 0;
  for (const char* call : {"MPI_Recv", "MPI_Send"})
    for (uint32_t k : c.m->children(c.m->root(), RegionKind::Mpi)) {
      if (c.m->tree().region_of(k).label() != call) continue;
      const auto& r = c.at(k);
      EXPECT_LE(subclass(r, "synchronization.mpi_waiting"), 0.1 * r.t_p + tolerance(0))
          << describe(r);
      if (std::string(call) == "MPI_Recv") recv_time += r.t_p;
    }
  EXPECT_GT(recv_time, 0) << "no MPI_Recv call site";
}

// The ranks' pattern (findings/pattern.hpp, the report's "patterns"): rank 0 handing out tasks to
// the others and collecting their results (mpi_shapes farm) is master/worker; pairs of ranks
// swapping messages (exchange) are SPMD with point-to-point exchanges.
TEST_P(MpiNp, RanksPatternIsRecognised) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np != 4) GTEST_SKIP() << "a master and three workers, two pairs";
  auto pattern = [](const AppRun& run) {
    AppRun r = run_scalea_cli({"report", run.experiment, "--format", "json"});
    EXPECT_EQ(r.status, 0) << r.describe();
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    for (const auto& p : doc.value("patterns", nlohmann::json::array()))
      if (p.value("path", "x").empty())
        return p.value("pattern", "") + ": " + p.value("evidence", "");
    return std::string("none");
  };
  AppRun farm = run_mpi(np, "mpi_shapes", {"farm", "30", "2"});
  ASSERT_EQ(farm.status, 0) << farm.describe();
  EXPECT_EQ(pattern(farm).rfind("master/worker: rank 0 makes", 0), 0u) << pattern(farm);
  AppRun pairs = run_mpi(np, "mpi_shapes", {"exchange", "5", "0.01", "0"});
  ASSERT_EQ(pairs.status, 0) << pairs.describe();
  EXPECT_EQ(pattern(pairs).rfind("SPMD with point-to-point exchanges", 0), 0u) << pattern(pairs);
}

// Two ranks swap 4 MiB with MPI_Irecv/MPI_Isend and complete both in one MPI_Waitall: the bytes
// were counted at the posts, yet the messages move while the ranks are in the MPI_Waitall. When
// nobody is late that time is the completions' own cost (data movement), not "waiting for a late
// partner"; when rank 1 sleeps 5 ms before each exchange, rank 0's extra time there is waiting.
TEST_P(MpiNp, RequestCompletionsHoldTheirTransfer) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np != 2) GTEST_SKIP() << "one pair of ranks (4 ranks on 2 CPUs wait for CPUs)";
  const int line = source_line("apps/mpi/mpi_shapes.c", "EXCHANGE_WAIT");
  {
    Classified c(run_mpi(np, "mpi_shapes", {"exchange", "20", "4", "0"}));
    ASSERT_TRUE(c.ok()) << c.run.describe();
    const auto& w = c.at(mpi_call(*c.m, c.m->root(), "MPI_Waitall", line));
    EXPECT_LE(subclass(w, "synchronization.mpi_waiting"), 0.25 * w.t_p + tolerance(0))
        << describe(w);
    EXPECT_GE(subclass(w, "data_movement.mpi_p2p"), 0.5 * w.t_p) << describe(w);
  }
  Classified c(run_mpi(np, "mpi_shapes", {"exchange", "20", "4", "5"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const auto& w = c.at(mpi_call(*c.m, c.m->root(), "MPI_Waitall", line));
  const double late = truth(c.run, "late");  // rank 1's sleeps: rank 0 waits that long
  EXPECT_GE(subclass(w, "synchronization.mpi_waiting"), 0.5 * late / np - tolerance(late / np))
      << describe(w);
}

// Messages to and from MPI_PROC_NULL move nothing: in a non-periodic chain every byte sent is a
// byte received, 2 N B per link (Sendrecv one way, Isend/Irecv the other).
TEST_P(MpiNp, ProcNullMovesNoBytes) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  const int n = 10, bytes = 4096;
  Classified c(run_mpi(np, "mpi_shapes", {"procnull", std::to_string(n), std::to_string(bytes)}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  double sent = 0, recv = 0;
  const int s_col = c.m->exp().metric("bytes_sent"), r_col = c.m->exp().metric("bytes_recv");
  for (uint32_t k : c.m->children(c.m->root(), RegionKind::Mpi)) {
    sent += c.m->tree().sum(k, s_col);
    recv += c.m->tree().sum(k, r_col);
  }
  EXPECT_EQ(sent, 2.0 * n * bytes * (np - 1)) << "bytes sent";
  EXPECT_EQ(recv, 2.0 * n * bytes * (np - 1)) << "bytes received";
}

// A rank exchanging with itself (MPI_Sendrecv to its own rank, into fresh memory) waits for
// nobody: its time is data movement, at one rank and at two.
TEST_P(MpiNp, SelfExchangeIsNotWaiting) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np > 2) GTEST_SKIP() << "one and two ranks show it";
  Classified c(run_mpi(np, "mpi_sites", {"self"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  int line = source_line("apps/mpi/mpi_sites.c", "site self-sendrecv");
  uint32_t sr = mpi_call(*c.m, c.m->root(), "MPI_Sendrecv", line);
  const auto& r = c.at(sr);
  EXPECT_LT(subclass(r, "synchronization.mpi_waiting"), tolerance(0)) << describe(r);
  EXPECT_GT(subclass(r, np == 1 ? "data_movement.mpi_p2p" : "data_movement.mpi_p2p"), 0)
      << describe(r);
}

// Three small MPI_Allreduce calls of one time step with the same datatype, operation and
// communicator (one of them written over two lines), and a fourth with another operation: the
// three are advised to become one call, named by their lines, and the fourth is not among them. The
// advice is said on the group's first finding; the others refer to it.
TEST_P(MpiNp, FusableReductionsAreNamed) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np != 2) GTEST_SKIP() << "two ranks show it";
  Classified c(run_mpi(np, "mpi_shapes", {"fusable", "20000"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const std::string src = "apps/mpi/mpi_shapes.c";
  const std::string lines = std::to_string(source_line(src, "FUSE_SUM_1")) + ", " +
                            std::to_string(source_line(src, "FUSE_SUM_2")) + ", " +
                            std::to_string(source_line(src, "FUSE_SUM_3"));
  const std::string max_line = "mpi_shapes.c:" + std::to_string(source_line(src, "FUSE_MAX"));
  AppRun r = run_scalea_cli({"report", c.run.experiment, "--format", "json", "--findings", "10"});
  ASSERT_EQ(r.status, 0) << r.describe();
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out.substr(0, 400);
  int advised = 0, referred = 0;
  for (const auto& f : doc["findings"]) {
    const std::string hint = f.value("hint", ""), location = f.value("location", "");
    if (f.value("subclass", "") != "mpi_collective") continue;
    const bool fused = hint.find("make one call instead of 3") != std::string::npos;
    if (location == max_line) {
      EXPECT_FALSE(fused) << "MPI_MAX advised to join the sums: " << hint;
      EXPECT_EQ(hint.find("one of the calls named"), std::string::npos) << hint;
      continue;
    }
    if (hint.rfind("one of the calls named at the MPI_Allreduce at mpi_shapes.c:", 0) == 0) {
      ++referred;  // the group's advice is said on its first finding only
      continue;
    }
    EXPECT_TRUE(fused) << location << ": " << hint;
    EXPECT_NE(hint.find("MPI_Allreduce at mpi_shapes.c:" + lines), std::string::npos) << hint;
    EXPECT_NE(hint.find("operation MPI_SUM"), std::string::npos) << hint;
    advised += fused;
  }
  EXPECT_EQ(advised, 1) << r.out.substr(0, 3000);
  EXPECT_LE(referred, 2) << r.out.substr(0, 3000);
}

// Blocking exchanges (the even rank MPI_Send then MPI_Recv, the odd one the other way round) after
// 20 steps of 20 ms of computation each: each rank's pair is advised to become MPI_Irecv/MPI_Isend
// posted before that computation, named by its lines and buffers, with the computation measured
// beside it (0.4 s per rank, planted); the group's advice is said once. Without computation
// between the exchanges, overlapping is not advised: there is nothing to hide the transfer behind.
TEST_P(MpiNp, BlockingExchangesOverlapOnlyWithComputation) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np != 2) GTEST_SKIP() << "one pair of ranks";
  const std::string src = "apps/mpi/mpi_shapes.c";
  const std::string even = "MPI_Send of out to partner (line " +
                           std::to_string(source_line(src, "HALO_SEND_EVEN")) +
                           "), MPI_Recv into in from partner (line " +
                           std::to_string(source_line(src, "HALO_RECV_EVEN")) + ")";
  const std::string odd = "MPI_Recv into in from partner (line " +
                          std::to_string(source_line(src, "HALO_RECV_ODD")) +
                          "), MPI_Send of out to partner (line " +
                          std::to_string(source_line(src, "HALO_SEND_ODD")) + ")";
  auto p2p_hints = [](const AppRun& run) {
    AppRun r = run_scalea_cli({"report", run.experiment, "--format", "json", "--findings", "12"});
    EXPECT_EQ(r.status, 0) << r.describe();
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    std::vector<std::string> hints;
    if (doc.is_discarded()) return hints;
    for (const auto& f : doc["findings"])
      if (f.value("subclass", "") == "mpi_p2p") hints.push_back(f.value("hint", ""));
    return hints;
  };
  AppRun overlap = run_mpi(np, "mpi_shapes", {"halo", "20", "32", "20"});
  ASSERT_EQ(overlap.status, 0) << overlap.describe();
  int advised = 0, referred = 0;
  for (const std::string& hint : p2p_hints(overlap)) {
    if (hint.rfind("one of the calls named at the MPI_", 0) == 0) {
      ++referred;
      continue;
    }
    const bool pair = hint.find("the 2 blocking calls at mpi_shapes.c: " + even) == 0 ||
                      hint.find("the 2 blocking calls at mpi_shapes.c: " + odd) == 0;
    EXPECT_TRUE(pair) << hint;
    EXPECT_NE(hint.find("post the receives with MPI_Irecv and the sends with MPI_Isend"),
              std::string::npos)
        << hint;
    EXPECT_NE(hint.find("reads no receive buffer (in) and writes no send buffer (out)"),
              std::string::npos)
        << hint;
    // "mpi_shapes computes 0.406 s per rank besides its MPI calls": the planted 20 x 20 ms.
    const size_t at = hint.find(" computes ");
    ASSERT_NE(at, std::string::npos) << hint;
    const double computed = std::atof(hint.c_str() + at + 10);
    EXPECT_NEAR(computed, 0.4, 0.06) << hint;
    advised += pair;
  }
  EXPECT_GE(advised, 1) << overlap.describe();
  EXPECT_LE(referred, 2) << "a pair's second call refers to its first";
  AppRun none = run_mpi(np, "mpi_shapes", {"halo", "20", "32", "0"});
  ASSERT_EQ(none.status, 0) << none.describe();
  int plain = 0;
  for (const std::string& hint : p2p_hints(none)) {
    EXPECT_EQ(hint.find("MPI_Irecv"), std::string::npos) << hint;
    if (hint.rfind("one of the calls named at the MPI_", 0) == 0) continue;
    EXPECT_NE(hint.find("with nothing to overlap them with"), std::string::npos) << hint;
    ++plain;
  }
  EXPECT_GE(plain, 1) << none.describe();
}

// Ranks started at different times (rank 1 300 ms after rank 0): one cause, start-up, not serial
// code and not imbalance in MPI_Init.
TEST_P(MpiNp, LaunchSkewIsStartup) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const int np = GetParam();
  if (np != 2) GTEST_SKIP() << "two ranks show it";
  const double skew = 0.3;
  std::vector<std::string> argv{SCALEA_GT_MPIRUN,
                                "--allow-run-as-root",
                                "--oversubscribe",
                                "-np",
                                "2",
                                "-x",
                                "SCALEA_OUTPUT",
                                "sh",
                                "-c",
                                "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then sleep " +
                                    std::to_string(skew) + "; fi; exec \"$@\"",
                                "sh",
                                SCALEA_CLI,
                                "run",
                                "-q",
                                "--",
                                std::string(SCALEA_BUILD_DIR) + "/bin/mpi_shapes",
                                "main",
                                "0.1"};
  Classified c(run_with_tool(
      argv, {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}}, 120));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const auto& root = c.at(c.m->root());
  EXPECT_LT(subclass(root, "loss_of_parallelism.unparallelized"), tolerance(0)) << describe(root);
  // Rank 0 waits for rank 1 in MPI_Init, rank 1 did not exist yet: skew each, over 2 PEs.
  EXPECT_GT(subclass(root, "control_of_parallelism.startup"), 0.9 * skew) << describe(root);
  const auto& init = c.at(mpi_call(*c.m, c.m->root(), "MPI_Init"));
  EXPECT_LT(subclass(init, "synchronization.load_imbalance"), tolerance(0)) << describe(init);
}

// mpi_hybrid on np ranks x 2 threads (p = 2 np): per step, thread 0 sleeps W and the other thread
// W + I, so thread 0 waits about I at the first explicit barrier: STEPS I per rank, STEPS I np / p
// of synchronization.barrier in the parallel region. The masked MPI_Allreduce that follows is not
// planted: its cost and the other thread's wait for it at the second barrier (partial
// parallelism) count as elsewhere. No reference: the work grows with p. At the root, the other
// threads' idle time during MPI_Init_thread is start-up (program.mpi_startup).
TEST_P(MpiNp, HybridBarrierImbalance) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI (mpirun, libscalea-mpi.so, apps/mpi) in this build";
  const int np = GetParam();
  const double scale = 1.0;
  Classified c(run_mpi(np, "mpi_hybrid", {std::to_string(scale)},
                       {{"OMP_NUM_THREADS", "2"}, {"OMP_WAIT_POLICY", "passive"}}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  const int p = c.a.p;
  EXPECT_EQ(p, 2 * np);
  const char* src = "apps/mpi/mpi_hybrid.c";
  const double W = source_define(src, "W") * scale, I = source_define(src, "I") * scale;
  const double steps = source_define(src, "STEPS");
  uint32_t par = m.child(m.root(), RegionKind::Parallel, "mpi_hybrid.c");
  std::vector<uint32_t> bars = m.children(par, RegionKind::BarrierExplicit);
  ASSERT_EQ(bars.size(), 2u) << m.dump();
  double waits = m.sum(bars[0], "wait");
  EXPECT_GE(waits, 0.98 * steps * I * np) << "thread 0 waited less than I per step";
  Planted planted{{"synchronization.barrier"}, waits / p, "thread 0 waits I per step"};
  expect_recovered(c.at(par), {planted}, true, "parallel region", {},
                   c.at(par).t_p - steps * (W + I));
  expect_recovered(c.at(bars[0]), {planted}, false, "first explicit barrier", {},
                   c.at(par).t_p - steps * (W + I));
  // The second thread of each rank exists only from the first parallel region on: while its rank
  // was in MPI_Init_thread it idled for start-up, as the call's own row says, not for serial code
  // (the program's serial code is a few microseconds; up to 10 ms of the tool's and the runtime's
  // start may be counted as serial).
  const auto& root = c.at(m.root());
  const auto& init = c.at(mpi_call(m, m.root(), "MPI_Init_thread"));
  EXPECT_GT(init.t_p, 0.05) << describe(init);
  EXPECT_GE(subclass(root, "control_of_parallelism.startup"),
            subclass(init, "control_of_parallelism.startup") - tolerance(init.t_p))
      << describe(root) << describe(init);
  EXPECT_LT(subclass(root, "loss_of_parallelism.unparallelized"), tolerance(0) + 0.010)
      << describe(root);
}

}  // namespace
}  // namespace scalea::test
