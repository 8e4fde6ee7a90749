/* imbalance: a statically scheduled loop whose iterations sleep unevenly.
 *
 *   OMP_NUM_THREADS=p imbalance [X_ms=20] [reps=1]
 *
 * The loop runs p iterations with schedule(static), so iteration i runs on thread i, which sleeps
 * (i+1)*X ms. Planted truth, per repetition (one parallel region per repetition):
 *   - loop time on thread i: (i+1)*X ms
 *   - wait in the loop's implicit barrier (end of worksharing) on thread i: (p-1-i)*X ms
 *     (sum over threads: X*p(p-1)/2 ms); the join barrier after it waits ~0
 *   - parallel region wall time: p*X ms
 * Built with gcc (imbalance_gcc), the loop is invisible to the runtime (static schedule, inlined)
 * and gcc merges its barrier with the join barrier: the same waits appear in the join barrier.
 * The loop is at the line marked LOOP, the parallel region at PARALLEL.
 * Measured truth printed (sums over repetitions, i = OpenMP thread number):
 *   truth body.<i>  time thread i spent in its iteration
 *   truth wait.<i>  last arrival at the loop's end minus thread i's arrival
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "planted.h"

int main(int argc, char** argv) {
  double x = arg_num(argc, argv, 1, 20);
  int reps = (int)arg_num(argc, argv, 2, 1);
  int p = omp_get_max_threads();
  double* body = calloc((size_t)p, sizeof(double));
  double* wait = calloc((size_t)p, sizeof(double));
  double* arrive = calloc((size_t)p, sizeof(double));
  for (int r = 0; r < reps; ++r) {
#pragma omp parallel /* PARALLEL */
    {
      int n = omp_get_num_threads();
#pragma omp for schedule(static) /* LOOP */
      for (int i = 0; i < n; ++i) {
        int me = omp_get_thread_num();
        double t0 = now_s();
        sleep_ms((me + 1) * x);
        arrive[me] = now_s();
        body[me] += arrive[me] - t0;
      }
    }
    double last = 0;
    for (int i = 0; i < p; ++i) last = arrive[i] > last ? arrive[i] : last;
    for (int i = 0; i < p; ++i) wait[i] += last - arrive[i];
  }
  printf("imbalance: %d threads, X=%g ms, %d repetitions\n", p, x, reps);
  char key[32];
  for (int i = 0; i < p; ++i) {
    snprintf(key, sizeof key, "body.%d", i);
    print_truth(key, body[i]);
    snprintf(key, sizeof key, "wait.%d", i);
    print_truth(key, wait[i]);
  }
  free(body);
  free(wait);
  free(arrive);
  return 0;
}
