// Exports of one analysed experiment (or several, for Extra-P) into the formats other tools read:
// CSV, the report JSON, Graphviz DOT, Hatchet's literal JSON and Extra-P JSON Lines. Formats and
// how each was checked against its consumer: docs/exports.md.
#pragma once
#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report_json.hpp"
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

// Whether `ref` can serve as the reference of `run`: the same program with the same arguments,
// run with p = 1. Throws UserError naming the difference, unless `reference_forced()` (the
// commands' --force); then says it once on stderr and goes on.
void check_reference(const drg::Experiment& run, const drg::Experiment& ref);
bool& reference_forced();

// Opens `dir` (and `reference` unless empty, checked by check_reference) and classifies it with
// p PEs (0: its thread count), pricing misses and the tool's cost with `machine` when given.
// Analyses given the same `keys` table have comparable call-path keys (scalea diff). Call paths
// are not built: region_path() builds the ones printed. Throws drg::LoadError or UserError with a
// one-line message.
std::unique_ptr<Analyzed> analyze(const std::string& dir, const std::string& reference = "",
                                  int p = 0,
                                  std::shared_ptr<overheads::CallPathKeys> keys = nullptr,
                                  const overheads::MachineModel* machine = nullptr,
                                  overheads::Share* share = nullptr);

// The printed call path of a region of the analysis of `run` (drg::MergedTree::path): built
// here for a region of the run, as classify left it for a region only in the reference. Costs
// O(depth) (at most drg::kPathLevels): call it for the rows printed only.
std::string region_path(const drg::MergedTree& run, const overheads::RegionOverheads& r);

// Colour of each overhead class (fill colours shared by DOT, HTML and the plots).
extern const std::array<std::string_view, overheads::kClassCount> kClassColors;
// Short column titles of the six classes.
extern const std::array<std::string_view, overheads::kClassCount> kClassShort;

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

// One row per region and thread, written to `put` region by region.
void export_csv(const TextSink& put, const Analyzed& x);
// The `scalea report --format json` document (schema scalea-report/1) plus "findings".
void export_json(const TextSink& put, const Analyzed& x, size_t findings);
// `hidden` (optional, one flag per merged node): rows left out, as the text report folds them.
std::string export_dot(const Analyzed& x, const std::vector<char>* hidden = nullptr);
// The Hatchet literal document, as nlohmann::json::dump(1) writes it, and a newline. A tree
// deeper than drg::kPathLevels levels is written without indentation: indented, its size would
// grow with depth^2.
std::string export_hatchet(const Analyzed& x);
// One JSON object per line: params {"p": p}, callpath "a->b->c", metric, value. Callpaths deeper
// than drg::kPathLevels levels are shortened like call paths (drg::call_path).
void export_extrap(const TextSink& put, const std::vector<const Analyzed*>& runs);

// Renders DOT text to SVG with Graphviz `dot -Tsvg` (no XML prologue). nullopt when `dot` is not
// installed or fails; `why` then says what happened.
// Graphviz gets at most this long; then it is stopped and the graph is not drawn.
inline constexpr int kDotTimeLimitS = 30;
std::optional<std::string> dot_to_svg(const std::string& dot, std::string* why = nullptr);

// The formats of `scalea export`, one row each: the CLI's choices, its --help, the dispatch and
// the export tests (`scalea export --list-formats`) all come from this table.
struct ExportSettings {
  size_t findings = 5;   // findings in json and html
  bool graphviz = true;  // html: draw the region graph with Graphviz
  bool source = true;    // html: embed source snippets of the regions' files
};
struct ExportFormat {
  std::string_view name;
  std::string_view help;  // for --help, one or two lines
  bool many_runs;         // takes several experiments (one otherwise)
  bool says_written;      // says "scalea export: wrote FILE (format)" on stderr after a file
  void (*write)(const TextSink& put, const std::vector<const Analyzed*>& runs,
                const ExportSettings& settings);
};
const std::vector<ExportFormat>& export_formats();
const ExportFormat* find_export_format(std::string_view name);

// Writes `text` to `path` ("-" or "": stdout). Throws UserError naming the path when it cannot.
void write_output(const std::string& path, const std::string& text);
// The same for text made piece by piece by write(put), written as it is made: to stdout, or to
// a temporary file beside `path` that replaces it at the end (`path` is not touched when write()
// throws).
void write_output(const std::string& path, const std::function<void(const TextSink&)>& write);

}  // namespace scalea::cli
