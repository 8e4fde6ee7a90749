/* locks: a contended OpenMP lock and a contended critical section, in lock-step rounds.
 *
 *   OMP_NUM_THREADS=p locks [H_ms=10] [K=3]
 *
 * One parallel region. K rounds on the lock, then K rounds on the critical section. Each round
 * starts at an explicit barrier; then every thread acquires the lock (or enters the critical
 * section `crit`) once and holds it for H ms. In a round the threads get it one after another,
 * so the j-th thread to get it waits j*H ms (j = 0..p-1), whatever the order. Planted truth:
 *   - lock: p*K visits; total acquire wait K*H*p(p-1)/2 ms; total time held K*p*H ms
 *     (region time = wait + hold: K*H*p(p+1)/2 ms)
 *   - critical `crit`: the same figures
 * Measured truth printed (sums over threads): truth lock_wait, lock_hold, critical_wait,
 * critical_hold (acquire call -> acquired; acquired -> release call).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"

int main(int argc, char** argv) {
  double h = arg_num(argc, argv, 1, 10);
  int k = (int)arg_num(argc, argv, 2, 3);
  omp_lock_t lock;
  omp_init_lock(&lock);
  long held = 0;
  double lock_wait = 0, lock_hold = 0, crit_wait = 0, crit_hold = 0;
#pragma omp parallel reduction(+ : lock_wait, lock_hold, crit_wait, crit_hold)
  {
    for (int r = 0; r < k; ++r) {
#pragma omp barrier
      double t0 = now_s();
      omp_set_lock(&lock); /* LOCK */
      double t1 = now_s();
      sleep_ms(h);
      ++held;
      double t2 = now_s();
      omp_unset_lock(&lock);
      lock_wait += t1 - t0;
      lock_hold += t2 - t1;
    }
    for (int r = 0; r < k; ++r) {
#pragma omp barrier
      double t0 = now_s(), t1 = 0, t2 = 0;
#pragma omp critical(crit) /* CRITICAL */
      {
        t1 = now_s();
        sleep_ms(h);
        ++held;
        t2 = now_s();
      }
      crit_wait += t1 - t0;
      crit_hold += t2 - t1;
    }
  }
  omp_destroy_lock(&lock);
  printf("locks: %ld acquisitions, H=%g ms, K=%d\n", held, h, k);
  print_truth("lock_wait", lock_wait);
  print_truth("lock_hold", lock_hold);
  print_truth("critical_wait", crit_wait);
  print_truth("critical_hold", crit_hold);
  return 0;
}
