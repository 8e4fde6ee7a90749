#include "graphviz.hpp"

#include <fcntl.h>
#include <signal.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

extern char** environ;

namespace scalea::cli {

std::optional<std::string> dot_to_svg(const std::string& dot, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<std::string> {
    if (why) *why = w;
    return std::nullopt;
  };
  const char* tmp = std::getenv("TMPDIR");
  std::string in_path = std::string(tmp && *tmp ? tmp : "/tmp") + "/scalea-dot-XXXXXX";
  std::vector<char> in_buf(in_path.begin(), in_path.end());
  in_buf.push_back(0);
  char* in_name = in_buf.data();
  int fd = mkstemp(in_name);
  if (fd < 0) return fail(std::string("cannot create a temporary file: ") + std::strerror(errno));
  bool ok = ::write(fd, dot.data(), dot.size()) == ssize_t(dot.size());
  ::close(fd);
  std::string out_name = std::string(in_name) + ".svg";
  if (!ok) {
    ::unlink(in_name);
    return fail("cannot write a temporary file");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  std::string o_arg = "-o" + out_name;
  const char* argv[] = {"dot", "-Tsvg", o_arg.c_str(), in_name, nullptr};
  pid_t pid;
  int rc = posix_spawnp(&pid, "dot", &fa, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  bool late = false;
  if (rc == 0) {
    // dot's layout grows faster than linearly with the graph: bounded, it cannot hang a report.
    for (int waited_ms = 0; waitpid(pid, &status, WNOHANG) == 0; waited_ms += 20) {
      if (waited_ms >= kDotTimeLimitS * 1000) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        late = true;
        break;
      }
      usleep(20000);
    }
  }
  ::unlink(in_name);
  if (rc != 0) return fail("Graphviz `dot` is not installed");
  if (late) {
    ::unlink(out_name.c_str());
    return fail(fmt::format("Graphviz `dot` took more than {} s", kDotTimeLimitS));
  }
  std::ifstream f(out_name);
  std::stringstream ss;
  ss << f.rdbuf();
  ::unlink(out_name.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !f)
    return fail("Graphviz `dot -Tsvg` failed");
  std::string svg = ss.str();
  size_t start = svg.find("<svg");
  if (start == std::string::npos) return fail("Graphviz `dot -Tsvg` wrote no SVG");
  return svg.substr(start);
}

}  // namespace scalea::cli
