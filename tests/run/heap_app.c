// heap_app STEPS: a program that allocates its work arrays during every step and frees them at
// its end, as LULESH does, so glibc gives the pages back (trims the heap) and the next step
// faults them in again. Each array is filled by a parallel region of its own, so a tool meets
// new regions (and grows its tables) between the allocations of the first step. Prints the page
// faults of the steps after the first ("faults N"): a tool that leaves its own blocks above the
// arrays in the program's heap keeps glibc from trimming it and lowers them (check_run.py heap).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

enum { kArrays = 8, kDoubles = (1 << 20) / sizeof(double) };

static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// One parallel region per array: eight call sites.
#define FILL(k)                                                      \
  do {                                                               \
    a[k] = malloc(kDoubles * sizeof(double));                        \
    _Pragma("omp parallel for reduction(+ : sum) schedule(static)") \
    for (long i = 0; i < (long)kDoubles; ++i) {                      \
      a[k][i] = (double)(i + k);                                     \
      sum += a[k][i];                                                \
    }                                                                \
  } while (0)

static double step(void) {
  double* a[kArrays];
  double sum = 0;
  FILL(0); FILL(1); FILL(2); FILL(3); FILL(4); FILL(5); FILL(6); FILL(7);
  for (int k = kArrays - 1; k >= 0; --k) free(a[k]);
  return sum;
}

int main(int argc, char** argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 20;
  // The first free of a mapped block raises glibc's mmap threshold above the arrays' size:
  // from then on they come from the heap, as in a long-running program.
  free(malloc(kDoubles * sizeof(double)));
  double sum = step();
  long before = minor_faults();
  for (int s = 1; s < steps; ++s) sum += step();
  printf("faults %ld threads %d sum %g\n", minor_faults() - before, omp_get_max_threads(), sum);
  return 0;
}
