#include "scalea/overheads/rules.hpp"

namespace scalea::overheads {

namespace {

using K = format::RegionKind;
using M = format::MpiClass;
constexpr int k(K kind) { return int(kind); }
constexpr int m(M c) { return int(c); }
constexpr Class DM = Class::DataMovement, SY = Class::Synchronization,
                CP = Class::ControlOfParallelism, AC = Class::AdditionalComputation,
                LP = Class::LossOfParallelism;

// Useful computation: the exclusive time of code regions.
#define USEFUL(id, kind, why) \
  Rule { id, k(kind), -1, Part::Exclusive, true, Class::Unidentified, "", "U += exclusive", why }

const std::vector<Rule> kRules = {
    // ---- useful computation ----
    USEFUL("program.code", K::Program, "serial code of the initial thread (or of an MPI rank)"),
    USEFUL("function.code", K::Function, "code of an instrumented function"),
    USEFUL("user.code", K::User, "code of a user-marked region"),
    USEFUL("parallel.code", K::Parallel, "code of a parallel region outside its constructs"),
    USEFUL("teams.code", K::Teams, "code of a teams region outside its constructs, per team"),
    USEFUL("loop.code", K::Loop, "iterations of a worksharing loop"),
    USEFUL("sections.code", K::Sections, "bodies of sections"),
    USEFUL("single.code", K::Single, "body of a single construct"),
    USEFUL("masked.code", K::Masked, "body of a masked construct"),
    USEFUL("workshare.code", K::Workshare, "Fortran workshare body"),
    USEFUL("taskloop.code", K::Taskloop, "taskloop iterations"),
    USEFUL("task.code", K::Task, "body of an explicit task (counted where it was created)"),
    USEFUL("distribute.code", K::Distribute, "distribute body"),
    USEFUL("scope.code", K::Scope, "scope body"),
    USEFUL("critical.hold", K::Critical, "code inside a critical section, once entered"),
    USEFUL("lock.hold", K::Lock, "code while a lock is held"),
    USEFUL("nest_lock.hold", K::NestLock, "code while a nest lock is held"),
    USEFUL("atomic.hold", K::Atomic, "the atomic update itself"),
    USEFUL("ordered.hold", K::Ordered, "body of an ordered region"),
    USEFUL("flush.code", K::Flush, "flush (no duration is reported)"),
    USEFUL("cancel.code", K::Cancel, "cancel (no duration is reported)"),

    // ---- synchronization: waiting and the synchronization constructs themselves ----
    {"barrier_implicit.wait", k(K::BarrierImplicit), -1, Part::Wait, false, SY, "barrier",
     "S += wait", "threads wait for the slowest at the construct's implicit barrier"},
    {"barrier_implicit.op", k(K::BarrierImplicit), -1, Part::Exclusive, false, SY, "barrier",
     "S += exclusive - wait", "entering and leaving the barrier"},
    {"barrier_explicit.wait", k(K::BarrierExplicit), -1, Part::Wait, false, SY, "barrier",
     "S += wait", "threads wait for the slowest at an explicit barrier"},
    {"barrier_explicit.op", k(K::BarrierExplicit), -1, Part::Exclusive, false, SY, "barrier",
     "S += exclusive - wait", "entering and leaving the barrier"},
    {"barrier_runtime.wait", k(K::BarrierImplementation), -1, Part::Wait, false, SY, "reduction",
     "S += wait", "libomp's barrier inside a reduction"},
    {"barrier_runtime.op", k(K::BarrierImplementation), -1, Part::Exclusive, false, SY, "reduction",
     "S += exclusive - wait", "combining reduction values"},
    {"reduction.wait", k(K::Reduction), -1, Part::Wait, false, SY, "reduction", "S += wait",
     "waiting to combine reduction values"},
    {"reduction.op", k(K::Reduction), -1, Part::Exclusive, false, SY, "reduction",
     "S += exclusive - wait", "combining reduction values"},
    {"taskwait.wait", k(K::Taskwait), -1, Part::Wait, false, SY, "taskwait",
     "S += wait - tasks run meanwhile", "waiting for child tasks"},
    {"taskwait.op", k(K::Taskwait), -1, Part::Exclusive, false, SY, "taskwait",
     "S += exclusive - wait", "the taskwait construct"},
    {"taskgroup.wait", k(K::Taskgroup), -1, Part::Wait, false, SY, "taskwait",
     "S += wait - tasks run meanwhile", "waiting for the group's tasks"},
    {"taskgroup.op", k(K::Taskgroup), -1, Part::Exclusive, false, SY, "taskwait",
     "S += exclusive - wait", "the taskgroup construct"},
    {"critical.wait", k(K::Critical), -1, Part::Wait, false, SY, "critical",
     "S += acquire -> acquired", "waiting to enter a critical section"},
    {"lock.wait", k(K::Lock), -1, Part::Wait, false, SY, "lock", "S += acquire -> acquired",
     "waiting for a lock"},
    {"nest_lock.wait", k(K::NestLock), -1, Part::Wait, false, SY, "lock",
     "S += acquire -> acquired", "waiting for a nest lock"},
    {"atomic.wait", k(K::Atomic), -1, Part::Wait, false, SY, "atomic", "S += acquire -> acquired",
     "waiting for an atomic update"},
    {"ordered.wait", k(K::Ordered), -1, Part::Wait, false, SY, "ordered",
     "S += acquire -> acquired", "waiting for the preceding iterations"},
    {"any.imbalance", kAnyKind, -1, Part::IdleShorter, false, SY, "load_imbalance",
     "S += T_p - t_i for PEs that ran it", "PEs that finish the region early wait for the others"},
    {"flush.spin_wait", kAnyKind, -1, Part::SpinWait, false, SY, "spin_wait",
     "S += sum_i u_i - u_ref in a work region whose flush visits grew over the reference's "
     "(at least 2x and by at least 1,000)",
     "a busy-wait loop polling shared flags with flush (a pipeline, point-to-point signalling): "
     "the time beyond the reference's work is waiting"},

    // ---- control of parallelism ----
    {"parallel.fork_join", k(K::Parallel), -1, Part::ForkJoin, false, CP, "fork_join",
     "C += fork + join (master)", "starting and ending the team"},
    {"parallel.idle_fork", k(K::Parallel), -1, Part::IdleFork, false, CP, "fork_join",
     "C += min(T_p - t_i, fork_i + join)",
     "workers start after the master forks and stop before it joins"},
    {"teams.fork_join", k(K::Teams), -1, Part::ForkJoin, false, CP, "fork_join",
     "C += fork + join (the thread that starts the league)", "starting and ending the league"},
    {"teams.idle_fork", k(K::Teams), -1, Part::IdleFork, false, CP, "fork_join",
     "C += min(T_p - t_i, fork_i + join)",
     "the other teams' initial threads start after the league's fork and stop before its join"},
    {"parallel.between_constructs", k(K::Parallel), -1, Part::BetweenConstructs, false, CP,
     "scheduling", "C += own code when it is below 2 us per visit of the constructs inside",
     "a parallel region whose own code only reaches many small constructs: that time is the "
     "runtime's entry and exit of each construct (scheduling, dispatch)"},
    {"mpi.startup", k(K::Mpi), kMpiStartup, Part::Exclusive, false, CP, "startup", "C += exclusive",
     "MPI_Init/MPI_Finalize: starting and ending the MPI library"},
    {"mpi.startup.wait", k(K::Mpi), kMpiStartup, Part::Wait, false, CP, "startup", "C += wait",
     "MPI_Init/MPI_Finalize: waiting for the other ranks to start or end"},
    {"mpi.startup.skew", k(K::Mpi), kMpiStartup, Part::IdleShorter, false, CP, "startup",
     "C += T_p - t_i", "ranks that reach MPI_Init later (started later) spend less time in it"},
    {"program.runtime_startup", k(K::Program), -1, Part::IdleRuntimeStart, false, CP, "startup",
     "C += the part of T_p - t_i, for a thread the OpenMP runtime created, from the fork of its "
     "team to its start, and the runtime's initialization (meta.json openmp.runtime_init_s, "
     "runtime_ready_s, init_by_fork; affinity.threads[].created_s)",
     "the OpenMP runtime initializing and creating its threads: before that the program ran serial "
     "code (unparallelized), or a smaller team (partially parallelized, a thread created later)"},
    {"program.idle_late", k(K::Program), -1, Part::RootLate, false, CP, "fork_join",
     "C += a non-initial thread's root exclusive time, up to the sum over its rank's outermost "
     "parallel regions it ran of t_initial - t_i",
     "a thread outside the parallel regions it belongs to while the initial thread is in them: it "
     "started after the fork or stopped before the join (the region's row shows the same time as "
     "its fork/join)"},
    {"program.launch_skew", k(K::Program), -1, Part::IdleLaunchSkew, false, CP, "startup",
     "C += T_p - t_i for the initial thread of an MPI rank",
     "ranks started later than the first one (launch skew)"},
    {"program.mpi_startup", k(K::Program), -1, Part::IdleMpiStartup, false, CP, "startup",
     "C += the part of a non-initial thread's idle time at the root (before it existed, or "
     "outside every region) in which its rank's initial thread was in MPI_Init, MPI_Init_thread "
     "or MPI_Finalize outside parallel regions: MPI_Init's time first from before the thread "
     "existed, MPI_Finalize's from after",
     "the other threads of a rank wait while it starts or ends MPI; those calls' own rows count "
     "the same PE-time as start-up (mpi.startup.skew), not as serial code"},

    // ---- loss of parallelism ----
    {"any.unparallelized", kAnyKind, -1, Part::IdleOneRan, false, LP, "unparallelized",
     "L += T_p for each PE that did not run it, when one PE ran it", "one PE busy, p-1 idle"},
    {"any.partially_parallelized", kAnyKind, -1, Part::IdleSomeRan, false, LP,
     "partially_parallelized", "L += T_p for each PE that did not run it, when 1 < q < p ran it",
     "q of p PEs busy (e.g. a team smaller than p)"},
    {"program.before_start", k(K::Program), -1, Part::IdleBeforeStart, false, LP, "unparallelized",
     "L += T_p - t_i for PEs that did not exist yet",
     "serial start of the program before the threads exist"},
    {"program.idle_not_in_team", k(K::Program), -1, Part::RootNotInTeam, false, LP,
     "partially_parallelized",
     "L += a non-initial thread's root exclusive time, up to the sum over its rank's outermost "
     "parallel regions it did not run of t_initial",
     "a thread idle while the initial thread runs a parallel region with a smaller team"},
    {"program.idle_thread", k(K::Program), -1, Part::IdleRoot, false, LP, "unparallelized",
     "L += the rest of a non-initial thread's root exclusive time, up to the initial thread's time "
     "outside parallel regions once this thread existed",
     "a thread outside any parallel region is idle while serial code runs"},
    {"sync.after_serial", kAnyKind, -1, Part::SerialWait, false, LP, "unparallelized",
     "L += min(wait, T_s) for the PEs waiting for a previous sibling region that one PE ran, or "
     "in a data collective for the enclosing region's own code that one PE ran",
     "the others wait at the barrier or collective while one PE runs serial code (e.g. rank 0)"},
    {"barrier.after_partial", kAnyKind, -1, Part::PartialBarrierWait, false, LP,
     "partially_parallelized", "L += wait at a barrier that follows single/sections/masked",
     "threads that did not run the construct's body wait for the one that did"},
    {"task.idle", kAnyKind, -1, Part::IdleInTask, false, SY, "load_imbalance",
     "S += T_p - t_i for every PE with less of a task's work (created in it or below) than the "
     "busiest, or none",
     "tasks share their region's work among the team: a PE that ran less of this task's work ran "
     "other tasks or waited; where they waited, the synchronization shows it"},
    {"partial.idle", kAnyKind, -1, Part::IdlePartial, false, LP, "partially_parallelized",
     "L += T_p - t_i for the PEs of a single/masked/sections construct that did not run (all) "
     "of its body (no tasks created in it; sections: fewer sections than PEs)",
     "one thread (or a few) runs the construct's body while the rest of the team idles"},
    {"work.replicated", kAnyKind, -1, Part::Replicated, false, LP, "replicated",
     "L += sum_i min(u_i, u_ref) - u_ref when k >= 2 PEs each did at least 0.6 u_ref and the "
     "slowest at most twice the fastest, visiting as often as the reference, in code not divided "
     "among them (program, function, user region, parallel region's own code); with call-path "
     "samples, their CPU time there at least (1 + 0.6 (k - 1)) times the reference's",
     "every PE repeats the same work: only one copy is useful"},

    // ---- data movement: local memory (needs counters, the reference and a machine file) ----
    {"memory.extra_misses", kAnyKind, -1, Part::ExtraMisses, false, DM, "local_memory",
     "D += sum_L max(0, misses_L - misses_L,ref) * penalty_L (at most the region's useful work)",
     "cache misses beyond the reference run's cost the calibrated miss penalty each (scalea "
     "calibrate)"},

    // ---- additional computation ----
    {"work.extra", kAnyKind, -1, Part::ExtraWork, false, AC, "algorithm",
     "A += work of regions absent from the reference, and loop work beyond the reference's "
     "iterations",
     "the parallel version executes code or iterations the sequential one does not"},

    // ---- MPI ----
    {"mpi.p2p.wait", k(K::Mpi), m(M::P2P), Part::Wait, false, SY, "mpi_waiting",
     "S += wait_i as the message model split it (t_i - the default model's cost when the run "
     "contradicts the model), none below 10 us per call (the exchange's own cost)",
     "waiting for the partner of a point-to-point call (late sender, late receiver)"},
    {"mpi.p2p.transfer", k(K::Mpi), m(M::P2P), Part::Exclusive, false, DM, "mpi_p2p",
     "D += exclusive - wait", "moving point-to-point messages"},
    {"mpi.collective.wait", k(K::Mpi), m(M::Collective), Part::Wait, false, SY, "mpi_waiting",
     "S += t_i - transfer_i",
     "ranks that arrive early wait: all but what the calls cost when nobody is late"},
    {"mpi.collective.transfer", k(K::Mpi), m(M::Collective), Part::Exclusive, false, DM,
     "mpi_collective",
     "D += transfer_i = min(t_i, min_j t_j), and when ranks are late in turn (more than 10 us "
     "and twice the shortest call beyond it per call) min(that, max(calls_i x shortest call, "
     "model_i)); model_i = steps x latency + bytes x time per byte, left out when the run "
     "contradicts it",
     "the collective's own cost: bounded by the fastest rank, the calibrated message model and "
     "the rank's shortest call"},
    {"mpi.onesided.wait", k(K::Mpi), m(M::OneSided), Part::Wait, false, SY, "mpi_waiting",
     "S += wait", "waiting in one-sided synchronization"},
    {"mpi.onesided.transfer", k(K::Mpi), m(M::OneSided), Part::Exclusive, false, DM,
     "mpi_one_sided", "D += exclusive - wait", "put/get/accumulate"},
    {"mpi.io.wait", k(K::Mpi), m(M::Io), Part::Wait, false, SY, "mpi_waiting", "S += wait",
     "waiting in collective I/O"},
    {"mpi.io.transfer", k(K::Mpi), m(M::Io), Part::Exclusive, false, DM, "mpi_io",
     "D += exclusive - wait", "MPI-IO reads and writes"},
    {"mpi.sync", k(K::Mpi), m(M::Sync), Part::Exclusive, false, SY, "mpi_barrier_cost",
     "S += t_i - wait_i", "MPI_Barrier's own cost: its messages when no rank is late"},
    {"mpi.sync.wait", k(K::Mpi), m(M::Sync), Part::Wait, false, SY, "mpi_barrier",
     "S += wait_i = t_i - own cost_i (as mpi.collective.transfer), at most the model's wait",
     "ranks waiting in MPI_Barrier for the last one to arrive"},
    {"mpi.wait", k(K::Mpi), m(M::Wait), Part::Exclusive, false, DM, "mpi_p2p",
     "D += transfer_i as for collectives (min(t_i, min_j t_j), and calls_i x shortest call when "
     "ranks are late in turn) at a site every rank calls, else nothing",
     "MPI_Wait/Test: the completions' own cost (a large message completes there), bounded by "
     "the rank that waited least"},
    {"mpi.wait.wait", k(K::Mpi), m(M::Wait), Part::Wait, false, SY, "mpi_waiting",
     "S += t_i - transfer_i at a site every rank calls, else t_i",
     "MPI_Wait/Test: waiting for the partners of nonblocking operations"},
    {"mpi.management", k(K::Mpi), m(M::Management), Part::Exclusive, false, CP, "mpi_management",
     "C += exclusive", "communicator, group and window management"},
    {"mpi.management.wait", k(K::Mpi), m(M::Management), Part::Wait, false, CP, "mpi_management",
     "C += wait", "communicator, group and window management"},
    {"mpi.p2p.local", k(K::Mpi), m(M::P2P), Part::NoPartner, false, DM, "mpi_p2p",
     "D += exclusive (one rank)", "no other rank to wait for: the call copies data locally"},
    {"mpi.wait.local", k(K::Mpi), m(M::Wait), Part::NoPartner, false, DM, "mpi_p2p",
     "D += exclusive (one rank)", "completing a request with no other rank: local copies"},
    {"mpi.collective.local", k(K::Mpi), m(M::Collective), Part::NoPartner, false, DM,
     "mpi_collective", "D += exclusive (one rank)", "a collective over one rank: local copies"},

    // ---- file I/O (collect/io) ----
    {"io.transfer", k(K::Io), -1, Part::Exclusive, false, DM, "io", "D += exclusive",
     "POSIX and C stdio I/O calls (open, read, write, fsync, fwrite, ...): moving data to and "
     "from files"},
};

#undef USEFUL

}  // namespace

const std::vector<Rule>& rules() { return kRules; }

std::string rule_table_markdown() {
  static const char* part_names[] = {"exclusive",
                                     "wait",
                                     "fork+join",
                                     "idle (1 PE ran it)",
                                     "idle (q<p ran it)",
                                     "idle (ran shorter)",
                                     "idle (fork/join)",
                                     "idle (before start)",
                                     "wait after single/sections/masked",
                                     "wait after a region one PE ran",
                                     "replicated work",
                                     "extra work",
                                     "idle thread root",
                                     "extra cache misses",
                                     "idle (part of the team ran it)",
                                     "idle (rank started late)",
                                     "own code between constructs",
                                     "spin-wait",
                                     "no partner",
                                     "idle (in a task)",
                                     "idle (runtime starting)",
                                     "idle thread root (late in its regions)",
                                     "idle thread root (not in the team)",
                                     "idle (rank in MPI start-up)"};
  static_assert(sizeof part_names / sizeof *part_names == size_t(Part::IdleMpiStartup) + 1,
                "a name for every Part");
  std::string out =
      "| rule | region | part | class | formula (PE-time) | reason |\n"
      "|---|---|---|---|---|---|\n";
  for (const Rule& r : kRules) {
    std::string region = r.kind < 0 ? "any" : std::string(format::region_kind_name(K(r.kind)));
    if (r.kind == k(K::Mpi) && r.subkind >= 0)
      region +=
          " (" +
          std::string(r.subkind == kMpiStartup ? "startup"
                                               : format::mpi_class_name(uint16_t(r.subkind))) +
          ")";
    std::string cls =
        r.useful ? "useful work U" : std::string(class_key(r.cls)) + "." + std::string(r.subclass);
    out += "| `" + std::string(r.id) + "` | " + region + " | " + part_names[int(r.part)] + " | " +
           cls + " | " + std::string(r.formula) + " | " + std::string(r.reason) + " |\n";
  }
  return out;
}

bool is_mpi_startup(std::string_view name) {
  return name == "MPI_Init" || name == "MPI_Init_thread" || name == "MPI_Finalize";
}

namespace {
const Rule* find_rule_slow(format::RegionKind kind, uint16_t subkind, Part part) {
  const Rule* any = nullptr;
  for (const Rule& r : kRules) {
    if (r.part != part) continue;
    if (r.kind == int(kind) && (r.subkind < 0 || r.subkind == int(subkind))) return &r;
    if (r.kind == kAnyKind && !any && (r.subkind < 0 || r.subkind == int(subkind))) any = &r;
  }
  return any;
}
// Subkinds: the MPI classes and kMpiStartup (the largest); parts: the Part enum.
constexpr int kSubkinds = kMpiStartup + 1, kParts = int(Part::IdleMpiStartup) + 1;
}  // namespace

const Rule* find_rule(format::RegionKind kind, uint16_t subkind, Part part) {
  // The classifier asks this for every node of every thread: answers come from a table built once.
  static const std::vector<const Rule*> table = [] {
    std::vector<const Rule*> t(size_t(format::kRegionKindCount) * kSubkinds * kParts);
    for (int k = 0; k < format::kRegionKindCount; ++k)
      for (int sk = 0; sk < kSubkinds; ++sk)
        for (int pt = 0; pt < kParts; ++pt)
          t[(size_t(k) * kSubkinds + size_t(sk)) * kParts + size_t(pt)] =
              find_rule_slow(format::RegionKind(k), uint16_t(sk), Part(pt));
    return t;
  }();
  if (uint16_t(kind) >= format::kRegionKindCount || subkind >= kSubkinds || int(part) >= kParts)
    return find_rule_slow(kind, subkind, part);
  return table[(size_t(kind) * kSubkinds + subkind) * kParts + size_t(part)];
}
}  // namespace scalea::overheads
