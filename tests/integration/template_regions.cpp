// template_regions: a parallel region in a member function of a class template instantiated with
// a long template argument list, built at -O2 with -g (tests/integration/test_symbols.cpp). Its
// demangled names run to hundreds of characters; the report labels the region by the pragma's
// file:line and a short function name (docs/symbols.md, "Labels").
//
//   OMP_NUM_THREADS=p template_regions
//
// Prints the sum of the grid after two updates.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace physics {

template <typename Key, typename Value, typename Extra>
class Grid {
 public:
  explicit Grid(int n) : cells_(n, 1.0) {}

  // Not inlined, so that without -g its symbol (the whole signature) names it.
  template <typename F>
  __attribute__((noinline)) double update(F scale, const std::map<Key, Value>& coefficients) {
    double sum = 0;
    int n = int(cells_.size());
    double c = double(coefficients.size());
#pragma omp parallel for reduction(+ : sum) /* UPDATE */
    for (int i = 0; i < n; ++i) {
      cells_[i] = scale(cells_[i]) + c;
      sum += cells_[i];
    }
    return sum;
  }

 private:
  std::vector<double> cells_;
};

}  // namespace physics

using Coefficients = std::map<std::string, std::vector<std::pair<double, std::string>>>;
using Key = std::map<std::string, std::vector<double>>;

int main() {
  physics::Grid<Key, Coefficients, std::vector<std::map<int, std::string>>> grid(4096);
  std::map<Key, Coefficients> coefficients;
  double sum = 0;
  for (int step = 0; step < 2; ++step) sum = grid.update([](double v) { return v * 0.5; }, coefficients);
  std::printf("sum %.1f\n", sum);
  return 0;
}
