// Findings: the largest overheads ranked, with a plain-language hint per subclass.
#include "findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "export_formats.hpp"
#include "scalea/format.hpp"

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
    {"synchronization.barrier", "", "barrier wait",
     "threads arrive at the barrier at different times: balance the work before it, or remove the "
     "barrier (nowait) where the algorithm allows"},
    {"synchronization.load_imbalance", "", "load imbalance",
     "some threads finish the region early and idle: distribute the work more evenly (dynamic "
     "schedule, smaller chunks, tasks)"},
    {"synchronization.critical", "", "waiting to enter a critical section",
     "contention: shorten the critical section, use atomics or a reduction, or give each thread "
     "its own copy and combine at the end"},
    {"synchronization.lock", "", "waiting for a lock",
     "contention: hold the lock for less time, use finer-grained locks, atomics or per-thread data"},
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
    {"synchronization.mpi_barrier", "", "waiting in MPI_Barrier",
     "the barrier absorbs imbalance between ranks: balance the work before it or drop the barrier "
     "if it is not needed"},
    {"synchronization", "", "synchronization",
     "threads or ranks wait for each other: balance the work before the synchronization point"},
    {"control_of_parallelism.fork_join", "", "fork/join of parallel regions",
     "too many small parallel regions: merge them into one larger parallel region, or make each "
     "one do more work"},
    {"control_of_parallelism.scheduling", "", "loop scheduling",
     "chunk dispatch costs more than it should: use larger chunks or a static schedule"},
    {"control_of_parallelism.tasking", "", "task creation and scheduling",
     "tasks are too small: make them coarser (cut-off depth, grainsize)"},
    {"control_of_parallelism.mpi_management", "", "MPI management",
     "communicator or window management on the critical path: create them once, outside loops"},
    {"control_of_parallelism", "", "control of parallelism",
     "runtime bookkeeping: fewer, larger parallel constructs and tasks"},
    {"loss_of_parallelism.unparallelized", "", "unparallelized code",
     "serial code: one PE works while the others idle; parallelize it or overlap it with "
     "parallel work"},
    {"loss_of_parallelism.partially_parallelized", "", "partially parallelized code",
     "fewer threads than available do the work (single, sections, small teams): give every thread "
     "work, or use more sections/tasks"},
    {"loss_of_parallelism.replicated", "", "replicated work",
     "work repeated on every PE: compute it once and share the result, or split it"},
    {"loss_of_parallelism", "", "loss of parallelism",
     "PEs idle because the code does not use them all: parallelize more of it"},
    {"data_movement.mpi_p2p", "", "MPI point-to-point transfer",
     "message transfer time: send less or fewer, larger messages, overlap with computation"},
    {"data_movement.mpi_collective", "", "MPI collective transfer",
     "collective data volume: reduce it, or use non-blocking collectives to overlap"},
    {"data_movement.mpi_one_sided", "", "MPI one-sided transfer",
     "remote memory access: aggregate puts/gets and synchronize windows less often"},
    {"data_movement.mpi_io", "", "MPI-IO",
     "I/O time: use collective I/O, larger requests, or fewer files"},
    {"data_movement", "", "data movement",
     "memory or network traffic: improve locality, send less data"},
    {"additional_computation", "", "additional computation",
     "the parallel version does work the sequential one does not: check redundant computation "
     "and algorithmic changes made for parallelism"},
    {"unidentified", "", "unidentified overhead",
     "time no measured event explains: oversubscribed cores, OS noise, memory bandwidth or cache "
     "effects; run with counters (PAPI) to look closer"},
};

// Regions whose time is an overhead of the construct around them: the share of a finding in one
// of these is measured against the enclosing region.
bool is_leaf_construct(RegionKind k) {
  switch (k) {
    case RegionKind::BarrierImplicit:
    case RegionKind::BarrierExplicit:
    case RegionKind::BarrierImplementation:
    case RegionKind::Taskwait:
    case RegionKind::Taskgroup:
    case RegionKind::Critical:
    case RegionKind::Lock:
    case RegionKind::NestLock:
    case RegionKind::Atomic:
    case RegionKind::Ordered:
    case RegionKind::Reduction:
    case RegionKind::Flush:
    case RegionKind::Mpi:
      return true;
    default:
      return false;
  }
}

const Hint* lookup(const std::string& key, std::string_view context_kind) {
  std::string cls = key.substr(0, key.find('.'));
  for (const std::string& k : {key, cls})
    for (const Hint& h : kHints)
      if (h.key == k && (h.context_kind.empty() || h.context_kind == context_kind)) return &h;
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

}  // namespace

const std::vector<Hint>& hint_table() { return kHints; }

size_t& findings_limit() {
  static size_t n = 5;
  return n;
}

std::vector<Finding> find_findings(const MergedTree& t, const overheads::Analysis& a,
                                   size_t limit) {
  std::vector<std::map<std::string, double>> inc(t.nodes().size());
  for (uint32_t n = 0; n < t.nodes().size() && n < a.regions.size(); ++n)
    inc[n] = inclusive_parts(a.regions[n]);
  std::vector<Finding> all;
  for (uint32_t n = 0; n < t.nodes().size() && n < a.regions.size(); ++n) {
    for (const auto& [key, v] : inc[n]) {
      // The region's own share: what its children do not already hold.
      // Load imbalance is idle time relative to the region itself: never part of the parent's
      // value, so nothing to subtract; in a barrier or lock it only restates the wait.
      const drg::Region& reg = t.region_of(n);
      bool local = key == "synchronization.load_imbalance";
      if (local && is_leaf_construct(reg.kind)) continue;
      double own = v;
      if (!local)
        for (uint32_t c : t.node(n).children) {
          auto it = inc[c].find(key);
          if (it != inc[c].end()) own -= it->second;
        }
      if (own < 1e-6) continue;
      uint32_t ctx = n;
      uint32_t parent = t.node(n).parent;
      std::string_view ctx_kind = format::region_kind_name(reg.kind);
      std::string after;  // "the loop at md.c:90" for a barrier ending a worksharing construct
      if (is_leaf_construct(reg.kind) && parent != format::kNoIndex) {
        ctx = parent;
        ctx_kind = format::region_kind_name(t.region_of(parent).kind);
        const auto& sib = t.node(parent).children;
        auto me = std::find(sib.begin(), sib.end(), n);
        for (auto it = sib.begin(); it != me; ++it) {
          const drg::Region& sr = t.region_of(*it);
          bool ws = sr.kind == RegionKind::Loop || sr.kind == RegionKind::Sections ||
                    sr.kind == RegionKind::Single || sr.kind == RegionKind::Workshare ||
                    sr.kind == RegionKind::Taskloop || sr.kind == RegionKind::Distribute;
          if (ws && !reg.file.empty() && sr.file == reg.file && sr.line == reg.line) {
            ctx_kind = format::region_kind_name(sr.kind);
            after = with_location(sr);
          }
        }
      }
      const drg::Region& creg = t.region_of(ctx);
      Finding f;
      f.node = n;
      f.region = reg.label();
      f.location = reg.location();
      f.context = with_location(creg);
      size_t dot = key.find('.');
      f.cls = key.substr(0, dot);
      f.subclass = dot == std::string::npos ? "" : key.substr(dot + 1);
      f.seconds = own;
      double tp = a.regions[ctx].t_p;
      f.percent = tp > 0 ? 100 * own / tp : 0;
      const Hint* h = lookup(key, ctx_kind);
      std::string what = h ? std::string(h->what) : key;
      f.hint = h ? std::string(h->hint) : "";
      std::string where;
      if (!after.empty()) {
        // "barrier wait after the loop" + " at md.c:90"; other constructs name themselves.
        where = what.find("after the ") != std::string::npos ? " at " + f.location
                                                              : " after the " + after;
      } else if (ctx != n) {
        where = " in the " + with_location(reg);
      } else {
        where = f.location.empty() ? " in " + reg.label() : " in " + with_location(reg);
      }
      std::string share = ctx == n ? "of the region" : "of the " + with_location(creg);
      f.text = fmt::format("{}{} is {:.3f} s, {:.0f}% {}{}{}", what, where, own, f.percent, share,
                           f.hint.empty() ? "" : ": ", f.hint);
      all.push_back(std::move(f));
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Finding& x, const Finding& y) { return x.seconds > y.seconds; });
  if (all.size() > limit) all.resize(limit);
  for (Finding& f : all) f.path = region_path(t, a.regions[f.node]);
  return all;
}

nlohmann::json findings_json(const std::vector<Finding>& fs) {
  nlohmann::json out = nlohmann::json::array();
  int rank = 0;
  for (const Finding& f : fs)
    out.push_back({{"rank", ++rank}, {"node", f.node}, {"path", f.path}, {"region", f.region},
                   {"location", f.location}, {"context", f.context}, {"class", f.cls},
                   {"subclass", f.subclass}, {"seconds", f.seconds}, {"percent", f.percent},
                   {"hint", f.hint}, {"text", f.text}});
  return out;
}

void print_findings(const std::vector<Finding>& fs) {
  if (fs.empty()) {
    fmt::print("\nfindings: no overhead above 1 us\n");
    return;
  }
  fmt::print("\nfindings (largest overheads first):\n");
  int rank = 0;
  for (const Finding& f : fs) {
    fmt::print("{:>3}. [{}{}{}] {}\n", ++rank, f.cls, f.subclass.empty() ? "" : ".", f.subclass,
               f.text);
    fmt::print("     region {}\n", f.path);
  }
}

void print_report_findings(const MergedTree& t, const overheads::Analysis& a) {
  if (findings_limit() == 0) return;
  print_findings(find_findings(t, a, findings_limit()));
}

}  // namespace scalea::cli
