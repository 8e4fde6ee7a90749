/* many_threads: many threads (32 on a 2-core machine) doing a known number of synchronizations.
 *
 *   OMP_NUM_THREADS=32 many_threads [K=10] [H_ms=0.5]
 *
 * One parallel region of p threads. Each thread runs K rounds of: explicit barrier BARRIER, then
 * the critical section CRITICAL holding it H ms. Then a dynamic loop DYNAMIC of 4p iterations.
 * Planted truth: team size p; p implicit tasks; BARRIER visits p*K; CRITICAL visits p*K with
 * p*K*H ms held in all (the critical region's time is at least that); DYNAMIC: p visits and 4p
 * iterations in all. Measured truth printed: truth hold (time inside the critical section, summed).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"

int main(int argc, char** argv) {
  int k = (int)arg_num(argc, argv, 1, 10);
  double h = arg_num(argc, argv, 2, 0.5);
  long entered = 0, iters = 0;
  double hold = 0;
  int p = 0;
#pragma omp parallel /* PARALLEL */
  {
#pragma omp single
    p = omp_get_num_threads();
    for (int r = 0; r < k; ++r) {
#pragma omp barrier /* BARRIER */
#pragma omp critical(many) /* CRITICAL */
      {
        double t0 = now_s();
        ++entered;
        sleep_ms(h);
        hold += now_s() - t0;
      }
    }
#pragma omp for schedule(dynamic) reduction(+ : iters) /* DYNAMIC */
    for (int i = 0; i < 4 * p; ++i) iters += 1;
  }
  printf("many_threads: p=%d critical entries=%ld iterations=%ld\n", p, entered, iters);
  print_truth("hold", hold);
  return 0;
}
