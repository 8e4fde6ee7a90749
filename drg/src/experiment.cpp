#include "scalea/drg/experiment.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>

#include "file_access.hpp"
#include "layout.hpp"
#include "scalea/drg/names.hpp"
#include "rank_file_parser.hpp"
#include "settlement.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

std::string Region::label() const {
  if (fmt::region_kind_has(kind, fmt::kNamed) && !name.empty()) return name;
  if (kind == RegionKind::Function) return short_function_name(function);  // known by its code
  std::string_view sub = fmt::subkind_label(kind, subkind);
  return std::string(sub.empty() ? fmt::region_kind_label(kind) : sub);
}

namespace {

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

std::string Region::location() const {
  if (!file.empty()) return line ? base_name(file) + ":" + std::to_string(line) : base_name(file);
  if (module.empty() || (address == 0 && symbol.empty())) return "";
  if (kind == RegionKind::Function && !label().empty()) return "";
  // C++ names shortened, the whole cut to a label's width (docs/symbols.md, "Labels").
  std::string where = symbol.empty() ? base_name(module) + "+" + hex(address)
                      : body         ? short_function_name(symbol)
                                     : short_function_name(symbol) + "+" + hex(symbol_offset);
  if (!function.empty() && function != symbol)
    where = short_function_name(function) + " (" + where + ")";
  return elide_middle(where, kMaxNameLength);
}

int Experiment::metric(const std::string& name) const {
  for (size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i] == name) return int(i);
  return -1;
}

int Experiment::ranks() const {
  int r = 0;
  for (const ThreadTree& t : threads) r = std::max(r, t.rank + 1);
  return std::max(r, 1);
}

bool Experiment::complete() const { return meta.value("complete", false); }

namespace {

Experiment load(const std::string& dir, const LoadOptions& options, const FileAccess& access);

// A file name from meta.json: a plain name inside the experiment directory.
bool plain_file_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 255) return false;
  for (char c : name)
    if (c == '/' || c == '\0') return false;
  return true;
}

bool is_uint(const nlohmann::json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

}  // namespace

nlohmann::json parse_meta(const std::string& name, const std::vector<char>& bytes) {
  if (bytes.size() > kMaxMetaBytes) throw LoadError(name + ": too large for a meta file");
  nlohmann::json meta = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (meta.is_discarded()) throw LoadError(name + ": not valid JSON");
  if (!meta.is_object()) throw LoadError(name + ": not a JSON object");
  auto fail = [&](const std::string& problem) { throw LoadError(name + ": " + problem); };
  auto f = meta.find("format");
  if (f == meta.end() || !f->is_string() || *f != "scalea-experiment")
    fail("not a scalea experiment");
  auto v = meta.find("format_version");
  if (v == meta.end() || !v->is_number_integer()) fail("format_version missing or not an integer");
  if (*v < fmt::kOldestVersion || *v > fmt::kVersion)
    fail("unsupported format version " + std::to_string(v->get<int64_t>()) +
         ", this scalea reads versions " + std::to_string(fmt::kOldestVersion) + " to " +
         std::to_string(fmt::kVersion));
  auto files = meta.find("files");
  if (files == meta.end() || !files->is_array() || files->empty()) fail("lists no data files");
  for (const auto& x : *files) {
    if (!x.is_string()) fail("bad file entry (not a string)");
    if (!plain_file_name(x.get<std::string>())) fail("bad file name " + x.get<std::string>());
  }
  if (meta.contains("definitions") && (!meta["definitions"].is_string() ||
                                       !plain_file_name(meta["definitions"].get<std::string>())))
    fail("bad definitions entry");
  // Fields the reports read: wrong types would surface as type errors far from the loader.
  for (const char* key : {"tool_version", "cwd", "host", "start_time", "end_time", "finished_by",
                          "program_start", "omp_num_threads"})
    if (meta.contains(key) && !meta[key].is_string()) fail(std::string(key) + " is not a string");
  for (const char* key : {"ranks", "threads", "max_team_size", "pid"})
    if (meta.contains(key) && !is_uint(meta[key])) fail(std::string(key) + " is not a count");
  if (meta.contains("complete") && !meta["complete"].is_boolean())
    fail("complete is not a boolean");
  if (meta.contains("command")) {
    if (!meta["command"].is_array()) fail("command is not a list");
    for (const auto& a : meta["command"])
      if (!a.is_string()) fail("command holds a non-string");
  }
  for (const char* key : {"notes"})
    if (meta.contains(key)) {
      if (!meta[key].is_array()) fail(std::string(key) + " is not a list");
      for (const auto& a : meta[key])
        if (!a.is_string()) fail(std::string(key) + " holds a non-string");
    }
  if (meta.contains("clock")) {
    const auto& c = meta["clock"];
    if (!c.is_object()) fail("clock is not an object");
    if (c.contains("source") && !c["source"].is_string()) fail("clock.source is not a string");
    for (const char* key : {"ns_per_tick", "duration_s"})
      if (c.contains(key) && !c[key].is_number())
        fail(std::string("clock.") + key + " is not a number");
  }
  if (meta.contains("openmp")) {
    const auto& o = meta["openmp"];
    if (!o.is_object()) fail("openmp is not an object");
    for (const char* key : {"runtime", "runtime_path"})
      if (o.contains(key) && !o[key].is_string())
        fail(std::string("openmp.") + key + " is not a string");
    if (o.contains("callbacks") && !o["callbacks"].is_object())
      fail("openmp.callbacks is not an object");
  }
  for (const char* key : {"environment", "anomalies", "open_at_end"})
    if (meta.contains(key) && !meta[key].is_object()) fail(std::string(key) + " is not an object");
  return meta;
}

Experiment load_experiment(const std::string& dir, const LoadOptions& options) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0)
    throw LoadError(dir + ": no such experiment (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw LoadError(dir + ": not an experiment directory");
  return load(dir, options, FileAccess{read_file_into, read_part_into, file_size, directory_names});
}

Experiment load_experiment(const std::string& dir, const LoadOptions& options,
                           const FileReader& read) {
  return load(dir, options, reader_access(read));
}

namespace {

Experiment load(const std::string& dir, const LoadOptions& options, const FileAccess& access) {
  std::vector<char> bytes;  // the serial path's buffer
  auto read = [&](const std::string& path) -> const std::vector<char>& {
    access.whole(path, bytes);
    return bytes;
  };
  Experiment e;
  Listing listing = list_files(dir, e, options, read);
  const std::vector<Piece> pieces =
      data_pieces(access, dir, dir + "/" + fmt::kMetaFile, e.meta, listing.names);
  const FileDefinitions& shared = listing.shared;
  RankCheck rank_check(listing.declared_ranks);
  auto check_rank = [&](const std::string& path, size_t before) {
    rank_check(path, e.threads, before);
  };
  auto parse_into_e = [&](const Piece& piece) {
    size_t before = e.threads.size();
    read_piece(access, piece, bytes);
    parse_rank_file(piece.name, bytes, e, options, shared.present ? &shared : nullptr);
    check_rank(piece.name, before);
  };
  unsigned workers = options.threads
                         ? options.threads
                         : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  if (!shared.present || workers <= 1 || pieces.size() < 4) {
    for (const Piece& piece : pieces) parse_into_e(piece);
  } else {
    // Threads-only rank files (the MPI layout) parse independently: each worker fills its own
    // Experiment, seeded with the unified definitions; results are merged in file order, so the
    // outcome (and the first error reported) is the serial one.
    std::vector<std::optional<Experiment>> parts(pieces.size());
    std::vector<std::exception_ptr> errors(pieces.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      std::vector<char> buffer;  // this worker's
      for (size_t i; (i = next.fetch_add(1)) < pieces.size();) {
        try {
          Experiment p = definitions_of(e);
          read_piece(access, pieces[i], buffer);
          parse_rank_file(pieces[i].name, buffer, p, options, &shared);
          parts[i] = std::move(p);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < std::min<size_t>(workers, pieces.size()); ++w) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (errors[i]) std::rethrow_exception(errors[i]);
      Experiment& p = *parts[i];
      if (p.regions.size() !=
          e.regions.size()) {  // the file brought its own regions: redo serially
        parse_into_e(pieces[i]);
        continue;
      }
      size_t before = e.threads.size();
      for (ThreadTree& t : p.threads) e.threads.push_back(std::move(t));
      parts[i].reset();
      check_rank(pieces[i].name, before);
    }
  }
  if (e.threads.empty()) throw LoadError(dir + ": the experiment holds no threads");
  Settlement settled;
  auto in_place = [&](const std::function<void(ThreadTree&)>& f) {
    for (ThreadTree& t : e.threads) f(t);
  };
  settle_regions(e, options, settled, Observers{in_place, nullptr, nullptr}, in_place);
  return e;
}

}  // namespace

}  // namespace scalea::drg
