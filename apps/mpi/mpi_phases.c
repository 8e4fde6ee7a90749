/* mpi_phases: the MPI version of apps/omp/phases: balanced steps, then imbalanced ones (the
 * planted program of the on-line view and the time-series report per rank, docs/online.md).
 *
 *   mpirun -np N mpi_phases [steps=36] [switch=24] [X_ms=50]
 *
 * Each step: every rank works (sleeps), then MPI_Barrier. Planted truth:
 *   - steps before `switch`: every rank sleeps X ms: the barrier waits ~0, the step lasts X ms
 *   - steps from `switch` on: rank r sleeps (r+1)*X ms: rank r waits (N-1-r)*X ms in MPI_Barrier,
 *     the step lasts N*X ms; synchronization per step = X*(N-1)/2 ms, a share (N-1)/(2N) of the
 *     step's wall time (25 % at N = 2); rank r is busy (r+1)/N of the time
 * Measured truth printed by rank 0 (wall-clock times: CLOCK_REALTIME, s since the epoch):
 *   truth begin_epoch_s T      the first step began
 *   truth switch_epoch_s T     the first imbalanced step began
 *   truth end_epoch_s T        the last step ended
 *   truth wait R FROM TO       per step and rank R: its time in MPI_Barrier
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "planted_common.h"

static double epoch_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double arg(int argc, char** argv, int i, double fallback) {
  return i < argc ? atof(argv[i]) : fallback;
}

int main(int argc, char** argv) {
  int steps = (int)arg(argc, argv, 1, 36);
  int change = (int)arg(argc, argv, 2, 24);
  double x = arg(argc, argv, 3, 50) * 1e-3;
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double* wait = calloc(2 * (size_t)steps, sizeof(double));  /* enter, leave per step */
  MPI_Barrier(MPI_COMM_WORLD);
  double switched = 0, begin = epoch_s();
  for (int s = 0; s < steps; ++s) {
    int imbalanced = s >= change;
    if (s == change) switched = epoch_s();
    sleep_s(imbalanced ? (rank + 1) * x : x);
    wait[2 * s] = epoch_s();
    MPI_Barrier(MPI_COMM_WORLD);
    wait[2 * s + 1] = epoch_s();
  }
  double end = epoch_s();
  double* all = rank == 0 ? calloc(2 * (size_t)steps * (size_t)size, sizeof(double)) : NULL;
  MPI_Gather(wait, 2 * steps, MPI_DOUBLE, all, 2 * steps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("mpi_phases: %d ranks, %d steps, imbalanced from step %d, X=%g ms\n", size, steps,
           change, x * 1e3);
    printf("truth begin_epoch_s %.6f\n", begin);
    printf("truth switch_epoch_s %.6f\n", switched);
    printf("truth end_epoch_s %.6f\n", end);
    for (int r = 0; r < size; ++r)
      for (int s = 0; s < steps; ++s)
        printf("truth wait %d %.6f %.6f\n", r, all[2 * ((size_t)r * steps + s)],
               all[2 * ((size_t)r * steps + s) + 1]);
    free(all);
  }
  free(wait);
  MPI_Finalize();
  return 0;
}
