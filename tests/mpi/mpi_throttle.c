/* A hot tiny user region on every rank, for the throttling test (tests/mpi/check_mpi.py
 * "throttle"): run with SCALEA_THROTTLE_REGIONS=user and a small SCALEA_THROTTLE, every rank
 * throttles "tiny", and rank 0's meta.json must list all of them. Rank r calls it 1000 * (r + 1)
 * times. */
#include <mpi.h>
#include <stdio.h>

#include "../../apps/mpi/planted_common.h"

static volatile double sink;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 1000 * (rank + 1); ++i) {
    REGION_BEGIN("tiny");
    sink = sink + 1.0;
    REGION_END("tiny");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_throttle: done\n");
  MPI_Finalize();
  return 0;
}
