// scalea settings: every SCALEA_* setting with its default, the values it takes and its meaning,
// as `scorep-info config-vars` lists Score-P's. Printed from the settings table the tool parses
// with (collect/core/config.cpp), so the list is the tool's own.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "core/config.hpp"
#include "output/docs.hpp"

namespace scalea::cli {
namespace {

using collect::Setting;
using collect::SettingReader;

struct SettingsOptions {
  std::vector<std::string> keys;  // only these (a key, or its part after SCALEA_)
  bool markdown = false;
};

// The docs' table cells are markdown: shown without the code marks.
std::string plain(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '`') out += c;
  return out;
}

const char* reader_text(SettingReader r) {
  switch (r) {
    case SettingReader::Tool: return "the tool, in the measured program";
    case SettingReader::Command: return "the scalea command";
    case SettingReader::MpiLayer: return "the MPI layer, at MPI_Init (docs/mpi.md)";
    case SettingReader::Internal: return "set by scalea run for the tool";
  }
  return "";
}

bool wanted(const Setting& s, const std::vector<std::string>& keys) {
  if (keys.empty()) return s.reader != SettingReader::Internal;
  for (const std::string& k : keys)
    if (k == s.key || "SCALEA_" + k == s.key) return true;
  return false;
}

void print_setting(const Setting& s, bool markdown) {
  if (markdown) {
    std::printf("| `%s` | %s | %s | %s |\n", s.key, s.shown_default, s.valid, s.doc);
    return;
  }
  // Read on a terminal, as --help is: its docs/ name this scalea's documentation (the
  // markdown above is the user guide's table and keeps them).
  const char* now = std::getenv(s.key);
  std::printf("%s\n  default:  %s\n  values:   %s\n  read by:  %s\n  meaning:  %s\n", s.key,
              *s.shown_default ? plain(s.shown_default).c_str() : "(none)", s.valid,
              with_docs_dir(reader_text(s.reader)).c_str(), with_docs_dir(plain(s.doc)).c_str());
  if (now) std::printf("  set now:  %s\n", now);
  std::printf("\n");
}

void run_settings(const SettingsOptions& o) {
  std::vector<std::string> unknown = o.keys;
  if (o.markdown) std::printf("| variable | default | values | meaning |\n|---|---|---|---|\n");
  for (const Setting& s : collect::settings()) {
    if (!wanted(s, o.keys)) continue;
    print_setting(s, o.markdown);
    for (size_t i = unknown.size(); i-- > 0;)
      if (unknown[i] == s.key || "SCALEA_" + unknown[i] == s.key)
        unknown.erase(unknown.begin() + long(i));
  }
  if (unknown.empty()) return;
  std::vector<std::string> keys;
  for (const Setting& s : collect::settings()) keys.push_back(s.key);
  std::string key = unknown[0].rfind("SCALEA_", 0) == 0 ? unknown[0] : "SCALEA_" + unknown[0];
  std::string near = closest_word(key, keys);
  throw UserError("no setting " + key + (near.empty() ? "" : " (did you mean " + near + "?)"));
}

}  // namespace

void add_settings(CLI::App& app) {
  auto o = std::make_shared<SettingsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "settings", "List the SCALEA_* settings: default, valid values and meaning of each");
  cmd->footer(
      "Examples:\n"
      "  scalea settings                  every setting\n"
      "  scalea settings SNAPSHOT         one (SCALEA_ may be left out)\n"
      "  scalea settings --markdown       as a markdown table\n\n"
      "Settings are environment variables, read when the measured program starts (the tool's),\n"
      "by the scalea command, or by the MPI layer at MPI_Init; an invalid value is reported once\n"
      "and the default kept (docs/user-guide.md, \"Environment\").");
  cmd->add_option("setting", o->keys, "Settings to show (default: all)");
  cmd->add_flag("--markdown", o->markdown, "A markdown table (variable, default, values, meaning)");
  cmd->callback([o] { run_settings(*o); });
}

}  // namespace scalea::cli
