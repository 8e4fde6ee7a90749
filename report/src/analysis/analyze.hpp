// One experiment loaded and classified: the way every command reaches drg/ and overheads/.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "source.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::cli {

// One experiment, merged and classified (optionally against a reference run), each read one
// rank file at a time (Source).
struct Analyzed {
  Source run, ref;  // ref.empty() without a reference
  overheads::Analysis a;

  const drg::MergedTree& tree() const { return run.tree(); }
  // The run's definitions: meta, regions, metrics and its threads' identities (no nodes).
  const drg::Experiment& experiment() const { return run.experiment(); }
  const drg::MergedTree* reference_tree() const { return ref.empty() ? nullptr : &ref.tree(); }
  const drg::Experiment* reference() const { return ref.empty() ? nullptr : &ref.experiment(); }
};

// How one experiment is opened and classified: each command fills it from its options.
struct AnalysisOptions {
  std::string reference;  // the reference experiment, "" for none
  // --force: use a reference whose program, arguments or p differ (said once on stderr).
  bool force = false;
  // --decomposition / SCALEA_DECOMPOSITION_ARGS: the arguments that set the decomposition, not
  // the input, whose values may differ between the run and its reference (check_reference).
  std::vector<std::string> decomposition;
  int p = 0;  // PEs of the run, 0: its thread count
  // Analyses given the same table have comparable call-path keys (scalea diff).
  std::shared_ptr<overheads::CallPathKeys> keys;
  // Prices misses and the tool's own cost (scalea calibrate), when given.
  const overheads::MachineModel* machine = nullptr;
  // Under mpirun, the processes of the job that open and classify the experiment together (every
  // process makes the same analyses in the same order); null: this process alone.
  overheads::Share* share = nullptr;
  // Split each PE's own time by the classifier's rules (overheads::Analysis::pe_own) when the
  // run's threads x regions are at most this many: the HTML page's system pane (PeSplitTable).
  size_t pe_own_cells = 0;
};

// Whether `ref` can serve as the reference of `run`: the same program with the same arguments,
// run with p = 1. Throws UserError naming the difference (the first argument that differs, by
// position and value), unless `force`; then says it once on stderr and goes on.
// `decomposition` names the arguments whose values may differ: a flag without its dashes ("t"
// for "-t 4", "-t4" or "--t=4"; "grid" for "--grid 2x2" or "-grid=2x2"), or a position ("3").
void check_reference(const drg::Experiment& run, const drg::Experiment& ref, bool force,
                     const std::vector<std::string>& decomposition = {});

// Opens `dir` (and the reference unless none, checked by check_reference), not classified yet.
// Throws drg::LoadError or UserError with a one-line message.
std::unique_ptr<Analyzed> open_experiment(const std::string& dir, const AnalysisOptions& o);
// Classifies what open_experiment opened, with o.p PEs, pricing with o.machine when given. Call
// paths are not built: region_path() builds the ones printed.
void classify(Analyzed& x, const AnalysisOptions& o);
// Both: the experiment in `dir` opened and classified.
std::unique_ptr<Analyzed> analyze(const std::string& dir, const AnalysisOptions& o = {});

// The printed call path of a region of the analysis of `run` (drg::MergedTree::path): built
// here for a region of the run, as classify left it for a region only in the reference. Costs
// O(depth) (at most drg::kPathLevels): call it for the rows printed only.
std::string region_path(const drg::MergedTree& run, const overheads::RegionOverheads& r);

// Index of the class with the largest positive value of a region, or -1 when none exceeds
// 0.5% of its T_p (then the region has no overhead worth colouring).
int dominant_class(const overheads::RegionOverheads& r);

// Recursion folded: the rows a report hides because their region already appears among their
// ancestors (a recursive call, a task created by a task at the same pragma), with everything
// below them; the outermost instance's row holds their time. `hidden[n]` per merged node.
struct Folding {
  std::vector<char> hidden;
  size_t rows = 0;       // rows hidden
  size_t instances = 0;  // recursive instances among them (the tops of hidden subtrees)
  uint32_t deepest = 0;  // the deepest hidden row's depth
};
Folding fold_recursion(const drg::MergedTree& t);

// "parallel @imbalance.c:31" style label of a merged node (region label and source location).
std::string node_label(const drg::MergedTree& t, uint32_t n);

}  // namespace scalea::cli
