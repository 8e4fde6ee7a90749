/* userapi: the C user-region API, nested regions, and the enable/disable switch.
 *
 *   OMP_NUM_THREADS=p userapi [I_ms=10] [P_ms=20]
 *
 * Planted truth (recording on at start):
 *   - user "outer" (1 visit, time 3*I ms) holding user "inner" (3 visits, 3*I ms in all)
 *   - then scalea_measure_disable(): user "hidden" (sleeps 50 ms) with a parallel region HIDDEN_PAR
 *     inside, whose threads open user "hidden_par": none of these is recorded
 *   - then scalea_measure_enable(): user "after" (1 visit, I ms), and a parallel region PER_THREAD
 *     in which every thread runs user "per_thread" (p visits, P ms each)
 * Under SCALEA_START=off nothing is recorded before scalea_measure_enable(): "outer" and "inner"
 * are absent too. stdout reports scalea_measure_enabled() at three points.
 * Measured truth printed: truth inner (3 sleeps), after, per_thread (sum over threads).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"
#include "scalea/scalea.h"

int main(int argc, char** argv) {
  double i_ms = arg_num(argc, argv, 1, 10);
  double p_ms = arg_num(argc, argv, 2, 20);
  int at_start = scalea_measure_enabled();
  double inner = 0, after_t = 0, per_thread = 0, t0;
  SCALEA_REGION_BEGIN("outer");
  for (int i = 0; i < 3; ++i) {
    SCALEA_REGION_BEGIN("inner");
    t0 = now_s();
    sleep_ms(i_ms);
    inner += now_s() - t0;
    SCALEA_REGION_END("inner");
  }
  SCALEA_REGION_END("outer");

  scalea_measure_disable();
  int while_off = scalea_measure_enabled();
  SCALEA_REGION_BEGIN("hidden");
  sleep_ms(50);
#pragma omp parallel /* HIDDEN_PAR */
  {
    SCALEA_REGION_BEGIN("hidden_par");
    sleep_ms(1);
    SCALEA_REGION_END("hidden_par");
  }
  SCALEA_REGION_END("hidden");
  scalea_measure_enable();
  int after = scalea_measure_enabled();

  SCALEA_REGION_BEGIN("after");
  t0 = now_s();
  sleep_ms(i_ms);
  after_t = now_s() - t0;
  SCALEA_REGION_END("after");
#pragma omp parallel reduction(+ : per_thread) /* PER_THREAD */
  {
    SCALEA_REGION_BEGIN("per_thread");
    double s0 = now_s();
    sleep_ms(p_ms);
    per_thread += now_s() - s0;
    SCALEA_REGION_END("per_thread");
  }
  printf("userapi: enabled at start=%d while off=%d after enable=%d\n", at_start, while_off, after);
  print_truth("inner", inner);
  print_truth("after", after_t);
  print_truth("per_thread", per_thread);
  return 0;
}
