/* sampled_recursion: a binary recursion through two call sites (as BOTS fib's tasks), for
 * call-path sampling's memory (docs/sampling.md, docs/groundtruth.md).
 *
 *   sampled_recursion [ROUNDS=20] [DEPTH=16]
 *
 * Each of two threads (a parallel region) runs ROUNDS times a recursion of DEPTH levels in which
 * every level calls itself twice, from two different lines (LEFT, RIGHT); a leaf computes a few
 * microseconds. Sampled paths differ in which call site each level took: without folding, nearly
 * every sample is a new path. Prints "truth leaves N" (the leaves computed, both threads).
 * Built at -O2 without frame pointers.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double leaf(double x) {
  for (int i = 0; i < 200; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

__attribute__((noinline)) static double recurse(int depth, double x) {
  if (depth == 0) return leaf(x);
  double left = recurse(depth - 1, x + 1);  /* LEFT */
  double right = recurse(depth - 1, x - 1); /* RIGHT */
  __asm__ volatile("" ::: "memory");        /* keep both calls real calls, not a loop */
  return 0.5 * (left + right);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 20, depth = argc > 2 ? atoi(argv[2]) : 16;
  double sum = 0;
  long leaves = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum, leaves)
  for (int r = 0; r < rounds; ++r) {
    sum += recurse(depth, r);
    leaves += 1L << depth;
  }
  printf("truth leaves %ld\nsum %g\n", leaves, sum);
  return 0;
}
