// What `scalea --help` and `scalea --version` say about this copy of scalea: where its
// documentation is, and what its build found.
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "scalea_build_info.hpp"  // generated (cmake/install_kit.cmake): kBuildFound
#include "scalea_commit.hpp"      // generated at every build (cmake/commit_info.cmake): kCommit

namespace scalea::cli {
namespace {

bool docs_file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The help of every command: CLI11's, with each "docs/" naming the documentation of this scalea.
class DocsFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    return with_docs_dir(CLI::Formatter::make_help(app, std::move(name), mode));
  }
};

}  // namespace

std::string docs_dir() {
  // Installed (cmake --install): PREFIX/share/doc/scalea beside PREFIX/bin/scalea, wherever the
  // prefix was moved; in a build tree: the source tree's docs/.
  for (std::string dir :
       {self_dir() + "/" + SCALEA_BINDIR_TO_DOCDIR, std::string(SCALEA_SOURCE_DOCS)}) {
    char real[PATH_MAX];
    if (docs_file_exists(dir + "/user-guide.md") && realpath(dir.c_str(), real)) return real;
  }
  return "";
}

std::string with_docs_dir(std::string text) {
  std::string dir = docs_dir();
  if (dir.empty()) return text;
  std::string out;
  for (size_t at = 0;;) {
    size_t hit = text.find("docs/", at);
    if (hit == std::string::npos) return out + text.substr(at);
    out += text.substr(at, hit - at) + dir + "/";
    at = hit + 5;
  }
}

void set_help_and_version(CLI::App& app) {
  app.formatter(std::make_shared<DocsFormatter>());
  app.set_version_flag("--version", [] {
    return std::string("scalea ") + SCALEA_VERSION + "\ncommit: " + kCommit + "\n" + kBuildFound +
           "documentation: " + (docs_dir().empty() ? "not found" : docs_dir()) + "\n";
  });
}

}  // namespace scalea::cli
