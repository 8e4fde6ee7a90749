/* study_app: a small strong-scaling OpenMP program for the scaling-study tests (tests/study/).
 *
 *   OMP_NUM_THREADS=p study_app [unit_ms=5] [fail_threads=0]
 *
 * Sleep-based, so the truth holds with more threads than cores. Planted, with u = unit_ms:
 *   - serial part: the master sleeps 4u before the parallel region (unparallelized code: at p
 *     threads it costs 4u - 4u/p of loss of parallelism)
 *   - parallel part: a statically scheduled loop of 8 iterations of u each (8u/p per thread when
 *     p divides 8: balanced, speedup p)
 *   so the program runs 12u at p = 1 and 4u + 8u/p at p (speedup 12/(4 + 8/p): 1.5 at 2, 2 at 4).
 * With fail_threads > 0 the program fails (message on stderr, exit status 3) when it runs with
 * that many threads: the study must report the run and go on.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../apps/omp/planted.h"

int main(int argc, char** argv) {
  double u = arg_num(argc, argv, 1, 5);
  int fail_threads = (int)arg_num(argc, argv, 2, 0);
  int p = omp_get_max_threads();
  if (fail_threads > 0 && p == fail_threads) {
    fprintf(stderr, "study_app: planted failure at %d threads\n", p);
    return 3;
  }
  sleep_ms(4 * u); /* SERIAL */
#pragma omp parallel for schedule(static) /* LOOP */
  for (int i = 0; i < 8; ++i) sleep_ms(u);
  printf("study_app: %d threads, unit %g ms\n", p, u);
  return 0;
}
