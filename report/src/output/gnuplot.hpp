// gnuplot, run as a program: the plots of studies, of a run over time and of the database's
// history.
#pragma once
#include <string>

namespace scalea::cli {

// A gnuplot single-quoted string.
std::string gp_string(const std::string& s);
// Runs gnuplot on `outdir`/`script`, its output in `outdir`/gnuplot.log. Throws UserError with
// gnuplot's last message when it fails.
void run_gnuplot(const std::string& outdir, const std::string& script);

}  // namespace scalea::cli
