#include "config.hpp"

#include <cstdlib>
#include <cstring>

namespace scalea::collect {

namespace {

bool parse_bool(const std::string& v, bool& out) {
  if (v == "1" || v == "on" || v == "yes" || v == "true") return out = true, true;
  if (v == "0" || v == "off" || v == "no" || v == "false") return out = false, true;
  return false;
}

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    if (comma > start) out.push_back(v.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// "N:T" with T a number and an optional unit ns, us (the default), ms or s.
bool parse_throttle(const std::string& v, uint64_t& calls, uint64_t& ns) {
  size_t colon = v.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string n = v.substr(0, colon), t = v.substr(colon + 1);
  if (n.find_first_not_of("0123456789") != std::string::npos || n.size() > 12) return false;
  char* end = nullptr;
  double value = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || !(value > 0)) return false;
  std::string unit(end);
  double scale = unit == "ns" ? 1 : unit == "" || unit == "us" ? 1e3 : unit == "ms" ? 1e6
                 : unit == "s" ? 1e9 : 0;
  if (scale == 0 || value * scale > 1e12) return false;
  uint64_t c = std::stoull(n);
  if (c == 0) return false;
  calls = c;
  ns = uint64_t(value * scale + 0.5);
  return ns > 0;
}

}  // namespace

const std::vector<std::string>& known_config_keys() {
  static const std::vector<std::string> keys = {
      "SCALEA_ENABLE", "SCALEA_OUTPUT", "SCALEA_QUIET", "SCALEA_START", "SCALEA_CLOCK",
      "SCALEA_FUNCTIONS_INCLUDE", "SCALEA_FUNCTIONS_EXCLUDE",
      // Counters (collect/papi, docs/counters.md).
      "SCALEA_COUNTERS", "SCALEA_COUNTER_REGIONS", "SCALEA_PAPI",
      // Throttling of tiny hot regions (docs/user-guide.md).
      "SCALEA_THROTTLE", "SCALEA_THROTTLE_REGIONS",
      // Read by the MPI layer (collect/mpi, docs/mpi.md).
      "SCALEA_MPI_TIMEOUT", "SCALEA_MPI_CALIBRATE",
      // Set by `scalea run` for its own bookkeeping; not for users.
      "SCALEA_RUN_BY_CLI", "SCALEA_RUN_PRELOAD",
      // Read by the scalea command, not by the tool (docs/user-guide.md).
      "SCALEA_LIBOMP", "SCALEA_MACHINE",
  };
  return keys;
}

Config read_config(char** env) {
  Config c;
  if (!env) return c;
  for (char** e = env; *e; ++e) {
    if (std::strncmp(*e, "SCALEA_", 7) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string key(*e, size_t(eq - *e)), value(eq + 1);
    bool ok = true;
    if (key == "SCALEA_ENABLE") {
      ok = parse_bool(value, c.enabled);
    } else if (key == "SCALEA_OUTPUT") {
      ok = !value.empty();
      if (ok) c.output = value;
    } else if (key == "SCALEA_QUIET") {
      ok = parse_bool(value, c.quiet);
    } else if (key == "SCALEA_START") {
      ok = parse_bool(value, c.start_on);
    } else if (key == "SCALEA_CLOCK") {
      ok = value == "tsc" || value == "monotonic";
      if (ok) c.clock = value;
    } else if (key == "SCALEA_FUNCTIONS_INCLUDE") {
      c.functions_include = split_list(value);
    } else if (key == "SCALEA_FUNCTIONS_EXCLUDE") {
      c.functions_exclude = split_list(value);
    } else if (key == "SCALEA_COUNTERS") {
      c.counters = value;
      c.counters_set = true;
    } else if (key == "SCALEA_COUNTER_REGIONS") {
      c.counter_regions = value;
    } else if (key == "SCALEA_PAPI") {
      ok = parse_bool(value, c.papi);
    } else if (key == "SCALEA_THROTTLE") {
      bool on = false;
      if (parse_bool(value, on)) {
        if (!on) c.throttle_calls = 0;
        c.throttle_text = on ? c.throttle_text : "off";
      } else {
        ok = parse_throttle(value, c.throttle_calls, c.throttle_ns);
        if (ok) c.throttle_text = value;
      }
    } else if (key == "SCALEA_THROTTLE_REGIONS") {
      bool functions = false, user = false;
      for (const std::string& k : split_list(value)) {
        if (k == "functions" || k == "function") functions = true;
        else if (k == "user") user = true;
        else if (k == "all") functions = user = true;
        else if (k != "none") ok = false;
      }
      if (ok) c.throttle_functions = functions, c.throttle_user = user;
    } else if (key == "SCALEA_RUN_PRELOAD") {
      c.run_preload = value;
    } else if (key == "SCALEA_RUN_BY_CLI" || key == "SCALEA_MPI_TIMEOUT" ||
               key == "SCALEA_MPI_CALIBRATE" || key == "SCALEA_LIBOMP" || key == "SCALEA_MACHINE") {
    } else {
      c.problems.push_back("unknown setting " + key + " ignored");
      continue;
    }
    if (!ok) c.problems.push_back("invalid value '" + value + "' for " + key + ", default kept");
  }
  return c;
}

}  // namespace scalea::collect
