#include "scalea/overheads/keys.hpp"

#include <algorithm>
#include <string_view>

#include "scalea/drg/region_key.hpp"

namespace scalea::overheads {

CallPathKeys::CallPathKeys() {
  region_keys_.emplace_back();  // the root's
  parent_.push_back(format::kNoIndex);
  region_.push_back(0);
}

std::vector<uint32_t> CallPathKeys::intern(const drg::MergedTree& t) {
  const drg::Experiment& e = t.experiment();
  std::vector<uint32_t> region_id(e.regions.size(), format::kNoIndex);  // per region, on first use
  std::vector<uint32_t> keys(t.nodes().size(), kRoot);
  // A parent is created before its children: its index is smaller.
  for (uint32_t n = 1; n < t.nodes().size(); ++n) {
    const drg::MergedNode& mn = t.node(n);
    uint32_t& rid = region_id[mn.region];
    if (rid == format::kNoIndex) {
      auto [it, added] =
          region_ids_.emplace(drg::region_key(e.regions[mn.region]), uint32_t(region_keys_.size()));
      if (added) region_keys_.push_back(it->first);
      rid = it->second;
    }
    uint32_t parent = keys[mn.parent];
    auto [key, added] = child_.emplace(uint64_t(parent) << 32 | rid, uint32_t(parent_.size()));
    if (added) {
      parent_.push_back(parent);
      region_.push_back(rid);
    }
    keys[n] = key;
  }
  return keys;
}

namespace {

// Byte order of the strings a + "/" (when a_slash) and b + "/" (when b_slash): <0, 0, >0.
int compare(std::string_view a, bool a_slash, std::string_view b, bool b_slash) {
  size_t common = std::min(a.size(), b.size());
  if (int c = a.substr(0, common).compare(b.substr(0, common)); c != 0) return c;
  size_t la = a.size() + a_slash, lb = b.size() + b_slash;
  // Past the common part: the rest of the longer one, then the slashes.
  for (size_t i = common; i < std::min(la, lb); ++i) {
    unsigned char ca = i < a.size() ? static_cast<unsigned char>(a[i]) : '/';
    unsigned char cb = i < b.size() ? static_cast<unsigned char>(b[i]) : '/';
    if (ca != cb) return ca < cb ? -1 : 1;
  }
  return la < lb ? -1 : la > lb ? 1 : 0;
}

}  // namespace

std::vector<uint32_t> CallPathKeys::string_order() const {
  const uint32_t n = uint32_t(size());
  // Children of each key (compressed rows).
  std::vector<uint32_t> first(n + 1, 0), kids(n - 1);
  for (uint32_t k = 1; k < n; ++k) ++first[parent_[k] + 1];
  for (uint32_t k = 0; k < n; ++k) first[k + 1] += first[k];
  std::vector<uint32_t> fill(first.begin(), first.end() - 1);
  for (uint32_t k = 1; k < n; ++k) kids[fill[parent_[k]]++] = k;

  // Below a key K (string S), each child C contributes S/C (item 2C) and, when C has children, the
  // strings S/C/... (item 2C+1), which all start with S/C/: sorting the items by "C" and "C/"
  // orders every string below K. Items are expanded depth first with an explicit stack.
  auto items_of = [&](uint32_t k) {
    std::vector<uint32_t> items;
    for (uint32_t i = first[k]; i < first[k + 1]; ++i) {
      uint32_t c = kids[i];
      items.push_back(2 * c);
      if (first[c + 1] > first[c]) items.push_back(2 * c + 1);
    }
    std::sort(items.begin(), items.end(), [&](uint32_t x, uint32_t y) {
      int c = compare(region_key(x / 2), x & 1, region_key(y / 2), y & 1);
      return c != 0 ? c < 0 : x < y;
    });
    return items;
  };
  std::vector<uint32_t> rank(n, 0);
  uint32_t next = 0;
  rank[kRoot] = next++;
  struct Frame {
    std::vector<uint32_t> items;
    size_t pos = 0;
  };
  std::vector<Frame> stack;
  stack.push_back({items_of(kRoot), 0});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.pos == f.items.size()) {
      stack.pop_back();
      continue;
    }
    uint32_t item = f.items[f.pos++];
    if (item & 1) stack.push_back({items_of(item / 2), 0});  // f is not used after this
    else rank[item / 2] = next++;
  }
  return rank;
}

}  // namespace scalea::overheads
