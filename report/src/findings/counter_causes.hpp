// What the counters measured in a region say its unidentified overhead was: the tool's own
// counter reads, page faults on memory touched for the first time, or CPU time (docs/
// overhead-model.md, "How findings are chosen"). The model has no class for these: the time stays
// unidentified, and the finding's hint names the likely cause with the figures.
#pragma once
#include <string>

#include "output/text.hpp"  // grouped()

namespace scalea::cli {

// A region's counters beyond its reference's, and its unidentified overhead.
struct UnidentifiedEvidence {
  double seconds = 0;       // the finding's amount (wall seconds)
  int p = 1;                // PEs of the run
  bool reference = false;   // measured against a reference run (the extras below are over it)
  double extra_faults = 0;  // page faults
  double extra_cpu = 0;     // CPU seconds over all PEs (perf::TASK-CLOCK)
  double extra_reads = 0;   // PE-seconds of the tool's own counter reads
};

// The hint naming the likely cause, or "" when the counters name none. In this order:
// - the tool's counter reads, when they take at least half of it;
// - page faults, when at kPageFaultSeconds each they take kPageFaultShare of it and at no more
//   than kPageFaultMaxSeconds each all of it;
// - CPU time, when it grew by at least half of it: the work took longer running, not waiting.
std::string unidentified_cause(const UnidentifiedEvidence& e);

}  // namespace scalea::cli
