/* mpi_sites: MPI call sites (tests/mpi, docs/mpi.md).
 *
 *   mpi_sites sites   two call sites of MPI_Allreduce on different lines: the first runs
 *                     SITE_A_REPS times, the second SITE_B_REPS times; each must be its own region
 *                     with its own file:line, one row per site over all ranks.
 * The lines marked "site ..." are found by tests/mpi/check_mpi.py: keep each marker on the first
 * line of its call (the line the debug information gives the call).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define SITE_A_REPS 3
#define SITE_B_REPS 5

static void sites(void) {
  double a = 1, b = 0;
  for (int i = 0; i < SITE_A_REPS; ++i)
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site A */
  for (int i = 0; i < SITE_B_REPS; ++i)
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site B */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "sites";
  if (strcmp(mode, "sites") == 0) {
    sites();
  } else {
    if (rank == 0) fprintf(stderr, "mpi_sites: unknown mode '%s' (sites)\n", mode);
    MPI_Finalize();
    return 2;
  }
  MPI_Finalize();
  return 0;
}
