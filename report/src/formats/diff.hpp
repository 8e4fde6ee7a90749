// The table of `scalea diff` (diff.cpp): two experiments compared region by region, shared
// with `scalea db compare`, which reads the two from the database.
#pragma once
#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "scalea/overheads/classes.hpp"

namespace scalea::cli {

struct DiffRegion {
  double t_p = 0, t_o = 0;
  std::array<double, overheads::kClassCount> classes{};
  int p = 1;
};

// One of the two experiments: what the header names, and its regions.
struct DiffSide {
  std::string path;  // the experiment
  int p = 0;
  std::string reference;  // the reference it was classified against, "" for none
  std::vector<DiffRegion> regions;
  std::function<std::string(size_t)> region_path;  // the printed call path of regions[i]
};

// Prints the table (format "text") or the scalea-diff/1 document ("json"). `matched` pairs the
// regions of A and B (index, or -1 where a side has none) in the order rows of equal change
// keep; rows whose T_p changed less than `min_change` are left out.
void print_diff(const DiffSide& a, const DiffSide& b,
                const std::vector<std::pair<long, long>>& matched, const std::string& format,
                double min_change);

}  // namespace scalea::cli
