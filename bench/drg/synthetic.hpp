// What the synthetic experiments of bench/drg hold (drg_gen, drg_encode_bench): every core metric
// column, and per node values that are all random and not 0 (the worst case for the compact
// formats), from one xorshift sequence, so that a run writes the same bytes each time.
#pragma once
#include <cstddef>
#include <cstdint>

#include "scalea/drg/experiment.hpp"

namespace scalea::bench {

// The core metric columns, in the format's order.
inline void use_core_columns(drg::Experiment& e) {
  for (const auto& m : format::kCoreMetrics) {
    e.metrics.push_back(m.name);
    e.metric_merge.push_back(m.merge);
    e.metric_type.push_back(m.type);
  }
}

class SyntheticValues {
 public:
  // One node's `nm` values: visits 1-100, a time of 1 µs to 1 ms, the visit times and the sum of
  // squares that follow from them, and 0-999 in the other columns.
  void node(double* v, size_t nm) {
    const double visits = double(1 + next() % 100), time = double(1000 + next() % 1000000);
    v[0] = visits;
    v[1] = time;
    v[2] = time / visits;
    v[3] = time;
    v[4] = time * time / visits;
    for (size_t m = 5; m < nm; ++m) v[m] = double(next() % 1000);
  }

 private:
  uint64_t next() {
    seed_ ^= seed_ << 13, seed_ ^= seed_ >> 7, seed_ ^= seed_ << 17;
    return seed_;
  }
  uint64_t seed_ = 88172645463325252ull;
};

}  // namespace scalea::bench
