// The compact thread section of format version 2 (docs/experiment-format.md, "Threads"), shared by
// the collector's writer, drg's encoder and the loader. Header-only, plain C++17, like format.hpp.
//
// Per thread: a ThreadRecord; then, unless `same_shape` names an earlier thread of the section
// with the same call-tree structure, the structure: per node the distance to its parent (0 for
// the root) and its region, both varints; then per node its values: a mask of the columns that
// are not 0 (one bit a column, column 0 the lowest bit of the first byte), then each such column,
// a u64 as a varint, an f64 as its 8 bytes. Zeros cost a bit, small counts a byte, and the
// threads of one process that ran the same constructs in the same order share one structure.
#pragma once
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "scalea/format.hpp"

namespace scalea::format {

// LEB128: seven bits a byte, the lowest first, the high bit set on every byte but the last.
inline void put_varint(std::vector<char>& out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = char(uint8_t(v) | 0x80);
    v >>= 7;
  }
  buf[n++] = char(v);
  out.insert(out.end(), buf, buf + n);
}

// Reads the varint at p and moves p past it; false when it runs past `end`, is longer than
// 10 bytes or does not fit 64 bits (a damaged file: the caller names it).
inline bool get_varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
  if (p != end && *p < 0x80) {  // the common case: one byte
    v = *p++;
    return true;
  }
  uint64_t x = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    uint8_t b = *p++;
    x |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      if (shift == 63 && b > 1) return false;
      v = x;
      return true;
    }
  }
  return false;
}

inline size_t value_mask_bytes(size_t columns) { return (columns + 7) / 8; }

// One node's values (`raw`: u64 values, or f64 bits where f64[m] is set) in the compact form.
inline void put_node_values(std::vector<char>& out, const uint64_t* raw, size_t columns,
                            const uint8_t* f64) {
  size_t mask = out.size();
  out.resize(mask + value_mask_bytes(columns), 0);
  for (size_t m = 0; m < columns; ++m) {
    if (!raw[m]) continue;
    out[mask + m / 8] = char(uint8_t(out[mask + m / 8]) | (1u << (m % 8)));
    if (!f64[m]) {
      put_varint(out, raw[m]);
      continue;
    }
    char bits[8];
    std::memcpy(bits, &raw[m], 8);
    out.insert(out.end(), bits, bits + 8);
  }
}

// A thread's call-tree structure: parent[i] < i for every node but the root (kNoIndex).
inline void put_shape(std::vector<char>& out, const std::vector<uint32_t>& parent,
                      const std::vector<uint32_t>& region) {
  for (size_t i = 0; i < parent.size(); ++i) {
    put_varint(out, i == 0 ? 0 : i - parent[i]);
    put_varint(out, region[i]);
  }
}

// The structures written so far in one thread section, to write each distinct one once.
class ShapeTable {
 public:
  // The position of an earlier thread with this structure; else kNoIndex, and the structure is
  // remembered as thread `position`'s.
  uint32_t find_or_add(const std::vector<uint32_t>& parent, const std::vector<uint32_t>& region,
                       uint32_t position) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
    for (size_t i = 0; i < parent.size(); ++i) {
      h = (h ^ parent[i]) * 1099511628211ull;
      h = (h ^ region[i]) * 1099511628211ull;
    }
    auto range = seen_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
      if (it->second.parent == parent && it->second.region == region) return it->second.position;
    seen_.emplace(h, Entry{position, parent, region});
    return kNoIndex;
  }

 private:
  struct Entry {
    uint32_t position;
    std::vector<uint32_t> parent, region;
  };
  std::unordered_multimap<uint64_t, Entry> seen_;
};

}  // namespace scalea::format
