// The merged DRG (calling-context tree over threads, ranks and runs). See graph.hpp, docs/drg.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "scalea/drg/graph.hpp"
#include "scalea/drg/region_key.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

CctGraph thread_graph(const ThreadTree& t) {
  CctGraph g(t.size());
  for (uint32_t n = 0; n < t.size(); ++n) {
    g[n].region = t.region[n];
    if (n > 0) {
      g[n].depth = g[t.parent[n]].depth + 1;
      boost::add_edge(t.parent[n], n, g);
    }
  }
  return g;
}

namespace {

bool core_metric(const std::string& name, fmt::MetricMerge* merge) {
  const fmt::MetricSpec* m = fmt::core_metric(name);
  if (m && merge) *merge = m->merge;
  return m != nullptr;
}

// Metrics whose stored value covers the subregions (the metric table's scope, format.hpp): the
// wall time, the tasks run while the region was open, and counters (deltas taken at region entry
// and exit). Every other core metric is the node's own.
bool inclusive_metric(const std::string& name) {
  return fmt::metric_scope(name) == fmt::MetricScope::Inclusive;
}

bool end_part(const Region& r) {
  return (r.kind == RegionKind::BarrierImplicit &&
          (r.subkind == uint16_t(fmt::BarrierFlavour::Parallel) ||
           r.subkind == uint16_t(fmt::BarrierFlavour::Teams))) ||
         r.kind == RegionKind::Reduction;
}

struct Acc {
  double v;
  bool any;
};

}  // namespace

Drg::Drg(const Experiment& e, const Scope& scope) { build({&e}, scope); }
Drg::Drg(const std::vector<const Experiment*>& runs, const Scope& scope) { build(runs, scope); }

uint32_t Drg::add_region(const Region& r) {
  auto [it, fresh] = region_index_.emplace(region_key(r), uint32_t(regions_.size()));
  if (fresh) {
    regions_.push_back(r);
    region_vertices_.emplace_back();
  }
  return it->second;
}

void Drg::build(const std::vector<const Experiment*>& runs, const Scope& scope) {
  unify_metrics(runs);
  std::vector<std::vector<uint32_t>> regmap(runs.size());
  size_t total_nodes = add_runs(runs, scope, regmap);
  index_sources(fold_streams(regmap, total_nodes));
  values_ = merged_values(std::nullopt);
  covered_values();
  if (runs_.size() > 1) {
    const size_t per_run = size() * metrics_.size();
    run_values_.resize(runs_.size() * per_run);
    for (uint32_t r = 0; r < runs_.size(); ++r) {
      std::vector<double> v = merged_values(r);
      std::copy(v.begin(), v.end(), run_values_.begin() + std::ptrdiff_t(r * per_run));
    }
  }
  child_index_ = FlatMap64();  // only the merge needs it
}

// Metrics: union by name, the first run's order first.
void Drg::unify_metrics(const std::vector<const Experiment*>& runs) {
  std::unordered_map<std::string, int> metric_index;
  for (const Experiment* e : runs)
    for (size_t c = 0; c < e->metrics.size(); ++c) {
      const std::string& name = e->metrics[c];
      if (metric_index.count(name)) continue;
      MetricInfo mi;
      mi.name = name;
      if (c < e->metric_merge.size()) mi.merge = e->metric_merge[c];
      else if (!core_metric(name, &mi.merge)) mi.merge = fmt::MetricMerge::Sum;
      mi.inclusive = inclusive_metric(name);
      metric_index.emplace(name, int(metrics_.size()));
      metrics_.push_back(std::move(mi));
    }
  visits_ = metric("visits");
  time_ = metric("time");
  fork_ = metric("fork");
  join_ = metric("join");
  team_ = metric("team_size");
}

// Runs, their regions unified by identity (regmap: run's region -> unified region), and the
// streams in scope; returns the streams' node count.
size_t Drg::add_runs(const std::vector<const Experiment*>& runs, const Scope& scope,
                     std::vector<std::vector<uint32_t>>& regmap) {
  const size_t nm = metrics_.size();
  size_t total_nodes = 0;
  for (uint32_t r = 0; r < runs.size(); ++r) {
    const Experiment& e = *runs[r];
    RunInfo ri;
    ri.experiment = &e;
    ri.label = e.path;
    ri.ranks = e.ranks();
    int team = e.meta.is_object() && e.meta.contains("max_team_size") &&
                       e.meta["max_team_size"].is_number_integer()
                   ? e.meta["max_team_size"].get<int>()
                   : 1;
    ri.p = std::max(team, 1) * ri.ranks;
    ri.metric_column.assign(nm, -1);
    for (size_t m = 0; m < nm; ++m) ri.metric_column[m] = e.metric(metrics_[m].name);
    runs_.push_back(std::move(ri));
    regmap[r].reserve(e.regions.size());
    // Sampled code addresses are not regions of the graph (no node refers to them).
    for (const Region& reg : e.regions)
      regmap[r].push_back(reg.kind == RegionKind::Sampled ? format::kNoIndex : add_region(reg));
    if (scope.run && *scope.run != r) continue;
    for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
      const ThreadTree& t = e.threads[ti];
      if (scope.rank && *scope.rank != t.rank) continue;
      if (scope.thread && *scope.thread != t.thread) continue;
      if (t.size() == 0) continue;
      streams_.push_back(Stream{r, t.rank, t.thread, ti, &t});
      total_nodes += t.size();
    }
  }
  return total_nodes;
}

// Folds every stream into the tree: old -> new by (merged parent, unified region). Every stream's
// root folds into vertex 0 (different program names across runs still share a root). Returns the
// number of sources per vertex.
std::vector<uint32_t> Drg::fold_streams(const std::vector<std::vector<uint32_t>>& regmap,
                                        size_t total_nodes) {
  stream_begin_.reserve(streams_.size() + 1);
  old_to_new_.resize(total_nodes);
  std::vector<uint32_t> count;
  auto new_vertex = [&](uint32_t region, uint32_t parent) {
    uint32_t v = uint32_t(boost::add_vertex(
        CctVertex{region, parent == fmt::kNoIndex ? 0 : g_[parent].depth + 1}, g_));
    parent_.push_back(parent);
    if (parent != fmt::kNoIndex) boost::add_edge(parent, v, g_);
    region_vertices_[region].push_back(v);
    count.push_back(0);
    return v;
  };
  if (!streams_.empty())
    new_vertex(regmap[streams_[0].run][streams_[0].data->region[0]], fmt::kNoIndex);
  size_t off = 0;
  for (const Stream& s : streams_) {
    stream_begin_.push_back(off);
    const ThreadTree& t = *s.data;
    const std::vector<uint32_t>& rm = regmap[s.run];
    uint32_t* map = old_to_new_.data() + off;
    map[0] = 0;
    ++count[0];
    for (uint32_t n = 1; n < t.size(); ++n) {
      uint32_t mp = map[t.parent[n]];
      uint32_t region = rm[t.region[n]];
      uint64_t key = uint64_t(mp) << 32 | region;
      const uint32_t* found = child_index_.find(key);
      uint32_t v;
      if (!found) {
        v = new_vertex(region, mp);
        child_index_.emplace(key, v);
      } else {
        v = *found;
      }
      map[n] = v;
      ++count[v];
    }
    off += t.size();
  }
  stream_begin_.push_back(off);
  return count;
}

// Sources, CSR by vertex; filling in stream order keeps each vertex's sources in stream order.
void Drg::index_sources(const std::vector<uint32_t>& count) {
  const size_t nv = size();
  src_begin_.assign(nv + 1, 0);
  for (size_t v = 0; v < nv; ++v) src_begin_[v + 1] = src_begin_[v] + count[v];
  src_.resize(stream_begin_.back());
  std::vector<size_t> fill(src_begin_.begin(), src_begin_.end() - 1);
  for (uint32_t si = 0; si < streams_.size(); ++si) {
    const uint32_t* map = old_to_new_.data() + stream_begin_[si];
    uint32_t n_nodes = uint32_t(stream_begin_[si + 1] - stream_begin_[si]);
    for (uint32_t n = 0; n < n_nodes; ++n) src_[fill[map[n]]++] = Source{si, n};
  }
}

// Merged values by rule (of every run, or of one), accumulated stream by stream (sequential reads
// of each thread); 0 where no source had the metric.
std::vector<double> Drg::merged_values(std::optional<uint32_t> only_run) const {
  const size_t nv = size(), nm = metrics_.size();
  std::vector<Acc> acc(nv * nm, Acc{0.0, false});
  for (uint32_t si = 0; si < streams_.size(); ++si) {
    const Stream& s = streams_[si];
    if (only_run && s.run != *only_run) continue;
    const RunInfo& ri = runs_[s.run];
    const ThreadTree& t = *s.data;
    const size_t rnm = ri.experiment->metrics.size();
    const uint32_t* map = old_to_new_.data() + stream_begin_[si];
    const int vcol = visits_ >= 0 ? ri.metric_column[size_t(visits_)] : -1;
    for (uint32_t n = 0; n < t.size(); ++n) {
      const double* row = t.values.data() + size_t(n) * rnm;
      Acc* out = acc.data() + size_t(map[n]) * nm;
      bool visited = vcol < 0 || row[vcol] > 0;
      for (size_t m = 0; m < nm; ++m) {
        int c = ri.metric_column[m];
        if (c < 0) continue;
        double x = row[c];
        Acc& a = out[m];
        switch (metrics_[m].merge) {
          case fmt::MetricMerge::Sum:
            a.v += x;
            a.any = true;
            break;
          case fmt::MetricMerge::Min:
            if (!visited) break;
            if (!a.any || x < a.v) a.v = x;
            a.any = true;
            break;
          case fmt::MetricMerge::Max:
            if (!a.any || x > a.v) a.v = x;
            a.any = true;
            break;
        }
      }
    }
  }
  std::vector<double> out(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) out[i] = acc[i].any ? acc[i].v : 0.0;
  return out;
}

// The inclusive values of the inclusive sum metrics (time, counters), thread by thread, as the
// classifier measures a thread's time (overheads/src/measure.cpp, thread_times), summed into
// incl_. A node the thread entered has its value less its children's as its own; a node it only
// holds (visits 0: the master's context above a parallel region a worker ran in, a task's creation
// context on the thread that ran the task) covers its children's and has nothing of its own. A
// task node is a child of its creation context: its value is not inside its parent's on that
// thread (it may have run in a later barrier), so it is not subtracted from it; the time of the
// tasks a thread ran while a node was open (task_exec) is, for time. Inclusive = own + the
// children's inclusive, so exclusive = inclusive - the children's is the thread's own part.
void Drg::covered_values() {
  const size_t nm = metrics_.size();
  incl_slot_.assign(nm, -1);
  std::vector<size_t> slot_metric;
  for (size_t m = 0; m < nm; ++m)
    if (metrics_[m].inclusive && metrics_[m].merge == fmt::MetricMerge::Sum) {
      incl_slot_[m] = int(slot_metric.size());
      slot_metric.push_back(m);
    }
  const size_t ns = incl_slots_ = slot_metric.size();
  incl_.assign(size() * ns, 0.0);
  if (ns == 0) return;
  const int task_exec = metric(fmt::CoreMetric::TaskExec);
  // Per node of the thread: its non-task children's covered values and the inclusive values of
  // all its children ([node][slot]), and the task time of its non-task children.
  std::vector<double> covered, below, child_tasks;
  for (uint32_t si = 0; si < streams_.size(); ++si) {
    const Stream& s = streams_[si];
    const RunInfo& ri = runs_[s.run];
    const ThreadTree& t = *s.data;
    const size_t rnm = ri.experiment->metrics.size();
    const uint32_t* map = old_to_new_.data() + stream_begin_[si];
    const int vcol = visits_ >= 0 ? ri.metric_column[size_t(visits_)] : -1;
    const int tcol = task_exec >= 0 ? ri.metric_column[size_t(task_exec)] : -1;
    covered.assign(t.size() * ns, 0.0);
    below.assign(t.size() * ns, 0.0);
    child_tasks.assign(t.size(), 0.0);
    // Nodes are numbered parents first: a reverse sweep sees the children before their parent.
    for (uint32_t n = uint32_t(t.size()); n-- > 0;) {
      const double* row = t.values.data() + size_t(n) * rnm;
      const bool visited = vcol < 0 || row[vcol] > 0;
      const bool task = ri.experiment->regions[t.region[n]].kind == RegionKind::Task;
      const double tasks =
          visited && tcol >= 0 ? std::max(row[tcol], child_tasks[n]) : child_tasks[n];
      const uint32_t p = n > 0 ? t.parent[n] : fmt::kNoIndex;
      for (size_t k = 0; k < ns; ++k) {
        const int c = ri.metric_column[slot_metric[k]];
        const double x = c < 0 ? 0.0 : row[c];
        const double kids = covered[size_t(n) * ns + k];
        const double ran_tasks = int(slot_metric[k]) == time_ ? tasks - child_tasks[n] : 0.0;
        const double own = visited ? x - kids - ran_tasks : 0.0;
        const double incl = own + below[size_t(n) * ns + k];
        incl_[size_t(map[n]) * ns + k] += incl;
        if (p == fmt::kNoIndex) continue;
        if (!task) covered[size_t(p) * ns + k] += visited ? x : kids;
        below[size_t(p) * ns + k] += incl;
      }
      if (p != fmt::kNoIndex && !task) child_tasks[p] += tasks;
    }
  }
}

bool Drg::entered(const Source& s) const {
  if (visits_ < 0 || runs_[streams_[s.stream].run].metric_column[size_t(visits_)] < 0) return true;
  return source_value(s, visits_) > 0;
}

size_t Drg::ran(uint32_t v) const {
  auto [b, e] = sources(v);
  size_t n = 0;
  for (const Source* s = b; s != e; ++s) n += entered(*s) ? 1 : 0;
  return n;
}

int Drg::metric(const std::string& name) const {
  for (size_t i = 0; i < metrics_.size(); ++i)
    if (metrics_[i].name == name) return int(i);
  return -1;
}

std::vector<uint32_t> Drg::children(uint32_t v) const {
  std::vector<uint32_t> out;
  for (auto [b, e] = boost::adjacent_vertices(v, g_); b != e; ++b) out.push_back(uint32_t(*b));
  return out;
}

double Drg::value(uint32_t v, int metric) const {
  if (metric < 0 || size_t(metric) >= metrics_.size()) return 0.0;
  return values_[size_t(v) * metrics_.size() + size_t(metric)];
}

double Drg::value(uint32_t v, int metric, uint32_t run) const {
  if (metric < 0 || size_t(metric) >= metrics_.size() || run >= runs_.size()) return 0.0;
  if (runs_.size() == 1) return value(v, metric);
  return run_values_[(size_t(run) * size() + v) * metrics_.size() + size_t(metric)];
}

double Drg::source_value(const Source& s, int metric) const {
  if (metric < 0 || size_t(metric) >= metrics_.size()) return 0.0;
  const Stream& st = streams_[s.stream];
  const RunInfo& ri = runs_[st.run];
  int c = ri.metric_column[size_t(metric)];
  if (c < 0) return 0.0;
  return st.data->values[size_t(s.node) * ri.experiment->metrics.size() + size_t(c)];
}

double Drg::combine(fmt::MetricMerge rule, const Source* b, const Source* e, int metric) const {
  bool any = false;
  double v = 0;
  for (const Source* s = b; s != e; ++s) {
    double x = source_value(*s, metric);
    if (rule == fmt::MetricMerge::Min && visits_ >= 0 && visits_ != metric &&
        runs_[streams_[s->stream].run].metric_column[size_t(visits_)] >= 0 &&
        source_value(*s, visits_) <= 0)
      continue;
    if (!any) v = x;
    else if (rule == fmt::MetricMerge::Sum) v += x;
    else if (rule == fmt::MetricMerge::Min) v = std::min(v, x);
    else v = std::max(v, x);
    any = true;
  }
  return v;
}

double Drg::sum(uint32_t v, int metric) const {
  auto [b, e] = sources(v);
  return combine(fmt::MetricMerge::Sum, b, e, metric);
}
double Drg::min(uint32_t v, int metric) const {
  auto [b, e] = sources(v);
  return combine(fmt::MetricMerge::Min, b, e, metric);
}
double Drg::max(uint32_t v, int metric) const {
  auto [b, e] = sources(v);
  return combine(fmt::MetricMerge::Max, b, e, metric);
}
double Drg::mean(uint32_t v, int metric) const {
  size_t n = ran(v);
  return n ? sum(v, metric) / double(n) : 0.0;
}

std::vector<std::pair<uint32_t, double>> Drg::per_thread(uint32_t v, int metric) const {
  std::vector<std::pair<uint32_t, double>> out;
  auto [b, e] = sources(v);
  out.reserve(size_t(e - b));
  for (const Source* s = b; s != e; ++s) out.emplace_back(s->stream, source_value(*s, metric));
  return out;
}

std::vector<RankValue> Drg::per_rank(uint32_t v, int metric) const {
  std::map<std::pair<uint32_t, int32_t>, std::vector<Source>> groups;
  auto [b, e] = sources(v);
  for (const Source* s = b; s != e; ++s) {
    const Stream& st = streams_[s->stream];
    groups[{st.run, st.rank}].push_back(*s);
  }
  fmt::MetricMerge rule = metric >= 0 && size_t(metric) < metrics_.size()
                              ? metrics_[size_t(metric)].merge
                              : fmt::MetricMerge::Sum;
  std::vector<RankValue> out;
  out.reserve(groups.size());
  for (const auto& [k, srcs] : groups)
    out.push_back(RankValue{k.first, k.second,
                            combine(rule, srcs.data(), srcs.data() + srcs.size(), metric),
                            uint32_t(srcs.size())});
  return out;
}

double Drg::inclusive(uint32_t v, int metric) const {
  // One vertex: walk its subtree (use inclusive_all for every vertex at once).
  if (metric < 0 || size_t(metric) >= metrics_.size()) return 0.0;
  const MetricInfo& mi = metrics_[size_t(metric)];
  if (const int k = incl_slot_[size_t(metric)]; k >= 0)
    return incl_[size_t(v) * incl_slots_ + size_t(k)];
  if (mi.inclusive || mi.merge != fmt::MetricMerge::Sum) return value(v, metric);
  // Sum over the subtree, iteratively (trees may be deep).
  double s = 0;
  std::vector<uint32_t> stack{v};
  while (!stack.empty()) {
    uint32_t x = stack.back();
    stack.pop_back();
    s += value(x, metric);
    for (auto [b, e] = boost::adjacent_vertices(x, g_); b != e; ++b) stack.push_back(uint32_t(*b));
  }
  return s;
}

double Drg::exclusive(uint32_t v, int metric) const {
  if (metric < 0 || size_t(metric) >= metrics_.size()) return 0.0;
  const int k = incl_slot_[size_t(metric)];
  if (k < 0) return value(v, metric);  // the node's own metric, or a min/max one
  auto incl = [&](uint32_t x) { return incl_[size_t(x) * incl_slots_ + size_t(k)]; };
  double s = incl(v);
  for (auto [b, e] = boost::adjacent_vertices(v, g_); b != e; ++b) s -= incl(uint32_t(*b));
  return s;
}

Decomposition Drg::decompose(uint32_t v, std::optional<uint32_t> stream) const {
  Decomposition d;
  // Value of a vertex over the sources taken (all, or the one of `stream`).
  auto taken = [&](uint32_t x, int metric) -> double {
    if (metric < 0) return 0.0;
    auto [b, e] = sources(x);
    if (!stream) return combine(fmt::MetricMerge::Sum, b, e, metric);
    const Source* it =
        std::lower_bound(b, e, *stream, [](const Source& s, uint32_t st) { return s.stream < st; });
    return it != e && it->stream == *stream ? source_value(*it, metric) : 0.0;
  };
  // Total: time, plus the fork of threads that joined a parallel region (not its master, which
  // counts the team size): their node opens after the fork.
  auto [b, e] = sources(v);
  for (const Source* s = b; s != e; ++s) {
    if (stream && s->stream != *stream) continue;
    double t = source_value(*s, time_), f = source_value(*s, fork_);
    bool master = team_ < 0 || source_value(*s, team_) > 0;
    d.total += t + (master ? 0.0 : f);
    d.start += f;
    d.end += source_value(*s, join_);
  }
  for (uint32_t c : children(v)) {
    double t = taken(c, time_);
    bool is_end = end_part(region_of(c));
    d.parts.push_back({c, t, is_end});
    if (is_end) d.end += t;
    else d.subregions += t;
  }
  d.remainder = d.total - d.subregions - d.start - d.end;
  return d;
}

std::string Drg::key(uint32_t v) const {
  std::vector<uint32_t> chain = path_from_root(v);
  std::string out;
  for (uint32_t x : chain) {
    if (!out.empty()) out += '/';
    out += region_key(region_of(x));
  }
  return out;
}

std::optional<uint32_t> Drg::find_key(const std::string& key) const {
  // Walk down from the root, matching one region key per level (a name may hold a '/', so match
  // each child's full key against the remaining prefix).
  uint32_t v = 0;
  std::string rk = region_key(region_of(0));
  if (key.compare(0, rk.size(), rk) != 0) return std::nullopt;
  size_t pos = rk.size();
  while (pos < key.size()) {
    if (key[pos] != '/') return std::nullopt;
    ++pos;
    bool found = false;
    for (uint32_t c : children(v)) {
      std::string ck = region_key(region_of(c));
      if (key.compare(pos, ck.size(), ck) == 0 &&
          (pos + ck.size() == key.size() || key[pos + ck.size()] == '/')) {
        v = c;
        pos += ck.size();
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  return v;
}

std::vector<uint32_t> Drg::path_from_root(uint32_t v) const {
  std::vector<uint32_t> chain;
  for (uint32_t n = v; n != fmt::kNoIndex; n = parent_[n]) chain.push_back(n);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string Drg::path(uint32_t v) const {
  std::string out;
  for (uint32_t x : path_from_root(v)) {
    const Region& r = region_of(x);
    if (!out.empty()) out += "/";
    out += r.label();
    std::string loc = r.location();
    if (!loc.empty() && r.kind != RegionKind::Program) out += "@" + loc;
  }
  return out;
}

std::vector<uint32_t> Drg::preorder() const {
  std::vector<uint32_t> out, stack;
  if (size() == 0) return out;
  out.reserve(size());
  stack.push_back(0);
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    out.push_back(n);
    std::vector<uint32_t> ch = children(n);
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

std::vector<uint32_t> Drg::regions_named(const std::string& name) const {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < regions_.size(); ++r)
    if (regions_[r].name == name || regions_[r].label() == name ||
        (!name.empty() && regions_[r].function == name && regions_[r].kind == RegionKind::Function))
      out.push_back(r);
  return out;
}

std::vector<uint32_t> Drg::regions_of_kind(RegionKind kind) const {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < regions_.size(); ++r)
    if (regions_[r].kind == kind) out.push_back(r);
  return out;
}

std::vector<uint32_t> Drg::regions_at(const std::string& file, uint32_t line) const {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < regions_.size(); ++r) {
    const std::string& f = regions_[r].file;
    if (f.empty() || file.empty()) continue;
    bool match = f == file || (f.size() > file.size() &&
                               f.compare(f.size() - file.size(), file.size(), file) == 0 &&
                               f[f.size() - file.size() - 1] == '/');
    if (match && (line == 0 || regions_[r].line == line)) out.push_back(r);
  }
  return out;
}

const std::vector<uint32_t>& Drg::vertices_of(uint32_t region) const {
  static const std::vector<uint32_t> none;
  return region < region_vertices_.size() ? region_vertices_[region] : none;
}

std::vector<double> Drg::inclusive_all(int metric) const {
  std::vector<double> out(size(), 0.0);
  if (metric < 0 || size_t(metric) >= metrics_.size()) return out;
  if (const int k = incl_slot_[size_t(metric)]; k >= 0) {
    for (uint32_t v = 0; v < size(); ++v) out[v] = incl_[size_t(v) * incl_slots_ + size_t(k)];
    return out;
  }
  for (uint32_t v = 0; v < size(); ++v) out[v] = value(v, metric);
  const MetricInfo& mi = metrics_[size_t(metric)];
  if (mi.inclusive || mi.merge != fmt::MetricMerge::Sum) return out;
  // Vertices are numbered parents first: a reverse sweep sums subtrees.
  for (uint32_t v = uint32_t(size()); v-- > 1;) out[parent_[v]] += out[v];
  return out;
}

std::vector<uint32_t> Drg::top(int metric, size_t n, Measure m) const {
  std::vector<std::pair<double, uint32_t>> all;
  all.reserve(size());
  std::vector<double> incl;
  if (m == Measure::Inclusive) incl = inclusive_all(metric);
  for (uint32_t v = 0; v < size(); ++v) {
    double x = m == Measure::Inclusive   ? incl[v]
               : m == Measure::Exclusive ? exclusive(v, metric)
                                         : value(v, metric);
    all.emplace_back(x, v);
  }
  n = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + ptrdiff_t(n), all.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : a.second < b.second;
                    });
  std::vector<uint32_t> out;
  for (size_t i = 0; i < n; ++i) out.push_back(all[i].second);
  return out;
}

}  // namespace scalea::drg
