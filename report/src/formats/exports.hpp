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

#include "analysis/analyze.hpp"
#include "output/json_stream.hpp"

namespace scalea::cli {

// One row per region and thread, written to `put` region by region.
void export_csv(const TextSink& put, const Analyzed& x);
// One row per sampled function and line of each region (docs/exports.md): the header alone when
// nothing was sampled.
void export_sampled_csv(const TextSink& put, const Analyzed& x);
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

// The formats of `scalea export`, one row each: the CLI's choices, its --help, the dispatch and
// the export tests (`scalea export --list-formats`) all come from the table of these rows that
// the command holds (cli/cmd_export.cpp): the rows of file_formats() and the HTML page's
// (html::export_format()).
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
// The formats written here: csv, csv-sampled, json, dot, hatchet, extrap.
const std::vector<ExportFormat>& file_formats();

}  // namespace scalea::cli
