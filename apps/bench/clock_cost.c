/*
 * clock_cost -- what one clock read costs on this machine.
 *
 * A tool callback reads a clock at least once, so the clock's cost is a hard
 * lower bound on what a timing tool adds per event. This program times
 * back-to-back reads of:
 *   clock_gettime(CLOCK_MONOTONIC)         (vDSO on Linux when the clocksource allows)
 *   clock_gettime(CLOCK_MONOTONIC_RAW)
 *   clock_gettime(CLOCK_MONOTONIC_COARSE)  (tick resolution, for comparison)
 *   rdtsc / rdtscp                         (x86 only)
 * Each is measured as the best (minimum) of several repetitions of a loop of
 * `iters` reads, divided by `iters`; the loop uses every result so the reads
 * cannot be removed. TSC reads are converted to ns with the TSC frequency
 * measured against CLOCK_MONOTONIC over ~0.2 s.
 *
 * usage: clock_cost [iters]      (default 10000000)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define REPS 7

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile uint64_t sink;

static double cost_clock(clockid_t id, long iters) {
  double best = 1e30;
  for (int r = 0; r < REPS; ++r) {
    uint64_t acc = 0;
    struct timespec ts;
    double t0 = now_s();
    for (long i = 0; i < iters; ++i) {
      clock_gettime(id, &ts);
      acc += (uint64_t)ts.tv_nsec;
    }
    double t1 = now_s();
    sink += acc;
    double per = (t1 - t0) / (double)iters;
    if (per < best)
      best = per;
  }
  return best * 1e9;
}

#if HAVE_TSC
static double cost_rdtsc(long iters) {
  double best = 1e30;
  for (int r = 0; r < REPS; ++r) {
    uint64_t acc = 0;
    double t0 = now_s();
    for (long i = 0; i < iters; ++i)
      acc += __rdtsc();
    double t1 = now_s();
    sink += acc;
    double per = (t1 - t0) / (double)iters;
    if (per < best)
      best = per;
  }
  return best * 1e9;
}

static double cost_rdtscp(long iters) {
  double best = 1e30;
  for (int r = 0; r < REPS; ++r) {
    uint64_t acc = 0;
    unsigned aux;
    double t0 = now_s();
    for (long i = 0; i < iters; ++i)
      acc += __rdtscp(&aux);
    double t1 = now_s();
    sink += acc;
    double per = (t1 - t0) / (double)iters;
    if (per < best)
      best = per;
  }
  return best * 1e9;
}

static double tsc_ghz(void) {
  double t0 = now_s();
  uint64_t c0 = __rdtsc();
  while (now_s() - t0 < 0.2) {
  }
  uint64_t c1 = __rdtsc();
  double t1 = now_s();
  return (double)(c1 - c0) / (t1 - t0) / 1e9;
}
#endif

static void print_clocksource(void) {
  char buf[128] = "unknown";
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (f) {
    if (fgets(buf, sizeof buf, f))
      buf[strcspn(buf, "\n")] = 0;
    fclose(f);
  }
  printf("clocksource=%s\n", buf);
}

int main(int argc, char **argv) {
  long iters = 10000000;
  if (argc > 1) {
    iters = strtol(argv[1], NULL, 10);
    if (iters <= 0) {
      fprintf(stderr, "usage: clock_cost [iters>0]\n");
      return 2;
    }
  }
  print_clocksource();
  printf("iters=%ld reps=%d (best of reps)\n", iters, REPS);
  printf("clock_gettime(CLOCK_MONOTONIC)        ns=%.2f\n", cost_clock(CLOCK_MONOTONIC, iters));
  printf("clock_gettime(CLOCK_MONOTONIC_RAW)    ns=%.2f\n", cost_clock(CLOCK_MONOTONIC_RAW, iters));
  printf("clock_gettime(CLOCK_MONOTONIC_COARSE) ns=%.2f\n",
         cost_clock(CLOCK_MONOTONIC_COARSE, iters));
#if HAVE_TSC
  double ghz = tsc_ghz();
  double ns = cost_rdtsc(iters);
  printf("rdtsc                                 ns=%.2f cycles=%.1f\n", ns, ns * ghz);
  ns = cost_rdtscp(iters);
  printf("rdtscp                                ns=%.2f cycles=%.1f\n", ns, ns * ghz);
  printf("tsc_ghz=%.3f\n", ghz);
#else
  printf("rdtsc                                 n/a (not x86)\n");
#endif
  return 0;
}
