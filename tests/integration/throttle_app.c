/* throttle_app: a million calls of a tiny instrumented function (built with
 * -finstrument-functions, linked -rdynamic), for the throttling test (test_throttle.cpp).
 *
 *   throttle_app [tiny_calls=1000000] [locked_calls=150000] [slow_calls=20]
 *
 * main -> hot (1 call) -> tiny (tiny_calls calls, a few ns of arithmetic each)
 * main -> locked_loop (1 call) -> locked (locked_calls calls, each an OpenMP critical around an
 *         increment, in the initial thread)
 * main -> slow (slow_calls calls, 1 ms sleep each: never throttled)
 * Prints the calls it made: "calls <function> <n>", and the wall time per call of tiny() in
 * hot(), hooks included ("ns_per_call tiny <x>": the benchmark of docs/performance.md).
 */
#include <stdio.h>

#include "../../apps/omp/planted.h"

volatile double g_sink = 0;
long g_locked = 0, g_tiny = 0, g_slow = 0;

__attribute__((noinline)) double tiny(double x) {
  ++g_tiny;
  return x * 1.0000001 + 1.0;
}

__attribute__((noinline)) void hot(long n) {
  double x = 0;
  for (long i = 0; i < n; ++i) x = tiny(x);
  g_sink = x;
}

__attribute__((noinline)) void locked(void) {
#pragma omp critical(throttle_counter)
  ++g_locked;
}

__attribute__((noinline)) void locked_loop(long n) {
  for (long i = 0; i < n; ++i) locked();
}

__attribute__((noinline)) void slow(void) {
  ++g_slow;
  sleep_ms(1);
}

int main(int argc, char** argv) {
  long tiny_calls = (long)arg_num(argc, argv, 1, 1000000);
  long locked_calls = (long)arg_num(argc, argv, 2, 150000);
  long slow_calls = (long)arg_num(argc, argv, 3, 20);
  double t0 = now_s();
  hot(tiny_calls);
  double t1 = now_s();
  locked_loop(locked_calls);
  for (long i = 0; i < slow_calls; ++i) slow();
  printf("calls tiny %ld\ncalls locked %ld\ncalls slow %ld\n", g_tiny, g_locked, g_slow);
  if (tiny_calls > 0) printf("ns_per_call tiny %.2f\n", (t1 - t0) * 1e9 / (double)tiny_calls);
  return 0;
}
