// What call-path sampling saw (docs/sampling.md), per node of the merged tree: the functions and
// source lines that ran on a CPU while the node was a thread's current region. Sampled frames are
// not regions: they never enter the classification, so T_o = sum of the classes is untouched;
// they say where inside a region its time went.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "scalea/drg/cct.hpp"

namespace scalea::drg {

// A function below a node: periods on a CPU with it on the stack (inclusive) and in it (self),
// and its hottest line (a region of kind `sampled`, the one with the most self periods).
struct SampledFunction {
  std::string name;    // the function (innermost, inlined ones included), else its ELF symbol
  std::string module;  // the object file, without directories
  double inclusive = 0, self = 0;
  uint32_t hot_region = format::kNoIndex;  // its line with the most self periods
  double hot_self = 0;
  // On every sampled path below the node (the node's context: main, the outlined body, ...).
  bool on_every_path = false;
};

// A source line (or a code address without line information) and its self periods.
struct SampledLine {
  uint32_t region = format::kNoIndex;
  std::string function;
  double self = 0;
};

class SampleProfile {
 public:
  // One pass over the tree's threads (for_each_batch: in memory or read by file).
  explicit SampleProfile(const MergedTree& t);

  bool present() const { return total_ > 0; }
  double period_s() const { return period_s_; }
  double total_periods() const { return total_; }
  // Periods sampled while the node was a thread's current region (its measured children's not
  // included), over all threads.
  double periods(uint32_t node) const;
  // The same, over the node and every measured node below it.
  double inclusive_periods(uint32_t node) const;
  // The functions sampled at the node (with `below`, also at its measured descendants), by
  // inclusive periods, largest first.
  std::vector<SampledFunction> functions(uint32_t node, bool below = false) const;
  // The whole run's flat profile (every node), by self periods, largest first.
  std::vector<SampledFunction> flat() const;
  std::vector<SampledLine> lines() const;
  // The statistical error of a count of n periods: one standard deviation, in periods
  // (a Poisson count; sampling at fixed CPU intervals is no worse).
  static double error(double periods);

 private:
  struct PerFunction {
    double inclusive = 0, self = 0;
    std::map<uint32_t, double> lines;  // sampled region -> self
  };
  struct PerNode {
    double periods = 0;
    std::unordered_map<uint32_t, PerFunction> functions;  // function id -> figures
  };
  std::vector<SampledFunction> listed(const std::vector<const PerNode*>& nodes, double total) const;

  const MergedTree& tree_;
  double period_s_ = 0, total_ = 0;
  std::vector<std::string> function_names_, function_modules_;
  std::unordered_map<std::string, uint32_t> function_ids_;
  std::vector<uint32_t> function_of_region_;  // sampled region -> function id
  // Sampled region -> the function its code is physically in (its ELF symbol) when that is not
  // function_of_region_ (the code of an inlined function), else kNoIndex: both are on the stack.
  std::vector<uint32_t> caller_of_region_;
  std::map<uint32_t, PerNode> nodes_;          // merged node -> what was sampled there
};

}  // namespace scalea::drg
