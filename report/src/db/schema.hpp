// The schema of the experiment database (docs/database.md), the same for SQLite and
// PostgreSQL, and its versions: scalea_schema holds one row per migration applied; a database
// of a newer version than this scalea knows is refused, an older one is migrated by the
// commands that write (and `scalea db migrate`).
#pragma once
#include <string>
#include <vector>

#include "database.hpp"

namespace scalea::cli::db {

// The version this scalea writes.
inline constexpr int kSchemaVersion = 2;

struct Migration {
  int version;      // the version the database has after it
  std::string sql;  // statements separated by ';'
};
// Every migration, oldest first: the first creates the schema.
const std::vector<Migration>& migrations();

// The statements of the views (dropped and made again by every migration).
std::string view_statements();

// The database's schema version: 0 when it holds no scalea schema.
int schema_version(Database& db);

// Makes the database ready for writing: creates or migrates the schema (in one write
// transaction). Throws DbError for a newer version, or a file that holds another application's
// tables. Returns the version it had (0: created now).
int prepare_for_write(Database& db);
// Checks that the database can be read by this scalea: it has the current schema version.
void prepare_for_read(Database& db);

}  // namespace scalea::cli::db
