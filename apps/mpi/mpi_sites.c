/* mpi_sites: MPI call sites and calls without a partner (tests/mpi, docs/mpi.md).
 *
 *   mpi_sites sites   two call sites of MPI_Allreduce on different lines: the first runs
 *                     SITE_A_REPS times, the second SITE_B_REPS times; each must be its own region
 *                     with its own file:line, one row per site over all ranks.
 *   mpi_sites self    every rank exchanges with itself only: SELF_REPS MPI_Sendrecv with
 *                     dest = source = its own rank, into a freshly allocated receive buffer of
 *                     SELF_BYTES each time (the copy page-faults); then SELF_REPS rounds of
 *                     MPI_Irecv + MPI_Isend to itself and MPI_Waitall; then one MPI_Send to
 *                     MPI_PROC_NULL. None of these has a partner to wait for. With 2 or more ranks
 *                     a ring MPI_Sendrecv to the neighbours follows (a real partner), and
 *                     PAIR_REPS rounds of MPI_Irecv + MPI_Isend to the neighbours + MPI_Waitall.
 * The lines marked "site ..." are found by tests/mpi/check_mpi.py: keep each marker on the first
 * line of its call (the line the debug information gives the call).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SITE_A_REPS 3
#define SITE_B_REPS 5
#define SELF_REPS 8
#define SELF_BYTES (4 << 20)
#define PAIR_REPS 6
#define PAIR_BYTES (1 << 20)

static void sites(void) {
  double a = 1, b = 0;
  for (int i = 0; i < SITE_A_REPS; ++i)
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site A */
  for (int i = 0; i < SITE_B_REPS; ++i)
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site B */
}

static void self(int rank, int size) {
  char* out = malloc(SELF_BYTES);
  memset(out, rank + 1, SELF_BYTES);
  for (int i = 0; i < SELF_REPS; ++i) {
    char* in = malloc(SELF_BYTES); /* fresh pages: the copy into them page-faults */
    MPI_Sendrecv(out, SELF_BYTES, MPI_BYTE, rank, 1, /* site self-sendrecv */
                 in, SELF_BYTES, MPI_BYTE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (in[SELF_BYTES - 1] != (char)(rank + 1)) fprintf(stderr, "mpi_sites: bad self data\n");
    free(in);
  }
  for (int i = 0; i < SELF_REPS; ++i) {
    char* in = malloc(SELF_BYTES);
    MPI_Request req[2];
    MPI_Irecv(in, SELF_BYTES, MPI_BYTE, rank, 2, MPI_COMM_WORLD, &req[0]); /* site self-irecv */
    MPI_Isend(out, SELF_BYTES, MPI_BYTE, rank, 2, MPI_COMM_WORLD, &req[1]); /* site self-isend */
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    free(in);
  }
  MPI_Send(out, 64, MPI_BYTE, MPI_PROC_NULL, 3, MPI_COMM_WORLD); /* site proc-null */
  if (size >= 2) {
    char* in = malloc(SELF_BYTES);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(out, SELF_BYTES, MPI_BYTE, right, 4, /* site ring-sendrecv */
                 in, SELF_BYTES, MPI_BYTE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < PAIR_REPS; ++i) {
      MPI_Request req[2];
      MPI_Irecv(in, PAIR_BYTES, MPI_BYTE, left, 5, MPI_COMM_WORLD, &req[0]); /* site pair-irecv */
      MPI_Isend(out, PAIR_BYTES, MPI_BYTE, right, 5, MPI_COMM_WORLD, &req[1]); /* site pair-isend */
      MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    free(in);
  }
  free(out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "sites";
  if (strcmp(mode, "sites") == 0) {
    sites();
  } else if (strcmp(mode, "self") == 0) {
    self(rank, size);
  } else {
    if (rank == 0) fprintf(stderr, "mpi_sites: unknown mode '%s' (sites, self)\n", mode);
    MPI_Finalize();
    return 2;
  }
  MPI_Finalize();
  return 0;
}
