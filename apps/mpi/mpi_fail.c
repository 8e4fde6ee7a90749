/* mpi_fail MODE: programs that end badly, for the tool's no-hang guarantees (tests/mpi).
 *   abort       rank 1 (or 0 with one rank) calls MPI_Abort(MPI_COMM_WORLD, 3) after some MPI work
 *   nofinalize  every rank returns from main without MPI_Finalize
 *   late SECS   the last rank sleeps SECS before MPI_Finalize (run with SCALEA_MPI_TIMEOUT < SECS:
 *               the others give up on it and write an incomplete experiment)
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
  double x = rank, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "abort") == 0) {
    if (rank == (size > 1 ? 1 : 0)) MPI_Abort(MPI_COMM_WORLD, 3);
    sleep_s(30);  /* the others are killed by mpirun long before */
  } else if (strcmp(mode, "nofinalize") == 0) {
    return 0;
  } else if (strcmp(mode, "late") == 0) {
    if (rank == size - 1) sleep_s(argc > 2 ? atof(argv[2]) : 5);
  } else {
    if (rank == 0) fprintf(stderr, "usage: mpi_fail abort|nofinalize|late SECS\n");
  }
  MPI_Finalize();
  return 0;
}
