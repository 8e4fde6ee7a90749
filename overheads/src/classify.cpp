#include "scalea/overheads/classify.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>

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

// Exclusive time of every node of every thread, in seconds. A task's time belongs to the node
// where the task was created, so a task node is not subtracted from its parent; instead each
// node gives back the task time that ran while it was open (task_exec) outside its children.
std::vector<std::vector<double>> exclusive_times(const drg::Experiment& e, const Columns& c) {
  std::vector<std::vector<double>> out(e.threads.size());
  for (size_t ti = 0; ti < e.threads.size(); ++ti) {
    const drg::ThreadTree& t = e.threads[ti];
    // A node never entered on this thread (visits 0) only exists as the path to regions the
    // thread did run (a worker's copy of the master's context): it covers its children's time
    // and has none of its own.
    std::vector<double> covered(t.size(), 0), covered_task(t.size(), 0);
    std::vector<double> child_time(t.size(), 0), child_task(t.size(), 0);
    for (uint32_t n = uint32_t(t.size()); n-- > 0;) {
      bool entered = e.value(t, n, c.visits) > 0;
      if (entered) {
        covered[n] = e.value(t, n, c.time);
        covered_task[n] = e.value(t, n, c.task_exec);
      } else {
        covered[n] = child_time[n];
        covered_task[n] = child_task[n];
      }
      if (n > 0 && !is_task(e, t, n)) {
        child_time[t.parent[n]] += covered[n];
        child_task[t.parent[n]] += covered_task[n];
      }
    }
    out[ti].resize(t.size());
    for (uint32_t n = 0; n < t.size(); ++n)
      out[ti][n] = e.value(t, n, c.visits) == 0
                       ? 0.0
                       : (e.value(t, n, c.time) - child_time[n] -
                          (e.value(t, n, c.task_exec) - child_task[n])) * 1e-9;
  }
  return out;
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

size_t entered_by(const drg::Experiment& e, const MergedTree& t, uint32_t n, int visits) {
  size_t k = 0;
  for (const drg::Member& m : t.node(n).members)
    if (e.value(e.threads[m.thread], m.node, visits) > 0) ++k;
  return k;
}

std::vector<std::string> node_keys(const MergedTree& t) {
  std::vector<std::string> keys(t.nodes().size());
  for (uint32_t n : t.preorder()) {
    const auto& node = t.node(n);
    std::string own = region_key(t.region_of(n));
    keys[n] = node.parent == format::kNoIndex ? own : keys[node.parent] + "/" + own;
  }
  return keys;
}

// Everything the analysis needs from one run, per merged node.
struct RunFacts {
  std::vector<Buckets> own;        // classified PE-time of the node itself (not its subtree)
  std::vector<double> own_useful;  // useful PE-time of the node itself
  std::vector<double> time_max;    // s
  std::vector<double> visits, iterations;
  std::vector<std::string> keys;
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

RunFacts measure(const MergedTree& t) {
  const drg::Experiment& e = t.experiment();
  Columns c(e);
  auto excl = exclusive_times(e, c);
  size_t n_nodes = t.nodes().size();
  RunFacts f;
  f.own.resize(n_nodes);
  f.own_useful.resize(n_nodes, 0);
  f.time_max.resize(n_nodes, 0);
  f.visits.resize(n_nodes, 0);
  f.iterations.resize(n_nodes, 0);
  f.useful_per_pe.assign(e.threads.size(), 0);
  f.keys = node_keys(t);
  f.misses.assign(n_nodes, {0, 0, 0});
  for (int level = 0; level < 3; ++level) {
    int col = miss_column(e, level);
    if (col < 0) continue;
    f.has_misses[size_t(level)] = true;
    // Counters are inclusive: a node's own misses are its value minus its children's.
    for (uint32_t n = 0; n < n_nodes; ++n) {
      double v = t.sum(n, col);
      for (uint32_t ch : t.node(n).children) v -= t.sum(ch, col);
      f.misses[n][size_t(level)] = std::max(0.0, v);
    }
  }
  for (uint32_t n = 0; n < n_nodes; ++n) {
    const drg::MergedNode& mn = t.node(n);
    const drg::Region& r = t.region_of(n);
    f.time_max[n] = t.max(n, c.time) * 1e-9;
    f.visits[n] = t.sum(n, c.visits);
    // Every thread of a team reports the construct's whole iteration count.
    f.iterations[n] = t.max(n, c.iterations);
    // A barrier right after single/sections/masked waits for the one thread that ran the body.
    // More generally, synchronization right after a region that fewer PEs ran (serial code on
    // rank 0 before a broadcast) waits for that code: for the PEs that did not run it, the wait
    // (up to that region's time) is loss of parallelism.
    // MPI collectives: the fastest rank's time approximates the transfer; the rest is waiting.
    bool collective = r.kind == RegionKind::Mpi && r.subkind == uint16_t(format::MpiClass::Collective);
    bool partial_barrier = false;
    uint32_t before = format::kNoIndex;
    size_t before_pes = 0;
    if (waits_for_others(r) && mn.parent != format::kNoIndex) {
      const auto& sib = t.node(mn.parent).children;
      auto it = std::find(sib.begin(), sib.end(), n);
      if (it != sib.begin()) {
        partial_barrier = is_barrier(r.kind) && is_partial_construct(t.region_of(*(it - 1)).kind);
        size_t here = entered_by(e, t, n, c.visits);
        before_pes = entered_by(e, t, *(it - 1), c.visits);
        if (!partial_barrier && before_pes > 0 && before_pes < here) before = *(it - 1);
      }
    }
    // The same when the enclosing region's own code ran on one PE only and a data collective
    // follows (rank 0 computes, then broadcasts the result the others need): that PE's code time
    // bounds the loss in the others' waits. A late arrival at a pure barrier stays
    // synchronization: nothing tells it apart from imbalance.
    uint32_t serial_pe = format::kNoIndex;
    double serial_time = 0;
    if (collective && !partial_barrier && before == format::kNoIndex &&
        mn.parent != format::kNoIndex) {
      double sum = 0, most = 0;
      size_t entered = 0;
      uint32_t who = format::kNoIndex;
      for (const drg::Member& m : t.node(mn.parent).members) {
        if (e.value(e.threads[m.thread], m.node, c.visits) == 0) continue;
        ++entered;
        double x = excl[m.thread][m.node];
        if (x <= 0) continue;
        sum += x;
        if (x > most) most = x, who = m.thread;
      }
      if (entered > 1 && sum > 0 && most >= 0.9 * sum) serial_pe = who, serial_time = most;
    }
    std::vector<char> ran_before;
    double before_time = 0;
    if (before != format::kNoIndex) {
      ran_before.assign(e.threads.size(), 0);
      for (const drg::Member& m : t.node(before).members)
        if (e.value(e.threads[m.thread], m.node, c.visits) > 0) ran_before[m.thread] = 1;
      before_time = t.max(before, c.time) * 1e-9;
    }
    double fastest = collective ? t.min(n, c.time) * 1e-9 : 0;
    for (const drg::Member& m : mn.members) {
      const drg::ThreadTree& th = e.threads[m.thread];
      double x = excl[m.thread][m.node];
      double wait = 0, fork_join = 0;
      if (collective && mn.members.size() > 1) {
        wait = std::clamp(e.value(th, m.node, c.time) * 1e-9 - fastest, 0.0, std::max(x, 0.0));
      } else if (has_wait(r.kind)) {
        wait = std::min(e.value(th, m.node, c.wait) * 1e-9, std::max(x, 0.0));
      }
      if (r.kind == RegionKind::Parallel && e.value(th, m.node, c.team_size) > 0)
        fork_join = (e.value(th, m.node, c.fork) + e.value(th, m.node, c.join)) * 1e-9;
      double rest = x - wait - fork_join;
      Buckets& b = f.own[n];
      if (partial_barrier) {
        b.add(find_rule(r.kind, r.subkind, Part::PartialBarrierWait), wait);
      } else if (serial_pe != format::kNoIndex && m.thread != serial_pe) {
        double lost = std::min(wait, serial_time);
        b.add(find_rule(r.kind, r.subkind, Part::SerialWait), lost);
        b.add(find_rule(r.kind, r.subkind, Part::Wait), wait - lost);
      } else if (before != format::kNoIndex && !ran_before[m.thread]) {
        double lost = std::min(wait, before_time);
        b.add(find_rule(r.kind, r.subkind,
                        before_pes == 1 ? Part::SerialWait : Part::PartialBarrierWait),
              lost);
        b.add(find_rule(r.kind, r.subkind, Part::Wait), wait - lost);
      } else {
        b.add(find_rule(r.kind, r.subkind, Part::Wait), wait);
      }
      b.add(find_rule(r.kind, r.subkind, Part::ForkJoin), fork_join);
      const Rule* rule = find_rule(r.kind, r.subkind, Part::Exclusive);
      if (r.kind == RegionKind::Program && !(th.flags & format::kThreadInitial))
        rule = find_rule(r.kind, r.subkind, Part::IdleRoot);
      b.add(rule, rest);
      if (rule && rule->useful) {
        f.own_useful[n] += rest;
        f.useful_per_pe[m.thread] += rest;
      }
    }
  }
  return f;
}

int count_pes(const drg::Experiment& e) { return std::max<int>(1, int(e.threads.size())); }

}  // namespace

std::vector<std::string> identity_violations(const Analysis& a, double tolerance) {
  std::vector<std::string> out;
  auto check = [&](const RegionOverheads& r) {
    double sum = 0;
    for (double v : r.classes) sum += v;
    if (!(std::fabs(sum - r.t_o) <= tolerance))
      out.push_back(r.path + ": classes sum to " + std::to_string(sum) + " s, T_o is " +
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

// Call paths are compared and printed as strings, whose total size grows with depth squared:
// a tree deeper than this is refused with one line (it is almost always runaway recursion).
constexpr uint32_t kMaxDepth = 2000;

void check_depth(const MergedTree& t) {
  uint32_t deepest = 0;
  for (const drg::MergedNode& n : t.nodes()) deepest = std::max(deepest, n.depth);
  if (deepest > kMaxDepth)
    throw drg::LoadError(t.experiment().path + ": the call tree is " + std::to_string(deepest) +
                         " levels deep; the analyses take at most " + std::to_string(kMaxDepth) +
                         " (usually runaway recursion: SCALEA_FUNCTIONS_EXCLUDE can leave the "
                         "recursive function out)");
}

Analysis classify(const MergedTree& run, const MergedTree* reference, const Options& options) {
  check_depth(run);
  if (reference) check_depth(*reference);
  const drg::Experiment& e = run.experiment();
  Columns c(e);
  Analysis a;
  a.p = options.p > 0 ? options.p : count_pes(e);
  a.has_reference = reference != nullptr;
  const double p = a.p;
  RunFacts f = measure(run);
  size_t n_nodes = run.nodes().size();
  // Per region: how many PEs entered it, its wall time, and the rule for PEs that did not.
  struct IdleInfo {
    double t_p = 0, master_join = 0;
    size_t pes_ran = 0;
    const Rule* not_ran = nullptr;
  };
  std::vector<IdleInfo> info(n_nodes);
  for (uint32_t n = 0; n < n_nodes; ++n) {
    const drg::Region& r = run.region_of(n);
    IdleInfo& in = info[n];
    in.t_p = f.time_max[n];
    for (const drg::Member& m : run.node(n).members) {
      const drg::ThreadTree& th = e.threads[m.thread];
      if (e.value(th, m.node, c.visits) == 0) continue;
      ++in.pes_ran;
      if (r.kind == RegionKind::Parallel && e.value(th, m.node, c.team_size) > 0)
        in.master_join = e.value(th, m.node, c.join) * 1e-9;
    }
    in.not_ran = find_rule(r.kind, r.subkind, in.pes_ran <= 1 ? Part::IdleOneRan : Part::IdleSomeRan);
  }
  // Each thread node's merged node and children, to follow a PE through paths it only holds.
  std::vector<std::vector<uint32_t>> merged_of(e.threads.size()), first_child(e.threads.size()),
      next_sibling(e.threads.size());
  for (size_t ti = 0; ti < e.threads.size(); ++ti) {
    size_t sz = e.threads[ti].size();
    merged_of[ti].assign(sz, 0);
    first_child[ti].assign(sz, format::kNoIndex);
    next_sibling[ti].assign(sz, format::kNoIndex);
    for (uint32_t n = uint32_t(sz); n-- > 1;) {
      uint32_t parent = e.threads[ti].parent[n];
      next_sibling[ti][n] = first_child[ti][parent];
      first_child[ti][parent] = n;
    }
  }
  for (uint32_t n = 0; n < n_nodes; ++n)
    for (const drg::Member& m : run.node(n).members) merged_of[m.thread][m.node] = n;

  // Idle PE-time of one PE with respect to merged node n, classified.
  std::function<void(uint32_t, uint32_t, uint32_t, Buckets&)> idle_of =
      [&](uint32_t ti, uint32_t tn, uint32_t n, Buckets& b) {
        const drg::ThreadTree& th = e.threads[ti];
        const drg::Region& r = run.region_of(n);
        const IdleInfo& in = info[n];
        if (e.value(th, tn, c.visits) > 0) {  // the PE entered the region and left early
          double idle = in.t_p - e.value(th, tn, c.time) * 1e-9;
          if (idle <= 0) return;
          if (r.kind == RegionKind::Program) {
            b.add(find_rule(r.kind, r.subkind, Part::IdleBeforeStart), idle);
            return;
          }
          if (r.kind == RegionKind::Parallel && e.value(th, tn, c.team_size) == 0) {
            double fj = std::min(idle, e.value(th, tn, c.fork) * 1e-9 + in.master_join);
            b.add(find_rule(r.kind, r.subkind, Part::IdleFork), fj);
            idle -= fj;
          }
          b.add(find_rule(r.kind, r.subkind, Part::IdleShorter), idle);
          return;
        }
        // The PE only holds the path: it is idle in the region's own code, and in each child
        // region as that child's analysis says.
        double children_tp = 0;
        std::vector<char> reached(run.node(n).children.size(), 0);
        for (uint32_t tc = first_child[ti][tn]; tc != format::kNoIndex; tc = next_sibling[ti][tc]) {
          uint32_t mc = merged_of[ti][tc];
          const auto& ch = run.node(n).children;
          reached[size_t(std::find(ch.begin(), ch.end(), mc) - ch.begin())] = 1;
          idle_of(ti, tc, mc, b);
        }
        const auto& ch = run.node(n).children;
        for (size_t k = 0; k < ch.size(); ++k) {
          children_tp += info[ch[k]].t_p;
          if (!reached[k]) b.add(info[ch[k]].not_ran, info[ch[k]].t_p);
        }
        b.add(in.not_ran, std::max(0.0, in.t_p - children_tp));
      };

  // Reference facts, matched by canonical key.
  std::optional<RunFacts> rf;
  std::unordered_map<std::string, uint32_t> ref_index;
  if (reference) {
    rf = measure(*reference);
    for (uint32_t n = 0; n < rf->keys.size(); ++n) ref_index.emplace(rf->keys[n], n);
    // The roots match whatever the program's name: the reference may be a copy of the binary.
    ref_index[f.keys[0]] = 0;
  }
  auto ref_of = [&](uint32_t n) -> long {
    if (!rf) return -1;
    std::string key = f.keys[n];
    if (n != 0) key = rf->keys[0] + key.substr(f.keys[0].size());
    auto it = ref_index.find(key);
    return it == ref_index.end() ? -1 : long(it->second);
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
  std::vector<Buckets> sub = f.own;
  std::vector<uint32_t> order = run.preorder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t parent = run.node(*it).parent;
    if (parent != format::kNoIndex) sub[parent].add(sub[*it]);
  }

  // The tool's own cost per thread node: visits recorded strictly below it times the calibrated
  // cost of each visit's kind, plus two counter reads per visit of a region kind that reads
  // counters (the experiment records the cost of one read on its machine).
  std::vector<std::vector<double>> noise_below(e.threads.size()), events_below(e.threads.size());
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
    std::vector<double> kind_cost(format::kRegionKindCount);
    for (uint16_t k = 0; k < format::kRegionKindCount; ++k) {
      std::string name(format::region_kind_name(RegionKind(k)));
      // Barriers of every flavour share the explicit barrier's figure.
      if (name.rfind("barrier", 0) == 0) name = "barrier";
      if (name == "nest_lock" || name == "critical") name = "lock";
      kind_cost[k] = options.machine->cost(name) + (counted[k] ? 2 * read_ns : 0);
    }
    for (size_t ti = 0; ti < e.threads.size(); ++ti) {
      const drg::ThreadTree& th = e.threads[ti];
      noise_below[ti].assign(th.size(), 0);
      events_below[ti].assign(th.size(), 0);
      for (uint32_t tn = uint32_t(th.size()); tn-- > 1;) {
        double v = e.value(th, tn, c.visits);
        uint32_t parent = th.parent[tn];
        noise_below[ti][parent] += noise_below[ti][tn] + v * kind_cost[size_t(e.regions[th.region[tn]].kind)] * 1e-9;
        events_below[ti][parent] += events_below[ti][tn] + v;
      }
    }
  }

  a.regions.resize(n_nodes);
  for (uint32_t n = 0; n < n_nodes; ++n) {
    const drg::MergedNode& mn = run.node(n);
    RegionOverheads& o = a.regions[n];
    o.node = n;
    o.path = run.path(n);
    o.key = f.keys[n];
    o.p = a.p;
    o.t_p = f.time_max[n];
    double B = p * o.t_p;
    Buckets b = sub[n];

    // PEs idle with respect to this region. A PE "ran" the region when it entered it; a PE that
    // only holds the path (it ran parallel regions nested in it) was idle during the rest.
    o.pes_ran = info[n].pes_ran;
    double sum_t = 0, max_t = -1, min_t = 1e300;
    for (const drg::Member& m : mn.members) {
      const drg::ThreadTree& th = e.threads[m.thread];
      if (e.value(th, m.node, c.visits) == 0) continue;
      double ti = e.value(th, m.node, c.time) * 1e-9;
      sum_t += ti;
      if (ti > max_t) max_t = ti, o.most_loaded = int(m.thread);
      if (ti < min_t) min_t = ti, o.least_loaded = int(m.thread);
    }
    if (options.machine) {
      double compensated = 0;
      for (const drg::Member& m : mn.members) {
        const drg::ThreadTree& th = e.threads[m.thread];
        double ti = e.value(th, m.node, c.time) * 1e-9;
        compensated = std::max(compensated, ti - noise_below[m.thread][m.node]);
        o.events_below += events_below[m.thread][m.node];
      }
      o.noise = std::max(0.0, o.t_p - std::max(0.0, compensated));
    }
    for (const drg::Member& m : mn.members) idle_of(m.thread, m.node, n, b);
    double absent = std::max(0.0, p - double(mn.members.size()));
    if (absent > 0 && o.t_p > 0) b.add(info[n].not_ran, absent * o.t_p);
    if (o.pes_ran > 0 && sum_t > 0) o.imbalance = max_t / (sum_t / double(o.pes_ran));

    // Reference time; without one, T_s is estimated as the useful work (A = 0).
    long rn = ref_of(n);
    o.in_reference = rn >= 0;
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
    std::unordered_map<std::string, uint32_t> run_keys;
    for (uint32_t n = 0; n < n_nodes; ++n) {
      std::string key = n == 0 ? rf->keys[0] : rf->keys[0] + f.keys[n].substr(f.keys[0].size());
      run_keys.emplace(key, n);
    }
    for (uint32_t rn = 0; rn < rf->keys.size(); ++rn) {
      if (run_keys.count(rf->keys[rn])) continue;
      RegionOverheads o;
      o.node = format::kNoIndex;
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
