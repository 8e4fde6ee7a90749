// `scalea report DIR` of one experiment: the formats it prints (text, json, csv, markdown) and the
// text's views (the overhead classes, the measured times, the MPI calls, the sampled functions).
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyze.hpp"

namespace scalea::cli {

// What the report of one experiment shows: the `report` command's options beyond the analysis.
struct ReportView {
  std::string view = "overheads";  // text: overheads, times, mpi or functions
  // Rows whose T_p is below this are hidden (s); -1: not given, and the text tables leave out
  // the small I/O call sites instead (report_text.cpp).
  double min_time = -1;
  int max_depth = -1;            // rows deeper than this are hidden (-1: none)
  std::string machine_used;      // the machine file that priced NOISE, "" for none
  bool compensate = false;       // T_p shown with the tool's own cost removed
  bool unfold = false;           // the rows of recursive instances too
  size_t findings = 5;           // ranked findings after the table
  std::set<uint32_t> throttled;  // merged nodes the tool stopped recording (meta.json)
};

// The formats of `scalea report`, one row each: the CLI's choices and the dispatch come from this
// table. Each prints to standard output.
struct ReportFormat {
  std::string_view name;
  void (*print)(const Analyzed& x, const ReportView& v);
};
const std::vector<ReportFormat>& report_formats();
const ReportFormat* find_report_format(std::string_view name);

}  // namespace scalea::cli
