// The HTML report of one experiment: a single self-contained file (inline CSS, JS and SVG, no
// network) with the run's facts, the findings, the overhead table as a collapsible call tree,
// a stacked-bar plot of the six classes per region and the region graph (Graphviz SVG when `dot`
// is installed, else a nested list). Described in docs/exports.md.
#pragma once
#include <string>

#include "export_formats.hpp"

namespace scalea::cli {

struct HtmlOptions {
  size_t findings = 5;
  bool graphviz = true;  // render the region graph with `dot -Tsvg` when available
};

std::string render_html(const Analyzed& x, const HtmlOptions& o = {});

}  // namespace scalea::cli
