// Why threads waited at a barrier, from what the run measured before it: the hint of a barrier
// finding follows the evidence (docs/overhead-model.md, "Why a barrier waited"). A barrier after
// balanced work must not be told "the iterations are imbalanced".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "scalea/drg/cct.hpp"

namespace scalea::cli {

// Work before a barrier that differs between threads by less than this share of the largest is
// balanced: sleeps, timer slack, clock frequency and the OS move equal work by a few per cent
// (equal sleeps on two threads of a quiet 2-CPU machine measured 239 and 246 ms), which no
// schedule clause changes.
inline constexpr double kBalancedWorkSpread = 0.05;
// Up to this share, a difference in work is imbalance, but the hint says first that the threads'
// CPUs can make that much of equal work (239 to 260 ms of equal sleeps on a busy 2-CPU machine).
inline constexpr double kSmallWorkSpread = 0.15;

// What one page fault costs, for judging whether extra faults explain slower work: a minor fault
// (a fresh page zeroed and mapped) takes about a microsecond.
inline constexpr double kPageFaultSeconds = 1e-6;
// ... and what one may cost at most when threads fault memory in together (they queue in the
// kernel: 65,536 faults of two threads together took 5.7 us each on this project's VM, 2.6 us
// alone): extra faults that, at no more than this each, would be all of an overhead may be it.
inline constexpr double kPageFaultMaxSeconds = 20e-6;
// A region's extra faults are named as the cause of its unidentified overhead when at
// kPageFaultSeconds each they take at least this share of it (and at kPageFaultMaxSeconds, all).
inline constexpr double kPageFaultShare = 0.10;
// A page-fault counter (perf::PAGE-FAULTS, a PAGE_FAULTS event), by its name.
bool is_page_fault_counter(std::string_view name);

// A thread on a slower or busier CPU (another process on it, a slower core, a virtual machine's
// vCPU) makes every worksharing loop uneven the same way, whatever the loops' iterations. The
// run's loops name such a thread when at least kSlowThreadLoops of them are uneven (by more than
// kBalancedWorkSpread) and one thread was the slowest in at least kSlowThreadShare of those.
inline constexpr size_t kSlowThreadLoops = 3;
inline constexpr double kSlowThreadShare = 0.8;

struct SlowThread {
  uint32_t thread =
      format::kNoIndex;               // Experiment::threads index, of the thread slowest most often
  size_t slowest_in = 0;              // uneven loops where it was the slowest
  size_t uneven_loops = 0;            // loops of the run uneven by more than kBalancedWorkSpread
  double lead_min = 0, lead_max = 0;  // its lead over the fastest thread there (share of its time)
  bool consistent() const {
    return uneven_loops >= kSlowThreadLoops &&
           double(slowest_in) >= kSlowThreadShare * double(uneven_loops);
  }
};

// Over the run's worksharing loops that more than one thread ran (each thread's time in them).
SlowThread slowest_thread(const drg::MergedTree& t);

struct BarrierCause {
  enum class Kind {
    Unknown,       // nothing measured to judge by (no waits, no threads)
    Imbalance,     // the threads' work before the barrier differs: it explains the waits
    Queueing,      // they arrived one after another from a critical section or lock before it
    CpuSharing,    // balanced work, more threads than CPUs: a thread waited for its CPU
    ManyBarriers,  // balanced work, a great many barriers with a little waiting each
    LateArrival,   // balanced work, few barriers: threads late for reasons outside the code
  };
  Kind kind = Kind::Unknown;
  int64_t rank = -1;    // the rank whose threads are judged (its threads waited most; -1: no MPI)
  double waits = 0;     // PE-seconds waited at the barrier (by that rank's threads)
  double by_work = 0;   // PE-seconds of the waits the uneven work before it explains
  double by_queue = 0;  // ... the uneven waits in the synchronizations before it explain
  double work_min = 0;  // the least and most work before it of one thread (seconds)
  double work_max = 0;
  double visits_per_pe = 0;                // times each thread passed the barrier, on average
  double wait_per_visit = 0;               // seconds
  uint32_t queue_node = format::kNoIndex;  // the critical section or lock they queued at
  bool cpus_shared = false;  // more threads than CPUs, or threads that waited unevenly for one
  bool more_threads_than_cpus = false;  // on a host of the run (cpu_sharing())
  // The threads' waits for a CPU over the run (meta.json runqueue_s) are large enough to explain
  // at least half the difference in work: it may not be the code's.
  bool cpu_waits_may_explain = false;
  double cpu_wait_max = 0;  // the longest of those waits (seconds)
  bool uneven = false;      // the work differs by more than kBalancedWorkSpread of the largest
  bool small_difference = false;  // the work differs by at most kSmallWorkSpread of the largest
  // Page faults before the barrier (a page-fault counter read in the constructs there) of the
  // thread with the most work and of the one with the least; negative without the counter.
  double faults_most_work = -1, faults_least_work = -1;
  // The threads' own CPU time in the constructs before it (a CPU-time counter, seconds; 0 without
  // one), and whether it is even (within kBalancedWorkSpread of the largest).
  double cpu_min = 0, cpu_max = 0;
  bool cpu_even = false;
  // The thread with the most work here is the one slowest in most loops of the run (SlowThread).
  bool slow_everywhere = false;
  SlowThread slow;
};

// The cause of the waits at barrier `node` (a merged node of a barrier region), from its siblings
// since the previous barrier in the same enclosing region and the enclosing region's own code, per
// thread. `cpus_shared`: the run had more threads than CPUs on a host (cpu_sharing()).
// `slow`: slowest_thread() of the run (none: not judged).
BarrierCause barrier_cause(const drg::MergedTree& t, uint32_t node, bool cpus_shared,
                           const SlowThread& slow = {});

// The hint for a barrier finding with this cause; `imbalance_hint` is the table's hint for the
// construct before the barrier, used when the cause is imbalance.
std::string barrier_hint(const drg::MergedTree& t, const BarrierCause& c,
                         std::string_view imbalance_hint);

}  // namespace scalea::cli
