// The SQLite backend: one file, Debian's libsqlite3. Writers exclude each other with BEGIN
// IMMEDIATE and wait for each other up to --wait (the busy timeout); readers open the file
// read-only. The file keeps SQLite's default rollback journal: it works on any file system
// (WAL does not on network file systems) and a read-only copy can be queried.
//
// Built as a module of its own (libscalea-db-sqlite.so), as the PostgreSQL backend is: the
// command loads it for the first SQLite database it opens, so no other command links libsqlite3.
#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "database.hpp"

namespace scalea::cli::db {
namespace {

class SqliteDb final : public Database {
 public:
  SqliteDb(const std::string& path, Access access, double wait_s) : wait_s_(wait_s) {
    name_ = path;
    struct stat st;
    if (access == Access::Read && stat(path.c_str(), &st) != 0)
      throw DbError("no database at " + path + " (scalea db add creates it)");
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      throw DbError(path + " is a directory, not a database file");
    int flags =
        access == Access::Read ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    try {
      if (rc != SQLITE_OK) fail(rc, "cannot open");
      sqlite3_extended_result_codes(db_, 1);
      sqlite3_busy_timeout(db_, int(wait_s * 1000));
      if (access == Access::Write && sqlite3_db_readonly(db_, "main") == 1)
        throw DbError("database " + name_ +
                      " is read-only (no write permission): cannot change it");
      // Reading the schema proves the file is a database: a damaged header fails here.
      exec_script(access == Access::Read
                      ? "PRAGMA query_only = ON; SELECT count(*) FROM sqlite_master"
                      : "PRAGMA foreign_keys = ON; SELECT count(*) FROM sqlite_master");
    } catch (...) {
      sqlite3_close_v2(db_);
      throw;
    }
  }
  ~SqliteDb() override {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  const char* backend() const override { return "sqlite"; }

  Result query(const std::string& sql, const std::vector<Value>& params) override {
    sqlite3_stmt*& stmt = cache_[sql];
    if (!stmt) {
      int rc = sqlite3_prepare_v3(db_, sql.c_str(), int(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                  &stmt, nullptr);
      if (rc != SQLITE_OK) {
        cache_.erase(sql);
        fail(rc, "cannot run a statement");
      }
    }
    for (size_t i = 0; i < params.size(); ++i) bind(stmt, int(i + 1), params[i]);
    Result r = collect(stmt);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return r;
  }

  void exec_script(const std::string& sql) override {
    char* msg = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg);
    sqlite3_free(msg);
    if (rc != SQLITE_OK) fail(rc, "cannot run a statement");
  }

  void begin_write() override { exec_script("BEGIN IMMEDIATE"); }
  void commit() override { exec_script("COMMIT"); }
  void rollback() noexcept override {
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

  Result query_read_only(const std::string& sql) override {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), int(sql.size()), &stmt, &tail);
    if (rc != SQLITE_OK) {
      if ((rc & 0xff) == SQLITE_ERROR)
        throw DbError(std::string("query failed: ") + sqlite3_errmsg(db_));
      fail(rc, "cannot run the query");
    }
    struct Finalize {
      sqlite3_stmt* s;
      ~Finalize() { sqlite3_finalize(s); }
    } guard{stmt};
    if (!stmt) throw DbError("no SQL statement given");
    if (tail && std::string(tail).find_first_not_of(" \t\r\n;") != std::string::npos)
      throw DbError("give one SQL statement (db query runs one at a time)");
    if (!sqlite3_stmt_readonly(stmt))
      throw DbError(
          "db query is read-only: the statement would change the database (use db add and db rm)");
    return collect(stmt, true);
  }

  bool has_table(const std::string& table) override {
    return !query("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?",
                  {table})
                .rows.empty();
  }

 private:
  sqlite3* db_ = nullptr;
  double wait_s_;
  std::map<std::string, sqlite3_stmt*> cache_;

  void bind(sqlite3_stmt* stmt, int i, const Value& v) {
    if (auto* n = std::get_if<int64_t>(&v)) sqlite3_bind_int64(stmt, i, *n);
    else if (auto* d = std::get_if<double>(&v)) sqlite3_bind_double(stmt, i, *d);
    else if (auto* s = std::get_if<std::string>(&v))
      sqlite3_bind_text(stmt, i, s->data(), int(s->size()), SQLITE_TRANSIENT);
    else sqlite3_bind_null(stmt, i);
  }

  Result collect(sqlite3_stmt* stmt, bool user = false) {
    Result r;
    int cols = sqlite3_column_count(stmt);
    for (int c = 0; c < cols; ++c) r.columns.emplace_back(sqlite3_column_name(stmt, c));
    for (;;) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        sqlite3_reset(stmt);
        if (user && (rc & 0xff) == SQLITE_ERROR)
          throw DbError(std::string("query failed: ") + sqlite3_errmsg(db_));
        fail(rc, "cannot run a statement");
      }
      std::vector<Value> row(static_cast<size_t>(cols));
      for (int c = 0; c < cols; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_INTEGER: row[size_t(c)] = int64_t(sqlite3_column_int64(stmt, c)); break;
          case SQLITE_FLOAT: row[size_t(c)] = sqlite3_column_double(stmt, c); break;
          case SQLITE_NULL: break;
          default: {
            const unsigned char* t = sqlite3_column_text(stmt, c);
            row[size_t(c)] = std::string(t ? reinterpret_cast<const char*>(t) : "",
                                         size_t(sqlite3_column_bytes(stmt, c)));
          }
        }
      }
      r.rows.push_back(std::move(row));
    }
    return r;
  }

  // One line for an SQLite error code, by what the user can do about it.
  [[noreturn]] void fail(int rc, const std::string& what) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    char wait[32];
    std::snprintf(wait, sizeof wait, "%g", wait_s_);
    switch (rc & 0xff) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        throw DbError("database " + name_ + " is locked by another process (waited " + wait +
                      " s; --wait SECONDS waits longer)");
      case SQLITE_READONLY:
        throw DbError("database " + name_ + " is read-only (" + msg + "): cannot change it");
      case SQLITE_NOTADB:
        throw DbError(name_ + " is not an SQLite database, or its header is damaged (" + msg + ")");
      case SQLITE_CORRUPT: throw DbError("database " + name_ + " is corrupt (" + msg + ")");
      case SQLITE_CANTOPEN:
        throw DbError(what + " database " + name_ + ": " + msg +
                      (errno ? std::string(" (") + std::strerror(errno) + ")" : std::string()));
      case SQLITE_FULL: throw DbError("the disk holding database " + name_ + " is full");
      case SQLITE_IOERR: throw DbError("I/O error on database " + name_ + ": " + msg);
      default: throw DbError("database " + name_ + ": " + what + ": " + msg);
    }
  }
};

}  // namespace

}  // namespace scalea::cli::db

// The module's one entry point, found with dlsym by open_sqlite (database.cpp). Throws DbError
// as the rest of the backend does.
extern "C" __attribute__((visibility("default"))) scalea::cli::db::Database* scalea_open_sqlite(
    const std::string& path, scalea::cli::db::Access access, double wait_s) {
  return new scalea::cli::db::SqliteDb(path, access, wait_s);
}
