// template_twins: one parallel region in a function template with two instances, both called from
// main: two regions at one file:line (their functions differ) that print alike below the program
// (tests/integration/test_symbols.cpp, unique paths).
//
//   OMP_NUM_THREADS=p template_twins
//
// Prints the sum of what the instances' threads added.
#include <cstdio>

template <int N>
__attribute__((noinline)) int step() {
  int sum = 0;
#pragma omp parallel reduction(+ : sum) /* STEP */
  sum += N;
  return sum;
}

int main() {
  int sum = step<1>() + step<2>();
  std::printf("sum %d\n", sum);
  return 0;
}
