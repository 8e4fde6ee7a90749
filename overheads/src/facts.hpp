// The classifier's internals (overheads/src/), shared by its passes: the facts measured per
// merged node (measure.cpp), the idle PEs and the buckets per region (idle.cpp), the reference's
// evidence (evidence.cpp) and the assembly of the rows (classify.cpp). Not a public interface.
#pragma once
#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "scalea/drg/meta.hpp"
#include "scalea/drg/team.hpp"
#include "scalea/overheads/classify.hpp"
#include "scalea/overheads/rules.hpp"
#include "scalea/overheads/share.hpp"

#include "mpi_cost.hpp"

namespace scalea::overheads::detail {

using drg::MergedTree;
using format::RegionKind;

// Per node of `tree`: whether it is a deeper level of a recursion that the other run also ran
// (its nearest ancestor of the same region is `known`: matched in the other run, or is such a
// level itself), or lies below one. A recursion's depth follows the schedule (a depth-first search
// by tasks that threads steal, as BOTS concom) or the data: a level one run has and the other not
// is the same work at another depth, neither work the other run does not do nor work it removed.
template <typename Known>
std::vector<char> deeper_in_recursion(const MergedTree& tree, Known known) {
  const auto& nodes = tree.nodes();
  std::vector<char> deeper(nodes.size(), 0);
  uint32_t regions = 0;
  for (const auto& m : nodes) regions = std::max(regions, m.region + 1);
  // Depth first, with the deepest node of each region on the current path: linear in the nodes
  // (a walk up the ancestors of each node would cost the depth for every region that does not
  // recur, as the critical section below each level of a deep task recursion).
  std::vector<uint32_t> nearest(regions, format::kNoIndex);
  struct Step {
    uint32_t node, saved;
    size_t next_child;
  };
  std::vector<Step> path;
  auto enter = [&](uint32_t n) {
    const uint32_t r = nodes[n].region, parent = nodes[n].parent;
    if (parent != format::kNoIndex && deeper[parent]) deeper[n] = 1;  // below such a level
    else if (const uint32_t a = nearest[r]; a != format::kNoIndex)
      deeper[n] = known(a) || deeper[a];
    path.push_back({n, nearest[r], 0});
    nearest[r] = n;
  };
  for (uint32_t root = 0; root < nodes.size(); ++root) {
    if (nodes[root].parent != format::kNoIndex) continue;
    enter(root);
    while (!path.empty()) {
      const uint32_t n = path.back().node;
      if (path.back().next_child < nodes[n].children.size()) {
        enter(nodes[n].children[path.back().next_child++]);
      } else {
        nearest[nodes[n].region] = path.back().saved;
        path.pop_back();
      }
    }
  }
  return deeper;
}

// ---- thresholds of the evidence rules (docs/overhead-model.md, "Thresholds") ------------------

// Replicated code: every PE did at least this share of the reference's work in the region.
constexpr double kReplicaMinShare = 0.6;
// Copies of the same work take about the same time on every PE: when the slowest PE's own work
// is more than this many times the fastest's, the PEs did not repeat one piece of work (a
// domain-decomposed rank's own code differs by rank) and nothing is called replicated.
constexpr double kReplicaMaxSpread = 2.0;
// On-CPU time sampled in a reference's node (call-path sampling) is evidence of its work when it
// is at least this share of the node's useful time and this many seconds (25 samples at the
// default rate): else the work was mostly off a CPU (a sleep, I/O), or too little was sampled.
// The share is low: a reference that shared its CPUs spent much of its time waiting for one.
constexpr double kCpuEvidenceShare = 0.2;
constexpr double kCpuEvidenceMinSeconds = 0.1;
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

// One addition to a sum of seconds that a process of an MPI job does not do itself but records,
// for rank 0 to do in the serial order (fold.hpp): the sum is `slot` of merged node `node`.
struct Addend {
  uint32_t node, slot;
  double value;
};

// A sum's slots: a Buckets' useful time, classes and rules, then the sums outside Buckets.
constexpr uint32_t kSlotUseful = 0, kSlotClass = 1;
inline uint32_t slot_of_rule(size_t rule) { return kSlotClass + kClassCount + uint32_t(rule); }
inline uint32_t bucket_slots() { return slot_of_rule(rules().size()); }
enum class Sum : uint32_t { Time, Exclusive, ForkJoin, OwnUseful, Capped, UsefulPerPe };
inline uint32_t slot_of(Sum s) { return bucket_slots() + uint32_t(s); }

// Recorded additions, written as they are made in the compact form they travel in: they come in
// runs on one node, and a rule's addition comes twice in a row with one value (to its class's
// sum and to its own). Each addition is its slot and two flags in 16 bits, then its node and its
// value only when they differ from the previous addition's (the value compared bit for bit: -0.0
// is not 0.0). fold.hpp's replay reads them back. (Recording 16-byte additions and encoding them
// afterwards cost a recording process 2 to 3 times the direct fold.)
class AdditionLog {
 public:
  static constexpr uint16_t kNewNode = 1, kNewValue = 2, kFlagBits = 2;

  void add(uint32_t node, uint32_t slot, double value) {
    if (slot >= (1u << (16 - kFlagBits)))
      throw std::logic_error("a sum's slot beyond what an addition's 16 bits hold");
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const bool new_node = node != last_node_, new_value = bits != last_bits_;
    char* at = room(sizeof(uint16_t) + sizeof node + sizeof bits);
    const uint16_t head =
        uint16_t(slot << kFlagBits | (new_node ? kNewNode : 0) | (new_value ? kNewValue : 0));
    at = put(at, head);
    if (new_node) at = put(at, node);
    if (new_value) at = put(at, bits);
    used_ = size_t(at - bytes_.data());
    last_node_ = node;
    last_bits_ = bits;
    ++count_;
  }
  // The count of additions, then the additions; the log starts again empty (its buffer kept).
  void move_to(drg::ByteWriter& out) {
    out.put(count_);
    out.append(bytes_.data(), used_);
    used_ = 0;
    count_ = 0;
    last_node_ = format::kNoIndex;
    last_bits_ = 0;
  }

 private:
  // Where `size` more bytes go: the buffer grows by doubling and is kept from file to file.
  char* room(size_t size) {
    if (bytes_.size() - used_ < size) bytes_.resize(std::max<size_t>(bytes_.size() * 2, 1 << 16));
    return bytes_.data() + used_;
  }
  template <class T>
  static char* put(char* at, T v) {
    std::memcpy(at, &v, sizeof v);
    return at + sizeof v;
  }
  std::vector<char> bytes_;
  size_t used_ = 0;
  uint64_t count_ = 0;
  uint32_t last_node_ = format::kNoIndex;
  uint64_t last_bits_ = 0;  // of +0.0
};

// Where a fold's sums of seconds go: added at once, or, recording, appended to `log` (additions
// of 0 change no sum and are left out).
struct Sums {
  AdditionLog* log = nullptr;
  void add(double& sum, uint32_t node, uint32_t slot, double v) const {
    if (!log) sum += v;
    else if (v != 0) log->add(node, slot, v);
  }
  void add(double& sum, uint32_t node, Sum which, double v) const {
    add(sum, node, slot_of(which), v);
  }
};

// PE-seconds per rule (each rule names its class and subclass), plus useful work. Rules are
// counted by their index in the table, so adding is an array update on the hot loops. The
// buckets of a recording fold (fold.hpp) record their additions instead (`log`, `node`).
struct Buckets {
  double useful = 0;
  std::array<double, kClassCount> cls{};
  std::vector<double> by_rule = std::vector<double>(rules().size(), 0.0);
  Sums sums;
  uint32_t node = 0;

  void add(const Rule* rule, double v) {
    if (!rule || v == 0) return;
    if (rule->useful) {
      sums.add(useful, node, kSlotUseful, v);
      return;
    }
    sums.add(cls[size_t(rule->cls)], node, kSlotClass + uint32_t(rule->cls), v);
    size_t i = size_t(rule - rules().data());
    sums.add(by_rule[i], node, slot_of_rule(i), v);
  }
  void add(const Buckets& o) {
    sums.add(useful, node, kSlotUseful, o.useful);
    for (int c = 0; c < kClassCount; ++c)
      sums.add(cls[size_t(c)], node, kSlotClass + uint32_t(c), o.cls[size_t(c)]);
    for (size_t i = 0; i < by_rule.size(); ++i)
      sums.add(by_rule[i], node, slot_of_rule(i), o.by_rule[i]);
  }
  // Slot `slot` of these buckets, as slot_of_rule and kSlotClass number them.
  double& at(uint32_t slot) {
    if (slot == kSlotUseful) return useful;
    if (slot < kSlotClass + kClassCount) return cls[slot - kSlotClass];
    return by_rule.at(slot - kSlotClass - kClassCount);
  }
};

struct Columns {
  int visits, time, time_min, wait, fork, join, task_exec, team_size, iterations, tasks_created,
      transfer, sent, recv;
  explicit Columns(const drg::Experiment& e)
      : visits(e.metric(format::CoreMetric::Visits)),
        time(e.metric(format::CoreMetric::TimeSum)),
        time_min(e.metric(format::CoreMetric::TimeMin)),
        wait(e.metric(format::CoreMetric::Wait)),
        fork(e.metric(format::CoreMetric::Fork)),
        join(e.metric(format::CoreMetric::Join)),
        task_exec(e.metric(format::CoreMetric::TaskExec)),
        team_size(e.metric(format::CoreMetric::TeamSize)),
        iterations(e.metric(format::CoreMetric::Iterations)),
        tasks_created(e.metric(format::CoreMetric::TasksCreated)),
        transfer(e.metric(format::CoreMetric::Transfer)),
        sent(e.metric(format::CoreMetric::BytesSent)),
        recv(e.metric(format::CoreMetric::BytesRecv)) {}
  // The columns BatchTimes reads (a pass that folds batches reads these and its own).
  drg::MetricSet for_times() const {
    return drg::MetricSet::none().add(visits).add(time).add(task_exec);
  }
};

// A thread's nodes in the order of the merged tree's member lists: by merged node, then by node.
// Every analysis pass streams over the threads in this order, so each per-region sum adds the
// same numbers in the same order as a walk over the region's members (thread by thread) would,
// while reading each thread's arrays from one place in memory.
inline void member_order(const std::vector<uint32_t>& merged, std::vector<uint32_t>& out) {
  out.resize(merged.size());
  for (uint32_t n = 0; n < merged.size(); ++n) out[n] = n;
  if (!std::is_sorted(merged.begin(), merged.end()))
    std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
      return merged[a] != merged[b] ? merged[a] < merged[b] : a < b;
    });
}

// The kind table's traits (format.hpp): waits the runtime reports, barriers, constructs one or a
// few threads of the team run, code not divided among the PEs that run it (only there can work be
// replicated; worksharing constructs and tasks divide their work by construction).
inline bool has_wait(RegionKind k) { return format::region_kind_has(k, format::kWaits); }
inline bool is_barrier(RegionKind k) { return format::region_kind_has(k, format::kBarrier); }
inline bool is_partial_construct(RegionKind k) {
  return format::region_kind_has(k, format::kPartial);
}
inline bool is_undivided(RegionKind k) { return format::region_kind_has(k, format::kUndivided); }

// The subkind the rules are looked up with: MPI_Init/MPI_Finalize get their own (kMpiStartup).
inline uint16_t rule_subkind(const drg::Region& r) {
  return r.kind == RegionKind::Mpi && is_mpi_startup(r.name) ? kMpiStartup : r.subkind;
}

// Synchronization that waits for the PEs still running the region before it.
inline bool waits_for_others(const drg::Region& r) {
  if (is_barrier(r.kind)) return true;
  return r.kind == RegionKind::Mpi && (r.subkind == uint16_t(format::MpiClass::Collective) ||
                                       r.subkind == uint16_t(format::MpiClass::Sync));
}

// What the PEs holding one merged node have in common: maxima, sums and counts over its members
// (one per thread), gathered in one streaming pass over the threads. Times are the members' `incl`.
struct MemberStats {
  size_t members = 0;
  size_t entered = 0;                 // members with visits > 0: the PEs that ran the region
  double time_max = 0, time_min = 0;  // s, over every member
  double visits = 0, iterations = 0;  // visits summed, iterations the largest
  double tasks_created = 0;
  double master_join = 0;        // s, join of the parallel region's master
  bool has_master_join = false;  // some member is the master of the parallel region
  // Over the members that entered: time in s, and the threads with the most and least of it.
  double sum_t = 0, max_t = -1, min_t = 1e300;
  int most_loaded = -1, least_loaded = -1;
  // Positive exclusive time of the members that entered, and the thread with the most of it.
  double excl_sum = 0, excl_most = 0;
  uint32_t excl_who = format::kNoIndex;
  double fork_join = 0;            // s, fork + join of the parallel region's members, summed
  std::array<double, 3> misses{};  // inclusive cache misses per level, summed
};

// Accumulators as bytes, to travel between processes (fold.hpp).
using Writer = drg::ByteWriter;
using Reader = drg::ByteReader;

// Pass 1's accumulators (fold.hpp): the statistics of every merged node.
struct StatsFold {
  std::vector<MemberStats> stats;
  Sums sums;  // of sum_t, excl_sum and fork_join
  void record(AdditionLog* log) { sums.log = log; }
  void combine(const StatsFold& later);
  void replay(const Addend& a);
  void write(Writer& out) const;
  void read(Reader& in);
};

// Pass 2's accumulators (fold.hpp): every PE's time in every node, split by the rules.
struct PeSplit {
  std::vector<Buckets> own;        // classified PE-time of the node itself (not its subtree)
  std::vector<double> own_useful;  // useful PE-time of the node itself
  // Over the PEs with useful time in the node: the least and the most of it, and how many.
  std::vector<double> useful_min, useful_max;
  std::vector<uint32_t> useful_pes;
  // Call-path sampling (docs/sampling.md): over the PEs with useful time in the node, the least
  // on-CPU time sampled there and its sum (s), and whether the run has samples at all: the evidence
  // that each PE did the work (replicated code), not only spent the time (CPUs shared).
  std::vector<double> cpu_min, cpu_sum;
  bool sampled = false;
  // With a reference: over the PEs with useful time in the node, Σ min(u_i, the reference's
  // useful time of the node) (the copies of replicated code).
  std::vector<double> capped_useful;
  // Useful seconds per thread (for the POP metrics): their sum in thread order, and the most.
  double useful_pe_sum = 0, useful_pe_max = 0;
  Sums sums;  // of own_useful, capped_useful and useful_pe_sum

  PeSplit() = default;
  PeSplit(size_t nodes, bool capped);
  void record(AdditionLog* log);
  void combine(const PeSplit& later);
  void replay(const Addend& a);
  void write(Writer& out) const;
  void read(Reader& in);
};

// How one merged node's PE-time is split (the per-PE decisions of measure()), fixed before the
// pass over the PEs from the statistics of the whole run.
struct NodePlan {
  const drg::Region* region = nullptr;
  // MPI collectives and barriers: a rank's own cost of the calls is at most the fastest rank's
  // time (and, when ranks are late in turn, what the calls cost when nobody is late); the rest
  // is waiting.
  bool collective = false;
  double fastest = 0;  // s
  // A blocking MPI call with partners (mpi_cost.hpp): what its calls cost when nobody is late
  // bounds its waiting.
  bool partner_call = false;
  bool barrier = false;  // MPI_Barrier: waits as a collective does, moves nothing
  // MPI_Wait/Test and their -all/-any/-some forms (`completion`): at a site every rank calls
  // (`request_wait`), the bytes were counted where the requests were posted, so the rank that
  // waited least there bounds what the completions cost (`fastest`), as for collectives.
  bool completion = false, request_wait = false;
  double shortest_call = -1;  // s, the site's shortest call on any PE; -1 when unknown
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
  const Rule *wait = nullptr, *fork_join = nullptr, *partial_wait = nullptr, *serial_wait = nullptr,
             *exclusive = nullptr, *idle_root = nullptr, *root_late = nullptr,
             *root_not_in_team = nullptr, *root_startup = nullptr;
  // PEs that ran the region for less than its wall time, and PEs that did not run it.
  const Rule *shorter = nullptr, *not_ran_one = nullptr, *not_ran_some = nullptr;
};

// Everything the analysis needs from one run, per merged node: pass 1's statistics, pass 2's
// split (PeSplit) and what is derived from them.
struct RunFacts : PeSplit {
  ModelCheck model;          // the calibrated message model, checked against the run's calls
  double sample_period = 0;  // s of CPU time per sample (meta.json sampling), 0 when unknown
  std::vector<MemberStats> stats;
  std::vector<NodePlan> plan;
  std::vector<double> time_max;  // s
  std::vector<double> visits, iterations;
  std::vector<double> flushes;  // visits of the flush regions directly below the node
  std::vector<uint32_t> keys;   // call-path key of every node
  // Per thread that is not its rank's initial one: how its time at the program root, outside
  // every region, divides (root_parts).
  struct RootIdle {
    double not_in_team = 0;  // s, the initial thread's outermost parallel regions it did not run
    double late = 0;         // s, those it ran, less its own time in them
    double serial = 0;   // s, the initial thread's time outside parallel regions, once it existed
    double startup = 0;  // s, the part of that time the initial thread was in MPI start-up calls
  };
  // Exclusive cache misses per level (L1, L2, L3) per node, when the run has the counters.
  std::array<bool, 3> has_misses{};
  std::vector<std::array<double, 3>> misses;
};

// The passes over the PEs run on a few workers. Each pass gives every worker a range of merged
// nodes (or of a batch's threads, for per-thread results) and the worker visits the threads in
// order, so every sum still adds the same numbers in the same order as one serial walk: the
// results do not depend on the number of workers.
class Workers {
 public:
  Workers(const MergedTree& t, unsigned requested) {
    // Merged nodes split by the number of threads that hold them.
    std::vector<size_t> holders(t.nodes().size() + 1, 0);
    for (size_t n = 0; n < t.nodes().size(); ++n)
      holders[n + 1] = holders[n] + t.holders(uint32_t(n));
    unsigned k =
        requested ? requested : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    // Below this many thread nodes, starting threads costs more than it saves; so it does for
    // each batch of a tree read by file (a rank file's threads), many times per pass.
    if (!requested && (holders.back() < (size_t(1) << 16) || t.by_file())) k = 1;
    count_ = std::max(1u, k);
    node_bounds_ = split(holders);
  }

  unsigned count() const { return count_; }
  std::pair<uint32_t, uint32_t> nodes(unsigned w) const {
    return {node_bounds_[w], node_bounds_[w + 1]};
  }
  // Worker w's share of a batch's threads (by their number of nodes), as indices in the batch.
  std::pair<uint32_t, uint32_t> threads(const drg::ThreadBatch& b, unsigned w) const {
    std::vector<size_t> prefix(b.count + 1, 0);
    for (uint32_t i = 0; i < b.count; ++i) prefix[i + 1] = prefix[i] + b.threads[i].size();
    std::vector<uint32_t> bounds = split(prefix);
    return {bounds[w], bounds[w + 1]};
  }

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
  std::vector<uint32_t> node_bounds_;
};

// The times of every node of each thread of a batch (measure.cpp, thread_times): computed by
// each pass over the batch, never kept for the whole run.
struct BatchTimes {
  std::vector<size_t> first;  // offset of each thread's nodes; the last entry is the total
  // Per thread node: its exclusive time (after the classifying pass: its useful or classified
  // rest), and its time including what it contains.
  std::vector<double> rest, incl;
  BatchTimes(const drg::Experiment& e, const drg::ThreadBatch& b, const Workers& workers);
};

// A rank's time in MPI start-up calls (MPI_Init, MPI_Init_thread; MPI_Finalize) on its initial
// thread, outside parallel regions: its other threads cannot work meanwhile.
struct MpiStartupTimes {
  double init = 0, finalize = 0;  // s
};
// Per rank of the batch (measure.cpp); ranks without such calls are not listed.
std::map<int, MpiStartupTimes> mpi_startup_times(const drg::Experiment& e, const Columns& c,
                                                 const drg::ThreadBatch& b, const BatchTimes& bt);

// The part of a thread's member order (member_order) that falls in merged nodes [lo, hi).
inline std::pair<const uint32_t*, const uint32_t*> in_range(const std::vector<uint32_t>& order,
                                                            const std::vector<uint32_t>& merged,
                                                            std::pair<uint32_t, uint32_t> range) {
  auto below = [&](uint32_t tn, uint32_t n) { return merged[tn] < n; };
  const uint32_t* b =
      std::lower_bound(order.data(), order.data() + order.size(), range.first, below);
  const uint32_t* e = std::lower_bound(b, order.data() + order.size(), range.second, below);
  return {b, e};
}

// When the OpenMP runtime started and each thread was created (meta.json "openmp" and
// "affinity"), to split the time a thread did not exist yet into serial code, a smaller team,
// and the runtime starting (docs/overhead-model.md, "How the buckets are measured", 3).
class ThreadStarts {
 public:
  explicit ThreadStarts(const drg::Experiment& e) {
    const drg::Meta m = drg::read_meta(e.meta);
    runtime_init_ = std::max(0.0, m.openmp.runtime_init_s.value_or(1e300));
    runtime_ready_ = m.openmp.runtime_ready_s.value_or(-1);
    init_by_fork_ = m.openmp.init_by_fork;
    for (const drg::ProcessAffinity& p : m.affinity) {
      // A run without ranks: its threads are those of the experiment's one process.
      int rank = p.rank >= 0 || e.threads.empty() ? p.rank : e.threads[0].rank;
      for (const drg::ThreadAffinity& t : p.threads) {
        double c = t.created_s.value_or(-1);
        if (c <= 0 || !t.index) continue;
        created_[{rank, *t.index}] = c;
        first_created_ = std::min(first_created_, c);
      }
    }
  }

  // The parts of `idle` seconds in which thread (rank, thread) did not exist yet: serial code
  // (before any team), a smaller team than p, and the runtime starting (initializing, creating
  // the thread).
  std::array<double, 3> split(int rank, uint32_t thread, double idle) const {
    auto it = created_.find({rank, thread});
    if (it == created_.end()) {  // when it was created is not known
      double serial = std::min(idle, runtime_init_);
      return {serial, 0.0, idle - serial};
    }
    double c = it->second;
    double start = std::max(0.0, idle - c);  // from its team's fork to the thread's start
    double before = idle - start;            // [0, before): before its team's fork
    // The runtime's own initialization [lo, hi): all of it up to the fork when the first parallel
    // region started the runtime, else up to the runtime being ready.
    double lo = runtime_init_, hi = lo;
    if (init_by_fork_ && c <= first_created_) hi = c;
    else if (runtime_ready_ > runtime_init_ && runtime_ready_ <= c) hi = runtime_ready_;
    auto overlap = [](double a0, double a1, double b0, double b1) {
      return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
    };
    double first = std::min(before, first_created_);
    double init_serial = overlap(0, first, lo, hi), init_later = overlap(first, before, lo, hi);
    // Before the first team existed: serial code; after it, a smaller team than this one's.
    return {first - init_serial, before - first - init_later, start + init_serial + init_later};
  }

 private:
  double runtime_init_ = 1e300, runtime_ready_ = -1, first_created_ = 1e300;
  bool init_by_fork_ = false;
  std::map<std::pair<int, uint32_t>, double> created_;
};

// Every region's classified PE-time: its own buckets summed over its subtree, plus the idle time
// of the PEs with respect to it and the PEs that never held it. With `visit_cost`, also the
// longest time of any PE once the tool's cost below it is taken away, and the visits below.
// Pass 3 folds the idle time into `total` (fold.hpp).
struct Totals {
  std::vector<Buckets> total;
  std::vector<double> compensated, events_below;
  void record(AdditionLog* log);
  void combine(const Totals& later);
  void replay(const Addend& a);
  void write(Writer& out) const;
  void read(Reader& in);
};

// measure.cpp: the run's facts per merged node, its PEs' time split by the rules. `keys`: the
// call-path key of every merged node; `caps` (with a reference): the reference's useful time of
// every merged node, which RunFacts::capped_useful is capped by.
// `pe_own` (not null, sized threads x nodes): each PE's own time per node as the rules split it
// (Analysis::pe_own).
RunFacts measure(const MergedTree& t, const Workers& workers, std::vector<uint32_t> keys,
                 const std::vector<double>* caps, Share* share,
                 std::vector<PeOwn>* pe_own = nullptr);
// idle.cpp: subtree sums, idle PEs and absent PEs per region; the tool's cost per visit kind.
Totals totals(const MergedTree& t, RunFacts& f, const Workers& workers, double p,
              const std::vector<double>* visit_cost, Share* share);
std::vector<double> visit_costs(const drg::Experiment& e, const MachineModel& machine);
int count_pes(const drg::Experiment& e);
// evidence.cpp: the reference's evidence moves work out of the run's useful time.
void apply_evidence(const MergedTree& run, RunFacts& f, const RunFacts& rf,
                    const std::vector<uint32_t>& ref_index, const MachineModel* machine,
                    bool& misses_priced);

}  // namespace scalea::overheads::detail
