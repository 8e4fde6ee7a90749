/* instrfn: functions as regions (built with -finstrument-functions, linked -rdynamic).
 *
 *   OMP_NUM_THREADS=p instrfn [L_ms=2]
 *
 * Planted truth (calls): main -> top (1 call) -> mid (4 calls) -> leaf (3 calls per mid: 12 in
 * all, L ms each). Then a parallel region in which every thread calls work() once (p calls,
 * L ms each). Function regions are named after the exported symbols, which is what the
 * SCALEA_FUNCTIONS_INCLUDE/EXCLUDE globs match.
 * Times: leaf 12*L ms in all, mid 4*3*L ms, top 12*L ms.
 * Measured truth printed: truth leaf (the 12 sleeps).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"

static double g_ms = 2;
int leaf_calls = 0;
double leaf_time = 0;

__attribute__((noinline)) void leaf(void) {
  ++leaf_calls;
  double t0 = now_s();
  sleep_ms(g_ms);
  leaf_time += now_s() - t0;
}

__attribute__((noinline)) void mid(void) {
  for (int i = 0; i < 3; ++i) leaf();
}

__attribute__((noinline)) void top(void) {
  for (int i = 0; i < 4; ++i) mid();
}

__attribute__((noinline)) void work(void) { sleep_ms(g_ms); }

int main(int argc, char** argv) {
  g_ms = arg_num(argc, argv, 1, 2);
  top();
#pragma omp parallel
  work();
  printf("instrfn: leaf called %d times\n", leaf_calls);
  print_truth("leaf", leaf_time);
  return 0;
}
