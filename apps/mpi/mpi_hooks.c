/* mpi_hooks: an MPI program built with -finstrument-functions -rdynamic (tests/mpi, docs/mpi.md):
 * its function regions must be recorded under `mpirun ... scalea run`, because libscalea-mpi.so,
 * which the ranks preload, exports the __cyg_profile_func_* hooks.
 *   compute()   called COMPUTE_CALLS times, sleeps COMPUTE_S each time
 *   exchange()  called EXCHANGE_CALLS times, one MPI_Allreduce inside
 */
#include <mpi.h>
#include <stdio.h>

#include "planted_common.h"

#define COMPUTE_CALLS 7
#define COMPUTE_S 0.002
#define EXCHANGE_CALLS 4

__attribute__((noinline)) static void compute(int i) { sleep_s(COMPUTE_S * (1 + (i % 2))); }

__attribute__((noinline)) static double exchange(double x) {
  double sum = 0;
  MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double total = 0;
  for (int i = 0; i < COMPUTE_CALLS; ++i) compute(i);
  for (int i = 0; i < EXCHANGE_CALLS; ++i) total += exchange(rank + i);
  if (rank == 0) printf("mpi_hooks: %g\n", total);
  MPI_Finalize();
  return 0;
}
