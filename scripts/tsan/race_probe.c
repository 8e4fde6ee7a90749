/* Checks that the TSan stage can see a race in an OpenMP program under scalea and that it sees
 * OpenMP's synchronization (Archer active next to scalea). `race_probe` hands data from thread to
 * thread only through OpenMP (barrier, single, task + taskwait, critical, lock): clean.
 * `race_probe race` adds one unsynchronized increment by every thread: TSan must report it. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int race = argc > 1 && strcmp(argv[1], "race") == 0;
  double part[4] = {0}, sum = 0, tasks[4] = {0};
  long unguarded = 0, in_critical = 0, in_lock = 0;
  omp_lock_t lock;
  omp_init_lock(&lock);
#pragma omp parallel num_threads(4)
  {
    int me = omp_get_thread_num();
    /* First in the region: no OpenMP event (so no callback of the tool, whose own locks would
     * order the threads) between these accesses of different threads. */
    if (race) unguarded += 1;
    part[me] = me + 1; /* written by each thread, read by one after the barrier */
#pragma omp barrier
#pragma omp single
    for (int i = 0; i < omp_get_num_threads(); ++i) sum += part[i];
#pragma omp task firstprivate(me)
    tasks[me] = me * 2.0;
#pragma omp taskwait
#pragma omp critical
    in_critical += 1;
    omp_set_lock(&lock);
    in_lock += 1; /* a different lock from the critical's: not the same variable */
    omp_unset_lock(&lock);
  }
  omp_destroy_lock(&lock);
  printf("sum %g tasks %g critical %ld lock %ld unguarded %ld\n", sum,
         tasks[0] + tasks[1] + tasks[2] + tasks[3], in_critical, in_lock, unguarded);
  return 0;
}
