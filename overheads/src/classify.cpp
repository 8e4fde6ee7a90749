#include "scalea/overheads/classify.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <thread>

#include "scalea/overheads/rules.hpp"

namespace scalea::overheads {

namespace {

using drg::MergedTree;
using format::RegionKind;

// PE-seconds per (class, subclass), plus useful work.
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
  // "synchronization.barrier" -> PE-seconds, summed over the rules of each subclass.
  std::map<std::string, double> subclasses() const {
    std::map<std::string, double> out;
    for (size_t i = 0; i < by_rule.size(); ++i) {
      if (by_rule[i] == 0) continue;
      const Rule& r = rules()[i];
      out[std::string(class_key(r.cls)) + "." + std::string(r.subclass)] += by_rule[i];
    }
    return out;
  }
};

struct Columns {
  int visits, time, wait, fork, join, task_exec, team_size, iterations;
  explicit Columns(const drg::Experiment& e)
      : visits(e.metric("visits")), time(e.metric("time")), wait(e.metric("wait")),
        fork(e.metric("fork")), join(e.metric("join")), task_exec(e.metric("task_exec")),
        team_size(e.metric("team_size")), iterations(e.metric("iterations")) {}
};

bool is_task(const drg::Experiment& e, const drg::ThreadTree& t, uint32_t n) {
  return e.regions[t.region[n]].kind == RegionKind::Task;
}

// Exclusive time of every node of one thread, in seconds, into `out` (`child_time` and
// `child_task` are scratch). A task's time belongs to the node where the task was created, so a
// task node is not subtracted from its parent; instead each node gives back the task time that
// ran while it was open (task_exec) outside its children.
void exclusive_times(const drg::Experiment& e, const drg::ThreadTree& t, const Columns& c,
                     std::vector<double>& child_time, std::vector<double>& child_task,
                     double* out) {
  child_time.assign(t.size(), 0);
  child_task.assign(t.size(), 0);
  // A node never entered on this thread (visits 0) only exists as the path to regions the
  // thread did run (a worker's copy of the master's context): it covers its children's time
  // and has none of its own.
  for (uint32_t n = uint32_t(t.size()); n-- > 0;) {
    bool entered = e.value(t, n, c.visits) > 0;
    double covered = entered ? e.value(t, n, c.time) : child_time[n];
    double covered_task = entered ? e.value(t, n, c.task_exec) : child_task[n];
    if (n > 0 && !is_task(e, t, n)) {
      child_time[t.parent[n]] += covered;
      child_task[t.parent[n]] += covered_task;
    }
    out[n] = entered ? (e.value(t, n, c.time) - child_time[n] -
                        (e.value(t, n, c.task_exec) - child_task[n])) * 1e-9
                     : 0.0;
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

// Work regions whose extra iterations or replication the reference can reveal. A parallel
// region's own code counts: every thread repeating the reference's work there is replication.
bool is_work(const drg::Region& r) {
  const Rule* rule = find_rule(r.kind, r.subkind, Part::Exclusive);
  return rule && rule->useful && r.kind != RegionKind::Program;
}

// Synchronization that waits for the PEs still running the region before it.
bool waits_for_others(const drg::Region& r) {
  if (is_barrier(r.kind)) return true;
  return r.kind == RegionKind::Mpi && (r.subkind == uint16_t(format::MpiClass::Collective) ||
                                       r.subkind == uint16_t(format::MpiClass::Sync));
}

// What the PEs holding one merged node have in common: maxima, sums and counts over its members
// (one per thread), gathered in one streaming pass over the threads.
struct MemberStats {
  size_t members = 0;
  size_t entered = 0;         // members with visits > 0: the PEs that ran the region
  double time_max = 0, time_min = 0;  // ns, over every member
  double visits = 0, iterations = 0;  // visits summed, iterations the largest
  double master_join = 0;     // s, join of the parallel region's master
  // Over the members that entered: time in s, and the threads with the most and least of it.
  double sum_t = 0, max_t = -1, min_t = 1e300;
  int most_loaded = -1, least_loaded = -1;
  // Positive exclusive time of the members that entered, and the thread with the most of it.
  double excl_sum = 0, excl_most = 0;
  uint32_t excl_who = format::kNoIndex;
  std::array<double, 3> misses{};  // inclusive cache misses per level, summed
};

// Everything the analysis needs from one run, per merged node.
struct RunFacts {
  std::vector<MemberStats> stats;
  std::vector<Buckets> own;        // classified PE-time of the node itself (not its subtree)
  std::vector<double> own_useful;  // useful PE-time of the node itself
  std::vector<double> time_max;    // s
  std::vector<double> visits, iterations;
  std::vector<uint32_t> keys;  // call-path key of every node
  std::vector<double> useful_per_pe;  // useful seconds per thread (for POP metrics)
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

// How one merged node's PE-time is split (the per-PE decisions of measure()), fixed before the
// pass over the PEs from the statistics of the whole run.
struct NodePlan {
  const drg::Region* region = nullptr;
  // MPI collectives: the fastest rank's time approximates the transfer; the rest is waiting.
  bool collective = false;
  double fastest = 0;  // s
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
};

NodePlan plan_node(const MergedTree& t, const std::vector<MemberStats>& st,
                   const std::vector<uint32_t>& child_pos, uint32_t n) {
  const drg::MergedNode& mn = t.node(n);
  const drg::Region& r = t.region_of(n);
  NodePlan pl;
  pl.region = &r;
  pl.wait = find_rule(r.kind, r.subkind, Part::Wait);
  pl.fork_join = find_rule(r.kind, r.subkind, Part::ForkJoin);
  pl.partial_wait = find_rule(r.kind, r.subkind, Part::PartialBarrierWait);
  pl.serial_wait = find_rule(r.kind, r.subkind, Part::SerialWait);
  pl.exclusive = find_rule(r.kind, r.subkind, Part::Exclusive);
  pl.idle_root = find_rule(r.kind, r.subkind, Part::IdleRoot);
  pl.collective = r.kind == RegionKind::Mpi && r.subkind == uint16_t(format::MpiClass::Collective);
  // A barrier right after single/sections/masked waits for the one thread that ran the body.
  // More generally, synchronization right after a region that fewer PEs ran (serial code on
  // rank 0 before a broadcast) waits for that code: for the PEs that did not run it, the wait
  // (up to that region's time) is loss of parallelism.
  if (waits_for_others(r) && mn.parent != format::kNoIndex && child_pos[n] > 0) {
    uint32_t prev = t.node(mn.parent).children[child_pos[n] - 1];
    pl.partial_barrier = is_barrier(r.kind) && is_partial_construct(t.region_of(prev).kind);
    size_t here = st[n].entered;
    pl.before_pes = st[prev].entered;
    if (!pl.partial_barrier && pl.before_pes > 0 && pl.before_pes < here) pl.before = prev;
  }
  // The same when the enclosing region's own code ran on one PE only and a data collective
  // follows (rank 0 computes, then broadcasts the result the others need): that PE's code time
  // bounds the loss in the others' waits. A late arrival at a pure barrier stays
  // synchronization: nothing tells it apart from imbalance.
  if (pl.collective && !pl.partial_barrier && pl.before == format::kNoIndex &&
      mn.parent != format::kNoIndex) {
    const MemberStats& ps = st[mn.parent];
    if (ps.entered > 1 && ps.excl_sum > 0 && ps.excl_most >= 0.9 * ps.excl_sum)
      pl.serial_pe = ps.excl_who, pl.serial_time = ps.excl_most;
  }
  if (pl.before != format::kNoIndex) pl.before_time = st[pl.before].time_max * 1e-9;
  pl.fastest = pl.collective ? st[n].time_min * 1e-9 : 0;
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

  // Exclusive time of every node of every thread. Pass 2 replaces each by the node's rest (its
  // time outside wait and fork/join), which the useful time per PE is summed from.
  std::vector<double> excl(first.back());
  workers.run([&](unsigned w) {
    std::vector<double> scratch_time, scratch_task;
    auto [lo, hi] = workers.threads(w);
    for (uint32_t ti = lo; ti < hi; ++ti)
      exclusive_times(e, e.threads[ti], c, scratch_time, scratch_task, excl.data() + first[ti]);
  });

  // Pass 1: statistics over each merged node's members.
  std::vector<MemberStats>& st = f.stats;
  st.resize(n_nodes);
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = t.merged_of(ti);
      const double* x_of = excl.data() + first[ti];
      member_order(merged, order);
      auto [begin, end] = in_range(order, merged, workers.nodes(w));
      for (const uint32_t* it = begin; it != end; ++it) {
        uint32_t tn = *it;
        MemberStats& s = st[merged[tn]];
        double time = e.value(th, tn, c.time), iterations = e.value(th, tn, c.iterations);
        if (s.members++ == 0) {
          s.time_max = s.time_min = time;
          s.iterations = iterations;
        } else {
          if (time > s.time_max) s.time_max = time;
          if (time < s.time_min) s.time_min = time;
          if (iterations > s.iterations) s.iterations = iterations;
        }
        s.visits += e.value(th, tn, c.visits);
        for (size_t level = 0; level < 3; ++level)
          if (miss_col[level] >= 0) s.misses[level] += e.value(th, tn, miss_col[level]);
        if (e.value(th, tn, c.visits) == 0) continue;
        ++s.entered;
        if (t.region_of(merged[tn]).kind == RegionKind::Parallel && e.value(th, tn, c.team_size) > 0)
          s.master_join = e.value(th, tn, c.join) * 1e-9;
        double ts = time * 1e-9;
        s.sum_t += ts;
        if (ts > s.max_t) s.max_t = ts, s.most_loaded = int(ti);
        if (ts < s.min_t) s.min_t = ts, s.least_loaded = int(ti);
        double x = x_of[tn];
        if (x <= 0) continue;
        s.excl_sum += x;
        if (x > s.excl_most) s.excl_most = x, s.excl_who = ti;
      }
    }
  });

  f.own.resize(n_nodes);
  f.own_useful.resize(n_nodes, 0);
  f.time_max.resize(n_nodes, 0);
  f.visits.resize(n_nodes, 0);
  f.iterations.resize(n_nodes, 0);
  f.useful_per_pe.assign(e.threads.size(), 0);
  f.misses.assign(n_nodes, {0, 0, 0});
  for (uint32_t n = 0; n < n_nodes; ++n) {
    f.time_max[n] = st[n].time_max * 1e-9;
    f.visits[n] = st[n].visits;
    // Every thread of a team reports the construct's whole iteration count.
    f.iterations[n] = st[n].iterations;
    // Counters are inclusive: a node's own misses are its value minus its children's.
    for (size_t level = 0; level < 3; ++level) {
      if (!f.has_misses[level]) continue;
      double v = st[n].misses[level];
      for (uint32_t ch : t.node(n).children) v -= st[ch].misses[level];
      f.misses[n][level] = std::max(0.0, v);
    }
  }

  // Pass 2: each PE's time in each node, classified.
  std::vector<uint32_t> child_pos = child_positions(t);
  std::vector<NodePlan> plan(n_nodes);
  std::vector<char> is_before(n_nodes, 0);  // some node's plan asks which PEs entered this one
  for (uint32_t n = 0; n < n_nodes; ++n) plan[n] = plan_node(t, st, child_pos, n);
  for (const NodePlan& pl : plan)
    if (pl.before != format::kNoIndex) is_before[pl.before] = 1;
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    std::vector<char> entered(n_nodes, 0);  // per merged node: the current thread entered it
    for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = t.merged_of(ti);
      double* x_of = excl.data() + first[ti];
      for (uint32_t tn = 0; tn < th.size(); ++tn)
        if (is_before[merged[tn]] && e.value(th, tn, c.visits) > 0) entered[merged[tn]] = 1;
      member_order(merged, order);
      auto [begin, end] = in_range(order, merged, workers.nodes(w));
      for (const uint32_t* it = begin; it != end; ++it) {
        uint32_t tn = *it;
        uint32_t n = merged[tn];
        const NodePlan& pl = plan[n];
        const drg::Region& r = *pl.region;
        double x = x_of[tn];
        double wait = 0, fork_join = 0;
        if (pl.collective && st[n].members > 1) {
          wait = std::clamp(e.value(th, tn, c.time) * 1e-9 - pl.fastest, 0.0, std::max(x, 0.0));
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
        if (rule && rule->useful) f.own_useful[n] += rest;
        x_of[tn] = rest;
      }
      for (uint32_t tn = 0; tn < th.size(); ++tn) entered[merged[tn]] = 0;
    }
  });

  // Useful time per PE, for the POP metrics: each thread's rests in member order.
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    auto [lo, hi] = workers.threads(w);
    for (uint32_t ti = lo; ti < hi; ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = t.merged_of(ti);
      const double* rest_of = excl.data() + first[ti];
      member_order(merged, order);
      for (uint32_t tn : order) {
        const Rule* rule = exclusive_rule(plan[merged[tn]], th);
        if (rule && rule->useful) f.useful_per_pe[ti] += rest_of[tn];
      }
    }
  });
  return f;
}

// Per merged node: its wall time, how many PEs entered it, and the rule for PEs that did not.
struct IdleInfo {
  double t_p = 0, master_join = 0;
  size_t pes_ran = 0;
  const Rule* not_ran = nullptr;
  // For PEs that ran it for less than its wall time.
  const Rule *before_start = nullptr, *fork = nullptr, *shorter = nullptr;
};

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
  IdleWalk(const MergedTree& run, const Columns& c, const std::vector<IdleInfo>& info)
      : run_(run), e_(run.experiment()), c_(c), info_(info), reached_(run.nodes().size(), 0) {}

  // Follows thread `ti` from now on: its children lists, to walk the paths it only holds.
  void start_thread(uint32_t ti) {
    th_ = &e_.threads[ti];
    merged_ = &run_.merged_of(ti);
    first_child_.assign(th_->size(), format::kNoIndex);
    next_sibling_.assign(th_->size(), format::kNoIndex);
    for (uint32_t n = uint32_t(th_->size()); n-- > 1;) {
      uint32_t parent = th_->parent[n];
      next_sibling_[n] = first_child_[parent];
      first_child_[parent] = n;
    }
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
      if (entered(tn)) continue;
      summed_[tn] = uint32_t(sums_.size());
      sums_.emplace_back();
      Buckets& b = sums_.back();
      uint64_t call = ++calls_;
      for (uint32_t tc = first_child_[tn]; tc != format::kNoIndex; tc = next_sibling_[tc]) {
        uint32_t mc = (*merged_)[tc];
        reached_[mc] = call;
        if (entered(tc)) add_entered(tc, mc, b);
        else b.add(sums_[summed_[tc]]);
      }
      add_own((*merged_)[tn], call, b);
    }
  }

  // Adds the idle time of the current thread's node `tn` (merged node `n`) to `b`.
  void add(uint32_t tn, uint32_t n, Buckets& b) {
    if (entered(tn)) {
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
      Frame& f = stack_.back();
      if (f.next == format::kNoIndex) {
        add_own(f.n, f.call, b);
        stack_.pop_back();
        continue;
      }
      uint32_t tc = f.next;
      f.next = next_sibling_[tc];
      uint32_t mc = (*merged_)[tc];
      reached_[mc] = f.call;
      if (entered(tc)) add_entered(tc, mc, b);
      else stack_.push_back({tc, mc, ++calls_, first_child_[tc]});  // f is not used after this
    }
  }

 private:
  bool entered(uint32_t tn) const { return e_.value(*th_, tn, c_.visits) > 0; }

  // A PE that entered the region and left early.
  void add_entered(uint32_t tn, uint32_t n, Buckets& b) const {
    const drg::Region& r = run_.region_of(n);
    const IdleInfo& in = info_[n];
    double idle = in.t_p - e_.value(*th_, tn, c_.time) * 1e-9;
    if (idle <= 0) return;
    if (r.kind == RegionKind::Program) {
      b.add(in.before_start, idle);
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
  std::vector<uint64_t> reached_;  // per merged node: the last call that reached it
  uint64_t calls_ = 0;
  const drg::ThreadTree* th_ = nullptr;
  const std::vector<uint32_t>* merged_ = nullptr;
  std::vector<uint32_t> first_child_, next_sibling_, depth_;
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

Analysis classify(const MergedTree& run, const MergedTree* reference, const Options& options) {
  const drg::Experiment& e = run.experiment();
  Columns c(e);
  Analysis a;
  a.p = options.p > 0 ? options.p : count_pes(e);
  a.has_reference = reference != nullptr;
  a.keys = options.keys ? options.keys : std::make_shared<CallPathKeys>();
  const double p = a.p;
  Workers workers(run, options.threads);
  RunFacts f = measure(run, workers, *a.keys);
  size_t n_nodes = run.nodes().size();
  std::vector<IdleInfo> info(n_nodes);
  for (uint32_t n = 0; n < n_nodes; ++n) {
    const drg::Region& r = run.region_of(n);
    IdleInfo& in = info[n];
    in.t_p = f.time_max[n];
    in.pes_ran = f.stats[n].entered;
    in.master_join = f.stats[n].master_join;
    in.not_ran = find_rule(r.kind, r.subkind, in.pes_ran <= 1 ? Part::IdleOneRan : Part::IdleSomeRan);
    in.before_start = find_rule(r.kind, r.subkind, Part::IdleBeforeStart);
    in.fork = find_rule(r.kind, r.subkind, Part::IdleFork);
    in.shorter = find_rule(r.kind, r.subkind, Part::IdleShorter);
  }

  // Reference facts, matched by call-path key (the roots match whatever the program's name:
  // the reference may be a copy of the binary). Where several reference nodes have the same key,
  // the first one counts.
  std::optional<RunFacts> rf;
  std::vector<uint32_t> ref_index;  // key -> reference node
  if (reference) {
    rf = measure(*reference, Workers(*reference, options.threads), *a.keys);
    ref_index.assign(a.keys->size(), format::kNoIndex);
    for (uint32_t n = 0; n < rf->keys.size(); ++n)
      if (ref_index[rf->keys[n]] == format::kNoIndex) ref_index[rf->keys[n]] = n;
  }
  auto ref_of = [&](uint32_t n) -> long {
    if (!rf) return -1;
    uint32_t rn = ref_index[f.keys[n]];
    return rn == format::kNoIndex ? -1 : long(rn);
  };

  // Evidence from the reference: extra work and replicated work move out of useful work.
  if (rf) {
    const Rule* extra = find_rule(RegionKind::Program, 0, Part::ExtraWork);
    const Rule* replicated = find_rule(RegionKind::Program, 0, Part::Replicated);
    for (uint32_t n = 0; n < n_nodes; ++n) {
      const drg::Region& r = run.region_of(n);
      double u = f.own_useful[n];
      if (!is_work(r) || u <= 0) continue;
      long rn = ref_of(n);
      double moved = 0;
      if (rn < 0) {
        moved = u;
        f.own[n].add(extra, u);
      } else if ((r.kind == RegionKind::Loop || r.kind == RegionKind::Taskloop) &&
                 rf->iterations[size_t(rn)] > 0 &&
                 f.iterations[n] > rf->iterations[size_t(rn)] * 1.001) {
        moved = u * (1 - rf->iterations[size_t(rn)] / f.iterations[n]);
        f.own[n].add(extra, moved);
      } else {
        double k = double(run.node(n).members.size());
        double u_ref = rf->own_useful[size_t(rn)];
        // Every PE repeats the reference's visits and does most of the reference's work.
        if (k >= 2 && u_ref > 0 && f.visits[n] >= k * rf->visits[size_t(rn)] && u / k > 0.6 * u_ref) {
          moved = std::max(0.0, std::min(u, k * u_ref) - u_ref);
          f.own[n].add(replicated, moved);
        }
      }
      // Cache misses beyond the reference's, priced by the calibrated penalty per level.
      if (rn >= 0 && options.machine && !options.machine->miss_penalty_ns.empty()) {
        static const char* level_name[3] = {"L1", "L2", "L3"};
        double d = 0;
        for (size_t level = 0; level < 3; ++level) {
          if (!f.has_misses[level] || !rf->has_misses[level]) continue;
          auto pen = options.machine->miss_penalty_ns.find(level_name[level]);
          if (pen == options.machine->miss_penalty_ns.end()) continue;
          double extra = f.misses[n][level] - rf->misses[size_t(rn)][level];
          if (extra > 0) d += extra * std::max(0.0, pen->second) * 1e-9;
        }
        d = std::min(d, std::max(0.0, u - moved));
        if (d > 0) {
          f.own[n].add(find_rule(r.kind, r.subkind, Part::ExtraMisses), d);
          a.misses_priced = true;
          moved += d;
        }
      }
      f.own[n].useful -= moved;
    }
  }

  // Subtree sums, children before parents.
  std::vector<Buckets> sub = std::move(f.own);  // f.own is not used after this
  std::vector<uint32_t> order = run.preorder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t parent = run.node(*it).parent;
    if (parent != format::kNoIndex) sub[parent].add(sub[*it]);
  }

  // The tool's own cost per thread node: visits recorded strictly below it times the calibrated
  // cost of each visit's kind, plus two counter reads per visit of a region kind that reads
  // counters (the experiment records the cost of one read on its machine).
  std::vector<double> kind_cost;  // s per visit, by region kind
  if (options.machine) {
    a.noise_priced = true;
    double read_ns = 0;
    std::vector<bool> counted(format::kRegionKindCount, false);
    const auto& cm = e.meta.contains("counters") ? e.meta["counters"] : nlohmann::json();
    if (cm.is_object() && cm.contains("measured") && cm["measured"].is_array() &&
        !cm["measured"].empty()) {
      read_ns = cm.value("cost_per_read_ns", 0.0);
      std::string kinds = cm.value("regions", "");
      for (uint16_t k = 0; k < format::kRegionKindCount; ++k) {
        std::string name(format::region_kind_name(RegionKind(k)));
        size_t at = ("," + kinds + ",").find("," + name + ",");
        counted[k] = at != std::string::npos;
      }
    }
    kind_cost.resize(format::kRegionKindCount);
    for (uint16_t k = 0; k < format::kRegionKindCount; ++k) {
      std::string name(format::region_kind_name(RegionKind(k)));
      // Barriers of every flavour share the explicit barrier's figure.
      if (name.rfind("barrier", 0) == 0) name = "barrier";
      if (name == "nest_lock" || name == "critical") name = "lock";
      kind_cost[k] = options.machine->cost(name) + (counted[k] ? 2 * read_ns : 0);
    }
  }

  // One more pass over the PEs: their idle time in each region, added to the region's subtree
  // sums, and the longest time of any PE once the tool's cost below it is taken away.
  std::vector<Buckets> total = std::move(sub);
  std::vector<double> compensated(n_nodes, 0), events_below(n_nodes, 0);
  workers.run([&](unsigned w) {
    IdleWalk idle(run, c, info);
    std::vector<double> noise_below_node, events_below_node;
    std::vector<uint32_t> order;
    for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      const std::vector<uint32_t>& merged = run.merged_of(ti);
      member_order(merged, order);
      auto [begin, end] = in_range(order, merged, workers.nodes(w));
      if (begin == end) continue;
      if (options.machine) {
        noise_below_node.assign(th.size(), 0);
        events_below_node.assign(th.size(), 0);
        for (uint32_t tn = uint32_t(th.size()); tn-- > 1;) {
          double v = e.value(th, tn, c.visits);
          uint32_t parent = th.parent[tn];
          noise_below_node[parent] += noise_below_node[tn] + v * kind_cost[size_t(e.regions[th.region[tn]].kind)] * 1e-9;
          events_below_node[parent] += events_below_node[tn] + v;
        }
      }
      idle.start_thread(ti);
      for (const uint32_t* it = begin; it != end; ++it) {
        uint32_t tn = *it;
        uint32_t n = merged[tn];
        if (options.machine) {
          double t = e.value(th, tn, c.time) * 1e-9;
          compensated[n] = std::max(compensated[n], t - noise_below_node[tn]);
          events_below[n] += events_below_node[tn];
        }
        idle.add(tn, n, total[n]);
      }
    }
  });

  a.regions.resize(n_nodes);
  for (uint32_t n = 0; n < n_nodes; ++n) {
    const drg::MergedNode& mn = run.node(n);
    const MemberStats& st = f.stats[n];
    RegionOverheads& o = a.regions[n];
    o.node = n;
    if (options.paths) o.path = run.path(n);
    o.key = f.keys[n];
    o.p = a.p;
    o.t_p = f.time_max[n];
    double B = p * o.t_p;
    Buckets& b = total[n];

    // PEs idle with respect to this region. A PE "ran" the region when it entered it; a PE that
    // only holds the path (it ran parallel regions nested in it) was idle during the rest.
    o.pes_ran = info[n].pes_ran;
    o.most_loaded = st.most_loaded;
    o.least_loaded = st.least_loaded;
    if (options.machine) {
      o.events_below = events_below[n];
      o.noise = std::max(0.0, o.t_p - std::max(0.0, compensated[n]));
    }
    double absent = std::max(0.0, p - double(mn.members.size()));
    if (absent > 0 && o.t_p > 0) b.add(info[n].not_ran, absent * o.t_p);
    if (o.pes_ran > 0 && st.sum_t > 0) o.imbalance = st.max_t / (st.sum_t / double(o.pes_ran));

    // Reference time; without one, T_s is estimated as the useful work (A = 0).
    long rn = ref_of(n);
    o.in_reference = rn >= 0;
    if (rn >= 0) o.ref_node = uint32_t(rn);
    double U;
    if (rn >= 0) {
      o.t_s = rf->time_max[size_t(rn)];
      o.t_s_estimated = false;
      U = o.t_s + b.cls[size_t(Class::AdditionalComputation)];
    } else if (rf) {
      o.t_s = 0;  // the region does not exist in the reference: all its work is additional
      o.t_s_estimated = false;
      U = b.cls[size_t(Class::AdditionalComputation)];
    } else {
      o.t_s = b.useful;
      U = b.useful;
    }
    o.useful_pe = U;
    o.t_o = o.t_p - o.t_s / p;
    double identified = 0;
    for (int k = 0; k < kClassCount; ++k) {
      if (Class(k) == Class::AdditionalComputation || Class(k) == Class::Unidentified) continue;
      o.classes[size_t(k)] = b.cls[size_t(k)] / p;
      identified += b.cls[size_t(k)];
    }
    o.classes[size_t(Class::AdditionalComputation)] = (U - o.t_s) / p;
    double R = B - U - identified;
    o.classes[size_t(Class::Unidentified)] = R / p;
    for (const auto& [k, v] : b.subclasses())
      if (rf || k.rfind("additional_computation.", 0) != 0) o.subclasses[k] = v / p;
    o.speedup = o.t_p > 0 ? o.t_s / o.t_p : 0;
    o.efficiency = o.speedup / p;
  }

  // Regions the reference ran and this run did not: their work is gone (negative additional
  // computation), so T_o = -T_s/p.
  if (rf) {
    std::vector<char> in_run(a.keys->size(), 0);
    for (uint32_t n = 0; n < n_nodes; ++n) in_run[f.keys[n]] = 1;
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
      o.classes[size_t(Class::AdditionalComputation)] = o.t_o;
      o.subclasses["additional_computation.removed"] = o.t_o;
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
