/* export_app: a small sleep-based OpenMP program with planted overheads of known kinds, used by
 * the export, HTML, diff and findings tests (tests/export/).
 *
 *   OMP_NUM_THREADS=p export_app [X_ms=20]
 *
 * 1. serial section: the master sleeps 2X ms outside any parallel region (loss of parallelism,
 *    unparallelized).
 * 2. imbalanced loop: 4 iterations, schedule(static), iteration i sleeps (i+1)X/2 ms (5X in all,
 *    at any p): at p = 4 thread i runs iteration i and waits (3-i)X/2 in the barrier at the end of
 *    the loop: 3X PE-ms, 0.75X ms of wall time (synchronization.barrier).
 * 3. critical section: every thread holds it X/4 ms (synchronization.critical waits).
 * Sleep-based work keeps the planted sizes exact even with more threads than cores. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void sleep_ms(double ms) {
  if (ms <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static void serial_part(double x) { sleep_ms(2 * x); }

int main(int argc, char** argv) {
  double x = argc > 1 ? atof(argv[1]) : 20;
  serial_part(x);
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int i = 0; i < 4; ++i) sleep_ms((i + 1) * x / 2);
#pragma omp critical
    sleep_ms(x / 4);
  }
  printf("export_app: %d threads, X=%g ms\n", omp_get_max_threads(), x);
  return 0;
}
