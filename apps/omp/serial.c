/* serial: a serial section between two parallel regions, marked with a user region.
 *
 *   OMP_NUM_THREADS=p serial [S_ms=60] [A_ms=20]
 *
 * Planted truth: parallel region 1 (every thread sleeps A ms), then the user region "serial"
 * on the initial thread only, sleeping S ms (1 visit, time S), then parallel region 2 (A ms).
 * The user region is not inside any parallel region (path: program/user:serial).
 * Measured truth printed: truth serial (the section); for each parallel region k = 1, 2:
 * truth park (wall time on the initial thread around the construct, which includes the runtime's
 * start-up for the first) and truth sleepk (the longest sleep of its threads).
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"
#include "scalea/scalea.h"

int main(int argc, char** argv) {
  double s = arg_num(argc, argv, 1, 60);
  double a = arg_num(argc, argv, 2, 20);
  double par[2] = {0, 0}, slept[2] = {0, 0}, serial = 0;
  par[0] = now_s();
#pragma omp parallel
  {
    double t0 = now_s();
    sleep_ms(a);
    double d = now_s() - t0;
#pragma omp critical
    if (d > slept[0]) slept[0] = d;
  }
  par[0] = now_s() - par[0];
  SCALEA_REGION_BEGIN("serial"); /* SERIAL */
  double t0 = now_s();
  sleep_ms(s);
  serial = now_s() - t0;
  SCALEA_REGION_END("serial");
  par[1] = now_s();
#pragma omp parallel
  {
    double t1 = now_s();
    sleep_ms(a);
    double d = now_s() - t1;
#pragma omp critical
    if (d > slept[1]) slept[1] = d;
  }
  par[1] = now_s() - par[1];
  printf("serial: S=%g ms, A=%g ms\n", s, a);
  print_truth("serial", serial);
  print_truth("par1", par[0]);
  print_truth("par2", par[1]);
  print_truth("sleep1", slept[0]);
  print_truth("sleep2", slept[1]);
  return 0;
}
