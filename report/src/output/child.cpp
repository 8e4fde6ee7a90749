// Programs a command starts and waits for (child.hpp).
#include "child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "errors.hpp"

namespace scalea::cli {
namespace {
using Clock = std::chrono::steady_clock;
volatile sig_atomic_t g_interrupted = 0;
extern "C" void on_signal(int sig) { g_interrupted = sig; }
}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int interrupted() { return g_interrupted; }

std::string absolute(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char buf[PATH_MAX];
  if (!getcwd(buf, sizeof buf))
    throw UserError(std::string("cannot read the current directory: ") + std::strerror(errno));
  return std::string(buf) + "/" + p;
}

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw UserError("cannot find the scalea binary (/proc/self/exe)");
  buf[n] = 0;
  return buf;
}

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string join_words(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& w : v) {
    bool plain = !w.empty() && w.find_first_of(" \t\"'\\$`") == std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? w : "'" + w + "'");
  }
  return s;
}

std::string join_numbers(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string clock_text(double s) {
  if (!(s >= 0) || s > 1e7) return "?";
  long t = std::lround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

std::string duration_text(double s) {
  if (s >= 0 && s < 59.95) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
  }
  return clock_text(s);
}

std::vector<std::string> tail_lines(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  if (!in) return lines;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = size > 8192 ? size - 8192 : 0;
  in.seekg(from);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string line;
  std::istringstream ss(text);
  bool first = from > 0;
  while (std::getline(ss, line)) {
    if (first) {  // partial line
      first = false;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > 200) line = line.substr(0, 197) + "...";
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - long(n));
  return lines;
}

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& cwd, const std::string& out_log,
                      const std::string& err_log, double timeout_s,
                      const std::function<void(double)>& tick) {
  ChildResult res;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a timeout or ^C stops the whole run (launcher and ranks) at once.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    res.exit_code = 127;
    res.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return res;
  }
  auto start = Clock::now();
  auto last_tick = start;
  Clock::time_point kill_at{};
  bool term_sent = false, kill_sent = false;
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      status = 0;
      break;
    }
    auto now = Clock::now();
    double el = std::chrono::duration<double>(now - start).count();
    if (!term_sent && (g_interrupted || (timeout_s > 0 && el > timeout_s))) {
      if (g_interrupted) res.interrupted = true;
      else res.timed_out = true;
      kill(-pid, g_interrupted ? SIGINT : SIGTERM);
      term_sent = true;
      kill_at = now + std::chrono::seconds(5);
    } else if (term_sent && !kill_sent && now > kill_at) {
      kill(-pid, SIGKILL);
      kill_sent = true;
    }
    if (now - last_tick > std::chrono::milliseconds(500)) {
      tick(el);
      last_tick = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Stragglers of the run's process group (ranks a launcher left behind) go with it.
  kill(-pid, SIGKILL);
  if (WIFSIGNALED(status)) res.exit_code = 128 + WTERMSIG(status);
  else res.exit_code = WEXITSTATUS(status);
  return res;
}

std::string stamped_name(const std::string& kind, const std::string& program) {
  char stamp[32];
  time_t t = time(nullptr);
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return "scalea-" + (kind.empty() ? "" : kind + "-") + program.substr(program.rfind('/') + 1) +
         "-" + stamp;
}

std::string child_failure(const ChildResult& cr, double timeout_s) {
  if (!cr.error.empty()) return cr.error;
  if (cr.timed_out) return "timed out after " + duration_text(timeout_s) + " (killed)";
  if (cr.exit_code == 0) return "";
  return cr.exit_code > 128 ? "killed by signal " + std::to_string(cr.exit_code - 128) + " (" +
                                  strsignal(cr.exit_code - 128) + ")"
                            : "exit status " + std::to_string(cr.exit_code);
}

}  // namespace scalea::cli
