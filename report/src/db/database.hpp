// The experiment database of `scalea db` (docs/database.md): one interface, two backends.
// SQLite (one file, the embedded default) and PostgreSQL (a team's shared server) take the same
// SQL: the schema (schema.cpp) and every query of the commands use the subset both speak, with
// `?` parameters (the PostgreSQL backend numbers them). Errors are DbError: one line, fit to be
// printed as it is, never holding a password.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "output/errors.hpp"

namespace scalea::cli::db {

// A failure of the database the user can act on (locked, read-only, corrupt, unreachable, a
// newer schema, an SQL error in `db query`): printed as "scalea db: <message>", exit status 2.
struct DbError : UserError {
  using UserError::UserError;
};

// A value of a parameter or a result cell: NULL, an integer, a double or text. Doubles that are
// not finite are stored as NULL (SQLite cannot keep NaN, and JSON cannot write either).
using Value = std::variant<std::monostate, int64_t, double, std::string>;
Value real(double v);                      // NULL when not finite
Value text_or_null(const std::string& s);  // NULL when empty

struct Result {
  std::vector<std::string> columns;
  std::vector<std::vector<Value>> rows;
};

bool is_null(const Value& v);
// The cell as a number (NULL: `fallback`; text: parsed) and as text ("" for NULL).
double as_double(const Value& v, double fallback = 0);
int64_t as_int(const Value& v, int64_t fallback = 0);
std::string as_text(const Value& v);

enum class Access { Read, Write };

class Database {
 public:
  virtual ~Database() = default;
  // "sqlite" or "postgresql".
  virtual const char* backend() const = 0;
  // What to call the database in messages: the file, or the URL with its password masked.
  const std::string& name() const { return name_; }

  // One statement with `?` parameters; its rows (none for statements that return none).
  virtual Result query(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  // Statements without parameters, separated by ';' (the schema's DDL).
  virtual void exec_script(const std::string& sql) = 0;
  // A transaction that excludes every other writer until commit or rollback, waiting for one
  // under way at most the --wait time (then a DbError saying the database is busy).
  virtual void begin_write() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  // One statement of the user's, run so that it cannot change anything: a statement that would
  // write is refused with a DbError.
  virtual Result query_read_only(const std::string& sql) = 0;
  // Whether a table of this name exists.
  virtual bool has_table(const std::string& table) = 0;

 protected:
  std::string name_;
};

// The database `--db` names, else $SCALEA_DB, else ~/.local/share/scalea/experiments.db.
std::string database_spec(const std::string& option);
bool is_postgresql(const std::string& spec);
// A postgresql:// URL with its password (user:PASSWORD@ and ?password=) replaced by ***.
std::string mask_url(const std::string& spec);
// `text` with every occurrence of the spec's password (as written and percent-decoded) masked:
// for messages of the client library, which may quote parts of the URL.
std::string mask_secrets(const std::string& spec, std::string text);

// Opens the database `spec` names. Access::Read opens an SQLite file read-only (it must exist);
// Access::Write creates it (and, for the default file, its directory). `wait_s`: how long a
// write transaction or a query waits for a lock held by another process.
std::unique_ptr<Database> open_database(const std::string& spec, Access access, double wait_s);
std::unique_ptr<Database> open_sqlite(const std::string& path, Access access, double wait_s);
std::unique_ptr<Database> open_postgresql(const std::string& url, Access access, double wait_s);

// Inserts rows into `table` (columns in that order) in statements of many rows each, as fast as
// both backends take them. `suffix` follows each statement (e.g. "ON CONFLICT DO NOTHING").
void insert_rows(Database& db, const std::string& table, const std::vector<std::string>& columns,
                 const std::vector<std::vector<Value>>& rows, const std::string& suffix = "");

// Rows whose column `column` is one of `keys`, in batches (an IN list per statement): `select`
// is the statement up to "WHERE", e.g. "SELECT id, key FROM regions"; `suffix` follows the IN
// list (a GROUP BY on `column` groups within a batch, each key's rows being in one batch).
Result select_in(Database& db, const std::string& select, const std::string& column,
                 const std::vector<Value>& keys, const std::string& suffix = "");

// One line of a message that may span several (libpq's do): the lines joined with "; ".
std::string one_line(std::string text);

}  // namespace scalea::cli::db
