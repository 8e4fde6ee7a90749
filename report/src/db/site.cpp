// The database's site (`scalea db html`): the stored experiments, their tags, the regions they
// hold and each region's T_p, T_o and six classes per experiment, each experiment's hottest sampled
// functions, read with the SQL both backends speak and embedded in one page that
// report/assets/database.js draws.
#include "site.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "html/html.hpp"
#include "output/write.hpp"
#include "scalea/overheads/classes.hpp"

namespace scalea::cli::db {
namespace {

nlohmann::json cell(const Value& v) {
  if (is_null(v)) return nullptr;
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return as_text(v);
}

nlohmann::json experiments(Database& d, const SiteOptions& o, std::vector<Value>& ids) {
  Result r = d.query(
      "SELECT e.id, e.started, e.started_epoch, e.program, e.arguments, e.p, e.threads, e.ranks, "
      "e.host, e.git_commit, e.git_dirty, e.reference_id, e.path, e.duration FROM experiments e" +
          o.where + " ORDER BY e.started_epoch, e.id",
      o.params);
  const char* keys[] = {"id",    "started", "epoch", "program", "arguments", "p",    "threads",
                        "ranks", "host",    "git",   "dirty",   "reference", "path", "duration"};
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json e = nlohmann::json::object();
    for (size_t i = 0; i < row.size(); ++i) e[keys[i]] = cell(row[i]);
    e["tags"] = nlohmann::json::object();
    ids.push_back(row[0]);
    out.push_back(std::move(e));
  }
  return out;
}

// Each experiment's tags into its object; the tag keys that occur, sorted.
nlohmann::json add_tags(Database& d, const std::vector<Value>& ids, nlohmann::json& exps) {
  std::map<int64_t, size_t> at;
  for (size_t i = 0; i < exps.size(); ++i) at[exps[i]["id"].get<int64_t>()] = i;
  std::set<std::string> keys;
  for (const auto& row :
       select_in(d, "SELECT experiment_id, tag, value FROM tags", "experiment_id", ids).rows) {
    auto it = at.find(as_int(row[0]));
    if (it == at.end()) continue;
    exps[it->second]["tags"][as_text(row[1])] = as_text(row[2]);
    keys.insert(as_text(row[1]));
  }
  return keys;
}

// {"<experiment id>": [[region, in_run, t_p, t_o, classes...], ...]} and the regions they name.
nlohmann::json stats(Database& d, const std::vector<Value>& ids, std::vector<Value>& regions) {
  std::string cols = "s.experiment_id, s.region_id, s.in_run, s.t_p, s.t_o";
  for (std::string_view k : overheads::kClassKeys) cols += ", s." + std::string(k);
  nlohmann::json out = nlohmann::json::object();
  std::set<int64_t> seen;
  for (const auto& row :
       select_in(d, "SELECT " + cols + " FROM region_stats s", "s.experiment_id", ids).rows) {
    nlohmann::json v = nlohmann::json::array();
    for (size_t i = 1; i < row.size(); ++i) v.push_back(cell(row[i]));
    out[std::to_string(as_int(row[0]))].push_back(std::move(v));
    if (seen.insert(as_int(row[1])).second) regions.emplace_back(as_int(row[1]));
  }
  return out;
}

nlohmann::json regions(Database& d, const std::vector<Value>& ids) {
  nlohmann::json out = nlohmann::json::array();
  Result r = select_in(d, "SELECT id, parent_id, depth, path, kind, label, location FROM regions",
                       "id", ids);
  const char* keys[] = {"id", "parent", "depth", "path", "kind", "label", "loc"};
  for (const auto& row : r.rows) {
    nlohmann::json g = nlohmann::json::object();
    for (size_t i = 0; i < row.size(); ++i) g[keys[i]] = cell(row[i]);
    out.push_back(std::move(g));
  }
  return out;
}

// {"<experiment id>": [[function, module, samples, own, on_stack], ...]}: each experiment's
// hottest sampled functions added up over its regions (as `scalea db functions ID`), at most
// kSiteFunctions by own CPU time; experiments without samples have none.
constexpr size_t kSiteFunctions = 20;
nlohmann::json functions(Database& d, const std::vector<Value>& ids) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& row : select_in(d,
                                   "SELECT experiment_id, function_name, module, SUM(samples), "
                                   "SUM(own), SUM(on_stack) FROM sampled_functions",
                                   "experiment_id", ids,
                                   " GROUP BY experiment_id, function_name, module ORDER BY "
                                   "experiment_id, SUM(own) DESC, function_name, module")
                             .rows) {
    nlohmann::json& list = out[std::to_string(as_int(row[0]))];
    if (list.size() == kSiteFunctions) continue;
    nlohmann::json v = nlohmann::json::array();
    for (size_t i = 1; i < row.size(); ++i) v.push_back(cell(row[i]));
    list.push_back(std::move(v));
  }
  return out;
}

}  // namespace

nlohmann::json site_data(Database& d, const SiteOptions& o) {
  std::vector<Value> ids, region_ids;
  nlohmann::json data;
  data["schema"] = "scalea-db-site/1";
  data["database"] = d.name();
  data["classes"] = html::classes_json();
  data["experiments"] = experiments(d, o, ids);
  if (ids.empty())
    throw DbError(o.where.empty()
                      ? d.name() + " holds no experiments (scalea db add stores some)"
                      : "no experiment in " + d.name() + " matches --program and --tag");
  data["tags"] = add_tags(d, ids, data["experiments"]);
  data["stats"] = stats(d, ids, region_ids);
  data["regions"] = regions(d, region_ids);
  data["functions"] = functions(d, ids);
  return data;
}

std::string write_site(Database& d, const SiteOptions& o, const std::string& out) {
  const nlohmann::json data = site_data(d, o);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out))
    throw UserError("cannot write the site into " + out + ": " +
                    (ec ? ec.message() : std::string("not a directory")));
  const std::string index = (std::filesystem::path(out) / "index.html").string();
  write_output(index, html::page("scalea: " + d.name(), data, "", html::Script::Database));
  return index;
}

}  // namespace scalea::cli::db
