// Each PE's time in every region split as the classifier's rules split it, for the HTML page's
// system pane (docs/report.md, "System"): picking a PE shows its classes, as Cube's system tree
// does.
#pragma once
#include <cstdint>
#include <vector>

#include "analyze.hpp"

namespace scalea::cli {

// Whether the rules find class `c` in a PE's own time (overheads::PeOwn): synchronization, data
// movement, control and loss of parallelism. Additional computation and unidentified time are
// found per region against the reference, over all PEs.
bool split_per_pe(overheads::Class c);

// overheads::Analysis::pe_own summed over each region's subtree, as a PE's time in a region holds
// its children's: PE i's values in region r add up to its time t_i(r), but for the time no rule
// classifies. Empty when the analysis has no pe_own (AnalysisOptions::pe_own_cells).
class PeSplitTable {
 public:
  explicit PeSplitTable(const Analyzed& x);
  bool empty() const { return incl_.empty(); }
  // PE `thread` (an index into Experiment::threads) in merged node `node`.
  const overheads::PeOwn& at(uint32_t thread, uint32_t node) const {
    return incl_[size_t(thread) * nodes_ + node];
  }

 private:
  size_t nodes_ = 0;
  std::vector<overheads::PeOwn> incl_;
};

}  // namespace scalea::cli
