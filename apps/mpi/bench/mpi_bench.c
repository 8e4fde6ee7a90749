/* mpi_bench: cost per MPI call, for bare vs tool comparisons (docs/mpi.md).
 *   mpi_bench pingpong [ITERS] [BYTES]   ranks 0 and 1 bounce a message; prints us per one-way call
 *   mpi_bench allreduce [ITERS] [COUNT]  every rank; prints us per MPI_Allreduce (of COUNT doubles)
 *   mpi_bench null [ITERS] [BYTES]       MPI_Send to MPI_PROC_NULL: the MPI library does nothing,
 *                                        so tool - bare is the wrapper's own cost per call
 *   mpi_bench self [ITERS] [COUNT]       MPI_Allreduce on MPI_COMM_SELF (a local collective)
 *   mpi_bench regions N                  every rank enters N user regions (the same names on all
 *                                        ranks) plus one of its own, each with an MPI_Barrier
 *                                        inside: sizes the unification by regions (docs/mpi.md)
 * Each measurement follows a warm-up of ITERS/10 calls and is the minimum of 5 repetitions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../planted_common.h"

static void many_regions(int rank, long n) {
  char name[64];
  for (long i = 0; i <= n; ++i) {
    if (i < n) snprintf(name, sizeof name, "region_%ld", i);
    else snprintf(name, sizeof name, "rank_%d_only", rank);
    REGION_BEGIN(name);
    MPI_Barrier(MPI_COMM_SELF);
    REGION_END(name);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "pingpong";
  if (strcmp(mode, "regions") == 0) {
    many_regions(rank, argc > 2 ? atol(argv[2]) : 1000);
    MPI_Finalize();
    return 0;
  }
  long iters = argc > 2 ? atol(argv[2]) : 100000;
  long n = argc > 3 ? atol(argv[3]) : (strcmp(mode, "pingpong") == 0 ? 8 : 1);
  char* buf = calloc((size_t)n + 8, 8);
  double best = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    long count = rep == 0 ? iters / 10 : iters;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (strcmp(mode, "pingpong") == 0) {
      if (rank <= 1 && size >= 2) {
        for (long i = 0; i < count; ++i) {
          if (rank == 0) {
            MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
          }
        }
      }
    } else {
      double* d = (double*)buf;
      if (strcmp(mode, "null") == 0) {
        for (long i = 0; i < count; ++i) MPI_Send(buf, (int)n, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
      } else if (strcmp(mode, "self") == 0) {
        for (long i = 0; i < count; ++i)
          MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
      } else {
        for (long i = 0; i < count; ++i)
          MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      }
    }
    double t = MPI_Wtime() - t0;
    if (rep > 0 && t < best) best = t;
  }
  double per = strcmp(mode, "pingpong") == 0 ? best / (2.0 * iters) : best / iters;
  if (rank == 0) printf("%s %ld %ld %.4f\n", mode, iters, n, per * 1e6);
  free(buf);
  MPI_Finalize();
  return 0;
}
