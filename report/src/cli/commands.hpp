// The scalea command-line tool: one function per subcommand, registered in main.cpp.
#pragma once
#include <string>
#include <vector>

#include "output/errors.hpp"
#include "output/process.hpp"

// CLI11 is header-only and costs every file that includes it seconds of compilation (its
// validators are objects defined in the header): only the files that set up options include it.
namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace scalea::cli {

void add_run(CLI::App& app);
void add_report(CLI::App& app);
void add_cache(CLI::App& app);
void add_drg(CLI::App& app);
void add_study(CLI::App&);
void add_export(CLI::App& app);
void add_diff(CLI::App& app);
void add_calibrate(CLI::App& app);  // cmd_calibrate.cpp: the machine file (docs/counters.md)
void add_top(CLI::App& app);  // cmd_top.cpp: the live view of a run's snapshots (docs/online.md)
void add_db(CLI::App& app);   // cmd_db.cpp: the experiment database (docs/database.md)

// --decomposition NAME,... (repeatable) of a command that checks a reference (main.cpp): the
// arguments whose values set the decomposition, not the input (AnalysisOptions::decomposition).
void add_decomposition_option(CLI::App* cmd, std::vector<std::string>& names);
// The names given with --decomposition, or else those of SCALEA_DECOMPOSITION_ARGS (separated by
// commas or spaces).
std::vector<std::string> decomposition_args(const std::vector<std::string>& given);

}  // namespace scalea::cli
