#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "analysis/share.hpp"
#include "output/docs.hpp"

namespace scalea::cli {

void add_decomposition_option(CLI::App* cmd, std::vector<std::string>& names) {
  cmd->add_option("--decomposition", names,
                  "Arguments that set the decomposition, not the input: flags without dashes (t "
                  "for -t 4) or positions, comma separated; their values may differ from the "
                  "reference's (default: SCALEA_DECOMPOSITION_ARGS)")
      ->delimiter(',')
      ->allow_extra_args(false)  // one list per --decomposition: the experiment is not a name
      ->type_name("NAME[,NAME]");
}

std::vector<std::string> decomposition_args(const std::vector<std::string>& given) {
  if (!given.empty()) return given;
  std::vector<std::string> out;
  const char* env = std::getenv("SCALEA_DECOMPOSITION_ARGS");
  std::string text = env ? env : "";
  for (char& c : text)
    if (c == ',') c = ' ';
  std::istringstream words(text);
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

}  // namespace scalea::cli

namespace {

void add_other_commands(CLI::App& app) {
  scalea::cli::add_report(app);
  scalea::cli::add_cache(app);
  scalea::cli::add_export(app);
  scalea::cli::add_diff(app);
  scalea::cli::add_drg(app);
  scalea::cli::add_study(app);
  scalea::cli::add_tune(app);
  scalea::cli::add_top(app);
  scalea::cli::add_calibrate(app);
  scalea::cli::add_db(app);
  scalea::cli::add_settings(app);
}

// Every error of the command is printed here, on stderr, for a person: its docs/NAME.md names
// this scalea's documentation, which an installed user has (docs/user-guide.md, "Installing").
void print_error(const std::string& line) {
  std::fprintf(stderr, "%s\n", scalea::cli::with_docs_dir(line).c_str());
}

// The analyses allocate and free blocks of up to hundreds of MB again and again: a rank file's
// threads in each pass over an experiment read by file, the messages and partials of each step
// of the analysis as an MPI program. glibc maps every block above 32 MB afresh and gives it back
// when freed, and trims the heap's top likewise, so each pass faults in and zeroes its pages
// again: half of each process's CPU at 1,024 x 16 x 500 was the kernel's (docs/performance.md,
// "The analysis as an MPI program"). Here freed memory stays in the heap for the next pass, at
// the price of some peak RSS (what the heap cannot give back between blocks still in use).
void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "scalea: per-region overhead analysis of OpenMP, MPI and hybrid programs.\n\n"
      "  scalea run -o md.exp -- ./md 4096                 measure a run (OpenMP via OMPT)\n"
      "  mpirun -np 4 scalea run -o halo.exp -- ./halo     MPI and hybrid programs\n"
      "  scalea report md.exp                              overhead table per region\n"
      "  scalea study -o md.study --threads 1,2,4 -- ./md  scaling study, one command\n"
      "  scalea report md.study                            speedup and overheads vs p\n"
      "  scalea tune -- ./md 4096                          try settings, keep the fastest\n"
      "  scalea cache md.exp                               cache misses per region and thread\n"
      "  scalea <command> --help                           options and examples\n",
      "scalea"};
  app.require_subcommand(1);
  scalea::cli::set_help_and_version(app);
  scalea::cli::add_run(app);
  // `scalea run` starts before the program it measures and is part of every measured process's
  // fixed cost: it sets up its own options only (the others cost about 1.3 million instructions).
  // Its help and errors do not name the other commands, so they read the same.
  if (argc < 2 || std::strcmp(argv[1], "run") != 0) {
    add_other_commands(app);
    keep_freed_memory();
  }
  // `scalea help [COMMAND]` is `scalea [COMMAND] --help`.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "help") {
    args.erase(args.begin());
    args.insert(args.begin() + (args.empty() ? 0 : 1), "--help");
  }
  if (std::optional<scalea::cli::ArgumentProblem> p = scalea::cli::check_arguments(app, args)) {
    std::string cmd = p->command.empty() ? "" : " " + p->command;
    print_error("scalea" + cmd + ": " + p->message + " (see scalea" + cmd + " --help)");
    return 2;
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the words last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string cmd =
        app.get_subcommands().empty() ? "" : " " + app.get_subcommands()[0]->get_name();
    print_error("scalea" + cmd + ": " + e.what() + " (see scalea" + cmd + " --help)");
    return 2;
  } catch (const scalea::cli::ExitStatus& e) {
    if (!e.message.empty()) print_error(e.message);
    return e.status;
  } catch (const std::exception&) {
    std::string cmd = app.get_subcommands().empty() ? "" : app.get_subcommands()[0]->get_name();
    auto [status, line] = scalea::cli::describe_error(std::current_exception(), cmd);
    print_error(line);
    return status;
  }
  return 0;
}
