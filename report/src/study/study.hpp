// Scaling studies: the study directory (study.json, runs/, logs/) and its plan of runs.
// `scalea study` (cmd_study.cpp) writes it; `scalea report STUDYDIR` (study_report.cpp) reads it.
// The format is documented in docs/study.md.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace scalea::cli::study {

inline constexpr const char* kFormat = "scalea-study";
inline constexpr int kVersion = 1;
inline constexpr const char* kDefaultLauncher = "mpirun -np {ranks}";

enum class Status { Pending, Ok, Failed };
const char* status_name(Status s);

// One configuration: threads per rank and ranks. The reference configuration is 1 x 1.
struct Config {
  int threads = 1, ranks = 1;
  int p() const { return threads * ranks; }
  std::string id() const;  // "t4-r2"
  bool operator==(const Config& o) const { return threads == o.threads && ranks == o.ranks; }
  bool operator<(const Config& o) const {
    return p() != o.p() ? p() < o.p() : ranks != o.ranks ? ranks < o.ranks : threads < o.threads;
  }
};

struct Run {
  Config config;
  int repetition = 1;  // 1-based
  Status status = Status::Pending;
  std::optional<int> exit_code;          // the child's exit status (128+n: killed by signal n)
  double duration_s = 0;                 // wall time of the child, as seen by scalea study
  std::string started;                   // ISO 8601 local time, "" when never started
  std::string error;                     // one line: why it failed, "" when ok/pending
  std::vector<std::string> stderr_tail;  // last lines of the child's stderr when it failed
  std::vector<std::string> argv;         // what was started

  std::string id() const;                                    // "t4-r2-rep1"
  std::string experiment() const { return "runs/" + id(); }  // relative to the study directory
  std::string stdout_log() const { return "logs/" + id() + ".out"; }
  std::string stderr_log() const { return "logs/" + id() + ".err"; }
  bool reference() const { return config.threads == 1 && config.ranks == 1; }
};

struct Study {
  std::vector<std::string> command;
  std::string cwd;                  // the directory runs start in (absolute)
  std::vector<int> threads, ranks;  // as planned (sorted, unique)
  int repeat = 1;
  bool use_launcher = false;  // ranks go through the launcher (--ranks given)
  std::string launcher;       // template, e.g. "mpirun -np {ranks}"
  double timeout_s = 0;       // 0: none
  std::string created, updated, host, tool_version;
  std::vector<Run> runs;

  // The configurations in plan order: the reference first, then by p.
  std::vector<Config> configs() const;
  Run* find(const Config& c, int repetition);
};

// "1,2,4,8" -> {1,2,4,8} (sorted, duplicates removed). Throws UserError naming `flag`.
std::vector<int> parse_list(const std::string& text, const std::string& flag);

// The runs a plan asks for, in execution order: round by round (repetition 1 of every
// configuration, reference first, then repetition 2, ...), so an interrupted study already
// covers every configuration.
std::vector<Run> plan_runs(const std::vector<int>& threads, const std::vector<int>& ranks,
                           int repeat);

// The CPUs this process may run on (sched_getaffinity), else those online; at least 1.
int usable_cpus();
// What scalea study says once before it starts when some of `configs` have more threads x ranks
// than `cpus`: which, how many CPUs, that their times will include waiting for a CPU and the
// largest p that fits; "" when all fit. `launcher`: ranks go through a launcher (which may place
// them on other hosts).
std::string oversubscription_note(const std::vector<Config>& configs, int cpus, bool launcher);

// Splits a launcher template into argv (whitespace separated, '...' and "..." quote, \ escapes;
// no shell) and replaces {ranks}, {threads}, {p} in every word. Throws UserError when malformed.
std::vector<std::string> expand_launcher(const std::string& tmpl, const Config& c);
// The launcher words after expansion plus, as root with Open MPI's mpirun/mpiexec, the flags it
// needs to run as root and with more ranks than cores.
std::vector<std::string> launcher_argv(const std::string& tmpl, const Config& c, bool as_root);

nlohmann::ordered_json to_json(const Study& s);
Study from_json(const nlohmann::json& j, const std::string& name);  // throws UserError

// True when `dir` holds a study.json.
bool is_study(const std::string& dir);
Study load_study(const std::string& dir);  // throws UserError with a one-line message
// Writes study.json atomically (temporary file, fsync, rename).
void save_study(const std::string& dir, const Study& s);

std::string now_iso8601();

}  // namespace scalea::cli::study
