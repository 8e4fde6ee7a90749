// The classifier's first pass: every PE's time in every region, measured and split by the rules.
#include "facts.hpp"

#include <cmath>

#include "fold.hpp"

namespace scalea::overheads::detail {

namespace {

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
    excl[n] =
        entered ? (e.value(t, n, c.time) - child_time[n] - (tasks - child_task[n])) * 1e-9 : 0.0;
    incl[n] = excl[n] + acc[n];
    if (n > 0) acc[t.parent[n]] += incl[n];
  }
}

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
    return s.visits > 0 && s.entered > 0 &&
           s.iterations * double(s.entered) / s.visits < double(s.entered);
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
  pl.root_late = find_rule(r.kind, sub, Part::RootLate);
  pl.root_not_in_team = find_rule(r.kind, sub, Part::RootNotInTeam);
  pl.root_startup = find_rule(r.kind, sub, Part::IdleMpiStartup);
  pl.collective = r.kind == RegionKind::Mpi && r.subkind == uint16_t(format::MpiClass::Collective);
  pl.partner_call = waits_for_partner(r);
  pl.barrier = pl.partner_call && r.subkind == uint16_t(format::MpiClass::Sync);
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
      std::max(0.0, st[n].excl_sum - st[n].fork_join) * 1e9 <
          kConstructOverheadNs * construct_visits)
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
  // The same when the enclosing region's own code ran on one PE only and a collective that
  // distributes one root's data follows (rank 0 computes, then broadcasts the result the others
  // need): that PE's code time bounds the loss in the others' waits. A late arrival at a pure
  // barrier, or at a collective every rank contributes to (MPI_Allreduce), stays
  // synchronization: the late rank was doing its share, and nothing tells it apart from
  // imbalance.
  if (pl.collective && distributes_from_root(r) && !pl.partial_barrier &&
      pl.before == format::kNoIndex && mn.parent != format::kNoIndex) {
    const MemberStats& ps = st[mn.parent];
    if (ps.entered > 1 && ps.excl_sum > 0 && ps.excl_most >= kSerialShare * ps.excl_sum)
      pl.serial_pe = ps.excl_who, pl.serial_time = ps.excl_most;
  }
  if (pl.before != format::kNoIndex) pl.before_time = st[pl.before].time_max;
  pl.fastest = pl.collective || pl.barrier ? st[n].time_min : 0;
  // Completions of non-blocking requests carry no bytes (they were counted at MPI_Isend and
  // MPI_Irecv), so the message model gives them no transfer and all their time was waiting; a
  // large message completes there. Where every rank calls the site (SPMD: a halo exchange),
  // some rank arrives last and does not wait: the completions' own cost is bounded as a
  // collective's (collective_transfer). A site only some ranks call (workers waiting for a
  // master) is all waiting.
  pl.completion = r.kind == RegionKind::Mpi && r.subkind == uint16_t(format::MpiClass::Wait);
  const size_t ranks = t.experiment().ranks();
  if (pl.completion && ranks > 1 && st[n].entered >= ranks && st[n].members == st[n].entered) {
    pl.request_wait = true;
    pl.fastest = st[n].time_min;
  }
  const int shortest = t.experiment().metric(format::CoreMetric::TimeMin);
  pl.shortest_call = (pl.partner_call || pl.request_wait) && shortest >= 0 && st[n].entered > 0
                         ? t.min(n, shortest) * 1e-9
                         : -1;

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

// The rule for a PE's own time in a node: the region's, except on the program region of a
// thread that is not the initial one (that thread is idle in the runtime).
const Rule* exclusive_rule(const NodePlan& pl, const drg::ThreadTree& th) {
  if (pl.region->kind == RegionKind::Program && !(th.flags & format::kThreadInitial))
    return pl.idle_root;
  return pl.exclusive;
}

}  // namespace

std::map<int, MpiStartupTimes> mpi_startup_times(const drg::Experiment& e, const Columns& c,
                                                 const drg::ThreadBatch& b, const BatchTimes& bt) {
  std::map<int, MpiStartupTimes> out;
  std::vector<char> inside;  // per node: in a parallel region or a start-up call
  for (uint32_t i = 0; i < b.count; ++i) {
    const drg::ThreadTree& th = b.threads[i];
    if (!(th.flags & format::kThreadInitial)) continue;
    const double* incl = bt.incl.data() + bt.first[i];
    inside.assign(th.size(), 0);
    MpiStartupTimes times;
    for (uint32_t tn = 1; tn < th.size(); ++tn) {
      const drg::Region& r = e.regions[th.region[tn]];
      bool startup = rule_subkind(r) == kMpiStartup;
      inside[tn] =
          inside[th.parent[tn]] || startup || format::region_kind_has(r.kind, format::kTeam);
      if (!startup || inside[th.parent[tn]] || e.value(th, tn, c.visits) <= 0) continue;
      (is_mpi_shutdown(r.name) ? times.finalize : times.init) += incl[tn];
    }
    if (times.init > 0 || times.finalize > 0) out[th.rank] = times;
  }
  return out;
}

namespace {
// Where a thread that is not its rank's initial one was while outside every region (its time at
// the program root): during the initial thread's outermost parallel regions, those it did not run
// (a smaller team) and those it ran, the time it was not in them (late after the fork, early
// before the join); while the initial thread was in MPI start-up calls; the rest of the initial
// thread's time is serial code. Per thread of the batch (every thread of a rank is in the same
// batch).
void root_parts(const MergedTree& t, const Columns& c, const drg::ThreadBatch& b,
                const BatchTimes& bt, const ThreadStarts& starts, const RunFacts& f,
                std::vector<RunFacts::RootIdle>& root_idle) {
  const drg::Experiment& e = t.experiment();
  root_idle.assign(b.count, {});
  std::map<int, uint32_t> initial;  // rank -> its initial thread
  for (uint32_t i = 0; i < b.count; ++i)
    if (b.threads[i].flags & format::kThreadInitial) initial.emplace(b.threads[i].rank, i);
  std::vector<double> worker_time(t.nodes().size(), -1);  // per merged node, scratch
  std::vector<char> in_parallel;
  const std::map<int, MpiStartupTimes> startup = mpi_startup_times(e, c, b, bt);
  for (const auto& [rank, mi] : initial) {
    const drg::ThreadTree& m = b.threads[mi];
    const std::vector<uint32_t>& m_merged = b.merged[mi];
    const double* m_incl = bt.incl.data() + bt.first[mi];
    // The initial thread's outermost parallel regions (parents come before their children).
    std::vector<std::pair<uint32_t, double>> outer;  // merged node, its time on the initial thread
    in_parallel.assign(m.size(), 0);
    double in_regions = 0;
    for (uint32_t tn = 1; tn < m.size(); ++tn) {
      bool par = format::region_kind_has(e.regions[m.region[tn]].kind, format::kTeam);
      in_parallel[tn] = in_parallel[m.parent[tn]] || par;
      if (par && !in_parallel[m.parent[tn]] && e.value(m, tn, c.visits) > 0) {
        outer.emplace_back(m_merged[tn], m_incl[tn]);
        in_regions += m_incl[tn];
      }
    }
    double serial = std::max(0.0, m_incl[0] - in_regions);
    for (uint32_t i = 0; i < b.count; ++i) {
      const drg::ThreadTree& w = b.threads[i];
      if (i == mi || w.rank != rank || (w.flags & format::kThreadInitial)) continue;
      const std::vector<uint32_t>& merged = b.merged[i];
      const double* incl = bt.incl.data() + bt.first[i];
      for (uint32_t tn = 1; tn < w.size(); ++tn)
        if (format::region_kind_has(e.regions[w.region[tn]].kind, format::kTeam) &&
            e.value(w, tn, c.visits) > 0)
          worker_time[merged[tn]] = std::max(worker_time[merged[tn]], 0.0) + incl[tn];
      RunFacts::RootIdle& ri = root_idle[i];
      for (const auto& [n, time] : outer) {
        if (worker_time[n] >= 0) ri.late += std::max(0.0, time - worker_time[n]);
        else ri.not_in_team += time;
      }
      for (uint32_t tn = 1; tn < w.size(); ++tn) worker_time[merged[tn]] = -1;
      // The serial code before the thread existed is counted at the root's idle PEs (idle.cpp),
      // and so is the part of MPI_Init that fits in it; the rest of the start-up calls' time
      // is here.
      double before = std::max(0.0, f.stats[0].time_max - incl[0]);
      double before_serial = starts.split(w.rank, w.thread, before)[0];
      ri.serial = std::max(0.0, serial - before_serial);
      if (auto su = startup.find(rank); su != startup.end()) {
        double init_before = std::min(su->second.init, before_serial);
        ri.startup = std::min(ri.serial, su->second.init - init_before + su->second.finalize);
        ri.serial -= ri.startup;
      }
    }
  }
}

// Pass 1, per batch: statistics over each merged node's members, into `into`.
void member_stats(const MergedTree& t, const Workers& workers, const Columns& c,
                  const std::array<int, 3>& miss_col, const drg::ThreadBatch& b,
                  const BatchTimes& bt, StatsFold& into) {
  const drg::Experiment& e = t.experiment();
  std::vector<MemberStats>& st = into.stats;
  const Sums& sums = into.sums;
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < b.count; ++i) {
      const uint32_t ti = b.first + i;
      const drg::ThreadTree& th = b.threads[i];
      const std::vector<uint32_t>& merged = b.merged[i];
      const double* x_of = bt.rest.data() + bt.first[i];
      const double* in_of = bt.incl.data() + bt.first[i];
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
        if (format::region_kind_has(t.region_of(merged[tn]).kind, format::kTeam)) {
          sums.add(s.fork_join, merged[tn], Sum::ForkJoin,
                   (e.value(th, tn, c.fork) + e.value(th, tn, c.join)) * 1e-9);
          if (e.value(th, tn, c.team_size) > 0) {
            s.master_join = e.value(th, tn, c.join) * 1e-9;
            s.has_master_join = true;
          }
        }
        sums.add(s.sum_t, merged[tn], Sum::Time, time);
        if (time > s.max_t) s.max_t = time, s.most_loaded = int(ti);
        if (time < s.min_t) s.min_t = time, s.least_loaded = int(ti);
        double x = x_of[tn];
        if (x <= 0) continue;
        sums.add(s.excl_sum, merged[tn], Sum::Exclusive, x);
        if (x > s.excl_most) s.excl_most = x, s.excl_who = ti;
      }
    }
  });
}

// The part of a PE's time in a collective or barrier (`x`, s) that is the calls' own cost: at
// most the fastest rank's time there (what differs between the ranks is waiting: Scalasca's wait
// at N x N and wait at barrier); and when the PE's calls vary beyond the calls' own variation
// (kLatenessPerCallNs and twice the site's shortest call, on average per call), some rank was
// late at each call in turn: then at most what the calls cost when nobody is late, the site's
// shortest call (some rank arrives last at every call and does not wait) times the PE's calls,
// or the message model's transfer when that is more and the run does not contradict the model.
double collective_transfer(const drg::Experiment& e, const Columns& c, const drg::ThreadTree& th,
                           uint32_t tn, const NodePlan& pl, const ModelCheck& model, double x) {
  double transfer = std::min(std::max(x, 0.0), pl.fastest);
  double calls = e.value(th, tn, c.visits);
  if (pl.shortest_call < 0 || calls <= 0) return transfer;
  double own = calls * pl.shortest_call;
  double excess = (x - own) / calls;  // s per call beyond the shortest call
  if (excess < kLatenessPerCallNs * 1e-9 || excess < 2 * pl.shortest_call) return transfer;
  double by_model = c.transfer >= 0 && model.usable ? e.value(th, tn, c.transfer) * 1e-9 : 0.0;
  return std::min(transfer, std::max(own, by_model));
}

// The waiting of a PE in a blocking point-to-point call, `wait` as the collector split it by the
// message model. The run tells nothing of the sort here (a receive may wait in every call), so
// the split stands, unless the run contradicts the model that made it: then the collector's
// default model (kDefaultLatencyNs, kDefaultNsPerByte) splits the PE's calls of the site again.
// Less than kLatenessPerCallNs of waiting per call, as for collectives, cannot be told from the
// exchange's own cost (a reply waits for the request's round trip, the library's progress and
// polling, the OS): it is not waiting for a late partner.
double partner_wait(const drg::Experiment& e, const Columns& c, const drg::ThreadTree& th,
                    uint32_t tn, const ModelCheck& model, double x, double wait) {
  const double calls = e.value(th, tn, c.visits);
  if (!model.usable) {
    double bytes =
        (c.sent >= 0 ? e.value(th, tn, c.sent) : 0) + (c.recv >= 0 ? e.value(th, tn, c.recv) : 0);
    double cost = (calls * kDefaultLatencyNs + bytes * kDefaultNsPerByte) * 1e-9;
    wait = std::max(0.0, x - cost);
  }
  return calls > 0 && wait < calls * kLatenessPerCallNs * 1e-9 ? 0.0 : wait;
}

// Pass 2, per batch: each PE's exclusive time in each node, split into its parts and classified
// into the node's own buckets (`out`), by pass 1's statistics and plans (`f`). Leaves each PE's
// rest (useful or classified) in bt.rest.
void classify_parts(const MergedTree& t, const Workers& workers, const Columns& c,
                    const drg::ThreadBatch& b, BatchTimes& bt,
                    const std::vector<RunFacts::RootIdle>& root_idle,
                    const std::vector<double>* caps, const RunFacts& f, PeSplit& out,
                    std::vector<PeOwn>* pe_own) {
  const drg::Experiment& e = t.experiment();
  const std::vector<MemberStats>& st = f.stats;
  size_t n_nodes = t.nodes().size();
  std::vector<char> is_before(n_nodes, 0);  // some node's plan asks which PEs entered this one
  for (const NodePlan& pl : f.plan)
    if (pl.before != format::kNoIndex) is_before[pl.before] = 1;
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    std::vector<char> entered(n_nodes, 0);  // per merged node: the current thread entered it
    std::vector<double> cpu_here;           // per node of the current thread: sampled CPU (s)
    for (uint32_t i = 0; i < b.count; ++i) {
      const uint32_t ti = b.first + i;
      const drg::ThreadTree& th = b.threads[i];
      const std::vector<uint32_t>& merged = b.merged[i];
      double* x_of = bt.rest.data() + bt.first[i];
      for (uint32_t tn = 0; tn < th.size(); ++tn)
        if (is_before[merged[tn]] && e.value(th, tn, c.visits) > 0) entered[merged[tn]] = 1;
      // The thread's sampled on-CPU time per node (its node's own, not its children's).
      cpu_here.assign(th.samples.empty() ? 0 : th.size(), 0.0);
      for (const drg::SampledFrame& s : th.samples)
        if (s.node < cpu_here.size()) cpu_here[s.node] += s.cpu_s;
      if (!th.samples.empty()) out.sampled = true;
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
        } else if ((pl.collective || pl.barrier) && st[n].members > 1) {
          wait = std::max(x, 0.0) - collective_transfer(e, c, th, tn, pl, f.model, x);
          // A barrier's waits as the collector split them bound what it waited, unless the run
          // contradicts the model that split them.
          if (pl.barrier && f.model.usable)
            wait = std::min(wait, std::min(e.value(th, tn, c.wait) * 1e-9, std::max(x, 0.0)));
        } else if (has_wait(r.kind)) {
          wait = std::min(e.value(th, tn, c.wait) * 1e-9, std::max(x, 0.0));
          if (pl.partner_call) wait = partner_wait(e, c, th, tn, f.model, x, wait);
          // A completion waits all its time, but what the rank that waited least spent there
          // at a site every rank calls (the completions' own cost: data movement).
          if (pl.completion)
            wait = std::max(x, 0.0) -
                   (pl.request_wait ? collective_transfer(e, c, th, tn, pl, f.model, x) : 0.0);
        }
        if (format::region_kind_has(r.kind, format::kTeam) && e.value(th, tn, c.team_size) > 0)
          fork_join = (e.value(th, tn, c.fork) + e.value(th, tn, c.join)) * 1e-9;
        double rest = x - wait - fork_join;
        x_of[tn] = rest;
        if (caps && pl.exclusive && pl.exclusive->useful && rest > 0)
          out.sums.add(out.capped_useful[n], n, Sum::Capped, std::min(rest, (*caps)[n]));
        Buckets& own = out.own[n];
        // Each part goes to the node's buckets and, when asked, to this PE's own split (a
        // worker's nodes are its own: no other worker writes this PE's cell of the node).
        PeOwn* pe = pe_own ? &(*pe_own)[size_t(ti) * n_nodes + n] : nullptr;
        auto add = [&](const Rule* rule, double v) {
          own.add(rule, v);
          if (!pe || !rule) return;
          (rule->useful ? pe->useful : pe->classes[size_t(rule->cls)]) += v;
        };
        if (pl.partial_barrier) {
          add(pl.partial_wait, wait);
        } else if (pl.serial_pe != format::kNoIndex && ti != pl.serial_pe) {
          double lost = std::min(wait, pl.serial_time);
          add(pl.serial_wait, lost);
          add(pl.wait, wait - lost);
        } else if (pl.before != format::kNoIndex && !entered[pl.before]) {
          double lost = std::min(wait, pl.before_time);
          add(pl.before_pes == 1 ? pl.serial_wait : pl.partial_wait, lost);
          add(pl.wait, wait - lost);
        } else {
          add(pl.wait, wait);
        }
        add(pl.fork_join, fork_join);
        const Rule* rule = exclusive_rule(pl, th);
        if (rule == pl.idle_root && rule) {
          // A thread outside every region: in a smaller team's time, late in its own regions, or
          // in the serial code; what none of these explains stays unclassified.
          const RunFacts::RootIdle& ri = root_idle[i];
          double left = std::max(0.0, rest);
          double part = std::min(left, ri.not_in_team);
          add(pl.root_not_in_team, part);
          left -= part;
          part = std::min(left, ri.late);
          add(pl.root_late, part);
          left -= part;
          part = std::min(left, ri.startup);
          add(pl.root_startup, part);
          left -= part;
          add(rule, std::min(left, ri.serial));
          continue;
        }
        add(rule, rest);
        if (rule && rule->useful && rest > 0) {
          out.sums.add(out.own_useful[n], n, Sum::OwnUseful, rest);
          out.useful_min[n] = out.useful_pes[n] ? std::min(out.useful_min[n], rest) : rest;
          out.useful_max[n] = std::max(out.useful_max[n], rest);
          const double cpu = tn < cpu_here.size() ? cpu_here[tn] : 0.0;
          out.cpu_min[n] = out.useful_pes[n] ? std::min(out.cpu_min[n], cpu) : cpu;
          out.cpu_sum[n] += cpu;
          ++out.useful_pes[n];
        } else if (rule && rule->useful) {
          out.sums.add(out.own_useful[n], n, Sum::OwnUseful, rest);
        }
      }
      for (uint32_t tn = 0; tn < th.size(); ++tn) entered[merged[tn]] = 0;
    }
  });
}

// Useful time per PE of a batch's threads, for the POP metrics: each thread's rests in member
// order, then added to the run's sum in thread order.
void useful_per_pe(const Workers& workers, const drg::ThreadBatch& b, const BatchTimes& bt,
                   const RunFacts& f, PeSplit& out) {
  std::vector<double> useful(b.count, 0);
  workers.run([&](unsigned w) {
    std::vector<uint32_t> order;
    auto [lo, hi] = workers.threads(b, w);
    for (uint32_t i = lo; i < hi; ++i) {
      const std::vector<uint32_t>& merged = b.merged[i];
      const double* rest_of = bt.rest.data() + bt.first[i];
      member_order(merged, order);
      for (uint32_t tn : order) {
        const Rule* rule = exclusive_rule(f.plan[merged[tn]], b.threads[i]);
        if (rule && rule->useful) useful[i] += rest_of[tn];
      }
    }
  });
  for (double u : useful) {
    out.useful_pe_max = std::max(out.useful_pe_max, u);
    out.sums.add(out.useful_pe_sum, 0, Sum::UsefulPerPe, u);
  }
}

}  // namespace

BatchTimes::BatchTimes(const drg::Experiment& e, const drg::ThreadBatch& b,
                       const Workers& workers) {
  first.assign(b.count + 1, 0);
  for (uint32_t i = 0; i < b.count; ++i) first[i + 1] = first[i] + b.threads[i].size();
  rest.resize(first.back());
  incl.resize(first.back());
  Columns c(e);
  workers.run([&](unsigned w) {
    std::vector<double> scratch_time, scratch_task, scratch_acc;
    auto [lo, hi] = workers.threads(b, w);
    for (uint32_t i = lo; i < hi; ++i)
      thread_times(e, b.threads[i], c, scratch_time, scratch_task, scratch_acc,
                   rest.data() + first[i], incl.data() + first[i]);
  });
}

RunFacts measure(const MergedTree& t, const Workers& workers, std::vector<uint32_t> keys,
                 const std::vector<double>* caps, Share* share, std::vector<PeOwn>* pe_own) {
  const drg::Experiment& e = t.experiment();
  Columns c(e);
  size_t n_nodes = t.nodes().size();
  RunFacts f;
  f.keys = std::move(keys);
  f.model = check_message_model(t);
  if (const auto sampling = drg::read_meta(e.meta).sampling) f.sample_period = sampling->period_s;
  std::array<int, 3> miss_col{};
  for (int level = 0; level < 3; ++level) {
    miss_col[size_t(level)] = miss_column(e, level);
    f.has_misses[size_t(level)] = miss_col[size_t(level)] >= 0;
  }

  auto no_stats = [&] { return StatsFold{std::vector<MemberStats>(n_nodes), Sums{}}; };
  StatsFold stats = no_stats();
  auto times = [&](const drg::ThreadBatch& b) { return BatchTimes(e, b, workers); };
  drg::MetricSet stats_columns = c.for_times();  // and member_stats' columns
  stats_columns.add(c.iterations).add(c.tasks_created).add(c.fork).add(c.join).add(c.team_size);
  for (int column : miss_col) stats_columns.add(column);
  fold_batches(t, share, stats_columns, stats, no_stats, times,
               [&](const drg::ThreadBatch& b, BatchTimes& bt, StatsFold& into) {
                 member_stats(t, workers, c, miss_col, b, bt, into);
               });
  f.stats = std::move(stats.stats);
  const std::vector<MemberStats>& st = f.stats;

  f.time_max.resize(n_nodes, 0);
  f.visits.resize(n_nodes, 0);
  f.iterations.resize(n_nodes, 0);
  f.flushes.assign(n_nodes, 0);
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
    in_task[n] =
        t.region_of(n).kind == RegionKind::Task || (parent != format::kNoIndex && in_task[parent]);
    f.plan[n] = plan_node(t, st, child_pos, construct_visits[n], n, one_rank, in_task[n]);
  }
  const ThreadStarts starts(e);
  std::vector<RunFacts::RootIdle> root_idle;
  auto no_split = [&] { return PeSplit(n_nodes, caps != nullptr); };
  PeSplit& split = f;
  split = no_split();
  // root_parts', classify_parts' (the samples' CPU time comes from the visits and the time) and
  // useful_per_pe's.
  drg::MetricSet split_columns = c.for_times();
  split_columns.add(c.wait).add(c.fork).add(c.join).add(c.team_size);
  split_columns.add(c.transfer).add(c.sent).add(c.recv);
  fold_batches(t, share, split_columns, split, no_split, times,
               [&](const drg::ThreadBatch& b, BatchTimes& bt, PeSplit& into) {
                 root_parts(t, c, b, bt, starts, f, root_idle);
                 classify_parts(t, workers, c, b, bt, root_idle, caps, f, into, pe_own);
                 useful_per_pe(workers, b, bt, f, into);
               });
  return f;
}

}  // namespace scalea::overheads::detail
