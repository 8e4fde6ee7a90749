// The processes that read one experiment together (`mpirun -np N scalea report`, docs/drg.md "The
// analysis as an MPI program"): each opens, checks and settles a block of the rank files and
// builds the tree of its block, and the blocks are combined in file order, so that every process
// ends with what one process reading every file would have. drg does not talk MPI: the step is
// given (overheads::team_of makes one from the analysis's processes).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace scalea::drg {

struct Team {
  int rank = 0;
  int size = 1;
  // Rank 0 makes a step's result from every process's part, given in rank order.
  using Combine = std::function<std::vector<char>(std::vector<std::vector<char>>& parts)>;
  // One collective step: every process gives `mine`, every process returns rank 0's result. A
  // failure on any process throws on every process.
  std::function<std::vector<char>(std::vector<char> mine, const Combine& combine)> step;
};

// The files [first, last) of `files` that process `rank` of `size` takes: contiguous blocks in
// file order, the first ones one file larger. Processes beyond the number of files get none.
std::pair<size_t, size_t> file_block(size_t files, int rank, int size);
// The same by cost (a file's bytes): contiguous blocks in file order of about equal cost, each
// file in the block where its middle falls, so that processes that parse their blocks finish
// together when the files differ in size. Without costs (all 0): file_block.
std::pair<size_t, size_t> cost_block(const std::vector<uint64_t>& costs, int rank, int size);

// Plain values as bytes, to travel between processes. Doubles travel as their bits.
class ByteWriter {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(grow(sizeof v), &v, sizeof v);
  }
  template <class T>
  void put_many(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(uint64_t(v.size()));
    append(v.data(), v.size() * sizeof(T));
  }
  // `size` bytes as they are, with no count before them.
  void append(const void* data, size_t size) {
    if (size) std::memcpy(grow(size), data, size);
  }
  // Room for `size` bytes in all, so that writing up to them does not move what was written.
  void reserve(size_t size) { out_.reserve(size); }
  // What was written.
  std::vector<char>& bytes() {
    out_.resize(used_);
    return out_;
  }

 private:
  // `size` more bytes at the end: where to write them. The buffer grows by doubling and is cut
  // to what was written by bytes(): growing the vector by each value's size (resize, or insert's
  // general path) was 10-20 % of a process writing a pass's messages.
  char* grow(size_t size) {
    if (out_.size() < used_ + size) {
      size_t grown = std::max(out_.size() * 2, used_ + size + 4096);
      // Within the room reserved first: its pages are touched as they are written.
      if (used_ + size <= out_.capacity()) grown = std::min(grown, out_.capacity());
      out_.resize(grown);
    }
    char* at = out_.data() + used_;
    used_ += size;
    return at;
  }
  std::vector<char> out_;
  size_t used_ = 0;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<char>& in) : ByteReader(in.data(), in.size()) {}
  ByteReader(const char* data, size_t size) : data_(data), size_(size) {}
  template <class T>
  T get() {
    T v;
    if (sizeof v > size_ - at_) cut_short();
    std::memcpy(&v, data_ + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  // The next `count` values; checked before anything is allocated for them.
  template <class T>
  std::vector<T> get_many(uint64_t count) {
    if (count > (size_ - at_) / sizeof(T)) cut_short();
    std::vector<T> out(count);
    if (count) std::memcpy(out.data(), data_ + at_, count * sizeof(T));
    at_ += count * sizeof(T);
    return out;
  }
  // What put_many wrote.
  template <class T>
  std::vector<T> get_many() {
    return get_many<T>(get<uint64_t>());
  }
  // The bytes put_many wrote, read where they are (no copy) by a reader of their own.
  ByteReader bytes_in_place() {
    const uint64_t count = get<uint64_t>();
    if (count > size_ - at_) cut_short();
    ByteReader part(data_ + at_, size_t(count));
    at_ += size_t(count);
    return part;
  }
  bool done() const { return at_ == size_; }

 private:
  [[noreturn]] static void cut_short() {
    throw std::runtime_error("a message between the processes is cut short");
  }
  const char* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace scalea::drg
