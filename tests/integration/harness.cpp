#include "harness.hpp"

#include <gtest/gtest-spi.h>

#include "../temp_dir.hpp"
#include "scalea/overheads/classify.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

extern char** environ;

namespace scalea::test {

namespace fs = std::filesystem;

namespace {

// The runs' directories of this process: removed at exit when every test passed, kept for
// inspection otherwise (said on stderr, where ctest keeps it), or always with SCALEA_TEST_KEEP=1.
struct TempDirs {
  std::mutex mu;
  std::vector<TempDir> dirs;
  ~TempDirs() {
    const char* keep = std::getenv("SCALEA_TEST_KEEP");
    const ::testing::UnitTest* u = ::testing::UnitTest::GetInstance();
    if (!(keep && *keep && std::strcmp(keep, "0") != 0) && !(u && !u->Passed())) return;
    for (TempDir& d : dirs) {
      d.keep();
      std::fprintf(stderr, "scalea tests: kept the run directory %s\n", d.path().c_str());
    }
  }
};
TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}

std::string make_workdir() {
  std::lock_guard<std::mutex> lock(temp_dirs().mu);
  return temp_dirs().dirs.emplace_back("scalea-it").path();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void set_env(std::vector<std::string>& env, const std::string& key, const std::string& value) {
  for (std::string& e : env)
    if (e.compare(0, key.size() + 1, key + "=") == 0) {
      e = key + "=" + value;
      return;
    }
  env.push_back(key + "=" + value);
}

// The processes below `root` (children, their children, ...), from /proc: a run under mpirun
// is mpirun, `scalea run` per rank and the ranks, which mpirun may put in groups of their own.
std::vector<pid_t> descendants(pid_t root) {
  std::vector<std::pair<pid_t, pid_t>> parent_of;  // (pid, ppid)
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = read_file(e.path().string() + "/stat");
    size_t close = stat.rfind(')');  // the command name may hold blanks and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    if (rest >> state >> ppid) parent_of.emplace_back(pid_t(std::stoi(name)), ppid);
  }
  std::vector<pid_t> out{root};
  for (size_t i = 0; i < out.size(); ++i)
    for (const auto& [pid, ppid] : parent_of)
      if (ppid == out[i]) out.push_back(pid);
  return out;
}

// What each process of a run that timed out was doing: its command, state and kernel wait
// channel, and its threads' stacks when gdb is installed (each attach bounded). The report of a
// hang that happens once in a hundred CI runs is all there will be to go on.
std::string hang_report(const std::vector<pid_t>& pids) {
  std::ostringstream o;
  const bool gdb = ::access("/usr/bin/gdb", X_OK) == 0;
  for (pid_t pid : pids) {
    const std::string dir = "/proc/" + std::to_string(pid);
    std::string cmd = read_file(dir + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    std::string state;
    std::istringstream status(read_file(dir + "/status"));
    for (std::string line; std::getline(status, line);)
      if (line.rfind("State:", 0) == 0) state = line.substr(6);
    o << "pid " << pid << " [" << state << " ] wchan " << read_file(dir + "/wchan") << ": "
      << cmd.substr(0, 300) << "\n";
    if (!gdb) continue;
    std::string gdb_cmd = "timeout -s KILL 20 /usr/bin/gdb -nx -batch -p " + std::to_string(pid) +
                          " -ex 'thread apply all bt 25' 2>/dev/null";
    if (FILE* f = ::popen(gdb_cmd.c_str(), "r")) {
      char line[512];
      while (std::fgets(line, sizeof line, f))
        if (line[0] == '#' || std::strncmp(line, "Thread ", 7) == 0) o << "    " << line;
      ::pclose(f);
    }
  }
  return o.str();
}

Run spawn(const std::vector<std::string>& argv_in, const Env& env_in, bool with_tool,
          double timeout_s) {
  Run r;
  r.workdir = make_workdir();
  r.experiment = r.workdir + "/exp";
  std::vector<std::string> args = argv_in;
  for (std::string& a : args) {
    size_t pos = a.find("{exp}");
    if (pos != std::string::npos) a.replace(pos, 5, r.experiment);
  }
  if (args.empty()) throw std::invalid_argument("run: empty argv");

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  if (with_tool) {
    set_env(env, "OMP_TOOL_LIBRARIES", SCALEA_TOOL_LIB);
    set_env(env, "SCALEA_OUTPUT", r.experiment);
  }
  for (const auto& kv : env_in) set_env(env, kv.first, kv.second);

  std::string out_path = r.workdir + "/stdout", err_path = r.workdir + "/stderr";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.err = "cannot start " + args[0] + ": " + std::strerror(rc);
    return r;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline && !r.timed_out) {
      r.timed_out = true;
      // Every process of the run, not only the one started: ranks left behind by a killed
      // mpirun would spin or wait on, and slow every later test.
      std::vector<pid_t> tree = descendants(pid);
      r.hang = hang_report(tree);
      for (pid_t p : tree) kill(p, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

}  // namespace

std::string Run::describe() const {
  std::ostringstream o;
  o << "exit status " << status << (timed_out ? " (timed out)" : "") << ", run directory "
    << workdir << "\n--- stderr ---\n" << err << "--- stdout ---\n" << out;
  if (!hang.empty()) o << "--- the run's processes at the timeout ---\n" << hang;
  return o.str();
}

Run run_with_tool(const std::vector<std::string>& argv, const Env& extra_env, double timeout_s) {
  return spawn(argv, extra_env, true, timeout_s);
}

Run run_scalea_cli(const std::vector<std::string>& args, const Env& extra_env, double timeout_s) {
  std::vector<std::string> argv{SCALEA_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return spawn(argv, extra_env, false, timeout_s);
}

std::string app(const std::string& name) { return std::string(SCALEA_APPS_DIR) + "/" + name; }

int line_of(const std::string& file, const std::string& marker) {
  std::ifstream in(std::string(SCALEA_SOURCE_DIR) + "/apps/omp/" + file);
  if (!in) {
    ADD_FAILURE() << "cannot read apps/omp/" << file;
    return 0;
  }
  std::string line, c1 = "/* " + marker + " */";
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(c1) != std::string::npos) return n;
    for (std::string c2 : {"// " + marker, "! " + marker}) {
      size_t p = line.find(c2);
      if (p != std::string::npos && line.size() == p + c2.size()) return n;
    }
  }
  ADD_FAILURE() << "marker " << marker << " not found in apps/omp/" << file;
  return 0;
}

std::string at(const std::string& file, const std::string& marker) {
  return file + ":" + std::to_string(line_of(file, marker));
}

double truth(const Run& run, const std::string& key, double nominal_s) {
  std::istringstream in(run.out);
  std::string line, prefix = "truth " + key + " ";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    double v = std::strtod(line.c_str() + prefix.size(), nullptr);
    if (nominal_s > 0) {
      // The program did what it plants: a sleep never ends early, and rarely very late.
      EXPECT_GE(v, 0.98 * nominal_s) << "truth " << key << " below its planted size";
      EXPECT_LE(v, 2.0 * nominal_s + 0.01) << "truth " << key << " far above its planted size";
    }
    return v;
  }
  ADD_FAILURE() << "the program printed no 'truth " << key << "' line:\n" << run.out;
  return -1;
}

double tolerance(double truth_s) { return std::max(0.1 * std::abs(truth_s), 0.002); }

void expect_times_near_sorted(std::vector<double> measured, std::vector<double> truth,
                              const std::string& what) {
  std::sort(measured.begin(), measured.end());
  std::sort(truth.begin(), truth.end());
  std::ostringstream lists;
  lists << what << ": measured";
  for (double v : measured) lists << " " << v;
  lists << " s; planted";
  for (double v : truth) lists << " " << v;
  lists << " s";
  ASSERT_EQ(measured.size(), truth.size()) << lists.str();
  for (size_t i = 0; i < truth.size(); ++i)
    EXPECT_NEAR(measured[i], truth[i], tolerance(truth[i])) << lists.str() << " (element " << i << ")";
}

void check_expected_runtime(const drg::Experiment& e) {
  const char* want = std::getenv("SCALEA_EXPECT_LIBOMP");
  if (!want || !*want) return;
  const auto& omp = e.meta.contains("openmp") ? e.meta["openmp"] : nlohmann::json();
  if (!omp.is_object() || !omp.contains("runtime_path")) return;  // no OpenMP in this program
  std::string path = omp["runtime_path"].get<std::string>();
  if (path.empty()) return;  // the program started no OpenMP runtime (e.g. the Fortran user-API app)
  char real[PATH_MAX];
  std::string resolved = realpath(path.c_str(), real) ? std::string(real) : path;
  std::string tag = std::string("llvm-") + want;
  EXPECT_TRUE(path.find(tag) != std::string::npos || resolved.find(tag) != std::string::npos)
      << "SCALEA_EXPECT_LIBOMP=" << want << " but the experiment ran with the OpenMP runtime "
      << path << " (" << resolved << ")";
}

// ---- Measured ----------------------------------------------------------------------------------

Measured::Measured(const Run& run) {
  if (run.status != 0) ADD_FAILURE() << "the program failed: " << run.describe();
  load(run.experiment);
}

Measured::Measured(const std::string& dir) { load(dir); }

void Measured::load(const std::string& dir) {
  exp_ = std::make_unique<drg::Experiment>();
  try {
    *exp_ = drg::load_experiment(dir);
  } catch (const std::exception& ex) {
    ADD_FAILURE() << "cannot load the experiment " << dir << ": " << ex.what();
    exp_->threads.clear();
  }
  tree_ = std::make_unique<drg::MergedTree>(*exp_);
  ok_ = !exp_->threads.empty();
  if (ok_) {
    EXPECT_TRUE(exp_->complete()) << dir << " is not complete";
    check_expected_runtime(*exp_);
    // Every experiment the suite produces: the six classes of each region sum to its T_o.
    auto bad = overheads::identity_violations(overheads::classify(*tree_, nullptr));
    EXPECT_TRUE(bad.empty()) << dir << ": " << bad.size() << " regions break T_o = sum of classes, e.g. "
                             << (bad.empty() ? "" : bad[0]);
  }
}

bool Measured::matches(uint32_t node, RegionKind kind, const std::string& where) const {
  if (node == 0 && !ok_) return false;
  const drg::Region& r = region(node);
  if (r.kind != kind) return false;
  if (where.empty()) return true;
  std::string loc = r.location();
  if (loc == where || r.label() == where || r.name == where) return true;
  size_t colon = loc.rfind(':');
  return colon != std::string::npos && loc.substr(0, colon) == where;
}

std::vector<uint32_t> Measured::find_all(RegionKind kind, const std::string& where) const {
  std::vector<uint32_t> out;
  if (!ok_) return out;
  for (uint32_t n : tree_->preorder())
    if (matches(n, kind, where)) out.push_back(n);
  return out;
}

uint32_t Measured::find(RegionKind kind, const std::string& where) const {
  std::vector<uint32_t> all = find_all(kind, where);
  if (all.size() != 1) {
    ADD_FAILURE() << "expected exactly one " << format::region_kind_name(kind) << " region '"
                  << where << "' in the merged tree, found " << all.size() << "\n" << dump();
    return kNone;
  }
  return all[0];
}

std::vector<uint32_t> Measured::children(uint32_t node, RegionKind kind,
                                         const std::string& where) const {
  std::vector<uint32_t> out;
  if (!ok_ || node == kNone) return out;
  for (uint32_t c : tree_->node(node).children)
    if (matches(c, kind, where)) out.push_back(c);
  return out;
}

uint32_t Measured::child(uint32_t node, RegionKind kind, const std::string& where) const {
  if (node == kNone) {
    ADD_FAILURE() << "no parent node to look for " << format::region_kind_name(kind) << " '" << where << "' in";
    return kNone;
  }
  std::vector<uint32_t> all = children(node, kind, where);
  if (all.size() != 1) {
    ADD_FAILURE() << "expected exactly one " << format::region_kind_name(kind) << " region '"
                  << where << "' directly below " << tree_->path(node) << ", found " << all.size()
                  << "\n" << dump();
    return kNone;
  }
  return all[0];
}

std::vector<uint32_t> Measured::descendants(uint32_t node, RegionKind kind) const {
  std::vector<uint32_t> out;
  if (!ok_ || node == kNone) return out;
  std::vector<uint32_t> stack(tree_->node(node).children.rbegin(), tree_->node(node).children.rend());
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    if (region(n).kind == kind) out.push_back(n);
    const auto& ch = tree_->node(n).children;
    stack.insert(stack.end(), ch.rbegin(), ch.rend());
  }
  return out;
}

int Measured::metric_index(const std::string& metric) const {
  int i = exp_->metric(metric);
  if (i < 0) ADD_FAILURE() << "the experiment has no metric " << metric;
  return i;
}

double Measured::scale(const std::string& m) const { return format::is_time_metric(m) ? 1e-9 : 1.0; }

double Measured::sum(uint32_t node, const std::string& metric) const {
  if (!ok_ || node == kNone) return -1;
  return tree_->sum(node, metric_index(metric)) * scale(metric);
}

double Measured::max(uint32_t node, const std::string& metric) const {
  if (!ok_ || node == kNone) return -1;
  return tree_->max(node, metric_index(metric)) * scale(metric);
}

std::vector<double> Measured::per_thread(uint32_t node, const std::string& metric) const {
  std::vector<double> out;
  if (!ok_ || node == kNone) return out;
  for (const auto& [thread, v] : tree_->per_thread(node, metric_index(metric)))
    out.push_back(v * scale(metric));
  return out;
}

std::vector<double> Measured::per_thread_sum(const std::vector<uint32_t>& nodes,
                                             const std::string& metric) const {
  std::vector<double> by_thread(exp_->threads.size(), 0.0);
  std::vector<bool> seen(exp_->threads.size(), false);
  for (uint32_t n : nodes) {
    if (n == kNone) continue;
    for (const auto& [thread, v] : tree_->per_thread(n, metric_index(metric))) {
      by_thread[thread] += v * scale(metric);
      seen[thread] = true;
    }
  }
  std::vector<double> out;
  for (size_t i = 0; i < by_thread.size(); ++i)
    if (seen[i]) out.push_back(by_thread[i]);
  return out;
}

std::string Measured::dump() const {
  if (!ok_) return "(no experiment)";
  if (dumped_) return "(merged tree printed above)";
  dumped_ = true;
  std::ostringstream o;
  o << "merged tree of " << exp_->path << ":\n";
  int visits = exp_->metric("visits"), time = exp_->metric("time"), wait = exp_->metric("wait");
  for (uint32_t n : tree_->preorder()) {
    const drg::Region& r = region(n);
    o << std::string(2 * tree_->node(n).depth, ' ') << r.label();
    if (!r.location().empty()) o << " @" << r.location();
    o << "  [" << format::region_kind_name(r.kind) << "] visits " << tree_->sum(n, visits)
      << " threads " << tree_->holders(n) << " time " << tree_->sum(n, time) * 1e-9
      << " s wait " << tree_->sum(n, wait) * 1e-9 << " s\n";
  }
  return o.str();
}

void SuiteSetup::run(const std::function<void()>& body) {
  testing::TestPartResultArray results;
  {
    testing::ScopedFakeTestPartResultReporter capture(
        testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &results);
    body();
  }
  for (int i = 0; i < results.size(); ++i) {
    const testing::TestPartResult& r = results.GetTestPartResult(i);
    if (!r.failed()) continue;
    failures_ += std::string(r.file_name() ? r.file_name() : "?") + ":" +
                 std::to_string(r.line_number()) + ": " + r.message() + "\n";
  }
}

void SuiteSetup::check() const {
  if (!failures_.empty()) FAIL() << "the suite's set-up failed:\n" << failures_;
}

}  // namespace scalea::test
