/* The probe program of `scalea calibrate` (report/src/calibrate/calibrate.cpp): times the OpenMP
 * events the tool records, run once without the tool (SCALEA_ENABLE=0) and once with it, so the
 * difference is the tool's own cost per event. Linked with libscalea-omp (for the user-region API),
 * so the tool starts with the program unless SCALEA_ENABLE=0.
 *
 *   scalea-calibrate-probe THREADS SCALE
 * prints one line per event type: "<event> <instances> <seconds>"
 *   forkjoin   empty parallel regions of THREADS threads
 *   barrier    explicit barriers inside one parallel region (per barrier instance)
 *   lock       omp_set_lock/omp_unset_lock pairs, per thread (contended when THREADS > 1)
 *   user       empty user-region begin/end pairs on the initial thread
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "scalea/scalea.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  double scale = argc > 2 ? atof(argv[2]) : 1.0;
  if (threads < 1) threads = 1;
  long n_fork = (long)(2000 * scale), n_bar = (long)(5000 * scale), n_lock = (long)(50000 * scale),
       n_user = (long)(100000 * scale);
  volatile long sink = 0;
  /* Warm-up: the team exists, the tool has seen every call path. */
  for (int i = 0; i < 20; ++i) {
#pragma omp parallel num_threads(threads)
    { __atomic_fetch_add(&sink, omp_get_thread_num(), __ATOMIC_RELAXED); }
  }
  double t0 = now_s();
  for (long i = 0; i < n_fork; ++i) {
#pragma omp parallel num_threads(threads)
    { __atomic_fetch_add(&sink, omp_get_thread_num(), __ATOMIC_RELAXED); }
  }
  double t_fork = now_s() - t0;

  double t_bar = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp barrier
    double b0 = now_s();
    for (long i = 0; i < n_bar; ++i) {
#pragma omp barrier
    }
#pragma omp master
    t_bar = now_s() - b0;
  }

  omp_lock_t lock;
  omp_init_lock(&lock);
  double t_lock = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp barrier
    double l0 = now_s();
    for (long i = 0; i < n_lock; ++i) {
      omp_set_lock(&lock);
      sink += 1;
      omp_unset_lock(&lock);
    }
#pragma omp barrier
#pragma omp master
    t_lock = now_s() - l0;
  }
  omp_destroy_lock(&lock);

  t0 = now_s();
  for (long i = 0; i < n_user; ++i) {
    SCALEA_REGION_BEGIN("calibrate_user");
    SCALEA_REGION_END("calibrate_user");
  }
  double t_user = now_s() - t0;

  printf("forkjoin %ld %.9f\n", n_fork, t_fork);
  printf("barrier %ld %.9f\n", n_bar, t_bar);
  printf("lock %ld %.9f\n", n_lock, t_lock);
  printf("user %ld %.9f\n", n_user, t_user);
  return 0;
}
