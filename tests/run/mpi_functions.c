/* mpi_functions: an MPI program built with -finstrument-functions that does not link the tool
 * (tests/run). Every rank calls work() 3 times (2 ms each) between MPI_Init and MPI_Finalize.
 * Under `mpirun -np N scalea run`, the function regions must be recorded: N x 3 visits of work. */
#include <mpi.h>

#include "../../apps/omp/planted.h"

__attribute__((noinline)) void work(void) { sleep_ms(2); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (int i = 0; i < 3; ++i) work();
  MPI_Finalize();
  return 0;
}
