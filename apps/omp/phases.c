/* phases: a program that goes wrong half-way: balanced steps, then imbalanced ones (the planted
 * program of the on-line view and the time-series report, docs/online.md).
 *
 *   OMP_NUM_THREADS=p phases [steps=36] [switch=24] [X_ms=50]
 *
 * Each step is one parallel region with a statically scheduled loop of p iterations (iteration i
 * on thread i). Planted truth:
 *   - steps before `switch`: every thread sleeps X ms: the loop's barrier waits ~0, the step
 *     lasts X ms
 *   - steps from `switch` on: thread i sleeps (i+1)*X ms: thread i waits (p-1-i)*X ms in the
 *     loop's barrier, the step lasts p*X ms; synchronization per step = X*(p-1)/2 ms (the sum of
 *     the waits over p), a share (p-1)/(2p) of the step's wall time (25 % at p = 2); thread i is
 *     busy (i+1)/p of the time
 * The loop is at the line marked LOOP, the parallel region at PARALLEL.
 * Measured truth printed (wall-clock times: CLOCK_REALTIME, s since the epoch):
 *   truth begin_epoch_s T      the first step began
 *   truth switch_epoch_s T     the first imbalanced step began
 *   truth end_epoch_s T        the last step ended
 *   truth wait I FROM TO       per step and thread I: its time in the loop's barrier, from its
 *                              arrival at the loop's end until it left the barrier (the time a
 *                              sleep overran is measured, not planted; so is the time the
 *                              barrier took to release a thread that waited for a CPU)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "planted.h"

static double epoch_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  int steps = (int)arg_num(argc, argv, 1, 36);
  int change = (int)arg_num(argc, argv, 2, 24);
  double x = arg_num(argc, argv, 3, 50);
  int p = omp_get_max_threads();
  double* arrive = calloc((size_t)steps * (size_t)p, sizeof(double));
  double* leave = calloc((size_t)steps * (size_t)p, sizeof(double));
  double switched = 0, begin = epoch_s();
  for (int s = 0; s < steps; ++s) {
    int imbalanced = s >= change;
    if (s == change) switched = epoch_s();
    double* a = arrive + (size_t)s * (size_t)p;
    double* l = leave + (size_t)s * (size_t)p;
#pragma omp parallel /* PARALLEL */
    {
      int n = omp_get_num_threads();
#pragma omp for schedule(static) /* LOOP */
      for (int i = 0; i < n; ++i) {
        int me = omp_get_thread_num();
        sleep_ms(imbalanced ? (me + 1) * x : x);
        a[me] = epoch_s();
      }
      l[omp_get_thread_num()] = epoch_s(); /* after the loop's barrier */
    }
  }
  double end = epoch_s();
  printf("phases: %d threads, %d steps, imbalanced from step %d, X=%g ms\n", p, steps, change, x);
  printf("truth begin_epoch_s %.6f\n", begin);
  printf("truth switch_epoch_s %.6f\n", switched);
  printf("truth end_epoch_s %.6f\n", end);
  for (int s = 0; s < steps; ++s) {
    double *a = arrive + (size_t)s * (size_t)p, *l = leave + (size_t)s * (size_t)p;
    for (int i = 0; i < p; ++i)
      if (a[i] > 0 && l[i] >= a[i]) printf("truth wait %d %.6f %.6f\n", i, a[i], l[i]);
  }
  free(arrive);
  free(leave);
  return 0;
}
