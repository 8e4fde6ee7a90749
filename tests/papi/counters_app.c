/* Planted counter events and densely instrumented regions, for tests/papi/.
 *
 *   counters_app faults N      parallel region of 3 threads; in user region "touch" only OpenMP
 *                              thread 2 touches N fresh pages of an mmap'd buffer (N first-touch
 *                              page faults); region "quiet" (serial) touches nothing.
 *                              Prints "tid2 <os tid of thread 2>" and "pages N".
 *   counters_app dense K MS    user region "dense" holding K empty user regions "tiny" and a
 *                              sleep of MS ms. Prints "truth dense <s>": the sleep as measured
 *                              (the planted time: the loop itself costs nothing without the tool).
 */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "scalea/scalea.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};
  nanosleep(&ts, NULL);
}

static int faults(long pages) {
  long page = sysconf(_SC_PAGESIZE);
  /* Mapped (not touched) before the parallel region: only the touches fault. */
  volatile char* buf = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (buf == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  madvise((void*)buf, (size_t)(pages * page), MADV_NOHUGEPAGE);
  long tid2 = 0;
  SCALEA_REGION_BEGIN("quiet");
  sleep_ms(5);
  SCALEA_REGION_END("quiet");
#pragma omp parallel num_threads(3)
  {
    int me = omp_get_thread_num();
    if (me == 2) tid2 = (long)syscall(SYS_gettid);
#pragma omp barrier
    SCALEA_REGION_BEGIN("touch");
    if (me == 2)
      for (long i = 0; i < pages; ++i) buf[i * page] = 1;
    sleep_ms(2);
    SCALEA_REGION_END("touch");
  }
  printf("tid2 %ld\npages %ld\n", tid2, pages);
  return 0;
}

static int dense(long k, double ms) {
  SCALEA_REGION_BEGIN("dense");
  for (long i = 0; i < k; ++i) {
    SCALEA_REGION_BEGIN("tiny");
    SCALEA_REGION_END("tiny");
  }
  double t0 = now_s();
  sleep_ms(ms);
  double slept = now_s() - t0;
  SCALEA_REGION_END("dense");
  printf("truth dense %.9f\n", slept);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "faults") == 0) return faults(atol(argv[2]));
  if (argc >= 4 && strcmp(argv[1], "dense") == 0) return dense(atol(argv[2]), atof(argv[3]));
  fprintf(stderr, "usage: counters_app faults N | dense K MS\n");
  return 2;
}
