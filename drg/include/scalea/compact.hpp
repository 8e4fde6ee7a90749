// The compact thread sections of format versions 2 and 3 (docs/experiment-format.md, "Threads"),
// shared by the collector's writer, drg's encoder and the loader. Header-only, plain C++17, like
// format.hpp.
//
// Per thread: a ThreadRecord; then, unless `same_shape` names an earlier thread of the section
// with the same call-tree structure, the structure: per node the distance to its parent (0 for
// the root) and its region, both varints; then the values: in version 2 node by node
// (put_node_values: a mask of the columns not 0, then those as varints), in version 3 column by
// column (put_columns: each column's values packed in the bits its largest needs, the zeros left
// out where that is smaller), so that a reader decodes only the columns it uses. Zeros cost
// little, small counts a few bits, and the threads of one process that ran the same constructs in
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

// Version 3: a thread's values column by column (docs/experiment-format.md, "Threads"), so that a
// reader decodes only the columns it uses and skips the others without reading them. Per column
// one code byte: 0 when every node's value is 0 (nothing follows); else the low seven bits are
// the width in bits (1 to 56, or 64) and the high bit says `sparse`: a bitmap of the nodes whose
// value is not 0 (a bit a node, the lowest first, bytes_for(nodes, 1) bytes) precedes their
// values; a dense column has every node's value. The values are packed `width` bits each, the
// lowest bits first, in bytes_for(count, width) bytes. Each column takes the smaller form.
inline constexpr uint8_t kSparse = 0x80;
inline constexpr unsigned kMaxPackedWidth = 56;  // wider values take 64 bits
inline size_t bytes_for(size_t count, unsigned width) { return (count * width + 7) / 8; }

// The width a column's values take: the bits of the largest (their OR), 64 beyond 56.
inline unsigned packed_width(uint64_t any_bits) {
  unsigned w = any_bits ? 64 - unsigned(__builtin_clzll(any_bits)) : 0;
  return w > kMaxPackedWidth ? 64 : w;
}

// Appends `count` values packed `width` bits each.
template <class Value>
void put_packed(std::vector<char>& out, size_t count, unsigned width, Value value) {
  const size_t at = out.size();
  out.resize(at + bytes_for(count, width));
  char* p = out.data() + at;
  if (width == 64) {
    for (size_t i = 0; i < count; ++i) {
      uint64_t v = value(i);
      std::memcpy(p + 8 * i, &v, 8);
    }
    return;
  }
  uint64_t acc = 0;  // bits not yet written: fewer than 8 before each value, so acc never overflows
  unsigned bits = 0;
  for (size_t i = 0; i < count; ++i) {
    acc |= value(i) << bits;
    for (bits += width; bits >= 8; bits -= 8, acc >>= 8) *p++ = char(uint8_t(acc));
  }
  if (bits) *p = char(uint8_t(acc));
}

// Node n's values coded as the file holds them (visit times as distances from the mean visit, an
// f64 as its bits), into column-major `cols` (column m of `nodes` values at cols + m * nodes).
inline void code_node_values(const uint64_t* raw, const ValueCoding& c, size_t n, size_t nodes,
                             uint64_t* cols) {
  for (size_t m = 0; m < c.columns(); ++m) {
    uint64_t v = raw[m];
    if (c.visit_times && m == 2) v = zigzag(mean_visit(raw) - raw[2]);
    if (c.visit_times && m == 3) v = zigzag(raw[3] - mean_visit(raw));
    cols[m * nodes + n] = v;
  }
}

// A thread's coded values (code_node_values), column by column in the version 3 layout.
inline void put_columns(std::vector<char>& out, const uint64_t* cols, size_t nodes,
                        size_t columns) {
  for (size_t m = 0; m < columns; ++m) {
    const uint64_t* col = cols + m * nodes;
    uint64_t any = 0;
    size_t nonzero = 0;
    for (size_t n = 0; n < nodes; ++n) any |= col[n], nonzero += col[n] != 0;
    const unsigned width = packed_width(any);
    const bool sparse =
        width && bytes_for(nodes, 1) + bytes_for(nonzero, width) < bytes_for(nodes, width);
    out.push_back(char(uint8_t(width | (sparse ? kSparse : 0))));
    if (!width) continue;
    if (!sparse) {
      put_packed(out, nodes, width, [&](size_t i) { return col[i]; });
      continue;
    }
    put_packed(out, nodes, 1, [&](size_t i) { return uint64_t(col[i] != 0); });
    size_t at = 0;  // the values are asked for in order: the next one not 0
    put_packed(out, nonzero, width, [&](size_t) {
      while (!col[at]) ++at;
      return col[at++];
    });
  }
}

// Value i of values packed `width` bits each (at most kMaxPackedWidth, or 64) from `data`;
// `limit` is where the readable bytes end (bytes beyond the packed ones may be read, not used).
__attribute__((always_inline)) inline uint64_t packed_at(const uint8_t* data, const uint8_t* limit,
                                                         size_t i, unsigned width) {
  const size_t bit = i * width;
  const uint8_t* p = data + bit / 8;
  uint64_t x = 0;
  if (limit - p >= 8) std::memcpy(&x, p, 8);
  else std::memcpy(&x, p, size_t(limit - p));
  if (width == 64) return x;
  return (x >> (bit & 7)) & ((uint64_t(1) << width) - 1);
}

// One column of a thread as the file lays it out; `ok` false when its code is not valid.
struct PackedColumn {
  unsigned width = 0;               // 0: every value is 0
  const uint8_t* bitmap = nullptr;  // sparse columns: the nodes whose value is not 0
  const uint8_t* data = nullptr;    // the packed values
  size_t count = 0;                 // how many values are packed
  const uint8_t* next = nullptr;    // where the next column starts
  bool ok = false;
};

// Reads the column at p of a thread of `nodes` nodes, without decoding its values; everything it
// needs lies before `end`.
inline PackedColumn packed_column(const uint8_t* p, const uint8_t* end, size_t nodes) {
  PackedColumn c;
  if (p == end) return c;
  const uint8_t code = *p++;
  c.width = code & 0x7f;
  const bool sparse = code & kSparse;
  if ((c.width > kMaxPackedWidth && c.width != 64) || (sparse && !c.width)) return c;
  c.count = c.width ? nodes : 0;
  if (sparse) {
    const size_t bytes = bytes_for(nodes, 1);
    if (size_t(end - p) < bytes) return c;
    c.bitmap = p;
    c.count = 0;
    for (size_t i = 0; i < bytes; ++i) c.count += size_t(__builtin_popcount(p[i]));
    if ((nodes & 7) && p[bytes - 1] >> (nodes & 7)) return c;  // a node beyond the last
    p += bytes;
  }
  const size_t bytes = bytes_for(c.count, c.width);
  if (size_t(end - p) < bytes) return c;
  c.data = p;
  c.next = p + bytes;
  c.ok = true;
  return c;
}

// Calls f(node, value) for every node of a column whose value is not 0 (sparse) or for every
// node (dense); `limit` as for packed_at.
template <class F>
void for_each_packed(const PackedColumn& c, const uint8_t* limit, size_t nodes, F f) {
  if (!c.width) return;
  if (!c.bitmap) {
    for (size_t n = 0; n < nodes; ++n) f(n, packed_at(c.data, limit, n, c.width));
    return;
  }
  size_t k = 0;
  for (size_t byte = 0; byte * 8 < nodes; ++byte)
    for (unsigned bits = c.bitmap[byte]; bits; bits &= bits - 1)
      f(byte * 8 + unsigned(__builtin_ctz(bits)), packed_at(c.data, limit, k++, c.width));
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
