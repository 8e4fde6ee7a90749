// Loads and merges experiments, printing seconds per phase and peak RSS (docs/drg.md).
//   drg_bench DIR [DIR...]
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <dirent.h>
#include <string>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/graph.hpp"

using namespace scalea::drg;
using Clock = std::chrono::steady_clock;

static double mib_peak() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // KiB on Linux
}

static double input_mib(const std::string& dir) {
  double total = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      struct stat st;
      if (stat((dir + "/" + e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += double(st.st_size);
    }
    closedir(d);
  }
  return total / (1 << 20);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: drg_bench DIR [DIR...]\n");
    return 2;
  }
  LoadOptions opt;
  opt.resolve_symbols = false;
  double in = 0;
  auto t0 = Clock::now();
  std::vector<Experiment> exps;
  size_t nodes = 0, threads = 0;
  for (int i = 1; i < argc; ++i) {
    in += input_mib(argv[i]);
    exps.push_back(load_experiment(argv[i], opt));
    for (const auto& t : exps.back().threads) nodes += t.size();
    threads += exps.back().threads.size();
  }
  auto t1 = Clock::now();
  double rss_load = mib_peak();
  std::vector<const Experiment*> runs;
  for (const auto& e : exps) runs.push_back(&e);
  Drg d(runs);
  auto t2 = Clock::now();
  RegionGraph rg(d);
  auto t3 = Clock::now();
  double rss_merge = mib_peak();
  MergedTree mt(exps[0]);
  auto t4 = Clock::now();
  auto s = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf("input %.1f MiB, %zu threads, %zu nodes -> %zu merged contexts, %zu regions\n", in, threads, nodes,
              d.size(), boost::num_vertices(rg.graph()));
  std::printf("load %.3f s  merge(Drg) %.3f s  region graph %.3f s  MergedTree %.3f s\n", s(t0, t1), s(t1, t2),
              s(t2, t3), s(t3, t4));
  std::printf("peak RSS: after load %.1f MiB, after merge %.1f MiB, end %.1f MiB\n", rss_load, rss_merge, mib_peak());
  std::printf("TSV\t%zu\t%.1f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\n", threads, in, s(t0, t1), s(t1, t2), s(t2, t3),
              rss_load, mib_peak());
  return 0;
}
