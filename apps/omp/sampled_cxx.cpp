// sampled_cxx: CPU work in two instances of one function template, for call-path sampling
// (docs/sampling.md, docs/groundtruth.md).
//
//   sampled_cxx [MS=200]
//
// work<1> runs MS ms of CPU time, work<2> MS/2; built at -O2 without frame pointers. Truth
// printed: truth cpu_work1, cpu_work2 (each instance's CPU time, as the thread measured it).
#include "planted.h"

template <int N>
__attribute__((noinline)) double work(double s) {
  double used = 0;
  PLANTED_CPU_WORK(s / N, used);
  return used;
}

int main(int argc, char** argv) {
  double s = arg_num(argc, argv, 1, 200) * 1e-3;
  double one = work<1>(s);
  double two = work<2>(s);
  print_truth("cpu_work1", one);
  print_truth("cpu_work2", two);
  return 0;
}
