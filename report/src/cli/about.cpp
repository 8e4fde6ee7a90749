// What `scalea --help` and `scalea --version` say about this copy of scalea: where its
// documentation is, and what its build found.
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "output/docs.hpp"
#include "scalea_build_info.hpp"  // generated (cmake/install_kit.cmake): kBuildFound
#include "scalea_commit.hpp"      // generated at every build (cmake/commit_info.cmake): kCommit

namespace scalea::cli {
namespace {

// The help of every command: CLI11's, with each "docs/" naming the documentation of this scalea.
class DocsFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    return with_docs_dir(CLI::Formatter::make_help(app, std::move(name), mode));
  }
};

}  // namespace

void set_help_and_version(CLI::App& app) {
  app.formatter(std::make_shared<DocsFormatter>());
  app.set_version_flag("--version", [] {
    return std::string("scalea ") + SCALEA_VERSION + "\ncommit: " + kCommit + "\n" + kBuildFound +
           "documentation: " + (docs_dir().empty() ? "not found" : docs_dir()) + "\n";
  });
}

}  // namespace scalea::cli
