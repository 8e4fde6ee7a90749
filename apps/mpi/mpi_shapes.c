/* mpi_shapes: MPI programs of the shapes real codes have, each with a planted overhead of known
 * size (tests/groundtruth/groundtruth_test.cpp, docs/groundtruth.md). No user regions: the work
 * is in main, as in most MPI codes.
 *
 *   mpi_shapes main R        every rank works R seconds in main (the same work: replicated),
 *                            then one MPI_Allreduce of 8 bytes
 *   mpi_shapes allreduce N X N times: rank r works (r + 1) X seconds, then MPI_Allreduce of
 *                            one double: rank r waits (size - 1 - r) X in it (waiting, not
 *                            transfer; every rank works, so no rank's code is serial)
 *
 * Times are sleeps: exact even when the ranks share the cores.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planted_common.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double x = 1, sum = 0;
  if (!strcmp(mode, "main")) {
    sleep_s(argc > 2 ? atof(argv[2]) : 0.2);
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "allreduce")) {
    int n = argc > 2 ? atoi(argv[2]) : 5;
    double step = argc > 3 ? atof(argv[3]) : 0.02;
    for (int i = 0; i < n; ++i) {
      sleep_s((rank + 1) * step);
      MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else {
    if (rank == 0) fprintf(stderr, "usage: mpi_shapes main R | allreduce N X\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) printf("mpi_shapes %s: %d ranks, sum %g\n", mode, size, sum);
  MPI_Finalize();
  return 0;
}
