/* load_app: load tests of the recorder (tests/load/run_load.py). Compute-light and
 * sleep-free, so it stays fast with 64 threads on 2 cores (run it with OMP_WAIT_POLICY=passive).
 *
 *   load_app threads P R     one team of P threads; each thread runs R rounds of the user region
 *                            "load.tick" and an explicit barrier.
 *                            Truth: tick visits P*R, barrier visits P*R, implicit tasks P.
 *   load_app nested A B C R  parallel regions nested 3 deep (A x B x C threads, needs
 *                            OMP_MAX_ACTIVE_LEVELS>=3); every thread of level 1 runs R level-2
 *                            regions; every innermost thread runs the user region "load.leaf".
 *                            Truth: leaf visits A*R*B*C.
 *   load_app tasks P N B     one team of P threads; one thread creates N explicit tasks (a
 *                            taskwait after every B); each task adds 1 to a counter.
 *                            Truth: N tasks executed, the counter is N.
 *   load_app regions N K [P] one thread (or each of a team of P threads) enters N distinct user
 *                            regions ("load.r<i>", names made at run time, each string allocated
 *                            once), K times each. Truth: N user regions, each with K visits on
 *                            each thread.
 *   load_app events P E      a team of P threads; each thread runs E/2 begin/end pairs of the
 *                            user region "load.hot" (E events per thread).
 *                            Truth: hot visits E/2 on each thread.
 *   load_app forkjoin N      N empty parallel regions of 2 threads, one after the other.
 *                            Truth: parallel visits 2*N; the tool's memory must not grow with N.
 *   load_app name NAME       one visit of a user region named NAME, bytes as given (the bad-input
 *                            tests of the CLI use a name that is not UTF-8).
 *   load_app taskdeep P D    a team of P threads; one runs a recursion of D untied tasks, each
 *                            creating the next and an empty one and waiting for them (taskwait),
 *                            as a depth-first search does (BOTS concom): D task frames open at
 *                            once, and the other threads steal tasks at ever deeper levels. Needs
 *                            stacks of about 1 KiB per level (run_load.py raises the main
 *                            thread's limit and sets OMP_STACKSIZE).
 *                            Truth: 2 (D - 1) tasks executed, the tree D task levels deep.
 *   load_app deep D          one thread opens the user region "load.deep" D times nested (a
 *                            recursion D deep), then closes them: a very deep, valid tree for the
 *                            bad-input tests of the CLI (tests/cli).
 * Each mode prints "load_app: <mode> ... ok" with the figures it computed itself; with the tool
 * absent or disabled it runs the same (the baseline for the memory bound).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalea/scalea.h"

static long num(int argc, char** argv, int i) {
  if (i >= argc) {
    fprintf(stderr, "load_app: missing argument %d\n", i);
    exit(2);
  }
  return strtol(argv[i], NULL, 10);
}

static volatile long sink;
static char** g_names; /* reachable until exit: the tool may use the names until it writes */

static long g_deep_done = 0;
static void deep_task(long d) {
  __atomic_fetch_add(&g_deep_done, 1, __ATOMIC_RELAXED);
  if (d > 1) {
#pragma omp task untied firstprivate(d)
    deep_task(d - 1);
#pragma omp task untied
    __atomic_fetch_add(&g_deep_done, 0, __ATOMIC_RELAXED);
#pragma omp taskwait
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: load_app threads|nested|forkjoin|tasks|taskdeep|regions|events|name|deep ARGS...\n");
    return 2;
  }
  const char* mode = argv[1];
  if (!strcmp(mode, "threads")) {
    int p = (int)num(argc, argv, 2);
    long r = num(argc, argv, 3);
    long ticks = 0;
#pragma omp parallel num_threads(p) reduction(+ : ticks)
    {
      for (long i = 0; i < r; ++i) {
        SCALEA_REGION_BEGIN("load.tick");
        __atomic_store_n(&sink, i, __ATOMIC_RELAXED); /* every thread writes it */
        ++ticks;
        SCALEA_REGION_END("load.tick");
#pragma omp barrier
      }
    }
    printf("load_app: threads p=%d ticks=%ld ok\n", p, ticks);
  } else if (!strcmp(mode, "nested")) {
    int a = (int)num(argc, argv, 2), b = (int)num(argc, argv, 3), c = (int)num(argc, argv, 4);
    long r = num(argc, argv, 5);
    long leaves = 0;
    int max_threads = 0;
#pragma omp parallel num_threads(a) reduction(+ : leaves)
    {
      for (long i = 0; i < r; ++i) {
#pragma omp parallel num_threads(b) reduction(+ : leaves)
        {
#pragma omp parallel num_threads(c) reduction(+ : leaves)
          {
            SCALEA_REGION_BEGIN("load.leaf");
            ++leaves;
            if (omp_get_level() != 3) leaves += 1000000000L; /* nesting refused: visible */
            SCALEA_REGION_END("load.leaf");
#pragma omp critical
            if (omp_get_num_threads() * omp_get_team_size(2) * omp_get_team_size(1) > max_threads)
              max_threads = omp_get_num_threads() * omp_get_team_size(2) * omp_get_team_size(1);
          }
        }
      }
    }
    printf("load_app: nested %dx%dx%d leaves=%ld max_threads=%d ok\n", a, b, c, leaves, max_threads);
  } else if (!strcmp(mode, "forkjoin")) {
    long n = num(argc, argv, 2), members = 0;
    for (long i = 0; i < n; ++i) {
#pragma omp parallel num_threads(2) reduction(+ : members)
      ++members;
    }
    printf("load_app: forkjoin n=%ld members=%ld ok\n", n, members);
  } else if (!strcmp(mode, "tasks")) {
    int p = (int)num(argc, argv, 2);
    long n = num(argc, argv, 3), batch = num(argc, argv, 4);
    long done = 0;
#pragma omp parallel num_threads(p)
#pragma omp single
    {
      for (long i = 0; i < n; ++i) {
#pragma omp task shared(done)
        __atomic_fetch_add(&done, 1, __ATOMIC_RELAXED);
        if ((i + 1) % batch == 0) {
#pragma omp taskwait
        }
      }
#pragma omp taskwait
    }
    printf("load_app: tasks n=%ld done=%ld ok\n", n, done);
  } else if (!strcmp(mode, "taskdeep")) {
    int p = (int)num(argc, argv, 2);
    long d = num(argc, argv, 3);
#pragma omp parallel num_threads(p)
#pragma omp single
    deep_task(d);
    printf("load_app: taskdeep d=%ld done=%ld ok\n", d, g_deep_done);
  } else if (!strcmp(mode, "regions")) {
    long n = num(argc, argv, 2), k = num(argc, argv, 3);
    char** names = g_names = malloc((size_t)n * sizeof *names);
    for (long i = 0; i < n; ++i) {
      names[i] = malloc(24);
      snprintf(names[i], 24, "load.r%ld", i);
    }
    long visits = 0;
    if (argc > 4) {
      int p = (int)num(argc, argv, 4);
#pragma omp parallel num_threads(p) reduction(+ : visits)
      for (long j = 0; j < k; ++j)
        for (long i = 0; i < n; ++i) {
          scalea_region_begin_loc(names[i], "load_app.c", (int)i + 1, "main");
          ++visits;
          scalea_region_end(names[i]);
        }
    } else {
      for (long j = 0; j < k; ++j)
        for (long i = 0; i < n; ++i) {
          scalea_region_begin_loc(names[i], "load_app.c", (int)i + 1, "main");
          ++visits;
          scalea_region_end(names[i]);
        }
    }
    /* The names stay allocated: the tool may keep pointers to them until it writes. */
    printf("load_app: regions n=%ld visits=%ld ok\n", n, visits);
  } else if (!strcmp(mode, "events")) {
    int p = (int)num(argc, argv, 2);
    long e = num(argc, argv, 3);
    long pairs = 0;
#pragma omp parallel num_threads(p) reduction(+ : pairs)
    {
      for (long i = 0; i < e / 2; ++i) {
        SCALEA_REGION_BEGIN("load.hot");
        ++pairs;
        SCALEA_REGION_END("load.hot");
      }
    }
    printf("load_app: events p=%d pairs=%ld ok\n", p, pairs);
  } else if (!strcmp(mode, "name")) {
    if (argc < 3) {
      fprintf(stderr, "load_app: missing argument 2\n");
      return 2;
    }
    SCALEA_REGION_BEGIN(argv[2]);
    SCALEA_REGION_END(argv[2]);
    printf("load_app: name ok\n");
  } else if (!strcmp(mode, "deep")) {
    long d = num(argc, argv, 2);
    for (long i = 0; i < d; ++i) SCALEA_REGION_BEGIN("load.deep");
    for (long i = 0; i < d; ++i) SCALEA_REGION_END("load.deep");
    printf("load_app: deep d=%ld ok\n", d);
  } else {
    fprintf(stderr, "load_app: unknown mode %s\n", mode);
    return 2;
  }
  return 0;
}
