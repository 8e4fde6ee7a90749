// `scalea report DIR --over-time`: the overhead classes of the program and of its top regions in
// each window of time, from the snapshots the run published (SCALEA_SNAPSHOT, docs/online.md): a
// table, CSV or JSON, and with --plots a gnuplot plot.
#pragma once
#include <string>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace scalea::cli {

// Adds --over-time and --interval to the `report` subcommand (after add_study, whose --top and
// --plots it shares).
void add_over_time_options(CLI::App& app);
// Whether the `report` command line asked for --over-time.
bool over_time_requested();
// Prints the over-time report of `dir`, reading the `report` subcommand's options (--format,
// --interval, --top, --plots, -r, -p). Throws UserError or drg::LoadError with one line.
void over_time_report(const std::string& dir);

// A duration as the snapshot settings take it: "2s", "500ms", or a number of seconds. False when
// it is not one (or not positive).
bool parse_duration(const std::string& text, double& seconds);

}  // namespace scalea::cli
