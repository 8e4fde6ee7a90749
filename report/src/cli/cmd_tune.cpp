// scalea tune: the tuner between runs (docs/tuning.md). Runs the program once as the user runs it
// (the baseline, under `scalea run`), lets the knowledge base (tune/) choose settings from that
// run's analysis that cannot change the program's results, runs every variant and the baseline
// --repeat times, round by round, checks each run's output, and prints which is faster beyond
// the run-to-run noise. Everything goes into DIR: tune.json, runs/ (the experiments) and logs/.
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

#include <CLI/CLI.hpp>

#include "analysis/analyze.hpp"
#include "analysis/share.hpp"
#include "commands.hpp"
#include "db/db.hpp"
#include "findings/findings.hpp"
#include "output/child.hpp"
#include "output/write.hpp"
#include "study/study.hpp"
#include "tune/tune.hpp"

extern char** environ;

namespace scalea::cli {
namespace {

namespace fs = std::filesystem;
using tune::Outcome;
using tune::Variant;

struct TuneOptions {
  std::string output;
  int repeat = 3;
  std::vector<std::string> tries;
  bool only_tries = false;
  std::string expect, check;
  double timeout = 0;
  int ranks = 0;  // MPI ranks of the baseline (runs go through the launcher), 0: none
  std::string launcher;
  std::vector<std::string> command;
  db::StoreOptions store;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::regex expect_regex(const std::string& text) {
  try {
    return std::regex(text, std::regex::ECMAScript | std::regex::multiline);  // ^ $ per line
  } catch (const std::regex_error& e) {
    throw UserError("--expect '" + text + "' is not a regular expression: " + e.what());
  }
}

// One tuning session: its directory, the runs it made, and how it checks them.
class Tuner {
 public:
  Tuner(const TuneOptions& o, std::string dir) : o_(o), dir_(std::move(dir)), exe_(self_exe()) {
    if (!o.expect.empty()) expect_ = expect_regex(o.expect);
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "SCALEA_OUTPUT=", 14) != 0) base_env_.emplace_back(*e);
    cwd_ = absolute(".");
  }

  // Runs repetition `rep` (1-based) of variant `index` into outcome `out`; false when
  // interrupted.
  bool run(size_t index, int rep, Outcome& out) {
    const std::string id = fmt::format("v{}-rep{}", index, rep);
    const std::string exp = dir_ + "/runs/" + id, log = dir_ + "/logs/" + id;
    std::vector<std::string> argv = launcher(out.variant);
    for (const std::string& a :
         {exe_, std::string("run"), std::string("-q"), std::string("-o"), exp, std::string("--")})
      argv.push_back(a);
    argv.insert(argv.end(), o_.command.begin(), o_.command.end());
    ++done_;
    std::fprintf(stderr, "scalea tune: run %zu/%zu  %s (repetition %d/%d)\n", done_, total_,
                 out.variant.name().c_str(), rep, o_.repeat);
    ChildResult cr = run_child(argv, environment(out.variant), cwd_, log + ".out", log + ".err",
                               o_.timeout, [](double) {});
    if (cr.interrupted) return false;
    std::string why = child_failure(cr, o_.timeout);
    if (why.empty()) why = check_output(out.variant, log + ".out");
    Measured m;
    if (why.empty()) why = read_experiment(exp, m);
    const double seconds = m.seconds;
    if (!why.empty()) {
      out.failures.push_back(fmt::format("repetition {}: {}", rep, why));
      std::fprintf(stderr, "scalea tune:   failed: %s (logs/%s.err)\n", why.c_str(), id.c_str());
    } else if (rep == 0) {  // the analysis run: made before the others, its time not compared
      std::fprintf(stderr, "scalea tune:   %.3f s (the run the rules read; not timed)\n", seconds);
    } else {
      out.seconds.push_back(seconds);
      const size_t k = out.classified++;
      for (size_t c = 0; c < overheads::kClassCount; ++c)
        out.classes[c] = (out.classes[c] * double(k) + m.classes[c]) / double(k + 1);
      out.cpu_wait_share = std::max(out.cpu_wait_share, m.cpu_wait_share);
      std::fprintf(stderr, "scalea tune:   %.3f s\n", seconds);
    }
    runs_.push_back({{"variant", index},
                     {"repetition", rep},
                     {"experiment", "runs/" + id},
                     {"ok", why.empty()},
                     {"error", why},
                     {"seconds", seconds}});
    return true;
  }

  void plan(size_t total) { total_ = total; }
  const nlohmann::json& runs() const { return runs_; }
  std::string baseline_output() const { return dir_ + "/logs/v0-rep0.out"; }

  // The launcher's words for the variant's ranks and threads, none without --ranks.
  std::vector<std::string> launcher(const Variant& v) const {
    if (o_.ranks <= 0) return {};
    study::Config c;
    c.ranks = v.ranks > 0 ? v.ranks : o_.ranks;
    c.threads = 1;
    for (const std::string& e : environment(v))
      if (e.rfind("OMP_NUM_THREADS=", 0) == 0) c.threads = std::max(1, std::atoi(e.c_str() + 16));
    std::vector<std::string> argv = study::launcher_argv(
        o_.launcher.empty() ? study::kDefaultLauncher : o_.launcher, c, geteuid() == 0);
    argv.insert(argv.begin() + 1, v.launcher_options.begin(), v.launcher_options.end());
    return argv;
  }

 private:
  std::vector<std::string> environment(const Variant& v) const {
    std::vector<std::string> env;
    for (const std::string& e : base_env_) {
      bool replaced = std::any_of(v.settings.begin(), v.settings.end(),
                                  [&](const auto& s) { return e.rfind(s.name + "=", 0) == 0; });
      if (!replaced) env.push_back(e);
    }
    for (const tune::Setting& s : v.settings) env.push_back(s.name + "=" + s.value);
    return env;
  }

  // Why the run's output is not the program's ("" when it is, or nothing checks it).
  std::string check_output(const Variant& v, const std::string& out_log) {
    if (!o_.expect.empty() && !std::regex_search(read_file(out_log), expect_))
      return "its output does not match --expect '" + o_.expect + "'";
    if (o_.check.empty()) return "";
    std::vector<std::string> env = environment(v);
    env.push_back("SCALEA_TUNE_OUTPUT=" + out_log);
    env.push_back("SCALEA_TUNE_BASELINE_OUTPUT=" + baseline_output());
    env.push_back("SCALEA_TUNE_VARIANT=" + v.name());
    ChildResult cr = run_child({"/bin/sh", "-c", o_.check}, env, cwd_, out_log + ".check.out",
                               out_log + ".check.err", o_.timeout, [](double) {});
    std::string why = child_failure(cr, o_.timeout);
    return why.empty() ? "" : "--check failed (" + why + ")";
  }

  // What one run's experiment says: the program's time, its classes, its threads' wait for CPUs.
  struct Measured {
    double seconds = 0;
    std::array<double, overheads::kClassCount> classes{};
    // Of the threads' time on or waiting for a CPU (schedstat), when other processes had the
    // CPUs; 0 when the run's own threads outnumbered the CPUs they were allowed.
    double cpu_wait_share = 0;
  };
  static std::string read_experiment(const std::string& exp, Measured& m) {
    try {
      std::unique_ptr<Analyzed> x = analyze(exp);
      if (x->a.regions.empty()) return "its experiment holds no regions";
      const overheads::RegionOverheads& program = x->a.regions.front();
      m.seconds = program.t_p;
      m.classes = program.classes;
      // Waits of threads that were more than their CPUs (a rank bound to one core, more
      // threads than the machine has) are the run's own, not other processes': not counted.
      if (const CpuWait w = cpu_wait(x->experiment());
          w.significant() && cpu_sharing_evidence(x->experiment()).threads == 0)
        m.cpu_wait_share = w.share();
      return "";
    } catch (const std::exception& e) {
      return std::string("its experiment cannot be read: ") + e.what();
    }
  }

  const TuneOptions& o_;
  std::string dir_, exe_, cwd_;
  std::regex expect_;
  std::vector<std::string> base_env_;
  nlohmann::json runs_ = nlohmann::json::array();
  size_t done_ = 0, total_ = 0;
};

std::string make_dir(const TuneOptions& o) {
  std::string dir = o.output.empty() ? stamped_name("tune", o.command[0]) : o.output;
  struct stat st;
  if (lstat(dir.c_str(), &st) == 0)
    throw UserError("output " + dir +
                    " already exists; choose another -o (nothing is overwritten)");
  std::error_code ec;
  for (const char* sub : {"/runs", "/logs"}) {
    fs::create_directories(dir + sub, ec);
    if (ec) throw UserError("cannot create " + dir + sub + ": " + ec.message());
  }
  return absolute(dir);
}

// The variants: the knowledge base's from the baseline's first run, then --try's.
std::vector<Variant> variants_to_try(const TuneOptions& o, const std::string& baseline_exp,
                                     std::vector<std::string>& left) {
  std::vector<Variant> out;
  if (!o.only_tries) {
    tune::Choice c = tune::choose_variants(
        *analyze(baseline_exp), tune::tuning_environment(environ), study::usable_cpus(),
        o.ranks > 0
            ? study::expand_launcher(o.launcher.empty() ? study::kDefaultLauncher : o.launcher, {})
            : std::vector<std::string>{});
    out = c.variants;
    left = c.left;
  }
  for (const std::string& t : o.tries) {
    Variant v = tune::parse_try(t);
    auto same = std::find_if(out.begin(), out.end(), [&](const Variant& w) {
      return w.settings == v.settings && w.ranks == v.ranks && w.launcher_options.empty();
    });
    if (same == out.end()) out.push_back(v);
  }
  return out;
}

std::vector<std::string> with_launcher(std::vector<std::string> launcher,
                                       const std::vector<std::string>& command) {
  launcher.insert(launcher.end(), command.begin(), command.end());
  return launcher;
}

void print_table(const std::vector<Outcome>& outcomes, size_t best) {
  const Outcome& base = outcomes.front();
  std::printf("\n  %-44s %9s  %-17s %7s  %s\n", "variant", "median", "range", "gain",
              "classes against the baseline");
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& v = outcomes[i];
    std::string name = (i == best && i > 0 ? "* " : "  ") + v.variant.name();
    if (!v.ok()) {
      std::printf("%-46s failed: %s\n", name.c_str(),
                  v.failures.empty() ? "no run" : v.failures.front().c_str());
      continue;
    }
    std::string gain = i == 0 || !base.ok()
                           ? "-"
                           : fmt::format("{:+.1f}%", 100 * (1 - v.median() / base.median()));
    std::printf("%-46s %7.3f s  %.3f-%.3f s  %7s  %s\n", name.c_str(), v.median(), v.min(), v.max(),
                gain.c_str(), i == 0 ? "" : tune::class_changes(base, v).c_str());
  }
}

// The verdict's lines: which variant, how much, and whether beyond the noise.
std::string verdict(const TuneOptions& o, const Tuner& tuner, const std::vector<Outcome>& outcomes,
                    size_t best) {
  const Outcome& base = outcomes.front();
  if (best == 0)
    return fmt::format(
        "no variant was faster than the baseline ({:.3f} s) beyond the run-to-run noise: keep "
        "your settings",
        base.median());
  const Outcome& v = outcomes[best];
  std::string env;
  for (const tune::Setting& s : v.variant.settings) env += s.name + "=" + s.value + " ";
  return fmt::format(
      "chosen: {}: {:.0f}% faster than the baseline ({:.3f} s -> {:.3f} s, median of {}); {}\n"
      "  run it so: {}{}",
      v.variant.name(), 100 * (1 - v.median() / base.median()), base.median(), v.median(), o.repeat,
      tune::beyond_noise(base, v)
          ? fmt::format("beyond the noise: its slowest run ({:.3f} s) was faster than the "
                        "baseline's fastest ({:.3f} s)",
                        v.max(), base.min())
          : "one repetition each: no measure of the noise, so not sure (use --repeat 3)",
      env, join_words(with_launcher(tuner.launcher(v.variant), o.command)));
}

// When runs waited for CPUs (other processes had them), that their times follow the load as much
// as the settings (validation.md: LULESH's passive waiting from 51 % faster to 36 % slower as the
// load came and went); "" when no run did.
std::string shared_cpus_note(const std::vector<Outcome>& outcomes) {
  double most = 0;
  for (const Outcome& x : outcomes) most = std::max(most, x.cpu_wait_share);
  if (most <= 0) return "";
  return fmt::format(
      "WARNING: the runs waited for a CPU (up to {:.0f}% of their threads' time: other processes "
      "had the CPUs): their times follow that load as much as the settings; rerun on a quiet "
      "machine before keeping a setting",
      100 * most);
}

void save(const TuneOptions& o, const std::string& dir, const Tuner& tuner,
          const std::vector<Outcome>& outcomes, size_t best, const std::vector<std::string>& left) {
  nlohmann::json j = {{"format", "scalea-tune"},
                      {"version", 1},
                      {"command", o.command},
                      {"cwd", absolute(".")},
                      {"repeat", o.repeat},
                      {"created", study::now_iso8601()},
                      {"left", left},
                      {"runs", tuner.runs()}};
  j["variants"] = nlohmann::json::array();
  for (const Outcome& x : outcomes) j["variants"].push_back(tune::to_json(x));
  j["chosen"] = best > 0 ? nlohmann::json(outcomes[best].variant.name()) : nlohmann::json();
  j["beyond_noise"] = best > 0 && tune::beyond_noise(outcomes.front(), outcomes[best]);
  j["shared_cpus"] = !shared_cpus_note(outcomes).empty();
  // The command may hold bytes that are not UTF-8: they become U+FFFD rather than an exception.
  write_output(dir + "/tune.json",
               j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void store(const TuneOptions& o, const std::string& dir, const nlohmann::json& runs,
           const std::vector<Outcome>& outcomes) {
  for (size_t i = 0; i < outcomes.size(); ++i) {
    std::vector<std::string> dirs;
    for (const auto& r : runs)
      if (r["variant"] == i && r["ok"] == true)
        dirs.push_back(dir + "/" + r["experiment"].get<std::string>());
    if (dirs.empty()) continue;
    std::vector<std::string> tags = o.store.tags;
    tags.push_back("tune=" + dir.substr(dir.rfind('/') + 1));
    tags.push_back("tune-variant=" + outcomes[i].variant.name());
    db::store_into(o.store.db, dirs, tags);
  }
}

int run_tune(const TuneOptions& o) {
  if (o.command.empty()) throw UserError("give the program to tune after --");
  if (find_program(o.command[0]).empty())
    throw UserError("program " + o.command[0] + " not found or not executable");
  if (o.only_tries && o.tries.empty()) throw UserError("--only-try needs at least one --try");
  for (const std::string& t : o.tries)  // bad input before anything runs
    if (tune::parse_try(t).ranks > 0 && o.ranks <= 0)
      throw UserError("--try '" + t + "' sets ranks: give the baseline's with --ranks N");
  if (!o.expect.empty()) expect_regex(o.expect);
  const std::string dir = make_dir(o);
  catch_interrupts();
  Tuner tuner(o, dir);
  // The run the rules read (repetition 0): the program as given, its time not compared (it ran
  // before the others, on a machine that may have been in another state).
  std::vector<Outcome> outcomes(1);
  tuner.plan(1);
  if (!tuner.run(0, 0, outcomes[0])) return 130;
  if (!outcomes[0].failures.empty()) {
    std::fprintf(stderr,
                 "scalea tune: the program as given failed (%s): nothing to tune; its output is "
                 "in %s/logs/v0-rep0.*\n",
                 outcomes[0].failures.front().c_str(), dir.c_str());
    return 1;
  }
  std::vector<std::string> left;
  for (Variant& v : variants_to_try(o, dir + "/runs/v0-rep0", left))
    outcomes.push_back(Outcome{v, {}, {}, {}, 0, 0});
  for (size_t i = 1; i < outcomes.size(); ++i)
    std::fprintf(stderr, "scalea tune: will try %s: %s\n", outcomes[i].variant.name().c_str(),
                 outcomes[i].variant.why.c_str());
  for (const std::string& l : left) std::fprintf(stderr, "scalea tune: not tried: %s\n", l.c_str());
  tuner.plan(1 + outcomes.size() * size_t(o.repeat));
  // Round by round, so that a drift of the machine's speed touches every variant alike.
  for (int rep = 1; rep <= o.repeat; ++rep)
    for (size_t i = 0; i < outcomes.size(); ++i)
      if (!tuner.run(i, rep, outcomes[i])) return 130;
  const size_t best = tune::choose_best(outcomes);
  std::printf("scalea tune: %s (%d repetition%s each, times from the experiments)\n",
              join_words(o.command).c_str(), o.repeat, o.repeat == 1 ? "" : "s");
  print_table(outcomes, best);
  std::printf("\n%s\n", verdict(o, tuner, outcomes, best).c_str());
  if (std::string shared = shared_cpus_note(outcomes); !shared.empty())
    std::printf("%s\n", shared.c_str());
  for (const std::string& l : left) std::printf("not tried: %s\n", l.c_str());
  std::printf("details: %s/tune.json; each run's report: scalea report %s/runs/vN-repK\n",
              dir.c_str(), dir.c_str());
  std::fflush(stdout);
  save(o, dir, tuner, outcomes, best, left);
  if (o.store.enabled()) store(o, dir, tuner.runs(), outcomes);
  return 0;
}

}  // namespace

void add_tune(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Try settings that cannot change the results and keep the fastest (no rebuild)");
  cmd->footer(
      "Examples:\n"
      "  scalea tune -- ./md 4096                      what the knowledge base suggests, 3 runs "
      "each\n"
      "  scalea tune --expect 'energy -12\\.34' -- ./md 4096     and the output must say this\n"
      "  scalea tune --check 'diff -q $SCALEA_TUNE_BASELINE_OUTPUT $SCALEA_TUNE_OUTPUT' -- ./md\n"
      "  scalea tune --try 'OMP_SCHEDULE=guided,8' --try 'KMP_BLOCKTIME=0' -- ./md   yours too\n"
      "  OMP_NUM_THREADS=2 scalea tune --ranks 2 -- ./hybrid   also 4 x 1 and 1 x 4 (mpirun)\n\n"
      "scalea tune runs the program once as you run it (the baseline), reads that run's\n"
      "analysis, and chooses settings from it that cannot change the program's results:\n"
      "OMP_SCHEDULE for loops written schedule(runtime) that wait, OMP_WAIT_POLICY when\n"
      "threads wait much or share CPUs, OMP_PROC_BIND/OMP_PLACES when threads fit the CPUs and\n"
      "time goes to data movement; with --ranks also other ranks x threads of the same PEs (a\n"
      "new decomposition: check the output), and mpirun --bind-to none or --map-by slot:PE=T\n"
      "when mpirun bound a rank's threads to fewer CPUs than them. It then runs the baseline\n"
      "and every variant\n"
      "--repeat times, round by round, each under `scalea run`. A run that fails, or whose\n"
      "output does not match --expect or pass --check (a shell command; SCALEA_TUNE_OUTPUT and\n"
      "SCALEA_TUNE_BASELINE_OUTPUT name the two outputs), counts against its variant, which is\n"
      "then never chosen. A variant is chosen when its slowest run beats the baseline's fastest.\n"
      "Settings in your environment are kept: a rule never overrides one you set.\n"
      "Exit status: 0 done (whether or not a variant won), 1 the baseline failed, 2 bad input,\n"
      "130 interrupted (docs/tuning.md).");
  cmd->add_option("-o,--output", o->output,
                  "Directory for the runs and tune.json (default scalea-tune-PROGRAM-DATE)");
  cmd->add_option("-r,--repeat", o->repeat, "Runs of each variant and of the baseline (default 3)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--try", o->tries,
                  "A variant of yours: 'NAME=VALUE [NAME=VALUE...]' (repeatable)");
  cmd->add_flag("--only-try", o->only_tries, "Try only the --try variants, not the rules'");
  cmd->add_option("--expect", o->expect,
                  "A regular expression every run's standard output must contain");
  cmd->add_option("--check", o->check,
                  "A shell command that must succeed after every run (its output checked)");
  cmd->add_option("--timeout", o->timeout, "Kill a run after this many seconds (it fails)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-n,--ranks", o->ranks,
                  "MPI ranks of the baseline: every run goes through the launcher, the rule "
                  "'split' tries the same PEs as other ranks x threads, and 'place' frees ranks "
                  "mpirun bound to fewer CPUs than their threads")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--launcher", o->launcher,
                  "Launcher template with --ranks (default 'mpirun -np {ranks}'; {threads}, {p})");
  cmd->add_option("command", o->command, "Program and its arguments (after --)");
  db::add_store_options(cmd, o->store, "every run, tagged tune= and tune-variant=");
  cmd->callback([o] {
    refuse_under_launcher("this command");
    int rc = run_tune(*o);
    if (rc != 0) {
      std::fflush(stderr);
      std::exit(rc);
    }
  });
}

}  // namespace scalea::cli
