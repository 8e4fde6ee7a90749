// `scalea report STUDYDIR`: the paper's Table 2 for a scaling study, per region and for the
// program: time (median, min-max over repetitions), speedup, efficiency and the six overhead
// classes per configuration; as text, markdown, CSV or JSON, plus gnuplot plots and the HTML page
// (docs/study.md).
#pragma once
#include <string>

#include "html/html.hpp"
#include "scalea/overheads/share.hpp"
#include "study.hpp"
#include "study_data.hpp"

namespace scalea::cli {

using study::is_study;

// The `report` command's options for a study.
struct StudyReportOptions {
  std::string format = "text";  // text, markdown, csv or json
  studyrep::StudyView view;
  std::string plots;        // directory for gnuplot's plots, "" for none
  std::string html;         // also write the HTML page to this file, "" for none
  bool html_source = true;  // ... with source snippets
};

// Prints the study report of `dir`. Under mpirun (`share`) every process makes the report,
// classifying each run together with the others, and only rank 0's output is kept. Throws
// UserError with a one-line message.
void study_report(const std::string& dir, const StudyReportOptions& o,
                  overheads::Share* share = nullptr);

// The page of a scaling study (study_html.cpp; `scalea report STUDY --html FILE`).
std::string render_study_html(const studyrep::Data& d, const HtmlOptions& o = {});

}  // namespace scalea::cli
