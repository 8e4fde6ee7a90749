// The PostgreSQL backend: libpq, a team's shared database. Writers exclude each other with a
// transaction-scoped advisory lock (it exists before the tables do, so two first `db add`s
// create the schema once), waiting at most --wait (lock_timeout); readers are never blocked.
// `db query` runs in a READ ONLY transaction, one statement through the extended protocol
// (which refuses several), and only statements that read by their first word.
//
// Built as a module of its own (libscalea-db-postgres.so) that the scalea command loads only for
// a postgresql:// database: libpq and what it links (TLS, Kerberos, LDAP) cost every start of the
// command 3 ms of dynamic linking, `scalea run` included.
#include <libpq-fe.h>

#include <cctype>
#include <cstring>

#include "database.hpp"

namespace scalea::cli::db {
namespace {

// The advisory lock of scalea's writers ("scalea" in ASCII).
constexpr const char* kWriterLock = "SELECT pg_advisory_xact_lock(115991155803745)";

// `?` parameters as $1, $2, ... (outside quoted strings and identifiers).
std::string numbered(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  char quote = 0;
  for (char ch : sql) {
    if (quote) {
      if (ch == quote) quote = 0;
      out += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      out += ch;
    } else if (ch == '?') {
      out += "$" + std::to_string(++n);
    } else {
      out += ch;
    }
  }
  return out;
}

// The first word of a statement, upper case, after white space, comments and parentheses.
std::string first_word(const std::string& sql) {
  size_t i = 0;
  for (;;) {
    while (i < sql.size() && (std::isspace((unsigned char)sql[i]) || sql[i] == '(')) ++i;
    if (sql.compare(i, 2, "--") == 0) {
      i = sql.find('\n', i);
      if (i == std::string::npos) return "";
    } else if (sql.compare(i, 2, "/*") == 0) {
      i = sql.find("*/", i);
      if (i == std::string::npos) return "";
      i += 2;
    } else {
      break;
    }
  }
  std::string w;
  while (i < sql.size() && std::isalpha((unsigned char)sql[i]))
    w += char(std::toupper((unsigned char)sql[i++]));
  return w;
}

void ignore_notice(void*, const char*) {}

class PgDb final : public Database {
 public:
  PgDb(const std::string& url, double wait_s) : url_(url), wait_s_(wait_s) {
    name_ = mask_url(url);
    const char* keys[] = {"connect_timeout", "dbname", "fallback_application_name", nullptr};
    const char* values[] = {"10", url.c_str(), "scalea", nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
      std::string why = conn_ ? PQerrorMessage(conn_) : "out of memory";
      if (conn_) PQfinish(conn_);
      conn_ = nullptr;
      throw DbError("cannot connect to " + name_ + ": " + clean(why));
    }
    PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
    run("SET client_min_messages = warning", {}, false);
  }
  ~PgDb() override {
    if (conn_) PQfinish(conn_);
  }

  const char* backend() const override { return "postgresql"; }

  Result query(const std::string& sql, const std::vector<Value>& params) override {
    return run(numbered(sql), params, false);
  }

  void exec_script(const std::string& sql) override {
    PGresult* res = PQexec(conn_, sql.c_str());
    check(res, false);
    PQclear(res);
  }

  void begin_write() override {
    exec_script("BEGIN");
    char timeout[64];
    std::snprintf(timeout, sizeof timeout, "SET LOCAL lock_timeout = '%.0fms'", wait_s_ * 1000);
    exec_script(timeout);
    exec_script(kWriterLock);
  }
  void commit() override { exec_script("COMMIT"); }
  void rollback() noexcept override {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE)
      PQclear(PQexec(conn_, "ROLLBACK"));
  }

  Result query_read_only(const std::string& sql) override {
    static const char* reading[] = {"SELECT", "WITH", "VALUES", "TABLE", "EXPLAIN", "SHOW"};
    std::string w = first_word(sql);
    if (w.empty()) throw DbError("no SQL statement given");
    bool reads = false;
    for (const char* r : reading) reads = reads || w == r;
    if (!reads)
      throw DbError("db query is read-only: " + w +
                    " is not a query (SELECT, WITH, VALUES, TABLE, "
                    "EXPLAIN, SHOW; use db add and db rm to change the database)");
    exec_script("BEGIN READ ONLY");
    try {
      Result r = run(sql, {}, true);
      exec_script("ROLLBACK");
      return r;
    } catch (...) {
      rollback();
      throw;
    }
  }

  bool has_table(const std::string& table) override {
    return !query(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
                "AND table_name = ?",
                {table})
                .rows.empty();
  }

 private:
  PGconn* conn_ = nullptr;
  std::string url_;
  double wait_s_;

  std::string clean(const std::string& text) const { return mask_secrets(url_, one_line(text)); }

  Result run(const std::string& sql, const std::vector<Value>& params, bool user) {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (is_null(params[i])) continue;
      texts[i] = as_text(params[i]);
      values[i] = texts[i].c_str();
    }
    PGresult* res = PQexecParams(conn_, sql.c_str(), int(params.size()), nullptr, values.data(),
                                 nullptr, nullptr, 0);
    check(res, user);
    Result r;
    int cols = PQnfields(res), rows = PQntuples(res);
    std::vector<Oid> types;
    for (int c = 0; c < cols; ++c) {
      r.columns.emplace_back(PQfname(res, c));
      types.push_back(PQftype(res, c));
    }
    r.rows.reserve(size_t(rows));
    for (int i = 0; i < rows; ++i) {
      std::vector<Value> row(static_cast<size_t>(cols));
      for (int c = 0; c < cols; ++c) {
        if (PQgetisnull(res, i, c)) continue;
        const char* v = PQgetvalue(res, i, c);
        switch (types[size_t(c)]) {
          case 20:
          case 21:
          case 23:
          case 26:  // int8, int2, int4, oid
            row[size_t(c)] = int64_t(std::strtoll(v, nullptr, 10));
            break;
          case 700:
          case 701:
          case 1700:  // float4, float8, numeric
            row[size_t(c)] = std::strtod(v, nullptr);
            break;
          case 16:  // bool
            row[size_t(c)] = int64_t(v[0] == 't');
            break;
          default: row[size_t(c)] = std::string(v, size_t(PQgetlength(res, i, c)));
        }
      }
      r.rows.push_back(std::move(row));
    }
    PQclear(res);
    return r;
  }

  // Whether a failed statement failed because the server is gone. libpq does not always mark the
  // connection bad at once: a write that meets a closed socket reports "server closed the
  // connection unexpectedly" with no SQLSTATE while PQstatus still says CONNECTION_OK. An error
  // without a SQLSTATE comes from libpq itself, so the socket is read once to find out.
  bool connection_lost(const std::string& state) {
    if (PQstatus(conn_) != CONNECTION_OK || state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0)
      return true;
    return state.empty() && (!PQconsumeInput(conn_) || PQstatus(conn_) != CONNECTION_OK);
  }

  // Throws a DbError for a failed result, by what the user can do about it.
  void check(PGresult* res, bool user) {
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY) return;
    std::string state = res && PQresultErrorField(res, PG_DIAG_SQLSTATE)
                            ? PQresultErrorField(res, PG_DIAG_SQLSTATE)
                            : "";
    std::string msg = res && PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
                          ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
                          : PQerrorMessage(conn_);
    msg = clean(msg);
    PQclear(res);
    if (connection_lost(state))
      throw DbError("lost the connection to " + name_ + " (" + msg +
                    "): nothing of the unfinished "
                    "transaction was stored");
    char wait[32];
    std::snprintf(wait, sizeof wait, "%g", wait_s_);
    if (state == "55P03")
      throw DbError("database " + name_ + " is locked by another scalea db command (waited " +
                    wait + " s; --wait SECONDS waits longer)");
    if (state == "25006")
      throw DbError(user ? "db query is read-only: " + msg
                         : "database " + name_ + " is read-only (" + msg + "): cannot change it");
    if (state == "42501") throw DbError("permission denied on " + name_ + ": " + msg);
    if (state == "53100") throw DbError("the disk of the server of " + name_ + " is full: " + msg);
    if (state == "42601" && msg.find("multiple commands") != std::string::npos)
      throw DbError("give one SQL statement (db query runs one at a time)");
    if (user) throw DbError("query failed: " + msg);
    throw DbError("database " + name_ + ": " + msg);
  }
};

}  // namespace

}  // namespace scalea::cli::db

// The module's one entry point, found with dlsym by open_postgresql (database.cpp). Throws DbError
// as the rest of the backend does.
extern "C" __attribute__((visibility("default"))) scalea::cli::db::Database* scalea_open_postgresql(
    const std::string& url, double wait_s) {
  return new scalea::cli::db::PgDb(url, wait_s);
}
