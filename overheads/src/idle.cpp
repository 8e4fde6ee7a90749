// The classifier's idle PEs: what the PEs did not spend in each region, classified, and the
// buckets of every region (its subtree's own buckets plus the idle and absent PEs).
#include "facts.hpp"

#include <cmath>
#include <map>

#include "fold.hpp"

namespace scalea::overheads::detail {

namespace {

// Per merged node: its wall time, how many PEs entered it, and the rules for idle PEs.
struct IdleInfo {
  double t_p = 0, master_join = 0;
  size_t pes_ran = 0;
  const Rule* not_ran = nullptr;
  // For PEs that ran it for less than its wall time.
  const Rule *before_start = nullptr, *launch_skew = nullptr, *runtime_start = nullptr,
             *smaller_team = nullptr, *fork = nullptr, *shorter = nullptr, *mpi_startup = nullptr;
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
    in.smaller_team = find_rule(r.kind, sub, Part::IdleSomeRan);
    in.fork = find_rule(r.kind, sub, Part::IdleFork);
    in.mpi_startup = find_rule(r.kind, sub, Part::IdleMpiStartup);
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
  // `mpi_ranks`: the run has more than one rank (Experiment::ranks() reads every thread: one walk
  // is made per batch, so it is counted once, not per rank file).
  IdleWalk(const MergedTree& run, const Columns& c, const std::vector<IdleInfo>& info,
           const ThreadStarts& starts, bool mpi_ranks)
      : run_(run),
        e_(run.experiment()),
        c_(c),
        info_(info),
        starts_(starts),
        reached_(run.nodes().size(), 0),
        mpi_ranks_(mpi_ranks) {}

  // The MPI start-up times of the ranks of the threads to follow (mpi_startup_times).
  void set_startup(const std::map<int, MpiStartupTimes>& startup) { startup_ = &startup; }

  // Follows thread `th` (its merged map, its nodes' inclusive times) from now on: its children
  // lists, to walk the paths it only holds.
  void start_thread(const drg::ThreadTree& th, const std::vector<uint32_t>& merged,
                    const double* incl) {
    th_ = &th;
    merged_ = &merged;
    incl_ = incl;
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

  // The current thread's rank's time in MPI_Init, when the thread is not the initial one.
  double init_time() const {
    if (!startup_ || (th_->flags & format::kThreadInitial)) return 0;
    auto it = startup_->find(th_->rank);
    return it == startup_->end() ? 0 : it->second.init;
  }

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
      // A thread that did not exist yet: serial code ran, or a smaller team, or the runtime was
      // starting. Its rank's MPI_Init is counted in the serial part (it comes first in a program).
      std::array<double, 3> part = starts_.split(th_->rank, th_->thread, idle);
      double startup = std::min(part[0], init_time());
      b.add(in.mpi_startup, startup);
      b.add(in.before_start, part[0] - startup);
      b.add(in.smaller_team, part[1]);
      b.add(in.runtime_start, part[2]);
      return;
    }
    if (format::region_kind_has(r.kind, format::kTeam) && e_.value(*th_, tn, c_.team_size) == 0) {
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
  const ThreadStarts& starts_;
  const std::map<int, MpiStartupTimes>* startup_ = nullptr;
  std::vector<uint64_t> reached_;  // per merged node: the last call that reached it
  uint64_t calls_ = 0;
  bool mpi_ranks_ = false, skewed_rank_ = false;
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

}  // namespace

int count_pes(const drg::Experiment& e) { return std::max<int>(1, int(e.threads.size())); }

// The tool's own cost per visit of each region kind, in s (docs/overhead-model.md, NOISE): the
// calibrated cost of the kind plus two counter reads where the experiment read counters.
std::vector<double> visit_costs(const drg::Experiment& e, const MachineModel& machine) {
  const drg::CounterMeta counters = drg::read_meta(e.meta).counters;
  std::vector<double> cost(format::kRegionKindCount);
  for (uint16_t k = 0; k < format::kRegionKindCount; ++k) {
    // Kinds without a figure of their own share another's (every barrier the barrier's, the
    // critical section and nest lock the lock's): the kind table's cost column.
    std::string name(format::region_kind_cost(RegionKind(k)));
    cost[k] = (machine.cost(name) +
               (counters.read_in(RegionKind(k)) ? 2 * counters.cost_per_read_ns : 0)) *
              1e-9;
  }
  return cost;
}

Totals totals(const MergedTree& t, RunFacts& f, const Workers& workers, double p,
              const std::vector<double>* visit_cost, Share* share) {
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
  const ThreadStarts starts(e);
  const bool mpi_ranks = e.ranks() > 1;
  auto no_idle = [&] {
    return Totals{std::vector<Buckets>(n_nodes), std::vector<double>(n_nodes, 0),
                  std::vector<double>(n_nodes, 0)};
  };
  struct Prepared {
    BatchTimes bt;
    std::map<int, MpiStartupTimes> startup;
  };
  auto prepare = [&](const drg::ThreadBatch& batch) {
    BatchTimes bt(e, batch, workers);
    std::map<int, MpiStartupTimes> startup = mpi_startup_times(e, c, batch, bt);
    return Prepared{std::move(bt), std::move(startup)};
  };
  // mpi_startup_times' and IdleWalk's columns.
  fold_batches(t, share, c.for_times().add(c.team_size).add(c.fork), out, no_idle, prepare,
               [&](const drg::ThreadBatch& batch, Prepared& made, Totals& into) {
                 const BatchTimes& bt = made.bt;
                 const std::map<int, MpiStartupTimes>& startup = made.startup;
                 workers.run([&](unsigned w) {
                   IdleWalk idle(t, c, info, starts, mpi_ranks);
                   idle.set_startup(startup);
                   std::vector<double> noise_below_node, events_below_node;
                   std::vector<uint32_t> member;
                   for (uint32_t i = 0; i < batch.count; ++i) {
                     const drg::ThreadTree& th = batch.threads[i];
                     const std::vector<uint32_t>& merged = batch.merged[i];
                     member_order(merged, member);
                     auto [begin, end] = in_range(member, merged, workers.nodes(w));
                     if (begin == end) continue;
                     const double* in_of = bt.incl.data() + bt.first[i];
                     if (visit_cost) {
                       noise_below_node.assign(th.size(), 0);
                       events_below_node.assign(th.size(), 0);
                       for (uint32_t tn = uint32_t(th.size()); tn-- > 1;) {
                         double v = e.value(th, tn, c.visits);
                         uint32_t parent = th.parent[tn];
                         noise_below_node[parent] +=
                             noise_below_node[tn] +
                             v * (*visit_cost)[size_t(e.regions[th.region[tn]].kind)];
                         events_below_node[parent] += events_below_node[tn] + v;
                       }
                     }
                     idle.start_thread(th, merged, in_of);
                     for (const uint32_t* it = begin; it != end; ++it) {
                       uint32_t tn = *it;
                       uint32_t n = merged[tn];
                       if (visit_cost) {
                         into.compensated[n] =
                             std::max(into.compensated[n], in_of[tn] - noise_below_node[tn]);
                         into.events_below[n] += events_below_node[tn];
                       }
                       idle.add(tn, n, into.total[n]);
                     }
                   }
                 });
               });
  // PEs that never held the region's path.
  for (uint32_t n = 0; n < n_nodes; ++n) {
    double absent = std::max(0.0, p - double(t.holders(n)));
    if (absent > 0 && info[n].t_p > 0) out.total[n].add(info[n].not_ran, absent * info[n].t_p);
  }
  return out;
}

}  // namespace scalea::overheads::detail
