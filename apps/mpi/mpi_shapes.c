/* mpi_shapes: MPI programs of the shapes real codes have, each with a planted overhead of known
 * size (tests/groundtruth/groundtruth_test.cpp, docs/groundtruth.md). No user regions: the work
 * is in main, as in most MPI codes.
 *
 *   mpi_shapes main R        every rank works R seconds in main (the same work: replicated),
 *                            then one MPI_Allreduce of 8 bytes
 *   mpi_shapes allreduce N X N times: rank r works (r + 1) X seconds, then MPI_Allreduce of
 *                            one double: rank r waits (size - 1 - r) X in it (waiting, not
 *                            transfer; every rank works, so no rank's code is serial)
 *   mpi_shapes balanced N B  after one MPI_Barrier, N MPI_Allreduce calls of B bytes and N
 *                            MPI_Barrier calls, no work between them: the ranks arrive together,
 *                            so the calls' time is their own cost, not waiting (as in the Intel
 *                            MPI Benchmarks)
 *   mpi_shapes fusable N     after one MPI_Barrier, N time steps of four reductions of one
 *                            double each, no work between: three MPI_Allreduce with MPI_SUM
 *                            (marked as sums; the third spans two lines) that could be one call
 *                            of three values, and one with MPI_MAX (marked) that could not join
 *                            them. Prints the sums (N * size each) and the maximum
 *   mpi_shapes pingpong N B  after one MPI_Barrier, ranks 0 and 1 bounce a message of B bytes
 *                            N times (0 sends, 1 receives and sends it back), no work between:
 *                            each receive waits for the round trip, the exchange's own cost,
 *                            not for a late partner (IMB's PingPong); other ranks only join the
 *                            barrier
 *   mpi_shapes exchange N MB L  N times, pairs of ranks (0-1, 2-3, ...) swap MB MiB with
 *                            MPI_Irecv and MPI_Isend, then complete both in one MPI_Waitall; the
 *                            odd rank of each pair first sleeps L ms (0: nobody is late): the
 *                            large messages complete in the MPI_Waitall (transfer), and the even
 *                            rank waits L ms more there. Truth: late (the odd ranks' sleeps)
 *   mpi_shapes halo N MB W   N time steps: every rank computes W ms (a sleep), then swaps MB MiB
 *                            with its partner (0-1, 2-3, ...) by blocking calls, the even rank
 *                            MPI_Send then MPI_Recv, the odd one the other way round (marked):
 *                            the transfer could overlap with the computation (W > 0), or has
 *                            nothing to overlap with (W = 0). Prints the bytes received
 *   mpi_shapes procnull N B  N times, a non-periodic chain: MPI_Sendrecv of B bytes to rank + 1
 *                            from rank - 1, then MPI_Isend/MPI_Irecv the other way; the ends'
 *                            partners are MPI_PROC_NULL: 2 N B bytes per link, sent and received
 *   mpi_shapes farm N T      master/worker: rank 0 hands out N tasks (one int each, MPI_Send) to
 *                            the other ranks and collects their results (MPI_Recv from any
 *                            rank), each task T ms of sleep on a worker; a task number of -1
 *                            stops a worker. Prints the sum of the results (the same however
 *                            the tasks fall)
 *
 * Times are sleeps: exact even when the ranks share the cores.
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
  double x = 1, sum = 0;
  if (!strcmp(mode, "main")) {
    sleep_s(argc > 2 ? atof(argv[2]) : 0.2);
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "allreduce")) {
    int n = argc > 2 ? atoi(argv[2]) : 5;
    double step = argc > 3 ? atof(argv[3]) : 0.02;
    for (int i = 0; i < n; ++i) {
      sleep_s((rank + 1) * step);
      MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "balanced")) {
    int n = argc > 2 ? atoi(argv[2]) : 20000, bytes = argc > 3 ? atoi(argv[3]) : 8;
    char* in = calloc((size_t)bytes, 1);
    char* out = calloc((size_t)bytes, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) MPI_Allreduce(in, out, bytes, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) MPI_Barrier(MPI_COMM_WORLD);
    free(in);
    free(out);
  } else if (!strcmp(mode, "fusable")) {
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    double energy = 0, mass = 0, momentum = 0, worst = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) {
      double e = 1, m = 1, p = 1, w = rank, s;
      MPI_Allreduce(&e, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* FUSE_SUM_1 */
      energy += s;
      MPI_Allreduce(&m, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* FUSE_SUM_2 */
      mass += s;
      MPI_Allreduce(&w, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); /* FUSE_MAX */
      worst = s > worst ? s : worst;
      MPI_Allreduce(&p, &s, 1, MPI_DOUBLE, /* FUSE_SUM_3 */
                    MPI_SUM, MPI_COMM_WORLD);
      momentum += s;
    }
    sum = energy + mass + momentum;
    if (rank == 0) printf("fusable: %g %g %g max %g\n", energy, mass, momentum, worst);
  } else if (!strcmp(mode, "pingpong")) {
    int n = argc > 2 ? atoi(argv[2]) : 20000, bytes = argc > 3 ? atoi(argv[3]) : 8;
    char* buf = calloc((size_t)bytes, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n && size > 1 && rank < 2; ++i) {
      if (rank == 0) {
        MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    free(buf);
  } else if (!strcmp(mode, "exchange")) {
    int n = argc > 2 ? atoi(argv[2]) : 20;
    size_t bytes = (size_t)((argc > 3 ? atof(argv[3]) : 4) * 1024 * 1024);
    double late = argc > 4 ? atof(argv[4]) * 1e-3 : 0, slept = 0;
    char* out = calloc(bytes, 1);
    char* in = calloc(bytes, 1);
    int partner = rank ^ 1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n && partner < size; ++i) {
      if (rank % 2 == 1 && late > 0) {
        sleep_s(late);
        slept += late;
      }
      MPI_Request rq[2];
      MPI_Irecv(in, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD, &rq[0]);
      MPI_Isend(out, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD, &rq[1]);
      MPI_Waitall(2, rq, MPI_STATUSES_IGNORE); /* EXCHANGE_WAIT */
    }
    MPI_Allreduce(&slept, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("truth late %.9f\n", sum);
    free(out);
    free(in);
  } else if (!strcmp(mode, "halo")) {
    int n = argc > 2 ? atoi(argv[2]) : 20;
    size_t bytes = (size_t)((argc > 3 ? atof(argv[3]) : 4) * 1024 * 1024);
    double work = (argc > 4 ? atof(argv[4]) : 10) * 1e-3;
    char* out = calloc(bytes, 1);
    char* in = calloc(bytes, 1);
    int partner = rank ^ 1;
    double got = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n && partner < size; ++i) {
      if (work > 0) sleep_s(work);
      if (rank % 2 == 0) {
        MPI_Send(out, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD); /* HALO_SEND_EVEN */
        MPI_Recv(in, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD,   /* HALO_RECV_EVEN */
                 MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(in, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD, /* HALO_RECV_ODD */
                 MPI_STATUS_IGNORE);
        MPI_Send(out, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD); /* HALO_SEND_ODD */
      }
      got += (double)bytes;
    }
    MPI_Allreduce(&got, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    free(out);
    free(in);
  } else if (!strcmp(mode, "procnull")) {
    int n = argc > 2 ? atoi(argv[2]) : 10, bytes = argc > 3 ? atoi(argv[3]) : 4096;
    char* buf = calloc(2, (size_t)bytes);
    int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL,
        left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    for (int i = 0; i < n; ++i) {
      MPI_Sendrecv(buf, bytes, MPI_BYTE, right, 0, buf + bytes, bytes, MPI_BYTE, left, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Request rq[2];
      MPI_Irecv(buf + bytes, bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &rq[0]);
      MPI_Isend(buf, bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &rq[1]);
      MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    free(buf);
  } else if (!strcmp(mode, "farm")) {
    int n = argc > 2 ? atoi(argv[2]) : 40;
    double t = (argc > 3 ? atof(argv[3]) : 5) * 1e-3;
    if (rank == 0) {
      int next = 0, busy = 0, stop = -1;
      for (int w = 1; w < size; ++w) {  // a first task each, or stop
        if (next < n) {
          MPI_Send(&next, 1, MPI_INT, w, 0, MPI_COMM_WORLD);
          ++next, ++busy;
        } else {
          MPI_Send(&stop, 1, MPI_INT, w, 0, MPI_COMM_WORLD);
        }
      }
      while (busy > 0) {
        int result;
        MPI_Status st;
        MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
        sum += result;
        --busy;
        if (next < n) {
          MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, 0, MPI_COMM_WORLD);
          ++next, ++busy;
        } else {
          MPI_Send(&stop, 1, MPI_INT, st.MPI_SOURCE, 0, MPI_COMM_WORLD);
        }
      }
    } else {
      for (;;) {
        int task;
        MPI_Recv(&task, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (task < 0) break;
        sleep_s(t);
        int result = task * 2;
        MPI_Send(&result, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
      }
    }
  } else {
    if (rank == 0)
      fprintf(
          stderr,
          "usage: mpi_shapes main R | allreduce N X | balanced N B | fusable N | pingpong N B | "
          "exchange N MB L | halo N MB W | procnull N B | farm N T\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) printf("mpi_shapes %s: %d ranks, sum %g\n", mode, size, sum);
  MPI_Finalize();
  return 0;
}
