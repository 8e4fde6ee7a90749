// What CLI11's own messages get wrong about a command line, said before it parses: a word that is
// no command ("scalea rep", CLI11: "A subcommand is required"), a mistyped option of a command that
// runs a program (CLI11 blames the program: "--outptu E -- /bin/true": "/bin/true was not
// expected") and a program's arguments given without -- (CLI11 takes them for scalea's own).
#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace scalea::cli {

namespace {

// Edits (insert, delete, replace, swap two neighbours) from a to b: Damerau-Levenshtein, the
// optimal string alignment form.
size_t edits(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The option of `cmd` that `word` (starting with '-') names, and the value given in the word
// itself ("--out=E", "-oE"), if any.
const CLI::Option* find_option(const CLI::App* cmd, const std::string& word, bool& value_attached) {
  std::string name = word;
  value_attached = false;
  if (word.rfind("--", 0) == 0) {
    size_t eq = word.find('=');
    value_attached = eq != std::string::npos;
    name = word.substr(0, eq);
  } else if (word.size() > 2) {
    name = word.substr(0, 2);
    value_attached = true;  // -oE; for a flag, -qv: more flags (not checked one by one)
  }
  return cmd->get_option_no_throw(name);
}

// Skips the values of option `opt` after args[i] as CLI11 would take them; returns the index of
// the last word they use.
size_t skip_values(const CLI::Option* opt, const std::vector<std::string>& args, size_t i,
                   bool value_attached) {
  if (opt->get_type_size_max() == 0) return i;  // a flag
  auto plain = [&](size_t k) { return k < args.size() && args[k] != "--" && args[k][0] != '-'; };
  if (!value_attached && opt->get_expected_min() > 0 && i + 1 < args.size()) ++i;
  else if (!value_attached && opt->get_expected_min() == 0 && plain(i + 1)) ++i;
  if (opt->get_allow_extra_args() && opt->get_items_expected_max() > 1)
    while (plain(i + 1)) ++i;
  return i;
}

// "--output" for "--outptu", or "": the long names of cmd's options.
std::string closest_option(const CLI::App* cmd, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd->get_options())
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  std::string name = word.substr(0, word.find('='));
  return closest_word(name, names);
}

std::string join_words(const std::vector<std::string>& words, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to && i < words.size(); ++i) s += (s.empty() ? "" : " ") + words[i];
  return s;
}

// A command that runs a program (`command`, after --): its words are checked in order. An
// unknown option before the program is named; a program given without -- followed by words that
// look like options (its own, or scalea's) must go after --.
std::string check_program_words(const CLI::App* cmd, const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return "";
    if (a.size() > 1 && a[0] == '-') {
      bool attached = false;
      const CLI::Option* opt = find_option(cmd, a, attached);
      if (!opt) {
        std::string near = closest_option(cmd, a);
        return "unknown option " + a.substr(0, a.find('=')) +
               (near.empty() ? "" : " (did you mean " + near + "?)");
      }
      i = skip_values(opt, args, i, attached);
      continue;
    }
    // The program, without --: fine alone or with plain words ("scalea run ./md 4096").
    for (size_t k = i + 1; k < args.size() && args[k] != "--"; ++k)
      if (args[k].size() > 1 && args[k][0] == '-')
        return "put the program and its arguments after --: scalea " + cmd->get_name() + " " +
               join_words(args, 0, i) + (i ? " " : "") + "-- " + join_words(args, i, args.size());
    return "";
  }
  return "";
}

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

const CLI::App* find_command(const CLI::App& app, const std::string& name) {
  for (const CLI::App* s : commands_of(app))
    if (s->check_name(name)) return s;
  return nullptr;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : commands_of(app)) names.push_back(s->get_name());
  return names;
}

}  // namespace

std::string closest_word(const std::string& word, const std::vector<std::string>& candidates) {
  // A unique prefix first ("rep" for "report"), else the nearest within two edits (and fewer
  // than the word's length: "xy" is not a typo of "db").
  std::string prefixed;
  int prefixes = 0;
  for (const std::string& c : candidates)
    if (!word.empty() && c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
      prefixed = c;
      ++prefixes;
    }
  if (prefixes == 1) return prefixed;
  std::string best;
  size_t best_edits = 3;
  for (const std::string& c : candidates) {
    size_t e = edits(word, c);
    if (e < best_edits && e < word.size()) {
      best = c;
      best_edits = e;
    }
  }
  return best;
}

std::optional<ArgumentProblem> check_arguments(const CLI::App& app,
                                               const std::vector<std::string>& args) {
  if (args.empty() || args[0].empty() || args[0][0] == '-') return std::nullopt;
  const CLI::App* cmd = find_command(app, args[0]);
  if (!cmd) {
    std::vector<std::string> names = command_names(app);
    std::string near = closest_word(args[0], names);
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return ArgumentProblem{"", "unknown command '" + args[0] + "'" +
                                   (near.empty() ? "" : " (did you mean " + near + "?)") +
                                   "; the commands: " + list};
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  // db add, db list, ...: the first word after db.
  if (!commands_of(*cmd).empty() && !rest.empty() && !rest[0].empty() && rest[0][0] != '-' &&
      !find_command(*cmd, rest[0])) {
    std::string near = closest_word(rest[0], command_names(*cmd));
    return ArgumentProblem{cmd->get_name(),
                           "unknown command '" + rest[0] + "'" +
                               (near.empty() ? "" : " (did you mean " + near + "?)")};
  }
  const CLI::Option* program = cmd->get_option_no_throw("command");
  if (program && program->get_positional()) {
    std::string why = check_program_words(cmd, rest);
    if (!why.empty()) return ArgumentProblem{cmd->get_name(), why};
  }
  return std::nullopt;
}

}  // namespace scalea::cli
