#include "thread_values.hpp"

#include "scalea/format.hpp"

namespace scalea::cli {
namespace {

// One group of nodes and their holders' values, gathered in one pass over the run's threads.
class Group {
 public:
  Group(const drg::MergedTree& t, const std::vector<int>& metrics, std::vector<uint32_t>& slot)
      : t_(t), metrics_(metrics), slot_(slot) {}

  void add(uint32_t node) {
    slot_[node] = uint32_t(nodes_.size());
    nodes_.push_back(node);
    first_.push_back(holders_);
    holders_ += t_.holders(node);
  }
  bool empty() const { return nodes_.empty(); }
  size_t holders() const { return holders_; }

  // Reads every thread of the run; then visits the nodes in the order they were added, and
  // frees their slots for the next group.
  void visit(const std::function<void(const NodeThreads&)>& f) {
    const size_t k = metrics_.size();
    thread_.resize(holders_);
    values_.resize(holders_ * k);
    std::vector<size_t> next = first_;
    const size_t columns = t_.experiment().metric_count();
    drg::MetricSet read = drg::MetricSet::none();  // the files read again decode these only
    for (int m : metrics_) read.add(m);
    auto gather = [&](const drg::ThreadBatch& b) {
      for (uint32_t i = 0; i < b.count; ++i) {
        const drg::ThreadTree& th = b.threads[i];
        const std::vector<uint32_t>& merged = b.merged[i];
        for (uint32_t n = 0; n < th.size(); ++n) {
          uint32_t s = slot_[merged[n]];
          if (s == format::kNoIndex) continue;
          size_t at = next[s]++;
          thread_[at] = b.first + i;
          for (size_t j = 0; j < k; ++j)
            values_[at * k + j] =
                metrics_[j] < 0 ? 0.0 : th.values[size_t(n) * columns + size_t(metrics_[j])];
        }
      }
    };
    t_.for_each_batch_ahead(
        0, t_.batches(),
        [&](const drg::ThreadBatch& b) -> drg::MergedTree::Rest {
          return [&gather, b] { gather(b); };
        },
        read);
    for (size_t s = 0; s < nodes_.size(); ++s) {
      size_t count = (s + 1 < nodes_.size() ? first_[s + 1] : holders_) - first_[s];
      f({nodes_[s], count, thread_.data() + first_[s], values_.data() + first_[s] * k, k});
      slot_[nodes_[s]] = format::kNoIndex;
    }
  }

 private:
  const drg::MergedTree& t_;
  const std::vector<int>& metrics_;
  std::vector<uint32_t>& slot_;  // per merged node: its place in the group, or kNoIndex
  std::vector<uint32_t> nodes_;
  std::vector<size_t> first_;  // per node of the group: its first holder
  size_t holders_ = 0;
  std::vector<uint32_t> thread_;
  std::vector<double> values_;
};

}  // namespace

void for_each_node_threads(const drg::MergedTree& t, const std::vector<uint32_t>& nodes,
                           const std::vector<int>& metrics,
                           const std::function<void(const NodeThreads&)>& visit, size_t budget) {
  const size_t per_holder = sizeof(uint32_t) + metrics.size() * sizeof(double);
  std::vector<uint32_t> slot(t.nodes().size(), format::kNoIndex);
  for (size_t i = 0; i < nodes.size();) {
    Group g(t, metrics, slot);
    while (i < nodes.size() &&
           (g.empty() || (g.holders() + t.holders(nodes[i])) * per_holder <= budget))
      g.add(nodes[i++]);
    g.visit(visit);
  }
}

}  // namespace scalea::cli
