// Findings: the largest overheads ranked, with a plain-language hint per subclass.
#include "findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "counter_causes.hpp"
#include "directive.hpp"
#include "mpi_advice.hpp"
#include "sampled_where.hpp"
#include "analysis/analyze.hpp"
#include "analysis/meta.hpp"
#include "analysis/thread_values.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/format.hpp"
#include "wait_causes.hpp"
#include "wait_states.hpp"
#include "pattern.hpp"
#include "output/text.hpp"

namespace scalea::cli {
namespace {

using drg::MergedTree;
using format::RegionKind;
using overheads::kClassCount;
using overheads::kClassKeys;

// The hint table. Lookup: the first row whose key equals the finding's "class.subclass" (or its
// class alone) and whose context kind is "" or the kind of the region the share refers to.
// Keep docs/exports.md in step with this table.
const std::vector<Hint> kHints = {
    {"synchronization.barrier", "loop", "barrier wait after the loop",
     "iterations are imbalanced; try schedule(dynamic) or schedule(guided), or balance the work "
     "per iteration"},
    {"synchronization.barrier", "parallel", "barrier wait at the end of the parallel region",
     "threads reach the end of the region at different times: the work before it is imbalanced; "
     "balance it (dynamic schedules, tasks) or add nowait where it is safe"},
    {"synchronization.barrier", "teams", "barrier wait at the end of the teams region",
     "teams reach the end of the league at different times: their shares of the distributed "
     "iterations (or their own code) are imbalanced; balance them (dist_schedule with smaller "
     "chunks, more teams than threads)"},
    {"synchronization.barrier", "", "barrier wait",
     "threads arrive at the barrier at different times: balance the work before it, or remove the "
     "barrier (nowait) where the algorithm allows"},
    {"synchronization.load_imbalance", "task", "imbalance between the threads running tasks",
     "threads ran different amounts of task work: make tasks smaller or more numerous so the team "
     "shares them evenly"},
    {"synchronization.load_imbalance", "", "load imbalance",
     "some threads finish the region early and idle: distribute the work more evenly (dynamic "
     "schedule, smaller chunks, tasks)"},
    {"synchronization.spin_wait", "", "busy-waiting on flush (spin-wait)",
     "threads poll shared flags until another thread's work is done (a pipeline or wavefront): "
     "the wait is the pipeline's fill and drain and its imbalance; balance the stages, use larger "
     "blocks per stage, or replace the polling by a barrier or task dependences"},
    {"synchronization.critical", "", "waiting to enter a critical section",
     "contention: shorten the critical section, use atomics or a reduction, or give each thread "
     "its own copy and combine at the end"},
    {"synchronization.lock", "", "waiting for a lock",
     "contention: hold the lock for less time, use finer-grained locks, atomics or per-thread "
     "data"},
    {"synchronization.atomic", "", "waiting on atomic updates",
     "contention on one memory location: accumulate per thread and combine once (reduction)"},
    {"synchronization.ordered", "", "waiting in an ordered construct",
     "ordered serializes the loop: keep the ordered part tiny or restructure to avoid it"},
    {"synchronization.reduction", "", "waiting in a reduction",
     "threads reach the reduction at different times: balance the work before it"},
    {"synchronization.taskwait", "", "waiting for tasks",
     "the waiting thread has no other work: create tasks earlier, make them finer, or wait less "
     "often (taskgroup at a coarser level)"},
    {"synchronization.mpi_waiting", "", "MPI waiting (late senders, waiting collectives)",
     "ranks arrive at the communication at different times: balance the computation before it, or "
     "overlap it with non-blocking communication"},
    {"synchronization.mpi_barrier_cost", "", "MPI_Barrier's own cost (no rank late)",
     "each barrier costs its messages even when the ranks arrive together: call it less often; "
     "a barrier between collectives or before a blocking exchange is seldom needed"},
    {"synchronization.mpi_barrier", "", "waiting in MPI_Barrier",
     "the barrier absorbs imbalance between ranks: balance the work before it or drop the barrier "
     "if it is not needed"},
    {"synchronization", "", "synchronization",
     "threads or ranks wait for each other: balance the work before the synchronization point"},
    {"control_of_parallelism.fork_join", "", "fork/join of parallel regions",
     "starting and ending teams costs time per region: merge small parallel regions into one "
     "larger region, or make each one do more work"},
    {"control_of_parallelism.scheduling", "parallel",
     "runtime cost of entering and leaving many small constructs",
     "the region's own code only reaches a great many tiny worksharing constructs: parallelize an "
     "outer loop instead (one construct with more work each), or fuse the small loops"},
    {"control_of_parallelism.scheduling", "", "loop scheduling",
     "chunk dispatch costs more than it should: use larger chunks or a static schedule"},
    {"control_of_parallelism.tasking", "", "task creation and scheduling",
     "tasks are too small: make them coarser (cut-off depth, grainsize)"},
    {"control_of_parallelism.startup", "mpi", "MPI start-up and shut-down",
     "a fixed cost of the MPI library (launching the ranks, MPI_Init, MPI_Finalize), not of the "
     "program's code: it weighs less in longer runs; nothing in the code to change",
     false},
    {"control_of_parallelism.startup", "", "start-up of the parallel runtime",
     "a fixed cost of starting the OpenMP runtime and its threads, or the MPI ranks at different "
     "times, not of the program's code: it weighs less in longer runs; nothing in the code to "
     "change",
     false},
    {"control_of_parallelism.mpi_management", "", "MPI management",
     "communicator, group or window management inside the program: create them once, outside "
     "loops"},
    {"control_of_parallelism", "", "control of parallelism",
     "runtime bookkeeping: fewer, larger parallel constructs and tasks"},
    {"loss_of_parallelism.unparallelized", "io", "serial file I/O",
     "one PE reads or writes while the others idle: let every thread or rank read or write its "
     "own part at once, or overlap the I/O with computation (a thread of its own, asynchronous "
     "I/O)"},
    {"loss_of_parallelism.unparallelized", "", "unparallelized code",
     "serial code: one PE works while the others idle; parallelize it or overlap it with "
     "parallel work"},
    {"loss_of_parallelism.partially_parallelized", "single",
     "team idle while one thread runs the body",
     "the rest of the team idles while one thread runs the body: split the body's work among the "
     "threads (worksharing, tasks), or add nowait and give the others other work"},
    {"loss_of_parallelism.partially_parallelized", "masked",
     "team idle while one thread runs the body",
     "the rest of the team idles while the primary thread runs the body: split the work, or let "
     "the others work meanwhile"},
    {"loss_of_parallelism.partially_parallelized", "sections", "threads without a section to run",
     "some threads have no section to run: add sections, or use a worksharing loop or tasks"},
    {"loss_of_parallelism.partially_parallelized", "", "partially parallelized code",
     "fewer threads than available do the work (single, masked, sections, small teams): give "
     "every thread work"},
    {"loss_of_parallelism.replicated", "parallel",
     "replicated work in the parallel region's own code",
     "every thread runs this code in full (outside the worksharing constructs): divide it among "
     "the threads (omp for), or run it once (single) and share the result"},
    {"loss_of_parallelism.replicated", "", "replicated work",
     "every PE runs this code in full: divide it among them, or compute it once and share the "
     "result"},
    {"loss_of_parallelism", "", "loss of parallelism",
     "PEs idle because the code does not use them all: parallelize more of it"},
    {"data_movement.mpi_p2p", "", "MPI point-to-point transfer",
     "message transfer time: send less or fewer, larger messages, overlap with computation"},
    {"data_movement.mpi_collective", "", "MPI collective transfer",
     "collective data volume: reduce it, or use non-blocking collectives to overlap"},
    {"data_movement.mpi_one_sided", "", "MPI one-sided transfer",
     "remote memory access: aggregate puts/gets and synchronize windows less often"},
    {"data_movement.io", "", "file I/O",
     "time in open, read, write and fsync calls: write fewer, larger blocks and less often (a "
     "checkpoint every N steps), let every thread or rank write its own part at once (or use "
     "MPI-IO), or overlap the I/O with computation"},
    {"data_movement.mpi_io", "", "MPI-IO",
     "I/O time: use collective I/O, larger requests, or fewer files"},
    {"data_movement", "", "data movement",
     "memory or network traffic: improve locality, send less data"},
    {"additional_computation", "", "additional computation",
     "the parallel version does work the sequential one does not: check redundant computation "
     "and algorithmic changes made for parallelism"},
    {"unidentified", "", "unidentified overhead",
     "time no measured event explains: the work itself ran slower than in the reference (memory "
     "bandwidth, page faults on new memory, threads sharing a core, OS noise)"},
};

// Regions whose time is an overhead of the construct around them: the share of a finding in one
// of these is measured against the enclosing region.
bool is_leaf_construct(RegionKind k) {
  return format::region_kind_has(k, format::kWaits) || format::region_kind_has(k, format::kSpins) ||
         k == RegionKind::Io;
}

// Synchronization where PEs wait for the others to arrive: the idle time of the regions before
// it shows up there as waits.
bool is_synchronization(const drg::Region& r) {
  if (r.kind == RegionKind::Mpi)
    return r.subkind == uint16_t(format::MpiClass::Collective) ||
           r.subkind == uint16_t(format::MpiClass::Sync) ||
           r.subkind == uint16_t(format::MpiClass::Wait) ||
           r.subkind == uint16_t(format::MpiClass::P2P);
  return format::region_kind_has(r.kind, format::kGathers);
}

// Keys whose value in a region is the idle time of the PEs with respect to that region: the same
// time appears as waits in the synchronization after it.
bool is_idle_key(const std::string& key) {
  return key == "synchronization.load_imbalance" ||
         key == "loss_of_parallelism.partially_parallelized" ||
         key == "loss_of_parallelism.unparallelized";
}

// Keys of waiting: what a synchronization's waits are classified as.
bool is_wait_key(const std::string& key) {
  return key.rfind("synchronization.", 0) == 0 || key.rfind("loss_of_parallelism.", 0) == 0;
}

// The hint of `key` for a region of kind `own` in a construct of kind `context`: a row for the
// region's own kind first, then for the context's, then any.
const Hint* lookup(const std::string& key, std::string_view own, std::string_view context) {
  std::string cls = key.substr(0, key.find('.'));
  for (const std::string& k : {key, cls}) {
    for (std::string_view kind : {own, context})
      for (const Hint& h : kHints)
        if (h.key == k && h.context_kind == kind) return &h;
    for (const Hint& h : kHints)
      if (h.key == k && h.context_kind.empty()) return &h;
  }
  return nullptr;
}

std::string with_location(const drg::Region& r) {
  std::string loc = r.location();
  return loc.empty() ? r.label() : r.label() + " at " + loc;
}

// Per node and overhead key ("class.subclass", or "class" for the part of a class no subclass
// holds): the region's inclusive value in seconds.
std::map<std::string, double> inclusive_parts(const overheads::RegionOverheads& r) {
  std::map<std::string, double> out;
  std::array<double, kClassCount> in_sub{};
  for (const auto& [k, v] : r.subclasses) {
    out[k] = v;
    std::string cls = k.substr(0, k.find('.'));
    for (int c = 0; c < kClassCount; ++c)
      if (kClassKeys[size_t(c)] == cls) in_sub[size_t(c)] += v;
  }
  for (int c = 0; c < kClassCount; ++c) {
    double rest = r.classes[size_t(c)] - in_sub[size_t(c)];
    if (rest > 1e-9) out[std::string(kClassKeys[size_t(c)])] = rest;
  }
  return out;
}

// A candidate finding: an overhead key's own share in a region.
struct Candidate {
  uint32_t node;
  std::string key;
  double seconds;
};

// A CPU-time counter that read 0 in a region that took at least a millisecond did not count
// there (seen on the initial thread of some short runs): its figures say nothing.
bool cpu_time_missing(const MergedTree& t, uint32_t node, int metric) {
  int time = t.experiment().metric(format::CoreMetric::TimeSum);
  return time >= 0 && t.sum(node, metric) <= 0 && t.sum(node, time) >= 1e6;
}

// One counter's count in a region, exclusive of its children, in the run and in the reference.
struct CounterDelta {
  std::string name;  // without "papi:"
  double run = 0, before = 0;
};

// The counters whose exclusive count in the region at least doubled over the reference's (and
// grew by 100 or more); none without a reference.
std::vector<CounterDelta> counter_deltas(const MergedTree& t, const overheads::RegionOverheads& r,
                                         const MergedTree* ref) {
  const drg::Experiment& e = t.experiment();
  std::vector<CounterDelta> out;
  for (size_t m = 0; m < e.metrics.size(); ++m) {
    const std::string& name = e.metrics[m];
    if (name.rfind("papi:", 0) != 0) continue;
    double run = t.sum(r.node, int(m));
    double before = 0;
    bool known = false;
    if (ref && r.ref_node != format::kNoIndex) {
      int rm = ref->experiment().metric(name);
      if (rm >= 0) before = ref->sum(r.ref_node, rm), known = true;
    }
    // Exclusive to the region: its children's counts belong to them.
    for (uint32_t c : t.node(r.node).children) run -= t.sum(c, int(m));
    if (known && ref)
      for (uint32_t c : ref->node(r.ref_node).children)
        before -= ref->sum(c, ref->experiment().metric(name));
    if (!known || run < 2 * before + 100) continue;
    if (is_cpu_time_counter(name) &&
        (cpu_time_missing(t, r.node, int(m)) ||
         cpu_time_missing(*ref, r.ref_node, ref->experiment().metric(name))))
      continue;
    out.push_back({name.substr(5), run, std::max(0.0, before)});
  }
  return out;
}

// The counters that grew, as "perf::PAGE-FAULTS 126,250 (reference 0)"; "" when none did.
std::string counter_evidence(const std::vector<CounterDelta>& deltas) {
  std::string out;
  for (const CounterDelta& d : deltas)
    out += fmt::format("{}{} {} (reference {})", out.empty() ? "" : ", ", d.name,
                       counter_value(d.name, d.run), counter_value(d.name, d.before));
  return out;
}

// The growth over the reference of the first counter of the deltas that `is`, or 0 (page faults;
// CPU time in ns).
double extra(const std::vector<CounterDelta>& deltas, bool (*is)(const std::string&)) {
  for (const CounterDelta& d : deltas)
    if (is(d.name)) return d.run - d.before;
  return 0;
}
bool page_faults(const std::string& name) { return is_page_fault_counter(name); }

// PE-seconds the tool spent reading counters in merged node n and below: two reads per visit of
// a region of a counted kind (meta.json counters.regions), at the cost measured when it started
// (counters.cost_per_read_ns); 0 without counters.
double counter_read_cost(const MergedTree& t, uint32_t n) {
  const drg::Experiment& e = t.experiment();
  const drg::CounterMeta c = drg::read_meta(e.meta).counters;
  if (c.measured.empty()) return 0;
  const int visits = e.metric(format::CoreMetric::Visits);
  if (visits < 0) return 0;
  double counted = 0;
  std::vector<uint32_t> todo{n};
  while (!todo.empty()) {
    uint32_t m = todo.back();
    todo.pop_back();
    if (c.read_in(t.region_of(m).kind)) counted += t.sum(m, visits);
    for (uint32_t ch : t.node(m).children) todo.push_back(ch);
  }
  return counted * 2 * c.cost_per_read_ns * 1e-9;
}

bool has_counters(const drg::Experiment& e) {
  for (const std::string& m : e.metrics)
    if (m.rfind("papi:", 0) == 0) return true;
  return false;
}

// The CPUs of a Linux cpulist ("0-3,8"), as numbers; empty when it does not parse.
std::set<int> parse_cpulist(const std::string& list) {
  std::set<int> out;
  size_t i = 0;
  while (i < list.size()) {
    size_t end = list.find(',', i);
    if (end == std::string::npos) end = list.size();
    std::string part = list.substr(i, end - i);
    size_t dash = part.find('-');
    try {
      int lo = std::stoi(part.substr(0, dash));
      int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int c = lo; c <= hi && c - lo < 65536; ++c) out.insert(c);
    } catch (const std::exception&) {
      return {};
    }
    i = end + 1;
  }
  return out;
}

}  // namespace

std::string light_mode_note(const drg::Meta& m) {
  if (!m.openmp.light) return {};
  return "light mode (SCALEA_OPENMP=light): loops, single, sections, masked, locks, critical, "
         "atomic, ordered, flush and reductions were not recorded; their time is in the enclosing "
         "parallel region, its imbalance shows at the barriers, and waiting in a lock or critical "
         "section counts as work (additional computation with a reference): run without --light "
         "to see them";
}

std::vector<std::string> cpu_sharing(const drg::Experiment& e) {
  return cpu_sharing_evidence(e).notes;
}

CpuSharing cpu_sharing_evidence(const drg::Experiment& e) {
  CpuSharing evidence;
  // One entry per process: its host, online CPUs and threads' CPU sets.
  struct Process {
    int rank;
    std::string host;
    int online;
    std::vector<std::set<int>> threads;
  };
  std::vector<Process> procs;
  for (const drg::ProcessAffinity& p : drg::read_meta(e.meta).affinity) {
    Process pr{p.rank, p.host, p.cpus_online, {}};
    for (const drg::ThreadAffinity& t : p.threads)
      if (t.cpus) pr.threads.push_back(parse_cpulist(*t.cpus));
    procs.push_back(std::move(pr));
  }
  std::map<std::string, std::vector<const Process*>> by_host;
  for (const Process& p : procs) by_host[p.host].push_back(&p);
  std::vector<std::string> out;
  for (const auto& [h, ps] : by_host) {
    std::set<int> cpus;
    size_t threads = 0;
    int online = 0;
    std::string narrow;  // processes whose team is bound to fewer CPUs than its threads
    for (const Process* p : ps) {
      std::set<int> mine;
      for (const auto& t : p->threads) mine.insert(t.begin(), t.end());
      cpus.insert(mine.begin(), mine.end());
      threads += p->threads.size();
      online = std::max(online, p->online);
      if (p->threads.size() > mine.size() && !mine.empty() && p->online > int(mine.size()))
        ++evidence.narrow_processes;
      if (p->threads.size() > mine.size() && !mine.empty())
        narrow += fmt::format("{}{} {} threads on {} CPU(s)", narrow.empty() ? "" : "; ",
                              p->rank >= 0 ? "rank " + std::to_string(p->rank) + ":" : "the team:",
                              p->threads.size(), mine.size());
    }
    if (cpus.empty() || threads <= cpus.size()) continue;
    if (threads - cpus.size() > evidence.threads - evidence.cpus)
      evidence.threads = threads, evidence.cpus = cpus.size();
    std::string where = h.empty() ? "" : " of host " + h;
    std::string text = fmt::format("{} threads ran on {} CPU(s){}, so threads shared CPUs", threads,
                                   cpus.size(), where);
    if (online > 0 && int(cpus.size()) < online)
      text += fmt::format(
          " although the host has {}: their affinity allowed fewer ({}); with "
          "mpirun, which binds each rank to one core by default, give it "
          "--bind-to none or --map-by slot:PE=<threads>, with OpenMP check "
          "OMP_PLACES and OMP_PROC_BIND",
          online, narrow.empty() ? "bound" : narrow);
    else text += " (more threads than the host has CPUs): run with fewer threads or ranks per host";
    text +=
        "; the time lost shows as slower work (unidentified), waits and fork/join, whatever the "
        "program does";
    out.push_back(text);
  }
  // Runnable threads that waited for a CPU (other processes, or more threads than CPUs): the
  // scheduler's own account, whatever the affinity said.
  const CpuWait w = cpu_wait(e);
  if (w.significant())
    out.push_back(fmt::format(
        "the threads waited {:.3f} s in all for a CPU while ready to run ({:.0f}% of their time on "
        "or waiting for one): other processes or other threads had the CPUs; that time shows as "
        "slower work (unidentified), waits and fork/join: measure on a quiet machine with at most "
        "one thread per CPU",
        w.queued, 100 * w.share()));
  evidence.waited_s = w.queued;
  evidence.ran_s = w.ran;
  evidence.notes = std::move(out);
  return evidence;
}

CpuWait cpu_wait(const drg::Experiment& e) {
  CpuWait w;
  for (const drg::ProcessAffinity& p : drg::read_meta(e.meta).affinity)
    for (const drg::ThreadAffinity& t : p.threads)
      if (t.runqueue_s && t.cpu_s) w.ran += *t.cpu_s, w.queued += *t.runqueue_s;
  return w;
}

std::string spinning_note(const MergedTree& t) {
  const drg::Experiment& e = t.experiment();
  if (cpu_sharing(e).empty()) return "";
  const nlohmann::json& env = meta_at(e.meta, "environment");
  auto setting = [&](const char* name) {
    const nlohmann::json& v = meta_at(env, name);
    std::string s = v.is_string() ? v.get<std::string>() : "";
    std::transform(s.begin(), s.end(), s.begin(), ::tolower);
    return s;
  };
  if (setting("OMP_WAIT_POLICY") == "passive" || setting("KMP_BLOCKTIME") == "0") return "";
  const int wait = e.metric(format::CoreMetric::Wait);
  if (wait < 0) return "";
  double waited = 0;
  for (uint32_t n = 0; n < t.nodes().size(); ++n) {
    RegionKind k = t.region_of(n).kind;
    if (k != RegionKind::Mpi && format::region_kind_has(k, format::kWaits))
      waited += t.sum(n, wait);
  }
  waited = ns_to_s(waited);
  if (waited < kCpuWaitMinSeconds) return "";
  // Passive waiting has its own price: every start of a team wakes the sleeping workers (LULESH's
  // 49,200 parallel regions ran from 51 % faster to 36 % slower with it: validation.md).
  const int visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum);
  double forks = 0;
  for (uint32_t n = 0; n < t.nodes().size() && visits >= 0; ++n)
    if (t.region_of(n).kind == RegionKind::Parallel && t.holders(n) > 0)
      forks += t.sum(n, visits) / double(t.holders(n));  // each thread of a team visits once
  const double run_s = time >= 0 && !t.nodes().empty() ? ns_to_s(t.max(0, time)) : 0;
  std::string price;
  if (forks >= kManyForks && run_s > 0 && forks / run_s >= kManyForksPerSecond)
    price = fmt::format(
        "; but the run starts {:.0f} parallel regions ({:.0f} per second), and with passive "
        "waiting each start wakes the sleeping threads, which may cost more than the spinning: "
        "measure both (scalea tune tries it)",
        forks, forks / run_s);
  return fmt::format(
      "threads waiting in OpenMP synchronization ({:.3f} s in all) spin on their CPU before they "
      "sleep (OMP_WAIT_POLICY=active behaviour for KMP_BLOCKTIME, 200 ms by default in libomp): "
      "on shared CPUs that spinning takes the CPU from the threads that have work; let them sleep "
      "at once with OMP_WAIT_POLICY=passive (or KMP_BLOCKTIME=0){}",
      waited, price);
}

const std::vector<Hint>& hint_table() { return kHints; }

LoopCost loop_cost(const MergedTree& t, uint32_t loop) {
  const drg::Experiment& e = t.experiment();
  LoopCost c;
  const int iterations = e.metric(format::CoreMetric::Iterations),
            visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum),
            dispatches = e.metric(format::CoreMetric::Dispatches);
  if (iterations < 0 || visits < 0 || time < 0 || loop >= t.nodes().size()) return c;
  // Every thread's visit records the loop's whole trip count (format.hpp, `iterations`).
  const double its = t.sum(loop, iterations), holders = double(t.holders(loop)),
               visits_all = t.sum(loop, visits);
  if (!(its > 0) || !(visits_all > 0) || !(holders > 0)) return c;
  c.iterations = its / visits_all;
  // The iterations of every execution: the trip count times the executions (visits / holders).
  c.seconds_per_iteration = t.sum(loop, time) * 1e-9 / (its / holders);
  c.threads = int(holders);
  if (dispatches >= 0)
    if (double taken = t.sum(loop, dispatches); taken > 0) c.chunk = its / holders / taken;
  return c;
}

double finding_floor(const overheads::Analysis& a) {
  double program = a.regions.empty() ? 0 : a.regions[0].t_p;
  return std::max(kFindingMinSeconds, kFindingMinProgramShare * program);
}

namespace {

// Candidates: each key's own share in each region (what its shown children do not already hold:
// a hidden row's overheads count in its shown ancestor's), above the floor and the noise, largest
// first.
std::vector<Candidate> candidates(const MergedTree& t, const overheads::Analysis& a,
                                  const FindingContext& context) {
  const size_t n_nodes = std::min(t.nodes().size(), a.regions.size());
  std::vector<std::map<std::string, double>> inc(n_nodes);
  for (uint32_t n = 0; n < n_nodes; ++n) inc[n] = inclusive_parts(a.regions[n]);
  const double floor = finding_floor(a);
  auto hidden = [&](uint32_t n) { return n < context.hidden.size() && context.hidden[n]; };
  // Tasks, and regions inside them (parents come first in the merged tree).
  std::vector<char> in_task(n_nodes, 0);
  int created = t.experiment().metric(format::CoreMetric::TasksCreated);
  for (uint32_t n = 0; n < n_nodes; ++n) {
    uint32_t parent = t.node(n).parent;
    in_task[n] =
        t.region_of(n).kind == RegionKind::Task || (parent != format::kNoIndex && in_task[parent]);
  }
  std::vector<Candidate> all;
  for (uint32_t n = 0; n < n_nodes; ++n) {
    if (hidden(n)) continue;
    const drg::Region& reg = t.region_of(n);
    for (const auto& [key, v] : inc[n]) {
      // Load imbalance is idle time relative to the region itself: never part of the parent's
      // value, so nothing to subtract; in a barrier or lock it only restates the wait. In a task
      // it is how unevenly the team shared that task's work, while it ran other tasks: the
      // waiting, if any, is in the taskwait or barrier where it happened; the same in a region
      // that created tasks.
      bool local = key == "synchronization.load_imbalance";
      if (local && (is_leaf_construct(reg.kind) || in_task[n] || t.sum(n, created) > 0)) continue;
      double own = v;
      if (!local)
        for (uint32_t c : t.node(n).children) {
          if (hidden(c)) continue;
          auto it = inc[c].find(key);
          if (it != inc[c].end()) own -= it->second;
        }
      double noise = n < context.noise.size() ? context.noise[n] : 0.0;
      if (own < floor || own <= noise) continue;
      all.push_back({n, key, own});
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Candidate& x, const Candidate& y) { return x.seconds > y.seconds; });
  return all;
}

// The idle time of a region (its load imbalance, the idle team of a single) and the waits of a
// synchronization after it in the same enclosing region are the same time: one finding.
// The idle time ends at the first synchronization after the region (no other one between).
// Ranks idle in a region are waited for in the MPI call after it, which may be after the
// enclosing regions (a loop's lag between ranks, in a parallel region, waited for in the
// MPI_Allreduce after that region): then the region's ancestor among the call's siblings is
// the one that must come right before the call.
class SameTime {
 public:
  explicit SameTime(const MergedTree& t) : t_(t), pos_(t.nodes().size(), 0) {
    // Position of every node among its siblings: which synchronization comes after which.
    for (const drg::MergedNode& mn : t.nodes())
      for (uint32_t k = 0; k < mn.children.size(); ++k) pos_[mn.children[k]] = k;
  }
  bool operator()(const Candidate& x, const Candidate& y) const {
    if (x.node == y.node) return false;
    for (const auto& [idle, waits] : {std::pair(&x, &y), std::pair(&y, &x)})
      if (is_idle_key(idle->key) && !is_synchronization(t_.region_of(idle->node)) &&
          is_synchronization(t_.region_of(waits->node)) && is_wait_key(waits->key) &&
          waited_in(idle->node, waits->node))
        return true;
    return false;
  }

 private:
  bool waited_in(uint32_t idle, uint32_t waits) const {
    const uint32_t parent = t_.node(waits).parent;
    uint32_t a = idle;
    while (a != format::kNoIndex && t_.node(a).parent != parent) {
      if (t_.region_of(waits).kind != RegionKind::Mpi) return false;
      a = t_.node(a).parent;
    }
    if (a == format::kNoIndex || a == waits || pos_[a] >= pos_[waits]) return false;
    const auto& sib = t_.node(parent).children;
    for (uint32_t k = pos_[a] + 1; k < pos_[waits]; ++k)
      if (is_synchronization(t_.region_of(sib[k]))) return false;
    return true;
  }
  const MergedTree& t_;
  std::vector<uint32_t> pos_;
};

// The candidates that become findings, at most `limit`, each with the other region whose overhead
// is the same time (kNoIndex when none).
std::vector<std::pair<Candidate, uint32_t>> choose(const MergedTree& t,
                                                   const std::vector<Candidate>& all,
                                                   size_t limit) {
  const SameTime same_time(t);
  // Load imbalance is idle time within its region's span: the imbalance of a region inside
  // another one's is part of the outer one's, never added to it.
  auto nested = [&](const Candidate& x, const Candidate& y) {
    if (x.key != "synchronization.load_imbalance" || y.key != x.key) return false;
    auto below = [&](uint32_t d, uint32_t a) {
      for (uint32_t n = t.node(d).parent; n != format::kNoIndex; n = t.node(n).parent)
        if (n == a) return true;
      return false;
    };
    return below(x.node, y.node) || below(y.node, x.node);
  };
  // Of an idle time and the waits it causes, the finding is the waits (where the time is spent,
  // and whose cause the evidence names), naming the idle region; whichever of the two is larger.
  auto waits_of = [&](const Candidate& c) -> const Candidate* {
    if (!is_idle_key(c.key) || is_synchronization(t.region_of(c.node))) return nullptr;
    for (const Candidate& d : all)
      if (&d != &c && same_time(c, d)) return &d;
    return nullptr;
  };
  std::vector<std::pair<Candidate, uint32_t>> chosen;
  for (const Candidate& c : all) {
    if (chosen.size() >= limit) break;
    bool dup = false;
    for (size_t i = 0; i < chosen.size() && !dup; ++i) {
      if (same_time(c, chosen[i].first)) {
        if (chosen[i].second == format::kNoIndex) chosen[i].second = c.node;
        dup = true;
      }
      // Already chosen as the waits of an idle region before it (waits_of).
      dup = dup || nested(c, chosen[i].first) ||
            (c.node == chosen[i].first.node && c.key == chosen[i].first.key);
    }
    if (dup) continue;
    if (const Candidate* w = waits_of(c)) {
      chosen.emplace_back(*w, c.node);
      continue;
    }
    chosen.emplace_back(c, format::kNoIndex);
    // The same time may also come later in the list (smaller): find it now to name it.
    for (const Candidate& d : all)
      if (&d != &c && same_time(c, d)) {
        chosen.back().second = d.node;
        break;
      }
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const auto& x, const auto& y) { return x.first.seconds > y.first.seconds; });
  return chosen;
}

// The counters that grew in an unidentified or data-movement finding's region, and for
// unidentified time what they say it was (the tool's own reads, page faults, CPU time), or which
// counters to measure, and that one run cannot tell it from noise. True when the counters named
// the cause of unidentified time.
bool add_counter_evidence(Finding& f, const MergedTree& t, const overheads::Analysis& a, uint32_t n,
                          double seconds, const FindingContext& context, bool counters) {
  std::vector<CounterDelta> deltas = counter_deltas(t, a.regions[n], context.reference);
  f.evidence = counter_evidence(deltas);
  auto own_reads = [](const MergedTree& tree, uint32_t node) {
    double s = counter_read_cost(tree, node);
    for (uint32_t ch : tree.node(node).children) s -= counter_read_cost(tree, ch);
    return s;
  };
  UnidentifiedEvidence ev;
  ev.seconds = seconds;
  ev.p = a.p;
  ev.reference = context.reference && a.regions[n].ref_node != format::kNoIndex;
  ev.extra_faults = extra(deltas, page_faults);
  ev.extra_cpu = ns_to_s(extra(deltas, is_cpu_time_counter));
  ev.extra_reads = own_reads(t, n);
  if (ev.reference) ev.extra_reads -= own_reads(*context.reference, a.regions[n].ref_node);
  if (f.cls != "unidentified") return false;
  std::string cause = unidentified_cause(ev);
  if (!cause.empty()) f.hint = cause;
  if (f.evidence.empty() && !counters)
    f.hint +=
        "; measure counters to see why (scalea run --counters "
        "perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES, or cache misses where the machine "
        "has them, docs/counters.md)";
  // Slower work in one run against one reference may be nothing but run-to-run variation.
  if (context.noise.empty())
    f.hint +=
        "; with one run this cannot be told from run-to-run variation: repeat it "
        "(scalea study --repeat 3) before acting on it";
  return !cause.empty();
}

// Where a finding's share is measured: the region itself, or the construct around a leaf
// construct (a barrier, a lock, ...), and the kind its hint is looked up with.
struct FindingPlace {
  uint32_t ctx = 0;
  std::string_view ctx_kind;
  std::string after;  // "the loop at md.c:90" for a barrier ending a worksharing construct
};

FindingPlace place_of(const MergedTree& t, uint32_t n, const std::string& key, uint32_t same) {
  const drg::Region& reg = t.region_of(n);
  FindingPlace pl{n, format::region_kind_name(reg.kind), ""};
  uint32_t parent = t.node(n).parent;
  if (is_leaf_construct(reg.kind) && parent != format::kNoIndex) {
    pl.ctx = parent;
    pl.ctx_kind = format::region_kind_name(t.region_of(parent).kind);
    // Only the implicit barrier that ends the region is "at the end of the parallel region"; an
    // explicit barrier, or an implicit one of unknown origin, is a barrier of its own.
    if (format::region_kind_has(reg.kind, format::kBarrier) &&
        format::region_kind_has(t.region_of(parent).kind, format::kTeam) &&
        !(reg.kind == RegionKind::BarrierImplicit &&
          (reg.subkind == uint16_t(format::BarrierFlavour::Parallel) ||
           reg.subkind == uint16_t(format::BarrierFlavour::Teams))))
      pl.ctx_kind = format::region_kind_name(reg.kind);
    const auto& sib = t.node(parent).children;
    auto me = std::find(sib.begin(), sib.end(), n);
    for (auto it = sib.begin(); it != me; ++it) {
      const drg::Region& sr = t.region_of(*it);
      bool ws = sr.kind == RegionKind::Loop || sr.kind == RegionKind::Sections ||
                sr.kind == RegionKind::Single || sr.kind == RegionKind::Workshare ||
                sr.kind == RegionKind::Taskloop || sr.kind == RegionKind::Distribute;
      if (ws && !reg.file.empty() && sr.file == reg.file && sr.line == reg.line) {
        pl.ctx_kind = format::region_kind_name(sr.kind);
        pl.after = with_location(sr);
      }
    }
  }
  // A partial construct's own idle team, or its barrier: the construct names the hint.
  if (key == "loss_of_parallelism.partially_parallelized" && same != format::kNoIndex &&
      (t.region_of(same).kind == RegionKind::Single ||
       t.region_of(same).kind == RegionKind::Masked ||
       t.region_of(same).kind == RegionKind::Sections))
    pl.ctx_kind = format::region_kind_name(t.region_of(same).kind);
  return pl;
}

// File I/O calls: what they moved and how fast, from the region's own statistics ("4 calls wrote
// 33.6 MB in 0.812 s: 41.3 MB/s").
std::string io_volume(const MergedTree& t, uint32_t n) {
  const drg::Experiment& e = t.experiment();
  const int visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum),
            written = e.metric(format::CoreMetric::BytesSent),
            read = e.metric(format::CoreMetric::BytesRecv);
  if (visits < 0 || time < 0 || written < 0 || read < 0) return "";
  double r = t.sum(n, read), w = t.sum(n, written), s = ns_to_s(t.sum(n, time));
  std::string moved = w > 0 && r > 0
                          ? fmt::format("read {:.1f} MB and wrote {:.1f} MB", r * 1e-6, w * 1e-6)
                      : w > 0 ? fmt::format("wrote {:.1f} MB", w * 1e-6)
                      : r > 0 ? fmt::format("read {:.1f} MB", r * 1e-6)
                              : std::string("moved no data");
  std::string rate = r + w > 0 && s > 0 ? fmt::format(": {:.1f} MB/s", (r + w) / s * 1e-6) : "";
  return fmt::format("{:.0f} call{} {} in {:.3f} s{}", t.sum(n, visits),
                     t.sum(n, visits) == 1 ? "" : "s", moved, s, rate);
}

// What the findings read from the run besides its analysis, gathered once.
// At an MPI call site every rank called: the rank that spent the least time there (the last to
// arrive: the others waited for it) and the one that spent the most.
struct RankSpread {
  int least_rank = -1, most_rank = -1;
  double least = 0, most = 0;  // s
};

struct RunEvidence {
  bool counters = false;                      // the run measured counters
  std::map<uint32_t, RankSpread> late;        // MPI waiting findings' nodes (late_ranks)
  std::optional<drg::SampleProfile> samples;  // call-path sampling's, when the run has samples
  SlowThread slow;  // for barrier findings: the thread slow in every loop, if any
  // Regions some PE had not left when the run ended (a signal, a deadlock ended by `timeout`).
  std::map<uint32_t, std::vector<OpenPe>> open;
  // The MPI group advice made so far, by call (transfer_hint): filled as the findings are made.
  mutable CallAdvice advised;
};

// Whether the rank that spent the least time at an MPI call site is the one the others waited
// for: at a collective all wait for (wait at N x N, a broadcast's root), and between two ranks.
// Not at a reduction's root, nor among more than two ranks of point-to-point calls (a rank's
// partner is not known there).
bool names_late_rank(const MergedTree& t, uint32_t n) {
  const drg::Region& r = t.region_of(n);
  if (r.kind != RegionKind::Mpi) return false;
  if (r.subkind == uint16_t(format::MpiClass::Collective)) {
    const std::string_view ws = wait_state(r).name;
    return ws == "wait at NxN" || ws == "late broadcast";
  }
  return (r.subkind == uint16_t(format::MpiClass::P2P) ||
          r.subkind == uint16_t(format::MpiClass::Wait)) &&
         t.experiment().ranks() == 2;
}

// For the MPI waiting findings at call sites every rank called, with two or more ranks: each
// rank's time there (one pass over the threads for all of them) and the least and the most.
std::map<uint32_t, RankSpread> late_ranks(const MergedTree& t, const std::vector<uint32_t>& nodes) {
  std::map<uint32_t, RankSpread> out;
  const drg::Experiment& e = t.experiment();
  const int ranks = e.ranks(), time = e.metric(format::CoreMetric::TimeSum);
  if (ranks < 2 || time < 0 || nodes.empty()) return out;
  for_each_node_threads(t, nodes, {time}, [&](const NodeThreads& nt) {
    std::map<int, double> by_rank;
    for (size_t h = 0; h < nt.count; ++h) by_rank[e.threads[nt.thread[h]].rank] += nt.value(h, 0);
    if (int(by_rank.size()) < ranks) return;  // not every rank called it
    RankSpread s;
    for (const auto& [r, ns] : by_rank) {
      if (s.least_rank < 0 || ns < s.least) s.least_rank = r, s.least = ns;
      if (s.most_rank < 0 || ns > s.most) s.most_rank = r, s.most = ns;
    }
    s.least = ns_to_s(s.least), s.most = ns_to_s(s.most);
    out[nt.node] = s;
  });
  return out;
}

// "rank 1 spent the least time here ...": who the others waited for, when the ranks' times
// differ enough to tell (the least under half of the most); "" otherwise.
std::string late_rank_hint(const RunEvidence& run, uint32_t n) {
  auto it = run.late.find(n);
  if (it == run.late.end()) return "";
  const RankSpread& s = it->second;
  if (s.least_rank == s.most_rank || s.least >= 0.5 * s.most) return "";
  return fmt::format(
      "rank {} spent the least time here ({:.3f} s, rank {} the most: {:.3f} s): the others "
      "wait for rank {}; look at what it does before this call",
      s.least_rank, s.least, s.most_rank, s.most, s.least_rank);
}

// A region some PE never left: its times end with the run, so neither balance nor waiting can
// be judged there; what to find out is why that PE did not finish.
std::string never_left_hint(const MergedTree& t, const RunEvidence& run, uint32_t n) {
  const std::vector<OpenPe>& pes = run.open.at(n);
  auto who = [](const OpenPe& pe) { return pe_label(pe.rank, pe.thread); };

  std::string list;
  for (size_t i = 0; i < pes.size() && i < 4; ++i) {
    std::string inner;
    // Where that PE was when the run ended, when it is a region inside this one.
    for (const auto& [m, others] : run.open)
      for (const OpenPe& o : others)
        if (m != n && o.innermost && o.rank == pes[i].rank && o.thread == pes[i].thread)
          inner = ", inside " + node_label(t, m);
    list += fmt::format("{}{} ({:.3g} s{})", i ? ", " : "", who(pes[i]), pes[i].open_s, inner);
  }
  if (pes.size() > 4) list += fmt::format(" and {} more", pes.size() - 4);
  // Where the other PEs were: what those here may have been waiting for.
  std::string others;
  size_t listed = 0;
  for (const auto& [m, list_m] : run.open)
    for (const OpenPe& o : list_m) {
      bool here = std::any_of(pes.begin(), pes.end(), [&](const OpenPe& p) {
        return p.rank == o.rank && p.thread == o.thread;
      });
      if (here || !o.innermost || listed++ >= 4) continue;
      others += fmt::format("{}{} inside {} ({:.3g} s)", others.empty() ? "" : ", ", who(o),
                            node_label(t, m), o.open_s);
    }
  std::string how = drg::read_meta(t.experiment().meta).finished_by;
  if (how.rfind("signal ", 0) != 0)
    // The program ended on its own while the PE was inside: exit() while it worked, or runtime
    // events the tool could not match (the header's EVENTS line counts them).
    return fmt::format(
        "{} had not left this region when the program ended ({}){}: the time here stops there "
        "and says nothing about balance (exit() called while {} worked, or runtime events the "
        "tool could not match)",
        list, how.empty() ? "?" : how, others.empty() ? "" : ", nor had " + others,
        pes.size() == 1 ? "it" : "they");
  return fmt::format(
      "{} never left this region: the run ended ({}) while {} inside{}, so the time here stops "
      "there and says nothing about balance; find out why {} not finish (a deadlock, a wait "
      "for something that never comes, a loop that does not end)",
      list, how.empty() ? "unknown how" : how, pes.size() == 1 ? "it was" : "they were",
      others.empty() ? "" : " and " + others, pes.size() == 1 ? "it does" : "they do");
}

// Overheads that are work a thread did on its CPU: sampling can say where in the region it went.
bool is_sampled_work(const std::string& key) {
  return key.rfind("loss_of_parallelism", 0) == 0 || key.rfind("unidentified", 0) == 0 ||
         key.rfind("additional_computation", 0) == 0;
}

// The schedule advice for the loop node n stands for (pattern.hpp loop_of: the loop, the barrier
// that ends it, the join of its `parallel for`), "" for anything else or when nothing is known.
std::string loop_schedule_advice(const MergedTree& t, const overheads::Analysis& a, uint32_t n,
                                 const FindingContext& context, bool tiny_only = false) {
  const uint32_t loop_node = loop_of(t, n);
  if (loop_node == format::kNoIndex) return "";
  const drg::Region* loop = &t.region_of(loop_node);
  const Directive d = directive_at(loop->file, loop->line);
  std::string where;
  if (d.found) where = fmt::format("{}:{}", loop->file.substr(loop->file.rfind('/') + 1), d.line);
  // The cost of an iteration: the reference run's when lower (the work without the contention
  // for chunks or CPUs this run may have had).
  LoopCost cost = loop_cost(t, loop_node);
  if (const uint32_t ref = a.regions[loop_node].ref_node;
      context.reference && ref != format::kNoIndex && ref < context.reference->nodes().size()) {
    const LoopCost alone = loop_cost(*context.reference, ref);
    if (alone.seconds_per_iteration > 0 && alone.seconds_per_iteration < cost.seconds_per_iteration)
      cost.seconds_per_iteration = alone.seconds_per_iteration;
  }
  const auto runtime = format::LoopSchedule(loop->subkind);
  if (tiny_only && !chunks_too_small(d, runtime, cost)) return "";
  return schedule_advice(d, runtime, where, cost);
}

// Whether a worksharing loop's barrier could go (nowait), read from the loop's directive and what
// follows the loop in its parallel region: "" when the barrier is no loop's, the loop has no
// readable directive or is already nowait. Not when the region ends after the loop (its end
// barrier would wait instead) or the loop is a combined `parallel for` (its barrier ends the
// region: nowait is not allowed there).
std::string nowait_advice(const MergedTree& t, uint32_t n) {
  const drg::Region& bar = t.region_of(n);
  const uint32_t parent = t.node(n).parent;
  if (bar.kind != RegionKind::BarrierImplicit ||
      bar.subkind == uint16_t(format::BarrierFlavour::Parallel) ||
      bar.subkind == uint16_t(format::BarrierFlavour::Teams) || parent == format::kNoIndex)
    return "";
  const auto& siblings = t.node(parent).children;
  auto at = std::find(siblings.begin(), siblings.end(), n);
  const uint32_t loop = loop_of(t, n);  // the loop this barrier ends (not a join: checked above)
  if (loop == format::kNoIndex) return "";
  const drg::Region& lr = t.region_of(loop);
  const Directive d = directive_at(lr.file, lr.line);
  if (!d.found || d.nowait) return "";
  const std::string where = fmt::format("{}:{}", lr.file.substr(lr.file.rfind('/') + 1), d.line);
  // What the threads go on to: the next construct in the region, or its end.
  uint32_t next = format::kNoIndex;
  for (auto it = at == siblings.end() ? at : at + 1; it != siblings.end(); ++it) {
    const RegionKind k = t.region_of(*it).kind;
    if (k != RegionKind::Function && k != RegionKind::Sampled && k != RegionKind::Io) {
      next = *it;
      break;
    }
  }
  if (next == format::kNoIndex ||
      (format::region_kind_has(t.region_of(next).kind, format::kBarrier) &&
       t.region_of(next).subkind == uint16_t(format::BarrierFlavour::Parallel)))
    return fmt::format(
        "nowait on the loop ({}) would not help: the parallel region ends after it, and its end "
        "barrier would wait instead",
        where);
  const drg::Region& nr = t.region_of(next);
  if (nr.kind == RegionKind::BarrierExplicit)
    // The threads would wait there instead: nowait moves the wait, it does not remove it.
    return fmt::format(
        "nowait on the loop ({}) would not help: the {} that follows holds the threads anyway",
        where, with_location(nr));
  std::string same;
  if (nr.kind == RegionKind::Loop) {
    const Directive nd = directive_at(nr.file, nr.line);
    const LoopCost a = loop_cost(t, loop), b = loop_cost(t, next);
    if (d.schedule == "static" && nd.schedule == "static" && d.chunk == nd.chunk &&
        a.iterations > 0 && a.iterations == b.iterations)
      same = fmt::format(
          "; both loops are {} over {:.0f} iterations, so each thread gets the same iterations in "
          "both (OpenMP 4.5, 2.7.1): nowait is safe when iteration i of the second reads only what "
          "iteration i of the first wrote",
          nd.chunk.empty() ? "schedule(static)" : "schedule(static, " + nd.chunk + ")",
          a.iterations);
  }
  return fmt::format(
      "if the {} that follows reads nothing other threads wrote in this loop, `nowait` on the "
      "loop's directive ({}) removes this barrier: each thread goes on at once, and the "
      "imbalance is waited for at the next barrier instead unless the work up to it evens it "
      "out (a dynamic schedule there){}",
      with_location(nr), where, same);
}

// An explicit barrier that directly follows the end of a worksharing construct without nowait
// (construct_ending_before): the construct's own barrier already holds every thread there, and
// nothing runs between the two, so this one only adds its cost; "" when the source does not say
// so for sure.
std::string redundant_barrier_advice(const MergedTree& t, uint32_t n) {
  const drg::Region& bar = t.region_of(n);
  if (bar.kind != RegionKind::BarrierExplicit) return "";
  const Directive d = construct_ending_before(bar.file, bar.line);
  if (!d.found) return "";
  const drg::Experiment& e = t.experiment();
  const int visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum);
  std::string cost;
  if (visits >= 0 && time >= 0 && t.sum(n, visits) > 0)
    cost = fmt::format(" (here {:.0f} passes, {:.1f} us each on a thread)",
                       t.sum(n, visits) / std::max<size_t>(1, t.holders(n)),
                       ns_to_s(t.sum(n, time)) / t.sum(n, visits) * 1e6);
  const std::string file = bar.file.substr(bar.file.rfind('/') + 1);
  std::string what = d.text.substr(0, d.text.find_first_of(" \t", 4));
  return fmt::format(
      "remove this barrier: it directly follows the end of `{}` at {}:{}, whose own barrier "
      "(no nowait) already holds every thread at this point, and nothing runs between the two, "
      "so this one only adds its own cost{}",
      what, file, d.line, cost);
}

// A worksharing loop entered many times per execution of its parallel region, inside serial
// loops the source shows around its directive (loops_around): each entry pays the loop's barrier
// and hand-out; the worksharing on the outermost of them pays it once. "" when the loop is
// entered fewer than kManyEntries times per execution, or no enclosing loop is found.
constexpr double kManyEntries = 8;
std::string enclosing_loops_advice(const MergedTree& t, uint32_t n) {
  const uint32_t loop = loop_of(t, n);
  if (loop == format::kNoIndex || t.region_of(loop).kind != RegionKind::Loop) return "";
  uint32_t par = t.node(loop).parent;
  while (par != format::kNoIndex && t.region_of(par).kind != RegionKind::Parallel)
    par = t.node(par).parent;
  const int visits = t.experiment().metric(format::CoreMetric::Visits);
  if (par == format::kNoIndex || visits < 0 || t.holders(loop) == 0 || t.holders(par) == 0)
    return "";
  const double entries = t.sum(loop, visits) / double(t.holders(loop)),
               runs = t.sum(par, visits) / double(t.holders(par));
  if (!(runs > 0) || entries / runs < kManyEntries) return "";
  const drg::Region& lr = t.region_of(loop);
  const Directive d = directive_at(lr.file, lr.line);
  if (!d.found) return "";
  const std::vector<EnclosingLoop> around = loops_around(lr.file, d.line);
  if (around.empty()) return "";
  const std::string file = lr.file.substr(lr.file.rfind('/') + 1);
  std::string names;
  for (auto it = around.rbegin(); it != around.rend(); ++it) {
    std::string h = it->header.size() > 60 ? it->header.substr(0, 57) + "..." : it->header;
    names += fmt::format("{}`{}` at {}:{}", names.empty() ? "" : " within ", h, file, it->line);
  }
  return fmt::format(
      "this loop is entered {:.0f} times per execution of the {} (inside the serial {}): each "
      "entry pays its barrier and the hand-out of its iterations; if the iterations of an "
      "enclosing loop are independent (scratch data they share made private), put the "
      "worksharing on the outermost one ({}:{}): one barrier where there are {:.0f}; if they "
      "depend on each other (a sweep), make this loop the outer one and the serial loops its "
      "body, where the data allow",
      entries / runs, with_location(t.region_of(par)), names, file, around.front().line,
      entries / runs);
}

// The advice for waits in a pipeline (the loop at `pipe` signals through flush): about its stages,
// never its schedule.
std::string pipeline_hint(const MergedTree& t, uint32_t pipe) {
  return fmt::format(
      "the threads form a pipeline (they signal each other through flush in the {}): each owns "
      "fixed stages, so another schedule would break it; the wait is the pipeline's fill and "
      "drain and its uneven stages: balance the stages, or give it more stages (smaller blocks) "
      "per thread so that filling and draining take a smaller part",
      with_location(t.region_of(pipe)));
}

// A wait or slower work on CPUs the threads shared: the sharing first, with its figure against
// the finding's, then the hint for when it stays (after the hint when it is under half of it). A PE
// waiting for a CPU makes the others wait for it and runs its own work later; the scheduler's
// run-queue time (per PE, as T_o is) bounds how much of the finding that can be. Without measured
// waiting, the affinity alone (more threads than CPUs) is said as a possibility.
std::string sharing_first(const MergedTree& t, const overheads::Analysis& a, double seconds,
                          const std::string& hint) {
  const drg::Experiment& e = t.experiment();
  const CpuWait w = cpu_wait(e);
  if (!w.significant()) {
    if (cpu_sharing(e).empty()) return hint;
    return hint +
           "; the threads shared CPUs in this run (see the note above): part of this may be "
           "that, so look again on free CPUs";
  }
  const double per_pe = w.queued / std::max(1, a.p);
  if (per_pe < 0.5 * seconds)
    // Less than half of it: the finding's own cause comes first, the sharing after.
    return fmt::format(
        "{}; the threads also waited {:.3f} s per PE for a CPU in this run ({:.0f}% of this "
        "finding): that part may be the sharing",
        hint, per_pe, 100 * per_pe / seconds);
  std::string part = per_pe >= seconds
                         ? "more than this finding"
                         : fmt::format("{:.0f}% of this finding", 100 * per_pe / seconds);
  return fmt::format(
      "first, the threads waited {:.3f} s for a CPU in this run ({:.0f}% of their time), "
      "{:.3f} s per PE, {}: a PE waiting for a CPU runs its work late and makes the others wait "
      "for it; measure on free CPUs (at most one thread per CPU) before changing the code; if "
      "it stays: {}",
      w.queued, 100 * w.share(), per_pe, part, hint);
}

// What the run itself says beyond the hint table: why threads waited at a barrier, the CPUs
// they shared, the tool's own counter reads, the counters' evidence.
void add_run_hints(Finding& f, const MergedTree& t, const overheads::Analysis& a,
                   const Candidate& c, const FindingContext& context, const RunEvidence& run) {
  const uint32_t n = c.node;
  const drg::Region& reg = t.region_of(n);
  if (run.open.count(n)) {
    f.hint = never_left_hint(t, run, n);
    f.same_time.clear();
    return;
  }
  const bool counters = run.counters;
  const SlowThread& slow = run.slow;
  if (c.key == "synchronization.barrier" || c.key == "synchronization.load_imbalance") {
    // The loop's own schedule, read from its directive (or as the runtime reported it), makes
    // the schedule advice fit the code: no "try dynamic" for a loop that is dynamic already. A
    // pipeline's threads own fixed stages: another schedule would break it (pattern.hpp).
    if (uint32_t pipe = pipeline_loop(t, n); pipe != format::kNoIndex)
      f.hint = pipeline_hint(t, pipe);
    else if (std::string advice = loop_schedule_advice(t, a, n, context); !advice.empty())
      f.hint = "iterations are imbalanced; " + advice;
  }
  if (c.key == "synchronization.critical")
    // A critical section around one update has a construct that needs no lock.
    if (std::string advice = critical_advice(reg.file, reg.line); !advice.empty())
      f.hint = "contention: " + advice;
  if (c.key == "synchronization.barrier" && format::region_kind_has(reg.kind, format::kBarrier)) {
    // Why the threads waited, from what they did before it: not always uneven work.
    BarrierCause cause = barrier_cause(t, n, !cpu_sharing(t.experiment()).empty(), slow);
    f.hint = barrier_hint(t, cause, f.hint);
    // Whatever made the threads arrive apart, nowait removes this barrier's part of it.
    if (std::string nowait = nowait_advice(t, n); !nowait.empty()) f.hint += "; " + nowait;
    // A barrier right after another one goes, whatever its waits.
    if (std::string redundant = redundant_barrier_advice(t, n); !redundant.empty())
      f.hint = redundant + "; " + f.hint;
    if (cause.kind != BarrierCause::Kind::Imbalance && cause.kind != BarrierCause::Kind::Unknown)
      f.same_time.clear();
  }
  if (c.key == "synchronization.barrier" || c.key == "synchronization.load_imbalance" ||
      f.cls == "control_of_parallelism")
    // A loop entered again and again inside serial loops: its barrier, paid at every entry.
    if (std::string inner = enclosing_loops_advice(t, n); !inner.empty()) f.hint += "; " + inner;
  bool counted_cause = false;  // the counters named what the unidentified time was
  if (f.cls == "unidentified" || f.cls == "data_movement")
    counted_cause = add_counter_evidence(f, t, a, n, c.seconds, context, counters);
  if ((f.cls == "unidentified" || f.cls == "control_of_parallelism") &&
      reg.kind == RegionKind::Loop)
    // A dynamic loop whose chunks cost less than taking them: the threads' contention for the
    // next chunk is time no event measures; the directive says it, and the chunk that pays.
    if (std::string advice = loop_schedule_advice(t, a, n, context, true); !advice.empty())
      f.hint = advice;
  if (run.samples && is_sampled_work(c.key)) f.sampled = sampled_where(*run.samples, t, n, false);
  if (reg.kind == RegionKind::Io)
    if (std::string volume = io_volume(t, n); !volume.empty()) f.hint = volume + "; " + f.hint;
  if (c.key == "data_movement.mpi_collective" || c.key == "data_movement.mpi_p2p")
    std::tie(f.hint, f.call_group, f.call_advice) =
        transfer_hint(t, a, n, c.key, f.hint, run.advised).tie();
  if (c.key == "synchronization.mpi_waiting")
    if (std::string late = late_rank_hint(run, n); !late.empty()) f.hint += "; " + late;
  if ((f.cls == "synchronization" && c.key != "synchronization.barrier" &&
       c.key != "synchronization.mpi_barrier_cost") ||
      (f.cls == "unidentified" && !counted_cause))
    f.hint = sharing_first(t, a, c.seconds, f.hint);
  if (c.key == "control_of_parallelism.fork_join")
    if (CpuWait w = cpu_wait(t.experiment()); w.significant())
      // Workers that wait for a CPU start the region late: the fork/join is the machine's.
      f.hint = fmt::format(
          "first, the threads waited {:.3f} s for a CPU in this run ({:.0f}% of their time): a "
          "worker waiting for a CPU starts the region late, which shows as fork/join; measure on "
          "free CPUs (at most one thread per CPU) before changing the code; if it stays: {}",
          w.queued, 100 * w.share(), f.hint);
  if (f.cls == "control_of_parallelism") {
    // The tool's counter reads sit inside the constructs' time: say how much they may be.
    double probes = counter_read_cost(t, n) / std::max(1, a.p);
    if (probes >= 0.1 * c.seconds)
      f.hint += fmt::format(
          "; up to {:.3f} s of this may be the tool's own counter reads "
          "(2 per visit of a counted region): compare a run without --counters "
          "(SCALEA_COUNTERS=none)",
          std::min(probes, c.seconds));
  }
}

// The finding's sentence: what, where, how much, of what, and the hint.
std::string finding_text(const MergedTree& t, const Finding& f, const FindingPlace& pl,
                         const std::string& what, uint32_t n) {
  const drg::Region& reg = t.region_of(n);
  std::string where;
  if (!pl.after.empty()) {
    // "barrier wait after the loop" + " at md.c:90"; other constructs name themselves.
    where = what.find("after the ") != std::string::npos ? " at " + f.location
                                                         : " after the " + pl.after;
  } else if (pl.ctx != n) {
    where = " in the " + with_location(reg);
  } else {
    where = f.location.empty() ? " in " + reg.label() : " in " + with_location(reg);
  }
  std::string share = pl.ctx == n ? "of the region" : "of the " + f.context;
  std::string also =
      f.same_time.empty() ? "" : " (the same time as the idle threads of the " + f.same_time + ")";
  if (!f.same_time.empty() && !is_synchronization(reg))
    also = " (the same time as the waits in the " + f.same_time + ")";
  return fmt::format("{}{} is {:.3f} s, {:.0f}% {}{}{}{}{}{}", what, where, f.seconds, f.percent,
                     share, also, f.sampled.empty() ? "" : "; where: " + f.sampled,
                     f.evidence.empty() ? "" : "; counters: " + f.evidence,
                     f.hint.empty() ? "" : ": ", f.hint);
}

// An MPI call's advice that names a group of calls (fuse them, overlap them) is the same on each of
// the group's findings: it is said once, on the first, and the others refer to it.
void refer_to_first_of_group(std::vector<Finding>& found) {
  for (size_t j = 1; j < found.size(); ++j) {
    Finding& f = found[j];
    if (f.call_group.empty() || f.hint.compare(0, f.call_advice.size(), f.call_advice) != 0)
      continue;
    for (size_t i = 0; i < j; ++i) {
      const Finding& first = found[i];
      if (first.call_group != f.call_group) continue;
      const std::string refer =
          fmt::format("one of the calls named at the {} at {} above: the same advice", first.region,
                      first.location);
      const std::string hint = refer + f.hint.substr(f.call_advice.size());
      const size_t at = f.text.rfind(f.hint);
      if (at != std::string::npos && at + f.hint.size() == f.text.size())
        f.text.replace(at, f.hint.size(), hint);
      f.hint = hint;
      f.call_advice = refer;
      break;
    }
  }
}

// The finding of candidate `c` (`same` names the region of the same time, or kNoIndex): its
// context, hint, evidence and sentence.
Finding make_finding(const MergedTree& t, const overheads::Analysis& a, const Candidate& c,
                     uint32_t same, const FindingContext& context, const RunEvidence& run) {
  const uint32_t n = c.node;
  const std::string& key = c.key;
  const drg::Region& reg = t.region_of(n);
  const FindingPlace pl = place_of(t, n, key, same);
  Finding f;
  f.node = n;
  f.region = reg.label();
  f.location = reg.location();
  f.context = with_location(t.region_of(pl.ctx));
  size_t dot = key.find('.');
  f.cls = key.substr(0, dot);
  f.subclass = dot == std::string::npos ? "" : key.substr(dot + 1);
  f.seconds = c.seconds;
  f.noise = n < context.noise.size() ? context.noise[n] : 0.0;
  double tp = a.regions[pl.ctx].t_p;
  f.percent = tp > 0 ? 100 * c.seconds / tp : 0;
  const Hint* h = lookup(key, format::region_kind_name(reg.kind), pl.ctx_kind);
  std::string what = h ? std::string(h->what) : key;
  f.hint = h ? std::string(h->hint) : "";
  f.actionable = !h || h->in_code;
  // MPI waiting is named by its pattern (Scalasca's wait states), which says who was late.
  if (key == "synchronization.mpi_waiting" || key == "synchronization.mpi_barrier")
    if (WaitState ws = wait_state(reg); !ws.name.empty()) {
      f.wait_state = std::string(ws.name);
      what = std::string(ws.what);
      f.hint = std::string(ws.hint);
    }
  if (same != format::kNoIndex) f.same_time = with_location(t.region_of(same));
  add_run_hints(f, t, a, c, context, run);
  f.text = finding_text(t, f, pl, what, n);
  // The source: the region's own lines, or for a region without a place (the join barrier of a
  // combined `parallel for`) those of the region whose time it is (the loop).
  const drg::Region& at = reg.file.empty() && same != format::kNoIndex ? t.region_of(same) : reg;
  if (!at.file.empty() && at.line > 0) {
    f.source = source_excerpt(at.file, at.line);
    if (!f.source.empty()) f.source_file = at.file, f.line = at.line;
  }
  f.path = region_path(t, a.regions[n]);
  return f;
}

}  // namespace

std::vector<Finding> find_findings(const MergedTree& t, const overheads::Analysis& a, size_t limit,
                                   const FindingContext& context) {
  RunEvidence run;
  run.counters = has_counters(t.experiment());
  std::vector<Finding> out;
  auto chosen = choose(t, candidates(t, a, context), limit);
  // Barrier findings judge their threads against the run's loops (one pass, only when needed).
  if (std::any_of(chosen.begin(), chosen.end(),
                  [](const auto& cs) { return cs.first.key == "synchronization.barrier"; }))
    run.slow = slowest_thread(t);
  run.open = open_nodes(t.experiment(), t);
  std::vector<uint32_t> waits;  // MPI waiting: who the others waited for (one pass for all)
  for (const auto& cs : chosen)
    if (cs.first.key == "synchronization.mpi_waiting" && names_late_rank(t, cs.first.node))
      waits.push_back(cs.first.node);
  run.late = late_ranks(t, waits);
  // Where the work of a region went, for the findings that are work (one pass over the threads,
  // only when the run sampled and a finding needs it).
  if (drg::read_meta(t.experiment().meta).sampling &&
      std::any_of(chosen.begin(), chosen.end(),
                  [](const auto& cs) { return is_sampled_work(cs.first.key); }))
    if (drg::SampleProfile s(t); s.present()) run.samples.emplace(std::move(s));
  for (const auto& [c, same] : chosen) out.push_back(make_finding(t, a, c, same, context, run));
  refer_to_first_of_group(out);
  return out;
}

}  // namespace scalea::cli
