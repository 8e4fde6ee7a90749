// The thread sections' codec at exit, per format version: one rank of THREADS threads x PATHS call
// paths with drg_gen's values (every core column not 0, the worst case), encoded by drg's
// encoder (the same codec, scalea/compact.hpp, as the collector's writer) in versions 1, 2 and 3,
// interleaved, REPS times; prints the median time per thread and per rank and the bytes.
//   drg_encode_bench [THREADS] [PATHS] [REPS]      (default 64 100 51)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "scalea/drg/encode.hpp"
#include "synthetic.hpp"

using namespace scalea;
using namespace scalea::drg;

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 64, paths = argc > 2 ? std::atoi(argv[2]) : 100;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 51;
  if (threads < 1 || paths < 1 || reps < 1) {
    std::fprintf(stderr, "usage: drg_encode_bench [THREADS] [PATHS] [REPS]\n");
    return 2;
  }
  Experiment e;
  bench::use_core_columns(e);
  const size_t nm = e.metrics.size();
  bench::SyntheticValues values;
  for (int t = 0; t < threads; ++t) {
    ThreadTree tt;
    tt.rank = 0;
    tt.thread = uint32_t(t);
    for (int i = 0; i < paths; ++i) {
      tt.parent.push_back(i == 0 ? format::kNoIndex : uint32_t((i - 1) / 4));
      tt.region.push_back(uint32_t(i % 100 + 1));
      tt.values.resize(tt.values.size() + nm);
      values.node(&tt.values[tt.values.size() - nm], nm);
    }
    e.threads.push_back(std::move(tt));
  }
  std::vector<double> ns[3];
  size_t bytes[3] = {};
  for (int r = 0; r < reps; ++r)
    for (uint32_t version : {1u, 2u, 3u}) {
      auto start = std::chrono::steady_clock::now();
      std::vector<char> out = encode_rank_file(e, 0, {false, true, version});
      ns[version - 1].push_back(
          double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count()));
      bytes[version - 1] = out.size();
    }
  std::printf("version\tper_thread_us\tper_rank_ms\tbytes\n");
  for (int v = 0; v < 3; ++v) {
    std::nth_element(ns[v].begin(), ns[v].begin() + reps / 2, ns[v].end());
    const double median = ns[v][size_t(reps / 2)];
    std::printf("%d\t%.1f\t%.3f\t%zu\n", v + 1, median / threads * 1e-3, median * 1e-6, bytes[v]);
  }
  return 0;
}
