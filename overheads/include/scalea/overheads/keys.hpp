// Call paths as small integers. The analyses match a run's regions to the reference's, one run's
// to another's (scalea diff) and every run's of a study by call path: the regions on the path from
// the program root, each by its region key (drg::region_key). Keyed by strings ("key of the parent
// + '/' + own key"), the keys of a tree D levels deep took O(D^2) memory and time; interned, each
// merged node costs one hash look-up, whatever the depth.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/flat_map.hpp"

namespace scalea::overheads {

// The call-path keys of every tree interned into one table. A node's key is the id of (its
// parent's key, its region's key), so two nodes of any trees interned into the same
// table get the same key exactly when the region keys on their paths below the root are the same.
// The program root is kRoot whatever the program is called (a reference run may be a copy of the
// binary). Not thread-safe: intern trees one after the other.
class CallPathKeys {
 public:
  static constexpr uint32_t kRoot = 0;

  CallPathKeys();

  // The key of every merged node of `t` (same index); new call paths get new keys.
  std::vector<uint32_t> intern(const drg::MergedTree& t);

  size_t size() const { return parent_.size(); }
  uint32_t parent(uint32_t key) const { return parent_[key]; }  // format::kNoIndex for kRoot
  // The region key of the key's last region ("" for kRoot).
  const std::string& region_key(uint32_t key) const { return region_keys_[region_[key]]; }

  // The rank of every key in the byte order of its key string relative to the root ("" for the
  // root, then "/" and the region key for each level: the order the string keys had). Linear in
  // the keys (siblings are sorted by their region keys). The order is that of the strings except
  // when a region key is another key of the same parent followed by '/', where the strings of the
  // two subtrees interleave: the string keys of such paths were ambiguous anyway.
  std::vector<uint32_t> string_order() const;

 private:
  std::unordered_map<std::string, uint32_t> region_ids_;  // region key -> id
  std::vector<std::string> region_keys_;                  // id -> region key
  drg::FlatMap64 child_;                                  // (parent key, region key id) -> key
  std::vector<uint32_t> parent_, region_;                 // per key
};

}  // namespace scalea::overheads
