// cxxscope: the C++ RAII user region SCALEA_SCOPE.
//
//   OMP_NUM_THREADS=p cxxscope [S_ms=10]
//
// Planted truth:
//   - scope "solve" (1 visit, 4*S ms) holding scope "step" (4 visits, S ms each), declared in
//     step() at the line marked STEP
//   - scope "throws" left by an exception (1 visit, S ms); the scope "after_throw" that follows is
//     its sibling, not its child
//   - a parallel region in which each thread opens scope "thread_work" (p visits, S ms each),
//     path program/parallel/thread_work
// Measured truth printed: truth step (4 sleeps), throws, after_throw, thread_work (sum).
#include <omp.h>

#include <cstdio>
#include <stdexcept>

#include "planted.h"
#include "scalea/scalea.hpp"

static double g_step = 0, g_throws = 0;

static void step(double ms) {
  SCALEA_SCOPE("step");  // STEP
  double t0 = now_s();
  sleep_ms(ms);
  g_step += now_s() - t0;
}

static void throws(double ms) {
  SCALEA_SCOPE("throws");
  double t0 = now_s();
  sleep_ms(ms);
  g_throws = now_s() - t0;
  throw std::runtime_error("planted");
}

int main(int argc, char** argv) {
  double s = arg_num(argc, argv, 1, 10);
  {
    SCALEA_SCOPE("solve");  // SOLVE
    for (int i = 0; i < 4; ++i) step(s);
  }
  try {
    throws(s);
  } catch (const std::exception&) {
  }
  double after = 0, work = 0;
  {
    SCALEA_SCOPE("after_throw");
    double t0 = now_s();
    sleep_ms(s);
    after = now_s() - t0;
  }
#pragma omp parallel reduction(+ : work)
  {
    SCALEA_SCOPE("thread_work");
    double t0 = now_s();
    sleep_ms(s);
    work += now_s() - t0;
  }
  std::printf("cxxscope: S=%g ms\n", s);
  print_truth("step", g_step);
  print_truth("throws", g_throws);
  print_truth("after_throw", after);
  print_truth("thread_work", work);
  return 0;
}
