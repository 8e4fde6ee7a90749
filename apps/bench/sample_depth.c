/* sample_depth: the cost of call-path sampling at a known stack depth (docs/performance.md,
 * "Call-path sampling").
 *
 *   sample_depth DEPTH ITERATIONS
 *
 * Recurses DEPTH frames deep (each frame a real call: noinline, and the frames' results are
 * used), then runs a fixed amount of computation there. Prints "cpu S" (the thread's CPU time for
 * the computation: the same work with and without sampling, so the difference is the sampler's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile double sink;

__attribute__((noinline)) static double work(long iterations) {
  double x = 0;
  for (long i = 0; i < iterations; ++i) x = x * 0.999999 + (double)(i & 1023);
  return x;
}

__attribute__((noinline)) static double dive(int depth, long iterations) {
  if (depth <= 1) return work(iterations);
  double r = dive(depth - 1, iterations);
  sink = r;
  return r + 1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sample_depth DEPTH ITERATIONS\n");
    return 2;
  }
  int depth = atoi(argv[1]);
  long iterations = atol(argv[2]);
  double t0 = thread_cpu_s();
  sink = dive(depth, iterations);
  printf("cpu %.6f\n", thread_cpu_s() - t0);
  return 0;
}
