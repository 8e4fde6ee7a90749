/* mpi_planted: an MPI program whose overheads are planted with known sizes (ground truth for
 * tests/mpi and docs/mpi.md). Every phase is a user region, so each MPI call has a known path.
 *
 *   replicated    every rank "computes" the same thing: sleep R                 (loss: replicated)
 *   serial        rank 0 alone works S, then MPI_Bcast of its result: the other ranks wait about S
 *                 in MPI_Bcast                                             (loss: unparallelized)
 *   late_barrier  the last rank works L before MPI_Barrier; the others wait about L in it (sync)
 *   late_sender   rank 0 sleeps D, then sends rank 1 MSG_COUNT doubles, K times: rank 1's first
 *                 MPI_Recv waits about D (late sender); bytes: K * MSG_COUNT * 8
 *   ring          MPI_Sendrecv of RING_COUNT ints to the right neighbour, RING_REPS times:
 *                 bytes sent = received = RING_REPS * RING_COUNT * 4 per rank
 *   allreduce     MPI_Allreduce of AR_COUNT doubles, AR_REPS times
 *   late_allreduce  the last rank works W before each of LA_REPS MPI_Allreduce calls of one
 *                 double; the others wait about W in each (sync: the late rank does its share,
 *                 it is not serial code)
 *
 * usage: mpi_planted [scale]   (times are multiplied by scale; default 1)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "planted_common.h"

#define R 0.10
#define S 0.15
#define L 0.20
#define D 0.10
#define MSG_COUNT 4096
#define K 5
#define RING_COUNT 262144
#define RING_REPS 10
#define AR_COUNT 1000
#define AR_REPS 20
#define W 0.005
#define LA_REPS 20

int main(int argc, char** argv) {
  double scale = argc > 1 ? atof(argv[1]) : 1.0;
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  REGION_BEGIN("replicated");
  sleep_s(R * scale);
  REGION_END("replicated");

  REGION_BEGIN("serial");
  double result = 0;
  if (rank == 0) {
    sleep_s(S * scale);
    result = 42;
  }
  MPI_Bcast(&result, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  REGION_END("serial");

  REGION_BEGIN("late_barrier");
  if (rank == size - 1) sleep_s(L * scale);
  MPI_Barrier(MPI_COMM_WORLD);
  REGION_END("late_barrier");

  REGION_BEGIN("late_sender");
  if (size >= 2 && rank <= 1) {
    double* msg = calloc(MSG_COUNT, sizeof(double));
    for (int k = 0; k < K; ++k) {
      if (rank == 0) {
        if (k == 0) sleep_s(D * scale);
        MPI_Send(msg, MSG_COUNT, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
      } else {
        MPI_Recv(msg, MSG_COUNT, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    free(msg);
  }
  REGION_END("late_sender");

  REGION_BEGIN("ring");
  int* out = calloc(RING_COUNT, sizeof(int));
  int* in = calloc(RING_COUNT, sizeof(int));
  for (int k = 0; k < RING_REPS; ++k)
    MPI_Sendrecv(out, RING_COUNT, MPI_INT, (rank + 1) % size, 3, in, RING_COUNT, MPI_INT,
                 (rank + size - 1) % size, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  free(out);
  free(in);
  REGION_END("ring");

  REGION_BEGIN("allreduce");
  double a[AR_COUNT], b[AR_COUNT];
  for (int i = 0; i < AR_COUNT; ++i) a[i] = rank + i;
  for (int k = 0; k < AR_REPS; ++k) MPI_Allreduce(a, b, AR_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  REGION_END("allreduce");
  REGION_BEGIN("late_allreduce");
  double mine = rank, all = 0;
  for (int k = 0; k < LA_REPS; ++k) {
    if (rank == size - 1) sleep_s(W * scale);
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  REGION_END("late_allreduce");

  if (rank == 0) printf("mpi_planted: %d ranks, result %g, sum %g\n", size, result, b[1]);
  MPI_Finalize();
  return 0;
}
