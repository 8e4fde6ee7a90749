// Configuration of the in-process tool: environment variables with the prefix SCALEA_, one row
// each in the settings table (config.cpp), which docs/user-guide.md ("Environment") and
// docs/mpi.md ("Settings") show row for row (a unit test compares them). Read once, at start-up,
// never on the hot path.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scalea/launcher.hpp"  // launcher_rank(), launcher_size()

namespace scalea::collect {

struct Config {
  bool enabled = true;   // SCALEA_ENABLE=0 turns the tool off entirely
  std::string output;    // SCALEA_OUTPUT: experiment directory ("" = default name)
  bool quiet = false;    // SCALEA_QUIET=1: no summary line at exit (errors still shown)
  bool start_on = true;  // SCALEA_START=off: start with recording switched off
  std::string clock;     // SCALEA_CLOCK=tsc|monotonic
  std::vector<std::string> functions_include;  // SCALEA_FUNCTIONS_INCLUDE: glob list (,)
  std::vector<std::string> functions_exclude;  // SCALEA_FUNCTIONS_EXCLUDE: glob list (,)
  std::string counters;         // SCALEA_COUNTERS: event list (,), "default" or "none"
  bool counters_set = false;    // SCALEA_COUNTERS was given (else the default set, silently)
  std::string counter_regions;  // SCALEA_COUNTER_REGIONS: region kinds that read counters
  bool papi = true;             // SCALEA_PAPI=off: do not start PAPI (kernel software events only)
  bool openmp_light = false;  // SCALEA_OPENMP=light: register only the OMPT events light mode keeps
  // SCALEA_THROTTLE=off|on|N:T: a call path of a throttled kind visited N times with a mean
  // inclusive time below T is no longer recorded (docs/user-guide.md, "Throttling").
  uint64_t throttle_calls = 100000;  // 0 = off
  uint64_t throttle_ns = 10000;
  std::string throttle_text = "100000:10us";
  // SCALEA_THROTTLE_REGIONS: which region kinds may be throttled (functions, user; all; none).
  bool throttle_functions = true, throttle_user = false;
  // SCALEA_SNAPSHOT=off|DURATION: publish the statistics every DURATION while the program runs
  // (collect/core/snapshot.cpp, docs/online.md); 0 = off.
  uint64_t snapshot_ns = 0;
  std::string snapshot_text = "off";
  // SCALEA_SAMPLE=off|RATE: call-path sampling on each thread's CPU time, RATE samples per second
  // of it (collect/core/sampler.cpp, docs/sampling.md); the period in ns, 0 = off.
  // Off in the unit tests' builds (SCALEA_FAKE_CLOCK): they drive the adapters with synthetic
  // events, and a sample would add nodes by how much CPU a test happened to use.
#ifdef SCALEA_FAKE_CLOCK
  uint64_t sample_period_ns = 0;
#else
  uint64_t sample_period_ns = 4000000;
#endif
  // SCALEA_SAMPLE_SOURCE=perf|timer: what signals a thread to take a sample: a perf task-clock
  // event (high resolution: a sample where the period ended; on a virtual machine several per cent
  // of the run), or a POSIX timer on its CPU clock (checked at the kernel's tick: cheaper there,
  // but a bursty or preempted thread's periods land where the tick finds it; docs/sampling.md).
  bool sample_perf = true;
  // SCALEA_IO=off|on: record POSIX and C stdio I/O calls as regions (collect/io).
  bool io = true;
  // SCALEA_TUNE=on: the on-line tuner chooses the schedule of schedule(runtime) loops between
  // executions of their parallel region (collect/ompt/online_tune.cpp, docs/tuning.md);
  // SCALEA_TUNE_REPEAT: executions measured per schedule.
  bool tune = false;
  int tune_repeat = 3;
  // SCALEA_RUN_PRELOAD: the tool libraries `scalea run` put in front of LD_PRELOAD (internal).
  std::string run_preload;
  std::vector<std::string> problems;  // invalid values and unknown keys, reported once
};

// Reads the environment. Invalid values keep the default and are noted in problems, and so are
// SCALEA_ keys the table does not hold (a misspelt setting).
Config read_config(char** environ_ptr);

// Who reads a setting, and so which table of the docs shows it.
enum class SettingReader : uint8_t {
  Tool,      // read_config, into Config (docs/user-guide.md, "Environment")
  Command,   // the scalea command (docs/user-guide.md, "Environment")
  MpiLayer,  // collect/mpi at MPI_Init (docs/mpi.md, "Settings")
  Internal,  // set by `scalea run` for the tool, or by the build; not for users, not in the docs'
             // tables
};
// What a setting's value is.
enum class SettingType : uint8_t { Switch, Text, List, Choice, Spec };

struct Setting {
  const char* key;
  SettingType type;
  const char* shown_default;  // the default, as the docs' table shows it
  // Sets the Config from the value; false when the value is invalid (the default is kept).
  // nullptr: another reader (SettingReader) takes the value from the environment itself.
  bool (*parse)(const std::string& value, Config& c);
  SettingReader reader;
  const char* doc;  // the meaning, as the docs' table shows it
  // The values it takes, for a message about an invalid one and for `scalea settings`.
  const char* valid;
};

// Every SCALEA_ setting, in the order the docs' tables list them.
const std::vector<Setting>& settings();
// The row of `key`, or nullptr.
const Setting* find_setting(const std::string& key);
// The message about an invalid value of a setting: what it takes and what is kept instead
// ("invalid value 'x' for SCALEA_CLOCK (valid: tsc or monotonic), default kept").
std::string invalid_value_message(const std::string& key, const std::string& value,
                                  const std::string& kept = "default");

// The items of a comma-separated list, spaces around each trimmed, empty ones left out.
std::vector<std::string> split_list(const std::string& v);

}  // namespace scalea::collect
