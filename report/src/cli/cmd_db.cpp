// scalea db: the experiment database (docs/database.md). `add` stores experiments and studies
// with the analysis the reports compute (and their call-path samples); `list`, `query`,
// `history`, `functions` and `compare` read it; `html` writes a browsable site of it
// (db/site.cpp); `rm` removes experiments; `migrate` upgrades an older schema. SQLite by default,
// PostgreSQL for a postgresql:// URL: the same commands and SQL for both (report/src/db/).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "db/database.hpp"
#include "db/db.hpp"
#include "db/ingest.hpp"
#include "db/schema.hpp"
#include "db/site.hpp"
#include "formats/diff.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "analysis/meta.hpp"
#include "formats/report_json.hpp"
#include "study/study.hpp"
#include "study/study_data.hpp"
#include "output/text.hpp"
#include "scalea/overheads/classes.hpp"
#include "output/gnuplot.hpp"
#include "output/write.hpp"

namespace scalea::cli {
namespace {

using namespace db;
using overheads::kClassCount;
using overheads::kClassKeys;
using study::is_study;

struct DbOptions {
  std::string db;
  double wait = 60;
  std::string format = "text";
  // add
  std::vector<std::string> inputs, tags;
  std::string reference, machine;
  bool per_pe = false, quiet = false, force = false;
  std::vector<std::string> decomposition;  // --decomposition
  // list
  std::string program;
  bool studies = false;
  // query
  std::string sql;
  // history
  std::string region, cls, plot;
  // functions
  int64_t experiment = 0;
  size_t top = 20;
  bool lines = false;
  // compare
  int64_t a = 0, b = 0;
  double min_change = 0;
  // html
  std::string out;
  // rm
  std::vector<int64_t> ids;
  int64_t study = 0;
};

std::unique_ptr<Database> open_for(const DbOptions& o, Access access) {
  std::unique_ptr<Database> d = open_database(database_spec(o.db), access, o.wait);
  if (access == Access::Write) prepare_for_write(*d);
  else prepare_for_read(*d);
  return d;
}

// ---- printing results: text (aligned), csv, json ----

bool numeric(const Value& v) {
  return std::holds_alternative<int64_t>(v) || std::holds_alternative<double>(v);
}

std::string cell_text(const Value& v, bool exact) {
  if (auto* d = std::get_if<double>(&v))
    return exact ? fmt::format("{}", *d) : fmt::format("{:.6g}", *d);
  return as_text(v);
}

nlohmann::ordered_json cell_json(const Value& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  return nullptr;
}

void print_result(const Result& r, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : r.rows) {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (size_t c = 0; c < r.columns.size(); ++c) o[r.columns[c]] = cell_json(row[c]);
      rows.push_back(std::move(o));
    }
    std::cout << json_text(rows, 2) << "\n";
    return;
  }
  if (format == "csv") {
    for (size_t c = 0; c < r.columns.size(); ++c)
      std::cout << (c ? "," : "") << csv_field(r.columns[c]);
    std::cout << "\n";
    for (const auto& row : r.rows) {
      for (size_t c = 0; c < row.size(); ++c)
        std::cout << (c ? "," : "") << csv_field(cell_text(row[c], true));
      std::cout << "\n";
    }
    return;
  }
  std::vector<size_t> width(r.columns.size());
  std::vector<bool> right(r.columns.size(), false);
  for (size_t c = 0; c < r.columns.size(); ++c) width[c] = r.columns[c].size();
  for (const auto& row : r.rows)
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], cell_text(row[c], false).size());
      if (numeric(row[c])) right[c] = true;
    }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - std::min(width[c], cells[c].size()), ' ');
      out += (c ? "  " : "") +
             (right[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : ""));
    }
    std::cout << out << "\n";
  };
  line(r.columns);
  for (const auto& row : r.rows) {
    std::vector<std::string> cells;
    for (const Value& v : row) cells.push_back(cell_text(v, false));
    line(cells);
  }
  std::cout << "(" << r.rows.size() << (r.rows.size() == 1 ? " row)\n" : " rows)\n");
}

// ---- add ----

void run_add(const DbOptions& o) {
  AddOptions ao;
  for (const std::string& t : o.tags) ao.tags.push_back(parse_tag(t));
  ao.per_pe = o.per_pe;
  ao.machine = o.machine;
  ao.force = o.force;
  ao.decomposition = decomposition_args(o.decomposition);
  if (!o.reference.empty())
    for (const std::string& in : o.inputs)
      if (is_study(in))
        throw UserError(in +
                        " is a study: its runs are classified against the study's own reference "
                        "(leave out -r)");
  std::unique_ptr<Database> d = open_for(o, Access::Write);
  size_t stored = 0, unchanged = 0;
  for (const std::string& in : o.inputs) {
    std::vector<Added> added =
        is_study(in) ? add_study(*d, in, ao) : add_experiment(*d, in, o.reference, ao);
    for (const Added& a : added) {
      (a.what == "unchanged" ? unchanged : stored) += 1;
      if (o.quiet) continue;
      if (a.what == "unchanged")
        fmt::print("experiment {}: {} is stored already{}\n", a.id, a.path,
                   ao.tags.empty() ? "" : " (tags updated)");
      else fmt::print("experiment {}: {} {} ({} regions)\n", a.id, a.what, a.path, a.regions);
    }
  }
  if (!o.quiet)
    fmt::print("{} experiment{} stored, {} unchanged, in {}\n", stored, stored == 1 ? "" : "s",
               unchanged, d->name());
}

// ---- list ----

// "WHERE ..." selecting experiments by --program and --tag (each tag must match), and its
// parameters.
std::string experiment_filter(const DbOptions& o, std::vector<Value>& params,
                              const std::string& alias = "e") {
  std::vector<std::string> terms;
  if (!o.program.empty()) {
    terms.push_back(alias + ".program = ?");
    params.emplace_back(o.program);
  }
  for (const std::string& t : o.tags) {
    auto [k, v] = parse_tag(t);
    terms.push_back("EXISTS (SELECT 1 FROM tags t WHERE t.experiment_id = " + alias +
                    ".id AND t.tag = ? AND t.value = ?)");
    params.emplace_back(k);
    params.emplace_back(v);
  }
  std::string w;
  for (const std::string& t : terms) w += (w.empty() ? " WHERE " : " AND ") + t;
  return w;
}

// The tags of every experiment, as "k=v k=v".
std::map<int64_t, std::string> tag_text(Database& d) {
  std::map<int64_t, std::string> out;
  for (const auto& row :
       d.query("SELECT experiment_id, tag, value FROM tags ORDER BY experiment_id, tag").rows) {
    std::string& s = out[as_int(row[0])];
    s += (s.empty() ? "" : " ") + as_text(row[1]) + "=" + as_text(row[2]);
  }
  return out;
}

void run_list(const DbOptions& o) {
  std::unique_ptr<Database> d = open_for(o, Access::Read);
  if (o.studies) {
    Result r = d->query(
        "SELECT s.id, s.created, s.command, s.threads, s.ranks, s.repetitions, "
        "(SELECT count(*) FROM study_runs sr WHERE sr.study_id = s.id) AS experiments, "
        "s.reference_id AS reference, "
        "s.host, s.path FROM studies s ORDER BY s.id");
    print_result(r, o.format);
    return;
  }
  std::vector<Value> params;
  Result r = d->query(
      "SELECT e.id, e.started, e.program, e.arguments, e.p, e.threads, e.ranks, e.host, "
      "e.git_commit, "
      "e.git_dirty, e.reference_id AS reference, e.path FROM experiments e" +
          experiment_filter(o, params) + " ORDER BY e.started_epoch, e.id",
      params);
  std::map<int64_t, std::string> tags = tag_text(*d);
  // Shown as one column each: the commit (short, "+" when the checkout had changes) and the tags.
  Result out;
  out.columns = {"id",    "started", "program", "arguments", "p",    "threads",
                 "ranks", "host",    "git",     "reference", "tags", "path"};
  if (o.format != "text") out.columns[8] = "git_commit";
  for (const auto& row : r.rows) {
    std::string git = as_text(row[8]);
    if (o.format == "text" && git.size() > 10)
      git = git.substr(0, 10) + (as_int(row[9]) ? "+" : "");
    auto it = tags.find(as_int(row[0]));
    out.rows.push_back({row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7],
                        text_or_null(git), row[10],
                        it == tags.end() ? Value(std::string()) : Value(it->second), row[11]});
  }
  print_result(out, o.format);
}

// ---- html ----

void run_html(const DbOptions& o) {
  std::unique_ptr<Database> d = open_for(o, Access::Read);
  SiteOptions site;
  site.where = experiment_filter(o, site.params);
  std::string index = write_site(*d, site, o.out);
  if (!o.quiet) std::cerr << "scalea db: wrote " << index << "\n";
}

// ---- query ----

void run_query(const DbOptions& o) {
  std::unique_ptr<Database> d = open_for(o, Access::Read);
  print_result(d->query_read_only(o.sql), o.format);
}

// ---- history ----

// The regions --region names: the call path as printed (every region with that path), else the
// one path that contains the text.
std::pair<std::string, std::vector<int64_t>> find_region(Database& d, const std::string& q) {
  std::vector<int64_t> ids;
  for (const auto& row :
       d.query("SELECT id, path FROM regions WHERE path_hash = ? ORDER BY id", {hash_hex(q)}).rows)
    if (as_text(row[1]) == q) ids.push_back(as_int(row[0]));
  if (!ids.empty()) return {q, ids};
  std::map<std::string, std::vector<int64_t>> by_path;
  for (const auto& row : d.query("SELECT id, path FROM regions ORDER BY id").rows) {
    std::string p = as_text(row[1]);
    if (p.find(q) != std::string::npos) by_path[p].push_back(as_int(row[0]));
  }
  if (by_path.empty()) throw UserError("no region of the database matches --region '" + q + "'");
  if (by_path.size() > 1) {
    std::string some;
    size_t n = 0;
    for (const auto& [p, _] : by_path) {
      if (n++ == 3) break;
      some += (some.empty() ? "" : ", ") + p;
    }
    throw UserError("--region '" + q + "' matches " + std::to_string(by_path.size()) +
                    " call paths (" + some + (by_path.size() > 3 ? ", ..." : "") +
                    "): give more of the path");
  }
  return *by_path.begin();
}

bool known_class(const std::string& c) {
  if (c == "time" || c == "total") return true;
  for (std::string_view k : kClassKeys)
    if (c == k || (c.size() > k.size() + 1 && c.compare(0, k.size(), k) == 0 && c[k.size()] == '.'))
      return true;
  return false;
}

void history_plot(const Result& r, const std::string& path, const std::string& cls,
                  const std::string& file) {
  if (find_program("gnuplot").empty())
    throw UserError("--plot needs gnuplot (Debian: gnuplot-nox), which is not installed");
  std::string ext = std::filesystem::path(file).extension().string();
  if (ext != ".svg" && ext != ".png")
    throw UserError("--plot " + file + ": give a file ending in .svg or .png");
  char tmp[] = "/tmp/scalea-history-XXXXXX";
  if (!mkdtemp(tmp))
    throw UserError(std::string("cannot create a temporary directory: ") + std::strerror(errno));
  struct Remove {
    std::string dir;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{tmp};
  // One series per configuration (p, threads x ranks), in the order they first appear.
  std::vector<std::string> series;
  std::map<std::string, std::string> data;
  for (const auto& row : r.rows) {
    std::string config =
        fmt::format("p = {} ({} x {})", as_int(row[3]), as_int(row[4]), as_int(row[5]));
    if (!data.count(config)) series.push_back(config);
    data[config] +=
        fmt::format("{:.3f} {:.9g}\n", as_double(row[2]), as_double(row[row.size() - 1]));
  }
  std::string dat;
  for (const std::string& s : series) dat += "# " + s + "\n" + data[s] + "\n\n";
  write_output(std::string(tmp) + "/history.dat", dat);
  std::string out = std::filesystem::absolute(file).string();
  std::string gp = "set encoding utf8\n";
  gp +=
      ext == ".svg"
          ? "set terminal svg size 900,520 dynamic noenhanced font 'sans,12' background '#ffffff'\n"
          : "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 900,520 "
            "noenhanced font 'sans,10' background '#ffffff' } else { set terminal png size 900,520 "
            "}\n";
  gp += "set output " + gp_string(out) + "\n";
  gp += "set title " + gp_string(cls + " of " + path + " across experiments") + "\n";
  // Experiments of one day are told apart by the time of day, others by the date.
  double first = as_double(r.rows.front()[2]), last = as_double(r.rows.back()[2]);
  gp += std::string("set xdata time\nset timefmt '%s'\nset format x '") +
        (last - first < 86400 ? "%H:%M:%S" : "%Y-%m-%d") +
        "'\nset xtics rotate by -30\n"
        "set xlabel 'experiment start (UTC)'\n";
  gp += "set ylabel " + gp_string(cls + ", s of wall time") + "\n";
  gp +=
      "set grid ytics\nset border 3\nset tics nomirror\nset key outside right top\nset offsets "
      "graph 0.03, graph 0.03, graph 0.05, 0\n";
  gp += "plot";
  for (size_t i = 0; i < series.size(); ++i)
    gp += fmt::format(
        "{} 'history.dat' index {} using 1:2 with linespoints lw 2 pt 7 ps 0.9 title {}",
        i ? "," : "", i, gp_string(series[i]));
  gp += "\n";
  write_output(std::string(tmp) + "/history.gp", gp);
  run_gnuplot(tmp, "history.gp");
  std::fprintf(stderr, "scalea db: wrote %s\n", file.c_str());
}

void run_history(const DbOptions& o) {
  if (!known_class(o.cls)) {
    std::string all = "time, total";
    for (std::string_view k : kClassKeys) all += ", " + std::string(k);
    throw UserError("--class " + o.cls + ": one of " + all +
                    ", or a subclass such as synchronization.barrier");
  }
  std::unique_ptr<Database> d = open_for(o, Access::Read);
  auto [path, ids] = find_region(*d, o.region);
  std::vector<Value> params(ids.begin(), ids.end());
  std::string in;
  for (size_t i = 0; i < ids.size(); ++i) in += i ? ", ?" : "?";
  params.emplace_back(o.cls);
  // region_history has one row per region, experiment and class; a call path held by several
  // regions (the same label and location, other canonical keys) adds them up.
  std::string sql =
      "SELECT h.experiment_id AS experiment, MIN(h.started) AS started, MIN(h.started_epoch) AS "
      "epoch, "
      "MIN(h.p) AS p, MIN(h.threads) AS threads, MIN(h.ranks) AS ranks, MIN(h.git_commit) AS "
      "git_commit, "
      "SUM(h.seconds) AS seconds FROM region_history h WHERE h.region_id IN (" +
      in + ") AND h.class = ?";
  if (!o.program.empty() || !o.tags.empty())
    sql += " AND h.experiment_id IN (SELECT e.id FROM experiments e" +
           experiment_filter(o, params) + ")";
  sql += " GROUP BY h.experiment_id ORDER BY MIN(h.started_epoch), h.experiment_id";
  Result r = d->query(sql, params);
  if (!o.plot.empty()) {
    if (r.rows.empty()) throw UserError("no values of " + o.cls + " for " + path + " to plot");
    history_plot(r, path, o.cls, o.plot);
  }
  std::map<int64_t, std::string> tags = tag_text(*d);
  Result out;
  out.columns = {"experiment", "started", "p", "threads", "ranks", "git_commit", "tags", o.cls};
  for (const auto& row : r.rows) {
    auto it = tags.find(as_int(row[0]));
    std::string git = as_text(row[6]);
    if (o.format == "text" && git.size() > 10) git = git.substr(0, 10);
    out.rows.push_back({row[0], row[1], row[3], row[4], row[5], text_or_null(git),
                        it == tags.end() ? Value(std::string()) : Value(it->second), row[7]});
  }
  if (o.format == "text")
    fmt::print("region {}\nclass  {} (s of wall time), in the order the experiments ran\n\n", path,
               o.cls);
  print_result(out, o.format);
}

// ---- functions ----

// The hottest sampled functions (or lines) of a stored experiment, or of one region of it, added
// up over its regions (the sampled view's rows of the experiment).
void run_functions(const DbOptions& o) {
  std::unique_ptr<Database> d = open_for(o, Access::Read);
  Result e = d->query("SELECT path, p FROM experiments WHERE id = ?", {o.experiment});
  if (e.rows.empty())
    throw UserError("no experiment " + std::to_string(o.experiment) +
                    " in the database (scalea db list)");
  std::string where = " WHERE experiment_id = ?", path;
  std::vector<Value> params = {o.experiment};
  if (!o.region.empty()) {
    std::vector<int64_t> ids;
    std::tie(path, ids) = find_region(*d, o.region);
    where += " AND region_id IN (";
    for (size_t i = 0; i < ids.size(); ++i) where += i ? ", ?" : "?";
    where += ")";
    params.insert(params.end(), ids.begin(), ids.end());
  }
  Result sum = d->query("SELECT SUM(own), SUM(samples) FROM sampled_functions" + where, params);
  const double cpu = as_double(sum.rows[0][0], 0), samples = as_double(sum.rows[0][1], 0);
  // Per function (or line): samples, own (s), then the columns that only functions have.
  const std::string key = o.lines ? "location, function_name, module" : "function_name, module";
  Result r = d->query("SELECT " + key + ", SUM(samples), SUM(own)" +
                          (o.lines ? "" : ", SUM(self), SUM(on_stack)") + " FROM " +
                          (o.lines ? "sampled_lines" : "sampled_functions") + where + " GROUP BY " +
                          key + " ORDER BY SUM(own) DESC, " + key,
                      params);
  // A function's hottest line over the regions: its line with the most own time.
  std::map<std::pair<std::string, std::string>, std::string> hottest;
  if (!o.lines)
    for (const auto& row :
         d->query("SELECT function_name, module, location FROM sampled_lines" + where +
                      " GROUP BY function_name, module, location ORDER BY SUM(own), location DESC",
                  params)
             .rows)
      hottest[{as_text(row[0]), as_text(row[1])}] = as_text(row[2]);
  Result out;
  out.columns = o.lines ? std::vector<std::string>{"line", "function", "module"}
                        : std::vector<std::string>{"function", "module"};
  for (const char* c : {"samples", "own", "own_error", "own_percent"}) out.columns.emplace_back(c);
  if (!o.lines)
    for (const char* c : {"self", "on_stack", "hottest_line"}) out.columns.emplace_back(c);
  const size_t k = o.lines ? 3 : 2;
  for (const auto& row : r.rows) {
    if (o.top && out.rows.size() == o.top) break;
    const double n = as_double(row[k]), own = as_double(row[k + 1]);
    std::vector<Value> cells(row.begin(), row.begin() + long(k));
    for (Value v : {row[k], row[k + 1], real(n > 0 ? own / std::sqrt(n) : 0),
                    real(cpu > 0 ? 100 * own / cpu : 0)})
      cells.push_back(v);
    if (!o.lines) {
      cells.insert(cells.end(), {row[k + 2], row[k + 3]});
      cells.push_back(text_or_null(hottest[{as_text(row[0]), as_text(row[1])}]));
    }
    out.rows.push_back(std::move(cells));
  }
  if (o.format == "text")
    fmt::print(
        "experiment {}: {} (p = {}){}\nsampled: {:.3f} s of CPU time, {:g} samples, summed over "
        "threads{}\n\n",
        o.experiment, as_text(e.rows[0][0]), as_int(e.rows[0][1]),
        path.empty() ? "" : "\nregion " + path, cpu, samples,
        samples > 0 ? "" : " (nothing sampled: sampling was off, or stored before schema 2)");
  print_result(out, o.format);
  if (o.format == "text")
    fmt::print(
        "own: CPU time charged to the function as the program's code, s; own_error: one "
        "standard deviation (of the count); self: innermost frame; on_stack: anywhere on the "
        "stack (docs/sampling.md)\n");
}

// ---- compare ----

DiffSide compare_side(Database& d, int64_t id, std::vector<std::string>& keys) {
  Result e = d.query(
      "SELECT e.path, e.p, r.path FROM experiments e LEFT JOIN experiments r ON r.id = "
      "e.reference_id "
      "WHERE e.id = ?",
      {id});
  if (e.rows.empty())
    throw UserError("no experiment " + std::to_string(id) + " in the database (scalea db list)");
  DiffSide s;
  s.path = as_text(e.rows[0][0]);
  s.p = int(as_int(e.rows[0][1]));
  s.reference = as_text(e.rows[0][2]);
  std::string sql = "SELECT r.path, s.t_p, s.t_o";
  for (std::string_view k : kClassKeys) sql += ", s." + std::string(k);
  sql +=
      " FROM region_stats s JOIN regions r ON r.id = s.region_id WHERE s.experiment_id = ? AND "
      "s.in_run = 1 "
      "ORDER BY r.depth, r.path";
  auto paths = std::make_shared<std::vector<std::string>>();
  for (const auto& row : d.query(sql, {id}).rows) {
    DiffRegion r;
    r.t_p = as_double(row[1]);
    r.t_o = as_double(row[2]);
    for (int c = 0; c < kClassCount; ++c) r.classes[size_t(c)] = as_double(row[size_t(3 + c)]);
    r.p = s.p;
    s.regions.push_back(r);
    paths->push_back(as_text(row[0]));
    // Matched below the program: the program root matches whatever the binaries are called.
    size_t slash = paths->back().find('/');
    keys.push_back(slash == std::string::npos ? "" : paths->back().substr(slash));
  }
  s.region_path = [paths](size_t i) { return (*paths)[i]; };
  return s;
}

void run_compare(const DbOptions& o) {
  std::unique_ptr<Database> d = open_for(o, Access::Read);
  std::vector<std::string> ka, kb;
  DiffSide a = compare_side(*d, o.a, ka), b = compare_side(*d, o.b, kb);
  // Regions in the order of their paths below the program (the tie order of the table).
  std::map<std::string, std::pair<long, long>> by_key;
  for (size_t i = 0; i < ka.size(); ++i) by_key.emplace(ka[i], std::make_pair(long(i), -1L));
  for (size_t i = 0; i < kb.size(); ++i) {
    auto [it, added] = by_key.emplace(kb[i], std::make_pair(-1L, long(i)));
    if (!added && it->second.second < 0) it->second.second = long(i);
  }
  std::vector<std::pair<long, long>> matched;
  for (const auto& [k, m] : by_key) matched.push_back(m);
  print_diff(a, b, matched, o.format, o.min_change);
}

// ---- rm ----

std::string id_list(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : ", ") + std::to_string(id);
  return s;
}

void run_rm(const DbOptions& o) {
  if (o.ids.empty() && !o.study)
    throw UserError("give the experiments to remove (ids from scalea db list) or --study ID");
  std::unique_ptr<Database> d = open_for(o, Access::Write);
  d->begin_write();
  try {
    std::set<int64_t> ids(o.ids.begin(), o.ids.end());
    for (int64_t id : o.ids)
      if (d->query("SELECT 1 FROM experiments WHERE id = ?", {id}).rows.empty())
        throw UserError("no experiment " + std::to_string(id) +
                        " in the database (scalea db list)");
    if (o.study) {
      if (d->query("SELECT 1 FROM studies WHERE id = ?", {o.study}).rows.empty())
        throw UserError("no study " + std::to_string(o.study) +
                        " in the database (scalea db list --studies)");
      for (const auto& row :
           d->query("SELECT experiment_id FROM study_runs WHERE study_id = ?", {o.study}).rows)
        ids.insert(as_int(row[0]));
    }
    std::vector<int64_t> list(ids.begin(), ids.end());
    std::vector<Value> params(list.begin(), list.end());
    std::string in;
    for (size_t i = 0; i < list.size(); ++i) in += i ? ", ?" : "?";
    // An experiment others were classified against goes only with them.
    std::vector<Value> twice = params;
    twice.insert(twice.end(), params.begin(), params.end());
    std::vector<int64_t> dependents;
    for (const auto& row : d->query("SELECT id FROM experiments WHERE reference_id IN (" + in +
                                        ") AND id NOT IN (" + in + ") ORDER BY id",
                                    twice)
                               .rows)
      dependents.push_back(as_int(row[0]));
    if (!dependents.empty())
      throw UserError("experiments " + id_list(dependents) + " were classified against one of " +
                      id_list(list) + ": remove them too (or first)");
    if (!list.empty()) {
      for (const char* table : {"pe_times", "region_counters", "region_subclasses", "region_stats",
                                "sampled_functions", "sampled_lines", "tags", "study_runs"})
        d->query(std::string("DELETE FROM ") + table + " WHERE experiment_id IN (" + in + ")",
                 params);
      d->query("UPDATE studies SET reference_id = NULL WHERE reference_id IN (" + in + ")", params);
      d->query("DELETE FROM experiments WHERE id IN (" + in + ")", params);
    }
    // Studies left without runs, and regions no experiment holds (their descendants are held by
    // none either: an experiment holds every ancestor of the regions it holds).
    d->query("DELETE FROM studies WHERE id NOT IN (SELECT study_id FROM study_runs)");
    d->query("DELETE FROM regions WHERE id NOT IN (SELECT region_id FROM region_stats)");
    d->commit();
    fmt::print("removed {} experiment{}{} from {}\n", list.size(), list.size() == 1 ? "" : "s",
               list.empty() ? "" : " (" + id_list(list) + ")", d->name());
  } catch (...) {
    d->rollback();
    throw;
  }
}

void run_migrate(const DbOptions& o) {
  std::unique_ptr<Database> d = open_database(database_spec(o.db), Access::Write, o.wait);
  int was = prepare_for_write(*d);
  if (was == kSchemaVersion) fmt::print("{}: schema version {}, nothing to do\n", d->name(), was);
  else if (was == 0) fmt::print("{}: created, schema version {}\n", d->name(), kSchemaVersion);
  else fmt::print("{}: migrated from schema version {} to {}\n", d->name(), was, kSchemaVersion);
}

}  // namespace

namespace db {

void store_into(const std::string& option, const std::vector<std::string>& inputs,
                const std::vector<std::string>& tags) {
  DbOptions o;
  o.db = option;
  o.inputs = inputs;
  o.tags = tags;
  run_add(o);
}

void add_store_options(CLI::App* cmd, StoreOptions& o, const std::string& what) {
  o.option = cmd->add_option(
                    "--db", o.db,
                    "Store " + what +
                        " in the experiment database: the one named (a file or "
                        "postgresql://...), else SCALEA_DB or ~/.local/share/scalea/experiments.db")
                 ->expected(0, 1);
  cmd->add_option("--tag", o.tags, "With --db: a label KEY=VALUE of what is stored (repeatable)")
      ->needs(o.option);
}

}  // namespace db

// Long: the declarations of db's eight subcommands and their options, one statement each, in
// the order --help lists them.
void add_db(CLI::App& app) {
  auto o = std::make_shared<DbOptions>();
  CLI::App* cmd =
      app.add_subcommand("db", "Store experiments in a database and query them across runs");
  cmd->require_subcommand(1);
  cmd->fallthrough();
  cmd->footer(
      "Examples:\n"
      "  scalea db add md.p4 -r md.p1 --tag commit=abc123   store an experiment (and its "
      "reference)\n"
      "  scalea db add md.study                             every run of a scaling study\n"
      "  scalea db list --program md                        what is stored\n"
      "  scalea db query 'SELECT path, t_p FROM overheads WHERE experiment_id = 3 ORDER BY t_p "
      "DESC'\n"
      "  scalea db history --region 'md/compute@md.c:217' --class synchronization --plot sync.svg\n"
      "  scalea db functions 3 --top 10                     the hottest sampled functions of 3\n"
      "  scalea db compare 3 7                              scalea diff of two stored experiments\n"
      "  scalea db html site                                a browsable site: site/index.html\n"
      "  scalea db --db postgresql://me@dbhost/perf list    a team's PostgreSQL database\n\n"
      "The database is --db, else SCALEA_DB, else ~/.local/share/scalea/experiments.db (SQLite).\n"
      "Schema, views and the SQL of the usual questions: docs/database.md.");
  cmd->add_option(
      "--db", o->db,
      "The database: an SQLite file, or postgresql://[user[:password]@]host[:port]/dbname");
  cmd->add_option("--wait", o->wait,
                  "Seconds to wait for a database another process holds (default 60)")
      ->check(CLI::NonNegativeNumber);
  auto formats = [&](CLI::App* sub, std::vector<std::string> choices) {
    sub->add_option("-f,--format", o->format, "Output format")
        ->check(CLI::IsMember(choices))
        ->capture_default_str();
  };
  auto filters = [&](CLI::App* sub) {  // which experiments
    sub->add_option("--tag", o->tags,
                    "Only experiments with this label KEY=VALUE (repeatable: all must match)");
    sub->add_option("--program", o->program, "Only experiments of this program (its file name)");
  };

  CLI::App* add = cmd->add_subcommand(
      "add", "Store experiments and studies (the same experiment twice is stored once)");
  add->add_option("dirs", o->inputs, "Experiment or study directories")->required();
  add->add_option("-r,--reference", o->reference,
                  "Reference run (p = 1) the experiments are classified against");
  add->add_option("--tag", o->tags, "A label KEY=VALUE of every experiment stored (repeatable)");
  add->add_flag("--per-pe", o->per_pe,
                "Also store each region's time on every PE (rows grow with the PEs)");
  add->add_option("--machine", o->machine,
                  "Machine file for NOISE and miss pricing (default: "
                  "~/.config/scalea/machine.json when present)");
  add->add_flag("--force", o->force,
                "Use a reference even when its program, arguments or p differ (warned)");
  add_decomposition_option(add, o->decomposition);
  add->add_flag("-q,--quiet", o->quiet, "Print nothing when all is well");
  add->callback([o] { run_add(*o); });

  CLI::App* list = cmd->add_subcommand("list", "List the stored experiments (or studies)");
  filters(list);
  list->add_flag("--studies", o->studies, "List the studies instead");
  formats(list, {"text", "csv", "json"});
  list->callback([o] { run_list(*o); });

  CLI::App* query = cmd->add_subcommand(
      "query", "Run one read-only SQL statement (tables and views: docs/database.md)");
  query->add_option("sql", o->sql, "The statement, e.g. 'SELECT * FROM overheads LIMIT 5'")
      ->required();
  formats(query, {"text", "csv", "json"});
  query->callback([o] { run_query(*o); });

  CLI::App* history = cmd->add_subcommand(
      "history", "One overhead class of one region across experiments, in time order");
  history
      ->add_option("--region", o->region,
                   "The region's call path (as scalea report --format json prints it), or "
                   "a part of it that names one")
      ->required();
  history
      ->add_option("--class", o->cls,
                   "time, total, one of the six classes, or a subclass (class.subclass)")
      ->required();
  filters(history);
  history->add_option("--plot", o->plot, "Also draw it (gnuplot) into FILE.svg or FILE.png");
  formats(history, {"text", "csv", "json"});
  history->callback([o] { run_history(*o); });

  CLI::App* functions = cmd->add_subcommand(
      "functions",
      "The hottest sampled functions (or lines) of a stored experiment, by own CPU time");
  functions->add_option("experiment", o->experiment, "Experiment id (scalea db list)")->required();
  functions->add_option("--region", o->region,
                        "Only the samples taken in this region (its call path, or a part of it "
                        "that names one), not in the regions below it");
  functions->add_flag("--lines", o->lines, "Source lines instead of functions");
  functions->add_option("--top", o->top, "At most this many rows (0: all; default 20)");
  formats(functions, {"text", "csv", "json"});
  functions->callback([o] { run_functions(*o); });

  CLI::App* compare =
      cmd->add_subcommand("compare", "The table of scalea diff for two stored experiments");
  compare->add_option("a", o->a, "Experiment A (id from scalea db list)")->required();
  compare->add_option("b", o->b, "Experiment B")->required();
  compare->add_option("--min-change", o->min_change, "Hide regions whose T_p changed less (s)")
      ->check(CLI::NonNegativeNumber);
  formats(compare, {"text", "json"});
  compare->callback([o] { run_compare(*o); });

  CLI::App* html = cmd->add_subcommand(
      "html",
      "Write a browsable site of the database into OUT/index.html (one self-contained page: "
      "experiments by tag and date, a region's classes over time, two runs compared)");
  html->add_option("out", o->out, "The site's directory (made when missing)")->required();
  filters(html);
  html->add_flag("-q,--quiet", o->quiet, "Print nothing when all is well");
  html->callback([o] { run_html(*o); });

  CLI::App* rm =
      cmd->add_subcommand("rm", "Remove experiments (and regions no experiment holds any more)");
  rm->add_option("ids", o->ids, "Experiment ids (scalea db list)");
  rm->add_option("--study", o->study,
                 "Remove this study and its experiments (scalea db list --studies)");
  rm->callback([o] { run_rm(*o); });

  CLI::App* migrate =
      cmd->add_subcommand("migrate", "Create the database, or upgrade an older schema");
  migrate->callback([o] { run_migrate(*o); });
}

}  // namespace scalea::cli
