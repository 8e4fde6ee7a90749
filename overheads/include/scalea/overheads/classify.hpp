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
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/overheads/classes.hpp"
#include "scalea/overheads/keys.hpp"
#include "scalea/overheads/share.hpp"

namespace scalea::overheads {

// What `scalea calibrate` measured on a machine (docs/counters.md), as the classifier uses it.
struct MachineModel {
  // The tool's own cost per recorded visit, ns, by region kind name ("user", "parallel",
  // "barrier", "lock", ...); "default" prices kinds without a figure of their own.
  std::map<std::string, double> tool_cost_ns;
  // Time penalty of one miss at a cache level ("L1", "L2", "L3"), ns: the latency of the next
  // level minus this level's. Extra misses over the reference are priced with it.
  std::map<std::string, double> miss_penalty_ns;
  double cost(const std::string& kind) const {
    auto it = tool_cost_ns.find(kind);
    if (it != tool_cost_ns.end()) return it->second;
    it = tool_cost_ns.find("default");
    return it == tool_cost_ns.end() ? 0.0 : it->second;
  }
};

struct Options {
  int p = 0;  // processing elements of the run; 0: the number of threads of all ranks
  const MachineModel* machine = nullptr;  // calibrated machine: prices misses and probe noise
  // Workers for the passes over the PEs: 0 = one per core (at most 8), 1 = serial. The results
  // are the same whatever the number.
  unsigned threads = 0;
  // The table the call paths of the run and the reference are interned into (a new one when
  // null). Analyses that share a table have comparable RegionOverheads::key values.
  std::shared_ptr<CallPathKeys> keys;
  // Fill RegionOverheads::path for every region of the run. A path costs O(depth) to build (up to
  // drg::kPathLevels levels), so the command-line tool leaves this off and builds the paths of the
  // rows it prints (drg::MergedTree::path). Regions only in the reference always get theirs.
  bool paths = true;
  // The processes of an MPI job that classify the run together (share.hpp), or null: this one
  // alone. Every process gets the same Analysis.
  Share* share = nullptr;
  // Fill Analysis::pe_own when the run's threads x merged nodes are at most this many (and the
  // run is classified by this process alone: share is null). 0: never.
  size_t pe_own_cells = 0;
};

// One PE's own time in one region (its exclusive time there), split as the rules split it: the
// part they call useful and the parts they put in each class (docs/report.md, "System"). Only the
// classes the rules find in a PE's own time are filled: synchronization, data movement, control
// of parallelism and the loss of parallelism of waits after serial code. The reference run's
// evidence (additional computation, spin-waiting, replicated code, extra misses), the idle time of
// PEs that ran a region for less than T_p and `unidentified` are found per region over all PEs,
// not per PE, and are never here.
struct PeOwn {
  double useful = 0;                          // s
  std::array<double, kClassCount> classes{};  // s of this PE's time
};

struct RegionOverheads {
  uint32_t node = 0;  // merged node in the run (kNoIndex for regions only in the reference)
  uint32_t ref_node = format::kNoIndex;  // matching merged node in the reference, if any
  std::string path;  // call path, e.g. "md/parallel@md.c:88/loop@md.c:90" (Options::paths)
  uint32_t key = 0;  // call-path key (Analysis::keys) used to match the reference
  int p = 1;
  double t_p = 0;  // s, wall time in the run (longest PE)
  double t_s = 0;  // s, reference time, or the estimate U when there is no reference
  bool t_s_estimated = true;
  bool in_run = true, in_reference = false;
  double t_o = 0;                             // s, T_p - T_s/p
  std::array<double, kClassCount> classes{};  // s of wall time, sum == t_o
  std::map<std::string, double> subclasses;   // "synchronization.barrier" -> s
  double useful_pe = 0;                       // U in PE-seconds
  double speedup = 0, efficiency = 0;
  size_t pes_ran = 0;                       // PEs that ran the region
  double imbalance = 1;                     // max / mean time over the PEs that ran it
  int most_loaded = -1, least_loaded = -1;  // index into Experiment::threads
  // The tool's own cost inside T_p (s): visits recorded below the region times the calibrated
  // cost per visit, plus counter reads; T_p - noise is the compensated time. 0 without a machine.
  double noise = 0;
  double events_below = 0;  // visits recorded below the region (all PEs)
};

struct ProgramEfficiency {  // POP metrics, for comparison with other tools
  double load_balance = 0, communication_efficiency = 0, parallel_efficiency = 0;
  std::optional<double> computation_scalability, global_efficiency;
};

struct Analysis {
  int p = 1;
  bool has_reference = false;
  bool noise_priced = false;   // a machine model gave the tool's cost per event
  bool misses_priced = false;  // extra cache misses over the reference were priced
  // Why the message model calibrated at MPI_Init was not used ("" when it was, or there is
  // none): the run's own calls contradict it (a calibration disturbed by other processes).
  std::string message_model_doubt;
  std::vector<RegionOverheads> regions;  // one per merged node of the run, same index
  // Options::pe_own_cells: each PE's own time per merged node, pe_own[thread * nodes + node]
  // (thread: index into Experiment::threads); empty when not asked for or too large.
  std::vector<PeOwn> pe_own;
  std::vector<RegionOverheads> only_in_reference;
  // Regions of the reference left out of only_in_reference: deeper levels of a recursion this run
  // ran to another depth (the same work, elsewhere in this run's tree).
  size_t recursion_only_in_reference = 0;
  ProgramEfficiency program;
  std::shared_ptr<CallPathKeys> keys;  // the table RegionOverheads::key refers to
};

Analysis classify(const drg::MergedTree& run, const drg::MergedTree* reference,
                  const Options& options = {});

// Regions whose six classes do not sum to T_o within `tolerance` seconds (should be none): one
// line each, for tests that check the identity on every experiment they produce.
std::vector<std::string> identity_violations(const Analysis& a, double tolerance = 1e-9);

}  // namespace scalea::overheads
