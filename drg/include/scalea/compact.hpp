// The compact thread section of format version 2 (docs/experiment-format.md, "Threads"), shared by
// the collector's writer, drg's encoder and the loader. Header-only, plain C++17, like format.hpp.
//
// Per thread: a ThreadRecord; then, unless `same_shape` names an earlier thread of the section
// with the same call-tree structure, the structure: per node the distance to its parent (0 for
// the root) and its region, both varints; then per node its values (put_node_values). Zeros cost
// nothing, small counts a byte, and the threads of one process that ran the same constructs in
// the same order share one structure.
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

// The seven-bit groups of a little-endian varint of at most 8 bytes (its stop bit cleared or not).
inline uint64_t varint_bits(uint64_t x) {
  x &= 0x7f7f7f7f7f7f7f7full;
  x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
  x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
  return ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
}

// Reads the varint at p and moves p past it; false when it runs past `end`, is longer than
// 10 bytes or does not fit 64 bits (a damaged file: the caller names it). Where 8 bytes can be
// read, a varint of up to 8 bytes is decoded without a branch on its length.
__attribute__((always_inline)) inline bool get_varint(const uint8_t*& p, const uint8_t* end,
                                                      uint64_t& v) {
  if (end - p >= 8) {
    uint64_t x;
    std::memcpy(&x, p, 8);  // little-endian: the first byte lowest
    uint64_t stops = ~x & 0x8080808080808080ull;
    if (stops) {
      unsigned bytes = unsigned(__builtin_ctzll(stops)) / 8 + 1;
      if (bytes < 8) x &= (uint64_t(1) << (8 * bytes)) - 1;
      v = varint_bits(x);
      p += bytes;
      return true;
    }
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

// Reads a run of varints (and 8-byte fields between them) from 8-byte windows: where a varint
// ends follows from the window's stop bits, not from the varint before it, so consecutive short
// varints decode without waiting for each other's lengths.
class VarintCursor {
 public:
  VarintCursor(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  // False on a varint that runs past the end, is too long or does not fit 64 bits.
  __attribute__((always_inline)) bool next(uint64_t& v) {
    if (!stops_) {
      p_ += at_;
      at_ = 0;
      if (end_ - p_ < 8) return slow(v);
      std::memcpy(&window_, p_, 8);
      stops_ = ~window_ & 0x8080808080808080ull;
      if (!stops_) return slow(v);  // longer than 8 bytes
    }
    unsigned last = unsigned(__builtin_ctzll(stops_)) / 8;
    stops_ &= stops_ - 1;
    uint64_t x = window_ >> (8 * at_);
    unsigned bytes = last + 1 - at_;
    if (bytes < 8) x &= (uint64_t(1) << (8 * bytes)) - 1;
    v = varint_bits(x);
    at_ = last + 1;
    return true;
  }
  // The next 8 bytes as they are (an f64 column); false past the end.
  __attribute__((always_inline)) bool raw8(void* out) {
    p_ += at_;
    at_ = 0;
    stops_ = 0;
    if (end_ - p_ < 8) return false;
    std::memcpy(out, p_, 8);
    p_ += 8;
    return true;
  }
  const uint8_t* position() const { return p_ + at_; }

 private:
  // The rare case out of line, by value: the cursor's address never escapes, so that its state
  // stays in registers in the caller's loop (with a member function taking `this`, every field
  // went through the stack at each value).
  struct Slow {
    const uint8_t* p;
    uint64_t v;
    bool ok;
  };
  __attribute__((noinline)) static Slow slow_path(const uint8_t* p, const uint8_t* end) {
    uint64_t v = 0;
    bool ok = get_varint(p, end, v);
    return {p, v, ok};
  }
  bool slow(uint64_t& v) {
    stops_ = 0;
    Slow r = slow_path(p_, end_);
    p_ = r.p;
    v = r.v;
    return r.ok;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  uint64_t window_ = 0, stops_ = 0;  // the 8 bytes at p_, and the stop bits not yet read
  unsigned at_ = 0;                  // where the next varint starts in the window
};

// How one file's columns are coded (the same for its writer and its readers).
struct ValueCoding {
  std::vector<uint8_t> f64;         // per column: an f64, written as its 8 bytes
  std::vector<uint64_t> f64_words;  // the same as bits, 64 columns a word (for readers)
  // Columns 0-3 are visits, time, time_min and time_max (the core columns' order): the shortest
  // and the longest visit are written as their distance from the mean visit, time / visits
  // (zigzag: small either way), which is 0 or small where visits take about the same time.
  bool visit_times = false;
  size_t columns() const { return f64.size(); }
  size_t mask_words() const { return (f64.size() + 63) / 64; }
};

// Columns named `names` (in a file's METR order), with their types.
template <class Names, class IsF64>
ValueCoding value_coding(const Names& names, IsF64 is_f64) {
  ValueCoding c;
  c.f64_words.assign((names.size() + 63) / 64, 0);
  for (size_t m = 0; m < names.size(); ++m) {
    c.f64.push_back(is_f64(m) ? 1 : 0);
    if (c.f64[m]) c.f64_words[m / 64] |= uint64_t(1) << (m % 64);
  }
  const char* visit[] = {"visits", "time", "time_min", "time_max"};
  c.visit_times = names.size() >= 4;
  for (size_t m = 0; m < 4 && c.visit_times; ++m) c.visit_times = names[m] == visit[m] && !c.f64[m];
  return c;
}

inline uint64_t zigzag(uint64_t difference) {  // a two's complement difference, small either way
  return (difference << 1) ^ uint64_t(int64_t(difference) >> 63);
}
inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }
inline uint64_t mean_visit(const uint64_t* raw) { return raw[0] ? raw[1] / raw[0] : 0; }

// One node's values in the compact form: which columns are not 0, as a bit mask XORed with the
// previous node's of the thread (`last`, zero at the thread's first node) in varints of 64
// columns, then each such column: a u64 as a varint, an f64 as its 8 bytes.
inline void put_node_values(std::vector<char>& out, const uint64_t* raw, const ValueCoding& c,
                            std::vector<uint64_t>& last) {
  const size_t nm = c.columns();
  uint64_t coded[64];
  last.resize(c.mask_words());
  for (size_t w = 0; w < c.mask_words(); ++w) {
    uint64_t mask = 0;
    for (size_t m = w * 64; m < nm && m < w * 64 + 64; ++m) {
      uint64_t v = raw[m];
      if (c.visit_times && m == 2) v = zigzag(mean_visit(raw) - raw[2]);
      if (c.visit_times && m == 3) v = zigzag(raw[3] - mean_visit(raw));
      coded[m - w * 64] = v;
      if (v) mask |= uint64_t(1) << (m - w * 64);
    }
    put_varint(out, mask ^ last[w]);
    last[w] = mask;
    for (uint64_t bits = mask; bits; bits &= bits - 1) {
      size_t i = size_t(__builtin_ctzll(bits));
      if (!c.f64[w * 64 + i]) {
        put_varint(out, coded[i]);
        continue;
      }
      char b[8];
      std::memcpy(b, &coded[i], 8);
      out.insert(out.end(), b, b + 8);
    }
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
