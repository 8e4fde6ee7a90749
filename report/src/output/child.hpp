// Programs a command starts and waits for (scalea study's runs, scalea tune's variants): started
// in a process group of their own with their output in files, stopped on a timeout or ^C, and the
// words that describe them.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace scalea::cli {

struct ChildResult {
  int exit_code = 0;  // 128+n: killed by signal n
  bool timed_out = false;
  bool interrupted = false;  // catch_interrupts()' signal came while it ran
  std::string error;         // could not start
};

// From now on SIGINT, SIGTERM and SIGHUP set a flag (interrupted()) instead of ending this
// process: a child that runs gets the signal (SIGINT for ^C, else SIGTERM) and SIGKILL 5 s later.
void catch_interrupts();
int interrupted();  // the signal catch_interrupts() caught, 0 when none

// Runs `argv` (searched in PATH) with `env` in `cwd` ("" : this one), stdin from /dev/null,
// stdout and stderr into the two files; kills its process group after `timeout_s` (0: none).
// `tick` is called about twice a second with the seconds it has run.
ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& cwd, const std::string& out_log,
                      const std::string& err_log, double timeout_s,
                      const std::function<void(double)>& tick);

// Why a child failed, in a few words ("exit status 3", "killed by signal 9 (Killed)", "timed
// out after 2.0 s (killed)", its start's error); "" when it exited with 0.
std::string child_failure(const ChildResult& cr, double timeout_s);

// `p` made absolute against the current directory. Throws UserError when that cannot be read.
std::string absolute(const std::string& p);
std::string self_exe();  // this scalea binary. Throws UserError
std::string hostname();

// "scalea-KIND-PROGRAM-20261202-011500" (KIND "" : "scalea-PROGRAM-..."): the default name of what
// a command writes for `program` (its last path component), stamped with the local time.
std::string stamped_name(const std::string& kind, const std::string& program);

// A command line as a shell would read it back: words with spaces or quotes in single quotes.
std::string join_words(const std::vector<std::string>& v);
std::string join_numbers(const std::vector<int>& v);  // "1,2,4"
std::string clock_text(double s);                     // "m:ss" or "h:mm:ss", "?" when unknown
std::string duration_text(double s);                  // "0.3 s" under a minute, else clock_text
// The last `n` lines of a file (each cut to 200 characters); none when it cannot be read.
std::vector<std::string> tail_lines(const std::string& path, size_t n);

}  // namespace scalea::cli
