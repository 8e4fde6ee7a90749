// scalea study: runs a whole scaling study (the reference run and every threads x ranks
// configuration, N repetitions each) through `scalea run`, recording progress in study.json so
// the study can be resumed. The directory format is in docs/study.md.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "output/child.hpp"
#include "db/db.hpp"
#include "analysis/share.hpp"
#include "scalea/drg/experiment.hpp"
#include "study/study.hpp"
#include "study/study_report.hpp"

extern char** environ;

namespace scalea::cli {
namespace {

namespace fs = std::filesystem;
using namespace study;
using Clock = std::chrono::steady_clock;

struct StudyOptions {
  std::string output;
  std::string threads, ranks;
  int repeat = 0;
  std::string launcher;
  bool resume = false;
  double timeout = 0;
  std::vector<std::string> command;
  db::StoreOptions store;  // --db, --tag
};

// The progress line on stderr: redrawn in place on a terminal, one line per run otherwise.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1), start_(Clock::now()) {}
  bool tty() const { return tty_; }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Estimated seconds left: the remaining runs, each priced at the mean duration of its
  // configuration's runs so far (or of all runs when its configuration has none yet).
  double left(const std::vector<const Run*>& remaining, double current_elapsed) const {
    if (done_.empty()) return -1;
    double all = 0;
    for (const auto& [k, v] : done_) all += v.first;
    size_t count = 0;
    for (const auto& [k, v] : done_) count += v.second;
    double mean_all = all / double(count);
    double sum = 0;
    for (size_t i = 0; i < remaining.size(); ++i) {
      auto it = done_.find(remaining[i]->config.id());
      double est = it != done_.end() ? it->second.first / double(it->second.second) : mean_all;
      if (i == 0) est = std::max(0.0, est - current_elapsed);
      sum += est;
    }
    return sum;
  }
  void finished(const Run& r) {
    auto& d = done_[r.config.id()];
    d.first += r.duration_s;
    d.second += 1;
  }

  void draw(const std::string& line) {
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      shown_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }
  // Prints a line that stays (failure reports, the summary).
  void print(const std::string& line) {
    clear();
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }
  void clear() {
    if (tty_ && shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool tty_;
  bool shown_ = false;
  Clock::time_point start_;
  std::map<std::string, std::pair<double, size_t>> done_;
};

// The plan: a new study from the options, or the stored one merged with the options (--resume).
Study make_plan(const StudyOptions& o, const std::string& dir, bool existing) {
  Study s;
  if (existing) {
    s = load_study(dir);
    if (!o.command.empty() && o.command != s.command)
      throw UserError("the study in " + dir + " runs '" + join_words(s.command) +
                      "'; resume it without a command or with the same one");
  } else {
    if (o.command.empty())
      throw UserError("no program given: scalea study -o DIR --threads LIST -- PROGRAM [ARGS...]");
    if (o.threads.empty() && o.ranks.empty())
      throw UserError(
          "--threads or --ranks is required, e.g. --threads 1,2,4,8 (OpenMP) or "
          "--ranks 1,2,4 (MPI)");
    s.command = o.command;
    s.cwd = absolute(".");
    s.cwd.pop_back();
    if (s.cwd.size() > 1 && s.cwd.back() == '/') s.cwd.pop_back();
    s.created = now_iso8601();
    s.host = hostname();
    s.repeat = 1;
    s.threads = {1};  // also what an MPI-only study (--ranks without --threads) runs
    s.ranks = {1};
    s.launcher = kDefaultLauncher;
  }
  // With --resume, lists given again extend the plan (the runs already recorded stay).
  auto merge = [existing](std::vector<int> old, const std::vector<int>& add) {
    if (!existing) return add;
    old.insert(old.end(), add.begin(), add.end());
    std::sort(old.begin(), old.end());
    old.erase(std::unique(old.begin(), old.end()), old.end());
    return old;
  };
  if (!o.threads.empty()) s.threads = merge(s.threads, parse_list(o.threads, "--threads"));
  if (!o.ranks.empty()) {
    s.ranks = merge(s.ranks, parse_list(o.ranks, "--ranks"));
    s.use_launcher = true;
  }
  if (!o.launcher.empty()) {
    s.launcher = o.launcher;
    s.use_launcher = true;
  }
  if (o.repeat > 0) s.repeat = existing ? std::max(s.repeat, o.repeat) : o.repeat;
  if (o.timeout > 0) s.timeout_s = o.timeout;
  s.tool_version = SCALEA_VERSION;
  if (s.use_launcher) (void)expand_launcher(s.launcher, {1, 1});  // validate the template early
  for (int r : s.ranks)
    if (r > 1 && !s.use_launcher) throw UserError("ranks > 1 need a launcher");
  // Runs already recorded stay; the plan adds the ones it is missing.
  for (const Run& r : plan_runs(s.threads, s.ranks, s.repeat))
    if (!s.find(r.config, r.repetition)) s.runs.push_back(r);
  return s;
}

// The program and the launcher must exist before anything is created.
void check_programs(const Study& s) {
  std::string prog = s.command[0];
  if (prog.find('/') != std::string::npos && prog[0] != '/') prog = s.cwd + "/" + prog;
  if (find_program(prog).empty())
    throw UserError("program '" + s.command[0] + "' not found or not executable");
  if (s.use_launcher) {
    std::string l = expand_launcher(s.launcher, {1, 1})[0];
    if (find_program(l).empty())
      throw UserError("launcher '" + l + "' not found (from --launcher '" + s.launcher + "')");
  }
}

bool experiment_present(const std::string& dir, const Run& r) {
  struct stat st;
  return stat((dir + "/" + r.experiment() + "/meta.json").c_str(), &st) == 0;
}

// Checks what a finished run left: its experiment must load and be complete.
std::string check_experiment(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "the run wrote no experiment (" + path + ")";
  try {
    drg::LoadOptions lo;
    lo.resolve_symbols = false;
    // Read as the reports read it: one rank file at a time, every file checked on opening.
    if (!drg::RankFiles(path, lo).definitions().complete()) return "the experiment is incomplete";
  } catch (const drg::LoadError& e) {
    return std::string("the experiment does not load: ") + e.what();
  }
  return "";
}

// Creates the study directory (and its runs/ and logs/) unless it exists, and locks it: one study
// process per directory. Returns the lock's descriptor.
int lock_study_dir(const StudyOptions& o, const std::string& dir, bool existing) {
  if (!existing) {
    if (mkdir(dir.c_str(), 0755) != 0)
      throw UserError("cannot create study directory " + o.output + ": " + std::strerror(errno));
  }
  for (const char* sub : {"/runs", "/logs"})
    if (mkdir((dir + sub).c_str(), 0755) != 0 && errno != EEXIST)
      throw UserError("cannot create " + dir + sub + ": " + std::strerror(errno));
  int lock = open((dir + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) throw UserError("cannot write in " + o.output + ": " + std::strerror(errno));
  if (flock(lock, LOCK_EX | LOCK_NB) != 0)
    throw UserError("study " + o.output + " is being run by another scalea study process");
  return lock;
}

// The runs still to do; completed runs whose experiment went missing run again.
std::vector<Run*> runs_to_do(Study& s, const std::string& dir) {
  std::vector<Run*> todo;
  for (Run& r : s.runs) {
    if (r.status == Status::Ok && !experiment_present(dir, r)) {
      r.status = Status::Pending;
      r.error.clear();
    }
    if (r.status != Status::Ok) todo.push_back(&r);
  }
  return todo;
}

// The environment of every run: this one's, with SCALEA_THROTTLE=off unless the user set it.
std::vector<std::string> study_environment(Progress& progress) {
  std::vector<std::string> env;
  const char* throttle = nullptr;
  for (char** e = environ; *e; ++e) {
    env.emplace_back(*e);
    if (std::strncmp(*e, "SCALEA_THROTTLE=", 16) == 0) throttle = *e + 16;
  }
  // Throttling stops counting a hot call path after a number of visits per thread, so the same
  // path is cut at different points in runs with different thread counts: its times could not be
  // compared across the study. Runs record every visit unless the user chose otherwise.
  if (!throttle) env.emplace_back("SCALEA_THROTTLE=off");
  else if (std::strcmp(throttle, "off") != 0)
    progress.print(std::string("scalea study: SCALEA_THROTTLE=") + throttle +
                   " kept: call paths throttled in a run have partial times there, and their "
                   "overheads across runs are not comparable (unset it to record every visit)");
  return env;
}

// Why a run failed ("" when it did not): its start, its timeout, its exit, or its experiment.
std::string run_failure(const ChildResult& cr, double timeout_s, const std::string& exp_dir) {
  std::string why = child_failure(cr, timeout_s);
  return why.empty() ? check_experiment(exp_dir) : why;
}

// The progress line of run `index` of `total` (`left`: the estimated time left, < 0 unknown).
std::string progress_line(const Progress& progress, const Study& s, const Run& r, size_t index,
                          size_t total, double left) {
  std::string bar;
  if (progress.tty()) {  // [=====>    ] on a terminal
    size_t width = 20, filled = total ? width * (index - 1) / total : 0;
    bar = "[" + std::string(filled, '=') + ">" + std::string(width - filled, ' ') + "] ";
  }
  return "scalea study: " + bar + "run " + std::to_string(index) + "/" + std::to_string(total) +
         "  threads " + std::to_string(r.config.threads) + " x ranks " +
         std::to_string(r.config.ranks) + ", repetition " + std::to_string(r.repetition) + "/" +
         std::to_string(s.repeat) + (r.reference() ? " (reference)" : "") + "  elapsed " +
         clock_text(progress.elapsed()) +
         (left >= 0 ? ", about " + clock_text(left) + " left" : "");
}

// Marks run `r` failed for `why`, with the last lines of its stderr, and says so.
void record_failure(Progress& progress, Run& r, const std::string& why, const std::string& dir,
                    size_t index, size_t total) {
  r.status = Status::Failed;
  r.error = why;
  r.stderr_tail = tail_lines(dir + "/" + r.stderr_log(), 5);
  progress.finished(r);
  progress.print(
      "scalea study: run " + std::to_string(index) + "/" + std::to_string(total) + " " + r.id() +
      " failed: " + why + " after " + duration_text(r.duration_s) +
      (r.stderr_tail.empty() ? " (no stderr output)" : "; last lines of " + r.stderr_log() + ":"));
  for (const std::string& l : r.stderr_tail) progress.print("    " + l);
}

// The command of one run: `scalea run` under the study's launcher, if any.
std::vector<std::string> run_argv(const Study& s, const Run& r, const std::string& exe, bool root,
                                  const std::string& exp_dir) {
  std::vector<std::string> argv;
  if (s.use_launcher) argv = launcher_argv(s.launcher, r.config, root);
  for (const std::string& a :
       {exe, std::string("run"), std::string("-q"), std::string("-o"), exp_dir, std::string("--")})
    argv.push_back(a);
  argv.insert(argv.end(), s.command.begin(), s.command.end());
  return argv;
}

// The environment of one run: the study's, with the run's thread count and no output setting.
std::vector<std::string> run_environment(const std::vector<std::string>& base_env, const Run& r) {
  std::vector<std::string> env;
  for (const std::string& e : base_env)
    if (e.rfind("OMP_NUM_THREADS=", 0) != 0 && e.rfind("SCALEA_OUTPUT=", 0) != 0) env.push_back(e);
  env.push_back("OMP_NUM_THREADS=" + std::to_string(r.config.threads));
  return env;
}

// The study's directory, absolute; `existing` when it holds a study to resume. Throws UserError
// when -o names something else, or a study without --resume.
std::string study_dir(const StudyOptions& o, bool& existing) {
  if (o.output.empty()) throw UserError("-o DIR is required");
  std::string dir = absolute(o.output);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st;
  bool exists = lstat(dir.c_str(), &st) == 0;
  if (exists && !o.resume)
    throw UserError("study directory " + o.output +
                    " already exists; add --resume to continue it or choose another -o");
  existing = exists && is_study(dir);
  if (exists && !existing)
    throw UserError(o.output + " exists but is not a study (no study.json); choose another -o");
  return dir;
}

// One attempt of run `r` with `argv` and `env`; `line` draws its progress. `why` says why it
// failed ("" when it did not). False when the study was interrupted during it: the run stays
// pending, and the study is saved so.
bool attempt(Study& s, Run& r, const std::vector<std::string>& argv,
             const std::vector<std::string>& env, const std::string& dir, Progress& progress,
             const std::function<std::string(double)>& line, std::string& why) {
  r.argv = argv;
  r.started = now_iso8601();
  r.status = Status::Pending;
  r.error.clear();
  r.stderr_tail.clear();
  auto t0 = Clock::now();
  ChildResult cr = run_child(argv, env, s.cwd, dir + "/" + r.stdout_log(),
                             dir + "/" + r.stderr_log(), s.timeout_s, [&](double el) {
                               if (progress.tty()) progress.draw(line(el));
                             });
  r.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.exit_code = cr.exit_code;
  if (cr.interrupted) {
    r.status = Status::Pending;
    r.exit_code.reset();
    s.updated = now_iso8601();
    save_study(dir, s);
    return false;
  }
  why = run_failure(cr, s.timeout_s, dir + "/" + r.experiment());
  return true;
}

// The study's last line: how many runs are ok, and what to run next.
std::string summary(const StudyOptions& o, const Study& s, size_t ok, double elapsed,
                    bool one_thread) {
  size_t total = s.runs.size();
  std::string line =
      "scalea study: " + o.output + ": " + std::to_string(ok) + " of " + std::to_string(total) +
      " runs ok in " + clock_text(elapsed) +
      (one_thread ? " (ranks " + join_numbers(s.ranks) + ", 1 thread per rank)" : "");
  if (ok < total)
    line += ", " + std::to_string(total - ok) + " failed (rerun them: scalea study -o " + o.output +
            " --resume)";
  return line + "; report: scalea report " + o.output;
}

// Says once, before the runs start, which of them have more threads than this process's CPUs
// (they still run: the user may want them).
void say_oversubscribed(Progress& progress, const Study& s, const std::vector<Run*>& todo) {
  std::vector<Config> planned;
  for (const Run* r : todo) planned.push_back(r->config);
  std::string crowded = oversubscription_note(planned, usable_cpus(), s.use_launcher);
  if (!crowded.empty()) progress.print(crowded);
}

int run_study(const StudyOptions& o) {
  bool existing = false;
  std::string dir = study_dir(o, existing);

  Study s = make_plan(o, dir, existing);
  check_programs(s);
  // A pure MPI program has one thread per rank: --ranks alone studies that.
  const bool one_thread = !existing && o.threads.empty();

  int lock = lock_study_dir(o, dir, existing);
  std::vector<Run*> todo = runs_to_do(s, dir);
  s.updated = now_iso8601();
  save_study(dir, s);

  Progress progress;
  size_t total = s.runs.size(), already = total - todo.size();
  if (existing && todo.empty()) {
    progress.print("scalea study: all " + std::to_string(total) + " runs of " + o.output +
                   " are complete; report: scalea report " + o.output);
    if (o.store.enabled()) db::store_into(o.store.db, {dir}, o.store.tags);
    return 0;
  }
  if (existing)
    progress.print("scalea study: resuming " + o.output + ": " + std::to_string(already) + " of " +
                   std::to_string(total) + " runs complete, " + std::to_string(todo.size()) +
                   " to run");
  if (one_thread)
    progress.print(
        "scalea study: --threads not given: 1 thread per rank (OMP_NUM_THREADS=1), an "
        "MPI-only study; give --threads for MPI+OpenMP");
  say_oversubscribed(progress, s, todo);

  catch_interrupts();

  std::string exe = self_exe();
  bool root = geteuid() == 0;
  std::vector<std::string> base_env = study_environment(progress);
  int failed = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    Run& r = *todo[i];
    std::string exp_dir = dir + "/" + r.experiment();
    std::error_code ec;
    fs::remove_all(exp_dir, ec);  // what a failed or interrupted attempt left
    std::vector<std::string> argv = run_argv(s, r, exe, root, exp_dir);
    std::vector<std::string> env = run_environment(base_env, r);

    std::vector<const Run*> remaining;
    for (size_t k = i; k < todo.size(); ++k) remaining.push_back(todo[k]);
    size_t index = already + i + 1;
    auto line = [&](double run_el) {
      return progress_line(progress, s, r, index, total, progress.left(remaining, run_el));
    };
    progress.draw(line(0));

    std::string why;
    if (!attempt(s, r, argv, env, dir, progress, line, why)) {
      progress.print("scalea study: interrupted during run " + r.id() +
                     "; continue with: scalea study -o " + o.output + " --resume");
      return 130;
    }
    if (why.empty()) {
      r.status = Status::Ok;
      progress.finished(r);
    } else {
      record_failure(progress, r, why, dir, index, total);
      ++failed;
    }
    s.updated = now_iso8601();
    save_study(dir, s);
  }
  size_t ok = 0;
  for (const Run& r : s.runs) ok += r.status == Status::Ok;
  progress.print(summary(o, s, ok, progress.elapsed(), one_thread));
  close(lock);
  if (o.store.enabled() && ok > 0) db::store_into(o.store.db, {dir}, o.store.tags);
  return ok < total ? 1 : 0;
}

}  // namespace

void add_study(CLI::App& app) {
  auto o = std::make_shared<StudyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "study", "Run a scaling study: a reference run and every threads x ranks configuration");
  cmd->footer(
      "Examples:\n"
      "  scalea study -o md.study --threads 1,2,4,8 -- ./md 4096\n"
      "  scalea study -o md.study --threads 1,2,4 --repeat 3 -- ./md 4096\n"
      "  scalea study -o halo.study --ranks 1,2,4 -- ./halo       MPI only: 1 thread per rank\n"
      "  scalea study -o halo.study --threads 1,2 --ranks 1,2,4 -- ./halo\n"
      "  scalea study -o halo.study --ranks 2,4,8 --launcher 'srun -n {ranks} -c {threads}' -- "
      "./halo\n"
      "  scalea study -o md.study --resume        rerun failed, pending and missing runs\n"
      "  scalea study -o md.study --threads 1,2,4 --db --tag commit=abc123 -- ./md   and store it\n"
      "  scalea report md.study                    speedup and overhead classes per region vs p\n\n"
      "The study runs the reference (1 thread, 1 rank) and every configuration, each --repeat\n"
      "times, as `scalea run` with OMP_NUM_THREADS set (1 when only --ranks is given: a pure MPI\n"
      "program has one thread per rank); with --ranks or --launcher every run is\n"
      "started through the launcher template ({ranks}, {threads}, {p} are replaced; no shell).\n"
      "Progress is kept in DIR/study.json after every run; program output goes to DIR/logs/.\n"
      "Runs record every visit (SCALEA_THROTTLE=off) unless SCALEA_THROTTLE is set, so that\n"
      "regions compare across runs; other SCALEA_* settings pass through to every run.\n"
      "Exit status: 0 all runs ok, 1 some run failed, 2 bad input, 130 interrupted "
      "(docs/study.md).");
  cmd->add_option("-o,--output", o->output,
                  "Study directory to create (or to continue with --resume)")
      ->required();
  cmd->add_option(
      "-t,--threads", o->threads,
      "OpenMP threads per rank to study, e.g. 1,2,4,8 (default 1 when --ranks is given)");
  cmd->add_option("-n,--ranks", o->ranks, "MPI ranks to study, e.g. 1,2,4 (runs use the launcher)");
  cmd->add_option("--repeat", o->repeat, "Repetitions of every configuration (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
      "--launcher", o->launcher,
      "Launcher template for ranks (default 'mpirun -np {ranks}'; e.g. 'srun -n {ranks}')");
  cmd->add_flag("--resume", o->resume,
                "Continue the study in DIR: run what is failed, pending or missing");
  cmd->add_option("--timeout", o->timeout,
                  "Kill a run after this many seconds (it counts as failed)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("command", o->command, "Program and its arguments (after --)");
  db::add_store_options(cmd, o->store, "every completed run (as scalea db add STUDY)");
  cmd->callback([o] {
    refuse_under_launcher("this command");  // it starts its runs itself, with --launcher
    int rc = run_study(*o);
    if (rc != 0) {
      std::fflush(stderr);
      std::exit(rc);
    }
  });
}

}  // namespace scalea::cli
