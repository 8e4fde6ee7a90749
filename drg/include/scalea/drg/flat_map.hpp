// A hash map from 64-bit keys to 32-bit values for the loader's and the merge's hot loops, which
// look up one (parent, region) key per node of every thread: open addressing in two flat arrays,
// so there is no allocation per entry, and clear() costs the entries inserted, not the capacity,
// so one map can serve thread after thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace scalea::drg {

class FlatMap64 {
 public:
  // Maps `key` to `value` unless the key is present. Returns the value now stored for the key
  // and whether it was inserted.
  std::pair<uint32_t, bool> emplace(uint64_t key, uint32_t value) {
    if (key == kEmpty) {  // the one key the table cannot hold in a slot
      if (has_empty_key_) return {empty_key_value_, false};
      has_empty_key_ = true;
      empty_key_value_ = value;
      return {value, true};
    }
    if (2 * (used_.size() + 1) > keys_.size()) grow();
    size_t i = slot(key);
    while (keys_[i] != kEmpty) {
      if (keys_[i] == key) return {values_[i], false};
      i = (i + 1) & mask_;
    }
    keys_[i] = key;
    values_[i] = value;
    used_.push_back(uint32_t(i));
    return {value, true};
  }

  // The value stored for `key`, or nullptr.
  const uint32_t* find(uint64_t key) const {
    if (key == kEmpty) return has_empty_key_ ? &empty_key_value_ : nullptr;
    if (keys_.empty()) return nullptr;
    for (size_t i = slot(key); keys_[i] != kEmpty; i = (i + 1) & mask_)
      if (keys_[i] == key) return &values_[i];
    return nullptr;
  }

  size_t size() const { return used_.size() + (has_empty_key_ ? 1 : 0); }

  void clear() {
    for (uint32_t i : used_) keys_[i] = kEmpty;
    used_.clear();
    has_empty_key_ = false;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);

  size_t slot(uint64_t key) const {
    // Fibonacci hashing: the high bits of the product mix every bit of the key.
    return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  void grow() {
    std::vector<uint64_t> old_keys = std::move(keys_);
    std::vector<uint32_t> old_values = std::move(values_);
    size_t capacity = old_keys.empty() ? 64 : 2 * old_keys.size();
    keys_.assign(capacity, kEmpty);
    values_.assign(capacity, 0);
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    std::vector<uint32_t> old_used = std::move(used_);
    used_.clear();
    for (uint32_t i : old_used) emplace(old_keys[i], old_values[i]);
  }

  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  std::vector<uint32_t> used_;  // occupied slots, for clear()
  size_t mask_ = 0;
  unsigned shift_ = 64;
  bool has_empty_key_ = false;
  uint32_t empty_key_value_ = 0;
};

}  // namespace scalea::drg
