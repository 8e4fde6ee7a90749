// `scalea report DIR --over-time`: the overhead classes of the program and of its top regions in
// each window of time, from the snapshots the run published (SCALEA_SNAPSHOT, docs/online.md): a
// table, CSV or JSON, and with --plots a gnuplot plot.
#pragma once
#include <string>
#include <vector>

namespace scalea::cli {

// The `report` command's options the report over time reads.
struct OverTimeOptions {
  std::string format = "text";             // text, csv or json
  std::string interval;                    // the windows' length ("": the snapshots' interval)
  int top = -1;                            // regions followed besides the program (-1: 5)
  std::string plots;                       // directory for gnuplot's plot, "" for none
  std::string reference;                   // a reference run (p = 1), "" for none
  bool force = false;                      // use the reference even when it differs
  std::vector<std::string> decomposition;  // AnalysisOptions::decomposition
  int p = 0;                               // PEs of the run, 0: its thread count
};

// Prints the over-time report of `dir`. Throws UserError or drg::LoadError with one line.
void over_time_report(const std::string& dir, const OverTimeOptions& o);

}  // namespace scalea::cli
