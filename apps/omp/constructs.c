/* constructs: touches every OpenMP construct the tool records, once per thread or once in all.
 *
 *   OMP_NUM_THREADS=p OMP_CANCELLATION=true constructs
 *
 * Planted truth (p threads, one parallel region): sections SECTIONS with 2 sections; single;
 * masked (thread 0 only: 1 visit); taskloop TASKLOOP of 4 iterations with grainsize 1 (4 tasks);
 * taskgroup with one task; one task and a taskwait; atomic update; ordered loop of p iterations
 * (p ordered visits in all); flush; a loop with a reduction; a named critical section (p visits);
 * a nest lock taken twice by each thread (nested); a test lock tried by each thread; an explicit
 * barrier (p visits); a cancellable loop whose thread 0 cancels it (needs OMP_CANCELLATION=true).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"

int main(void) {
  omp_nest_lock_t nest;
  omp_lock_t test;
  omp_init_nest_lock(&nest);
  omp_init_lock(&test);
  long counter = 0, sum = 0, ordered_seen = 0, tested = 0;
#pragma omp parallel /* PARALLEL */
  {
    int p = omp_get_num_threads();
#pragma omp sections /* SECTIONS */
    {
#pragma omp section
      sleep_ms(1);
#pragma omp section
      sleep_ms(1);
    }
#pragma omp single /* SINGLE */
    counter += 1;
#pragma omp masked /* MASKED */
    __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED); /* no barrier: tasks may already run */
#pragma omp single /* SINGLE_TASKS */
    {
#pragma omp taskloop grainsize(1) /* TASKLOOP */
      for (int i = 0; i < 4; ++i) {
#pragma omp atomic
        counter += 1;
      }
#pragma omp taskgroup /* TASKGROUP */
      {
#pragma omp task /* TASK_IN_GROUP */
        {
#pragma omp atomic
          counter += 1;
        }
      }
#pragma omp task /* TASK */
      {
#pragma omp atomic
        counter += 1;
      }
#pragma omp taskwait /* TASKWAIT */
    }
#pragma omp atomic /* ATOMIC */
    counter += 1;
#pragma omp for ordered schedule(static, 1) /* ORDERED_LOOP */
    for (int i = 0; i < p; ++i) {
#pragma omp ordered /* ORDERED */
      ordered_seen += 1;
    }
#pragma omp flush /* FLUSH */
#pragma omp for reduction(+ : sum) /* REDUCTION */
    for (int i = 0; i < 1000; ++i) sum += i;
#pragma omp critical(constructs_crit) /* CRITICAL */
    __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED); /* the nest lock below is another lock */
    omp_set_nest_lock(&nest); /* NEST_LOCK */
    omp_set_nest_lock(&nest);
    __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED); /* other threads are in the critical */
    omp_unset_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
    if (omp_test_lock(&test)) { /* TEST_LOCK */
#pragma omp atomic
      tested += 1;
      omp_unset_lock(&test);
    }
#pragma omp barrier /* BARRIER */
#pragma omp for /* CANCEL_LOOP */
    for (int i = 0; i < p; ++i) {
      if (omp_get_thread_num() == 0) {
#pragma omp cancel for /* CANCEL */
      }
#pragma omp cancellation point for
    }
  }
  omp_destroy_nest_lock(&nest);
  omp_destroy_lock(&test);
  printf("constructs: counter=%ld sum=%ld ordered=%ld tested=%ld cancellation=%d\n", counter, sum,
         ordered_seen, tested, omp_get_cancellation());
  return 0;
}
