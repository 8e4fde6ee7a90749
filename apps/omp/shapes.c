/* shapes: small programs of the shapes real codes have, each with a planted, known overhead, for
 * the diagnoses the classifier must get right (tests/groundtruth, docs/groundtruth.md).
 *
 *   OMP_NUM_THREADS=p shapes MODE [ARGS...]
 *
 * slowloop N T C   `omp for` over N iterations; each sleeps T ms x (1 + C (team - 1)): the same
 *                  divided work, slower at p > 1 (as page faults on fresh memory or a shared
 *                  memory bus make it). Not replicated: the extra time is unidentified.
 *                  Truth: work (sum of the iterations' sleeps), extra (beyond N T).
 * pipeline S K T [N X]  a wavefront: `omp for schedule(static,1) nowait` over S stages; stage
 *                  s runs K steps of T ms, step k only after stage s-1 finished its step k,
 *                  polling a shared flag with `omp flush` (as NPB LU does); with N > 0, then in
 *                  the same region an ordinary `omp for schedule(static)` over N iterations of
 *                  rising cost (iteration i sleeps X (i + 1) / N ms). Truth: spin (time spent
 *                  polling, summed over threads), work.
 * tasks S N T      S ms of serial work, then `parallel { single nowait { N tasks of T ms } }`.
 *                  Truth: serial, tasks (sum of the task bodies).
 * partial M S      per round (3 rounds): `masked` body of M ms (the others go on to an explicit
 *                  barrier), then `sections` with two sections of S ms each (with more than two
 *                  threads, the others have none). Truth: masked, sections.
 * reduction N T    `omp for reduction(+:x)` over N iterations of T ms, 4 times.
 * recursive D T    a binary tree of tasks D levels deep (task per child, taskwait), leaves sleep
 *                  T ms. Truth: leaves (sum of the leaves' sleeps).
 * jitter X         run-to-run noise: a single construct whose body sleeps X ms times (n mod 3), n
 *                  counting the runs in the file $SHAPES_COUNTER (0 without it), then a balanced
 *                  loop of 8 iterations of 5 ms. Truth: body.
 * untied D F T L R  R rounds of a tree D levels deep, F children per node, in an untied task
 *                  created in a `single nowait` (as BOTS health and sparselu): each node creates
 *                  its children (untied tasks in the top L levels, calls below), sleeps T ms, then
 *                  waits for them; the creating thread goes on to the join barrier and runs tasks
 *                  there. Truth: work (sum of the nodes' sleeps).
 * scratch M R     R rounds of an `omp for` over the pages of an M MiB scratch buffer that only
 *                  the parallel version uses, mapped anew each round and given back after it (as
 *                  LULESH's force arrays with more than one thread): every page faults in every
 *                  round, at p > 1 only. Truth: faults (the pages touched), work (the loop's time
 *                  summed over threads).
 * cpuwork R T      R rounds of an `omp for schedule(static)` with one iteration per thread, each
 *                  computing until its thread used T ms of CPU time (CLOCK_THREAD_CPUTIME_ID):
 *                  the same work on every thread, however the CPUs are shared. Truth: cpu (the
 *                  threads' CPU time in the loop, summed).
 * stuck S L        a run that does not finish: `parallel sections` with two sections; the first
 *                  sleeps S ms and goes on to the sections' barrier, the second waits for a flag
 *                  nobody sets (sleeping 1 ms at a time) for L s, so the first waits at the
 *                  barrier all that time. Meant to be ended by a signal (`timeout`) before L.
 *                  Prints "stuck: waiting" when both sections have started. With a fourth
 *                  argument `exit`, the first section calls exit(0) after its S ms instead (a
 *                  program that exits while another thread is inside a construct).
 * forkjoin R N T   R parallel regions back to back, each an `omp for` over N iterations of T ms,
 *                  with no code between them (as NPB SP's time steps): the team forks and joins R
 *                  times. Truth: serial (the initial thread's time between the regions), work.
 * chunks N C T     an `omp for schedule(dynamic, C)` over N iterations (N a multiple of C), each
 *                  chunk a sleep: the first chunk's iterations T ms each, the others' T/10: the
 *                  thread that takes the first chunk works C T, a dynamic schedule's last
 *                  chunk decides the end (a loop already dynamic, whose chunks are too large).
 *                  Truth: work (sum of the iterations' sleeps).
 * runtime R N T   R time steps of a `parallel for schedule(runtime)` over N iterations whose cost
 *                  rises: iteration i sleeps T (i + 1) / N ms (a triangle: the default static
 *                  schedule gives the last thread most of the work; OMP_SCHEDULE chooses another
 *                  without a rebuild). Prints "runtime: checksum C", the sum of the indices, the
 *                  same for every schedule; with SHAPES_BREAK in the environment it is one more
 *                  (a setting that changes the output). Truth: work.
 * rising R N T     the same loop as runtime with no schedule clause (libomp: static).
 * steps R N T     R time steps, each of two parallel regions (for the on-line tuner,
 *                  SCALEA_TUNE): a `parallel` whose `omp for schedule(runtime) nowait` runs N
 *                  iterations of rising cost (i sleeps T (i + 1) / N ms), each thread timing its
 *                  own part; then a `parallel for schedule(static)` and a `parallel for` with
 *                  no schedule clause over the same iterations, each recording which thread ran
 *                  each iteration (loops whose schedule nobody may change). Prints "step S:
 *                  time X imbalance Y" per step (the runtime loop's wall time and its slowest
 *                  minus its fastest thread, s), "steps: checksum C" (the indices summed over
 *                  the loops and all steps: the same for every schedule), "steps: static
 *                  assignment unchanged" and "steps: unclaused assignment unchanged" (or
 *                  "changed at step S"), "steps: schedule outside unchanged" (omp_get_schedule
 *                  between the steps; or "changed at step S").
 * twoloops R N T  R rounds of a parallel region with two `omp for schedule(static)` loops over
 *                  N iterations: the first's iteration i sleeps T (i + 1) / N ms and writes
 *                  a[i], the second reads a[i] only (so a nowait on the first is safe: both
 *                  loops give each thread the same iterations); first, a parallel region that
 *                  only reads the team's size in `masked` (as NPB's codes do). Prints the sum.
 * barriers P N    one parallel region, P passes of: an `omp for` over N cheap iterations, then
 *                  an explicit barrier right after it (redundant: the loop's own barrier holds
 *                  the threads already), an `omp for nowait` reading the first loop's results of
 *                  other threads, then an explicit barrier (needed: the next pass writes what it
 *                  read). The loops are entered P times per execution of their region (the
 *                  serial loop of passes around them). Prints the sum.
 * tiny R N         R rounds of an `omp for schedule(dynamic)` over N iterations of a few
 *                  nanoseconds of arithmetic each: every chunk is one iteration, and taking it
 *                  from the runtime costs more than the iteration. Prints the sum.
 * critical N      `parallel for` over N iterations, each adding to a shared sum inside `omp
 *                  critical` (a single update that atomic or a reduction does without the lock):
 *                  the threads queue at the critical section. Prints the sum.
 * teams R N T      R rounds of `teams distribute parallel for num_teams(2) thread_limit(1)` over
 *                  N iterations of T ms (a host league of two teams, whatever OMP_NUM_THREADS:
 *                  each team's share of the iterations in a parallel region of its own, on its
 *                  own thread). Both teams work all the time: no code is serial. Truth: work
 *                  (sum of the iterations' sleeps), team0 and team1 (each team's part of it).
 */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "planted.h"

static double sum_atomic(double* where, double v) {
#pragma omp atomic
  *where += v;
  return v;
}

static int slowloop(int argc, char** argv) {
  int n = (int)arg_num(argc, argv, 2, 8);
  double t = arg_num(argc, argv, 3, 10), c = arg_num(argc, argv, 4, 0.5);
  double work = 0;
#pragma omp parallel /* PAR_SLOW */
  {
    double f = 1 + c * (omp_get_num_threads() - 1);
#pragma omp for schedule(static) /* LOOP_SLOW */
    for (int i = 0; i < n; ++i) {
      double t0 = now_s();
      sleep_ms(t * f);
      sum_atomic(&work, now_s() - t0);
    }
  }
  print_truth("work", work);
  print_truth("extra", work - n * t * 1e-3);
  return 0;
}

static void rising_iteration(int i, int n, double t, double* work);

static int pipeline(int argc, char** argv) {
  int stages = (int)arg_num(argc, argv, 2, 4), k_steps = (int)arg_num(argc, argv, 3, 4);
  double t = arg_num(argc, argv, 4, 10);
  int after = (int)arg_num(argc, argv, 5, 0);
  double after_t = arg_num(argc, argv, 6, 4);
  /* Steps each stage finished; read and written atomically (a data race otherwise, which TSan
   * reports), the polling still with omp flush as NPB LU does. */
  int* done = calloc((size_t)stages, sizeof(int));
  double spin = 0, work = 0;
#pragma omp parallel /* PAR_PIPE */
  {
#pragma omp for schedule(static, 1) nowait /* LOOP_PIPE */
    for (int s = 0; s < stages; ++s) {
      for (int k = 0; k < k_steps; ++k) {
        if (s > 0) {
          double w0 = now_s();
          for (;;) {
            int seen;
#pragma omp flush
#pragma omp atomic read
            seen = done[s - 1];
            if (seen > k) break;
            sched_yield();
          }
          sum_atomic(&spin, now_s() - w0);
        }
        double t0 = now_s();
        sleep_ms(t);
        sum_atomic(&work, now_s() - t0);
#pragma omp flush
#pragma omp atomic write
        done[s] = k + 1;
#pragma omp flush
      }
    }
    if (after > 0) {
#pragma omp for schedule(static) /* LOOP_AFTER_PIPE */
      for (int i = 0; i < after; ++i) rising_iteration(i, after, after_t, &work);
    }
  }
  print_truth("spin", spin);
  print_truth("work", work);
  free(done);
  return 0;
}

static int tasks(int argc, char** argv) {
  double serial = arg_num(argc, argv, 2, 150);
  int n = (int)arg_num(argc, argv, 3, 200);
  double t = arg_num(argc, argv, 4, 1);
  double t0 = now_s(), spent = 0;
  sleep_ms(serial);
  print_truth("serial", now_s() - t0);
#pragma omp parallel /* PAR_TASKS */
  {
#pragma omp single nowait /* SINGLE_TASKS */
    for (int i = 0; i < n; ++i) {
#pragma omp task /* TASK */
      {
        double s0 = now_s();
        sleep_ms(t);
        sum_atomic(&spent, now_s() - s0);
      }
    }
  }
  print_truth("tasks", spent);
  return 0;
}

static int partial(int argc, char** argv) {
  double m = arg_num(argc, argv, 2, 10), s = arg_num(argc, argv, 3, 10);
  double masked = 0, sections = 0;
#pragma omp parallel /* PAR_PARTIAL */
  for (int r = 0; r < 3; ++r) {
#pragma omp masked /* MASKED */
    {
      double t0 = now_s();
      sleep_ms(m);
      masked += now_s() - t0;
    }
#pragma omp barrier  /* BARRIER_MASKED */
#pragma omp sections /* SECTIONS */
    {
#pragma omp section
      {
        double t0 = now_s();
        sleep_ms(s);
        sum_atomic(&sections, now_s() - t0);
      }
#pragma omp section
      {
        double t0 = now_s();
        sleep_ms(s);
        sum_atomic(&sections, now_s() - t0);
      }
    }
  }
  print_truth("masked", masked);
  print_truth("sections", sections);
  return 0;
}

static int reduction(int argc, char** argv) {
  int n = (int)arg_num(argc, argv, 2, 8);
  double t = arg_num(argc, argv, 3, 5);
  double x = 0;
  for (int r = 0; r < 4; ++r) {
#pragma omp parallel for reduction(+ : x) /* LOOP_REDUCTION */
    for (int i = 0; i < n; ++i) {
      sleep_ms(t);
      x += i;
    }
  }
  printf("reduction: %g\n", x);
  return 0;
}

static double leaves = 0;
static void tree(int depth, double t) {
  if (depth == 0) {
    double t0 = now_s();
    sleep_ms(t);
    sum_atomic(&leaves, now_s() - t0);
    return;
  }
#pragma omp task /* TASK_TREE */
  tree(depth - 1, t);
#pragma omp task /* TASK_TREE */
  tree(depth - 1, t);
#pragma omp taskwait /* TASKWAIT_TREE */
}

static int recursive(int argc, char** argv) {
  int d = (int)arg_num(argc, argv, 2, 6);
  double t = arg_num(argc, argv, 3, 1);
#pragma omp parallel /* PAR_TREE */
#pragma omp single   /* SINGLE_TREE */
  tree(d, t);
  print_truth("leaves", leaves);
  return 0;
}

// An untied task tree, as BOTS health and sparselu make: every node creates its children as untied
// tasks, works, then waits for them. libomp runs an untied task in parts (each task creation and
// taskwait ends one), and a part may resume on another thread.
static double untied_work = 0;
static void untied_tree(int depth, int tasks, int fan, double t) {
  for (int c = 0; depth > 0 && c < fan; ++c) {
    if (tasks > 0) {
#pragma omp task untied /* TASK_UNTIED */
      untied_tree(depth - 1, tasks - 1, fan, t);
    } else {
      untied_tree(depth - 1, 0, fan, t);
    }
  }
  double t0 = now_s();
  sleep_ms(t);
  sum_atomic(&untied_work, now_s() - t0);
  if (depth > 0 && tasks > 0) {
#pragma omp taskwait /* TASKWAIT_UNTIED */
  }
}

static int untied(int argc, char** argv) {
  int d = (int)arg_num(argc, argv, 2, 4);
  int fan = (int)arg_num(argc, argv, 3, 3);
  double t = arg_num(argc, argv, 4, 1);
  int levels = (int)arg_num(argc, argv, 5, d);
  int rounds = (int)arg_num(argc, argv, 6, 1);
#pragma omp parallel      /* PAR_UNTIED */
#pragma omp single nowait /* SINGLE_UNTIED */
#pragma omp task untied   /* TASK_UNTIED_ROOT */
  for (int r = 0; r < rounds; ++r) untied_tree(d, levels, fan, t);
  print_truth("work", untied_work);
  return 0;
}

static int jitter(int argc, char** argv) {
  double x = arg_num(argc, argv, 2, 20);
  const char* file = getenv("SHAPES_COUNTER");
  int count = 0;
  if (file) {
    FILE* f = fopen(file, "r");
    if (f) {
      if (fscanf(f, "%d", &count) != 1) count = 0;
      fclose(f);
    }
    f = fopen(file, "w");
    if (f) {
      fprintf(f, "%d\n", count + 1);
      fclose(f);
    }
  }
  double body = x * (count % 3), spent = 0;
#pragma omp parallel /* PAR_JITTER */
  {
#pragma omp single /* SINGLE_JITTER */
    {
      double t0 = now_s();
      sleep_ms(body);
      spent = now_s() - t0;
    }
#pragma omp for /* LOOP_JITTER */
    for (int i = 0; i < 8; ++i) sleep_ms(5);
  }
  print_truth("body", spent);
  return 0;
}

static int forkjoin(int argc, char** argv) {
  int rounds = (int)arg_num(argc, argv, 2, 200);
  int n = (int)arg_num(argc, argv, 3, 4);
  double t = arg_num(argc, argv, 4, 0.2);
  double serial = 0, work = 0, t0 = now_s();
  for (int r = 0; r < rounds; ++r) {
    serial += now_s() - t0;
#pragma omp parallel for schedule(static) /* LOOP_FORKJOIN */
    for (int i = 0; i < n; ++i) {
      double w0 = now_s();
      sleep_ms(t);
      sum_atomic(&work, now_s() - w0);
    }
    t0 = now_s();
  }
  serial += now_s() - t0;
  print_truth("serial", serial);
  print_truth("work", work);
  return 0;
}

static int chunks(int argc, char** argv) {
  int n = (int)arg_num(argc, argv, 2, 8);
  int chunk = (int)arg_num(argc, argv, 3, 4);
  double t = arg_num(argc, argv, 4, 20);
  double work = 0;
#pragma omp parallel
  {
#pragma omp for schedule(dynamic, chunk) /* LOOP_CHUNKS */
    for (int i = 0; i < n; ++i) {
      double w0 = now_s();
      sleep_ms(i < chunk ? t : t / 10);
      sum_atomic(&work, now_s() - w0);
    }
  }
  print_truth("work", work);
  return 0;
}

static int critical(int argc, char** argv) {
  int n = (int)arg_num(argc, argv, 2, 200000);
  double sum = 0;
#pragma omp parallel for
  for (int i = 0; i < n; ++i) {
    double v = i * 0.5;
#pragma omp critical /* CRITICAL_SUM */
    sum += v;
  }
  printf("critical: sum %g\n", sum);
  return 0;
}

/* One iteration of the rising loops: i sleeps T (i + 1) / N ms. */
static void rising_iteration(int i, int n, double t, double* work) {
  double w0 = now_s();
  sleep_ms(t * (i + 1) / n);
  sum_atomic(work, now_s() - w0);
}

/* runtime and rising: the same loop, its schedule left to OMP_SCHEDULE or not written. */
static int rising_loop(int argc, char** argv, int runtime) {
  int rounds = (int)arg_num(argc, argv, 2, 3), n = (int)arg_num(argc, argv, 3, 24);
  double t = arg_num(argc, argv, 4, 8), work = 0;
  long check = 0;
  for (int r = 0; r < rounds; ++r) {
    if (runtime) {
#pragma omp parallel for schedule(runtime) reduction(+ : check) /* LOOP_RUNTIME */
      for (int i = 0; i < n; ++i) {
        rising_iteration(i, n, t, &work);
        check += i;
      }
    } else {
#pragma omp parallel for reduction(+ : check) /* LOOP_RISING */
      for (int i = 0; i < n; ++i) {
        rising_iteration(i, n, t, &work);
        check += i;
      }
    }
  }
  if (getenv("SHAPES_BREAK")) check += 1;
  printf("%s: checksum %ld\n", runtime ? "runtime" : "rising", check);
  print_truth("work", work);
  return 0;
}

/* steps: a time-step loop around a schedule(runtime) loop and a schedule(static) one. */
#define STEPS_MAX_THREADS 64
#define STEPS_MAX_N 4096
static int steps(int argc, char** argv) {
  int rounds = (int)arg_num(argc, argv, 2, 40), n = (int)arg_num(argc, argv, 3, 16);
  double t = arg_num(argc, argv, 4, 4);
  static int owner[STEPS_MAX_N], first_owner[STEPS_MAX_N];
  static int owner2[STEPS_MAX_N], first_owner2[STEPS_MAX_N];
  long check = 0;
  int static_changed = -1, unclaused_changed = -1, outside_changed = -1;
  omp_sched_t kind0, kind;
  int chunk0, chunk;
  if (n > STEPS_MAX_N) n = STEPS_MAX_N;
  omp_get_schedule(&kind0, &chunk0);
  for (int r = 0; r < rounds; ++r) {
    double part[STEPS_MAX_THREADS] = {0}, t0 = now_s();
    int team = 1;
#pragma omp parallel reduction(+ : check) /* STEPS_RUNTIME_REGION */
    {
      double p0 = now_s();
#pragma omp for schedule(runtime) nowait /* STEPS_RUNTIME_LOOP */
      for (int i = 0; i < n; ++i) {
        sleep_ms(t * (i + 1) / n);
        check += i;
      }
      int me = omp_get_thread_num();
      if (me < STEPS_MAX_THREADS) part[me] = now_s() - p0;
#pragma omp masked
      team = omp_get_num_threads();
    }
    double wall = now_s() - t0, lo = part[0], hi = part[0];
    for (int k = 1; k < team && k < STEPS_MAX_THREADS; ++k) {
      lo = part[k] < lo ? part[k] : lo;
      hi = part[k] > hi ? part[k] : hi;
    }
    printf("step %d: time %.6f imbalance %.6f\n", r, wall, hi - lo);
#pragma omp parallel for schedule(static) reduction(+ : check) /* STEPS_STATIC_LOOP */
    for (int i = 0; i < n; ++i) {
      sleep_ms(t * (i + 1) / n / 4);
      owner[i] = omp_get_thread_num();
      check += i;
    }
#pragma omp parallel for reduction(+ : check) /* STEPS_UNCLAUSED_LOOP */
    for (int i = 0; i < n; ++i) {
      sleep_ms(t * (i + 1) / n / 4);
      owner2[i] = omp_get_thread_num();
      check += i;
    }
    for (int i = 0; i < n; ++i) {
      if (r == 0) first_owner[i] = owner[i], first_owner2[i] = owner2[i];
      if (owner[i] != first_owner[i] && static_changed < 0) static_changed = r;
      if (owner2[i] != first_owner2[i] && unclaused_changed < 0) unclaused_changed = r;
    }
    omp_get_schedule(&kind, &chunk);
    if ((kind != kind0 || chunk != chunk0) && outside_changed < 0) outside_changed = r;
  }
  printf("steps: checksum %ld\n", check);
  if (static_changed < 0) printf("steps: static assignment unchanged\n");
  else printf("steps: static assignment changed at step %d\n", static_changed);
  if (unclaused_changed < 0) printf("steps: unclaused assignment unchanged\n");
  else printf("steps: unclaused assignment changed at step %d\n", unclaused_changed);
  if (outside_changed < 0) printf("steps: schedule outside unchanged\n");
  else printf("steps: schedule outside changed at step %d\n", outside_changed);
  return 0;
}

static int twoloops(int argc, char** argv) {
  int rounds = (int)arg_num(argc, argv, 2, 3), n = (int)arg_num(argc, argv, 3, 16);
  double t = arg_num(argc, argv, 4, 4), work = 0, sum = 0;
  double* a = calloc((size_t)n, sizeof(double));
  int team = 0;
#pragma omp parallel /* PAR_COUNT: only reads the team's size, as NPB's codes do first */
  {
#pragma omp masked
    team = omp_get_num_threads();
  }
  for (int r = 0; r < rounds; ++r) {
#pragma omp parallel /* PAR_TWO */
    {
#pragma omp for schedule(static) /* LOOP_FIRST */
      for (int i = 0; i < n; ++i) {
        rising_iteration(i, n, t, &work);
        a[i] = i;
      }
#pragma omp for schedule(static) reduction(+ : sum) /* LOOP_SECOND */
      for (int i = 0; i < n; ++i) sum += 2 * a[i];
    }
  }
  free(a);
  printf("twoloops: sum %g on %d threads\n", sum, team);
  print_truth("work", work);
  return 0;
}

static int barriers(int argc, char** argv) {
  int passes = (int)arg_num(argc, argv, 2, 20000), n = (int)arg_num(argc, argv, 3, 64);
  double *a = calloc((size_t)n, sizeof(double)), *b = calloc((size_t)n, sizeof(double));
  double sum = 0;
#pragma omp parallel /* PAR_BARRIERS */
  {
    for (int r = 0; r < passes; ++r) { /* PASSES_LOOP */
#pragma omp for schedule(static)       /* LOOP_BEFORE_BARRIER */
      for (int i = 0; i < n; ++i) a[i] += i;
#pragma omp barrier                     /* BARRIER_REDUNDANT */
#pragma omp for schedule(static) nowait /* LOOP_NOWAIT */
      for (int i = 0; i < n; ++i) b[i] += a[n - 1 - i];
#pragma omp barrier /* BARRIER_NEEDED */
    }
  }
  for (int i = 0; i < n; ++i) sum += b[i];
  free(a);
  free(b);
  printf("barriers: sum %g\n", sum);
  return 0;
}

static int tiny(int argc, char** argv) {
  int rounds = (int)arg_num(argc, argv, 2, 4);
  long n = (long)arg_num(argc, argv, 3, 1000000);
  double sum = 0;
  for (int r = 0; r < rounds; ++r) {
#pragma omp parallel for schedule(dynamic) reduction(+ : sum) /* LOOP_TINY */
    for (long i = 0; i < n; ++i) sum += (double)(i % 7) * 0.5;
  }
  printf("tiny: sum %g\n", sum);
  return 0;
}

static int cpuwork(int argc, char** argv) {
  int rounds = (int)arg_num(argc, argv, 2, 3);
  double t = arg_num(argc, argv, 3, 100) * 1e-3, cpu = 0;
  for (int r = 0; r < rounds; ++r) {
#pragma omp parallel for schedule(static) reduction(+ : cpu) /* LOOP_CPUWORK */
    for (int i = 0; i < omp_get_num_threads(); ++i) {
      double c0 = thread_cpu_s();
      while (thread_cpu_s() - c0 < t) {}
      cpu += thread_cpu_s() - c0;
    }
  }
  print_truth("cpu", cpu);
  return 0;
}

static int scratch(int argc, char** argv) {
  size_t bytes = (size_t)arg_num(argc, argv, 2, 64) << 20;
  int rounds = (int)arg_num(argc, argv, 3, 4);
  long page = sysconf(_SC_PAGESIZE), pages = (long)(bytes / (size_t)page);
  double work = 0, faults = 0;
  for (int r = 0; r < rounds; ++r) {
    char* buf = NULL;
    if (omp_get_max_threads() > 1) {
      buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (buf == MAP_FAILED) return perror("mmap"), 1;
      faults += (double)pages;
    }
#pragma omp parallel for schedule(static) reduction(+ : work) /* LOOP_SCRATCH */
    for (long i = 0; i < pages; ++i) {
      double t0 = now_s();
      if (buf) buf[i * page] = (char)i;
      work += now_s() - t0;
    }
    if (buf) munmap(buf, bytes);
  }
  print_truth("faults", faults);
  print_truth("work", work);
  return 0;
}

static int teams(int argc, char** argv) {
  int rounds = (int)arg_num(argc, argv, 2, 2), n = (int)arg_num(argc, argv, 3, 8);
  double t = arg_num(argc, argv, 4, 10);
  double work[2] = {0, 0};
  for (int r = 0; r < rounds; ++r) {
#pragma omp teams distribute parallel for num_teams(2) thread_limit(1) /* TEAMS */
    for (int i = 0; i < n; ++i) {
      double t0 = now_s();
      sleep_ms(t);
      sum_atomic(&work[omp_get_team_num() & 1], now_s() - t0);
    }
  }
  print_truth("work", work[0] + work[1]);
  print_truth("team0", work[0]);
  print_truth("team1", work[1]);
  return 0;
}

static int stuck(int argc, char** argv) {
  double s = arg_num(argc, argv, 2, 10), limit = arg_num(argc, argv, 3, 30);
  int exits = argc > 4 && !strcmp(argv[4], "exit");
  volatile int flag = 0;
#pragma omp parallel sections num_threads(2) /* SECTIONS_STUCK */
  {
#pragma omp section
    {
      sleep_ms(s);
      if (exits) exit(0);
    }
#pragma omp section
    {
      printf("stuck: waiting\n");
      fflush(stdout);
      double t0 = now_s();
      while (!flag && now_s() - t0 < limit) sleep_ms(1);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "slowloop")) return slowloop(argc, argv);
  if (!strcmp(mode, "pipeline")) return pipeline(argc, argv);
  if (!strcmp(mode, "tasks")) return tasks(argc, argv);
  if (!strcmp(mode, "partial")) return partial(argc, argv);
  if (!strcmp(mode, "reduction")) return reduction(argc, argv);
  if (!strcmp(mode, "recursive")) return recursive(argc, argv);
  if (!strcmp(mode, "jitter")) return jitter(argc, argv);
  if (!strcmp(mode, "untied")) return untied(argc, argv);
  if (!strcmp(mode, "forkjoin")) return forkjoin(argc, argv);
  if (!strcmp(mode, "scratch")) return scratch(argc, argv);
  if (!strcmp(mode, "cpuwork")) return cpuwork(argc, argv);
  if (!strcmp(mode, "stuck")) return stuck(argc, argv);
  if (!strcmp(mode, "teams")) return teams(argc, argv);
  if (!strcmp(mode, "chunks")) return chunks(argc, argv);
  if (!strcmp(mode, "critical")) return critical(argc, argv);
  if (!strcmp(mode, "runtime")) return rising_loop(argc, argv, 1);
  if (!strcmp(mode, "rising")) return rising_loop(argc, argv, 0);
  if (!strcmp(mode, "tiny")) return tiny(argc, argv);
  if (!strcmp(mode, "twoloops")) return twoloops(argc, argv);
  if (!strcmp(mode, "barriers")) return barriers(argc, argv);
  if (!strcmp(mode, "steps")) return steps(argc, argv);
  fprintf(stderr,
          "usage: %s slowloop|pipeline|tasks|partial|reduction|recursive|jitter|untied|forkjoin|"
          "scratch|cpuwork|stuck|teams|chunks|critical|runtime|rising|tiny|twoloops|barriers|"
          "steps "
          "[ARGS...]\n",
          argv[0]);
  return 2;
}
