// What the counters say an unidentified overhead was (counter_causes.hpp).
#include "counter_causes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "wait_causes.hpp"

namespace scalea::cli {

std::string unidentified_cause(const UnidentifiedEvidence& e) {
  if (e.seconds <= 0) return "";
  const double p = std::max(1, e.p);
  const double reads = e.extra_reads / p, cpu = e.extra_cpu / p;
  if (e.reference && reads >= 0.5 * e.seconds)
    return fmt::format(
        "the tool's own counter reads take up to {:.3f} s of it (2 per visit of a counted "
        "region, in more visits than the reference's): a region visited this often is "
        "measured best without counters in it; compare a run without --counters "
        "(SCALEA_COUNTERS=none) or with fewer counted regions (SCALEA_COUNTER_REGIONS)",
        std::min(reads, e.seconds));
  const double least = e.extra_faults * kPageFaultSeconds / p;
  if (e.extra_faults > 0 && least >= kPageFaultShare * e.seconds &&
      e.seconds * p / e.extra_faults <= kPageFaultMaxSeconds)
    return fmt::format(
        "page faults take at least {:.3f} s of it ({} more than the reference, at 1 us each "
        "over the {:.0f} PEs), and all of it if each took {:.1f} us (a fault takes 1 to 20 us, "
        "the more when threads fault memory in together): memory touched for the first time "
        "here (allocated anew at each call, or given back to the system and faulted in again) "
        "costs a fault per page; allocate it once, outside the loop that repeats, and reuse it",
        std::min(least, e.seconds), grouped(e.extra_faults), p,
        e.seconds * p / e.extra_faults * 1e6);
  if (cpu >= 0.5 * e.seconds)
    return fmt::format(
        "the threads' CPU time in it grew by {:.3f} s per PE over the reference: the same work "
        "took longer on the CPUs, not waiting for them or for the OS (memory bandwidth, cache "
        "misses, cache lines moving between the threads' caches as when they write to "
        "neighbouring data; cache-miss counters on a machine that has them tell which, "
        "docs/counters.md)",
        cpu);
  return "";
}

}  // namespace scalea::cli
