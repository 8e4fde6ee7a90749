// The SCALEA overhead classification of every region (call path) of a run, optionally against
// a reference run (same program and input, p = 1). The model and its formulas are in
// docs/overhead-model.md; every class decision comes from the rule table (rules.hpp).
//
// For a region r run on p processing elements (PEs): T_p(r) is the longest time any PE spent in
// it, B = p T_p(r) its PE-time budget, split into useful work U, synchronization S, control C,
// data movement D, loss of parallelism L and the rest R. Then
//   T_o = T_p - T_s/p = (U - T_s)/p + S/p + C/p + D/p + L/p + R/p
// and the six class values are these terms (additional_computation = (U - T_s)/p,
// unidentified = R/p). They sum to T_o exactly.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/overheads/classes.hpp"

namespace scalea::overheads {

struct Options {
  int p = 0;  // processing elements of the run; 0: the number of threads of all ranks
};

struct RegionOverheads {
  uint32_t node = 0;          // merged node in the run (kNoIndex for regions only in the reference)
  std::string path;           // call path, e.g. "md/parallel@md.c:88/loop@md.c:90"
  std::string key;            // canonical key used to match the reference
  int p = 1;
  double t_p = 0;             // s, wall time in the run (longest PE)
  double t_s = 0;             // s, reference time, or the estimate U when there is no reference
  bool t_s_estimated = true;
  bool in_run = true, in_reference = false;
  double t_o = 0;             // s, T_p - T_s/p
  std::array<double, kClassCount> classes{};  // s of wall time, sum == t_o
  std::map<std::string, double> subclasses;    // "synchronization.barrier" -> s
  double useful_pe = 0;       // U in PE-seconds
  double speedup = 0, efficiency = 0;
  size_t pes_ran = 0;         // PEs that ran the region
  double imbalance = 1;       // max / mean time over the PEs that ran it
  int most_loaded = -1, least_loaded = -1;  // index into Experiment::threads
};

struct ProgramEfficiency {  // POP metrics, for comparison with other tools
  double load_balance = 0, communication_efficiency = 0, parallel_efficiency = 0;
  std::optional<double> computation_scalability, global_efficiency;
};

struct Analysis {
  int p = 1;
  bool has_reference = false;
  std::vector<RegionOverheads> regions;       // one per merged node of the run, same index
  std::vector<RegionOverheads> only_in_reference;
  ProgramEfficiency program;
};

Analysis classify(const drg::MergedTree& run, const drg::MergedTree* reference,
                  const Options& options = {});

// Regions whose six classes do not sum to T_o within `tolerance` seconds (should be none): one
// line each, for tests that check the identity on every experiment they produce.
std::vector<std::string> identity_violations(const Analysis& a, double tolerance = 1e-9);

// The canonical key of a region: kind, subkind, name and source location (or module+address).
std::string region_key(const drg::Region& r);

}  // namespace scalea::overheads
