#include "meta.hpp"

#include <tuple>

#include "scalea/drg/meta.hpp"

namespace scalea::cli {

const nlohmann::json& meta_at(const nlohmann::json& meta, const char* key) {
  static const nlohmann::json null_value;
  if (!meta.is_object()) return null_value;
  auto it = meta.find(key);
  return it == meta.end() ? null_value : *it;
}

std::set<uint32_t> throttled_nodes(const drg::Experiment& e, const drg::MergedTree& t) {
  std::set<uint32_t> out;
  const std::vector<drg::ThrottledPath> list = drg::read_meta(e.meta).throttled;
  if (list.empty()) return out;
  std::set<std::tuple<int64_t, int64_t, int64_t>> keys;
  for (const drg::ThrottledPath& x : list) keys.emplace(x.rank, x.thread, x.node);
  t.for_each_batch([&](const drg::ThreadBatch& b) {
    for (uint32_t i = 0; i < b.count; ++i)
      for (uint32_t n = 0; n < b.threads[i].size(); ++n)
        if (keys.count({b.threads[i].rank, b.threads[i].thread, n})) out.insert(b.merged[i][n]);
  });
  return out;
}

}  // namespace scalea::cli
