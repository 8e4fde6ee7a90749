// `scalea report STUDYDIR`: the paper's Table 2 for a scaling study, per region and for the
// program: time (median, min-max over repetitions), speedup, efficiency and the six overhead
// classes per configuration; as text, markdown, CSV or JSON, plus gnuplot plots (docs/study.md).
#pragma once
#include <string>

#include "scalea/overheads/share.hpp"
#include "study.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace scalea::cli {

using study::is_study;

// Adds the study-only options (--plots, --region, --top) to the `report` subcommand when it does
// not have them yet, and study examples to its help. Called from add_study, after add_report.
void add_study_report_options(CLI::App& app);

// Prints the study report of `dir`, reading the `report` subcommand's options (--format,
// --region, --top, --plots). Under mpirun (`share`) every process makes the report, classifying
// each run together with the others, and only rank 0's output is kept. Throws UserError with a
// one-line message.
void study_report(const std::string& dir, overheads::Share* share = nullptr);

}  // namespace scalea::cli
