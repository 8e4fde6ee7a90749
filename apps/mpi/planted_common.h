/* Shared by the planted MPI apps: sleeps (exact even when oversubscribed) and optional user
 * regions. The scalea user API is declared weak, so the apps link nothing from scalea: under the
 * tool (libscalea-mpi.so preloaded or `scalea run`) the regions are recorded, without it they are
 * no-ops. */
#ifndef PLANTED_COMMON_H
#define PLANTED_COMMON_H
#include <time.h>

void scalea_region_begin_loc(const char* name, const char* file, int line, const char* function)
    __attribute__((weak));
void scalea_region_end(const char* name) __attribute__((weak));

#define REGION_BEGIN(n) \
  do { if (scalea_region_begin_loc) scalea_region_begin_loc((n), __FILE__, __LINE__, __func__); } while (0)
#define REGION_END(n) \
  do { if (scalea_region_end) scalea_region_end(n); } while (0)

static inline void sleep_s(double s) {
  if (s <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0) {
  }
}
#endif
