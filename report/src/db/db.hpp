// `scalea db` as the other commands use it: `scalea run --db` and `scalea study --db` store
// what they produced as `scalea db add` would.
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace scalea::cli::db {

// Stores each of `inputs` (an experiment or a study directory) into the database `option`
// names ("" : SCALEA_DB or the default file), with the tags ("k=v"), and prints one line per
// experiment. Throws UserError (DbError, drg::LoadError) with a one-line message.
void store_into(const std::string& option, const std::vector<std::string>& inputs,
                const std::vector<std::string>& tags);

// The `--db [URL]` and `--tag k=v` options of `scalea run` and `scalea study`.
struct StoreOptions {
  CLI::Option* option = nullptr;
  std::string db;  // the value of --db ("" : SCALEA_DB or the default file)
  std::vector<std::string> tags;
  bool enabled() const { return option && option->count() > 0; }
};
// Adds them to `cmd`; `what` names what is stored ("the experiment", "every completed run").
void add_store_options(CLI::App* cmd, StoreOptions& o, const std::string& what);

}  // namespace scalea::cli::db
