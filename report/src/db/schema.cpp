// The schema: tables in the SQL both backends take (INTEGER keys the tool assigns, DOUBLE
// PRECISION, TEXT; 0/1 for booleans), and views that make the seed paper's queries one-liners.
#include "schema.hpp"

#include "study/study.hpp"
#include "scalea/overheads/classes.hpp"

namespace scalea::cli::db {
namespace {

// The six classes as columns of region_stats: "data_movement DOUBLE PRECISION, ...".
std::string class_columns(const std::string& prefix, const std::string& type) {
  std::string out;
  for (std::string_view k : overheads::kClassKeys) out += prefix + std::string(k) + type + ",\n  ";
  return out;
}

const char* kTables = R"sql(
CREATE TABLE scalea_schema (
  version INTEGER NOT NULL,
  applied TEXT NOT NULL,
  tool_version TEXT NOT NULL
);
CREATE TABLE experiments (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  program TEXT NOT NULL,
  command TEXT NOT NULL,
  arguments TEXT NOT NULL,
  cwd TEXT,
  p INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  ranks INTEGER NOT NULL,
  host TEXT,
  cpu_model TEXT,
  compiler TEXT,
  openmp_runtime TEXT,
  mpi_library TEXT,
  tool_version TEXT,
  git_commit TEXT,
  git_dirty INTEGER,
  started TEXT,
  started_epoch DOUBLE PRECISION,
  duration DOUBLE PRECISION,
  complete INTEGER NOT NULL,
  reference_id INTEGER REFERENCES experiments(id),
  reference_estimated INTEGER NOT NULL,
  machine_file TEXT,
  program_time DOUBLE PRECISION,
  load_balance DOUBLE PRECISION,
  communication_efficiency DOUBLE PRECISION,
  parallel_efficiency DOUBLE PRECISION,
  computation_scalability DOUBLE PRECISION,
  global_efficiency DOUBLE PRECISION,
  per_pe INTEGER NOT NULL,
  added TEXT NOT NULL
);
CREATE INDEX experiments_program ON experiments(program);
CREATE INDEX experiments_started ON experiments(started_epoch);
CREATE TABLE tags (
  experiment_id INTEGER NOT NULL REFERENCES experiments(id),
  tag TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (experiment_id, tag)
);
CREATE INDEX tags_tag ON tags(tag, value);
CREATE TABLE regions (
  id INTEGER PRIMARY KEY,
  region_key TEXT NOT NULL UNIQUE,
  parent_id INTEGER REFERENCES regions(id),
  depth INTEGER NOT NULL,
  path TEXT NOT NULL,
  path_hash TEXT NOT NULL,
  kind TEXT NOT NULL,
  label TEXT NOT NULL,
  name TEXT,
  file TEXT,
  line INTEGER,
  function_name TEXT,
  location TEXT
);
CREATE INDEX regions_path_hash ON regions(path_hash);
CREATE INDEX regions_parent ON regions(parent_id);
CREATE TABLE region_stats (
  @PROBE@
  in_run INTEGER NOT NULL,
  nodes INTEGER NOT NULL,
  visits BIGINT,
  t_p DOUBLE PRECISION NOT NULL,
  t_s DOUBLE PRECISION,
  t_s_estimated INTEGER NOT NULL,
  t_o DOUBLE PRECISION NOT NULL,
  @CLASSES@speedup DOUBLE PRECISION,
  efficiency DOUBLE PRECISION,
  pes INTEGER NOT NULL,
  time_min DOUBLE PRECISION,
  time_mean DOUBLE PRECISION,
  time_max DOUBLE PRECISION,
  time_stddev DOUBLE PRECISION,
  imbalance DOUBLE PRECISION,
  wait_total DOUBLE PRECISION,
  noise DOUBLE PRECISION,
  events_below DOUBLE PRECISION,
  bytes_sent BIGINT,
  bytes_recv BIGINT,
  mpi_wait DOUBLE PRECISION,
  mpi_transfer DOUBLE PRECISION,
  PRIMARY KEY (experiment_id, region_id)
);
CREATE INDEX region_stats_region ON region_stats(region_id);
CREATE TABLE region_subclasses (
  @PROBE@
  subclass TEXT NOT NULL,
  seconds DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (experiment_id, region_id, subclass)
);
CREATE TABLE region_counters (
  @PROBE@
  counter TEXT NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (experiment_id, region_id, counter)
);
CREATE TABLE pe_times (
  @PROBE@
  mpi_rank INTEGER NOT NULL,
  thread INTEGER NOT NULL,
  visits BIGINT NOT NULL,
  pe_time DOUBLE PRECISION NOT NULL,
  wait DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (experiment_id, region_id, mpi_rank, thread)
);
CREATE TABLE studies (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  command TEXT NOT NULL,
  threads TEXT NOT NULL,
  ranks TEXT NOT NULL,
  repetitions INTEGER NOT NULL,
  created TEXT,
  host TEXT,
  reference_id INTEGER REFERENCES experiments(id),
  added TEXT NOT NULL
);
CREATE TABLE study_runs (
  study_id INTEGER NOT NULL REFERENCES studies(id),
  experiment_id INTEGER NOT NULL REFERENCES experiments(id),
  run TEXT NOT NULL,
  config TEXT NOT NULL,
  repetition INTEGER NOT NULL,
  PRIMARY KEY (study_id, experiment_id)
);
CREATE INDEX study_runs_experiment ON study_runs(experiment_id)
)sql";

// Version 2: what call-path sampling saw in each region (docs/sampling.md), kept apart from the
// regions' measured statistics: its functions, and their source lines, by CPU time (s, summed
// over threads) with the number of samples and one standard deviation of the count; and the
// experiment's samples (NULL: stored by version 1, before samples were: `db add` stores it again).
const char* kSampled = R"sql(
ALTER TABLE experiments ADD COLUMN samples DOUBLE PRECISION;
CREATE TABLE sampled_functions (
  @PROBE@
  function_name TEXT NOT NULL,
  module TEXT NOT NULL,
  samples DOUBLE PRECISION NOT NULL,
  own DOUBLE PRECISION NOT NULL,
  own_error DOUBLE PRECISION NOT NULL,
  self DOUBLE PRECISION NOT NULL,
  on_stack DOUBLE PRECISION NOT NULL,
  hottest_line TEXT,
  PRIMARY KEY (experiment_id, region_id, function_name, module)
);
CREATE INDEX sampled_functions_name ON sampled_functions(function_name);
CREATE TABLE sampled_lines (
  @PROBE@
  location TEXT NOT NULL,
  function_name TEXT NOT NULL,
  module TEXT NOT NULL,
  samples DOUBLE PRECISION NOT NULL,
  own DOUBLE PRECISION NOT NULL,
  own_error DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (experiment_id, region_id, location, function_name, module)
)
)sql";

// The tables, with the columns several share written once: @CLASSES@, the six classes;
// @PROBE@, the key of a row of probe data (a region in an experiment).
std::string tables(const char* text) {
  std::string sql = text;
  auto fill = [&](const std::string& mark, const std::string& text) {
    for (size_t at = sql.find(mark); at != std::string::npos; at = sql.find(mark, at + text.size()))
      sql.replace(at, mark.size(), text);
  };
  fill("@CLASSES@", class_columns("", " DOUBLE PRECISION NOT NULL"));
  fill("@PROBE@",
       "experiment_id INTEGER NOT NULL REFERENCES experiments(id),\n  "
       "region_id INTEGER NOT NULL REFERENCES regions(id),");
  return sql;
}

}  // namespace

std::string view_statements() {
  // overheads: one row per region and experiment, with what identifies both.
  std::string sql =
      "CREATE VIEW overheads AS SELECT s.experiment_id, e.program, e.arguments, e.p, e.threads, "
      "e.ranks, e.host, e.started, e.started_epoch, e.git_commit, e.reference_id, s.region_id, "
      "r.parent_id, r.path, r.depth, r.kind, r.label, r.location, s.in_run, s.visits, s.t_p, "
      "s.t_s, s.t_s_estimated, s.t_o, " +
      class_columns("s.", "") +
      "s.speedup, s.efficiency, s.pes, s.time_min, s.time_mean, s.time_max, s.time_stddev, "
      "s.imbalance, s.noise FROM region_stats s JOIN experiments e ON e.id = s.experiment_id "
      "JOIN regions r ON r.id = s.region_id;\n";
  // region_history: one row per region, experiment and class (time = T_p, total = T_o, the six
  // classes, their subclasses "class.subclass").
  const std::string cols =
      "experiment_id, started, started_epoch, program, arguments, p, threads, ranks, host, "
      "git_commit, region_id, path, ";
  sql += "CREATE VIEW region_history AS SELECT " + cols +
         "'time' AS class, t_p AS seconds FROM overheads";
  sql += " UNION ALL SELECT " + cols + "'total', t_o FROM overheads";
  for (std::string_view k : overheads::kClassKeys)
    sql += " UNION ALL SELECT " + cols + "'" + std::string(k) + "', " + std::string(k) +
           " FROM overheads";
  sql +=
      " UNION ALL SELECT c.experiment_id, e.started, e.started_epoch, e.program, e.arguments, e.p, "
      "e.threads, e.ranks, e.host, e.git_commit, c.region_id, r.path, c.subclass, c.seconds "
      "FROM region_subclasses c JOIN experiments e ON e.id = c.experiment_id "
      "JOIN regions r ON r.id = c.region_id;\n";
  // sampled: one row per sampled function and line of a region and experiment.
  const std::string ids =
      "x.experiment_id, e.program, e.arguments, e.p, e.threads, e.ranks, e.host, e.started, "
      "e.started_epoch, e.git_commit, x.region_id, r.path, r.kind AS region_kind, ";
  const std::string joins =
      " JOIN experiments e ON e.id = x.experiment_id JOIN regions r ON r.id = x.region_id";
  sql += "CREATE VIEW sampled AS SELECT " + ids +
         "'function' AS sampled, x.function_name, x.module, x.hottest_line AS location, "
         "x.samples, x.own, x.own_error, x.self, x.on_stack FROM sampled_functions x" +
         joins + " UNION ALL SELECT " + ids +
         "'line', x.function_name, x.module, x.location, x.samples, x.own, x.own_error, "
         "NULL, NULL FROM sampled_lines x" +
         joins;
  return sql;
}

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = {
      {1, tables(kTables)},
      {2, tables(kSampled)},
  };
  return list;
}

int schema_version(Database& db) {
  if (!db.has_table("scalea_schema")) return 0;
  Result r = db.query("SELECT MAX(version) FROM scalea_schema");
  return r.rows.empty() ? 0 : int(as_int(r.rows[0][0], 0));
}

namespace {

[[noreturn]] void newer(Database& db, int v) {
  throw DbError("database " + db.name() + " has schema version " + std::to_string(v) +
                ", newer than this scalea knows (" + std::to_string(kSchemaVersion) +
                "): use a newer scalea");
}

// An SQLite file of another application: tables, none of them ours.
void refuse_foreign(Database& db) {
  if (std::string(db.backend()) != "sqlite") return;
  Result r = db.query("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  if (!r.rows.empty() && as_int(r.rows[0][0]) > 0)
    throw DbError(db.name() +
                  " is an SQLite database of another application (it has no "
                  "scalea_schema table): name another file with --db");
}

}  // namespace

int prepare_for_write(Database& db) {
  int v = schema_version(db);
  if (v == kSchemaVersion) return v;
  if (v > kSchemaVersion) newer(db, v);
  db.begin_write();
  try {
    v = schema_version(db);  // another process may have migrated it meanwhile
    if (v > kSchemaVersion) newer(db, v);
    if (v < kSchemaVersion) {
      if (v == 0) refuse_foreign(db);
      if (v > 0)
        db.exec_script(
            "DROP VIEW IF EXISTS sampled; DROP VIEW IF EXISTS region_history; DROP VIEW IF "
            "EXISTS overheads");
      for (const Migration& m : migrations()) {
        if (m.version <= v) continue;
        db.exec_script(m.sql);
        db.query("INSERT INTO scalea_schema (version, applied, tool_version) VALUES (?, ?, ?)",
                 {int64_t(m.version), study::now_iso8601(), std::string(SCALEA_VERSION)});
      }
      db.exec_script(view_statements());
    }
    db.commit();
  } catch (...) {
    db.rollback();
    throw;
  }
  return v;
}

void prepare_for_read(Database& db) {
  int v = schema_version(db);
  if (v == 0) {
    refuse_foreign(db);
    throw DbError("database " + db.name() +
                  " holds no experiments yet (scalea db add stores some)");
  }
  if (v > kSchemaVersion) newer(db, v);
  if (v < kSchemaVersion)
    throw DbError("database " + db.name() + " has schema version " + std::to_string(v) +
                  ", older than this scalea's (" + std::to_string(kSchemaVersion) +
                  "): upgrade it with scalea db migrate");
}

}  // namespace scalea::cli::db
