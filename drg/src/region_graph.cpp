// The paper's region graph: one vertex per region, r1 -> r2 when r2 ran inside r1. See graph.hpp.
#include <algorithm>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/strong_components.hpp>

#include "scalea/drg/graph.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

namespace {

struct BackEdgeRecorder : boost::default_dfs_visitor {
  std::vector<RegionGraphT::edge_descriptor>* out;
  explicit BackEdgeRecorder(std::vector<RegionGraphT::edge_descriptor>* o) : out(o) {}
  void back_edge(RegionGraphT::edge_descriptor e, const RegionGraphT&) const { out->push_back(e); }
};

void fold(fmt::MetricMerge rule, double& into, double x, bool first) {
  if (first || rule == fmt::MetricMerge::Sum) {
    into = first ? x : into + x;
  } else if (rule == fmt::MetricMerge::Min) {
    into = std::min(into, x);
  } else {
    into = std::max(into, x);
  }
}

}  // namespace

RegionGraph::RegionGraph(const Drg& drg) : drg_(&drg) {
  const size_t nv = drg.size(), nm = drg.metrics().size();
  if (nv == 0) return;
  const CctGraph& cct = drg.graph();

  // Outermost instances: no ancestor runs the same region. Iterative DFS keeping, per region,
  // how often it is open on the current path.
  outermost_.assign(nv, 1);
  {
    std::vector<uint32_t> open(drg.regions().size(), 0);
    struct Frame {
      uint32_t v;
      bool exit;
    };
    std::vector<Frame> stack{{0, false}};
    while (!stack.empty()) {
      Frame f = stack.back();
      stack.pop_back();
      uint32_t r = cct[f.v].region;
      if (f.exit) {
        --open[r];
        continue;
      }
      outermost_[f.v] = open[r] == 0;
      ++open[r];
      stack.push_back({f.v, true});
      for (auto [b, e] = boost::adjacent_vertices(f.v, cct); b != e; ++b)
        stack.push_back({uint32_t(*b), false});
    }
  }

  auto vertex_for = [&](uint32_t region) {
    auto [it, fresh] = vertex_of_.emplace(region, uint32_t(boost::num_vertices(g_)));
    if (fresh) {
      RegionVertex rv;
      rv.region = region;
      rv.inclusive.assign(nm, 0.0);
      rv.exclusive.assign(nm, 0.0);
      boost::add_vertex(std::move(rv), g_);
    }
    return it->second;
  };
  // Vertices in order of first appearance in the DRG (the program region first).
  std::vector<std::vector<double>> incl(nm);
  for (size_t m = 0; m < nm; ++m) incl[m] = drg.inclusive_all(int(m));
  std::vector<char> first_incl, first_excl;
  for (uint32_t v = 0; v < nv; ++v) {
    uint32_t rv = vertex_for(cct[v].region);
    RegionVertex& x = g_[rv];
    bool first = x.contexts == 0;
    ++x.contexts;
    for (size_t m = 0; m < nm; ++m) {
      fmt::MetricMerge rule = drg.metrics()[m].merge;
      fold(rule, x.exclusive[m], drg.exclusive(v, int(m)), first);
    }
  }
  // Inclusive: outermost instances only, so recursion is not counted twice.
  std::vector<char> seen(boost::num_vertices(g_), 0);
  for (uint32_t v = 0; v < nv; ++v) {
    if (!outermost_[v]) continue;
    uint32_t rv = vertex_of_.at(cct[v].region);
    RegionVertex& x = g_[rv];
    for (size_t m = 0; m < nm; ++m)
      fold(drg.metrics()[m].merge, x.inclusive[m], incl[m][v], !seen[rv]);
    seen[rv] = 1;
  }
  // Edges: caller region -> callee region, the callee's merged values in that caller.
  std::unordered_map<uint64_t, RegionGraphT::edge_descriptor> edge_of;
  const int visits = drg.metric("visits");
  for (uint32_t v = 1; v < nv; ++v) {
    uint32_t a = vertex_of_.at(cct[drg.parent(v)].region), b = vertex_of_.at(cct[v].region);
    uint64_t key = uint64_t(a) << 32 | b;
    auto it = edge_of.find(key);
    bool first = it == edge_of.end();
    if (first) {
      RegionEdge re;
      re.values.assign(nm, 0.0);
      it = edge_of.emplace(key, boost::add_edge(a, b, std::move(re), g_).first).first;
    }
    RegionEdge& e = g_[it->second];
    ++e.contexts;
    e.visits += drg.value(v, visits);
    for (size_t m = 0; m < nm; ++m)
      fold(drg.metrics()[m].merge, e.values[m], drg.value(v, int(m)), first);
  }

  // Recursion: back edges of a DFS from the program region close the cycles; vertices in a
  // strongly connected component with more than one vertex, or with a self-loop, are recursive.
  boost::depth_first_search(g_, boost::visitor(BackEdgeRecorder(&back_edges_)).root_vertex(0));
  for (const auto& e : back_edges_) g_[e].back = true;
  std::vector<int> comp(boost::num_vertices(g_));
  int ncomp = boost::strong_components(
      g_, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g_)));
  std::vector<int> comp_size(size_t(ncomp), 0);
  for (int c : comp) ++comp_size[size_t(c)];
  for (uint32_t v = 0; v < boost::num_vertices(g_); ++v)
    if (comp_size[size_t(comp[v])] > 1 || boost::edge(v, v, g_).second) g_[v].recursive = true;
}

std::optional<uint32_t> RegionGraph::vertex(uint32_t region) const {
  auto it = vertex_of_.find(region);
  if (it == vertex_of_.end()) return std::nullopt;
  return it->second;
}

Decomposition RegionGraph::decompose(uint32_t vertex) const {
  Decomposition d;
  if (vertex >= boost::num_vertices(g_)) return d;
  std::unordered_map<uint32_t, size_t> part_of;  // child region vertex -> index in parts
  for (uint32_t v : drg_->vertices_of(g_[vertex].region)) {
    if (!outermost_[v]) continue;
    Decomposition c = drg_->decompose(v);
    d.total += c.total;
    d.subregions += c.subregions;
    d.start += c.start;
    d.end += c.end;
    d.remainder += c.remainder;
    for (const Decomposition::Part& p : c.parts) {
      uint32_t rv = vertex_of_.at(drg_->region_id(p.vertex));
      auto [it, fresh] = part_of.emplace(rv, d.parts.size());
      if (fresh) d.parts.push_back({rv, 0.0, p.end});
      d.parts[it->second].time += p.time;
    }
  }
  return d;
}

}  // namespace scalea::drg
