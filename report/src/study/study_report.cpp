// scalea report STUDYDIR: per region and for the program, time, speedup, efficiency and the six
// overhead classes per configuration (the paper's Table 2), plus gnuplot plots (docs/study.md).
// The data: study_data.cpp; the text, CSV and JSON: study_text.cpp; the plots: study_plots.cpp.
#include "study_report.hpp"

#include <cstdio>
#include <string>

#include "output/errors.hpp"
#include "output/write.hpp"

namespace scalea::cli {

void study_report(const std::string& dir, const StudyReportOptions& o, overheads::Share* share) {
  if (share && !o.plots.empty())
    throw UserError("--plots does not run as an MPI program yet: run it without mpirun");
  // The other processes make the same report, so that they take part in the same classifications
  // in the same order (the findings classify the largest configuration again), and discard it.
  if (share && share->rank() != 0 && !std::freopen("/dev/null", "w", stdout))
    throw UserError("cannot discard the output of process " + std::to_string(share->rank()));
  studyrep::Data d = studyrep::gather(dir, o.view, share);
  if (!o.html.empty()) {
    write_output(o.html, render_study_html(d, {o.view.findings, true, o.html_source}));
    std::fprintf(stderr, "scalea report: wrote %s\n", o.html.c_str());
  }
  if (!o.plots.empty()) studyrep::make_plots(d, o.plots);
  if (o.format == "json") studyrep::print_json(d);
  else if (o.format == "csv") studyrep::print_csv(d);
  else if (o.format == "markdown") studyrep::print_text(d, true);
  else studyrep::print_text(d, false);
}

}  // namespace scalea::cli
