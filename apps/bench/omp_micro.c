/*
 * omp_micro -- OpenMP microbenchmarks that stress one kind of OMPT event each.
 *
 *   omp_micro forkjoin [N]   N empty `#pragma omp parallel` regions
 *                            (parallel_begin/end, implicit_task begin/end,
 *                             implicit barrier sync_region(+wait) per thread)
 *   omp_micro barrier  [N]   one parallel region, N `#pragma omp barrier`
 *                            (sync_region + sync_region_wait begin/end per thread)
 *   omp_micro dynloop  [N]   one parallel region, `for schedule(dynamic,1)`
 *                            over N tiny iterations (one dispatch per chunk)
 *   omp_micro lock     [N]   one parallel region, each thread does N
 *                            omp_set_lock/omp_unset_lock pairs on one lock
 *                            (mutex_acquire/acquired/released per pair)
 *   omp_micro flush    [N]   one parallel region, each thread does N
 *                            `#pragma omp flush` (one flush callback each), as
 *                            the spin-waits of pipelined codes (NPB LU) do
 *   omp_micro for      [N]   one parallel region, N tiny `#pragma omp for`
 *                            loops one after the other, as the sweeps of NPB SP
 *                            do (work begin/end and the loop's implicit
 *                            barrier per loop and thread)
 *
 * Output, one line on stdout:
 *   bench=<name> n=<N> threads=<T> seconds=<wall>
 * where <wall> is omp_get_wtime() around the kernel only. Runtime start-up
 * (thread creation, tool initialisation) is kept out of the timing by a
 * warm-up parallel region before the clock starts. The thread count is the
 * runtime's choice (set it with OMP_NUM_THREADS); T is the team size the
 * kernel actually ran with.
 *
 * The defaults are sized so that each kernel takes roughly 0.3-1 s without a
 * tool on a 2-core machine with 2 threads.
 */
#include <omp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink; /* keeps the loop bodies from being optimised away */

static int warmup(void) {
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  return team;
}

/* Called by every thread of a kernel's team: the master says how large it is. */
static void note_team(int *team) {
  if (omp_get_thread_num() == 0)
    *team = omp_get_num_threads();
}

static double bench_forkjoin(long n, int *team) {
  double t0 = omp_get_wtime();
  for (long i = 0; i < n; ++i) {
#pragma omp parallel
    {
      /* Empty, except for a compiler barrier: clang's OpenMPOpt pass deletes
       * parallel regions whose body has no side effects. */
      __asm__ __volatile__("" ::: "memory");
    }
  }
  double t1 = omp_get_wtime();
  (void)team;
  return t1 - t0;
}

static double bench_barrier(long n, int *team) {
  double t0 = omp_get_wtime();
#pragma omp parallel
  {
    note_team(team);
    for (long i = 0; i < n; ++i) {
#pragma omp barrier
    }
  }
  double t1 = omp_get_wtime();
  return t1 - t0;
}

static double bench_dynloop(long n, int *team) {
  double t0 = omp_get_wtime();
#pragma omp parallel
  {
    note_team(team);
    long local = 0;
#pragma omp for schedule(dynamic, 1) nowait
    for (long i = 0; i < n; ++i)
      local += i & 7; /* tiny iteration */
#pragma omp atomic
    sink += local;
  }
  double t1 = omp_get_wtime();
  return t1 - t0;
}

static double bench_lock(long n, int *team) {
  omp_lock_t lock;
  omp_init_lock(&lock);
  long shared = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel
  {
    note_team(team);
    for (long i = 0; i < n; ++i) {
      omp_set_lock(&lock);
      ++shared;
      omp_unset_lock(&lock);
    }
  }
  double t1 = omp_get_wtime();
  omp_destroy_lock(&lock);
  sink += shared;
  return t1 - t0;
}

static double bench_flush(long n, int *team) {
  double t0 = omp_get_wtime();
#pragma omp parallel
  {
    note_team(team);
    long local = 0;
    for (long i = 0; i < n; ++i) {
#pragma omp flush
      ++local;
    }
#pragma omp atomic
    sink += local;
  }
  return omp_get_wtime() - t0;
}

static double bench_for(long n, int *team) {
  long total = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : total)
  {
    note_team(team);
    for (long i = 0; i < n; ++i) {
#pragma omp for
      for (int j = 0; j < 8; ++j)
        total += j & 3; /* tiny iteration */
    }
  }
  double secs = omp_get_wtime() - t0;
  sink += total;
  return secs;
}

struct bench {
  const char *name;
  long default_n;
  double (*run)(long n, int *team);
};

static const struct bench benches[] = {
    {"forkjoin", 400000, bench_forkjoin},
    {"barrier", 2000000, bench_barrier},
    {"dynloop", 4000000, bench_dynloop},
    {"lock", 4000000, bench_lock},
    {"flush", 10000000, bench_flush},
    {"for", 1000000, bench_for},
};
#define NBENCH (sizeof benches / sizeof benches[0])

static void usage(FILE *f) {
  fprintf(f, "usage: omp_micro {");
  for (size_t i = 0; i < NBENCH; ++i)
    fprintf(f, "%s%s", i ? "|" : "", benches[i].name);
  fprintf(f, "} [N]\n  defaults:");
  for (size_t i = 0; i < NBENCH; ++i)
    fprintf(f, " %s=%ld", benches[i].name, benches[i].default_n);
  fprintf(f, "\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(stdout);
    return 0;
  }
  const struct bench *b = NULL;
  for (size_t i = 0; i < NBENCH; ++i)
    if (!strcmp(argv[1], benches[i].name))
      b = &benches[i];
  if (!b) {
    fprintf(stderr, "omp_micro: unknown benchmark '%s'\n", argv[1]);
    usage(stderr);
    return 2;
  }
  long n = b->default_n;
  if (argc == 3) {
    char *end;
    errno = 0;
    n = strtol(argv[2], &end, 10);
    if (errno || end == argv[2] || *end || n <= 0) {
      fprintf(stderr, "omp_micro: N must be a positive integer, got '%s'\n", argv[2]);
      return 2;
    }
  }

  int team = warmup();
  double secs = b->run(n, &team);
  printf("bench=%s n=%ld threads=%d seconds=%.6f\n", b->name, n, team, secs);
  return 0;
}
