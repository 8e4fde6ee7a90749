// scalea run: starts a program under the tool, without a shell.
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "output/child.hpp"
#include "online/online.hpp"
#include "online/over_time.hpp"
#include "db/db.hpp"
#include "scalea/creatable.hpp"
#include "scalea/launcher.hpp"
#include "output/text.hpp"

extern char** environ;

namespace scalea::cli {

namespace {

// What `scalea run` needs to know about the program file.
struct ProgramImage {
  bool elf = false;
  bool dynamic = false;             // has a dynamic loader (PT_INTERP): LD_PRELOAD applies
  bool secure = false;              // set-user-ID/-group-ID for us: the loader ignores LD_PRELOAD
  std::vector<std::string> needed;  // the shared libraries it names directly (DT_NEEDED)
};

ProgramImage inspect_program(const std::string& path) {
  ProgramImage img;
  struct stat st;
  if (stat(path.c_str(), &st) == 0)
    img.secure = ((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
                 ((st.st_mode & S_ISGID) && st.st_gid != getgid());
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return img;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf && elf_kind(elf) == ELF_K_ELF) {
    img.elf = true;
    size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) == 0)
      for (size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, int(i), &ph) && ph.p_type == PT_INTERP) img.dynamic = true;
      }
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn))) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; ++i) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(data, int(i), &dyn) || dyn.d_tag != DT_NEEDED) continue;
        if (const char* s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)) img.needed.emplace_back(s);
      }
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return img;
}

void unset_env(std::vector<std::string>& env, const std::string& key) {
  env.erase(std::remove_if(
                env.begin(), env.end(),
                [&](const std::string& e) { return e.compare(0, key.size() + 1, key + "=") == 0; }),
            env.end());
}

void set_env(std::vector<std::string>& env, const std::string& key, const std::string& value) {
  for (std::string& e : env) {
    if (e.compare(0, key.size() + 1, key + "=") != 0) continue;
    e = key + "=" + value;
    return;
  }
  env.push_back(key + "=" + value);
}

// LLVM's libomp for programs built against GNU libgomp: SCALEA_LIBOMP when set, else a
// libomp.so.5 on LD_LIBRARY_PATH (so the runtime chosen there is the one measured), else the one
// found when scalea was built.
std::string libomp_to_preload() {
  if (const char* forced = getenv("SCALEA_LIBOMP")) {
    if (!is_executable_file(forced) && access(forced, R_OK) != 0)
      throw UserError(std::string("SCALEA_LIBOMP=") + forced + ": no such file");
    return forced;
  }
  if (const char* path = getenv("LD_LIBRARY_PATH")) {
    std::string dirs = path;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t colon = dirs.find(':', start);
      if (colon == std::string::npos) colon = dirs.size();
      std::string cand = dirs.substr(start, colon - start) + "/libomp.so.5";
      if (colon > start && access(cand.c_str(), R_OK) == 0) return cand;
      start = colon + 1;
    }
  }
  return SCALEA_LIBOMP_PATH;
}

// Signals scalea passes on to the program: how terminals, batch systems and launchers end a job
// or warn it (Slurm's --signal, PBS, mpirun all use some of these).
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

// Starts the program and waits for it, passing the forwarded signals on; returns its wait status.
// The signals are blocked before the spawn and taken with sigwaitinfo, so none is lost between
// the spawn and the wait; the program starts with the signal mask and dispositions scalea got.
// A signal scalea inherited as ignored (nohup, a background job's SIGINT) stays ignored, as it is
// for the program. A signal the terminal sent (^C, a hangup: si_code SI_KERNEL) went to the whole
// foreground process group, so the program, in scalea's group, already has it: it is not sent a
// second time, which would change what a program that counts its ^Cs does.
int spawn_and_wait(const std::string& program, char* const argv[], char* const envp[], pid_t& pid) {
  sigset_t forwarded, waited, original;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) {
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN)
      sigaddset(&forwarded, sig);
  }
  // An ignored SIGCHLD would have the kernel reap the program before scalea sees its status.
  struct sigaction child;
  if (sigaction(SIGCHLD, nullptr, &child) == 0 && child.sa_handler == SIG_IGN) {
    child.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &child, nullptr);
  }
  waited = forwarded;
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited, &original);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &original);
  posix_spawnattr_setsigdefault(&attr, &forwarded);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  int rc = posix_spawn(&pid, program.c_str(), nullptr, &attr, argv, envp);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    sigprocmask(SIG_SETMASK, &original, nullptr);
    throw UserError("cannot start " + program + ": " + std::strerror(rc));
  }
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR)
      throw UserError(std::string("cannot wait for the program: ") + std::strerror(errno));
    siginfo_t info;
    int sig = sigwaitinfo(&waited, &info);
    if (sig <= 0 || sig == SIGCHLD) continue;
    if (info.si_code == SI_KERNEL && getpgid(pid) == getpgrp()) continue;
    kill(pid, sig);
  }
  sigprocmask(SIG_SETMASK, &original, nullptr);
  return status;
}

struct RunOptions {
  std::string output;
  bool quiet = false;
  std::string counters;  // --counters LIST: SCALEA_COUNTERS (docs/counters.md)
  std::string snapshot;  // --snapshot DURATION: SCALEA_SNAPSHOT (docs/online.md)
  std::string sample;    // --sample RATE|off: SCALEA_SAMPLE (docs/sampling.md)
  bool light = false;    // --light: SCALEA_OPENMP=light (docs/user-guide.md, "Light mode")
  bool tune = false;     // --tune: SCALEA_TUNE=on (docs/tuning.md, "On-line tuning")
  std::vector<std::string> command;
  db::StoreOptions store;  // --db, --tag
};

// The experiment directory when --db needs to know it and -o was not given: the name the tool
// would choose, with scalea run's process id.
std::string default_output(const std::string& program) {
  return stamped_name("", program) + "-" + std::to_string(getpid());
}

// --db: stores the experiment the run wrote (under an MPI launcher, rank 0 alone, whose tool
// wrote it). Returns the exit status: the program's, or 2 when it succeeded but storing failed.
int store_experiment(const RunOptions& o, const std::string& dir, int status) {
  if (launcher_rank().value_or(-1) > 0) return status;
  struct stat st;
  std::string why;
  if (stat((dir + "/meta.json").c_str(), &st) != 0) {
    why = "the run wrote no experiment to " + dir + ": nothing stored";
  } else {
    try {
      db::store_into(o.store.db, {dir}, o.store.tags);
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  if (why.empty()) return status;
  std::fprintf(stderr, "scalea run: %s\n", why.c_str());
  return status != 0 ? status : 2;
}

// The tool creates the experiment `output` (the default name in the working directory when "")
// at the program's end, in the directory that holds it: one it cannot create there leaves a run
// of hours unmeasured. Asked now (scalea/creatable.hpp).
void check_output_creatable(const std::string& output) {
  std::string dir = output;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  size_t slash = dir.rfind('/');
  std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  std::string why = why_no_directory_in(parent, ".scalea-run-" + std::to_string(getpid()));
  if (why.empty()) return;
  if (output.empty())
    throw UserError("cannot create the experiment in the working directory (" + why +
                    "); choose where with -o DIR");
  throw UserError("cannot create the experiment " + output + " (" + why + "); choose another -o");
}

// The experiment the tool of process `pid` chose by itself (no -o): its default name,
// scalea-<program>-<date>-<time>-<pid>, in the working directory; with ".live" the live snapshots
// of one that was not written. "" when there is none.
std::string default_experiment_of(pid_t pid) {
  std::string tail = "-" + std::to_string(pid), live;
  DIR* d = opendir(".");
  if (!d) return "";
  std::string found;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("scalea-", 0) != 0) continue;
    if (name.size() > tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
      found = name;
    else if (name.size() > tail.size() + 5 &&
             name.compare(name.size() - tail.size() - 5, tail.size() + 5, tail + ".live") == 0)
      live = name.substr(0, name.size() - 5);
  }
  closedir(d);
  return found.empty() ? live : found;
}

// The program ended by a signal: said in one line, with what became of its experiment. The tool
// writes it on the signals it can catch; SIGKILL (the OOM killer, a batch system's hard limit)
// leaves none, and neither does a signal the tool had no handler for yet. With snapshots on, the
// last one is kept as an incomplete experiment (online::keep_last_snapshot): by rank 0 of an MPI
// job, which holds every rank's snapshots, or by scalea run alone.
void say_signal_end(const std::string& name, const std::string& output, pid_t pid, int sig) {
  const char* abbrev = sigabbrev_np(sig);
  std::string killed = "was killed by signal " + std::to_string(sig) +
                       (abbrev ? " (SIG" + std::string(abbrev) + ")" : "");
  std::string dir = output.empty() ? default_experiment_of(pid) : output;
  struct stat st;
  if (!dir.empty() && stat((dir + "/meta.json").c_str(), &st) == 0) {
    std::fprintf(stderr, "scalea run: %s %s; its experiment %s says so\n", name.c_str(),
                 killed.c_str(), dir.c_str());
    return;
  }
  if (launcher_rank().value_or(0) > 0) {  // rank 0 says what became of the job's experiment
    std::fprintf(stderr, "scalea run: %s %s\n", name.c_str(), killed.c_str());
    return;
  }
  if (!dir.empty()) {
    online::KeptSnapshot k = online::keep_last_snapshot(dir, "the program " + killed);
    if (k.kept) {
      std::fprintf(stderr,
                   "scalea run: %s %s before it wrote its experiment: its last snapshot, %.2f s "
                   "into the run, is kept as the incomplete experiment %s (scalea report %s)\n",
                   name.c_str(), killed.c_str(), k.at_s, k.dir.c_str(), k.dir.c_str());
      return;
    }
    if (!k.error.empty()) {
      std::fprintf(stderr,
                   "scalea run: %s %s: no experiment was written, and its last snapshot could "
                   "not be kept (%s)\n",
                   name.c_str(), killed.c_str(), k.error.c_str());
      return;
    }
  }
  bool live = !dir.empty() && stat((dir + ".live").c_str(), &st) == 0;
  std::fprintf(stderr, "scalea run: %s %s: no experiment was written (%s)\n", name.c_str(),
               killed.c_str(),
               live ? "it ended before its first snapshot"
                    : "with --snapshot 10s, scalea run keeps the last snapshot of a run that ends "
                      "so");
}

// The real path of a tool library next to the scalea binary (build/lib or the install's lib).
std::string tool_library(const std::string& name, const std::string& what) {
  std::string lib = own_library(name);
  char real[PATH_MAX];
  if (!realpath(lib.c_str(), real)) throw UserError("cannot find the " + what + " " + lib);
  return real;
}

std::string join_paths(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& p : v) s += (s.empty() ? "" : ":") + p;
  return s;
}

// Puts the tool into the program's environment: preloaded with the program where the loader
// allows it (and the PMPI layer for MPI programs, libomp for GNU OpenMP ones), or said why not.
void preload_tool(std::vector<std::string>& env, const std::string& program,
                  const std::string& tool, const std::string& name) {
  ProgramImage img = inspect_program(program);
  bool gomp = false, mpi = false, links_tool = false;
  for (const std::string& n : img.needed) {
    gomp = gomp || n.rfind("libgomp.so", 0) == 0;
    // libmpi.so (C), libmpi_mpifh.so / libmpi_usempi* (Fortran), libmpich*, libmpicxx ...
    mpi = mpi || n.rfind("libmpi", 0) == 0;
    links_tool = links_tool || n == "libscalea-omp.so";
  }
  // The tool is preloaded so that it starts with the program: the program's start is measured,
  // not estimated, and -finstrument-functions hooks bind to the tool rather than to libc's empty
  // ones. MPI programs get the PMPI layer in front (it depends on libscalea-omp.so, preloaded too
  // so that it comes before libc): one recorder, started at load. The tool takes its libraries
  // out of LD_PRELOAD at start (SCALEA_RUN_PRELOAD names them), so the processes the program
  // starts do not load it at their start. Scripts are not preloaded (the interpreter and every
  // command it runs would be): their OpenMP programs load the tool through OMP_TOOL_LIBRARIES.
  std::vector<std::string> tool_preload;
  if (img.dynamic && !img.secure) {
    if (mpi) tool_preload.push_back(tool_library("libscalea-mpi.so", "MPI tool library"));
    if (!links_tool) tool_preload.push_back(tool);
  } else if (img.elf && !img.dynamic) {
    std::fprintf(stderr,
                 "scalea run: warning: %s is statically linked: no dynamic loader can load "
                 "the tool into it, so it runs unmeasured (link it dynamically to measure it)\n",
                 name.c_str());
  } else if (img.elf && img.secure) {  // (the kernel ignores set-user-ID on scripts)
    std::fprintf(stderr,
                 "scalea run: warning: %s is set-user-ID or set-group-ID: the loader ignores "
                 "LD_PRELOAD for it, so at best its OpenMP runtime loads the tool at the first "
                 "construct (program start estimated, -finstrument-functions not recorded)\n",
                 name.c_str());
  }
  // GNU OpenMP has no OMPT: LLVM's libomp implements the GOMP ABI and is preloaded in its place,
  // after the tool (whose ompt_start_tool libomp then finds first) and before libgomp.
  // After what LD_PRELOAD already holds: a sanitizer runtime must stay first, and an OMPT tool
  // preloaded there (a multiplexer such as the TSan stage's Archer mux) must be the one libomp
  // finds first; it starts scalea through OMP_TOOL_LIBRARIES. All of them still load before the
  // program's own libraries.
  std::vector<std::string> preload;
  for (const std::string& e : env)
    if (e.rfind("LD_PRELOAD=", 0) == 0 && e.size() > 11) preload.push_back(e.substr(11));
  preload.insert(preload.end(), tool_preload.begin(), tool_preload.end());
  if (gomp) preload.push_back(libomp_to_preload());
  if (!tool_preload.empty() || gomp) set_env(env, "LD_PRELOAD", join_paths(preload));
  if (!tool_preload.empty()) set_env(env, "SCALEA_RUN_PRELOAD", join_paths(tool_preload));
  else unset_env(env, "SCALEA_RUN_PRELOAD");
  // MPI programs: libomp finds the PMPI layer's dependency, the same libscalea-omp.so.
  if (mpi) set_env(env, "OMP_TOOL_LIBRARIES", tool_library("libscalea-mpi.so", "MPI tool library"));
}

int run(const RunOptions& o) {
  if (o.command.empty())
    throw UserError("no program given: scalea run [-o DIR] -- PROGRAM [ARGS...]");
  std::string program = find_program(o.command[0]);
  if (program.empty())
    throw UserError("program '" + o.command[0] + "' not found or not executable");
  // The launcher would start every rank under one experiment directory, each writing its own.
  std::string base = program.substr(program.rfind('/') + 1);
  for (const char* launcher : {"mpirun", "mpiexec", "orterun", "srun", "prterun"})
    if (base == launcher)
      throw UserError("scalea run goes inside the launcher, once per rank: " + base +
                      " [ARGS...] " + "scalea run [-o DIR] -- PROGRAM [ARGS...]");
  std::string tool = tool_library("libscalea-omp.so", "tool library");
  std::string output = o.output;
  if (o.store.enabled() && output.empty()) {
    if (launcher_rank())
      throw UserError(
          "--db under an MPI launcher needs -o DIR (every rank must name the same experiment)");
    output = default_output(o.command[0]);
  }
  if (!output.empty()) {
    struct stat st;
    if (lstat(output.c_str(), &st) == 0)
      throw UserError("output " + output +
                      " already exists; choose another -o (experiments are never overwritten)");
  }
  check_output_creatable(output);

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  set_env(env, "OMP_TOOL_LIBRARIES", tool);
  set_env(env, "SCALEA_RUN_BY_CLI", "1");
  if (!output.empty()) set_env(env, "SCALEA_OUTPUT", output);
  if (o.quiet) set_env(env, "SCALEA_QUIET", "1");
  if (!o.counters.empty()) set_env(env, "SCALEA_COUNTERS", o.counters);
  if (!o.snapshot.empty()) set_env(env, "SCALEA_SNAPSHOT", o.snapshot);
  if (!o.sample.empty()) set_env(env, "SCALEA_SAMPLE", o.sample);
  if (o.light) set_env(env, "SCALEA_OPENMP", "light");
  if (o.tune) set_env(env, "SCALEA_TUNE", "on");
  preload_tool(env, program, tool, o.command[0]);

  std::vector<char*> argv, envp;
  for (const std::string& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int status = spawn_and_wait(program, argv.data(), envp.data(), pid);
  int rc = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    rc = 128 + WTERMSIG(status);
    say_signal_end(o.command[0], output, pid, WTERMSIG(status));
  }
  return o.store.enabled() ? store_experiment(o, output, rc) : rc;
}

}  // namespace

void add_run(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a program under the scalea tool and write an experiment");
  cmd->footer(
      "Examples:\n"
      "  scalea run -- ./md 4096                  experiment named scalea-md-<date>-<pid>\n"
      "  scalea run -o md.p4 -- ./md 4096         choose the experiment directory\n"
      "  OMP_NUM_THREADS=4 scalea run -o md.p4 -- ./md\n"
      "  mpirun -np 4 scalea run -o halo.p4 -- ./halo\n"
      "  scalea run --snapshot 1s -o md.p4 -- ./md & scalea top md.p4   watch it live\n"
      "  scalea run --light -o sp.p2 -- ./sp.W    fewer events for a code of many tiny loops\n\n"
      "  scalea run -o md.p4 --db --tag commit=abc123 -- ./md   and store it in the database\n\n"
      "The program is started directly (no shell), with the tool library preloaded (LD_PRELOAD,\n"
      "in front of yours) so that the tool starts with it: the program's start is measured and\n"
      "-finstrument-functions hooks reach the tool. MPI programs get the PMPI layer preloaded\n"
      "too; programs built with gcc -fopenmp run with LLVM's libomp in place of libgomp. Static\n"
      "and set-user-ID programs cannot be preloaded (a warning says so); scripts are not (their\n"
      "OpenMP programs load the tool at the first construct, through OMP_TOOL_LIBRARIES).\n"
      "The exit status is the program's (128+N when signal N ended it). SIGTERM, SIGINT,\n"
      "SIGHUP, SIGUSR1 and SIGUSR2 sent to scalea are passed on to the program (a ^C at the "
      "terminal\n"
      "reaches it directly, once). Settings: SCALEA_* variables (docs/user-guide.md).");
  cmd->add_option("-o,--output", opts->output, "Experiment directory to create (must not exist)")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("must not be empty") : std::string();
      });
  cmd->add_flag("-q,--quiet", opts->quiet, "Do not print the summary line at exit");
  cmd->add_option("--counters", opts->counters,
                  "Counters to read per region and thread, e.g. perf::PAGE-FAULTS,PAPI_L1_DCM "
                  "(\"default\", \"none\"; docs/counters.md)");
  cmd->add_option("--snapshot", opts->snapshot,
                  "Publish the statistics every DURATION while the program runs (e.g. 1s, 100ms; "
                  "10 ms to 1 h), for scalea top and scalea report --over-time (docs/online.md)")
      ->check([](const std::string& v) {
        double s = 0;
        return parse_duration(v, s) && s >= 0.01 && s <= 3600
                   ? std::string()
                   : std::string("not a duration from 10ms to 1h (e.g. 1s, 100ms)");
      });
  cmd->add_option("--sample", opts->sample,
                  "Call-path sampling: RATE samples per second of each thread's CPU time (1 to "
                  "10000, default 250), or off; scalea report --view functions shows where the CPU "
                  "time went (docs/sampling.md)")
      ->check([](const std::string& v) {
        char* end = nullptr;
        double rate = std::strtod(v.c_str(), &end);
        return v == "off" || v == "on" || (end != v.c_str() && !*end && rate >= 1 && rate <= 10000)
                   ? std::string()
                   : std::string("not a rate from 1 to 10000 samples per second, or off");
      });
  cmd->add_flag("--tune", opts->tune,
                "On-line tuning: the tool tries loop schedules for the schedule(runtime) loops of "
                "each parallel region between its executions and keeps the fastest beyond the "
                "noise (SCALEA_TUNE=on; docs/tuning.md, \"On-line tuning\")");
  cmd->add_flag("--light", opts->light,
                "Light mode: record parallel regions, barriers and tasks only, not loops, single, "
                "locks, critical, flush (less cost on codes with many tiny constructs; "
                "docs/user-guide.md, \"Light mode\")");
  cmd->add_option("command", opts->command, "Program and its arguments (after --)")->required();
  db::add_store_options(cmd, opts->store, "the experiment (as scalea db add DIR)");
  cmd->callback([opts] {
    int rc = run(*opts);
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace scalea::cli
