/* inlined_regions: constructs the compiler copies by inlining or leaves by a tail jump, for the
 * loader's region identity (docs/symbols.md; tests/integration/test_symbols.cpp). Built at -O2,
 * sibling calls on, with -g (inlined_regions_g) and without (inlined_regions).
 *
 *   OMP_NUM_THREADS=p inlined_regions
 *
 * - sweep(): a parallel region with a loop, inlined into main at two call sites: two fork calls,
 *   one outlined body.
 * - spawn(): a task (with a critical section inside) as the last statement of an inline function,
 *   inlined into left() and right(): each of them ends with a tail jump into the runtime, so the
 *   task's return address is the call of left() or right().
 * - drain(): a taskwait ending a function called twice: a tail jump too.
 * Prints the sum the tasks added: 3 * (1 + 2) = 9.
 */
#include <stdio.h>

#define N 4096
static double g_a[N];
static int g_sum;
volatile int g_calls;

static inline __attribute__((always_inline)) void sweep(double f) {
#pragma omp parallel /* SWEEP */
  {
#pragma omp for /* SWEEP_LOOP */
    for (int i = 0; i < N; ++i) g_a[i] = g_a[i] * f + 1;
  }
}

static inline __attribute__((always_inline)) void spawn(int v) {
#pragma omp task firstprivate(v) /* SPAWN */
  {
#pragma omp critical /* SPAWN_CRITICAL */
    g_sum += 3 * v;
  }
}

__attribute__((noinline)) void left(int v) {
  ++g_calls;
  spawn(v);
}

__attribute__((noinline)) void right(int v) {
  ++g_calls;
  spawn(v);
}

__attribute__((noinline)) void drain(void) {
  ++g_calls;
#pragma omp taskwait /* DRAIN */
}

int main(void) {
  sweep(1.0);
  sweep(0.5);
#pragma omp parallel /* TASKS */
#pragma omp single /* TASKS_SINGLE */
  {
    left(1);
    drain();
    right(2);
    drain();
  }
  printf("inlined_regions: sum %d\n", g_sum);
  return 0;
}
