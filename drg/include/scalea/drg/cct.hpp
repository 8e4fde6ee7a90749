// The merged calling-context tree of one run: every thread's sub-DRG (of every rank) folded into
// one tree whose node identity is the call path of regions (the canonical key). Each merged node
// keeps references to the per-thread nodes it came from, so per-thread and per-rank values stay
// available for imbalance analysis without being copied.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "scalea/drg/experiment.hpp"
#include "scalea/drg/flat_map.hpp"

namespace scalea::drg {

struct MergedNode {
  uint32_t parent = format::kNoIndex;
  uint32_t region = 0;
  uint32_t depth = 0;
  std::vector<uint32_t> children;  // in order of first appearance
};

// Call paths as printed. A path has one component per level, root first; a path of at most
// kPathLevels levels below the root is printed whole. A deeper one (only runaway recursion gets
// there) is printed shortened, so that printing every node of a tree costs time and space linear
// in its nodes: the root, then "...(N levels)..." for the N levels left out, then the last
// kPathTail levels down to the node itself:
//   "prog/...(99990 levels).../f@f.c:3/.../f@f.c:3"
// Before call paths were interned (overheads::CallPathKeys), the analyses refused trees deeper
// than 2,000 levels; every path they printed is still printed the same.
constexpr uint32_t kPathLevels = 2000;
constexpr uint32_t kPathTail = 10;

// One component of a printed call path: the region's label and, except for the program, "@" and
// its source location ("loop (dynamic)@md.c:90").
std::string path_component(const Region& r);

// The printed call path of `node` in any tree: `depth` is the node's depth (the root's is 0),
// parent(i) the parent of node i, component(i) its text and `root` the root node. Walks up at most
// kPathLevels + 1 nodes; never recurses.
template <class Parent, class Component>
std::string call_path(uint32_t node, uint32_t depth, uint32_t root, Parent&& parent,
                      Component&& component, std::string_view separator = "/") {
  std::vector<uint32_t> chain;  // node first
  bool shortened = depth > kPathLevels;
  uint32_t keep = shortened ? kPathTail : depth + 1;
  chain.reserve(keep);
  for (uint32_t n = node, i = 0; i < keep; ++i, n = parent(n)) chain.push_back(n);
  std::string out;
  if (shortened) {
    out += component(root);
    out += separator;
    out += "...(" + std::to_string(depth - kPathTail) + " levels)...";
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (it != chain.rbegin() || shortened) out += separator;
    out += component(*it);
  }
  return out;
}

// A run's threads with their maps onto the merged tree, one batch at a time: the unit the
// analyses stream over, so that they never need more of a run in memory than one batch. Every
// thread of a rank is in the same batch, and batches come in the order of Experiment::threads.
struct ThreadBatch {
  uint32_t first = 0;                             // index of the batch's first thread in the run
  const ThreadTree* threads = nullptr;            // count threads
  const std::vector<uint32_t>* merged = nullptr;  // per thread: node -> merged node
  uint32_t count = 0;
  size_t index = 0;  // the batch's number among MergedTree::batches(): its rank file, read by file
};

class MergedTree {
 public:
  explicit MergedTree(const Experiment& e);
  // The merged tree of an experiment read one rank file at a time (RankFiles), in memory bounded
  // by the merged nodes and one file: one pass over the files makes the shape, each node's
  // holders and the sum, largest and smallest value of every metric over them (added in the
  // order the member lists give). No member lists and no per-thread maps are kept:
  // for_each_batch (one batch per file), per_thread and per_rank read the files again. `files`
  // must outlive the tree; experiment() is its definitions (the threads without their nodes).
  // The first files whose threads fit in `keep_bytes` stay in memory after that pass, with their
  // maps: the analysis's later passes read only the others again (at 1,024 ranks x 16 threads x
  // 500 paths, each reading of every file is a sixth of the report's time). The budget is the
  // process's, shared by every tree alive (a run and its reference, the two runs of a diff).
  // Files opened by a team (RankFiles::team()): each process reads its block and rank 0 merges
  // the blocks' trees in file order (merge_blocks), so that every process has the tree of one
  // process reading every file, node for node and bit for bit; only its block's files are kept.
  explicit MergedTree(const RankFiles& files, size_t keep_bytes = keep_budget());
  static constexpr size_t kKeepBytes = size_t(768) << 20;
  // The budget: kKeepBytes, or SCALEA_KEEP_MB MiB from the environment (read once; 0 keeps
  // nothing: every pass reads every file again, for a small memory, or to test the re-reading).
  static size_t keep_budget();
  // What a thread and its map take in memory (their arrays), and what the trees alive keep.
  static size_t bytes_held(const ThreadTree& t, size_t metrics);
  static size_t kept();
  ~MergedTree();
  MergedTree(MergedTree&& other) noexcept;
  MergedTree(const MergedTree&) = delete;
  MergedTree& operator=(const MergedTree&) = delete;

  const Experiment& experiment() const { return *e_; }
  const std::vector<MergedNode>& nodes() const { return nodes_; }
  const MergedNode& node(uint32_t i) const { return nodes_[i]; }
  const Region& region_of(uint32_t i) const { return e_->regions[nodes_[i].region]; }
  // The merged node of every node of a thread (old -> new), so analyses can stream over each
  // thread's arrays in memory order instead of walking the member lists. In memory only.
  const std::vector<uint32_t>& merged_of(uint32_t thread) const { return map_[thread]; }

  // Every thread of the run, in batches (ThreadBatch), in order.
  void for_each_batch(const std::function<void(const ThreadBatch&)>& visit) const;
  // The batches [first, last) only (first < last <= batches()): a share of the run for one of
  // the processes that analyse it together; ThreadBatch::first still counts from the run's start.
  void for_each_batch(size_t first, size_t last,
                      const std::function<void(const ThreadBatch&)>& visit) const;
  // The batches [first, last) in two steps: work(b) runs on the threads that read the files
  // ahead (several batches at once, in any order; read_ahead in drg/src) and returns the rest of
  // the batch's work (or nothing), which runs on the calling thread in file order. What a pass
  // computes from one batch alone goes in work; what depends on the batches before it (a sum of
  // seconds, added in the serial order) goes in the rest. In memory, both run here.
  // `columns`: the metric columns the work reads; the files read again decode those only (the
  // others read 0, docs/experiment-format.md), the files kept in memory have them all.
  using Rest = std::function<void()>;
  void for_each_batch_ahead(size_t first, size_t last,
                            const std::function<Rest(const ThreadBatch&)>& work,
                            const MetricSet& columns = MetricSet::all()) const;
  // How many batches for_each_batch gives: one per rank file read by file, one in memory.
  size_t batches() const { return files_ ? file_first_.size() - 1 : 1; }
  // The batches [first, last) process `rank` of `size` takes in a shared analysis: the blocks of
  // files the processes opened the experiment by (RankFiles::block_of).
  std::pair<size_t, size_t> share_block(int rank, int size) const;
  // The threads of the run (its PEs), and how many of them hold each node.
  size_t threads() const { return e_->threads.size(); }
  bool by_file() const { return files_ != nullptr; }  // read one rank file at a time
  size_t holders(uint32_t node) const { return holders_[node]; }

  double sum(uint32_t node, int metric) const;
  double max(uint32_t node, int metric) const;
  double min(uint32_t node, int metric) const;
  // Value of the metric on each thread that ran the node (others are absent, not zero).
  std::vector<std::pair<uint32_t, double>> per_thread(uint32_t node, int metric) const;
  // Value of the metric summed per rank.
  std::vector<double> per_rank(uint32_t node, int metric) const;
  // The same summed over the nodes marked in `nodes` (by merged node), in one reading of the
  // files, not one per node.
  std::vector<double> per_rank(const std::vector<char>& nodes, int metric) const;

  // "program/parallel@md.c:88/loop@md.c:90", shortened beyond kPathLevels levels (call_path).
  // Costs O(min(depth, kPathLevels)): build it only for the nodes whose path is printed. Unique:
  // every level is component(), which tells apart siblings that print alike.
  std::string path(uint32_t node) const;
  // One level of path(node): path_component() of its region, followed by "#k" when siblings of
  // the node print the same text (regions at one file:line in different functions: the instances
  // of a C++ template, "MPI_Barrier@bench.h:200#1", "...#2"), k counting them from 1 in the order
  // of their region keys (region_key.hpp), which holds across runs of one binary.
  std::string component(uint32_t node) const;
  // Depth-first order (children in order of appearance).
  std::vector<uint32_t> preorder() const;

 private:
  // Maps a thread's nodes onto the tree (`map`: node -> merged node), adding the call paths it
  // is the first to have.
  void add(const ThreadTree& t, std::vector<uint32_t>& map);
  // Adds thread t (mapped by `map`) to its nodes' holders and their sums, maxima and minima.
  void add_values(const ThreadTree& t, const std::vector<uint32_t>& map);
  // The same for a thread whose call paths are all in the tree already.
  void map_thread(const ThreadTree& t, std::vector<uint32_t>& map) const;
  // The node for call path (parent, region), made when it is new.
  uint32_t child(uint32_t parent, uint32_t region);
  // Folds files [first, last) into the tree, keeping those that fit in `keep_bytes`. `replayed`,
  // when given, records the additions to the sums of the columns that are not whole numbers
  // (merge_blocks).
  void read_files(size_t first, size_t last, size_t keep_bytes, ByteWriter* replayed);
  // The team's blocks' trees merged in file order (see the constructor); false when the sums of
  // whole numbers could not be added exactly in blocks (every process reads every file then).
  bool merge_blocks(const Team& team, ByteWriter& replayed);
  // Rank 0: merges the tree of a later block (its part of merge_blocks' step).
  void merge_block(ByteReader& in);
  // Whether every sum of a column of whole numbers is below 2^53 and none is of a negative
  // number: then every partial sum was exact, and adding them in blocks gave the serial sums.
  bool whole_sums_exact() const;
  // Starts over empty, giving back what the tree kept.
  void clear();
  // Numbers the siblings that print alike (twin_), once the tree is whole.
  void number_twins();
  // Every thread of the run with its map, in order: per_thread and per_rank over the files.
  void for_each_thread(
      const std::function<void(uint32_t, const ThreadTree&, const std::vector<uint32_t>&)>& f,
      const MetricSet& columns) const;

  const Experiment* e_;
  const RankFiles* files_ = nullptr;  // read one file at a time, or null: all in memory
  std::vector<MergedNode> nodes_;
  FlatMap64 child_;                         // (merged parent, region) -> merged node
  std::vector<std::vector<uint32_t>> map_;  // in memory, per thread: node -> merged node
  // Per node its holders; per node and metric (node-major) sum, min and max.
  std::vector<size_t> holders_;
  std::vector<double> sum_, min_, max_;
  std::vector<uint32_t> twin_;        // per node: 0, or its number among siblings that print alike
  std::vector<uint32_t> file_first_;  // read by file: each file's first thread, then the count
  // Read by file: the metric columns whose sums merge_blocks replays (not unsigned integers).
  std::vector<size_t> replayed_columns_;
  // Read by file: the threads and maps of the files kept in memory (empty for the others).
  std::vector<std::vector<ThreadTree>> kept_;
  std::vector<std::vector<std::vector<uint32_t>>> kept_maps_;
  size_t kept_bytes_ = 0;  // taken from the process's budget, given back by the destructor
};

}  // namespace scalea::drg
