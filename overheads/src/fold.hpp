// How the classifier's passes fold a run's batches (rank files) into per-region accumulators, on
// one process or shared by several (share.hpp). Floating-point sums depend on their order, so the
// order is fixed: the first batch folds into the accumulator itself, every later batch into a
// partial of its own, and the partials are added to the accumulator in batch order. A process of
// an MPI job folds its block of files into partials the same way; rank 0 adds every partial in
// file order. Both add the same partials in the same order: the same numbers, bit for bit.
#pragma once
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/overheads/share.hpp"

namespace scalea::overheads::detail {

// Accumulators as bytes, to travel between processes. Doubles travel as their bits.
class Writer {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const char* p = reinterpret_cast<const char*>(&v);
    out_.insert(out_.end(), p, p + sizeof v);
  }
  std::vector<char>& bytes() { return out_; }

 private:
  std::vector<char> out_;
};

class Reader {
 public:
  explicit Reader(const std::vector<char>& in) : in_(in) {}
  template <class T>
  T get() {
    T v;
    if (at_ + sizeof v > in_.size()) throw std::runtime_error("a partial accumulator is cut short");
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  const std::vector<char>& in_;
  size_t at_ = 0;
};

// +0.0, the value every accumulator starts from: nodes holding nothing else are not written.
inline bool is_zero(double v) { return v == 0 && !std::signbit(v); }

// Folds every batch of `t` into `acc` (see above). `fresh()` makes an empty partial, `fold(batch,
// into)` folds one batch. Acc has combine(const Acc& later), write(Writer&) and read(Reader&)
// (into a fresh one). With a share, every process ends with rank 0's accumulator.
template <class Acc, class Fresh, class Fold>
void fold_batches(const drg::MergedTree& t, Share* share, Acc& acc, Fresh&& fresh, Fold&& fold) {
  auto [first, last] = share ? file_block(t.batches(), share->rank(), share->size())
                             : std::pair<size_t, size_t>(0, t.batches());
  const bool root = !share || share->rank() == 0;
  Writer mine;  // a process other than rank 0: its partials, in file order
  t.for_each_batch(first, last, [&](const drg::ThreadBatch& b) {
    if (b.index == 0) {  // only ever on rank 0
      fold(b, acc);
      return;
    }
    Acc part = fresh();
    fold(b, part);
    if (root) acc.combine(part);
    else part.write(mine);
  });
  if (!share) return;
  std::vector<char> all = step(*share, mine.bytes(), [&](std::vector<std::vector<char>>& parts) {
    for (const std::vector<char>& bytes : parts) {  // rank 0's own part is empty
      Reader in(bytes);
      while (!in.done()) {
        Acc part = fresh();
        part.read(in);
        acc.combine(part);
      }
    }
    Writer out;
    acc.write(out);
    return std::move(out.bytes());
  });
  if (root) return;
  acc = fresh();
  Reader in(all);
  acc.read(in);
}

}  // namespace scalea::overheads::detail
