// The scalea command-line tool: one function per subcommand, registered in main.cpp.
#pragma once
#include <optional>
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
void add_settings(CLI::App& app);  // cmd_settings.cpp: the SCALEA_* settings table
void add_tune(CLI::App& app);      // cmd_tune.cpp: the tuner between runs (docs/tuning.md)

// about.cpp: the help of every command names the documentation of this scalea (with_docs_dir,
// output/docs.hpp), and --version says what the build found. Call before adding commands.
void set_help_and_version(CLI::App& app);

// --decomposition NAME,... (repeatable) of a command that checks a reference (main.cpp): the
// arguments whose values set the decomposition, not the input (AnalysisOptions::decomposition).
void add_decomposition_option(CLI::App* cmd, std::vector<std::string>& names);
// The names given with --decomposition, or else those of SCALEA_DECOMPOSITION_ARGS (separated by
// commas or spaces).
std::vector<std::string> decomposition_args(const std::vector<std::string>& given);

// arguments.cpp: what CLI11's messages get wrong about a command line, found before it parses.
struct ArgumentProblem {
  std::string command;  // the (sub)command the message is about ("" for scalea itself)
  std::string message;  // one line, without "scalea: "
};
// `args` are the words after "scalea": a first word that is no command ("unknown command 'rep'
// (did you mean report?)"), and for the commands that run a program (run, study) an unknown option
// before it or a program whose arguments are not after --.
std::optional<ArgumentProblem> check_arguments(const CLI::App& app,
                                               const std::vector<std::string>& args);
// The candidate `word` most likely stands for: the one it is a unique prefix of, else the nearest
// within two edits (a typo); "" when none is near.
std::string closest_word(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace scalea::cli
