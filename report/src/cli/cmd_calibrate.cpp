// scalea calibrate: measures the machine (report/src/calibrate.cpp) and writes the machine file.
#include <cstdlib>
#include <memory>

#include <CLI/CLI.hpp>

#include "calibrate/calibrate.hpp"
#include "commands.hpp"

namespace scalea::cli {

void add_calibrate(CLI::App& app) {
  struct Opts {
    std::string output;
    bool quick = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure this machine: the tool's cost per event, OpenMP costs, memory latency");
  cmd->footer(
      "Writes a machine file (JSON, docs/counters.md) that `scalea report` uses to price extra\n"
      "cache misses as data movement and to remove the tool's own cost (--compensate).\n"
      "Default location: $SCALEA_MACHINE, else ~/.config/scalea/machine.json. Takes under a "
      "minute.");
  cmd->add_option("-o,--output", o->output, "Machine file to write (default: see below)");
  cmd->add_flag("--quick", o->quick, "Fewer repetitions (about 3x faster, noisier)");
  cmd->callback([o] {
    int rc = run_calibrate(o->output, o->quick);
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace scalea::cli
