// What both backends share: values, the database's name and its masking, batched statements.
#include "database.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include "output/process.hpp"

namespace scalea::cli::db {

Value real(double v) { return std::isfinite(v) ? Value(v) : Value(); }
Value text_or_null(const std::string& s) { return s.empty() ? Value() : Value(s); }

bool is_null(const Value& v) { return std::holds_alternative<std::monostate>(v); }

double as_double(const Value& v, double fallback) {
  if (auto* i = std::get_if<int64_t>(&v)) return double(*i);
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* s = std::get_if<std::string>(&v)) {
    char* end = nullptr;
    double x = std::strtod(s->c_str(), &end);
    return end != s->c_str() ? x : fallback;
  }
  return fallback;
}

int64_t as_int(const Value& v, int64_t fallback) {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* d = std::get_if<double>(&v)) return int64_t(*d);
  if (auto* s = std::get_if<std::string>(&v)) {
    char* end = nullptr;
    long long x = std::strtoll(s->c_str(), &end, 10);
    return end != s->c_str() ? int64_t(x) : fallback;
  }
  return fallback;
}

std::string as_text(const Value& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  return "";
}

bool is_postgresql(const std::string& spec) {
  return spec.rfind("postgresql://", 0) == 0 || spec.rfind("postgres://", 0) == 0;
}

std::string database_spec(const std::string& option) {
  if (!option.empty()) return option;
  if (const char* env = std::getenv("SCALEA_DB"); env && *env) return env;
  const char* data = std::getenv("XDG_DATA_HOME");
  if (data && *data == '/') return std::string(data) + "/scalea/experiments.db";
  const char* home = std::getenv("HOME");
  if (!home || !*home) throw DbError("no database given (--db or SCALEA_DB) and HOME is not set");
  return std::string(home) + "/.local/share/scalea/experiments.db";
}

namespace {

// Where the password of a postgresql:// URL is: [begin, end) ranges of the text.
std::vector<std::pair<size_t, size_t>> password_ranges(const std::string& url) {
  std::vector<std::pair<size_t, size_t>> out;
  if (!is_postgresql(url)) return out;
  size_t start = url.find("://") + 3;
  size_t query = url.find('?', start);
  size_t end = query == std::string::npos ? url.size() : query;
  size_t at = url.rfind('@', end == 0 ? 0 : end - 1);
  if (at != std::string::npos && at >= start) {
    size_t colon = url.find(':', start);
    if (colon != std::string::npos && colon < at) out.emplace_back(colon + 1, at);
  }
  for (size_t p = query; p != std::string::npos && p < url.size();) {
    size_t amp = url.find('&', p + 1);
    size_t stop = amp == std::string::npos ? url.size() : amp;
    const std::string key = "password=";
    if (url.compare(p + 1, key.size(), key) == 0) out.emplace_back(p + 1 + key.size(), stop);
    p = amp;
  }
  return out;
}

std::string percent_decoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit((unsigned char)s[i + 1]) &&
        std::isxdigit((unsigned char)s[i + 2])) {
      out += char(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string mask_url(const std::string& spec) {
  std::string out = spec;
  auto ranges = password_ranges(spec);
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
    out.replace(it->first, it->second - it->first, "***");
  return out;
}

std::string mask_secrets(const std::string& spec, std::string text) {
  for (auto [b, e] : password_ranges(spec)) {
    std::string raw = spec.substr(b, e - b);
    for (const std::string& secret : {raw, percent_decoded(raw)}) {
      if (secret.empty()) continue;
      for (size_t p = text.find(secret); p != std::string::npos; p = text.find(secret, p + 3))
        text.replace(p, secret.size(), "***");
    }
  }
  return text;
}

std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\t')) ++i;
    out += "; ";
  }
  return out;
}

namespace {

// Each backend is a module beside the tool libraries, loaded for the first database of its kind:
// the command's every start (scalea run's included) would otherwise pay the dynamic linking of
// its client library (libpq and its TLS, Kerberos and LDAP libraries; SQLite's 1,500 symbol
// bindings). The modules take the rest of the database layer (DbError, the Database base,
// mask_secrets) from the executable, which exports it.
template <typename Open>
Open backend_entry(const char* file, const char* entry, const std::string& what,
                   const std::string& otherwise) {
  std::string path = own_library(file);
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module)
    throw DbError(what + " support cannot be loaded (" + std::string(dlerror()) + ")" + otherwise);
  auto open = reinterpret_cast<Open>(dlsym(module, entry));
  if (!open) throw DbError(path + " is not scalea's " + what + " module (no " + entry + ")");
  return open;
}

}  // namespace

std::unique_ptr<Database> open_postgresql(const std::string& url, Access, double wait_s) {
  using Open = Database* (*)(const std::string&, double);
  static Open open = backend_entry<Open>("libscalea-db-postgres.so", "scalea_open_postgresql",
                                         "PostgreSQL", "; an SQLite file works without it");
  return std::unique_ptr<Database>(open(url, wait_s));
}

std::unique_ptr<Database> open_sqlite(const std::string& path, Access access, double wait_s) {
  using Open = Database* (*)(const std::string&, Access, double);
  static Open open =
      backend_entry<Open>("libscalea-db-sqlite.so", "scalea_open_sqlite", "SQLite", "");
  return std::unique_ptr<Database>(open(path, access, wait_s));
}

std::unique_ptr<Database> open_database(const std::string& spec, Access access, double wait_s) {
  if (is_postgresql(spec)) return open_postgresql(spec, access, wait_s);
  // The default file's directory is made on the first write; a file the user named must be in
  // a directory that exists (a typo should not create a tree of directories).
  const char* env = std::getenv("SCALEA_DB");
  bool named = env && *env && spec == env;
  if (access == Access::Write && !named && spec == database_spec("")) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(spec).parent_path(), ec);
  }
  return open_sqlite(spec, access, wait_s);
}

void insert_rows(Database& db, const std::string& table, const std::vector<std::string>& columns,
                 const std::vector<std::vector<Value>>& rows, const std::string& suffix) {
  if (rows.empty()) return;
  // SQLite takes 32,766 parameters per statement, PostgreSQL 65,535.
  const size_t per = std::max<size_t>(1, std::min<size_t>(500, 30000 / columns.size()));
  std::string head = "INSERT INTO " + table + " (";
  std::string tuple = "(";
  for (size_t c = 0; c < columns.size(); ++c) {
    head += (c ? ", " : "") + columns[c];
    tuple += c ? ", ?" : "?";
  }
  head += ") VALUES ";
  tuple += ")";
  std::vector<Value> params;
  for (size_t i = 0; i < rows.size(); i += per) {
    size_t n = std::min(per, rows.size() - i);
    std::string sql = head;
    params.clear();
    for (size_t k = 0; k < n; ++k) {
      sql += k ? ", " + tuple : tuple;
      params.insert(params.end(), rows[i + k].begin(), rows[i + k].end());
    }
    if (!suffix.empty()) sql += " " + suffix;
    db.query(sql, params);
  }
}

Result select_in(Database& db, const std::string& select, const std::string& column,
                 const std::vector<Value>& keys, const std::string& suffix) {
  Result all;
  const size_t per = 500;
  for (size_t i = 0; i < keys.size(); i += per) {
    size_t n = std::min(per, keys.size() - i);
    std::string sql = select + " WHERE " + column + " IN (";
    for (size_t k = 0; k < n; ++k) sql += k ? ", ?" : "?";
    sql += ")" + suffix;
    Result r =
        db.query(sql, std::vector<Value>(keys.begin() + long(i), keys.begin() + long(i + n)));
    if (all.columns.empty()) all.columns = r.columns;
    for (auto& row : r.rows) all.rows.push_back(std::move(row));
  }
  return all;
}

}  // namespace scalea::cli::db
