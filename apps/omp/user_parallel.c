/* user_parallel: a user region enclosing a parallel region, as a program marks a phase of its run.
 *
 *   OMP_NUM_THREADS=p user_parallel [S_ms=20] [W_ms=30]
 *
 * Planted truth: the initial thread opens the user region "phase" (1 visit), sleeps S ms in it on
 * its own (SERIAL), then runs a parallel for (PHASE_PAR) of p iterations, one per thread, each
 * sleeping W ms, and closes "phase". The workers never enter "phase": their trees hold the
 * parallel region below the user region's call path (every thread's tree shares the master's
 * call paths), with the user region's node not visited there.
 * So on every thread that ran "phase" (the initial thread alone) its inclusive time is at least
 * its children's and its exclusive time is S; `scalea drg` shows an exclusive time of S, not
 * S - (p - 1) W, and `scalea report --view times` averages "phase" over the one thread that ran it.
 * Measured truth printed: truth serial (the S sleep), truth phase (the user region, initial
 * thread).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"
#include "scalea/scalea.h"

int main(int argc, char** argv) {
  double s = arg_num(argc, argv, 1, 20);
  double w = arg_num(argc, argv, 2, 30);
  int p = omp_get_max_threads();
  double phase = now_s();
  SCALEA_REGION_BEGIN("phase"); /* PHASE */
  double t0 = now_s();
  sleep_ms(s); /* SERIAL */
  double serial = now_s() - t0;
#pragma omp parallel for schedule(static, 1) /* PHASE_PAR */
  for (int i = 0; i < p; ++i) sleep_ms(w);
  SCALEA_REGION_END("phase");
  phase = now_s() - phase;
  print_truth("serial", serial);
  print_truth("phase", phase);
  return 0;
}
