// How the classifier's passes fold a run's batches (rank files) into per-region accumulators when
// several processes share them (share.hpp), with the numbers of one process, bit for bit. A
// floating-point sum depends on the order of its additions, and the serial passes add each PE's
// seconds to the running sums, PE after PE; so rank 0 folds its own files (the first ones)
// directly, and every other process folds each of its files into a partial accumulator that
// holds what does not depend on the order (counts, sums of whole numbers, extremes, who was first)
// and *records* every addition to a sum of seconds (Addend) instead of doing it. Rank 0 then, file
// after file in file order, combines the partial and does the recorded additions: the serial
// additions in the serial order.
#pragma once
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "facts.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/overheads/share.hpp"

namespace scalea::overheads::detail {

// +0.0, the value every accumulator starts from: nodes holding nothing else are not written.
inline bool is_zero(double v) { return v == 0 && !std::signbit(v); }

// Does the additions `in` recorded (AdditionLog::move_to), in their order.
template <class Acc>
void replay(Reader& in, Acc& acc) {
  Addend a{format::kNoIndex, 0, 0.0};
  for (uint64_t n = in.get<uint64_t>(); n > 0; --n) {
    const uint16_t head = in.get<uint16_t>();
    a.slot = head >> AdditionLog::kFlagBits;
    if (head & AdditionLog::kNewNode) a.node = in.get<uint32_t>();
    if (head & AdditionLog::kNewValue) a.value = in.get<double>();
    acc.replay(a);
  }
}

// Folds every batch of `t` into `acc` (see above): `prepare(batch)` makes what the batch gives
// alone (its times), on the threads that read the files ahead (MergedTree::for_each_batch_ahead),
// several batches at once; `fold(batch, prepared, into)` folds it, here, batch after batch in file
// order. Acc has record(log) (its sums of seconds recorded from now on), combine(const Acc&
// later) (the rest), replay(addend), write(Writer&) and read(Reader&) (into `fresh()`, an empty
// one). With a share, every process ends with rank 0's accumulator.
// `columns`: every metric column prepare and fold read (the files read again decode those only).
template <class Acc, class Fresh, class Prepare, class Fold>
void fold_batches(const drg::MergedTree& t, Share* share, const drg::MetricSet& columns, Acc& acc,
                  Fresh&& fresh, Prepare&& prepare, Fold&& fold) {
  using Prepared = decltype(prepare(std::declval<const drg::ThreadBatch&>()));
  auto each_batch = [&](size_t first, size_t last, auto&& fold_one) {
    t.for_each_batch_ahead(
        first, last,
        [&](const drg::ThreadBatch& b) -> drg::MergedTree::Rest {
          auto made = std::make_shared<Prepared>(prepare(b));
          return [&fold_one, b, made] { fold_one(b, *made); };
        },
        columns);
  };
  if (!share) {
    each_batch(0, t.batches(), [&](const drg::ThreadBatch& b, Prepared& p) { fold(b, p, acc); });
    return;
  }
  auto [first, last] = t.share_block(share->rank(), share->size());
  const bool root = share->rank() == 0;
  Writer mine;  // a process other than rank 0: each file's partial and recorded additions
  AdditionLog log;
  const size_t files = last - first;
  size_t done = 0;
  each_batch(first, last, [&](const drg::ThreadBatch& b, Prepared& p) {
    if (root) {
      fold(b, p, acc);
      return;
    }
    Acc part = fresh();
    part.record(&log);
    fold(b, p, part);
    part.write(mine);
    log.move_to(mine);
    // Room for the block's message as the first file's times the files, and an eighth more:
    // grown by doubling instead, hundreds of MB were copied and their pages faulted in twice.
    if (++done == 1) mine.reserve(mine.bytes().size() * files / 8 * 9);
  });
  auto combine_parts = [&](std::vector<std::vector<char>>& parts) {
    for (const std::vector<char>& bytes : parts) {  // rank 0's own part is empty
      Reader in(bytes);
      while (!in.done()) {
        Acc part = fresh();
        part.read(in);
        acc.combine(part);
        replay(in, acc);
      }
    }
    Writer out;
    acc.write(out);
    return std::move(out.bytes());
  };
  std::vector<char> all = step(*share, std::move(mine.bytes()), combine_parts);
  if (root) return;
  acc = fresh();
  Reader in(all);
  acc.read(in);
}

}  // namespace scalea::overheads::detail
