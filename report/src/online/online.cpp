#include "online.hpp"

#include <algorithm>
#include <cmath>

#include "scalea/drg/meta.hpp"
#include "output/text.hpp"

namespace scalea::cli::online {

std::vector<Point> complete_points(const drg::SnapshotDir& s) {
  std::vector<Point> out;
  if (s.ranks.empty()) return out;
  for (const auto& [tick, files] : s.ticks) {
    if (files.size() < s.ranks.size()) continue;  // a rank has not published this tick (yet)
    out.push_back(Point{tick, false, files});
  }
  if (s.finals.size() == s.ranks.size()) out.push_back(Point{0, true, s.finals});
  return out;
}

const drg::SnapshotPart& Parts::get(const std::string& path) { return edit(path); }

drg::SnapshotPart& Parts::edit(const std::string& path) {
  auto it = cache_.find(path);
  if (it != cache_.end()) return *it->second;
  auto part = std::make_unique<drg::SnapshotPart>(drg::read_snapshot(path));
  return *cache_.emplace(path, std::move(part)).first->second;
}

const Parts::Times& Parts::times(const std::string& path) {
  auto it = times_.find(path);
  if (it != times_.end()) return it->second;
  const drg::SnapshotPart& p = get(path);
  Times t{p.wall_s(), p.time_s(), drg::read_meta(p.meta).snapshot_interval_s};
  return times_.emplace(path, t).first->second;
}

void Parts::keep_only(const std::set<std::string>& keep) {
  for (auto it = cache_.begin(); it != cache_.end();)
    it = keep.count(it->first) ? std::next(it) : cache_.erase(it);
}

double job_start(Parts& parts, const Point& point) {
  double start = 1e300;
  for (const auto& [rank, path] : point.files) {
    const Parts::Times& t = parts.times(path);
    start = std::min(start, t.wall_s - t.time_s);
  }
  return start;
}

double point_time(Parts& parts, const Point& point, double start) {
  // When the ranks' snapshots were taken (a moment after the tick, or the end), the last one.
  double t = 0;
  for (const auto& [rank, path] : point.files) t = std::max(t, parts.times(path).wall_s - start);
  return t;
}

bool aligned(Parts& parts, const Point& point) {
  if (point.final || point.files.size() < 2) return true;
  double lo = 1e300, hi = -1e300, interval = 0;
  for (const auto& [rank, path] : point.files) {
    const Parts::Times& t = parts.times(path);
    lo = std::min(lo, t.wall_s);
    hi = std::max(hi, t.wall_s);
    interval = std::max(interval, t.interval_s);
  }
  return hi - lo <= std::max(0.01, 0.05 * interval);
}

std::vector<const Point*> window_ends(Parts& parts, const std::vector<Point>& points, double start,
                                      double window) {
  std::vector<const Point*> ends;
  double last = 0, slack = window * 0.01;
  size_t n = points.size();
  while (n > 0 && !aligned(parts, points[n - 1])) --n;
  for (size_t i = 0; i < n; ++i) {
    bool end = i + 1 == n;
    if (!end && !aligned(parts, points[i])) continue;
    double t = point_time(parts, points[i], start);
    if (!end && t - last < window - slack) continue;
    if (end && !ends.empty() && t - last < window / 2) ends.pop_back();
    ends.push_back(&points[i]);
    last = t;
  }
  return ends;
}

void settle(Parts& parts, const std::vector<const Point*>& ends) {
  for (size_t i = ends.size(); i-- > 1;)
    for (const auto& [rank, path] : ends[i - 1]->files) {
      auto later = ends[i]->files.find(rank);
      if (later != ends[i]->files.end())
        drg::settle_to_later(parts.edit(path), parts.get(later->second));
    }
}

std::unique_ptr<Window> window(Parts& parts, const Point* earlier, const Point& later, double start,
                               const Classifier& c) {
  auto w = std::make_unique<Window>();
  w->t0 = earlier ? point_time(parts, *earlier, start) : 0;
  w->t1 = point_time(parts, later, start);
  std::vector<drg::SnapshotPart> diffs;
  for (const auto& [rank, path] : later.files) {
    const drg::SnapshotPart& l = parts.get(path);
    auto e = earlier ? earlier->files.find(rank) : later.files.end();
    if (earlier && e != earlier->files.end())
      diffs.push_back(drg::subtract(l, parts.get(e->second)));
    else diffs.push_back(l);
    w->entered += diffs.back().entered;
  }
  w->ranks = int(diffs.size());
  std::string name = later.files.begin()->second;
  w->e = drg::load_snapshot(diffs, name);
  w->t.emplace(w->e);
  overheads::Options o;
  o.p = c.p;
  o.keys = c.keys;
  o.paths = false;
  const drg::MergedTree* ref = nullptr;
  if (c.reference) {
    w->scaled_ref = scale_reference(*c.reference, *w->t, *c.keys);
    w->scaled_ref_t.emplace(*w->scaled_ref);
    ref = &*w->scaled_ref_t;
  }
  w->a = overheads::classify(*w->t, ref, o);
  return w;
}

drg::Experiment scale_reference(const drg::MergedTree& reference, const drg::MergedTree& window,
                                overheads::CallPathKeys& keys) {
  const drg::Experiment& re = reference.experiment();
  std::vector<uint32_t> wk = keys.intern(window), rk = keys.intern(reference);
  int wv = window.experiment().metric(format::CoreMetric::Visits),
      rv = re.metric(format::CoreMetric::Visits), rt = re.metric(format::CoreMetric::TimeSum);
  std::map<uint32_t, double> visits;  // window visits per call path
  for (uint32_t n = 0; n < window.nodes().size(); ++n) visits[wk[n]] += window.sum(n, wv);
  // Children before parents: the reverse of the preorder.
  std::vector<uint32_t> order = reference.preorder();
  std::vector<double> factor(reference.nodes().size(), 0.0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t n = *it;
    const drg::MergedNode& node = reference.node(n);
    if (node.children.empty()) {
      double ref_visits = reference.sum(n, rv);
      auto v = visits.find(rk[n]);
      factor[n] = ref_visits > 0 && v != visits.end() ? v->second / ref_visits : 0.0;
      continue;
    }
    double weighted = 0, total = 0;
    for (uint32_t ch : node.children) {
      double t = reference.sum(ch, rt);
      weighted += t * factor[ch];
      total += t;
    }
    factor[n] = total > 0 ? weighted / total : 0.0;
  }
  drg::Experiment scaled = re;
  scaled.path = re.path + " (scaled to the window)";
  size_t m = re.metric_count();
  for (uint32_t ti = 0; ti < scaled.threads.size(); ++ti) {
    drg::ThreadTree& th = scaled.threads[ti];
    const std::vector<uint32_t>& merged = reference.merged_of(ti);
    for (uint32_t node = 0; node < th.size(); ++node) {
      double f = factor[merged[node]];
      for (size_t k = 0; k < m; ++k)
        if (re.metric_merge[k] == format::MetricMerge::Sum) th.values[node * m + k] *= f;
    }
  }
  return scaled;
}

std::vector<PeLoad> pe_loads(const drg::Experiment& e) {
  int visits = e.metric(format::CoreMetric::Visits), time = e.metric(format::CoreMetric::TimeSum),
      wait = e.metric(format::CoreMetric::Wait);
  std::vector<PeLoad> out;
  for (const drg::ThreadTree& t : e.threads) {
    PeLoad pe;
    pe.rank = t.rank;
    pe.thread = t.thread;
    if (t.size() == 0) continue;
    pe.time = ns_to_s(e.value(t, 0, time));
    // Time in the outermost regions the thread entered (a worker's path to them, the master's
    // regions it is nested in, was not entered by the worker).
    double waited = 0, children = 0;
    std::vector<char> inside(t.size(), 0), in_mpi(t.size(), 0);
    for (uint32_t n = 1; n < t.size(); ++n) {
      uint32_t up = t.parent[n];
      // Time in an MPI call is not busy, all of it (as mpiP's MPI time): its wait is known only
      // when the call returns, its time up to every snapshot (docs/online.md).
      bool mpi = e.regions[t.region[n]].kind == format::RegionKind::Mpi;
      in_mpi[n] = in_mpi[up] || mpi;
      if (mpi && !in_mpi[up]) waited += e.value(t, n, time);
      else if (!in_mpi[n]) waited += e.value(t, n, wait);
      bool entered = e.value(t, n, visits) > 0;
      inside[n] = up != 0 && (inside[up] || e.value(t, up, visits) > 0);
      if (entered && !inside[n]) children += e.value(t, n, time);
    }
    // A worker outside its teams is idle; the initial thread there runs the serial code.
    double idle =
        (t.flags & format::kThreadInitial) ? 0 : std::max(0.0, e.value(t, 0, time) - children);
    pe.busy = std::max(0.0, pe.time - ns_to_s(waited + idle));
    out.push_back(pe);
  }
  return out;
}

std::vector<PeLoad> rank_loads(const std::vector<PeLoad>& pes) {
  std::map<int32_t, PeLoad> ranks;
  for (const PeLoad& pe : pes) {
    PeLoad& r = ranks[pe.rank];
    r.rank = pe.rank;
    r.time += pe.time;
    r.busy += pe.busy;
  }
  std::vector<PeLoad> out;
  for (const auto& [rank, load] : ranks) out.push_back(load);
  return out;
}

double imbalance(const std::vector<double>& busy) {
  double sum = 0, top = 0;
  for (double b : busy) sum += b, top = std::max(top, b);
  if (busy.empty() || sum <= 0) return 0;
  return top / (sum / double(busy.size()));
}

std::vector<uint32_t> top_regions(const overheads::Analysis& a, size_t n) {
  std::vector<uint32_t> rows;
  for (uint32_t i = 1; i < a.regions.size(); ++i)
    if (a.regions[i].in_run && a.regions[i].t_o > 0) rows.push_back(i);
  std::stable_sort(rows.begin(), rows.end(),
                   [&](uint32_t x, uint32_t y) { return a.regions[x].t_o > a.regions[y].t_o; });
  if (rows.size() > n) rows.resize(n);
  return rows;
}

}  // namespace scalea::cli::online
