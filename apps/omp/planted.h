/* Helpers shared by the planted-overhead apps: sleep-based work (exact even with more threads
 * than cores) and argument parsing. Header-only, C99. */
#ifndef SCALEA_APPS_PLANTED_H
#define SCALEA_APPS_PLANTED_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The helpers are not instrumented under -finstrument-functions (instrfn counts calls exactly). */
#define PLANTED_HELPER static inline __attribute__((no_instrument_function))

/* Sleeps `ms` milliseconds (fractions allowed), resuming after signals. */
PLANTED_HELPER void sleep_ms(double ms) {
  if (ms <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Monotonic wall clock, seconds. */
PLANTED_HELPER double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The truth as the program itself measured it: "truth <key> <seconds>" on stdout. A sleep may
 * last longer than asked (timer slack, a loaded machine, more threads than cores), so tests
 * compare the tool's figures with these, and these with the nominal sizes. */
PLANTED_HELPER void print_truth(const char* key, double seconds) {
  printf("truth %s %.9f\n", key, seconds);
}

/* The calling thread's CPU time, seconds. */
PLANTED_HELPER double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU work in the function that expands it (a macro, so that a sampled stack ends in that
 * function, not in a shared helper): computes until the thread used `seconds` of CPU time, and
 * leaves the CPU time it really used in `used`. The clock is read every few microseconds. */
#define PLANTED_CPU_WORK(seconds, used)                                     \
  do {                                                                      \
    volatile double sink_ = 0;                                              \
    double start_ = thread_cpu_s(), at_ = start_;                           \
    while (at_ - start_ < (seconds)) {                                      \
      for (int i_ = 0; i_ < 2000; ++i_) sink_ = sink_ * 0.999 + (double)i_; \
      at_ = thread_cpu_s();                                                 \
    }                                                                       \
    (used) += at_ - start_;                                                 \
  } while (0)

/* A function that does `seconds` of CPU work in itself and returns the CPU time it used. */
#define PLANTED_CPU_FUNCTION(name)                        \
  __attribute__((noinline)) double name(double seconds) { \
    double used = 0;                                      \
    PLANTED_CPU_WORK(seconds, used);                      \
    return used;                                          \
  }

/* argv[i] as a positive number, or `fallback` when absent. Exits with a message when invalid. */
PLANTED_HELPER double arg_num(int argc, char** argv, int i, double fallback) {
  if (i >= argc) return fallback;
  char* end = NULL;
  double v = strtod(argv[i], &end);
  if (!end || *end || v < 0) {
    fprintf(stderr, "%s: argument %d ('%s') must be a non-negative number\n", argv[0], i, argv[i]);
    exit(2);
  }
  return v;
}
#endif
