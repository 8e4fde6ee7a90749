// The processes that read one experiment together (`mpirun -np N scalea report`, docs/drg.md "The
// analysis as an MPI program"): each opens, checks and settles a block of the rank files and
// builds the tree of its block, and the blocks are combined in file order, so that every process
// ends with what one process reading every file would have. drg does not talk MPI: the step is
// given (overheads::team_of makes one from the analysis's processes).
#pragma once
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
    if (!v.empty()) std::memcpy(grow(v.size() * sizeof(T)), v.data(), v.size() * sizeof(T));
  }
  std::vector<char>& bytes() { return out_; }

 private:
  // `size` more bytes at the end: where to write them. (vector::insert of a few bytes, the
  // general path, was 7 % of a process recording a pass.)
  char* grow(size_t size) {
    const size_t at = out_.size();
    out_.resize(at + size);
    return out_.data() + at;
  }
  std::vector<char> out_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<char>& in) : in_(in) {}
  template <class T>
  T get() {
    T v;
    if (at_ + sizeof v > in_.size()) cut_short();
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  // The next `count` values; checked before anything is allocated for them.
  template <class T>
  std::vector<T> get_many(uint64_t count) {
    if (count > (in_.size() - at_) / sizeof(T)) cut_short();
    std::vector<T> out(count);
    if (count) std::memcpy(out.data(), in_.data() + at_, count * sizeof(T));
    at_ += count * sizeof(T);
    return out;
  }
  // What put_many wrote.
  template <class T>
  std::vector<T> get_many() {
    return get_many<T>(get<uint64_t>());
  }
  bool done() const { return at_ == in_.size(); }

 private:
  [[noreturn]] static void cut_short() {
    throw std::runtime_error("a message between the processes is cut short");
  }
  const std::vector<char>& in_;
  size_t at_ = 0;
};

}  // namespace scalea::drg
