#include "scalea/overheads/classify.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "scalea/overheads/rules.hpp"

namespace scalea::overheads {

namespace {

using drg::MergedTree;
using format::RegionKind;

// ---- thresholds of the evidence rules (docs/overhead-model.md, "Thresholds") ------------------

// Replicated code: every PE did at least this share of the reference's work in the region.
constexpr double kReplicaMinShare = 0.6;
// A parallel region's own code below this many ns per visit of the constructs inside it is the
// runtime's cost of reaching them, not work.
constexpr double kConstructOverheadNs = 2000;
// A spin-wait on flush: flush visits grew by at least this many, and by this factor, over the
// reference's.
constexpr double kSpinMinFlushes = 1000;
constexpr double kSpinFactor = 2;
// A data collective after the enclosing region's own code ran on one PE: that PE did at least
// this share of the code.
constexpr double kSerialShare = 0.9;

// PE-seconds per rule (each rule names its class and subclass), plus useful work. Rules are
// counted by their index in the table, so adding is an array update on the hot loops.
struct Buckets {
  double useful = 0;
  std::array<double, kClassCount> cls{};
  std::vector<double> by_rule = std::vector<double>(rules().size(), 0.0);

  void add(const Rule* rule, double v) {
    if (!rule || v == 0) return;
    if (rule->useful) {
      useful += v;
      return;
    }
    cls[size_t(rule->cls)] += v;
    by_rule[size_t(rule - rules().data())] += v;
  }
  void add(const Buckets& o) {
    useful += o.useful;
    for (int c = 0; c < kClassCount; ++c) cls[size_t(c)] += o.cls[size_t(c)];
    for (size_t i = 0; i < by_rule.size(); ++i) by_rule[i] += o.by_rule[i];
  }
};

struct Columns {
  int visits, time, wait, fork, join, task_exec, team_size, iterations, tasks_created, transfer;
  explicit Columns(const drg::Experiment& e)
      : visits(e.metric("visits")), time(e.metric("time")), wait(e.metric("wait")),
        fork(e.metric("fork")), join(e.metric("join")), task_exec(e.metric("task_exec")),
        team_size(e.metric("team_size")), iterations(e.metric("iterations")),
        tasks_created(e.metric("tasks_created")), transfer(e.metric("transfer")) {}
};

bool is_task(const drg::Experiment& e, const drg::ThreadTree& t, uint32_t n) {
  return e.regions[t.region[n]].kind == RegionKind::Task;
}

// The times of every node of one thread, in seconds: `excl` its exclusive time, `incl` its time
// including what it contains. An explicit task belongs to the node where it was created: a task
// node is not subtracted from its parent (the task may have run anywhere on this thread); each
// node instead gives back the task time that ran while it was open (task_exec) outside its
// children. `incl` is the subtree sum of `excl` in the thread's tree, where a task node is a child
// of its creation context: the node's own time plus the tasks created inside it that this thread
// ran, wherever it ran them. `child_time`, `child_task` and `acc` are scratch.
void thread_times(const drg::Experiment& e, const drg::ThreadTree& t, const Columns& c,
                  std::vector<double>& child_time, std::vector<double>& child_task,
                  std::vector<double>& acc, double* excl, double* incl) {
  child_time.assign(t.size(), 0);
  child_task.assign(t.size(), 0);
  acc.assign(t.size(), 0);
  // A node never entered on this thread (visits 0) only exists as the path to regions the
  // thread did run (a worker's copy of the master's context): it covers its children's time
  // and has none of its own.
  for (uint32_t n = uint32_t(t.size()); n-- > 0;) {
    bool entered = e.value(t, n, c.visits) > 0;
    double covered = entered ? e.value(t, n, c.time) : child_time[n];
    // Tasks run inside a child ran inside the node too: never less than the children's.
    double tasks = entered ? std::max(e.value(t, n, c.task_exec), child_task[n]) : child_task[n];
    if (n > 0 && !is_task(e, t, n)) {
      child_time[t.parent[n]] += covered;
      child_task[t.parent[n]] += tasks;
    }
    excl[n] = entered ? (e.value(t, n, c.time) - child_time[n] - (tasks - child_task[n])) * 1e-9
                      : 0.0;
    incl[n] = excl[n] + acc[n];
    if (n > 0) acc[t.parent[n]] += incl[n];
  }
}

// A thread's nodes in the order of the merged tree's member lists: by merged node, then by node.
// Every analysis pass streams over the threads in this order, so each per-region sum adds the
// same numbers in the same order as a walk over the region's members (thread by thread) would,
// while reading each thread's arrays from one place in memory.
void member_order(const std::vector<uint32_t>& merged, std::vector<uint32_t>& out) {
  out.resize(merged.size());
  for (uint32_t n = 0; n < merged.size(); ++n) out[n] = n;
  if (!std::is_sorted(merged.begin(), merged.end()))
    std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
      return merged[a] != merged[b] ? merged[a] < merged[b] : a < b;
    });
}

bool has_wait(RegionKind k) {
  switch (k) {
    case RegionKind::BarrierImplicit: case RegionKind::BarrierExplicit:
    case RegionKind::BarrierImplementation: case RegionKind::Taskwait: case RegionKind::Taskgroup:
    case RegionKind::Reduction: case RegionKind::Critical: case RegionKind::Lock:
    case RegionKind::NestLock: case RegionKind::Atomic: case RegionKind::Ordered:
    case RegionKind::Mpi:
      return true;
    default:
      return false;
  }
}

bool is_barrier(RegionKind k) {
  return k == RegionKind::BarrierImplicit || k == RegionKind::BarrierExplicit;
}

bool is_partial_construct(RegionKind k) {
  return k == RegionKind::Single || k == RegionKind::Sections || k == RegionKind::Masked;
}

// Code that is not divided among the PEs that run it: each of them runs all of it. Only there can
// work be replicated; worksharing constructs (loop, taskloop, sections, single, distribute,
// workshare) and tasks divide their work by construction.
bool is_undivided(RegionKind k) {
  return k == RegionKind::Program || k == RegionKind::Function || k == RegionKind::User ||
         k == RegionKind::Parallel;
}

// The subkind the rules are looked up with: MPI_Init/MPI_Finalize get their own (kMpiStartup).
uint16_t rule_subkind(const drg::Region& r) {
  return r.kind == RegionKind::Mpi && is_mpi_startup(r.name) ? kMpiStartup : r.subkind;
}

// Synchronization that waits for the PEs still running the region before it.
bool waits_for_others(const drg::Region& r) {
  if (is_barrier(r.kind)) return true;
  return r.kind == RegionKind::Mpi && (r.subkind == uint16_t(format::MpiClass::Collective) ||
                                       r.subkind == uint16_t(format::MpiClass::Sync));
}

// What the PEs holding one merged node have in common: maxima, sums and counts over its members
// (one per thread), gathered in one streaming pass over the threads. Times are the members' `incl`.
struct MemberStats {
  size_t members = 0;
  size_t entered = 0;         // members with visits > 0: the PEs that ran the region
  double time_max = 0, time_min = 0;  // s, over every member
  double visits = 0, iterations = 0;  // visits summed, iterations the largest
  double tasks_created = 0;
  double master_join = 0;     // s, join of the parallel region's master
  // Over the members that entered: time in s, and the threads with the most and least of it.
  double sum_t = 0, max_t = -1, min_t = 1e300;
  int most_loaded = -1, least_loaded = -1;
  // Positive exclusive time of the members that entered, and the thread with the most of it.
  double excl_sum = 0, excl_most = 0;
  uint32_t excl_who = format::kNoIndex;
  double fork_join = 0;       // s, fork + join of the parallel region's members, summed
  std::array<double, 3> misses{};  // inclusive cache misses per level, summed
};

// How one merged node's PE-time is split (the per-PE decisions of measure()), fixed before the
// pass over the PEs from the statistics of the whole run.
struct NodePlan {
  const drg::Region* region = nullptr;
  // MPI collectives: a rank's transfer is at most the fastest rank's time and the message
  // model's; the rest is waiting.
  bool collective = false;
  double fastest = 0;  // s
  // A one-rank run: MPI calls have no partner to wait for.
  bool no_partner = false;
  // A barrier right after single/sections/masked waits for the one thread that ran the body.
  bool partial_barrier = false;
  // Synchronization right after a region that fewer PEs ran: for the PEs that did not run it,
  // the wait (up to that region's time) is loss of parallelism.
  uint32_t before = format::kNoIndex;
  size_t before_pes = 0;
  double before_time = 0;  // s
  // A data collective after the enclosing region's own code ran on one PE only.
  uint32_t serial_pe = format::kNoIndex;
  double serial_time = 0;  // s
  // The region's rules for each part of a PE's time, looked up once.
  const Rule *wait = nullptr, *fork_join = nullptr, *partial_wait = nullptr,
             *serial_wait = nullptr, *exclusive = nullptr, *idle_root = nullptr;
  // PEs that ran the region for less than its wall time, and PEs that did not run it.
  const Rule *shorter = nullptr, *not_ran_one = nullptr, *not_ran_some = nullptr;
};

// Everything the analysis needs from one run, per merged node.
struct RunFacts {
  std::vector<MemberStats> stats;
  std::vector<NodePlan> plan;
  std::vector<Buckets> own;        // classified PE-time of the node itself (not its subtree)
  std::vector<double> own_useful;  // useful PE-time of the node itself
  // Over the PEs with useful time in the node: the least and the most of it, and how many.
  std::vector<double> useful_min, useful_max;
  std::vector<uint32_t> useful_pes;
  std::vector<double> time_max;    // s
  std::vector<double> visits, iterations;
  std::vector<double> flushes;     // visits of the flush regions directly below the node
  std::vector<uint32_t> keys;  // call-path key of every node
  std::vector<double> useful_per_pe;  // useful seconds per thread (for POP metrics)
  // Per thread node (offset Workers::first): exclusive time, then (after pass 2) its useful or
  // classified rest; and the time including what the node contains (thread_times).
  std::vector<double> rest, incl;
  // Exclusive cache misses per level (L1, L2, L3) per node, when the run has the counters.
  std::array<bool, 3> has_misses{};
  std::vector<std::array<double, 3>> misses;
};

// The counter column of a cache level's misses ("papi:PAPI_L1_DCM", ...), or -1.
int miss_column(const drg::Experiment& e, int level) {
  static const char* names[3][2] = {{"papi:PAPI_L1_DCM", "papi:PAPI_L1_TCM"},
                                    {"papi:PAPI_L2_DCM", "papi:PAPI_L2_TCM"},
                                    {"papi:PAPI_L3_TCM", "papi:PAPI_L3_DCM"}};
  for (const char* n : names[level])
    if (e.metric(n) >= 0) return e.metric(n);
  return -1;
}

// Position of every merged node among its parent's children.
std::vector<uint32_t> child_positions(const MergedTree& t) {
  std::vector<uint32_t> pos(t.nodes().size(), 0);
  for (const drg::MergedNode& mn : t.nodes())
    for (uint32_t k = 0; k < mn.children.size(); ++k) pos[mn.children[k]] = k;
  return pos;
}

// A single or masked body that created no tasks, or fewer sections than the PEs that reached
// them: one PE (or a few) works while the rest of the team idles.
bool runs_on_part_of_team(const drg::Region& r, const MemberStats& s) {
  if (r.kind == RegionKind::Single || r.kind == RegionKind::Masked) return s.tasks_created == 0;
  if (r.kind == RegionKind::Sections)
    return s.visits > 0 && s.entered > 0 && s.iterations * double(s.entered) / s.visits < double(s.entered);
  return false;
}

NodePlan plan_node(const MergedTree& t, const std::vector<MemberStats>& st,
                   const std::vector<uint32_t>& child_pos, double construct_visits, uint32_t n,
                   bool one_rank, bool in_task) {
  const drg::MergedNode& mn = t.node(n);
  const drg::Region& r = t.region_of(n);
  uint16_t sub = rule_subkind(r);
  NodePlan pl;
  pl.region = &r;
  pl.wait = find_rule(r.kind, sub, Part::Wait);
  pl.fork_join = find_rule(r.kind, sub, Part::ForkJoin);
  pl.partial_wait = find_rule(r.kind, sub, Part::PartialBarrierWait);
  pl.serial_wait = find_rule(r.kind, sub, Part::SerialWait);
  pl.exclusive = find_rule(r.kind, sub, Part::Exclusive);
  pl.idle_root = find_rule(r.kind, sub, Part::IdleRoot);
  pl.collective = r.kind == RegionKind::Mpi && r.subkind == uint16_t(format::MpiClass::Collective);
  // One rank: no partner to wait for, whatever the message model made of the call's time.
  if (one_rank && r.kind == RegionKind::Mpi) {
    if (const Rule* local = find_rule(r.kind, sub, Part::NoPartner)) {
      pl.no_partner = true;
      pl.exclusive = local;
      pl.collective = false;
    }
  }
  // A parallel region whose own code is only the way to many small constructs: that code is the
  // runtime's cost of entering and leaving them.
  if (r.kind == RegionKind::Parallel && construct_visits > 0 &&
      std::max(0.0, st[n].excl_sum - st[n].fork_join) * 1e9 < kConstructOverheadNs * construct_visits)
    pl.exclusive = find_rule(r.kind, sub, Part::BetweenConstructs);
  // A barrier right after single/sections/masked waits for the one thread that ran the body.
  // More generally, synchronization right after a region that fewer PEs ran (serial code on
  // rank 0 before a broadcast) waits for that code: for the PEs that did not run it, the wait
  // (up to that region's time) is loss of parallelism.
  if (waits_for_others(r) && mn.parent != format::kNoIndex && child_pos[n] > 0) {
    uint32_t prev = t.node(mn.parent).children[child_pos[n] - 1];
    pl.partial_barrier = is_barrier(r.kind) && is_partial_construct(t.region_of(prev).kind) &&
                         runs_on_part_of_team(t.region_of(prev), st[prev]);
    size_t here = st[n].entered;
    pl.before_pes = st[prev].entered;
    bool partial_prev = is_partial_construct(t.region_of(prev).kind);
    if (!pl.partial_barrier && !partial_prev && pl.before_pes > 0 && pl.before_pes < here)
      pl.before = prev;
  }
  // The same when the enclosing region's own code ran on one PE only and a data collective
  // follows (rank 0 computes, then broadcasts the result the others need): that PE's code time
  // bounds the loss in the others' waits. A late arrival at a pure barrier stays
  // synchronization: nothing tells it apart from imbalance.
  if (pl.collective && !pl.partial_barrier && pl.before == format::kNoIndex &&
      mn.parent != format::kNoIndex) {
    const MemberStats& ps = st[mn.parent];
    if (ps.entered > 1 && ps.excl_sum > 0 && ps.excl_most >= kSerialShare * ps.excl_sum)
      pl.serial_pe = ps.excl_who, pl.serial_time = ps.excl_most;
  }
  if (pl.before != format::kNoIndex) pl.before_time = st[pl.before].time_max;
  pl.fastest = pl.collective ? st[n].time_min : 0;

  // Idle PEs. In a synchronization, a PE with less time in it than the longest arrived late: the
  // others' waits already hold what that cost the enclosing region, so its share in the
  // synchronization's own row is load imbalance, which no enclosing row adds up.
  pl.shorter = find_rule(r.kind, sub, Part::IdleShorter);
  pl.not_ran_one = find_rule(r.kind, sub, Part::IdleOneRan);
  pl.not_ran_some = find_rule(r.kind, sub, Part::IdleSomeRan);
  // A synchronization construct some PEs never entered (a taskwait of the thread that created
  // the tasks, a lock one thread took): they were working elsewhere meanwhile, as a PE that spent
  // less time in it was. Not serial code.
  if (has_wait(r.kind)) pl.not_ran_one = pl.not_ran_some = pl.shorter;
  if (runs_on_part_of_team(r, st[n])) {
    pl.shorter = pl.not_ran_one = pl.not_ran_some = find_rule(r.kind, sub, Part::IdlePartial);
  }
  // In an explicit task, a PE with less of its work ran other tasks of the team, or waited.
  if (in_task)
    pl.shorter = pl.not_ran_one = pl.not_ran_some = find_rule(r.kind, sub, Part::IdleInTask);
  return pl;
}

// The passes over the PEs run on a few workers. Each pass gives every worker a range of merged
// nodes (or of threads, for per-thread results) and the worker visits the threads in order, so
// every sum still adds the same numbers in the same order as one serial walk: the results do
// not depend on the number of workers.
class Workers {
 public:
  Workers(const MergedTree& t, unsigned requested) {
    const drg::Experiment& e = t.experiment();
    first_.assign(e.threads.size() + 1, 0);
    for (size_t ti = 0; ti < e.threads.size(); ++ti) first_[ti + 1] = first_[ti] + e.threads[ti].size();
    unsigned k = requested ? requested : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    // Below this many thread nodes, starting threads costs more than it saves.
    if (!requested && first_.back() < (size_t(1) << 16)) k = 1;
    count_ = std::max(1u, k);
    // Merged nodes split by their number of members, threads by their number of nodes.
    std::vector<size_t> members(t.nodes().size() + 1, 0);
    for (size_t n = 0; n < t.nodes().size(); ++n) members[n + 1] = members[n] + t.node(uint32_t(n)).members.size();
    node_bounds_ = split(members);
    thread_bounds_ = split(first_);
  }

  unsigned count() const { return count_; }
  // Offset of each thread's nodes in arrays over all thread nodes; the last entry is the total.
  const std::vector<size_t>& first() const { return first_; }
  std::pair<uint32_t, uint32_t> nodes(unsigned w) const { return {node_bounds_[w], node_bounds_[w + 1]}; }
  std::pair<uint32_t, uint32_t> threads(unsigned w) const { return {thread_bounds_[w], thread_bounds_[w + 1]}; }

  // Runs body(w) for every worker w, on this thread and count() - 1 others.
  template <class Body>
  void run(Body&& body) const {
    std::vector<std::exception_ptr> errors(count_);
    auto guarded = [&](unsigned w) {
      try {
        body(w);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < count_; ++w) pool.emplace_back(guarded, w);
    guarded(0);
    for (std::thread& th : pool) th.join();
    for (const auto& err : errors)
      if (err) std::rethrow_exception(err);
  }

 private:
  // count_ + 1 bounds cutting [0, prefix.size() - 1) into ranges of about equal weight.
  std::vector<uint32_t> split(const std::vector<size_t>& prefix) const {
    std::vector<uint32_t> bounds(count_ + 1, 0);
    size_t items = prefix.size() - 1;
    for (unsigned w = 1; w < count_; ++w) {
      size_t goal = prefix.back() / count_ * w;
      bounds[w] = uint32_t(std::lower_bound(prefix.begin(), prefix.end(), goal) - prefix.begin());
      bounds[w] = std::clamp<uint32_t>(bounds[w], bounds[w - 1], uint32_t(items));
    }
    bounds[count_] = uint32_t(items);
    return bounds;
  }

  unsigned count_ = 1;
  std::vector<size_t> first_;
  std::vector<uint32_t> node_bounds_, thread_bounds_;
};

// The part of a thread's member order (member_order) that falls in merged nodes [lo, hi).
std::pair<const uint32_t*, const uint32_t*> in_range(const std::vector<uint32_t>& order,
                                                     const std::vector<uint32_t>& merged,
                                                     std::pair<uint32_t, uint32_t> range) {
  auto below = [&](uint32_t tn, uint32_t n) { return merged[tn] < n; };
  const uint32_t* b = std::lower_bound(order.data(), order.data() + order.size(), range.first, below);
  const uint32_t* e = std::lower_bound(b, order.data() + order.size(), range.second, below);
  return {b, e};
}

// The rule for a PE's own time in a node: the region's, except on the program region of a
// thread that is not the initial one (that thread is idle in the runtime).
const Rule* exclusive_rule(const NodePlan& pl, const drg::ThreadTree& th) {
  if (pl.region->kind == RegionKind::Program && !(th.flags & format::kThreadInitial))
    return pl.idle_root;
  return pl.exclusive;
}

// Pass 1: statistics over each merged node's members.
void member_stats(const MergedTree& t, const Workers& workers, const Columns& c,
                  const std::array<int, 3>& miss_col, RunFacts& f) {
  const drg::Experiment& e = t.experiment();
  const std::vector<size_t>& first = workers.first();
  std::vector<MemberStats>& st = f.stats;
  st.assign(t.nodes().size(), MemberStats{});
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = t.merged_of(ti);
      const double* x_of = f.rest.data() + first[ti];
      const double* in_of = f.incl.data() + first[ti];
      member_order(merged, order);
      auto [begin, end] = in_range(order, merged, workers.nodes(w));
      for (const uint32_t* it = begin; it != end; ++it) {
        uint32_t tn = *it;
        MemberStats& s = st[merged[tn]];
        double time = in_of[tn], iterations = e.value(th, tn, c.iterations);
        if (s.members++ == 0) {
          s.time_max = s.time_min = time;
          s.iterations = iterations;
        } else {
          if (time > s.time_max) s.time_max = time;
          if (time < s.time_min) s.time_min = time;
          if (iterations > s.iterations) s.iterations = iterations;
        }
        s.visits += e.value(th, tn, c.visits);
        s.tasks_created += e.value(th, tn, c.tasks_created);
        for (size_t level = 0; level < 3; ++level)
          if (miss_col[level] >= 0) s.misses[level] += e.value(th, tn, miss_col[level]);
        if (e.value(th, tn, c.visits) == 0) continue;
        ++s.entered;
        if (t.region_of(merged[tn]).kind == RegionKind::Parallel) {
          s.fork_join += (e.value(th, tn, c.fork) + e.value(th, tn, c.join)) * 1e-9;
          if (e.value(th, tn, c.team_size) > 0) s.master_join = e.value(th, tn, c.join) * 1e-9;
        }
        s.sum_t += time;
        if (time > s.max_t) s.max_t = time, s.most_loaded = int(ti);
        if (time < s.min_t) s.min_t = time, s.least_loaded = int(ti);
        double x = x_of[tn];
        if (x <= 0) continue;
        s.excl_sum += x;
        if (x > s.excl_most) s.excl_most = x, s.excl_who = ti;
      }
    }
  });
}

// Pass 2: each PE's exclusive time in each node, split into its parts and classified into the
// node's own buckets. Leaves each PE's rest (useful or classified) in f.rest.
void classify_parts(const MergedTree& t, const Workers& workers, const Columns& c, RunFacts& f) {
  const drg::Experiment& e = t.experiment();
  const std::vector<size_t>& first = workers.first();
  const std::vector<MemberStats>& st = f.stats;
  size_t n_nodes = t.nodes().size();
  std::vector<char> is_before(n_nodes, 0);  // some node's plan asks which PEs entered this one
  for (const NodePlan& pl : f.plan)
    if (pl.before != format::kNoIndex) is_before[pl.before] = 1;
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    std::vector<char> entered(n_nodes, 0);  // per merged node: the current thread entered it
    for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = t.merged_of(ti);
      double* x_of = f.rest.data() + first[ti];
      for (uint32_t tn = 0; tn < th.size(); ++tn)
        if (is_before[merged[tn]] && e.value(th, tn, c.visits) > 0) entered[merged[tn]] = 1;
      member_order(merged, order);
      auto [begin, end] = in_range(order, merged, workers.nodes(w));
      for (const uint32_t* it = begin; it != end; ++it) {
        uint32_t tn = *it;
        uint32_t n = merged[tn];
        const NodePlan& pl = f.plan[n];
        const drg::Region& r = *pl.region;
        double x = x_of[tn];
        double wait = 0, fork_join = 0;
        if (pl.no_partner) {
          wait = 0;
        } else if (pl.collective && st[n].members > 1) {
          // Transfer: at most the fastest rank's time and what the message model allows.
          double transfer = std::min(std::max(x, 0.0), pl.fastest);
          if (c.transfer >= 0) transfer = std::min(transfer, e.value(th, tn, c.transfer) * 1e-9);
          wait = std::max(x, 0.0) - transfer;
        } else if (has_wait(r.kind)) {
          wait = std::min(e.value(th, tn, c.wait) * 1e-9, std::max(x, 0.0));
        }
        if (r.kind == RegionKind::Parallel && e.value(th, tn, c.team_size) > 0)
          fork_join = (e.value(th, tn, c.fork) + e.value(th, tn, c.join)) * 1e-9;
        double rest = x - wait - fork_join;
        Buckets& b = f.own[n];
        if (pl.partial_barrier) {
          b.add(pl.partial_wait, wait);
        } else if (pl.serial_pe != format::kNoIndex && ti != pl.serial_pe) {
          double lost = std::min(wait, pl.serial_time);
          b.add(pl.serial_wait, lost);
          b.add(pl.wait, wait - lost);
        } else if (pl.before != format::kNoIndex && !entered[pl.before]) {
          double lost = std::min(wait, pl.before_time);
          b.add(pl.before_pes == 1 ? pl.serial_wait : pl.partial_wait, lost);
          b.add(pl.wait, wait - lost);
        } else {
          b.add(pl.wait, wait);
        }
        b.add(pl.fork_join, fork_join);
        const Rule* rule = exclusive_rule(pl, th);
        b.add(rule, rest);
        if (rule && rule->useful && rest > 0) {
          f.own_useful[n] += rest;
          f.useful_min[n] = f.useful_pes[n] ? std::min(f.useful_min[n], rest) : rest;
          f.useful_max[n] = std::max(f.useful_max[n], rest);
          ++f.useful_pes[n];
        } else if (rule && rule->useful) {
          f.own_useful[n] += rest;
        }
        x_of[tn] = rest;
      }
      for (uint32_t tn = 0; tn < th.size(); ++tn) entered[merged[tn]] = 0;
    }
  });
}

RunFacts measure(const MergedTree& t, const Workers& workers, CallPathKeys& keys) {
  const drg::Experiment& e = t.experiment();
  Columns c(e);
  size_t n_nodes = t.nodes().size();
  RunFacts f;
  f.keys = keys.intern(t);
  std::array<int, 3> miss_col{};
  for (int level = 0; level < 3; ++level) {
    miss_col[size_t(level)] = miss_column(e, level);
    f.has_misses[size_t(level)] = miss_col[size_t(level)] >= 0;
  }
  const std::vector<size_t>& first = workers.first();

  // Exclusive and inclusive time of every node of every thread.
  f.rest.resize(first.back());
  f.incl.resize(first.back());
  workers.run([&](unsigned w) {
    std::vector<double> scratch_time, scratch_task, scratch_acc;
    auto [lo, hi] = workers.threads(w);
    for (uint32_t ti = lo; ti < hi; ++ti)
      thread_times(e, e.threads[ti], c, scratch_time, scratch_task, scratch_acc,
                   f.rest.data() + first[ti], f.incl.data() + first[ti]);
  });

  member_stats(t, workers, c, miss_col, f);
  const std::vector<MemberStats>& st = f.stats;

  f.own.resize(n_nodes);
  f.own_useful.assign(n_nodes, 0);
  f.useful_min.assign(n_nodes, 0);
  f.useful_max.assign(n_nodes, 0);
  f.useful_pes.assign(n_nodes, 0);
  f.time_max.resize(n_nodes, 0);
  f.visits.resize(n_nodes, 0);
  f.iterations.resize(n_nodes, 0);
  f.flushes.assign(n_nodes, 0);
  f.useful_per_pe.assign(e.threads.size(), 0);
  f.misses.assign(n_nodes, {0, 0, 0});
  std::vector<double> construct_visits(n_nodes, 0);
  for (uint32_t n = 0; n < n_nodes; ++n) {
    f.time_max[n] = st[n].time_max;
    f.visits[n] = st[n].visits;
    // Every thread of a team reports the construct's whole iteration count.
    f.iterations[n] = st[n].iterations;
    for (uint32_t ch : t.node(n).children) {
      RegionKind k = t.region_of(ch).kind;
      if (k == RegionKind::Flush) f.flushes[n] += st[ch].visits;
      else if (k != RegionKind::Cancel) construct_visits[n] += st[ch].visits;
    }
    // Counters are inclusive: a node's own misses are its value minus its children's.
    for (size_t level = 0; level < 3; ++level) {
      if (!f.has_misses[level]) continue;
      double v = st[n].misses[level];
      for (uint32_t ch : t.node(n).children) v -= st[ch].misses[level];
      f.misses[n][level] = std::max(0.0, v);
    }
  }

  std::vector<uint32_t> child_pos = child_positions(t);
  bool one_rank = e.ranks() <= 1 && !e.threads.empty() && e.threads[0].rank >= 0;
  f.plan.resize(n_nodes);
  std::vector<char> in_task(n_nodes, 0);  // a task, or inside one (parents come first)
  for (uint32_t n = 0; n < n_nodes; ++n) {
    uint32_t parent = t.node(n).parent;
    in_task[n] = t.region_of(n).kind == RegionKind::Task || (parent != format::kNoIndex && in_task[parent]);
    f.plan[n] = plan_node(t, st, child_pos, construct_visits[n], n, one_rank, in_task[n]);
  }
  classify_parts(t, workers, c, f);

  // Useful time per PE, for the POP metrics: each thread's rests in member order.
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    auto [lo, hi] = workers.threads(w);
    for (uint32_t ti = lo; ti < hi; ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = t.merged_of(ti);
      const double* rest_of = f.rest.data() + first[ti];
      member_order(merged, order);
      for (uint32_t tn : order) {
        const Rule* rule = exclusive_rule(f.plan[merged[tn]], th);
        if (rule && rule->useful) f.useful_per_pe[ti] += rest_of[tn];
      }
    }
  });
  return f;
}

// Per merged node: its wall time, how many PEs entered it, and the rules for idle PEs.
struct IdleInfo {
  double t_p = 0, master_join = 0;
  size_t pes_ran = 0;
  const Rule* not_ran = nullptr;
  // For PEs that ran it for less than its wall time.
  const Rule *before_start = nullptr, *launch_skew = nullptr, *runtime_start = nullptr,
             *fork = nullptr, *shorter = nullptr;
};

std::vector<IdleInfo> idle_info(const MergedTree& t, const RunFacts& f) {
  std::vector<IdleInfo> info(t.nodes().size());
  for (uint32_t n = 0; n < info.size(); ++n) {
    const drg::Region& r = t.region_of(n);
    uint16_t sub = rule_subkind(r);
    const NodePlan& pl = f.plan[n];
    IdleInfo& in = info[n];
    in.t_p = f.time_max[n];
    in.pes_ran = f.stats[n].entered;
    in.master_join = f.stats[n].master_join;
    in.not_ran = in.pes_ran <= 1 ? pl.not_ran_one : pl.not_ran_some;
    in.before_start = find_rule(r.kind, sub, Part::IdleBeforeStart);
    in.launch_skew = find_rule(r.kind, sub, Part::IdleLaunchSkew);
    in.runtime_start = find_rule(r.kind, sub, Part::IdleRuntimeStart);
    in.fork = find_rule(r.kind, sub, Part::IdleFork);
    in.shorter = pl.shorter;
  }
  return info;
}

// Idle PE-time of one PE with respect to a merged node, classified: what a PE that left early,
// or only holds the path to regions it ran, did not spend in the region.
//
// A node the PE only holds the path through gets the idle time of the whole part of the subtree
// below it that the PE holds, added value by value in depth-first order. That costs the size of
// that part for each such node: fine in trees of ordinary depth, but O(depth^2) on a long path a
// PE only holds (a worker's copy of a deep recursion around a parallel region). In a thread deeper
// than kExactIdleDepth levels the idle time of each such node is therefore summed once, children
// before parents, and added as one sum: linear, and equal up to rounding.
constexpr uint32_t kExactIdleDepth = drg::kPathLevels;

class IdleWalk {
 public:
  IdleWalk(const MergedTree& run, const Columns& c, const std::vector<IdleInfo>& info,
           const RunFacts& f, const std::vector<size_t>& first)
      : run_(run), e_(run.experiment()), c_(c), info_(info), f_(f), first_(first),
        reached_(run.nodes().size(), 0), mpi_ranks_(e_.ranks() > 1) {
    // When the first parallel region began, in the initial thread's time (unknown in experiments
    // that do not say: never, so that all of a thread's absence is serial code, as it was counted).
    const nlohmann::json& omp = e_.meta.is_object() && e_.meta.contains("openmp") ? e_.meta["openmp"] : nlohmann::json();
    if (omp.is_object() && omp.contains("first_fork_s") && omp["first_fork_s"].is_number())
      runtime_started_ = std::max(0.0, omp["first_fork_s"].get<double>());
  }

  // Follows thread `ti` from now on: its children lists, to walk the paths it only holds.
  void start_thread(uint32_t ti) {
    th_ = &e_.threads[ti];
    merged_ = &run_.merged_of(ti);
    incl_ = f_.incl.data() + first_[ti];
    // The initial thread of an MPI rank that started later than the first rank.
    skewed_rank_ = mpi_ranks_ && th_->rank >= 0 && (th_->flags & format::kThreadInitial);
    first_child_.assign(th_->size(), format::kNoIndex);
    next_sibling_.assign(th_->size(), format::kNoIndex);
    for (uint32_t n = uint32_t(th_->size()); n-- > 1;) {
      uint32_t parent = th_->parent[n];
      next_sibling_[n] = first_child_[parent];
      first_child_[parent] = n;
    }
    // Nodes with an explicit task below them in this thread's tree.
    task_below_.assign(th_->size(), 0);
    for (uint32_t n = uint32_t(th_->size()); n-- > 1;)
      if (task_below_[n] || e_.regions[th_->region[n]].kind == RegionKind::Task)
        task_below_[th_->parent[n]] = 1;
    // Depth of the thread's tree (parents come before their children).
    depth_.assign(th_->size(), 0);
    uint32_t deepest = 0;
    for (uint32_t n = 1; n < th_->size(); ++n)
      deepest = std::max(deepest, depth_[n] = depth_[th_->parent[n]] + 1);
    summed_.clear();
    if (deepest <= kExactIdleDepth) return;
    // Deep: the idle time below every node the PE only holds, children before parents.
    summed_.assign(th_->size(), format::kNoIndex);
    sums_.clear();
    for (uint32_t tn = uint32_t(th_->size()); tn-- > 0;) {
      if (entered(tn) || task_below_[tn]) continue;
      summed_[tn] = uint32_t(sums_.size());
      sums_.emplace_back();
      Buckets& b = sums_.back();
      uint64_t call = ++calls_;
      for (uint32_t tc = first_child_[tn]; tc != format::kNoIndex; tc = next_sibling_[tc]) {
        uint32_t mc = (*merged_)[tc];
        reached_[mc] = call;
        if (entered(tc) || task_below_[tc]) add_entered(tc, mc, b);
        else b.add(sums_[summed_[tc]]);
      }
      add_own((*merged_)[tn], call, b);
    }
  }

  // Adds the idle time of the current thread's node `tn` (merged node `n`) to `b`.
  void add(uint32_t tn, uint32_t n, Buckets& b) {
    if (entered(tn) || task_below_[tn]) {
      add_entered(tn, n, b);
      return;
    }
    if (!summed_.empty()) {
      b.add(sums_[summed_[tn]]);
      return;
    }
    // The PE only holds the path: it is idle in the region's own code, and in each child
    // region as that child's analysis says. Children it reached are stamped with the call.
    // Depth first with an explicit stack, in the order of a recursive walk.
    stack_.clear();
    stack_.push_back({tn, n, ++calls_, first_child_[tn]});
    while (!stack_.empty()) {
      Frame& fr = stack_.back();
      if (fr.next == format::kNoIndex) {
        add_own(fr.n, fr.call, b);
        stack_.pop_back();
        continue;
      }
      uint32_t tc = fr.next;
      fr.next = next_sibling_[tc];
      uint32_t mc = (*merged_)[tc];
      reached_[mc] = fr.call;
      if (entered(tc) || task_below_[tc]) add_entered(tc, mc, b);
      else stack_.push_back({tc, mc, ++calls_, first_child_[tc]});  // fr is not used after this
    }
  }

 private:
  bool entered(uint32_t tn) const { return e_.value(*th_, tn, c_.visits) > 0; }

  // A PE that entered the region and left early.
  void add_entered(uint32_t tn, uint32_t n, Buckets& b) const {
    const drg::Region& r = run_.region_of(n);
    const IdleInfo& in = info_[n];
    double idle = in.t_p - incl_[tn];
    if (idle <= 0) return;
    if (r.kind == RegionKind::Program) {
      if (skewed_rank_) {
        b.add(in.launch_skew, idle);
        return;
      }
      // A thread that did not exist yet: serial code ran until the first parallel region began,
      // then the runtime was starting its threads.
      double serial = std::min(idle, runtime_started_);
      b.add(in.before_start, serial);
      b.add(in.runtime_start, idle - serial);
      return;
    }
    if (r.kind == RegionKind::Parallel && e_.value(*th_, tn, c_.team_size) == 0) {
      double fj = std::min(idle, e_.value(*th_, tn, c_.fork) * 1e-9 + in.master_join);
      b.add(in.fork, fj);
      idle -= fj;
    }
    b.add(in.shorter, idle);
  }

  // A node the PE only holds, after its children: the child regions it did not reach, and the
  // region's own code.
  void add_own(uint32_t n, uint64_t call, Buckets& b) const {
    const IdleInfo& in = info_[n];
    double children_tp = 0;
    for (uint32_t ch : run_.node(n).children) {
      children_tp += info_[ch].t_p;
      if (reached_[ch] != call) b.add(info_[ch].not_ran, info_[ch].t_p);
    }
    b.add(in.not_ran, std::max(0.0, in.t_p - children_tp));
  }

  const MergedTree& run_;
  const drg::Experiment& e_;
  const Columns& c_;
  const std::vector<IdleInfo>& info_;
  const RunFacts& f_;
  const std::vector<size_t>& first_;
  std::vector<uint64_t> reached_;  // per merged node: the last call that reached it
  uint64_t calls_ = 0;
  bool mpi_ranks_ = false, skewed_rank_ = false;
  double runtime_started_ = 1e300;  // s: see the constructor
  const drg::ThreadTree* th_ = nullptr;
  const std::vector<uint32_t>* merged_ = nullptr;
  const double* incl_ = nullptr;
  std::vector<uint32_t> first_child_, next_sibling_, depth_;
  // Per node of the thread: explicit tasks below it. A PE that only holds such a node's path ran
  // some of the work created in it: its idle time there is that of a PE that ran it shorter.
  std::vector<char> task_below_;
  // Deep threads: per node the PE only holds, the index of its summed idle time in sums_.
  std::vector<uint32_t> summed_;
  std::vector<Buckets> sums_;
  struct Frame {
    uint32_t tn, n;
    uint64_t call;
    uint32_t next;  // next child of tn to visit
  };
  std::vector<Frame> stack_;
};

int count_pes(const drg::Experiment& e) { return std::max<int>(1, int(e.threads.size())); }

// The tool's own cost per visit of each region kind, in s (docs/overhead-model.md, NOISE): the
// calibrated cost of the kind plus two counter reads where the experiment read counters.
std::vector<double> visit_costs(const drg::Experiment& e, const MachineModel& machine) {
  double read_ns = 0;
  std::vector<bool> counted(format::kRegionKindCount, false);
  const auto& cm = e.meta.contains("counters") ? e.meta["counters"] : nlohmann::json();
  if (cm.is_object() && cm.contains("measured") && cm["measured"].is_array() &&
      !cm["measured"].empty()) {
    read_ns = cm.value("cost_per_read_ns", 0.0);
    std::string kinds = cm.value("regions", "");
    for (uint16_t k = 0; k < format::kRegionKindCount; ++k) {
      std::string name(format::region_kind_name(RegionKind(k)));
      counted[k] = ("," + kinds + ",").find("," + name + ",") != std::string::npos;
    }
  }
  std::vector<double> cost(format::kRegionKindCount);
  for (uint16_t k = 0; k < format::kRegionKindCount; ++k) {
    std::string name(format::region_kind_name(RegionKind(k)));
    // Barriers of every flavour share the explicit barrier's figure.
    if (name.rfind("barrier", 0) == 0) name = "barrier";
    if (name == "nest_lock" || name == "critical") name = "lock";
    cost[k] = (machine.cost(name) + (counted[k] ? 2 * read_ns : 0)) * 1e-9;
  }
  return cost;
}

// Every region's classified PE-time: its own buckets summed over its subtree, plus the idle time
// of the PEs with respect to it and the PEs that never held it. With `visit_cost`, also the
// longest time of any PE once the tool's cost below it is taken away, and the visits below.
struct Totals {
  std::vector<Buckets> total;
  std::vector<double> compensated, events_below;
};

Totals totals(const MergedTree& t, RunFacts& f, const Workers& workers, double p,
              const std::vector<double>* visit_cost) {
  const drg::Experiment& e = t.experiment();
  Columns c(e);
  size_t n_nodes = t.nodes().size();
  Totals out;
  // Subtree sums, children before parents.
  out.total = std::move(f.own);  // f.own is not used after this
  std::vector<uint32_t> order = t.preorder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t parent = t.node(*it).parent;
    if (parent != format::kNoIndex) out.total[parent].add(out.total[*it]);
  }
  std::vector<IdleInfo> info = idle_info(t, f);
  out.compensated.assign(n_nodes, 0);
  out.events_below.assign(n_nodes, 0);
  const std::vector<size_t>& first = workers.first();
  workers.run([&](unsigned w) {
    IdleWalk idle(t, c, info, f, first);
    std::vector<double> noise_below_node, events_below_node;
    std::vector<uint32_t> member;
    for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = t.merged_of(ti);
      member_order(merged, member);
      auto [begin, end] = in_range(member, merged, workers.nodes(w));
      if (begin == end) continue;
      const double* in_of = f.incl.data() + first[ti];
      if (visit_cost) {
        noise_below_node.assign(th.size(), 0);
        events_below_node.assign(th.size(), 0);
        for (uint32_t tn = uint32_t(th.size()); tn-- > 1;) {
          double v = e.value(th, tn, c.visits);
          uint32_t parent = th.parent[tn];
          noise_below_node[parent] +=
              noise_below_node[tn] + v * (*visit_cost)[size_t(e.regions[th.region[tn]].kind)];
          events_below_node[parent] += events_below_node[tn] + v;
        }
      }
      idle.start_thread(ti);
      for (const uint32_t* it = begin; it != end; ++it) {
        uint32_t tn = *it;
        uint32_t n = merged[tn];
        if (visit_cost) {
          out.compensated[n] = std::max(out.compensated[n], in_of[tn] - noise_below_node[tn]);
          out.events_below[n] += events_below_node[tn];
        }
        idle.add(tn, n, out.total[n]);
      }
    }
  });
  // PEs that never held the region's path.
  for (uint32_t n = 0; n < n_nodes; ++n) {
    double absent = std::max(0.0, p - double(t.node(n).members.size()));
    if (absent > 0 && info[n].t_p > 0) out.total[n].add(info[n].not_ran, absent * info[n].t_p);
  }
  return out;
}

// Σ_i min(u_i, cap) over the PEs with useful time in merged node n (their rests, after pass 2).
double capped_useful(const MergedTree& t, const RunFacts& f, const std::vector<size_t>& first,
                     uint32_t n, double cap) {
  double sum = 0;
  for (const drg::Member& m : t.node(n).members) {
    double u = f.rest[first[m.thread] + m.node];
    const Rule* rule = f.plan[n].exclusive;
    if (rule && rule->useful && u > 0) sum += std::min(u, cap);
  }
  return sum;
}

// Evidence from the reference run moves work out of the run's useful time: work of regions the
// reference does not have and loop iterations beyond its count (additional computation), busy
// waiting on flush, replicated code, and priced extra cache misses.
void apply_evidence(const MergedTree& run, RunFacts& f, const std::vector<size_t>& first,
                    const RunFacts& rf, const std::vector<uint32_t>& ref_index,
                    const MachineModel* machine, bool& misses_priced) {
  const Rule* extra = find_rule(RegionKind::Program, 0, Part::ExtraWork);
  const Rule* replicated = find_rule(RegionKind::Program, 0, Part::Replicated);
  const Rule* spin = find_rule(RegionKind::Program, 0, Part::SpinWait);
  for (uint32_t n = 0; n < run.nodes().size(); ++n) {
    const drg::Region& r = run.region_of(n);
    const Rule* own_rule = f.plan[n].exclusive;
    double u = f.own_useful[n];
    if (!own_rule || !own_rule->useful || u <= 0) continue;
    uint32_t rn = ref_index[f.keys[n]];
    double moved = 0;
    if (rn == format::kNoIndex) {
      if (r.kind != RegionKind::Program) {
        moved = u;
        f.own[n].add(extra, u);
      }
    } else {
      double u_ref = rf.own_useful[rn];
      if ((r.kind == RegionKind::Loop || r.kind == RegionKind::Taskloop) &&
          rf.iterations[rn] > 0 && f.iterations[n] > rf.iterations[rn] * 1.001) {
        moved = u * (1 - rf.iterations[rn] / f.iterations[n]);
        f.own[n].add(extra, moved);
      }
      double flushes = f.flushes[n], flushes_ref = rf.flushes[rn];
      double k = f.useful_pes[n];
      if (flushes >= kSpinMinFlushes + flushes_ref && flushes >= kSpinFactor * flushes_ref) {
        // Busy-waiting on flush: the time beyond the reference's work is waiting.
        double spun = std::max(0.0, u - moved - u_ref);
        f.own[n].add(spin, spun);
        moved += spun;
      } else if (is_undivided(r.kind) && k >= 2 && u_ref > 0 &&
                 f.visits[n] >= k * rf.visits[rn] &&
                 f.useful_min[n] >= kReplicaMinShare * u_ref) {
        // Every PE repeats the reference's visits and does most of its work: one copy is
        // useful, the others are loss; time beyond the reference's per PE is not replication.
        double copies = capped_useful(run, f, first, n, u_ref);
        double lost = std::max(0.0, std::min(copies, u - moved) - u_ref);
        f.own[n].add(replicated, lost);
        moved += lost;
      }
    }
    // Cache misses beyond the reference's, priced by the calibrated penalty per level.
    if (rn != format::kNoIndex && machine && !machine->miss_penalty_ns.empty()) {
      static const char* level_name[3] = {"L1", "L2", "L3"};
      double d = 0;
      for (size_t level = 0; level < 3; ++level) {
        if (!f.has_misses[level] || !rf.has_misses[level]) continue;
        auto pen = machine->miss_penalty_ns.find(level_name[level]);
        if (pen == machine->miss_penalty_ns.end()) continue;
        double more = f.misses[n][level] - rf.misses[rn][level];
        if (more > 0) d += more * std::max(0.0, pen->second) * 1e-9;
      }
      d = std::min(d, std::max(0.0, u - moved));
      if (d > 0) {
        f.own[n].add(find_rule(r.kind, r.subkind, Part::ExtraMisses), d);
        misses_priced = true;
        moved += d;
      }
    }
    f.own[n].useful -= moved;
  }
}

// "synchronization.barrier" -> PE-seconds, over the rules of each subclass, for the rules that
// classify into a class (not useful work). With `minus`, the reference's are subtracted.
std::map<std::string, double> subclass_values(const Buckets& b, const Buckets* minus, double p,
                                              bool keep_additional) {
  std::map<std::string, double> out;
  for (size_t i = 0; i < b.by_rule.size(); ++i) {
    double v = b.by_rule[i] - (minus ? minus->by_rule[i] : 0.0);
    if (v == 0 && (!minus || minus->by_rule[i] == 0) && b.by_rule[i] == 0) continue;
    const Rule& r = rules()[i];
    if (!keep_additional && r.cls == Class::AdditionalComputation) continue;
    out[std::string(class_key(r.cls)) + "." + std::string(r.subclass)] += v / p;
  }
  return out;
}

}  // namespace

std::vector<std::string> identity_violations(const Analysis& a, double tolerance) {
  std::vector<std::string> out;
  auto check = [&](const RegionOverheads& r) {
    double sum = 0;
    for (double v : r.classes) sum += v;
    std::string name = !r.path.empty() ? r.path
                       : r.in_run      ? "node " + std::to_string(r.node)
                                       : "reference node " + std::to_string(r.ref_node);
    if (!(std::fabs(sum - r.t_o) <= tolerance))
      out.push_back(name + ": classes sum to " + std::to_string(sum) + " s, T_o is " +
                    std::to_string(r.t_o) + " s");
  };
  for (const auto& r : a.regions) check(r);
  for (const auto& r : a.only_in_reference) check(r);
  return out;
}

std::string region_key(const drg::Region& r) {
  std::string k = std::to_string(int(r.kind)) + ":" + std::to_string(r.subkind) + ":" + r.name;
  if (!r.file.empty()) {
    size_t slash = r.file.rfind('/');
    k += "@" + (slash == std::string::npos ? r.file : r.file.substr(slash + 1)) + ":" +
         std::to_string(r.line) + ":" + r.function;
  } else if (!r.module.empty()) {
    size_t slash = r.module.rfind('/');
    k += "@" + (slash == std::string::npos ? r.module : r.module.substr(slash + 1)) + "+" +
         std::to_string(r.address);
  }
  return k;
}

namespace {

// The six classes of a region from its classified PE-time `b` (and the reference's `rb` of the
// same call path, classified by the same rules): every class but additional computation and
// unidentified is what the run spends in it beyond what the reference spent, in wall time;
// additional computation is the extra work the evidence found; unidentified is the rest of T_o.
void set_classes(RegionOverheads& o, const Buckets& b, const Buckets* rb, double p, bool keep_additional) {
  double identified = 0;
  for (int k = 0; k < kClassCount; ++k) {
    if (Class(k) == Class::Unidentified) continue;
    double v = b.cls[size_t(k)] - (rb ? rb->cls[size_t(k)] : 0.0);
    o.classes[size_t(k)] = v / p;
    identified += v / p;
  }
  o.classes[size_t(Class::Unidentified)] = o.t_o - identified;
  o.subclasses = subclass_values(b, rb, p, keep_additional);
}

}  // namespace

Analysis classify(const MergedTree& run, const MergedTree* reference, const Options& options) {
  const drg::Experiment& e = run.experiment();
  Analysis a;
  a.p = options.p > 0 ? options.p : count_pes(e);
  a.has_reference = reference != nullptr;
  a.keys = options.keys ? options.keys : std::make_shared<CallPathKeys>();
  const double p = a.p;
  Workers workers(run, options.threads);
  RunFacts f = measure(run, workers, *a.keys);
  size_t n_nodes = run.nodes().size();

  // The reference is measured and classified by the same rules, and matched by call-path key
  // (the roots match whatever the program's name: the reference may be a copy of the binary).
  // Where several reference nodes have the same key, the first one counts.
  std::optional<Workers> ref_workers;
  std::optional<RunFacts> rf;
  std::optional<Totals> rt;
  std::vector<uint32_t> ref_index;  // key -> reference node
  if (reference) {
    ref_workers.emplace(*reference, options.threads);
    rf = measure(*reference, *ref_workers, *a.keys);
    ref_index.assign(a.keys->size(), format::kNoIndex);
    for (uint32_t n = 0; n < rf->keys.size(); ++n)
      if (ref_index[rf->keys[n]] == format::kNoIndex) ref_index[rf->keys[n]] = n;
    apply_evidence(run, f, workers.first(), *rf, ref_index, options.machine, a.misses_priced);
    rt = totals(*reference, *rf, *ref_workers, count_pes(reference->experiment()), nullptr);
  }
  auto ref_of = [&](uint32_t n) -> uint32_t { return rf ? ref_index[f.keys[n]] : format::kNoIndex; };

  std::vector<double> cost;
  if (options.machine) {
    a.noise_priced = true;
    cost = visit_costs(e, *options.machine);
  }
  Totals tot = totals(run, f, workers, p, options.machine ? &cost : nullptr);

  a.regions.resize(n_nodes);
  for (uint32_t n = 0; n < n_nodes; ++n) {
    const MemberStats& st = f.stats[n];
    RegionOverheads& o = a.regions[n];
    o.node = n;
    if (options.paths) o.path = run.path(n);
    o.key = f.keys[n];
    o.p = a.p;
    o.t_p = f.time_max[n];
    const Buckets& b = tot.total[n];
    // A PE "ran" the region when it entered it; a PE that only holds the path (it ran parallel
    // regions nested in it, or tasks created in it) was idle during the rest.
    o.pes_ran = st.entered;
    o.most_loaded = st.most_loaded;
    o.least_loaded = st.least_loaded;
    if (options.machine) {
      o.events_below = tot.events_below[n];
      o.noise = std::max(0.0, o.t_p - std::max(0.0, tot.compensated[n]));
    }
    if (o.pes_ran > 0 && st.sum_t > 0) o.imbalance = st.max_t / (st.sum_t / double(o.pes_ran));

    // Reference time; without one, T_s is estimated as the useful work (A = 0).
    uint32_t rn = ref_of(n);
    const Buckets* rb = nullptr;
    o.in_reference = rn != format::kNoIndex;
    if (o.in_reference) {
      o.ref_node = rn;
      o.t_s = rf->time_max[rn];
      o.t_s_estimated = false;
      rb = &rt->total[rn];
    } else if (rf) {
      o.t_s = 0;  // the region does not exist in the reference: all its work is additional
      o.t_s_estimated = false;
    } else {
      o.t_s = b.useful;
    }
    o.useful_pe = b.useful;
    o.t_o = o.t_p - o.t_s / p;
    set_classes(o, b, rb, p, rf.has_value());
    o.speedup = o.t_p > 0 ? o.t_s / o.t_p : 0;
    o.efficiency = o.speedup / p;
  }

  // Regions the reference ran and this run did not: T_o = -T_s/p, each class the reference's
  // with the opposite sign. Only useful work is "removed" work; a construct the runtime did not
  // report in this run (a reduction done with atomics at small teams, say) takes away only its
  // synchronization, and its time is in the enclosing region's.
  if (rf) {
    std::vector<char> in_run(a.keys->size(), 0);
    for (uint32_t n = 0; n < n_nodes; ++n) in_run[f.keys[n]] = 1;
    const Buckets none;
    for (uint32_t rn = 0; rn < rf->keys.size(); ++rn) {
      if (in_run[rf->keys[rn]]) continue;
      RegionOverheads o;
      o.node = format::kNoIndex;
      o.ref_node = rn;
      o.path = reference->path(rn);
      o.key = rf->keys[rn];
      o.p = a.p;
      o.in_run = false;
      o.in_reference = true;
      o.t_s = rf->time_max[rn];
      o.t_s_estimated = false;
      o.t_o = -o.t_s / p;
      set_classes(o, none, &rt->total[rn], p, true);
      double removed = -rt->total[rn].useful / p;
      o.classes[size_t(Class::AdditionalComputation)] += removed;
      o.classes[size_t(Class::Unidentified)] -= removed;
      if (removed != 0) o.subclasses["additional_computation.removed"] = removed;
      o.useful_pe = 0;
      a.only_in_reference.push_back(std::move(o));
    }
  }

  // POP metrics from the useful time per PE.
  double max_u = 0, sum_u = 0;
  for (double u : f.useful_per_pe) {
    max_u = std::max(max_u, u);
    sum_u += u;
  }
  double mean_u = sum_u / p;
  double runtime = a.regions.empty() ? 0 : a.regions[0].t_p;
  if (max_u > 0) a.program.load_balance = mean_u / max_u;
  if (runtime > 0) a.program.communication_efficiency = max_u / runtime;
  a.program.parallel_efficiency = a.program.load_balance * a.program.communication_efficiency;
  if (rf) {
    double ref_u = 0;
    for (double u : rf->useful_per_pe) ref_u += u;
    if (sum_u > 0) {
      a.program.computation_scalability = ref_u / sum_u;
      a.program.global_efficiency = a.program.parallel_efficiency * *a.program.computation_scalability;
    }
  }
  return a;
}

}  // namespace scalea::overheads
