// Why threads waited at a barrier: the skew of their arrival, rebuilt per thread from what they
// did since the previous barrier of the same enclosing region.
#include "wait_causes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/meta.hpp"
#include "counter_causes.hpp"
#include "scalea/drg/meta.hpp"
#include "analysis/thread_values.hpp"

namespace scalea::cli {
namespace {

using format::RegionKind;

// Each thread's values, in the nodes a barrier's cause looks at, of the metrics it reads: gathered
// in one pass over the run's threads (for_each_node_threads), so that a tree read by file is read
// once per barrier, not once per node and metric. Sums per thread in the order of the node's
// holders, as MergedTree::per_thread lists them.
class PerThread {
 public:
  enum Metric : size_t { kTime, kWait, kVisits, kFork, kJoin, kFaults, kCpu, kMetrics };

  PerThread(const drg::MergedTree& t, std::vector<uint32_t> nodes, int page_faults,
            int cpu_time = -1) {
    const drg::Experiment& e = t.experiment();
    metrics_ = {e.metric(format::CoreMetric::TimeSum),
                e.metric(format::CoreMetric::Wait),
                e.metric(format::CoreMetric::Visits),
                e.metric(format::CoreMetric::Fork),
                e.metric(format::CoreMetric::Join),
                page_faults,
                cpu_time};
    std::vector<double> unit(kMetrics, 1.0);
    for (size_t k = 0; k < kMetrics; ++k)
      if (metrics_[k] >= 0 && format::is_time_metric(e.metrics[size_t(metrics_[k])]))
        unit[k] = 1e-9;
    unit[kCpu] = 1e-9;  // CPU-time counters count ns
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for_each_node_threads(t, nodes, metrics_, [&](const NodeThreads& nt) {
      std::vector<std::map<uint32_t, double>>& by_metric = values_[nt.node];
      by_metric.resize(kMetrics);
      for (size_t h = 0; h < nt.count; ++h)
        for (size_t k = 0; k < kMetrics; ++k)
          if (metrics_[k] >= 0) by_metric[k][nt.thread[h]] += nt.value(h, k) * unit[k];
    });
  }

  bool has(Metric m) const { return metrics_[m] >= 0; }
  // Each thread's value of `m` in node n (times in seconds); empty when `m` is not recorded.
  const std::map<uint32_t, double>& of(uint32_t n, Metric m) const {
    static const std::map<uint32_t, double> kNone;
    auto it = values_.find(n);
    return it == values_.end() || it->second.empty() ? kNone : it->second[m];
  }

 private:
  std::vector<int> metrics_;
  std::map<uint32_t, std::vector<std::map<uint32_t, double>>> values_;
};

// Σ over threads of (the largest value − theirs): the PE-time the spread of `v` makes the others
// wait, if every thread's value delays its arrival by that much.
double spread(const std::map<uint32_t, double>& v) {
  double most = 0, sum = 0;
  for (const auto& [th, x] : v) most = std::max(most, x);
  for (const auto& [th, x] : v) sum += most - x;
  return sum;
}

// The threads of `waited` of the rank whose threads waited the most in all (every thread without
// MPI); `rank` is set to that rank (-1 without MPI).
std::map<uint32_t, double> busiest_team(const drg::Experiment& e,
                                        const std::map<uint32_t, double>& waited, int64_t& rank) {
  std::map<int64_t, double> by_rank;
  for (const auto& [th, w] : waited) by_rank[e.threads[th].rank] += w;
  rank = by_rank.begin()->first;
  for (const auto& [r, w] : by_rank)
    if (w > by_rank[rank]) rank = r;
  if (by_rank.size() == 1) return waited;
  std::map<uint32_t, double> out;
  for (const auto& [th, w] : waited)
    if (e.threads[th].rank == rank) out.emplace(th, w);
  return out;
}

// Each thread's wait for a CPU over the run (meta.json affinity threads' runqueue_s, per rank under
// MPI), by the experiment's thread index; threads without the figure are absent.
std::map<uint32_t, double> runqueue_by_thread(const drg::Experiment& e) {
  std::map<std::pair<int, uint32_t>, double> by_id;  // (rank, thread index) -> seconds
  for (const drg::ProcessAffinity& p : drg::read_meta(e.meta).affinity)
    for (const drg::ThreadAffinity& t : p.threads)
      if (t.index && t.runqueue_s) by_id[{p.rank, *t.index}] = *t.runqueue_s;
  std::map<uint32_t, double> out;
  for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
    auto it = by_id.find({e.threads[ti].rank, e.threads[ti].thread});
    if (it == by_id.end() && e.threads[ti].rank >= 0) it = by_id.find({-1, e.threads[ti].thread});
    if (it != by_id.end()) out[ti] = it->second;
  }
  return out;
}

// The experiment's page-fault counter column (a software event: perf::PAGE-FAULTS, ...), or -1.
int page_fault_metric(const drg::Experiment& e) {
  for (size_t m = 0; m < e.metrics.size(); ++m)
    if (is_page_fault_counter(e.metrics[m])) return int(m);
  return -1;
}

// A counter of the thread's own CPU time (perf::TASK-CLOCK, perf::CPU-CLOCK; ns), or -1.
int cpu_time_metric(const drg::Experiment& e) {
  for (size_t m = 0; m < e.metrics.size(); ++m)
    if (is_cpu_time_counter(e.metrics[m])) return int(m);
  return -1;
}

// Each thread's page faults in the merged nodes [from, to) (siblings before a barrier).
std::map<uint32_t, double> faults_by_thread(const PerThread& pt,
                                            std::vector<uint32_t>::const_iterator from,
                                            std::vector<uint32_t>::const_iterator to) {
  std::map<uint32_t, double> out;
  for (auto it = from; it != to; ++it)
    for (const auto& [th, v] : pt.of(*it, PerThread::kFaults)) out[th] += v;
  return out;
}

}  // namespace

SlowThread slowest_thread(const drg::MergedTree& t) {
  const int time = t.experiment().metric(format::CoreMetric::TimeSum);
  std::vector<uint32_t> loops;
  for (uint32_t n = 0; n < t.nodes().size(); ++n)
    if (t.region_of(n).kind == RegionKind::Loop && t.holders(n) > 1) loops.push_back(n);
  std::map<uint32_t, size_t> slowest_in;  // thread -> uneven loops where it was the slowest
  std::map<uint32_t, std::pair<double, double>> lead;  // thread -> its least and largest lead
  size_t uneven = 0;
  for_each_node_threads(t, loops, {time}, [&](const NodeThreads& nt) {
    // Each thread's time (a thread's holders come together), the least and the most.
    uint32_t threads = 0, most_thread = 0;
    double least = 0, most = 0;
    for (size_t h = 0; h < nt.count;) {
      uint32_t th = nt.thread[h];
      double v = 0;
      for (; h < nt.count && nt.thread[h] == th; ++h) v += nt.value(h, 0);
      if (threads++ == 0 || v < least) least = v;
      if (threads == 1 || v > most) most = v, most_thread = th;
    }
    if (threads < 2) return;
    double share = most > 0 ? (most - least) / most : 0;
    if (share <= kBalancedWorkSpread) return;
    ++uneven;
    auto [it, first] = lead.try_emplace(most_thread, share, share);
    it->second = {std::min(it->second.first, share), std::max(it->second.second, share)};
    ++slowest_in[most_thread];
  });
  SlowThread s;
  s.uneven_loops = uneven;
  for (const auto& [th, count] : slowest_in)
    if (count > s.slowest_in) s.thread = th, s.slowest_in = count;
  if (s.thread != format::kNoIndex) std::tie(s.lead_min, s.lead_max) = lead[s.thread];
  return s;
}

bool is_page_fault_counter(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  return upper.find("PAGE-FAULTS") != std::string::npos ||
         upper.find("PAGE_FAULTS") != std::string::npos;
}

namespace {

// What each thread did between the previous barrier and this one (the siblings [from, me) of
// the barrier below `parent`): its work (a synchronization's time less its waiting) and its
// waits in the siblings; the sibling whose waits were the most uneven is `most_queued`.
struct WorkBefore {
  std::map<uint32_t, double> work, queued;
  uint32_t most_queued = format::kNoIndex;
};

WorkBefore work_before(const drg::MergedTree& t, const PerThread& pt, uint32_t parent,
                       std::vector<uint32_t>::const_iterator from,
                       std::vector<uint32_t>::const_iterator me,
                       const std::map<uint32_t, double>& waited) {
  WorkBefore out;
  std::map<uint32_t, double>&work = out.work, &queued = out.queued;
  for (const auto& [th, w] : waited) work[th] = 0, queued[th] = 0;
  uint32_t& most_queued = out.most_queued;
  double most_queue = 0;
  for (auto it = from; it != me; ++it) {
    const auto& times = pt.of(*it, PerThread::kTime);
    const auto& waits = pt.of(*it, PerThread::kWait);
    const bool waits_count = format::region_kind_has(t.region_of(*it).kind, format::kWaits);
    std::map<uint32_t, double> q;
    for (auto& [th, w] : work) {
      auto wi = waits.find(th);
      auto ti = times.find(th);
      double wt = waits_count && wi != waits.end() ? wi->second : 0;
      w += (ti != times.end() ? ti->second : 0) - wt;
      queued[th] += wt;
      q[th] = wt;
    }
    double s = spread(q);
    if (s > most_queue) most_queue = s, most_queued = *it;
  }
  // And the enclosing region's own code (its time less its children's, fork and join).
  std::map<uint32_t, double> own = pt.of(parent, PerThread::kTime);
  for (uint32_t ch : t.node(parent).children)
    for (const auto& [th, v] : pt.of(ch, PerThread::kTime)) own[th] -= v;
  for (PerThread::Metric m : {PerThread::kFork, PerThread::kJoin})
    for (const auto& [th, v] : pt.of(parent, m)) own[th] -= v;
  for (auto& [th, w] : work) w += std::max(0.0, own.count(th) ? own[th] : 0.0);
  return out;
}

// Whether the threads' waits for a CPU over the run (the scheduler's account) may explain their
// uneven work before the barrier.
void cpu_wait_evidence(BarrierCause& c, const drg::Experiment& e,
                       const std::map<uint32_t, double>& work) {
  // Threads that waited longer for a CPU (the scheduler's account over the run) take longer for
  // the same work: when that difference could explain the uneven work, it may be CPU time.
  std::map<uint32_t, double> rq = runqueue_by_thread(e), rq_here;
  for (const auto& [th, w] : work)
    if (rq.count(th)) rq_here[th] = rq[th];
  if (rq_here.size() == work.size() && c.by_work > 0 && spread(rq_here) >= 0.5 * c.by_work)
    c.cpus_shared = c.cpu_waits_may_explain = true;
  // Each thread's wait over the run bounds what it waited here: its own work was between its
  // work less that wait and its work. When those ranges leave less than half the difference in
  // work certain, waiting for a CPU (behind other processes, or waking up) may explain the rest.
  if (rq_here.size() == work.size() && c.work_max > c.work_min) {
    double surely_at_least = 0;
    for (const auto& [th, w] : work) {
      surely_at_least = std::max(surely_at_least, w - rq_here[th]);
      c.cpu_wait_max = std::max(c.cpu_wait_max, rq_here[th]);
    }
    if (surely_at_least - c.work_min < 0.5 * (c.work_max - c.work_min))
      c.cpu_waits_may_explain = true;
  }
}

// The threads' own CPU time in the constructs before the barrier (a CPU-time counter): when it is
// even while their wall time there is not, the work was the same and the difference is time off
// the CPU (a thread that shared its CPU, or waited for one).
void cpu_time_evidence(BarrierCause& c, const PerThread& pt,
                       std::vector<uint32_t>::const_iterator from,
                       std::vector<uint32_t>::const_iterator me,
                       const std::map<uint32_t, double>& work) {
  if (!pt.has(PerThread::kCpu) || from == me) return;
  std::map<uint32_t, double> cpu;
  for (const auto& [th, w] : work) cpu[th] = 0;
  for (auto it = from; it != me; ++it)
    for (const auto& [th, v] : pt.of(*it, PerThread::kCpu))
      if (cpu.count(th)) cpu[th] += v;
  double lo = cpu.begin()->second, hi = lo;
  for (const auto& [th, v] : cpu) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi <= 0) return;  // the counter did not count here
  c.cpu_min = lo, c.cpu_max = hi;
  c.cpu_even = hi - lo <= kBalancedWorkSpread * hi;
}

// The larger of the two explanations, when it holds at least half the waits; otherwise the work
// before the barrier was even and the threads were late for other reasons.
void name_cause(BarrierCause& c, uint32_t most_queued) {
  c.uneven = c.work_max - c.work_min > kBalancedWorkSpread * c.work_max;
  c.small_difference = c.work_max - c.work_min <= kSmallWorkSpread * c.work_max;
  if (c.uneven && c.cpu_even)
    c.kind = BarrierCause::Kind::CpuSharing;  // the same work: the difference is off the CPU
  else if (c.uneven && c.by_work >= 0.5 * c.waits && c.by_work >= c.by_queue)
    c.kind = BarrierCause::Kind::Imbalance;
  else if (c.by_queue >= 0.5 * c.waits && most_queued != format::kNoIndex)
    c.kind = BarrierCause::Kind::Queueing;
  else if (c.cpus_shared) c.kind = BarrierCause::Kind::CpuSharing;
  else if (c.visits_per_pe >= 100 && c.wait_per_visit < 100e-6)
    c.kind = BarrierCause::Kind::ManyBarriers;
  else c.kind = BarrierCause::Kind::LateArrival;
}

}  // namespace

BarrierCause barrier_cause(const drg::MergedTree& t, uint32_t node, bool cpus_shared,
                           const SlowThread& slow) {
  BarrierCause c;
  c.cpus_shared = c.more_threads_than_cpus = cpus_shared;
  const drg::Experiment& e = t.experiment();
  const uint32_t parent = t.node(node).parent;
  if (e.metric(format::CoreMetric::TimeSum) < 0 || parent == format::kNoIndex) return c;
  // What each thread did between the previous barrier of the enclosing region and this one: the
  // work of the siblings in between (a synchronization's time less its waiting), and their waits;
  // and the enclosing region's own code (its time less its children's, fork and join).
  const auto& sib = t.node(parent).children;
  auto me = std::find(sib.begin(), sib.end(), node);
  auto from = me;
  while (from != sib.begin() &&
         !format::region_kind_has(t.region_of(*(from - 1)).kind, format::kBarrier))
    --from;
  const int faults = page_fault_metric(e);
  std::vector<uint32_t> read(sib.begin(), sib.end());
  read.push_back(parent);
  const PerThread pt(t, std::move(read), faults, cpu_time_metric(e));
  // The threads at the barrier, and how long each waited there.
  std::map<uint32_t, double> waited =
      pt.of(node, pt.has(PerThread::kWait) ? PerThread::kWait : PerThread::kTime);
  if (waited.empty()) return c;
  // An OpenMP barrier synchronizes the threads of one process: only threads of the same rank
  // waited for each other there (a difference between ranks is waited for in MPI calls). Judged
  // in the rank whose threads waited most.
  waited = busiest_team(e, waited, c.rank);
  for (const auto& [th, w] : waited) c.waits += w;
  double passes = 0;
  for (const auto& [th, v] : pt.of(node, PerThread::kVisits)) passes += v;
  c.visits_per_pe = passes / double(waited.size());
  c.wait_per_visit = passes > 0 ? c.waits / passes : 0;
  WorkBefore wb = work_before(t, pt, parent, from, me, waited);
  std::map<uint32_t, double>& work = wb.work;
  c.work_min = work.begin()->second, c.work_max = c.work_min;
  for (const auto& [th, w] : work)
    c.work_min = std::min(c.work_min, w), c.work_max = std::max(c.work_max, w);
  c.by_work = spread(work);
  auto by_value = [](const auto& a, const auto& b) { return a.second < b.second; };
  auto most = std::max_element(work.begin(), work.end(), by_value);
  auto least = std::min_element(work.begin(), work.end(), by_value);
  if (faults >= 0) {
    std::map<uint32_t, double> pf = faults_by_thread(pt, from, me);
    c.faults_most_work = pf.count(most->first) ? pf[most->first] : 0;
    c.faults_least_work = pf.count(least->first) ? pf[least->first] : 0;
  }
  if (slow.consistent() && most->first == slow.thread) c.slow_everywhere = true, c.slow = slow;
  cpu_wait_evidence(c, e, work);
  cpu_time_evidence(c, pt, from, me, work);
  c.by_queue = spread(wb.queued);
  c.queue_node = wb.most_queued;
  if (c.waits > 0) name_cause(c, wb.most_queued);
  return c;
}

namespace {

// The extra page faults of the thread with the most work, at kPageFaultSeconds each, explain at
// least a quarter of the difference in work.
bool faults_explain(const BarrierCause& c) {
  if (c.faults_most_work < 0 || c.work_max <= c.work_min) return false;
  return (c.faults_most_work - c.faults_least_work) * kPageFaultSeconds >=
         0.25 * (c.work_max - c.work_min);
}

// The thread with the least work spent at least a quarter of it on page faults there (at
// kPageFaultSeconds each): first-touch memory is a large part of the work itself, and what a
// fault costs varies from thread to thread (they compete in the kernel for the pages).
bool faults_dominate(const BarrierCause& c) {
  if (c.faults_least_work < 0 || c.work_min <= 0) return false;
  return c.faults_least_work * kPageFaultSeconds >= 0.25 * c.work_min;
}

// The work before a barrier whose waits it does not explain: balanced, or uneven by less than
// half the waits (then balancing it can remove at most that part). No schedule is named: the work
// may be a loop that is dynamic already, or tasks (validation.md, BOTS alignment, sparselu).
std::string other_cause_work(const BarrierCause& c, const std::string& range) {
  if (!c.uneven) return fmt::format("the work before it is balanced ({})", range);
  return fmt::format(
      "the work before it ({}) explains only {:.0f} % of the waits (balancing it would remove "
      "at most that part)",
      range, c.waits > 0 ? 100 * c.by_work / c.waits : 0.0);
}

// A time as the hints give it: seconds from 1 s, else milliseconds.
std::string ms(double s) {
  return s >= 1 ? fmt::format("{:.3g} s", s) : fmt::format("{:.3g} ms", s * 1e3);
}

// The hint of a barrier whose waits the uneven work before it explains: what may make the same
// work uneven (page faults, shared CPUs, one slow thread, a small difference), or the table's.
std::string imbalance_hint_of(const drg::MergedTree& t, const BarrierCause& c,
                              const std::string& range, std::string_view imbalance_hint) {
  if (faults_explain(c))
    return fmt::format(
        "the work before it took {}, and the thread with the most also took the most page "
        "faults there ({} against {}): memory touched for the first time (allocated "
        "anew each time, or given back to the system and faulted in again) makes the same "
        "work slower; allocate it once, outside the loop that repeats, or touch it first in "
        "parallel with this loop's schedule; if the difference stays: {}",
        range, grouped(c.faults_most_work), grouped(c.faults_least_work), imbalance_hint);
  if (faults_dominate(c))
    return fmt::format(
        "the work before it took {}, and the threads took {} to {} page faults there "
        "(at least {} of it at 1 us each): memory touched for the first time (allocated anew "
        "each time, or given back to the system and faulted in again) is a large part of "
        "this work, and its cost differs from thread to thread; allocate it once, outside "
        "the loop that repeats, and look again; if the difference stays: {}",
        range, grouped(std::min(c.faults_least_work, c.faults_most_work)),
        grouped(std::max(c.faults_least_work, c.faults_most_work)),
        ms(c.faults_least_work * kPageFaultSeconds), imbalance_hint);
  if (c.more_threads_than_cpus)
    return fmt::format(
        "the work before it took {}, but the threads shared CPUs, which makes "
        "the same work take longer on some threads: run with at most one thread "
        "per CPU and look again; if the difference stays: {}",
        range, imbalance_hint);
  if (c.cpu_waits_may_explain)
    return fmt::format(
        "the work before it took {}, but each thread waited up to {} for a CPU in "
        "this run (the scheduler's account: behind other processes, or waking up), "
        "enough to make the same work take longer on some threads: run on a quiet "
        "machine with pinned threads (OMP_PROC_BIND=close) and look again; if the "
        "difference stays: {}",
        range, ms(c.cpu_wait_max), imbalance_hint);
  if (c.slow_everywhere) {
    const drg::ThreadTree& th = t.experiment().threads[c.slow.thread];
    return fmt::format(
        "the work before it took {}, and {} was the slowest in {} of the run's {} uneven "
        "loops, by {:.0f} to {:.0f} %: what slows one thread in every loop is its CPU (a "
        "busier or slower one: another process on it, a slower core, a virtual machine's "
        "vCPU) or its memory (on a machine with several memory nodes, data first touched "
        "by another thread's loop or by serial code lies far from it), not the iterations; "
        "run with pinned threads on idle CPUs (OMP_PLACES=cores OMP_PROC_BIND=close), "
        "initialize the data in parallel with the loops' schedule, and look again; if the "
        "difference stays, or the CPUs are unequal by design: {}",
        range, pe_label(th.rank, th.thread), c.slow.slowest_in, c.slow.uneven_loops,
        100 * c.slow.lead_min, 100 * c.slow.lead_max, imbalance_hint);
  }
  if (c.small_difference)
    return fmt::format(
        "the work before it took {}, a difference of {:.0f} % that the threads' CPUs can "
        "make of equal work (clock frequency, timer slack, a virtual machine's scheduling): "
        "check that the same threads are slower in a second run; if they are: {}",
        range, 100 * (c.work_max - c.work_min) / c.work_max, imbalance_hint);
  return fmt::format("{} (the work before it: {})", imbalance_hint, range);
}

}  // namespace

std::string barrier_hint(const drg::MergedTree& t, const BarrierCause& c,
                         std::string_view imbalance_hint) {
  // With ranks: the threads of one rank (those that waited for each other at this barrier).
  std::string range =
      fmt::format("{} to {} per thread{}", ms(c.work_min), ms(c.work_max),
                  t.experiment().ranks() > 1 ? fmt::format(" of rank {}", c.rank) : "");
  switch (c.kind) {
    case BarrierCause::Kind::Unknown: return std::string(imbalance_hint);
    case BarrierCause::Kind::Imbalance: return imbalance_hint_of(t, c, range, imbalance_hint);
    case BarrierCause::Kind::Queueing: {
      const drg::Region& r = t.region_of(c.queue_node);
      std::string loc = r.location();
      return fmt::format(
          "the threads queued at the {}{} just before it and left it one after "
          "another, so they arrived here one after another (the work before it: {}): "
          "the waits here come from that contention: shorten or remove the serialized part",
          r.label(), loc.empty() ? "" : " at " + loc, range);
    }
    case BarrierCause::Kind::CpuSharing:
      if (c.cpu_even)
        return fmt::format(
            "the threads' CPU time before it was even ({} to {} per thread, counted by the "
            "CPU-time counter) while their wall time there was not ({}): the work is balanced and "
            "a schedule would not help; a thread lost time off its CPU (sharing it with another "
            "thread or process, or waiting for one): run with at most one thread per CPU, pinned "
            "(OMP_PROC_BIND=close), on CPUs nothing else uses",
            ms(c.cpu_min), ms(c.cpu_max), range);
      return fmt::format(
          "{}, and the threads shared CPUs: a thread waited for its turn on a CPU, not for the "
          "others' work; run with at most one thread per CPU",
          other_cause_work(c, range));
    case BarrierCause::Kind::ManyBarriers:
      return fmt::format(
          "{}; the waiting is spread over {:.0f} passes per thread, {:.1f} us each: the cost "
          "of synchronizing that often (threads waking up and arriving a little late each "
          "time), not of uneven work; synchronize less often: nowait where it is safe, fuse "
          "loops, or parallelize an outer loop{}",
          other_cause_work(c, range), c.visits_per_pe, c.wait_per_visit * 1e6,
          c.uneven ? "" : "; a dynamic schedule would not help");
    case BarrierCause::Kind::LateArrival:
      return fmt::format(
          "{}: threads arrived late for reasons outside the code (other processes on the "
          "CPUs, the OS, threads moving between CPUs); run on a quiet machine with pinned "
          "threads (OMP_PROC_BIND=close) and compare{}",
          other_cause_work(c, range), c.uneven ? "" : "; a dynamic schedule would not help");
  }
  return std::string(imbalance_hint);
}

}  // namespace scalea::cli
