// `scalea calibrate` (the paper's training-set method) and the machine file it writes
// (docs/counters.md, "Machine file"): the tool's own cost per event type, clock resolution,
// fork/join, barrier and lock costs per thread count, memory latency per cache level.
#pragma once
#include <optional>
#include <string>

#include "scalea/overheads/classify.hpp"

namespace scalea::cli {

// Measures this machine and writes the machine file (`output`, or the default path); prints
// what it found. Throws UserError when the probe cannot run or the file cannot be written.
int run_calibrate(const std::string& output, bool quick);

// Where the machine file lives by default: $SCALEA_MACHINE, else ~/.config/scalea/machine.json.
std::string default_machine_path();

// Reads a machine file; throws UserError with one line naming the file and the problem.
overheads::MachineModel load_machine(const std::string& path);

// The machine model for a report: the file given (must load), else the default file when it
// exists (a broken default file is ignored with a warning), else none. `used` gets its path.
std::optional<overheads::MachineModel> find_machine(const std::string& given, std::string& used);

}  // namespace scalea::cli
