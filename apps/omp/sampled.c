/* sampled: CPU work of known size in known functions, for call-path sampling
 * (docs/sampling.md, docs/groundtruth.md).
 *
 *   sampled [MS=200]
 *
 * main runs serial_work (MS ms of CPU time) and inlined_work (MS/2; always inlined into main, its
 * loop at the line marked INLINED_LOOP), then a parallel region of two threads (PAR) in which
 * thread 0 runs work_a (MS) and thread 1 work_b (MS/2). Built at -O2 without frame pointers: the
 * sampler must unwind with the unwind tables. Truth printed (each function's CPU time, as the
 * thread measured it): truth cpu_serial, cpu_inlined, cpu_a, cpu_b.
 */
#include <omp.h>
#include <stdio.h>

#include "planted.h"

PLANTED_CPU_FUNCTION(serial_work) /* SERIAL_LOOP */

static inline __attribute__((always_inline)) double inlined_work(double s) {
  double used = 0;
  PLANTED_CPU_WORK(s, used); /* INLINED_LOOP */
  return used;
}

PLANTED_CPU_FUNCTION(work_a)
PLANTED_CPU_FUNCTION(work_b)

int main(int argc, char** argv) {
  double s = arg_num(argc, argv, 1, 200) * 1e-3;
  double serial = serial_work(s);
  double inlined = inlined_work(s / 2);
  double a = 0, b = 0;
#pragma omp parallel num_threads(2) /* PAR */
  {
    if (omp_get_thread_num() == 0) a = work_a(s);
    else b = work_b(s / 2);
  }
  print_truth("cpu_serial", serial);
  print_truth("cpu_inlined", inlined);
  print_truth("cpu_a", a);
  print_truth("cpu_b", b);
  return 0;
}
