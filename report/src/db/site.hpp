// The database's browsable site (`scalea db html OUT`, docs/database.md): one self-contained
// page, OUT/index.html (inline data, CSS and script: report/assets/database.js; no network), with
// the experiments by tag and date, a region's class history as charts, and two runs compared.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "database.hpp"

namespace scalea::cli::db {

// What the site shows: the experiments `where` selects (" WHERE ..." over `experiments e`, as
// `scalea db list --program/--tag` selects them; "" for all) and their regions' values.
struct SiteOptions {
  std::string where;
  std::vector<Value> params;
};

// The data the page draws: {"schema": "scalea-db-site/1", "database", "classes", "experiments":
// [{id, started, epoch, program, arguments, p, threads, ranks, host, git, dirty, reference, path,
// duration, tags: {k: v}}], "tags": [keys], "regions": [{id, parent, depth, path, kind, label,
// loc}], "stats": {"<experiment id>": [[region id, in_run, t_p, t_o, six classes], ...]}}.
// Throws DbError when no experiment is selected (none stored, or none matches).
nlohmann::json site_data(Database& d, const SiteOptions& o);

// Writes OUT/index.html (OUT is made when missing; an existing index.html is replaced whole) and
// returns its path. Throws UserError naming OUT when it cannot be written.
std::string write_site(Database& d, const SiteOptions& o, const std::string& out);

}  // namespace scalea::cli::db
