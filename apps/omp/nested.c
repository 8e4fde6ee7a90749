/* nested: nested parallel regions, 2 outer threads x 2 inner threads.
 *
 *   OMP_MAX_ACTIVE_LEVELS=2 nested [T_ms=20]
 *
 * (omp_set_max_active_levels(2) is also called, so the environment variable is optional.)
 * Outer region OUTER: num_threads(2). Each outer thread opens the inner region INNER with
 * num_threads(2), in which inner thread j sleeps (j+1)*T ms. Planted truth:
 *   - structure: program/parallel@OUTER/parallel@INNER; the inner region is forked twice
 *     (once per outer thread), each time with a team of 2: 4 implicit tasks in all
 *   - each inner region lasts 2T ms; the inner master (j=0) waits T ms in the inner join barrier
 *   - the outer region lasts ~2T ms
 * Measured truth printed: truth inner_longest (longest inner thread body), truth
 * inner_master_wait (sum over the inner masters of: last inner arrival minus their own), truth
 * outer_master_wait (the outer master's wait for the other outer thread at the outer join), truth
 * outer (the outer region's wall time on the initial thread), truth inner_wall (the longest inner
 * region's wall time on its master, fork to join included).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"

int main(int argc, char** argv) {
  double t = arg_num(argc, argv, 1, 20);
  omp_set_max_active_levels(2);
  int inner_teams = 0;
  double longest = 0, master_wait = 0, outer_arrive[2] = {0, 0};
  double outer = now_s(), inner_wall = 0;
#pragma omp parallel num_threads(2) /* OUTER */
  {
    double arrive[2] = {0, 0}, w0 = now_s();
#pragma omp parallel num_threads(2) /* INNER */
    {
      if (omp_get_thread_num() == 0 && omp_get_num_threads() == 2) {
#pragma omp atomic
        ++inner_teams;
      }
      double t0 = now_s();
      sleep_ms((omp_get_thread_num() + 1) * t);
      arrive[omp_get_thread_num()] = now_s();
#pragma omp critical
      if (arrive[omp_get_thread_num()] - t0 > longest) longest = arrive[omp_get_thread_num()] - t0;
    }
    w0 = now_s() - w0;
#pragma omp critical
    if (w0 > inner_wall) inner_wall = w0;
    double w = arrive[1] > arrive[0] ? arrive[1] - arrive[0] : 0;
#pragma omp atomic
    master_wait += w;
    outer_arrive[omp_get_thread_num()] = now_s();
  }
  outer = now_s() - outer;
  printf("nested: %d inner teams of 2, T=%g ms\n", inner_teams, t);
  print_truth("inner_longest", longest);
  print_truth("inner_master_wait", master_wait);
  print_truth("outer", outer);
  print_truth("inner_wall", inner_wall);
  print_truth("outer_master_wait",
              outer_arrive[1] > outer_arrive[0] ? outer_arrive[1] - outer_arrive[0] : 0);
  return 0;
}
