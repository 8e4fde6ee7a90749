#include "scalea/drg/cct.hpp"

#include "read_ahead.hpp"
#include "scalea/drg/region_key.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>

namespace scalea::drg {

uint32_t MergedTree::child(uint32_t parent, uint32_t region) {
  const uint64_t key = uint64_t(parent) << 32 | region;
  if (const uint32_t* found = child_.find(key)) return *found;
  const uint32_t m = uint32_t(nodes_.size());
  MergedNode mn;
  mn.parent = parent;
  mn.region = region;
  mn.depth = nodes_[parent].depth + 1;
  nodes_.push_back(std::move(mn));
  nodes_[parent].children.push_back(m);
  child_.emplace(key, m);
  return m;
}

void MergedTree::add(const ThreadTree& t, std::vector<uint32_t>& map) {
  map.assign(t.size(), 0);
  if (t.size() > 0) nodes_[0].region = t.region[0];
  for (uint32_t n = 1; n < t.size(); ++n) map[n] = child(map[t.parent[n]], t.region[n]);
}

void MergedTree::map_thread(const ThreadTree& t, std::vector<uint32_t>& map) const {
  map.assign(t.size(), 0);
  for (uint32_t n = 1; n < t.size(); ++n)
    map[n] = *child_.find(uint64_t(map[t.parent[n]]) << 32 | t.region[n]);
}

MergedTree::MergedTree(const Experiment& e) : e_(&e) {
  nodes_.emplace_back();  // the root: every thread's root (the program region) folds into it
  nodes_[0].region = 0;
  map_.resize(e.threads.size());
  // Thread by thread, node by node, as read by file: every sum is added in the same order.
  for (uint32_t ti = 0; ti < e.threads.size(); ++ti) {
    add(e.threads[ti], map_[ti]);
    add_values(e.threads[ti], map_[ti]);
  }
  const size_t nm = e.metric_count();
  holders_.resize(nodes_.size(), 0);
  sum_.resize(nodes_.size() * nm, 0.0);
  min_.resize(nodes_.size() * nm, 0.0);
  max_.resize(nodes_.size() * nm, 0.0);
  number_twins();
}

void MergedTree::add_values(const ThreadTree& t, const std::vector<uint32_t>& map) {
  const size_t nm = e_->metric_count();
  holders_.resize(nodes_.size(), 0);
  sum_.resize(nodes_.size() * nm, 0.0);
  min_.resize(nodes_.size() * nm, 0.0);
  max_.resize(nodes_.size() * nm, 0.0);
  for (uint32_t n = 0; n < t.size(); ++n) {
    const size_t at = size_t(map[n]) * nm;
    const bool first_holder = holders_[map[n]]++ == 0;
    for (size_t k = 0; k < nm; ++k) {
      double x = t.values[size_t(n) * nm + k];
      sum_[at + k] += x;
      if (first_holder || x > max_[at + k]) max_[at + k] = x;
      if (first_holder || x < min_[at + k]) min_[at + k] = x;
    }
  }
}

namespace {

// The bytes of threads the trees alive keep, against MergedTree::keep_budget().
std::atomic<size_t> kept_in_process{0};

// Takes `bytes` from the process's budget `limit` when they fit.
bool take_budget(size_t bytes, size_t limit) {
  size_t now = kept_in_process.load();
  do {
    if (now + bytes > limit) return false;
  } while (!kept_in_process.compare_exchange_weak(now, now + bytes));
  return true;
}

// A tree read by file as it travels between processes: its shape and its per-node sums, largest
// and smallest values (node-major), in node order.
struct TreeData {
  std::vector<uint32_t> parent, region;
  std::vector<size_t> holders;
  std::vector<double> sum, min, max;

  void write(ByteWriter& out) const {
    out.put_many(parent);
    out.put_many(region);
    out.put_many(holders);
    out.put_many(sum);
    out.put_many(min);
    out.put_many(max);
  }
  static TreeData read(ByteReader& in) {
    TreeData d;
    d.parent = in.get_many<uint32_t>();
    d.region = in.get_many<uint32_t>();
    d.holders = in.get_many<size_t>();
    d.sum = in.get_many<double>();
    d.min = in.get_many<double>();
    d.max = in.get_many<double>();
    return d;
  }
};

}  // namespace

size_t MergedTree::bytes_held(const ThreadTree& t, size_t metrics) {
  return t.size() * (sizeof(double) * metrics + sizeof(uint32_t) * 3);
}

size_t MergedTree::kept() { return kept_in_process.load(); }

size_t MergedTree::keep_budget() {
  static const size_t budget = [] {
    const char* mb = std::getenv("SCALEA_KEEP_MB");
    if (!mb || !*mb) return kKeepBytes;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(mb, &end, 10);
    if (*end || v > (uint64_t(1) << 40)) {
      std::fprintf(stderr, "scalea: SCALEA_KEEP_MB=%s is not a number of MiB: %zu used\n", mb,
                   kKeepBytes >> 20);
      return kKeepBytes;
    }
    return size_t(v) << 20;
  }();
  return budget;
}

MergedTree::~MergedTree() { kept_in_process -= kept_bytes_; }

MergedTree::MergedTree(MergedTree&& o) noexcept
    : e_(o.e_),
      files_(o.files_),
      nodes_(std::move(o.nodes_)),
      child_(std::move(o.child_)),
      map_(std::move(o.map_)),
      holders_(std::move(o.holders_)),
      sum_(std::move(o.sum_)),
      min_(std::move(o.min_)),
      max_(std::move(o.max_)),
      twin_(std::move(o.twin_)),
      file_first_(std::move(o.file_first_)),
      replayed_columns_(std::move(o.replayed_columns_)),
      kept_(std::move(o.kept_)),
      kept_maps_(std::move(o.kept_maps_)),
      kept_bytes_(std::exchange(o.kept_bytes_, 0)) {}

MergedTree::MergedTree(const RankFiles& files, size_t keep_bytes)
    : e_(&files.definitions()), files_(&files) {
  file_first_.push_back(0);
  for (size_t f = 0; f < files.files(); ++f)
    file_first_.push_back(file_first_.back() + uint32_t(files.threads_in(f)));
  for (size_t k = 0; k < e_->metric_count(); ++k)
    if (k >= e_->metric_type.size() || e_->metric_type[k] != format::MetricType::U64)
      replayed_columns_.push_back(k);
  clear();
  const Team* team = files.team();
  if (team) {
    auto [first, last] = files.block();
    ByteWriter replayed;  // rank 0's block comes first: its sums are the serial ones already
    read_files(first, last, keep_bytes, team->rank == 0 ? nullptr : &replayed);
    if (merge_blocks(*team, replayed)) {
      number_twins();
      return;
    }
    clear();
  }
  read_files(0, files.files(), keep_bytes, nullptr);
  number_twins();
}

std::pair<size_t, size_t> MergedTree::share_block(int rank, int size) const {
  return files_ ? files_->block_of(rank, size) : file_block(batches(), rank, size);
}

void MergedTree::clear() {
  kept_in_process -= kept_bytes_;
  kept_bytes_ = 0;
  nodes_.assign(1, MergedNode{});
  nodes_[0].region = 0;  // every thread's root (the program region) folds into it
  child_.clear();
  holders_.clear();
  sum_.clear();
  min_.clear();
  max_.clear();
  kept_.assign(files_->files(), {});
  kept_maps_.assign(files_->files(), {});
}

void MergedTree::read_files(size_t first, size_t last, size_t keep_bytes, ByteWriter* replayed) {
  const size_t nm = e_->metric_count();
  std::vector<uint32_t> map;
  std::vector<std::vector<uint32_t>> maps;
  // Files are parsed ahead on other threads while this one adds them, in file order.
  detail::read_ahead<std::vector<ThreadTree>>(
      first, last, files_->readers(), [&](size_t f) { return files_->threads(f); },
      [&](size_t f, std::vector<ThreadTree>& threads) {
        size_t bytes = 0;
        for (const ThreadTree& t : threads) bytes += bytes_held(t, nm);
        const bool keep = take_budget(bytes, keep_bytes);
        maps.clear();
        const ThreadTree* before = nullptr;  // the thread `map` maps
        for (const ThreadTree& t : threads) {
          // The threads of a team often have one shape: its map is the one before's.
          if (!before || t.parent != before->parent || t.region != before->region) add(t, map);
          before = &t;
          if (keep) maps.push_back(map);
          add_values(t, map);
          if (replayed)
            for (uint32_t n = 0; n < t.size(); ++n) {
              replayed->put(map[n]);
              for (size_t k : replayed_columns_) replayed->put(t.values[size_t(n) * nm + k]);
            }
        }
        if (keep) {
          kept_bytes_ += bytes;
          kept_[f] = std::move(threads);
          kept_maps_[f] = std::move(maps);
          maps = {};
        }
      });
  holders_.resize(nodes_.size(), 0);  // a block without threads holds the root alone
  sum_.resize(nodes_.size() * nm, 0.0);
  min_.resize(nodes_.size() * nm, 0.0);
  max_.resize(nodes_.size() * nm, 0.0);
}

bool MergedTree::merge_blocks(const Team& team, ByteWriter& replayed) {
  TreeData local;  // this block's tree: rank 0's is the start of the merged one
  for (const MergedNode& n : nodes_) {
    local.parent.push_back(n.parent);
    local.region.push_back(n.region);
  }
  ByteWriter mine;
  if (team.rank != 0) {
    local.holders = holders_;
    local.sum = sum_;
    local.min = min_;
    local.max = max_;
    local.write(mine);
    mine.put_many(replayed.bytes());
  }
  replayed = ByteWriter();
  std::vector<char> all =
      team.step(std::move(mine.bytes()), [this](std::vector<std::vector<char>>& parts) {
        for (size_t r = 1; r < parts.size(); ++r) {
          ByteReader in(parts[r]);
          merge_block(in);
          parts[r] = {};
        }
        ByteWriter out;
        const bool exact = whole_sums_exact();
        out.put(uint8_t(exact));
        if (exact) {
          TreeData merged{{}, {}, holders_, sum_, min_, max_};
          for (const MergedNode& n : nodes_) {
            merged.parent.push_back(n.parent);
            merged.region.push_back(n.region);
          }
          merged.write(out);
        }
        return std::move(out.bytes());
      });
  ByteReader in(all);
  if (!in.get<uint8_t>()) return false;
  TreeData merged = TreeData::read(in);
  nodes_.assign(1, MergedNode{});
  nodes_[0].region = merged.region.at(0);
  child_.clear();
  for (size_t i = 1; i < merged.parent.size(); ++i) child(merged.parent[i], merged.region[i]);
  holders_ = std::move(merged.holders);
  sum_ = std::move(merged.sum);
  min_ = std::move(merged.min);
  max_ = std::move(merged.max);
  // The kept files' maps: from this block's tree onto the merged one.
  std::vector<uint32_t> to(local.parent.size(), 0);
  for (size_t i = 1; i < to.size(); ++i)
    to[i] = *child_.find(uint64_t(to[local.parent[i]]) << 32 | local.region[i]);
  for (std::vector<std::vector<uint32_t>>& maps : kept_maps_)
    for (std::vector<uint32_t>& map : maps)
      for (uint32_t& m : map) m = to[m];
  return true;
}

void MergedTree::merge_block(ByteReader& in) {
  const TreeData b = TreeData::read(in);
  ByteReader additions = in.bytes_in_place();
  const size_t nm = e_->metric_count();
  std::vector<char> is_replayed(nm, 0);
  for (size_t k : replayed_columns_) is_replayed[k] = 1;
  std::vector<uint32_t> to(b.parent.size(), 0);
  if (!b.holders.empty() && b.holders[0] > 0) nodes_[0].region = b.region[0];
  for (size_t i = 1; i < to.size(); ++i) to[i] = child(to[b.parent[i]], b.region[i]);
  holders_.resize(nodes_.size(), 0);
  sum_.resize(nodes_.size() * nm, 0.0);
  min_.resize(nodes_.size() * nm, 0.0);
  max_.resize(nodes_.size() * nm, 0.0);
  for (size_t i = 0; i < to.size(); ++i) {
    if (b.holders[i] == 0) continue;
    const bool first_holder = holders_[to[i]] == 0;
    holders_[to[i]] += b.holders[i];
    const size_t at = size_t(to[i]) * nm, from = i * nm;
    for (size_t k = 0; k < nm; ++k) {
      if (!is_replayed[k]) sum_[at + k] += b.sum[from + k];
      if (first_holder || b.max[from + k] > max_[at + k]) max_[at + k] = b.max[from + k];
      if (first_holder || b.min[from + k] < min_[at + k]) min_[at + k] = b.min[from + k];
    }
  }
  // The block's additions to the other sums, in the order its threads made them.
  while (!additions.done()) {
    const size_t at = size_t(to.at(additions.get<uint32_t>())) * nm;
    for (size_t k : replayed_columns_) sum_[at + k] += additions.get<double>();
  }
}

bool MergedTree::whole_sums_exact() const {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  const size_t nm = e_->metric_count();
  std::vector<char> whole(nm, 1);
  for (size_t k : replayed_columns_) whole[k] = 0;
  for (size_t i = 0; i < holders_.size(); ++i)
    for (size_t k = 0; k < nm; ++k)
      if (whole[k] && holders_[i] > 0 && (sum_[i * nm + k] >= kExact || min_[i * nm + k] < 0))
        return false;
  return true;
}

void MergedTree::for_each_batch(const std::function<void(const ThreadBatch&)>& visit) const {
  for_each_batch(0, batches(), visit);
}

void MergedTree::for_each_batch(size_t first, size_t last,
                                const std::function<void(const ThreadBatch&)>& visit) const {
  for_each_batch_ahead(first, last,
                       [&](const ThreadBatch& b) -> Rest { return [&visit, b] { visit(b); }; });
}

void MergedTree::for_each_batch_ahead(size_t first, size_t last,
                                      const std::function<Rest(const ThreadBatch&)>& work,
                                      const MetricSet& columns) const {
  if (!files_) {  // in memory, the whole run is one batch
    if (first == 0 && last > 0 && !map_.empty())
      if (Rest rest = work({0, e_->threads.data(), map_.data(), uint32_t(map_.size()), 0})) rest();
    return;
  }
  // A file the tree does not keep is read and mapped onto the tree on another thread, and its
  // work done there, while the files before it are finished here (read_ahead.hpp).
  struct Read {
    std::vector<ThreadTree> threads;
    std::vector<std::vector<uint32_t>> maps;
    Rest rest;
  };
  detail::read_ahead<Read>(
      first, last, files_->readers(),
      [&](size_t f) {
        Read r;
        if (!kept_[f].empty()) {
          r.rest = work({file_first_[f], kept_[f].data(), kept_maps_[f].data(),
                         uint32_t(kept_[f].size()), f});
          return r;
        }
        r.threads = files_->threads(f, columns);
        r.maps.resize(r.threads.size());
        for (size_t i = 0; i < r.threads.size(); ++i) {
          const ThreadTree& t = r.threads[i];
          // The threads of a team often have one shape (written once, format version 2 on).
          if (i && t.parent == r.threads[i - 1].parent && t.region == r.threads[i - 1].region)
            r.maps[i] = r.maps[i - 1];
          else map_thread(t, r.maps[i]);
        }
        // The batch points into r's arrays, which stay where they are when r moves.
        if (!r.threads.empty())
          r.rest = work(
              {file_first_[f], r.threads.data(), r.maps.data(), uint32_t(r.threads.size()), f});
        return r;
      },
      [&](size_t, Read& r) {
        if (r.rest) r.rest();
      });
}

void MergedTree::for_each_thread(
    const std::function<void(uint32_t, const ThreadTree&, const std::vector<uint32_t>&)>& f,
    const MetricSet& columns) const {
  for_each_batch_ahead(
      0, batches(),
      [&](const ThreadBatch& b) -> Rest {
        return [&f, b] {
          for (uint32_t i = 0; i < b.count; ++i) f(b.first + i, b.threads[i], b.merged[i]);
        };
      },
      columns);
}

double MergedTree::sum(uint32_t node, int metric) const {
  return metric < 0 ? 0.0 : sum_[size_t(node) * e_->metric_count() + size_t(metric)];
}

double MergedTree::max(uint32_t node, int metric) const {
  return metric < 0 ? 0.0 : max_[size_t(node) * e_->metric_count() + size_t(metric)];
}

double MergedTree::min(uint32_t node, int metric) const {
  return metric < 0 ? 0.0 : min_[size_t(node) * e_->metric_count() + size_t(metric)];
}

std::vector<std::pair<uint32_t, double>> MergedTree::per_thread(uint32_t node, int metric) const {
  std::vector<std::pair<uint32_t, double>> out;
  for_each_thread(
      [&](uint32_t ti, const ThreadTree& t, const std::vector<uint32_t>& map) {
        for (uint32_t n = 0; n < t.size(); ++n)
          if (map[n] == node) out.emplace_back(ti, e_->value(t, n, metric));
      },
      MetricSet::none().add(metric));
  return out;
}

std::vector<double> MergedTree::per_rank(uint32_t node, int metric) const {
  std::vector<char> one(nodes_.size(), 0);
  one[node] = 1;
  return per_rank(one, metric);
}

std::vector<double> MergedTree::per_rank(const std::vector<char>& nodes, int metric) const {
  std::vector<double> out(size_t(e_->ranks()), 0.0);
  for_each_thread(
      [&](uint32_t, const ThreadTree& t, const std::vector<uint32_t>& map) {
        for (uint32_t n = 0; n < t.size(); ++n)
          if (nodes[map[n]]) out[size_t(std::max(t.rank, 0))] += e_->value(t, n, metric);
      },
      MetricSet::none().add(metric));
  return out;
}

std::string path_component(const Region& r) {
  std::string out = r.label();
  std::string loc = r.location();
  if (!loc.empty() && r.kind != RegionKind::Program) out += "@" + loc;
  return out;
}

std::string MergedTree::component(uint32_t node) const {
  std::string out = path_component(region_of(node));
  if (node < twin_.size() && twin_[node] > 0) out += "#" + std::to_string(twin_[node]);
  return out;
}

std::string MergedTree::path(uint32_t node) const {
  return call_path(
      node, nodes_[node].depth, 0, [&](uint32_t n) { return nodes_[n].parent; },
      [&](uint32_t n) { return component(n); });
}

// Siblings print alike when their regions differ only in what a path does not show (the
// function, the module): C++ template instances of one line. Only regions whose text another
// region shares can be such siblings, so the nodes of the others are not looked at.
void MergedTree::number_twins() {
  twin_.assign(nodes_.size(), 0);
  const std::vector<Region>& regions = e_->regions;
  std::vector<char> shared(regions.size(), 0);
  std::unordered_map<std::string, uint32_t> first;
  bool any = false;
  for (uint32_t r = 0; r < regions.size(); ++r) {
    auto [it, fresh] = first.emplace(path_component(regions[r]), r);
    if (!fresh) shared[r] = shared[it->second] = 1, any = true;
  }
  if (!any) return;
  struct Twin {
    std::string text, key;
    uint32_t node;
  };
  std::vector<Twin> group;
  for (const MergedNode& mn : nodes_) {
    group.clear();
    for (uint32_t c : mn.children)
      if (shared[nodes_[c].region])
        group.push_back({path_component(region_of(c)), region_key(region_of(c)), c});
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end(), [&](const Twin& a, const Twin& b) {
      if (a.text != b.text) return a.text < b.text;
      if (a.key != b.key) return a.key < b.key;
      return nodes_[a.node].region < nodes_[b.node].region;
    });
    for (size_t i = 0, j; i < group.size(); i = j) {
      for (j = i + 1; j < group.size() && group[j].text == group[i].text;) ++j;
      if (j - i < 2) continue;
      for (size_t k = i; k < j; ++k) twin_[group[k].node] = uint32_t(k - i + 1);
    }
  }
}

std::vector<uint32_t> MergedTree::preorder() const {
  std::vector<uint32_t> out, stack{0};
  out.reserve(nodes_.size());
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    out.push_back(n);
    const auto& ch = nodes_[n].children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

}  // namespace scalea::drg
