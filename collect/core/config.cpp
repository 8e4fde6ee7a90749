#include "config.hpp"

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

}  // namespace

const std::vector<std::string>& known_config_keys() {
  static const std::vector<std::string> keys = {
      "SCALEA_ENABLE", "SCALEA_OUTPUT", "SCALEA_QUIET", "SCALEA_START", "SCALEA_CLOCK",
      "SCALEA_FUNCTIONS_INCLUDE", "SCALEA_FUNCTIONS_EXCLUDE",
      // Counters (collect/papi, docs/counters.md).
      "SCALEA_COUNTERS", "SCALEA_COUNTER_REGIONS", "SCALEA_PAPI",
      // Read by the MPI layer (collect/mpi, docs/mpi.md).
      "SCALEA_MPI_TIMEOUT", "SCALEA_MPI_CALIBRATE",
      // Set by `scalea run` for its own bookkeeping; not for users.
      "SCALEA_RUN_BY_CLI",
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
