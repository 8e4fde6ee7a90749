/* single: a single construct whose body sleeps; the other threads wait at its barrier.
 *
 *   OMP_NUM_THREADS=p single [S_ms=50] [R=2]
 *
 * One parallel region, R single constructs in a row. Planted truth per single construct:
 *   - exactly one thread executes the body (executed = 1), which sleeps S ms
 *   - the p-1 others wait S ms in the single's implicit barrier (end of worksharing);
 *     the executor waits ~0 there.
 * Totals: single visits p*R, executed R, barrier wait sum (p-1)*R*S ms.
 * Measured truth printed: truth body (executors' body time, summed), truth wait (sum over the
 * non-executors of: end of the body minus their arrival at the construct).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "planted.h"

int main(int argc, char** argv) {
  double s = arg_num(argc, argv, 1, 50);
  int r = (int)arg_num(argc, argv, 2, 2);
  int runs = 0;
  int p = omp_get_max_threads();
  double* arrive = calloc((size_t)(p * r), sizeof(double));
  double* done = calloc((size_t)r, sizeof(double));
  int* executor = calloc((size_t)r, sizeof(int));
  double body = 0;
#pragma omp parallel
  {
    int me = omp_get_thread_num();
    for (int i = 0; i < r; ++i) {
      arrive[i * p + me] = now_s();
#pragma omp single /* SINGLE */
      {
        double t0 = now_s();
        sleep_ms(s);
        ++runs;
        done[i] = now_s();
        executor[i] = me;
        body += done[i] - t0;
      }
    }
  }
  double wait = 0;
  for (int i = 0; i < r; ++i)
    for (int t = 0; t < p; ++t)
      if (t != executor[i]) wait += done[i] - arrive[i * p + t];
  printf("single: %d bodies run, S=%g ms\n", runs, s);
  print_truth("body", body);
  print_truth("wait", wait);
  free(arrive);
  free(done);
  free(executor);
  return 0;
}
