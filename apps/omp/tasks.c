/* tasks: explicit tasks created by one thread, waited for by taskwait, taskgroup, and a barrier.
 *
 *   OMP_NUM_THREADS=p tasks [N=8] [T_ms=20]
 *
 * Three parallel regions, each with one single construct that creates N tasks each sleeping T ms:
 *   A (PAR_A):  single SINGLE_A creates tasks TASK_A, then taskwait TASKWAIT_A
 *   B (PAR_B):  single SINGLE_B opens taskgroup TASKGROUP_B and creates tasks TASK_B in it
 *   C (PAR_C):  single nowait SINGLE_C creates tasks TASK_C; every thread then reaches the
 *               explicit barrier BARRIER_C and the team runs the tasks inside it
 * Planted truth for each of A, B, C:
 *   - N task visits, total task time N*T ms, attributed under the creation context:
 *     program/parallel/single/task (A, C) and program/parallel/single/taskgroup/task (B),
 *     whichever thread ran them; tasks_created = N on the single node
 *   - C: the barrier's task_exec sum is N*T ms (the tasks ran inside it), and its wait (time not
 *     spent in tasks) is small: the team is busy with tasks until all are done
 * Measured truth printed: truth tasks.A, tasks.B, tasks.C (sum of the task bodies' times).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"

int main(int argc, char** argv) {
  int n = (int)arg_num(argc, argv, 1, 8);
  double t = arg_num(argc, argv, 2, 20);
  int done = 0;
  double spent[3] = {0, 0, 0};
#pragma omp parallel /* PAR_A */
#pragma omp single   /* SINGLE_A */
  {
    for (int i = 0; i < n; ++i) {
#pragma omp task /* TASK_A */
      {
        double t0 = now_s();
        sleep_ms(t);
        double d = now_s() - t0;
#pragma omp atomic
        spent[0] += d;
#pragma omp atomic
        ++done;
      }
    }
#pragma omp taskwait /* TASKWAIT_A */
  }

#pragma omp parallel /* PAR_B */
#pragma omp single   /* SINGLE_B */
  {
#pragma omp taskgroup /* TASKGROUP_B */
    {
      for (int i = 0; i < n; ++i) {
#pragma omp task /* TASK_B */
        {
          double t0 = now_s();
          sleep_ms(t);
          double d = now_s() - t0;
#pragma omp atomic
          spent[1] += d;
#pragma omp atomic
          ++done;
        }
      }
    }
  }

#pragma omp parallel /* PAR_C */
  {
#pragma omp single nowait /* SINGLE_C */
    for (int i = 0; i < n; ++i) {
#pragma omp task /* TASK_C */
      {
        double t0 = now_s();
        sleep_ms(t);
        double d = now_s() - t0;
#pragma omp atomic
        spent[2] += d;
#pragma omp atomic
        ++done;
      }
    }
#pragma omp barrier /* BARRIER_C */
  }
  printf("tasks: %d tasks run, N=%d, T=%g ms\n", done, n, t);
  print_truth("tasks.A", spent[0]);
  print_truth("tasks.B", spent[1]);
  print_truth("tasks.C", spent[2]);
  return 0;
}
