/* mpi_sampled: an MPI program that computes in main, with no OpenMP and no user regions (as
 * most MPI codes do), for call-path sampling (docs/sampling.md, docs/groundtruth.md).
 *
 *   mpirun -np N mpi_sampled [MS=200] [divide] [pin]
 *
 * After an MPI_Barrier, every rank runs compute_forces (MS ms of CPU time) in main, then
 * update_cells (MS/2), then MPI_Allreduce; rank 0 alone runs write_output (MS/2) after it. Built at
 * -O2 without frame pointers. Truth printed by each rank (its functions' CPU time, as it measured
 * it): "truth rank R cpu_forces S", cpu_cells, and on rank 0 cpu_output. divide  the ranks divide
 * compute_forces and update_cells between them (each does 1/N), and nobody runs write_output: the
 * work is not replicated pin     every rank runs on CPU 0: the ranks share one CPU, so each takes
 * as long as the whole work would (the wall time of replicated work, without it)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <mpi.h>
#include <stdio.h>

#include "../omp/planted.h"

PLANTED_CPU_FUNCTION(compute_forces)
PLANTED_CPU_FUNCTION(update_cells)
PLANTED_CPU_FUNCTION(write_output)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size = 1, divide = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "divide") == 0) divide = 1;
    if (strcmp(argv[i], "pin") == 0) {
      /* CPU 0 for every rank (mpirun may have bound each rank to a core of its own). */
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(0, &one);
      if (sched_setaffinity(0, sizeof one, &one) != 0) perror("mpi_sampled: sched_setaffinity");
    }
  }
  double s = arg_num(argc, argv, 1, 200) * 1e-3;
  MPI_Barrier(MPI_COMM_WORLD);  // the ranks start computing together (after a skewed start-up)
  double share = divide ? s / size : s;
  double forces = compute_forces(share);
  double cells = update_cells(share / 2);
  double sum = 0, mine = forces + cells;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double output = rank == 0 && !divide ? write_output(s / 2) : 0;
  printf("truth rank %d cpu_forces %.9f\ntruth rank %d cpu_cells %.9f\n", rank, forces, rank,
         cells);
  if (rank == 0 && !divide) printf("truth rank 0 cpu_output %.9f\n", output);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
