// The HTML report: one self-contained file (inline CSS, JavaScript, data and SVG; no network at
// view time) to explore an experiment, a run against its reference, or a scaling study: a
// summary with the top findings, an icicle graph of the call tree, coupled panes (metric tree x
// call tree x the PEs of the picked region), a sortable flat profile, the region graph and source
// snippets. The page: report/assets/report.{css,js}; the data it is drawn from: html.cpp
// (experiment) and study/study_html.cpp (study); how to read it: docs/report.md.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "formats/exports.hpp"

namespace scalea::cli {

// Up to this many regions x PEs, the page keeps each PE's values exactly (its time, wait, visits
// and, given AnalysisOptions::pe_own_cells of at least this, its classes); above, it keeps them
// quantized, in at most 1,024 columns.
inline constexpr size_t kExactPeCells = 200000;

struct HtmlOptions {
  size_t findings = 5;
  bool graphviz = true;  // render the region graph with `dot -Tsvg` when available
  bool source = true;    // embed source snippets of the regions whose files are readable
};

// The page of one experiment (with its reference when x has one).
std::string render_html(const Analyzed& x, const HtmlOptions& o = {});
// The row of `scalea export`'s table for the page of one experiment ("html"; the command sends
// a study to render_study_html instead).
ExportFormat html_export_format();

// Shared by both pages (html_page.cpp).
namespace html {

// Text escaped for HTML element content and attribute values.
std::string esc(const std::string& s);

// The class table of every page: key, short title and colour of the six classes.
nlohmann::json classes_json();

// Source snippets: the lines around each (file, line) asked for, from the files readable now.
class Sources {
 public:
  explicit Sources(bool enabled) : enabled_(enabled) {}
  // Asks for the lines around `line` of `file`; returns the file's index in json(), or -1 when
  // the file is not readable, too large, not text, or sources are off.
  int want(const std::string& file, uint32_t line);
  // {"files": [{"file", "chunks": [[first line, [text...]], ...]}], "note": "..."}.
  nlohmann::json json() const;

 private:
  struct File {
    std::string path;
    bool ok = false;
    std::vector<std::string> lines;
    std::vector<uint32_t> wanted;
  };
  bool enabled_;
  std::vector<File> files_;
  size_t unreadable_ = 0;
};

// The region graph: Graphviz SVG of `dot` when it renders (nodes titled n<id>), else "" and
// `note` says why.
std::string region_graph_svg(const std::string& dot, bool graphviz, std::string& note);

// Which script draws a page: the report's (an experiment or a study) or the database site's
// (`scalea db html`, report/src/db/site.cpp).
enum class Script { Report, Database };

// The page around `data` (embedded as JSON, read by the script) and the optional graph SVG.
std::string page(const std::string& title, const nlohmann::json& data, const std::string& graph_svg,
                 Script script = Script::Report);

}  // namespace html

}  // namespace scalea::cli
