/* mpi_hybrid: MPI + OpenMP with planted OpenMP overheads inside each rank.
 *
 *   MPI_Init_thread(MPI_THREAD_FUNNELED); per step, one parallel region where thread 0 works W
 *   and every other thread W + I (imbalance: thread 0 waits about I at the first explicit
 *   barrier), then the masked thread calls MPI_Allreduce of COUNT doubles (so the call is in the
 *   masked region's subtree) and everyone meets at a barrier. STEPS steps.
 *
 *   With "multiple": MPI_THREAD_MULTIPLE, and afterwards every thread of a rank exchanges
 *   MT_REPS messages of MT_BYTES bytes with the same thread of the partner rank (rank ^ 1) with
 *   MPI_Sendrecv, concurrently (tag = thread number).
 *
 *   With "tail": afterwards, on rank 1 only (so that processes analysing blocks of the rank files
 *   meet it in some blocks only), one parallel region whose body is a single construct and nothing
 *   else. At -O2 with sibling calls the outlined body ends with a tail jump into the runtime (to
 *   the single's implicit barrier), whose return address is then inside the runtime: the loader
 *   places the barrier in the body (docs/symbols.md), and the MPI analysis must do it as the
 *   serial one does.
 *
 *   With "ranklag" instead of all the above: LAG_STEPS steps of an `omp parallel for
 *   schedule(static)` over LAG_ITERS iterations in which every iteration of rank r sleeps
 *   (r + 1) LAG_X: the threads of a rank are balanced, the ranks are not (a domain decomposition
 *   that gives the last rank the most work), then MPI_Allreduce of one double outside the
 *   parallel region: the earlier ranks wait for the last in it. No schedule can fix that; the
 *   decomposition can. Prints "truth lag R S" per rank: its time in the loops.
 *
 * usage: mpi_hybrid [scale] [multiple] [tail] | mpi_hybrid [scale] ranklag
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planted_common.h"

#define W 0.02
#define I 0.05
#define STEPS 3
#define COUNT 512
#define MT_REPS 10
#define MT_BYTES 1000
#define LAG_STEPS 5
#define LAG_ITERS 8
#define LAG_X 0.0025

static double g_tail[COUNT];

__attribute__((noinline)) static void tail(double f) {
#pragma omp parallel
#pragma omp single
  for (int i = 0; i < COUNT; ++i) g_tail[i] = g_tail[i] * f + 1;
}

static int has_arg(int argc, char** argv, const char* word) {
  for (int i = 2; i < argc; ++i)
    if (strcmp(argv[i], word) == 0) return 1;
  return 0;
}

static void ranklag(double scale, int rank) {
  double in = rank, out = 0, loops = 0;
  for (int s = 0; s < LAG_STEPS; ++s) {
    double t0 = MPI_Wtime();
#pragma omp parallel for schedule(static) /* LOOP_RANKLAG */
    for (int i = 0; i < LAG_ITERS; ++i) sleep_s((rank + 1) * LAG_X * scale);
    loops += MPI_Wtime() - t0;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  printf("truth lag %d %.6f\n", rank, loops);
}

int main(int argc, char** argv) {
  double scale = argc > 1 ? atof(argv[1]) : 1.0;
  int multiple = has_arg(argc, argv, "multiple");
  int provided;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (has_arg(argc, argv, "ranklag")) {
    ranklag(scale, rank);
    MPI_Finalize();
    return 0;
  }
  double a[COUNT], b[COUNT];
  for (int i = 0; i < COUNT; ++i) a[i] = i;
  for (int s = 0; s < STEPS; ++s) {
#pragma omp parallel
    {
      sleep_s((W + (omp_get_thread_num() > 0 ? I : 0)) * scale);
#pragma omp barrier
#pragma omp masked
      MPI_Allreduce(a, b, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#pragma omp barrier
    }
  }
  int partner = rank ^ 1;
  if (multiple && provided == MPI_THREAD_MULTIPLE && partner < size) {
#pragma omp parallel
    {
      char out[MT_BYTES] = {0}, in[MT_BYTES];
      int tag = omp_get_thread_num();
      for (int k = 0; k < MT_REPS; ++k)
        MPI_Sendrecv(out, MT_BYTES, MPI_CHAR, partner, tag, in, MT_BYTES, MPI_CHAR, partner, tag,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (rank == 1 && has_arg(argc, argv, "tail")) tail(0.5);
  if (rank == 0) printf("mpi_hybrid: provided %d, b[1] %g\n", provided, b[1]);
  MPI_Finalize();
  return 0;
}
