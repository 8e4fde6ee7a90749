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
  double scale = unit == "ns"                 ? 1
                 : unit == "" || unit == "us" ? 1e3
                 : unit == "ms"               ? 1e6
                 : unit == "s"                ? 1e9
                                              : 0;
  if (scale == 0 || value * scale > 1e12) return false;
  uint64_t c = std::stoull(n);
  if (c == 0) return false;
  calls = c;
  ns = uint64_t(value * scale + 0.5);
  return ns > 0;
}

bool parse_throttle_setting(const std::string& v, Config& c) {
  bool on = false;
  if (parse_bool(v, on)) {
    if (!on) c.throttle_calls = 0;
    c.throttle_text = on ? c.throttle_text : "off";
    return true;
  }
  if (!parse_throttle(v, c.throttle_calls, c.throttle_ns)) return false;
  c.throttle_text = v;
  return true;
}

bool parse_throttle_regions(const std::string& v, Config& c) {
  bool functions = false, user = false;
  for (const std::string& k : split_list(v)) {
    if (k == "functions" || k == "function") functions = true;
    else if (k == "user") user = true;
    else if (k == "all") functions = user = true;
    else if (k != "none") return false;
  }
  c.throttle_functions = functions;
  c.throttle_user = user;
  return true;
}

// "off" (or a false switch), or a duration: a number with the unit ms or s (a bare number is s),
// from 10 ms to one hour.
constexpr double kSnapshotMinNs = 1e7, kSnapshotMaxNs = 3.6e12;
bool parse_snapshot(const std::string& v, Config& c) {
  bool on = false;
  if (parse_bool(v, on) && !on) {
    c.snapshot_ns = 0;
    c.snapshot_text = "off";
    return true;
  }
  char* end = nullptr;
  double value = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || !(value > 0)) return false;
  std::string unit(end);
  double scale = unit == "ms" ? 1e6 : unit == "" || unit == "s" ? 1e9 : 0;
  double ns = value * scale;
  if (scale == 0 || ns < kSnapshotMinNs || ns > kSnapshotMaxNs) return false;
  c.snapshot_ns = uint64_t(ns + 0.5);
  c.snapshot_text = v;
  return true;
}

// "off" (or a false switch), "on" (the default rate), or a rate in samples per second of a
// thread's CPU time, from 1 to 10000.
constexpr double kSampleMaxRate = 10000;
constexpr uint64_t kSampleDefaultNs = 4000000;  // 250 a second
bool parse_sample(const std::string& v, Config& c) {
  bool on = false;
  if (parse_bool(v, on)) {
    c.sample_period_ns = on ? kSampleDefaultNs : 0;
    return true;
  }
  char* end = nullptr;
  double rate = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end || !(rate >= 1) || rate > kSampleMaxRate) return false;
  c.sample_period_ns = uint64_t(1e9 / rate + 0.5);
  return true;
}

bool parse_tune_repeat(const std::string& v, Config& c) {
  if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos)
    return false;
  int n = std::stoi(v);
  if (n < 1 || n > 20) return false;
  c.tune_repeat = n;
  return true;
}

using R = SettingReader;
using T = SettingType;
constexpr const char* kSwitch = "on or off (also 1 or 0, yes or no, true or false)";

const Setting kSettings[] = {
    {"SCALEA_OUTPUT", T::Text, "`scalea-<prog>-<date>-<pid>`",
     [](const std::string& v, Config& c) { return !v.empty() && (c.output = v, true); }, R::Tool,
     "experiment directory to create", "a directory to create, not empty (its parent must exist)"},
    {"SCALEA_ENABLE", T::Switch, "`1`",
     [](const std::string& v, Config& c) { return parse_bool(v, c.enabled); }, R::Tool,
     "`0`: the tool does nothing (the program runs untouched)", kSwitch},
    {"SCALEA_QUIET", T::Switch, "`0`",
     [](const std::string& v, Config& c) { return parse_bool(v, c.quiet); }, R::Tool,
     "`1`: no summary line at exit (errors are still shown)", kSwitch},
    {"SCALEA_START", T::Switch, "`on`",
     [](const std::string& v, Config& c) { return parse_bool(v, c.start_on); }, R::Tool,
     "`off`: start with recording switched off (`scalea_measure_enable()` turns it on)", kSwitch},
    {"SCALEA_CLOCK", T::Choice, "`tsc` when invariant",
     [](const std::string& v, Config& c) {
       return (v == "tsc" || v == "monotonic") && (c.clock = v, true);
     },
     R::Tool, "`monotonic` forces `clock_gettime`", "tsc or monotonic"},
    {"SCALEA_FUNCTIONS_INCLUDE", T::List, "all",
     [](const std::string& v, Config& c) { return c.functions_include = split_list(v), true; },
     R::Tool, "globs (comma-separated) of the `-finstrument-functions` functions to record",
     "globs of function names, comma-separated (e.g. solve*,step)"},
    {"SCALEA_FUNCTIONS_EXCLUDE", T::List, "none",
     [](const std::string& v, Config& c) { return c.functions_exclude = split_list(v), true; },
     R::Tool, "globs of the `-finstrument-functions` functions not to record",
     "globs of function names, comma-separated (e.g. get_*,*::size)"},
    {"SCALEA_THROTTLE", T::Spec, "`100000:10us`", parse_throttle_setting, R::Tool,
     "`N:T`: a call path of a throttled kind visited N times (per thread) with a mean inclusive "
     "time below T (`ns`, `us`, `ms`, `s`; a bare number is µs) is no longer recorded; checked "
     "again every N visits; `off` records every visit (see \"Throttling tiny hot regions\")",
     "N:T with N a whole number of visits and T a time with ns, us, ms or s (a bare number is us; "
     "e.g. 100000:10us), or off"},
    {"SCALEA_THROTTLE_REGIONS", T::List, "`functions`", parse_throttle_regions, R::Tool,
     "kinds that may be throttled: `functions` (`-finstrument-functions`), `user` (the region "
     "API), both (`functions,user` or `all`), or `none`; OpenMP constructs and MPI calls never "
     "are",
     "functions, user, all or none, or functions,user"},
    {"SCALEA_COUNTERS", T::List,
     "the cache set (L1/L2/L3 misses and accesses, cycles, instructions) where the machine has it",
     [](const std::string& v, Config& c) { return c.counters = v, c.counters_set = true; }, R::Tool,
     "counters read per region and thread, e.g. `perf::PAGE-FAULTS,PAPI_L1_DCM`; `none` turns "
     "counters (and PAPI) off; `scalea run --counters LIST` sets it (docs/counters.md)",
     "counter names, comma-separated (PAPI presets, native events, perf::NAME), default or none"},
    {"SCALEA_COUNTER_REGIONS", T::List,
     "`coarse` (parallel, teams, loop, sections, single, workshare, taskloop, distribute, "
     "user, mpi)",
     [](const std::string& v, Config& c) { return c.counter_regions = v, true; }, R::Tool,
     "region kinds that read counters at enter and leave; `all` or a list of kind names",
     "coarse, all, or region kind names, comma-separated (e.g. parallel,loop,mpi)"},
    {"SCALEA_PAPI", T::Switch, "`on`",
     [](const std::string& v, Config& c) { return parse_bool(v, c.papi); }, R::Tool,
     "`off`: do not start PAPI; only the kernel's software events (`perf::…`) can be counted",
     kSwitch},
    {"SCALEA_OPENMP", T::Choice, "`full`",
     [](const std::string& v, Config& c) {
       return (v == "full" || v == "light") && (c.openmp_light = v == "light", true);
     },
     R::Tool,
     "`light`: record only parallel regions, barriers and tasks, not the constructs inside a "
     "region (loops, single, locks, critical, flush, ...): fewer OpenMP events, less cost on "
     "codes with many tiny constructs; `scalea run --light` sets it (see \"Light mode\")",
     "full or light"},
    {"SCALEA_SNAPSHOT", T::Spec, "`off`", parse_snapshot, R::Tool,
     "`1s`, `100ms`, …: publish the statistics every interval while the program runs, for "
     "`scalea top` and `scalea report --over-time` (10 ms to 1 h; a bare number is seconds; "
     "docs/online.md)",
     "a duration from 10ms to 1h with ms or s (a bare number is s; e.g. 1s, 100ms), or off"},
    {"SCALEA_SAMPLE", T::Spec, "`250`", parse_sample, R::Tool,
     "call-path sampling: samples per second of each thread's CPU time (1 to 10000); `off` "
     "turns it off; `scalea run --sample` sets it (docs/sampling.md)",
     "a rate from 1 to 10000 samples per second, on (250) or off"},
    {"SCALEA_SAMPLE_SOURCE", T::Text, "`perf`",
     [](const std::string& v, Config& c) {
       if (v != "timer" && v != "perf") return false;
       c.sample_perf = v == "perf";
       return true;
     },
     R::Tool,
     "what takes the samples: `perf`, a perf task-clock event on each thread (a sample where its "
     "period of CPU time ended); `timer`, a POSIX timer on each thread's CPU clock, checked at the "
     "kernel's tick: cheaper on a virtual machine (NPB: at most 1.5 % against 4-7 % at 250 a "
     "second), but a thread that runs in bursts or shares its CPU gets its samples where the tick "
     "finds it (docs/sampling.md). Where perf events are refused, the timer runs",
     "perf or timer"},
    {"SCALEA_IO", T::Switch, "`on`",
     [](const std::string& v, Config& c) { return parse_bool(v, c.io); }, R::Tool,
     "`off`: do not record POSIX and C stdio I/O calls (open, read, write, fsync, fwrite, ...) "
     "as regions (see \"File I/O\")",
     kSwitch},
    {"SCALEA_TUNE", T::Switch, "`off`",
     [](const std::string& v, Config& c) { return parse_bool(v, c.tune); }, R::Tool,
     "`on`: the on-line tuner tries loop schedules for the `schedule(runtime)` loops of each "
     "parallel region between its executions and keeps the fastest beyond the noise; `scalea "
     "run --tune` sets it (docs/tuning.md, \"On-line tuning\")",
     kSwitch},
    {"SCALEA_TUNE_REPEAT", T::Text, "`3`", parse_tune_repeat, R::Tool,
     "executions of a parallel region the on-line tuner measures per schedule (1 to 20)",
     "a whole number from 1 to 20"},
    {"SCALEA_MACHINE", T::Text, "`~/.config/scalea/machine.json`", nullptr, R::Command,
     "machine file written by `scalea calibrate` and read by `scalea report` (NOISE, "
     "`--compensate`, miss pricing)",
     "a machine file (JSON) written by scalea calibrate"},
    {"SCALEA_LIBOMP", T::Text,
     "a `libomp.so.5` on `LD_LIBRARY_PATH`, else the one scalea was built with", nullptr,
     R::Command, "the LLVM libomp `scalea run` preloads for programs built with GCC's libgomp",
     "the path of an LLVM libomp.so"},
    {"SCALEA_DB", T::Text, "`~/.local/share/scalea/experiments.db`", nullptr, R::Command,
     "the experiment database of `scalea db`, `run --db` and `study --db`: an SQLite file or a "
     "`postgresql://` URL (docs/database.md)",
     "an SQLite file or a postgresql:// URL"},
    {"SCALEA_KEEP_MB", T::Text, "`768`", nullptr, R::Command,
     "memory (MiB) in which the analysis of an experiment keeps files' decoded threads between "
     "its passes (`scalea report`, `export`, `diff`, ...; each process of `mpirun scalea "
     "report`); the files beyond it are read again in each pass, decoding only the columns the "
     "pass uses; `0` keeps none (the least memory; docs/drg.md, \"Streaming\")",
     "a whole number of MiB, 0 or more"},
    {"SCALEA_MPI_TIMEOUT", T::Text, "120", nullptr, R::MpiLayer,
     "seconds a rank may arrive after its tree parent before it is treated as lost (see above)",
     "seconds, a number above 0"},
    {"SCALEA_MPI_CALIBRATE", T::Spec, "ping-pong", nullptr, R::MpiLayer,
     "`0`: default model (1 µs, 0.2 ns/B); `LAT_NS,NS_PER_BYTE`: that model",
     "0, or LAT_NS,NS_PER_BYTE (two numbers, 0 or more)"},
    {"SCALEA_MPI_LAYOUT", T::Choice, "`auto`", nullptr, R::MpiLayer,
     "`ranks`: one data file per rank; `nodes`: one container file per node (the ranks that "
     "share memory, `MPI_COMM_TYPE_SHARED`); `auto`: containers when a node runs more than one "
     "rank (docs/experiment-format.md, \"Containers\")",
     "ranks, nodes or auto"},
    {"SCALEA_MPI_NODE_RANKS", T::Text, "the node's", nullptr, R::MpiLayer,
     "containers of at most this many ranks of a node each (consecutive by rank): more, smaller "
     "containers per node; on one machine, containers as several nodes would have them",
     "a whole number above 0"},
    {"SCALEA_RUN_BY_CLI", T::Switch, "", nullptr, R::Internal, "set by `scalea run`", "1"},
    {"SCALEA_DOCS_DIR", T::Text, "", nullptr, R::Internal,
     "set by the build when help2man makes the man pages: the documentation they name "
     "(report/src/output/docs.hpp)",
     "a directory"},
    {"SCALEA_RUN_PRELOAD", T::Text, "",
     [](const std::string& v, Config& c) { return c.run_preload = v, true; }, R::Internal,
     "the tool libraries `scalea run` added to LD_PRELOAD", "library paths, colon-separated"},
};

}  // namespace

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table(std::begin(kSettings), std::end(kSettings));
  return table;
}

const Setting* find_setting(const std::string& key) {
  for (const Setting& row : kSettings)
    if (key == row.key) return &row;
  return nullptr;
}

std::string invalid_value_message(const std::string& key, const std::string& value,
                                  const std::string& kept) {
  const Setting* s = find_setting(key);
  return "invalid value '" + value + "' for " + key +
         (s && s->valid ? std::string(" (valid: ") + s->valid + ")" : "") + ", " + kept + " kept";
}

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    size_t b = v.find_first_not_of(' ', start), e = v.find_last_not_of(' ', comma - 1);
    if (b < comma && comma > start) out.push_back(v.substr(b, e - b + 1));
    start = comma + 1;
  }
  return out;
}

Config read_config(char** env) {
  Config c;
  if (!env) return c;
  for (char** e = env; *e; ++e) {
    if (std::strncmp(*e, "SCALEA_", 7) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string key(*e, size_t(eq - *e)), value(eq + 1);
    const Setting* s = find_setting(key);
    if (!s) {
      c.problems.push_back("unknown setting " + key + " ignored");
      continue;
    }
    if (s->parse && !s->parse(value, c)) c.problems.push_back(invalid_value_message(key, value));
  }
  return c;
}

}  // namespace scalea::collect
