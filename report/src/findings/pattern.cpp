// The program's pattern, phase by phase (pattern.hpp).
#include "pattern.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace scalea::cli {
namespace {

using drg::MergedTree;
using format::RegionKind;

// Visits every node below `top` (not `top` itself), at most kMaxVisited of them, until `stop`
// says so.
constexpr size_t kMaxVisited = 100000;
template <typename F>
void below(const MergedTree& t, uint32_t top, F&& stop) {
  std::vector<uint32_t> todo(t.node(top).children.begin(), t.node(top).children.end());
  for (size_t seen = 0; !todo.empty() && seen < kMaxVisited; ++seen) {
    uint32_t n = todo.back();
    todo.pop_back();
    if (stop(n)) return;
    todo.insert(todo.end(), t.node(n).children.begin(), t.node(n).children.end());
  }
}

bool has_flush_below(const MergedTree& t, uint32_t loop) {
  bool found = false;
  below(t, loop, [&](uint32_t n) { return found = t.region_of(n).kind == RegionKind::Flush; });
  return found;
}

std::string place(const MergedTree& t, uint32_t n) {
  const drg::Region& r = t.region_of(n);
  if (r.file.empty()) return r.label();
  return fmt::format("{}:{}", r.file.substr(r.file.rfind('/') + 1), r.line);
}

Phase thread_phase(const MergedTree& t, uint32_t par) {
  Phase p{par, Pattern::ThreadParallel, ""};
  uint32_t loop = format::kNoIndex, task = format::kNoIndex, pipe = format::kNoIndex;
  below(t, par, [&](uint32_t n) {
    const RegionKind k = t.region_of(n).kind;
    if (k == RegionKind::Parallel || k == RegionKind::Teams) return false;  // its own phase
    if (k == RegionKind::Loop && loop == format::kNoIndex) loop = n;
    if ((k == RegionKind::Task || k == RegionKind::Taskloop) && task == format::kNoIndex) task = n;
    if (k == RegionKind::Loop && pipe == format::kNoIndex && has_flush_below(t, n)) pipe = n;
    return false;
  });
  if (pipe != format::kNoIndex) {
    p.pattern = Pattern::Pipeline;
    p.evidence = fmt::format(
        "the threads of the loop at {} signal each other through flush (each waits for its "
        "neighbour's step): they own fixed iterations",
        place(t, pipe));
  } else if (task != format::kNoIndex) {
    p.pattern = Pattern::Tasks;
    p.evidence = fmt::format("tasks ({}) run by the team", place(t, task));
  } else if (loop != format::kNoIndex) {
    p.pattern = Pattern::ForkJoinLoops;
    p.evidence = fmt::format("worksharing loops (the first at {})", place(t, loop));
  } else {
    p.evidence = "no worksharing construct: the threads divide the work themselves";
  }
  return p;
}

// The ranks' pattern from their point-to-point calls (visits per rank).
Phase rank_phase(const MergedTree& t) {
  const drg::Experiment& e = t.experiment();
  const int visits = e.metric(format::CoreMetric::Visits);
  std::vector<double> p2p(size_t(std::max(1, e.ranks())), 0.0);
  bool collectives = false, any = false;
  std::vector<char> calls(t.nodes().size(), 0);  // the point-to-point calls, read in one pass
  for (uint32_t n = 0; n < t.nodes().size(); ++n) {
    const drg::Region& r = t.region_of(n);
    if (r.kind != RegionKind::Mpi) continue;
    if (r.subkind == uint16_t(format::MpiClass::Collective)) collectives = true;
    if (r.subkind != uint16_t(format::MpiClass::P2P) || visits < 0) continue;
    calls[n] = any = 1;
  }
  if (any) {
    std::vector<double> v = t.per_rank(calls, visits);
    for (size_t i = 0; i < v.size() && i < p2p.size(); ++i) p2p[i] += v[i];
  }
  Phase p{0, Pattern::SpmdCollective, "the ranks communicate through collectives only"};
  const double others = std::accumulate(p2p.begin() + 1, p2p.end(), 0.0);
  if (p2p[0] + others == 0) return p;
  const double most_other = p2p.size() > 1 ? *std::max_element(p2p.begin() + 1, p2p.end()) : 0;
  const bool all_talk = std::all_of(p2p.begin() + 1, p2p.end(), [](double v) { return v > 0; });
  if (p2p.size() >= 3 && all_talk && p2p[0] >= 0.8 * others && most_other <= p2p[0] / 2) {
    p.pattern = Pattern::MasterWorker;
    p.evidence = fmt::format(
        "rank 0 makes {:.0f} point-to-point calls, about as many as the {} others together "
        "({:.0f}): it hands out and collects the work",
        p2p[0], p2p.size() - 1, others);
    return p;
  }
  p.pattern = Pattern::SpmdExchange;
  p.evidence = fmt::format("every rank runs the same code and exchanges messages with others{}",
                           collectives ? " (and collectives)" : "");
  return p;
}

}  // namespace

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::ForkJoinLoops: return "fork/join loops";
    case Pattern::Tasks: return "task-parallel";
    case Pattern::Pipeline: return "pipeline";
    case Pattern::ThreadParallel: return "thread-parallel";
    case Pattern::SpmdExchange: return "SPMD with point-to-point exchanges";
    case Pattern::SpmdCollective: return "SPMD with collectives";
    case Pattern::MasterWorker: return "master/worker";
  }
  return "";
}

std::vector<Phase> program_phases(const MergedTree& t) {
  std::vector<Phase> out;
  if (t.nodes().empty()) return out;
  const uint32_t root = 0;
  if (t.experiment().ranks() > 1) out.push_back(rank_phase(t));
  // The outermost parallel regions (below functions, user regions, MPI calls), once per place;
  // not those whose work is under kPhaseMinShare of the threads' time in the run (NPB's regions
  // that only read the thread count in `master` were "thread-parallel" phases: validation.md).
  const int time = t.experiment().metric(format::CoreMetric::TimeSum);
  const double run = time >= 0 ? t.sum(root, time) : 0;
  // A region's work: its threads' time less their waits at its own barriers (a first region's
  // wait for the threads the runtime starts, a loaded machine's wait for a CPU).
  // Tasks the threads run inside a barrier are work: the barrier's own waiting is subtracted.
  const int waited = t.experiment().metric(format::CoreMetric::Wait);
  auto work = [&](uint32_t n) {
    double w = t.sum(n, time);
    for (uint32_t c : t.node(n).children)
      if (format::region_kind_has(t.region_of(c).kind, format::kWaits) && waited >= 0)
        w -= t.sum(c, waited);
    return w;
  };
  std::vector<std::string> seen;
  below(t, root, [&](uint32_t n) {
    const RegionKind k = t.region_of(n).kind;
    if (k != RegionKind::Parallel && k != RegionKind::Teams) return false;
    if (run > 0 && work(n) < kPhaseMinShare * run) return false;
    for (uint32_t a = t.node(n).parent; a != format::kNoIndex; a = t.node(a).parent)
      if (t.region_of(a).kind == RegionKind::Parallel || t.region_of(a).kind == RegionKind::Teams)
        return false;
    std::string where = place(t, n);
    if (std::find(seen.begin(), seen.end(), where) != seen.end()) return false;
    seen.push_back(where);
    out.push_back(thread_phase(t, n));
    return false;
  });
  return out;
}

uint32_t loop_of(const MergedTree& t, uint32_t node) {
  const drg::Region& r = t.region_of(node);
  if (r.kind == RegionKind::Loop) return node;
  const uint32_t parent = t.node(node).parent;
  if (!format::region_kind_has(r.kind, format::kBarrier) || parent == format::kNoIndex)
    return format::kNoIndex;
  const bool join = r.subkind == uint16_t(format::BarrierFlavour::Parallel);
  size_t loops = 0, others = 0;
  uint32_t only = format::kNoIndex;
  for (uint32_t s : t.node(parent).children) {
    if (s == node) break;
    const drg::Region& sr = t.region_of(s);
    if (sr.kind == RegionKind::Loop) {
      ++loops, only = s;
      if (!r.file.empty() && sr.file == r.file && sr.line == r.line) return s;
    } else if (sr.kind != RegionKind::Function && sr.kind != RegionKind::Sampled) {
      ++others;
    }
  }
  return join && loops == 1 && others == 0 ? only : format::kNoIndex;
}

uint32_t pipeline_loop(const MergedTree& t, uint32_t node) {
  const uint32_t loop = loop_of(t, node);
  return loop != format::kNoIndex && has_flush_below(t, loop) ? loop : format::kNoIndex;
}

}  // namespace scalea::cli
