// Configuration of the in-process tool: environment variables with the prefix SCALEA_.
// Documented in docs/user-guide.md ("Environment"). Read once, at start-up, never on the hot path.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace scalea::collect {

struct Config {
  bool enabled = true;           // SCALEA_ENABLE=0 turns the tool off entirely
  std::string output;            // SCALEA_OUTPUT: experiment directory ("" = default name)
  bool quiet = false;            // SCALEA_QUIET=1: no summary line at exit (errors still shown)
  bool start_on = true;          // SCALEA_START=off: start with recording switched off
  std::string clock;             // SCALEA_CLOCK=tsc|monotonic
  std::vector<std::string> functions_include;  // SCALEA_FUNCTIONS_INCLUDE: glob list (,)
  std::vector<std::string> functions_exclude;  // SCALEA_FUNCTIONS_EXCLUDE: glob list (,)
  std::string counters;          // SCALEA_COUNTERS: event list (,), "default" or "none"
  bool counters_set = false;     // SCALEA_COUNTERS was given (else the default set, silently)
  std::string counter_regions;   // SCALEA_COUNTER_REGIONS: region kinds that read counters
  bool papi = true;              // SCALEA_PAPI=off: do not start PAPI (kernel software events only)
  // SCALEA_THROTTLE=off|on|N:T: a call path of a throttled kind visited N times with a mean
  // inclusive time below T is no longer recorded (docs/user-guide.md, "Throttling").
  uint64_t throttle_calls = 100000;  // 0 = off
  uint64_t throttle_ns = 10000;
  std::string throttle_text = "100000:10us";
  // SCALEA_THROTTLE_REGIONS: which region kinds may be throttled (functions, user; all; none).
  bool throttle_functions = true, throttle_user = false;
  // SCALEA_RUN_PRELOAD: the tool libraries `scalea run` put in front of LD_PRELOAD (internal).
  std::string run_preload;
  std::vector<std::string> problems;  // invalid values and unknown keys, reported once
};

// Reads the environment. Invalid values keep the default and are noted in problems.
Config read_config(char** environ_ptr);

// The fixed list of keys, for warnings about misspelt ones.
const std::vector<std::string>& known_config_keys();

}  // namespace scalea::collect
