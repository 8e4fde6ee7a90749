// The dynamic code-region call graph (DRG) as Boost.Graph structures (docs/drg.md):
//
//  - a thread's sub-DRG as a calling-context tree (thread_graph);
//  - Drg: the merge of sub-DRGs across the threads of a rank, the ranks of a run and several runs
//    (repetitions, runs at different p) into one fresh calling-context tree. Node identity is the
//    canonical key (region identity, call path); every source node keeps an old->new map entry and
//    every merged node its list of sources, so per-thread and per-rank values stay available;
//  - RegionGraph: the paper's region graph, one vertex per region, an edge r1->r2 with visit counts
//    when r2 ran inside r1; recursion shows as cycles, found as DFS back edges;
//  - inclusive/exclusive values and the paper's decomposition of a region's time
//    T(r) = sum T(subregions) + T_start(r) + T_end(r) + T_remain(r).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "scalea/drg/experiment.hpp"
#include "scalea/drg/flat_map.hpp"

namespace scalea::drg {

// ---- calling-context trees ------------------------------------------------------------------

struct CctVertex {
  uint32_t region = 0;  // index into the owner's region table
  uint32_t depth = 0;   // root = 0
};
struct CctEdge {};
// Vertices are numbered in creation order, parents before children; edges go parent -> child.
using CctGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, CctVertex, CctEdge>;

// One thread's sub-DRG: vertex i is node i of the thread, region indices are the experiment's.
CctGraph thread_graph(const ThreadTree& t);

// ---- the merged DRG ----------------------------------------------------------------------------

// How values of one merged node combine, per metric column (docs/drg.md, "Merge rules").
struct MetricInfo {
  std::string name;
  format::MetricMerge merge = format::MetricMerge::Sum;  // from METR
  // True when the stored value already covers the region's subregions (time, hardware counters);
  // false when it is the node's own (visits, wait, bytes, ...). Decides inclusive/exclusive.
  bool inclusive = false;
};

// One thread's sub-DRG taking part in the merge.
struct Stream {
  uint32_t run = 0;     // index into Drg::runs()
  int32_t rank = -1;    // MPI rank, -1 without MPI
  uint32_t thread = 0;  // the tool's thread number in its process
  uint32_t tree = 0;    // index into the run's Experiment::threads
  const ThreadTree* data = nullptr;
};

// A node of a thread's sub-DRG that folded into a merged vertex.
struct Source {
  uint32_t stream;
  uint32_t node;
};

struct RunInfo {
  const Experiment* experiment = nullptr;
  std::string label;  // the experiment path
  int p = 1;          // processing elements: ranks x max team size
  int ranks = 1;
  std::vector<int> metric_column;  // Drg metric -> the run's column, or -1
};

// Which threads to merge: all by default. A rank and a thread select one rank of every run or
// one thread of every rank; the three levels of the paper's merge (threads -> rank -> run -> runs)
// are all the same operation on a different selection.
struct Scope {
  std::optional<uint32_t> run;
  std::optional<int32_t> rank;
  std::optional<uint32_t> thread;
};

// Per rank, the values of that rank's threads combined by the metric's merge rule.
struct RankValue {
  uint32_t run;
  int32_t rank;
  double value;
  uint32_t threads;  // how many threads of the rank ran the node
};

// The paper's decomposition of a region's time (ns, summed over the sources taken):
// total = subregions + start + end + remainder. A worker thread's node of a parallel region opens
// when its implicit task begins, after the fork: its fork is added to its total, so every thread's
// share counts from the region's begin (docs/drg.md, "Decomposition").
struct Decomposition {
  struct Part {
    uint32_t vertex;  // child vertex
    double time;
    bool end;  // counted in `end` (join barrier, reduction), not in `subregions`
  };
  double total = 0;       // inclusive time of the region
  double subregions = 0;  // instrumented subregions (children) other than the end parts
  double start = 0;       // start overhead: fork (parallel regions), 0 elsewhere
  double end = 0;         // end overhead: join + join-barrier and reduction children
  double remainder = 0;   // total - subregions - start - end: code not instrumented
  std::vector<Part> parts;
};

class Drg {
 public:
  explicit Drg(const Experiment& e, const Scope& scope = {});
  // Several runs (repetitions or runs at different p): regions are unified by identity (kind,
  // subkind, name, module, address), metrics by name; the first run's metric list comes first.
  explicit Drg(const std::vector<const Experiment*>& runs, const Scope& scope = {});

  const CctGraph& graph() const { return g_; }
  size_t size() const { return boost::num_vertices(g_); }
  static constexpr uint32_t root() { return 0; }
  uint32_t parent(uint32_t v) const { return parent_[v]; }
  std::vector<uint32_t> children(uint32_t v) const;  // in order of first appearance
  uint32_t depth(uint32_t v) const { return g_[v].depth; }

  const std::vector<Region>& regions() const { return regions_; }
  const Region& region_of(uint32_t v) const { return regions_[g_[v].region]; }
  uint32_t region_id(uint32_t v) const { return g_[v].region; }
  const std::vector<MetricInfo>& metrics() const { return metrics_; }
  int metric(const std::string& name) const;  // -1 when absent
  int metric(format::CoreMetric m) const { return metric(format::kCoreMetrics[uint32_t(m)].name); }
  const std::vector<RunInfo>& runs() const { return runs_; }
  const std::vector<Stream>& streams() const { return streams_; }

  // Merged value of a metric by its rule (sum / min / max) over every source, or one run's.
  // Min ignores sources with no completed visit (their stored minimum is 0). Absent metric: 0.
  double value(uint32_t v, int metric) const;
  double value(uint32_t v, int metric, uint32_t run) const;
  // Explicit aggregates, whatever the rule.
  double sum(uint32_t v, int metric) const;
  double min(uint32_t v, int metric) const;
  double max(uint32_t v, int metric) const;
  double mean(uint32_t v, int metric) const;  // over the sources that ran the node (visits > 0)
  // How many sources ran the node (visits > 0; every source when there is no visits column). A
  // thread may hold a node it never entered: a worker holds the call path of the master's
  // context above the parallel region it ran in (a user region, a function).
  size_t ran(uint32_t v) const;
  // The raw value of one source node.
  double source_value(const Source& s, int metric) const;

  // The sources of a merged vertex, grouped by stream in stream order.
  std::pair<const Source*, const Source*> sources(uint32_t v) const {
    return {src_.data() + src_begin_[v], src_.data() + src_begin_[v + 1]};
  }
  size_t source_count(uint32_t v) const { return src_begin_[v + 1] - src_begin_[v]; }
  // Old -> new: the merged vertex of node `node` of stream `stream`.
  uint32_t map(uint32_t stream, uint32_t node) const {
    return old_to_new_[stream_begin_[stream] + node];
  }

  // Per-thread values: (stream, value) for the streams that ran the node (others are absent).
  std::vector<std::pair<uint32_t, double>> per_thread(uint32_t v, int metric) const;
  // Per-rank values (each rank's threads combined by the metric's rule), in (run, rank) order.
  std::vector<RankValue> per_rank(uint32_t v, int metric) const;

  // Inclusive and exclusive values (merged by rule). For inclusive metrics (time, counters) they
  // are made per thread, as Cube shows them and the classifier counts them, and summed: a thread's
  // own share of a node it entered is its value less its non-task children's (and, for time, less
  // the tasks it ran while the node was open); of a node it only holds (visits 0), 0. Inclusive =
  // own + the children's inclusive; exclusive = inclusive - the children's inclusive, never below
  // 0 on a thread that measured its node whole. For the others (visits, wait, bytes, ...):
  // exclusive = the value, inclusive = sum over the subtree. Min/max metrics: value.
  double inclusive(uint32_t v, int metric) const;
  double exclusive(uint32_t v, int metric) const;
  std::vector<double> inclusive_all(int metric) const;  // inclusive() of every vertex, O(size)

  // T(r) = subregions + start + end + remainder, from the "time", "fork" and "join" columns,
  // summed over all sources (or one stream's when `stream` is given).
  Decomposition decompose(uint32_t v, std::optional<uint32_t> stream = std::nullopt) const;

  // Canonical key of a vertex: the region key (region_key.hpp) of every vertex on the path from
  // the root, joined by '/', e.g. "0:0:md/3:0:@md.c:88:main/4:2:@md.c:90:main". Equal across runs.
  std::string key(uint32_t v) const;
  // Vertex with this canonical key, if any.
  std::optional<uint32_t> find_key(const std::string& key) const;
  // Human-readable path: "t/parallel@md.c:88/loop@md.c:90".
  std::string path(uint32_t v) const;
  // Vertices from the root down to v (root first).
  std::vector<uint32_t> path_from_root(uint32_t v) const;
  // Depth-first order, children in order of first appearance.
  std::vector<uint32_t> preorder() const;

  // Queries. Regions (indices into regions()) by exact name or label, by kind, by source location
  // (file name or suffix, and line when > 0); the vertices (calling contexts) of a region.
  std::vector<uint32_t> regions_named(const std::string& name) const;
  std::vector<uint32_t> regions_of_kind(RegionKind kind) const;
  std::vector<uint32_t> regions_at(const std::string& file, uint32_t line = 0) const;
  const std::vector<uint32_t>& vertices_of(uint32_t region) const;
  // Top n vertices by a metric (merged value, or inclusive / exclusive), largest first.
  enum class Measure { Value, Inclusive, Exclusive };
  std::vector<uint32_t> top(int metric, size_t n, Measure m = Measure::Value) const;

 private:
  // The phases of the merge, in order (build calls them).
  void build(const std::vector<const Experiment*>& runs, const Scope& scope);
  void unify_metrics(const std::vector<const Experiment*>& runs);
  size_t add_runs(const std::vector<const Experiment*>& runs, const Scope& scope,
                  std::vector<std::vector<uint32_t>>& regmap);
  std::vector<uint32_t> fold_streams(const std::vector<std::vector<uint32_t>>& regmap,
                                     size_t total_nodes);
  void index_sources(const std::vector<uint32_t>& count);
  std::vector<double> merged_values(std::optional<uint32_t> only_run) const;
  void covered_values();
  bool entered(const Source& s) const;
  uint32_t add_region(const Region& r);
  double combine(format::MetricMerge rule, const Source* b, const Source* e, int metric) const;

  CctGraph g_;
  std::vector<uint32_t> parent_;
  std::vector<Region> regions_;
  std::unordered_map<std::string, uint32_t> region_index_;  // region_key() -> region
  FlatMap64 child_index_;                                   // (parent vertex, region) -> vertex
  std::vector<std::vector<uint32_t>> region_vertices_;      // region -> vertices
  std::vector<MetricInfo> metrics_;
  std::vector<RunInfo> runs_;
  std::vector<Stream> streams_;
  std::vector<size_t> stream_begin_;  // stream -> offset into old_to_new_
  std::vector<uint32_t> old_to_new_;
  std::vector<size_t> src_begin_;  // vertex -> offset into src_ (CSR), size() + 1 entries
  std::vector<Source> src_;
  std::vector<double> values_;      // vertex-major merged values, all runs
  std::vector<double> run_values_;  // [run][vertex][metric], only with more than one run
  // Inclusive values of the inclusive sum metrics, per thread as inclusive() says, summed:
  // [vertex][slot], incl_slot_[metric] the metric's slot or -1.
  std::vector<double> incl_;
  std::vector<int> incl_slot_;
  size_t incl_slots_ = 0;
  int visits_ = -1, time_ = -1, fork_ = -1, join_ = -1, team_ = -1;
};

// ---- the region graph ----------------------------------------------------------------------

struct RegionVertex {
  uint32_t region = 0;            // index into Drg::regions()
  std::vector<double> inclusive;  // per metric; recursion counted once (outermost instances)
  std::vector<double> exclusive;  // per metric
  uint32_t contexts = 0;          // calling contexts (DRG vertices) of the region
  bool recursive = false;         // on a cycle (the region runs inside itself, directly or not)
};
struct RegionEdge {
  std::vector<double> values;  // per metric: the callee's merged values in this caller
  double visits = 0;           // visits of r2 inside r1
  uint32_t contexts = 0;       // DRG edges folded into this edge
  bool back = false;           // closes a cycle (DFS back edge from the program region)
};
using RegionGraphT = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                           RegionVertex, RegionEdge>;

class RegionGraph {
 public:
  explicit RegionGraph(const Drg& drg);
  const RegionGraphT& graph() const { return g_; }
  const Drg& drg() const { return *drg_; }
  // Vertex of a region, if it ran.
  std::optional<uint32_t> vertex(uint32_t region) const;
  bool has_cycles() const { return !back_edges_.empty(); }
  const std::vector<RegionGraphT::edge_descriptor>& back_edges() const { return back_edges_; }
  // The decomposition of a region's time over all its outermost calling contexts; parts are keyed
  // by the child region vertex.
  Decomposition decompose(uint32_t vertex) const;

 private:
  const Drg* drg_;
  RegionGraphT g_;
  std::unordered_map<uint32_t, uint32_t> vertex_of_;  // region -> vertex
  std::vector<RegionGraphT::edge_descriptor> back_edges_;
  std::vector<char> outermost_;  // per DRG vertex: no ancestor has the same region
};

}  // namespace scalea::drg
