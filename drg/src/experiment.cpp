#include "scalea/drg/experiment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <tuple>
#include <unordered_set>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <algorithm>

#include "container.hpp"
#include "read_ahead.hpp"
#include "scalea/crc32.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/flat_map.hpp"
#include "scalea/drg/region_key.hpp"
#include "scalea/drg/symbols.hpp"

#ifdef SCALEA_HAVE_ZLIB
#include <zlib.h>
#endif

namespace scalea::drg {

namespace fmt = scalea::format;

// Every thread of an experiment, once: visit(f) calls f on each, in order, as the loader's steps
// so far left it.
using ThreadVisitor = std::function<void(const std::function<void(ThreadTree&)>&)>;

// How the settling observes the threads: `mine` visits this process's share of them, after which
// `combine` turns the notes it took per region (note() below) into those of every thread, and
// `combine_firsts` the values its threads met, each once in the order first met, into those
// every thread met in that order (file order). Alone, `mine` visits every thread and the
// combines are empty.
struct Observers {
  ThreadVisitor mine;
  std::function<void(std::vector<uint32_t>& notes)> combine;
  std::function<void(std::vector<uint64_t>& firsts)> combine_firsts;

  void observe(const std::function<void(ThreadTree&)>& f, std::vector<uint32_t>& notes) const {
    mine(f);
    if (combine) combine(notes);
  }
};

// How the loader rewrote every thread once all were in (settle_regions): the outlined function
// regions dropped, the runtime's return addresses placed, the regions renumbered, the root's
// counters filled. apply() repeats all of it on a thread as parsed, for readers that parse a file
// again after settling (RankFiles).
class Settlement {
 public:
  std::vector<fmt::MetricMerge> merge;  // per column
  size_t metric_count = 0;
  std::vector<size_t> counter_columns;  // columns of hardware counters
  std::vector<char> outlined;           // by region as parsed: dropped, empty when none
  std::vector<char> in_runtime;         // by region before placing: a return into the runtime
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> placed;  // (region, enclosing) -> region
  std::vector<uint32_t> remap;  // old region -> new, empty when not renumbered

  // `scratch`: fold_duplicate_paths's, kept by the caller across threads.
  void fold_outlined(ThreadTree& t, FlatMap64& scratch) const;
  void place(ThreadTree& t) const;
  void renumber(ThreadTree& t, FlatMap64& scratch) const;
  void root_counters(ThreadTree& t) const;
  void apply(ThreadTree& t, FlatMap64& scratch) const;
};

std::string Region::label() const {
  if (fmt::region_kind_has(kind, fmt::kNamed) && !name.empty()) return name;
  if (kind == RegionKind::Function) return function;  // a function known by its code alone
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
  std::string where = symbol.empty() ? base_name(module) + "+" + hex(address)
                      : body         ? symbol
                                     : symbol + "+" + hex(symbol_offset);
  if (!function.empty() && function != symbol) where = function + " (" + where + ")";
  return where;
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

// Bounds-checked reader over one file's bytes: every read names the file when it fails.
class Reader {
 public:
  Reader(const std::string& name, const char* data, size_t size)
      : name_(name), p_(data), end_(data + size) {}
  template <class T>
  T get(const char* what) {
    if (size_t(end_ - p_) < sizeof(T)) fail(std::string("truncated ") + what);
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::string bytes(size_t n, const char* what) {
    if (size_t(end_ - p_) < n) fail(std::string("truncated ") + what);
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  // The next n bytes, checked once, for loops that then read them without further checks.
  const char* take(uint64_t n, const char* what) {
    if (uint64_t(end_ - p_) < n) fail(std::string("truncated ") + what);
    const char* at = p_;
    p_ += n;
    return at;
  }
  Reader sub(uint64_t n, const char* what) {
    if (uint64_t(end_ - p_) < n) fail(std::string("truncated ") + what);
    Reader r(name_, p_, size_t(n));
    p_ += n;
    return r;
  }
  size_t left() const { return size_t(end_ - p_); }
  [[noreturn]] void fail(const std::string& problem) const {
    throw LoadError(name_ + ": " + problem);
  }

 private:
  std::string name_;
  const char* p_;
  const char* end_;
};

// Reads a whole file into `bytes`, reusing its storage: a worker that reads file after file of
// about the same size neither allocates nor clears memory for each.
void read_file_into(const std::string& path, std::vector<char>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) throw LoadError(path + ": cannot read");
  in.seekg(0);
  bytes.resize(static_cast<size_t>(size));
  if (size > 0 && !in.read(bytes.data(), size)) throw LoadError(path + ": cannot read");
}

// Bytes [offset, offset + length) of a file into `bytes` (fewer at the file's end).
void read_part_into(const std::string& path, uint64_t offset, uint64_t length,
                    std::vector<char>& bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  bytes.resize(size_t(length));
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd, bytes.data() + got, size_t(length - got), off_t(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      throw LoadError(path + ": cannot read (" + std::strerror(err) + ")");
    }
    if (n == 0) break;
    got += size_t(n);
  }
  close(fd);
  bytes.resize(got);
}

// Bytes [offset, offset + length) of a file mapped read-only: the page cache's own pages, where
// reading copies them (a third of the CPU of an analysis that reads every file six times). Empty
// (`data()` null) when the range is not all in the file or cannot be mapped: the caller reads it
// instead, and reading says what is wrong. A file truncated by another process while it is mapped
// would fault; experiments are written once, by their own rename, so that is left to the reader.
class Mapping {
 public:
  Mapping() = default;
  // The whole file without `length`.
  Mapping(const std::string& path, uint64_t offset, std::optional<uint64_t> want) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE)), start = offset / page * page;
    const bool sized = fstat(fd, &st) == 0 && uint64_t(st.st_size) >= offset;
    const uint64_t length = want ? *want : sized ? uint64_t(st.st_size) - offset : 0;
    if (sized && length > 0 && offset + length <= uint64_t(st.st_size) &&
        offset + length >= offset) {
      size_ = size_t(offset - start + length);
      void* at = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(start));
      if (at != MAP_FAILED) base_ = static_cast<char*>(at), skip_ = size_t(offset - start);
    }
    close(fd);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  Mapping& operator=(Mapping&& o) noexcept {
    std::swap(base_, o.base_), std::swap(size_, o.size_), std::swap(skip_, o.skip_);
    return *this;
  }
  ~Mapping() {
    if (base_) munmap(base_, size_);
  }
  std::string_view bytes() const {
    return base_ ? std::string_view(base_ + skip_, size_ - skip_) : std::string_view();
  }

 private:
  char* base_ = nullptr;
  size_t size_ = 0, skip_ = 0;
};

uint64_t file_size(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  return uint64_t(st.st_size);
}

std::vector<std::string> directory_names(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) names.emplace_back(e->d_name);
    closedir(d);
  }
  return names;
}

// How the loader gets bytes: from the disk, reusing the caller's buffer, or from a FileReader.
struct FileAccess {
  std::function<void(const std::string& path, std::vector<char>& bytes)> whole;
  // A part of a file (a rank file in a container): as read_part_into.
  std::function<void(const std::string& path, uint64_t offset, uint64_t length,
                     std::vector<char>& bytes)>
      part;
  std::function<uint64_t(const std::string& path)> size;
  // The names in a directory; unset when files come from memory.
  std::function<std::vector<std::string>(const std::string& dir)> list;
  bool on_disk = false;  // the paths are files: a reader may map them (Mapping) instead
};

Experiment load(const std::string& dir, const LoadOptions& options, const FileAccess& access);

// A file name from meta.json: a plain name inside the experiment directory.
bool plain_file_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 255) return false;
  for (char c : name)
    if (c == '/' || c == '\0') return false;
  return true;
}


}  // namespace

uint32_t payload_crc32(const char* data, size_t size) {
  if (fmt::crc32_fast_available()) return fmt::crc32_fast(data, size);
#ifdef SCALEA_HAVE_ZLIB
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(data);
  while (size > 0) {
    uInt n = size > (1u << 30) ? (1u << 30) : uInt(size);
    crc = crc32(crc, p, n);
    p += n;
    size -= n;
  }
  return uint32_t(crc);
#else
  return fmt::crc32_update(0, data, size);
#endif
}

namespace {

// Rebuilds a thread's tree so that every call path has one node: nodes whose regions became one
// (the same source position, inlined copies, `remap`) are folded into the first, metric by metric
// (the METR merge rule), and nodes of `drop`ped regions vanish, their children attaching to their
// parent (merging with its children of the same region). `remap` (old region -> new) and `drop`
// (by old region) may be null; `first` is scratch, kept by the caller across threads.
void fold_duplicate_paths(ThreadTree& t, const std::vector<fmt::MetricMerge>& merge,
                          FlatMap64& first, const std::vector<uint32_t>* remap = nullptr,
                          const std::vector<char>* drop = nullptr) {
  const size_t nm = merge.size();
  first.clear();  // (new parent, region) -> new index
  bool any = remap != nullptr || drop != nullptr;
  for (uint32_t n = 1; n < t.size() && !any; ++n) {
    uint64_t key = uint64_t(t.parent[n]) << 32 | t.region[n];
    any = !first.emplace(key, n).second;
  }
  if (!any) return;
  first.clear();
  std::vector<uint32_t> to(t.size());
  ThreadTree out;
  out.rank = t.rank;
  out.thread = t.thread;
  out.flags = t.flags;
  out.os_tid = t.os_tid;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (n != 0 && drop != nullptr && (*drop)[t.region[n]]) {
      to[n] = to[t.parent[n]];
      continue;
    }
    uint32_t parent = n == 0 ? fmt::kNoIndex : to[t.parent[n]];
    uint32_t region = remap != nullptr ? (*remap)[t.region[n]] : t.region[n];
    uint64_t key = uint64_t(parent) << 32 | region;
    const uint32_t* found = n == 0 ? nullptr : first.find(key);
    const double* v = &t.values[size_t(n) * nm];
    if (!found) {
      to[n] = uint32_t(out.parent.size());
      if (n) first.emplace(key, to[n]);
      out.parent.push_back(parent);
      out.region.push_back(region);
      out.values.insert(out.values.end(), v, v + nm);
      continue;
    }
    to[n] = *found;
    double* into = &out.values[size_t(*found) * nm];
    for (size_t m = 0; m < nm; ++m) {
      switch (merge[m]) {
        case fmt::MetricMerge::Min:
          // A node without a completed visit stores 0, which is no minimum.
          if (v[m] != 0 && (into[m] == 0 || v[m] < into[m])) into[m] = v[m];
          break;
        case fmt::MetricMerge::Max: into[m] = std::max(into[m], v[m]); break;
        default: into[m] += v[m];
      }
    }
  }
  t = std::move(out);
}

// The runtime entry points whose return address a region of this kind records: OMPT reports the
// caller of the libomp (or GOMP-interface) entry, the MPI layer the caller of the MPI function.
// "name*" is a prefix. Used to find the construct when the entry was reached by a tail jump.
EntryFilter runtime_entry(const Region& r) {
  static const std::vector<std::string_view> parallel = {"__kmpc_fork_call*", "GOMP_parallel*"};
  static const std::vector<std::string_view> teams = {"__kmpc_fork_teams", "GOMP_teams*"};
  static const std::vector<std::string_view> barrier = {
      "__kmpc_barrier", "__kmpc_reduce*",     "__kmpc_end_reduce*", "GOMP_barrier*",
      "GOMP_loop_end*", "GOMP_sections_end*", "GOMP_single*"};
  static const std::vector<std::string_view> any_openmp = {"__kmpc_*", "GOMP_*", "omp_*"};
  static const std::vector<std::pair<RegionKind, std::vector<std::string_view>>> by_kind = {
      {RegionKind::Parallel, parallel},
      {RegionKind::Task, {"__kmpc_omp_task", "__kmpc_omp_task_with_deps", "GOMP_task"}},
      {RegionKind::Taskloop, {"__kmpc_taskloop*", "GOMP_taskloop*"}},
      {RegionKind::Taskwait, {"__kmpc_omp_taskwait*", "GOMP_taskwait*"}},
      {RegionKind::Taskgroup, {"__kmpc_taskgroup", "__kmpc_end_taskgroup", "GOMP_taskgroup*"}},
      {RegionKind::BarrierExplicit, barrier},
      {RegionKind::BarrierImplementation, barrier},
      {RegionKind::Reduction, {"__kmpc_reduce*", "__kmpc_end_reduce*", "GOMP_*"}},
      {RegionKind::Loop,
       {"__kmpc_for_static*", "__kmpc_dispatch_*", "__kmpc_dist_*", "GOMP_loop_*"}},
      {RegionKind::Sections,
       {"__kmpc_sections_init", "__kmpc_end_sections", "__kmpc_for_static*", "__kmpc_dispatch_*",
        "GOMP_sections*"}},
      {RegionKind::Single, {"__kmpc_single", "__kmpc_end_single", "GOMP_single*"}},
      {RegionKind::Masked,
       {"__kmpc_master", "__kmpc_end_master", "__kmpc_masked", "__kmpc_end_masked"}},
      {RegionKind::Critical, {"__kmpc_critical*", "__kmpc_end_critical", "GOMP_critical*"}},
      {RegionKind::Lock, {"omp_*"}},
      {RegionKind::NestLock, {"omp_*"}},
      {RegionKind::Atomic, {"__kmpc_atomic*", "GOMP_atomic*"}},
      {RegionKind::Ordered,
       {"__kmpc_ordered", "__kmpc_end_ordered", "__kmpc_doacross*", "GOMP_ordered*",
        "GOMP_doacross*"}},
      {RegionKind::Cancel, {"__kmpc_cancel*", "GOMP_cancel*"}},
  };
  if (r.kind == RegionKind::Mpi) {
    // An MPI call site calls MPI_X or, through a profiling library, PMPI_X.
    return [name = r.name](std::string_view symbol) {
      return symbol == name ||
             (symbol.size() == name.size() + 1 && symbol[0] == 'P' && symbol.substr(1) == name);
    };
  }
  const std::vector<std::string_view>* names = &any_openmp;
  if (r.kind == RegionKind::BarrierImplicit) {
    // The join barrier reports the parallel construct's address, the teams barrier the teams'.
    names = r.subkind == uint16_t(fmt::BarrierFlavour::Parallel) ? &parallel
            : r.subkind == uint16_t(fmt::BarrierFlavour::Teams)  ? &teams
                                                                 : &barrier;
  } else {
    for (const auto& [kind, list] : by_kind)
      if (kind == r.kind) names = &list;
  }
  return [names](std::string_view symbol) {
    for (std::string_view n : *names) {
      bool prefix = n.back() == '*';
      if (prefix ? symbol.substr(0, n.size() - 1) == n.substr(0, n.size() - 1) : symbol == n)
        return true;
    }
    return false;
  };
}

bool has_source(const Region& r) { return !r.file.empty() && r.line; }
// The copies of one construct are one region when their source keys (with full paths: one build)
// are equal, for the regions that resolution placed: at a source position, else at the resolved
// code address (a return address, or the jump the runtime was entered by), so that return
// addresses of calls that reached one tail jump are one region. Others keep their exact key.
std::optional<SourceKey> placed_key(const Region& r) {
  if (!has_source(r) && r.code == 0) return std::nullopt;
  return source_key(r, Paths::Full);
}
// A region that several recorded addresses became keeps the lowest of them (of its module), so
// that the address does not depend on which copy a run met first.
void keep_lowest_address(Region& kept, const Region& other) {
  if (other.module == kept.module && other.address < kept.address) kept.address = other.address;
}
// The resolved code of a region: where it is in its module, whatever the line tables say.
void set_code(Region& r, const SourceLocation& loc) {
  r.code = loc.address;
  r.symbol = loc.symbol;
  r.symbol_offset = loc.symbol_offset;
}

}  // namespace

namespace {

// One rank file read section by section (docs/experiment-format.md): the header, then each
// section into the experiment; the definitions it held are returned for threads-only files.
class RankFileParser {
 public:
  RankFileParser(const std::string& name, std::string_view bytes, Experiment& into,
                 const LoadOptions& options, const FileDefinitions* shared)
      : file_(name, bytes.data(), bytes.size()),
        bytes_(bytes),
        into_(into),
        options_(options),
        shared_(shared) {}

  FileDefinitions parse() {
    read_header();
    for (uint32_t s = 0; s < header_.section_count; ++s) {
      auto sh = file_.get<fmt::SectionHeader>("section header");
      Reader body = file_.sub(sh.size, "section");
      if (sh.tag == fmt::kTagStrings) read_strings(body, sh);
      else if (sh.tag == fmt::kTagModules) read_modules(body, sh);
      else if (sh.tag == fmt::kTagRegions) read_regions(body, sh);
      else if (sh.tag == fmt::kTagMetrics) read_metrics(body, sh);
      else if (sh.tag == fmt::kTagThreads) read_threads(body, sh);
      // unknown sections are skipped: a newer minor writer may add some
    }
    if (file_.left() != 0)
      file_.fail(std::to_string(file_.left()) + " bytes after the last section");
    bool defs = have_[0] && have_[2] && have_[3];
    if (!defs && !have_[4]) file_.fail("missing section (neither definitions nor threads)");
    if ((have_[0] || have_[2] || have_[3]) && !defs) {
      std::string missing;
      for (int i : {0, 2, 3})
        if (!have_[i]) missing += std::string(missing.empty() ? "" : ", ") + kSectionName[i];
      file_.fail("missing section " + missing);
    }
    own_.present = defs;
    return std::move(own_);
  }

 private:
  static constexpr const char* kSectionName[5] = {"STRG", "MODL", "REGN", "METR", "THRD"};

  void read_header() {
    if (bytes_.size() < 8 || std::memcmp(bytes_.data(), fmt::kMagic, 8) != 0)
      file_.fail("not a scalea sub-DRG file (bad magic)");
    header_ = file_.get<fmt::FileHeader>("header");
    if (header_.version != fmt::kVersion)
      file_.fail("format version " + std::to_string(header_.version) +
                 ", this scalea reads version " + std::to_string(fmt::kVersion));
    if (header_.header_size != sizeof(fmt::FileHeader)) file_.fail("bad header size");
    if (header_.payload_size != file_.left())
      file_.fail("truncated or padded: payload is " + std::to_string(file_.left()) +
                 " bytes, header says " + std::to_string(header_.payload_size));
    const char* payload = bytes_.data() + sizeof(fmt::FileHeader);
    if (options_.verify_checksums && payload_crc32(payload, file_.left()) != header_.payload_crc32)
      file_.fail("checksum mismatch (corrupt file)");
    if (header_.rank < -1 || header_.rank > kMaxRank)
      file_.fail("rank " + std::to_string(header_.rank) + " out of range");
    // Every section header takes 16 bytes: a count beyond that is a lie, not a reason to loop.
    if (uint64_t(header_.section_count) * sizeof(fmt::SectionHeader) > file_.left())
      file_.fail("section count " + std::to_string(header_.section_count) + " exceeds the file");
  }

  void once(Reader& r, int which) {
    if (which < 4 && have_[which])
      r.fail(std::string("duplicate ") + kSectionName[which] + " section");
    have_[which] = true;
  }

  const std::string& str(Reader& r, uint32_t idx, const char* what) const {
    if (idx >= strings_.size())
      r.fail(std::string(what) + ": string index " + std::to_string(idx) + " out of range");
    return strings_[idx];
  }

  void read_strings(Reader& body, const fmt::SectionHeader& sh) {
    once(body, 0);
    if (sh.count > sh.size / 4) body.fail("string count too large");
    strings_.reserve(sh.count);
    for (uint32_t i = 0; i < sh.count; ++i) {
      auto len = body.get<uint32_t>("string length");
      strings_.push_back(body.bytes(len, "string"));
    }
    if (strings_.empty() || !strings_[0].empty()) body.fail("string table must start with \"\"");
  }

  void read_modules(Reader& body, const fmt::SectionHeader& sh) {
    once(body, 1);
    if (uint64_t(sh.count) * sizeof(fmt::ModuleRecord) != sh.size)
      body.fail("bad module table size");
    modules_.reserve(sh.count);
    for (uint32_t i = 0; i < sh.count; ++i) {
      auto m = body.get<fmt::ModuleRecord>("module");
      modules_.push_back(str(body, m.path, "module"));
    }
  }

  // The file's region record i as a region, its source resolved from the module when asked.
  Region region_of(Reader& body, uint32_t i, const fmt::RegionRecord& rr) {
    if (rr.kind >= fmt::kRegionKindCount)
      body.fail("region " + std::to_string(i) + ": unknown kind " + std::to_string(rr.kind));
    Region r;
    r.kind = RegionKind(rr.kind);
    r.subkind = rr.subkind;
    r.name = str(body, rr.name, "region name");
    r.file = str(body, rr.file, "region file");
    r.function = str(body, rr.function, "region function");
    r.line = rr.line;
    if (rr.module != fmt::kNoIndex) {
      if (rr.module >= modules_.size())
        body.fail("region " + std::to_string(i) + ": module index " + std::to_string(rr.module) +
                  " out of range");
      r.module = modules_[rr.module];
    }
    r.address = rr.address;
    return r;
  }

  void resolve(Region& r) {
    if (!options_.resolve_symbols || r.module.empty() || !r.address) return;
    SourceLocation loc;
    // OMPT and the MPI layer give return addresses of calls into the runtime (followed to the
    // construct when it reached the runtime by a tail jump); -finstrument-functions gives the
    // function's entry, which is not a return address.
    bool found = r.kind == RegionKind::Function
                     ? resolver_.resolve(r.module, r.address, false, loc)
                     : resolver_.resolve_call_site(r.module, r.address, runtime_entry(r), loc);
    if (!found) return;
    if (r.file.empty()) r.file = loc.file;
    if (!r.line) r.line = loc.line;
    if (r.function.empty()) r.function = loc.function;
    set_code(r, loc);
  }

  void read_regions(Reader& body, const fmt::SectionHeader& sh) {
    once(body, 2);
    if (uint64_t(sh.count) * sizeof(fmt::RegionRecord) != sh.size)
      body.fail("bad region table size");
    if (sh.count == 0) body.fail("empty region table");
    std::vector<uint32_t>& region_map = own_.region_map;
    region_map.reserve(sh.count);
    // Regions at the same source position are one region: a construct the compiler copied
    // (inlining) or a rank whose table kept another address still merges with the others.
    std::map<ExactKey, uint32_t> known;
    std::map<SourceKey, uint32_t> placed;
    for (uint32_t i = 0; i < into_.regions.size(); ++i) {
      const Region& r = into_.regions[i];
      known.emplace(exact_key(r), i);
      if (auto k = placed_key(r)) placed.emplace(std::move(*k), i);
    }
    for (uint32_t i = 0; i < sh.count; ++i) {
      Region r = region_of(body, i, body.get<fmt::RegionRecord>("region"));
      ExactKey key = exact_key(r);
      auto it = known.find(key);
      if (it != known.end()) {
        region_map.push_back(it->second);
        continue;
      }
      resolve(r);
      std::optional<SourceKey> where = placed_key(r);
      auto same = where ? placed.find(*where) : placed.end();
      if (same != placed.end()) {
        keep_lowest_address(into_.regions[same->second], r);
        known.emplace(std::move(key), same->second);
        region_map.push_back(same->second);
        continue;
      }
      uint32_t id = uint32_t(into_.regions.size());
      if (where) placed.emplace(std::move(*where), id);
      into_.regions.push_back(std::move(r));
      known.emplace(key, id);
      region_map.push_back(id);
    }
  }

  void read_metrics(Reader& body, const fmt::SectionHeader& sh) {
    once(body, 3);
    if (uint64_t(sh.count) * sizeof(fmt::MetricRecord) != sh.size)
      body.fail("bad metric table size");
    std::vector<std::string> names;
    std::vector<fmt::MetricMerge> merge;
    std::vector<fmt::MetricType> type;
    own_.metrics.reserve(sh.count);
    for (uint32_t i = 0; i < sh.count; ++i) {
      auto m = body.get<fmt::MetricRecord>("metric");
      if (m.type > 1 || m.merge > 2) body.fail("metric " + std::to_string(i) + ": bad descriptor");
      const std::string& n = str(body, m.name, "metric name");
      if (n.empty()) body.fail("metric " + std::to_string(i) + ": no name");
      for (const std::string& o : names)
        if (o == n) body.fail("duplicate metric column " + n);
      own_.metrics.push_back(m);
      names.push_back(n);
      merge.push_back(fmt::MetricMerge(m.merge));
      type.push_back(fmt::MetricType(m.type));
    }
    if (!into_.metrics_defined) {
      into_.metrics = std::move(names);
      into_.metric_merge = std::move(merge);
      into_.metric_type = std::move(type);
      into_.metrics_defined = true;
    } else if (into_.metrics != names || into_.metric_merge != merge) {
      body.fail("metric columns differ from the other files'");
    }
  }

  void read_threads(Reader& body, const fmt::SectionHeader& sh) {
    have_[4] = true;
    bool local = have_[0] && have_[2] && have_[3];
    if (!local && (have_[0] || have_[2] || have_[3])) body.fail("thread section before its tables");
    if (!local && !shared_) body.fail("thread section without definitions");
    const std::vector<uint32_t>& regmap = local ? own_.region_map : shared_->region_map;
    const std::vector<fmt::MetricRecord>& mrec = local ? own_.metrics : shared_->metrics;
    const size_t nm = mrec.size();
    if (nm != into_.metrics.size()) body.fail("metric columns differ from the definitions'");
    // Each thread takes at least its header: a count beyond that cannot be honest.
    if (uint64_t(sh.count) * sizeof(fmt::ThreadRecord) > body.left())
      body.fail("thread count " + std::to_string(sh.count) + " exceeds the section");
    std::vector<char> f64(nm);
    std::vector<fmt::MetricMerge> merge(nm);
    for (size_t m = 0; m < nm; ++m) {
      f64[m] = fmt::MetricType(mrec[m].type) == fmt::MetricType::F64;
      merge[m] = fmt::MetricMerge(mrec[m].merge);
    }
    for (uint32_t ti = 0; ti < sh.count; ++ti) {
      ThreadTree t = read_thread(body, regmap, f64);
      fold_duplicate_paths(t, merge, paths_seen_);
      into_.threads.push_back(std::move(t));
    }
  }

  ThreadTree read_thread(Reader& body, const std::vector<uint32_t>& regmap,
                         const std::vector<char>& f64) {
    const size_t nm = f64.size();
    auto tr = body.get<fmt::ThreadRecord>("thread header");
    std::string what = "thread " + std::to_string(tr.index);
    for (uint32_t o : seen_threads_)
      if (o == tr.index) body.fail(what + " appears twice");
    seen_threads_.push_back(tr.index);
    uint64_t need = uint64_t(tr.node_count) * (sizeof(fmt::NodeRecord) + 8 * nm);
    if (need > body.left()) body.fail(what + ": truncated nodes");
    if (tr.node_count == 0) body.fail(what + " has no root");
    ThreadTree t;
    t.rank = header_.rank;
    t.thread = tr.index;
    t.flags = tr.flags;
    t.os_tid = tr.os_tid;
    t.parent.resize(tr.node_count);
    t.region.resize(tr.node_count);
    t.values.resize(size_t(tr.node_count) * nm);
    const char* at = body.take(need, "nodes");
    for (uint32_t n = 0; n < tr.node_count; ++n) {
      fmt::NodeRecord nr;
      std::memcpy(&nr, at, sizeof nr);
      at += sizeof nr;
      if (n == 0 ? nr.parent != fmt::kNoIndex : nr.parent >= n)
        body.fail(what + " node " + std::to_string(n) + ": bad parent " +
                  std::to_string(nr.parent) +
                  (n == 0 ? " (root must have none)" : " (must precede the node)"));
      if (nr.region >= regmap.size())
        body.fail(what + " node " + std::to_string(n) + ": region " + std::to_string(nr.region) +
                  " out of range");
      t.parent[n] = nr.parent;
      t.region[n] = regmap[nr.region];
      double* out = &t.values[size_t(n) * nm];
      for (size_t m = 0; m < nm; ++m, at += 8) {
        uint64_t raw;
        std::memcpy(&raw, at, 8);
        double v;
        if (f64[m]) std::memcpy(&v, &raw, 8);
        else v = double(raw);
        out[m] = v;
      }
    }
    return t;
  }

  Reader file_;
  std::string_view bytes_;
  Experiment& into_;
  const LoadOptions& options_;
  const FileDefinitions* shared_;
  fmt::FileHeader header_{};
  std::vector<std::string> strings_;
  std::vector<std::string> modules_;
  FileDefinitions own_;
  SymbolResolver resolver_;
  bool have_[5] = {};
  std::vector<uint32_t> seen_threads_;  // thread indices of this file, to reject duplicates
  FlatMap64 paths_seen_;                // scratch of fold_duplicate_paths
};

}  // namespace

FileDefinitions parse_rank_file(const std::string& name, const std::vector<char>& bytes,
                                Experiment& into, const LoadOptions& options,
                                const FileDefinitions* shared) {
  return RankFileParser(name, {bytes.data(), bytes.size()}, into, options, shared).parse();
}

namespace {

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
  if (*v != fmt::kVersion)
    fail("unsupported format version " + std::to_string(v->get<int64_t>()) +
         ", this scalea reads version " + std::to_string(fmt::kVersion));
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
  for (const char* key : {"environment", "anomalies"})
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

namespace {

// Files from a FileReader. A container is asked for its size and then part by part: the reader
// gives it once, and the parts come from that copy (readers may serve files in request order, as
// the fuzzer's does).
FileAccess reader_access(const FileReader& read) {
  struct Container {
    std::mutex lock;
    std::string path;
    std::vector<char> bytes;
  };
  auto container = std::make_shared<Container>();
  auto with_container = [container, read](
                            const std::string& path,
                            const std::function<void(const std::vector<char>&)>& use) {
    std::lock_guard<std::mutex> hold(container->lock);
    if (container->path != path) {
      container->bytes = read(path);
      container->path = path;
    }
    use(container->bytes);
  };
  FileAccess access;
  access.whole = [read](const std::string& path, std::vector<char>& bytes) { bytes = read(path); };
  access.part = [with_container](const std::string& path, uint64_t offset, uint64_t length,
                                 std::vector<char>& bytes) {
    with_container(path, [&](const std::vector<char>& all) {
      uint64_t from = std::min<uint64_t>(offset, all.size()),
               to = std::min<uint64_t>(offset + length, all.size());
      bytes.assign(all.begin() + std::ptrdiff_t(from), all.begin() + std::ptrdiff_t(to));
    });
  };
  access.size = [with_container](const std::string& path) {
    uint64_t size = 0;
    with_container(path, [&](const std::vector<char>& all) { size = all.size(); });
    return size;
  };
  return access;
}

}  // namespace

Experiment load_experiment(const std::string& dir, const LoadOptions& options,
                           const FileReader& read) {
  return load(dir, options, reader_access(read));
}

namespace {

// Strings as small ids, for per-node work without string compares.
class Names {
 public:
  uint32_t id(const std::string& s) {
    auto [it, fresh] = ids_.emplace(s, uint32_t(text_.size()));
    if (fresh) text_.push_back(s);
    return it->second;
  }
  const std::string& text(uint32_t id) const { return text_[id]; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> text_;
};

// One value seen over many nodes: kUnset, the value, or kConflict when two differed.
constexpr uint32_t kUnset = fmt::kNoIndex, kConflict = fmt::kNoIndex - 1;
void note(uint32_t& slot, uint32_t value) {
  if (slot == kUnset) slot = value;
  else if (slot != value) slot = kConflict;
}

// -finstrument-functions records the bodies the compiler outlined for constructs as functions,
// two levels below every parallel region and task: they vanish, their children attach to the
// construct. Their time is inside the construct's (its inclusive time), so nothing is lost: the
// construct's exclusive time (time minus its children's) grows by theirs.
void fold_outlined_functions(const Experiment& e, Settlement& s, const ThreadVisitor& visit) {
  std::vector<char> drop(e.regions.size(), 0);
  bool any = false;
  for (size_t i = 0; i < e.regions.size(); ++i) {
    const Region& r = e.regions[i];
    if (r.kind == RegionKind::Function &&
        (is_outlined_function(r.label()) || is_outlined_function(r.symbol)))
      drop[i] = any = true;
  }
  if (!any) return;
  s.outlined = std::move(drop);
  FlatMap64 scratch;
  visit([&](ThreadTree& t) { s.fold_outlined(t, scratch); });
}

bool has_body(RegionKind k) {
  return k == RegionKind::Parallel || k == RegionKind::Task || k == RegionKind::Taskloop;
}

// The outlined body each parallel region, task and taskloop runs, when the calling contexts show
// it: the function symbol (.omp_outlined..N, .omp_task_entry..N, main._omp_fn.0) that holds the
// code of the region's children, if they agree. Bodies are told apart by their start address
// (per-file names such as ".omp_outlined." repeat across a program's files).
struct Bodies {
  std::vector<uint32_t> of;         // region -> index in `start`, kUnset or kConflict
  std::vector<uint64_t> start;      // module offset of the body's first instruction
  std::vector<std::string> symbol;  // its name
};
Bodies outlined_bodies(const Experiment& e, const Observers& observers) {
  const size_t nr = e.regions.size();
  Bodies b;
  b.of.assign(nr, kUnset);
  std::vector<char> candidate(nr, 0);
  bool any = false;
  for (size_t i = 0; i < nr; ++i) {
    candidate[i] = has_body(e.regions[i].kind) && !e.regions[i].module.empty();
    any = any || candidate[i];
  }
  if (!any) return b;
  // Per region, once: its module's id and the body its code lies in, if any.
  Names modules;
  std::vector<uint32_t> module(nr), in_body(nr, kUnset);
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> index;  // (module, start) -> body
  for (uint32_t i = 0; i < nr; ++i) {
    const Region& c = e.regions[i];
    module[i] = modules.id(c.module);
    if (c.module.empty() || c.code == 0 || !is_outlined_function(c.symbol)) continue;
    const uint64_t start = c.code - c.symbol_offset;
    auto [it, fresh] = index.emplace(std::make_pair(module[i], start), uint32_t(b.start.size()));
    if (fresh) {
      b.start.push_back(start);
      b.symbol.push_back(c.symbol);
    }
    in_body[i] = it->second;
  }
  observers.observe(
      [&](ThreadTree& t) {
        for (uint32_t n = 1; n < t.size(); ++n) {
          const uint32_t p = t.region[t.parent[n]], c = t.region[n];
          if (candidate[p] && in_body[c] != kUnset && module[c] == module[p])
            note(b.of[p], in_body[c]);
        }
      },
      b.of);
  return b;
}

// The identity of a region the post-pass creates or changes, to find the region it now equals.
bool same_region(const Region& a, const Region& b) {
  // The cheap fields first: this runs against every region.
  if (a.kind != b.kind || a.subkind != b.subkind || has_source(a) != has_source(b)) return false;
  if (!has_source(a) && (a.code == 0 || b.code == 0 || a.body != b.body)) return false;
  return source_key(a, Paths::Full) == source_key(b, Paths::Full);
}

// A construct that ends an outlined body and enters the runtime by a tail jump reports a return
// address inside the runtime (the body returns straight to __kmp_invoke_microtask): such a
// region is placed at that jump in the body of the region it ran in, one region per enclosing
// region (as recorded: a placed region's children keep their pairs). The pairs are placed in the
// order the threads first meet them, in file order; processes sharing the files each observe
// their block and the orders are joined (combine_firsts). Returns whether any pair was placed;
// marks in `moved_from` the runtime regions no node uses any more.
bool place_runtime_returns(Experiment& e, const Bodies& bodies, std::vector<char>& moved_from,
                           Settlement& s, const Observers& observers) {
  std::string runtime_path;
  if (e.meta.is_object() && e.meta.contains("openmp") && e.meta["openmp"].is_object() &&
      e.meta["openmp"].contains("runtime_path") && e.meta["openmp"]["runtime_path"].is_string())
    runtime_path = e.meta["openmp"]["runtime_path"].get<std::string>();
  const size_t nr = e.regions.size();
  std::vector<char> in_runtime(nr, 0);
  bool any = false;
  for (size_t i = 0; i < nr; ++i) {
    const Region& r = e.regions[i];
    in_runtime[i] =
        !has_source(r) && !r.module.empty() && r.kind != RegionKind::Function &&
        ((!runtime_path.empty() && r.module == runtime_path) || r.symbol.rfind("__kmp", 0) == 0);
    any = any || in_runtime[i];
  }
  if (!any || bodies.start.empty()) return false;
  std::vector<uint64_t> firsts;  // (region << 32 | enclosing region), each once
  std::unordered_set<uint64_t> met;
  observers.mine([&](ThreadTree& t) {
    for (uint32_t n = 1; n < t.size(); ++n) {
      const uint32_t x = t.region[n], p = t.region[t.parent[n]];
      if (x >= nr || !in_runtime[x]) continue;
      const uint64_t pair = uint64_t(x) << 32 | p;
      if (met.insert(pair).second) firsts.push_back(pair);
    }
  });
  if (observers.combine_firsts) observers.combine_firsts(firsts);
  SymbolResolver resolver;
  std::vector<char> still_used(nr, 0);
  bool moved = false;
  for (const uint64_t pair : firsts) {
    const uint32_t x = uint32_t(pair >> 32), p = uint32_t(pair);
    uint32_t id = fmt::kNoIndex;
    if (p < nr && bodies.of[p] < kConflict) {
      const uint32_t body = bodies.of[p];
      SourceLocation loc;
      if (resolver.resolve_tail_jump(e.regions[p].module, bodies.start[body],
                                     runtime_entry(e.regions[x]), loc)) {
        Region r = e.regions[x];
        r.module = e.regions[p].module;
        r.address = loc.address;  // the recorded address lay in the runtime
        r.file = loc.file;
        r.line = loc.line;
        r.function = loc.function;
        set_code(r, loc);
        id = uint32_t(e.regions.size());
        for (uint32_t i = 0; i < e.regions.size(); ++i)
          if (same_region(e.regions[i], r)) id = i;
        if (id == e.regions.size()) e.regions.push_back(std::move(r));
      }
    }
    s.placed.emplace(std::make_pair(x, p), id);
    if (id == fmt::kNoIndex) still_used[x] = true;
    else moved = true;
  }
  s.in_runtime = std::move(in_runtime);
  for (const auto& [key, id] : s.placed)
    if (id != fmt::kNoIndex && !still_used[key.first]) moved_from[key.first] = true;
  return moved;
}

// Without line information, the copies of one parallel region or task that inlining made (one
// fork or task-creation call per copy) are one region when they run the same outlined body.
// Regions recorded at the same code address (the join barrier, at its parallel region's) follow.
// Sets remap[i] to the region i is now one with; returns whether any two became one.
bool identify_by_body(Experiment& e, const Bodies& bodies, std::vector<uint32_t>& remap) {
  const size_t nr = std::min(bodies.of.size(), e.regions.size());
  std::vector<uint32_t> body(nr, kUnset);
  std::map<std::pair<std::string, uint64_t>, uint32_t> site_body;  // (module, code) -> body
  for (size_t i = 0; i < nr; ++i) {
    const Region& r = e.regions[i];
    if (has_source(r) || r.body || bodies.of[i] >= kConflict) continue;
    body[i] = bodies.of[i];
    site_body.emplace(std::make_pair(r.module, r.code ? r.code : r.address), body[i]);
  }
  if (site_body.empty()) return false;
  for (size_t i = 0; i < nr; ++i) {
    const Region& r = e.regions[i];
    if (body[i] != kUnset || has_source(r) || r.module.empty()) continue;
    auto it = site_body.find(std::make_pair(r.module, r.code ? r.code : r.address));
    if (it != site_body.end()) body[i] = it->second;
  }
  // Representative of each (kind, subkind, name, module, body): its first region.
  std::map<std::tuple<int, int, std::string, std::string, uint32_t>, uint32_t> group;
  std::vector<std::set<std::string>> functions(nr);  // of the copies, by representative
  bool merged = false;
  for (uint32_t i = 0; i < nr; ++i) {
    if (body[i] >= kConflict) continue;
    const Region& r = e.regions[i];
    auto [it, fresh] =
        group.emplace(std::make_tuple(int(r.kind), int(r.subkind), r.name, r.module, body[i]), i);
    remap[i] = it->second;
    merged = merged || !fresh;
    if (!fresh) keep_lowest_address(e.regions[it->second], r);
    if (!r.function.empty()) functions[it->second].insert(r.function);
  }
  for (auto& [key, rep] : group) {
    Region& r = e.regions[rep];
    r.body = true;
    r.code = bodies.start[std::get<4>(key)];
    r.symbol = bodies.symbol[std::get<4>(key)];
    r.symbol_offset = 0;
    std::string joined;  // copies inlined into different functions: all of them
    for (const std::string& f : functions[rep]) joined += (joined.empty() ? "" : ", ") + f;
    r.function = joined;
  }
  return merged;
}

// Drops the regions that became another (remap[i] != i) or that no node uses any more (`drop`),
// renumbers the rest and folds every thread's tree over the new numbers.
void renumber_regions(Experiment& e, std::vector<uint32_t>& remap, const std::vector<char>& drop,
                      Settlement& s, const ThreadVisitor& visit) {
  const size_t nr = e.regions.size();
  std::vector<uint32_t> index(nr, fmt::kNoIndex);
  std::vector<Region> kept;
  for (uint32_t i = 0; i < nr; ++i)
    if (remap[i] == i && !drop[i]) {
      index[i] = uint32_t(kept.size());
      kept.push_back(std::move(e.regions[i]));
    }
  for (uint32_t i = 0; i < nr; ++i) remap[i] = index[remap[i]];
  e.regions = std::move(kept);
  s.remap = remap;
  FlatMap64 scratch;
  visit([&](ThreadTree& t) { s.renumber(t, scratch); });
}

// Code in an outlined body (.omp_outlined..N, .omp_outlined._debug__, main._omp_fn.0) belongs to
// the function the body was outlined from: the function of the nearest enclosing region in the
// calling context whose code is not outlined (a parallel region's fork, a task's creation). When
// the contexts disagree (copies inlined into different functions, no line information), the
// name the compiler gave the body says it (gcc, LLVM 17+), else it stays the body's name.
void name_outlined_code(Experiment& e, const Observers& observers) {
  const size_t nr = e.regions.size();
  std::vector<char> inside(nr, 0);
  bool any = false;
  for (size_t i = 0; i < nr; ++i) {
    // (A function region's function is the region itself: an outlined body recorded by
    // -finstrument-functions keeps its name when it is kept.)
    inside[i] = e.regions[i].kind != RegionKind::Function && !e.regions[i].outlined &&
                is_outlined_function(e.regions[i].function);
    any = any || inside[i];
  }
  if (!any) return;
  Names names;
  std::vector<uint32_t> own(nr);  // a region's function id, kUnset when it passes its context on
  for (size_t i = 0; i < nr; ++i)
    own[i] = inside[i] || e.regions[i].function.empty() ? kUnset : names.id(e.regions[i].function);
  std::vector<uint32_t> origin(nr, kUnset), context;
  observers.observe(
      [&](ThreadTree& t) {
        context.resize(t.size());
        for (uint32_t n = 0; n < t.size(); ++n) {
          uint32_t r = t.region[n];
          context[n] = own[r] != kUnset ? own[r] : n ? context[t.parent[n]] : kUnset;
          if (inside[r] && context[n] != kUnset) note(origin[r], context[n]);
        }
      },
      origin);
  for (size_t i = 0; i < nr; ++i) {
    if (!inside[i]) continue;
    Region& r = e.regions[i];
    std::string from = origin[i] < kConflict ? names.text(origin[i]) : outlined_origin(r.function);
    if (from.empty()) from = outlined_origin(r.symbol);
    if (from.empty()) continue;
    r.function = from;
    r.outlined = true;
  }
}

// What the loader settles once every thread is in (docs/drg.md, docs/symbols.md). Each step
// decides from every thread as the steps before it left them (`observe` passes over them), and
// rewrites them (`rewrite`); `s` keeps what each rewrite was, so that a reader that parses the
// files again (RankFiles) can rewrite the threads when it reads them instead. Placing the
// runtime's return addresses depends on the order the threads meet each construct: it observes
// the process's block of the threads.
void settle_regions(Experiment& e, const LoadOptions& options, Settlement& s,
                    const Observers& observe, const ThreadVisitor& rewrite) {
  s.merge = e.metric_merge;
  s.metric_count = e.metrics.size();
  s.counter_columns.clear();
  for (size_t i = 0; i < e.metrics.size(); ++i)
    if (e.metrics[i].rfind("papi:", 0) == 0) s.counter_columns.push_back(i);
  if (options.fold_outlined_functions) fold_outlined_functions(e, s, rewrite);
  Bodies bodies = outlined_bodies(e, observe);
  std::vector<char> drop(e.regions.size(), 0);
  bool moved = options.resolve_symbols && place_runtime_returns(e, bodies, drop, s, observe);
  if (moved) rewrite([&](ThreadTree& t) { s.place(t); });
  drop.resize(e.regions.size(), 0);
  std::vector<uint32_t> remap(e.regions.size());
  for (uint32_t i = 0; i < remap.size(); ++i) remap[i] = i;
  bool merged = identify_by_body(e, bodies, remap);
  if (moved || merged) renumber_regions(e, remap, drop, s, rewrite);
  name_outlined_code(e, observe);
  rewrite([&](ThreadTree& t) { s.root_counters(t); });
}

}  // namespace

void Settlement::fold_outlined(ThreadTree& t, FlatMap64& scratch) const {
  if (!outlined.empty()) fold_duplicate_paths(t, merge, scratch, nullptr, &outlined);
}

void Settlement::place(ThreadTree& t) const {
  if (placed.empty()) return;
  // Children first: each pair is looked up with its enclosing region as recorded.
  for (uint32_t n = t.size(); n-- > 1;) {
    const uint32_t x = t.region[n], p = t.region[t.parent[n]];
    if (x >= in_runtime.size() || !in_runtime[x]) continue;
    auto it = placed.find(std::make_pair(x, p));
    if (it != placed.end() && it->second != fmt::kNoIndex) t.region[n] = it->second;
  }
}

void Settlement::renumber(ThreadTree& t, FlatMap64& scratch) const {
  if (!remap.empty()) fold_duplicate_paths(t, merge, scratch, &remap);
}

// The program root does not read counters (a thread's counters are read by the thread itself, and
// its root closes when the run ends): its counter values are its children's sum, not 0 (which made
// its exclusive value negative).
void Settlement::root_counters(ThreadTree& t) const {
  const size_t m = metric_count;
  if (counter_columns.empty() || t.parent.empty() || t.values.size() < t.parent.size() * m) return;
  for (size_t c : counter_columns) {
    if (t.values[c] != 0) continue;
    double sum = 0;
    for (size_t n = 1; n < t.parent.size(); ++n)
      if (t.parent[n] == 0) sum += t.values[n * m + c];
    t.values[c] = sum;
  }
}

void Settlement::apply(ThreadTree& t, FlatMap64& scratch) const {
  fold_outlined(t, scratch);
  place(t);
  renumber(t, scratch);
  root_counters(t);
}

namespace {

// One rank file to parse: a file of its own, or a part of a container (`in_container`).
struct Piece {
  std::string name;  // for messages: the path, and "[rank N]" in a container
  std::string path;
  std::optional<fmt::ContainerEntry> in_container;
};

void read_piece(const FileAccess& access, const Piece& piece, std::vector<char>& bytes,
                bool verify_crc = true) {
  if (!piece.in_container) return access.whole(piece.path, bytes);
  const fmt::ContainerEntry& e = *piece.in_container;
  access.part(piece.path, e.offset, e.length, bytes);
  check_contained(piece.name, e, {bytes.data(), bytes.size()}, verify_crc);
}

// A piece's bytes for one parse: mapped when its file is on disk (`map` keeps the mapping until
// it is reused), read into `buffer` otherwise. `verify_crc`: check a contained piece against its
// container's CRC (the first reading; later ones read what was checked).
std::string_view piece_bytes(const FileAccess& access, const Piece& piece, bool verify_crc,
                             std::vector<char>& buffer, Mapping& map) {
  if (access.on_disk) {
    const std::optional<fmt::ContainerEntry>& e = piece.in_container;
    map = Mapping(piece.path, e ? e->offset : 0,
                  e ? std::optional<uint64_t>(e->length) : std::nullopt);
    if (std::string_view b = map.bytes(); b.data()) {
      if (e) check_contained(piece.name, *e, b, verify_crc);
      return b;
    }
  }
  read_piece(access, piece, buffer, verify_crc);
  return {buffer.data(), buffer.size()};
}

// The rank files of the container `path`, from its index.
void add_container_pieces(const FileAccess& access, const std::string& path,
                          std::vector<Piece>& pieces) {
  const uint64_t size = access.size(path);
  std::vector<char> head;
  access.part(path, 0, sizeof(fmt::ContainerHeader), head);
  access.part(path, 0, container_head_size(path, head), head);
  for (const fmt::ContainerEntry& e : read_container_index(path, head, size))
    pieces.push_back(Piece{path + " [rank " + std::to_string(e.rank) + "]", path, e});
}

// "rank-000001.sdrg" beside "node-000000.sdrc": the one layout must be the experiment's only.
void check_one_layout(const FileAccess& access, const std::string& dir,
                      const std::string& meta_path, const std::vector<std::string>& names) {
  size_t containers = size_t(std::count_if(names.begin(), names.end(), is_container_name));
  if (containers == 0 && !access.list) return;
  if (containers > 0 && containers < names.size())
    throw LoadError(meta_path +
                    ": mixed layouts: lists rank files and containers (docs/experiment-format.md)");
  if (!access.list) return;
  for (const std::string& n : access.list(dir)) {
    bool rank_file =
        n.rfind("rank-", 0) == 0 && n.size() > 5 && n.compare(n.size() - 5, 5, ".sdrg") == 0;
    if (containers > 0 ? rank_file : is_container_name(n))
      throw LoadError(dir + ": mixed layouts: holds " + n + " beside the " +
                      (containers > 0 ? "containers" : "rank files") + " meta.json lists");
  }
}

// A rank the run wrote (meta.json mpi.ranks_written) that no container holds: a container lost it.
void check_ranks_written(const std::string& dir, const nlohmann::json& meta,
                         const std::vector<Piece>& pieces) {
  auto mpi = meta.find("mpi");
  if (mpi == meta.end() || !mpi->is_object() || !mpi->contains("ranks_written") ||
      !(*mpi)["ranks_written"].is_array())
    return;
  std::unordered_set<int64_t> held;
  for (const Piece& p : pieces) held.insert(p.in_container->rank);
  std::string lost;
  size_t count = 0;
  for (const auto& r : (*mpi)["ranks_written"])
    if (r.is_number_integer() && !held.count(r.get<int64_t>()) && ++count <= 32)
      lost += (lost.empty() ? "" : ", ") + std::to_string(r.get<int64_t>());
  if (count > 32) lost += ", ... (" + std::to_string(count) + " in all)";
  if (count)
    throw LoadError(dir + ": rank(s) " + lost +
                    " written by the run (meta.json mpi.ranks_written) are in no container");
}

// The rank files meta.json lists: the files themselves, or the ranks of its containers.
std::vector<Piece> data_pieces(const FileAccess& access, const std::string& dir,
                               const std::string& meta_path, const nlohmann::json& meta,
                               const std::vector<std::string>& names) {
  check_one_layout(access, dir, meta_path, names);
  std::vector<Piece> pieces;
  for (const std::string& name : names) {
    std::string path = dir + "/" + name;
    if (is_container_name(name)) add_container_pieces(access, path, pieces);
    else pieces.push_back(Piece{path, path, std::nullopt});
  }
  if (!names.empty() && is_container_name(names[0])) check_ranks_written(dir, meta, pieces);
  return pieces;
}

// An experiment directory's files as meta.json lists them, its definitions parsed into `e`.
struct Listing {
  std::vector<std::string>
      names;               // the data files (rank files or containers), in meta.json's order
  FileDefinitions shared;  // the unified definitions of an MPI experiment
  int64_t declared_ranks = -1;
};

Listing list_files(const std::string& dir, Experiment& e, const LoadOptions& options,
                   const std::function<const std::vector<char>&(const std::string&)>& read) {
  Listing out;
  e.path = dir;
  std::string meta_path = dir + "/" + fmt::kMetaFile;
  e.meta = parse_meta(meta_path, read(meta_path));
  out.declared_ranks = e.meta.contains("ranks") ? e.meta["ranks"].get<int64_t>() : -1;
  std::unordered_set<std::string> names;
  if (e.meta.contains("definitions")) {
    std::string name = e.meta["definitions"].get<std::string>();
    std::string path = dir + "/" + name;
    out.shared = parse_rank_file(path, read(path), e, options, nullptr);
    if (!out.shared.present) throw LoadError(path + ": holds no definitions");
    if (!e.threads.empty()) throw LoadError(path + ": a definitions file holds no threads");
    names.insert(name);
  }
  for (const auto& f : e.meta["files"]) {
    std::string name = f.get<std::string>();
    if (!names.insert(name).second) throw LoadError(meta_path + ": file " + name + " listed twice");
    out.names.push_back(name);
  }
  return out;
}

// An experiment with `e`'s metrics and regions and nothing else: what a rank file is parsed into.
Experiment definitions_of(const Experiment& e) {
  Experiment p;
  p.metrics = e.metrics;
  p.metric_merge = e.metric_merge;
  p.metric_type = e.metric_type;
  p.metrics_defined = e.metrics_defined;
  p.regions = e.regions;
  return p;
}

// Each rank in one file only, and within the ranks meta.json declares.
class RankCheck {
 public:
  explicit RankCheck(int64_t declared) : declared_(declared) {}
  // The threads from `before` on came from `path`.
  void operator()(const std::string& path, const std::vector<ThreadTree>& threads, size_t before) {
    if (threads.size() == before) return;
    int32_t rank = threads[before].rank;
    if (declared_ > 0 && rank >= declared_)
      throw LoadError(path + ": rank " + std::to_string(rank) + " but meta.json says " +
                      std::to_string(declared_) + " rank(s)");
    if (!seen_.insert(rank).second)
      throw LoadError(path + ": rank " + std::to_string(rank) + " appears in two files");
  }

 private:
  int64_t declared_;
  std::unordered_set<int32_t> seen_;
};

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

std::pair<size_t, size_t> file_block(size_t files, int rank, int size) {
  const size_t n = size_t(size), r = size_t(rank);
  const size_t base = files / n, extra = files % n;
  const size_t first = r * base + std::min(r, extra);
  return {first, first + base + (r < extra ? 1 : 0)};
}

namespace {

// What a process found in each file of its block when the files are opened together.
enum Opened : uint8_t {
  kParsedFile,      // its threads' identities follow
  kFailedFile,      // its one-line error follows; the process read no further
  kOwnDefinitions,  // it defines regions or metrics of its own: every process opens every file
};

ThreadTree header_of(const ThreadTree& t) {
  ThreadTree h;
  h.rank = t.rank;
  h.thread = t.thread;
  h.flags = t.flags;
  h.os_tid = t.os_tid;
  return h;
}

void put_string(ByteWriter& out, const std::string& text) {
  out.put_many(std::vector<char>(text.begin(), text.end()));
}

std::string get_string(ByteReader& in) {
  std::vector<char> text = in.get_many<char>();
  return std::string(text.begin(), text.end());
}

void put_headers(ByteWriter& out, const std::vector<ThreadTree>& threads) {
  out.put(uint64_t(threads.size()));
  for (const ThreadTree& t : threads) {
    out.put(t.rank);
    out.put(t.thread);
    out.put(t.flags);
    out.put(t.os_tid);
  }
}

std::vector<ThreadTree> get_headers(ByteReader& in) {
  std::vector<ThreadTree> out(in.get<uint64_t>());
  for (ThreadTree& t : out) {
    t.rank = in.get<int32_t>();
    t.thread = in.get<uint32_t>();
    t.flags = in.get<uint32_t>();
    t.os_tid = in.get<uint64_t>();
  }
  return out;
}

// Rank 0: the blocks' openings (parts in rank order, so files in file order) as one process
// opening every file would end: the first failure, or else every file's threads.
std::vector<char> combine_openings(std::vector<std::vector<char>>& parts,
                                   const std::vector<Piece>& pieces, int64_t declared_ranks) {
  RankCheck check(declared_ranks);
  ByteWriter all;  // every file's threads
  size_t file = 0;
  for (const std::vector<char>& part : parts) {
    ByteReader in(part);
    while (!in.done()) {
      ByteWriter out;
      const auto opened = in.get<Opened>();
      if (opened == kOwnDefinitions) {
        out.put(kOwnDefinitions);
        return std::move(out.bytes());
      }
      std::string failure = opened == kFailedFile ? get_string(in) : "";
      if (failure.empty()) {
        std::vector<ThreadTree> threads = get_headers(in);
        try {
          check(pieces[file].name, threads, 0);
        } catch (const LoadError& e) {
          failure = e.what();
        }
        put_headers(all, threads);
      }
      if (!failure.empty()) {
        out.put(kFailedFile);
        put_string(out, failure);
        return std::move(out.bytes());
      }
      ++file;
    }
  }
  ByteWriter out;
  out.put(kParsedFile);
  std::vector<char>& bytes = out.bytes();
  bytes.insert(bytes.end(), all.bytes().begin(), all.bytes().end());
  return std::move(bytes);
}

// Rank 0: the notes of every process (in rank order, so file order) as one process taking them
// over every file would have them.
std::vector<char> combine_notes(std::vector<std::vector<char>>& parts) {
  std::vector<uint32_t> all;
  for (const std::vector<char>& part : parts) {
    ByteReader in(part);
    std::vector<uint32_t> notes = in.get_many<uint32_t>();
    all.resize(notes.size(), kUnset);
    for (size_t i = 0; i < notes.size(); ++i)
      if (notes[i] != kUnset) note(all[i], notes[i]);
  }
  ByteWriter out;
  out.put_many(all);
  return std::move(out.bytes());
}

// One step of `team` over a list of plain values: this process's list in, rank 0's combination
// of every process's list out.
template <class T>
void exchange(const Team& team, std::vector<T>& values, const Team::Combine& combine) {
  ByteWriter out;
  out.put_many(values);
  std::vector<char> all = team.step(out.bytes(), combine);
  ByteReader in(all);
  values = in.get_many<T>();
}

// Rank 0: the values every process met first (in rank order, so file order), each once, in the
// order one process observing every file would meet them.
std::vector<char> combine_firsts(std::vector<std::vector<char>>& parts) {
  std::vector<uint64_t> all;
  std::unordered_set<uint64_t> met;
  for (const std::vector<char>& part : parts) {
    ByteReader in(part);
    for (const uint64_t v : in.get_many<uint64_t>())
      if (met.insert(v).second) all.push_back(v);
  }
  ByteWriter out;
  out.put_many(all);
  return std::move(out.bytes());
}

}  // namespace

struct RankFiles::Impl {
  LoadOptions options;
  FileAccess access;
  const Team* team = nullptr;  // set when the team's processes opened the files together
  std::vector<Piece> pieces;
  std::pair<size_t, size_t> block;    // the files this process opened
  std::vector<size_t> thread_counts;  // per file
  FileDefinitions shared;
  Experiment parsed;   // the definitions every file is parsed against: the regions before settling
  Experiment settled;  // the definitions after settling, no threads
  Settlement settlement;
  LoadOptions reread;                // `options` for the files once checked
  std::vector<char> buffer;  // opening's: a file's bytes are not cleared for each read
  Mapping map;               // or the file's pages, mapped

  // Under a team, this process's files as its opening parsed them, as far as the trees may still
  // keep them (MergedTree::kKeepBytes): the settling's observing steps copy them, and the first
  // read of each (the tree's) takes them, instead of parsing the file again.
  mutable std::vector<std::vector<ThreadTree>> opened;

  // File i's threads as parsed, then rewritten by `s`; `take`: the opening's copy is handed over
  // rather than copied.
  std::vector<ThreadTree> read(size_t i, const Settlement& s, bool take) const {
    std::vector<ThreadTree> threads;
    if (i < opened.size() && !opened[i].empty()) {
      threads = take ? std::exchange(opened[i], {}) : opened[i];
    } else {  // this call's own buffer or mapping: readers call it at once (read_ahead)
      std::vector<char> own_buffer;
      Mapping own_map;
      Experiment p = definitions_of(parsed);
      std::string_view bytes = piece_bytes(access, pieces[i], false, own_buffer, own_map);
      RankFileParser(pieces[i].name, bytes, p, reread, shared.present ? &shared : nullptr).parse();
      threads = std::move(p.threads);
    }
    FlatMap64 scratch;
    for (ThreadTree& t : threads) s.apply(t, scratch);
    return threads;
  }

  unsigned readers() const { return detail::read_ahead_threads(options.threads); }

  // Every file once, in order, as load_experiment reads them serially: the regions of files
  // with definitions of their own are unified in that order. Returns every thread's identity.
  // Files that hold threads only (shared definitions) are parsed ahead on other threads, each
  // against a copy of the definitions; a file that brings definitions of its own is parsed again
  // in its turn, and so is every file after it. Their threads stay opened while the trees' budget
  // allows (MergedTree::kKeepBytes), for the tree's first read to take instead of parsing again.
  std::vector<ThreadTree> open_every_file(int64_t declared_ranks) {
    block = {0, pieces.size()};
    RankCheck check(declared_ranks);
    std::vector<ThreadTree> headers;  // every thread without its nodes
    opened.assign(pieces.size(), {});
    size_t room = MergedTree::kKeepBytes - std::min(MergedTree::kKeepBytes, MergedTree::kept());
    auto add = [&](size_t i, std::vector<ThreadTree>& threads) {
      check(pieces[i].name, threads, 0);
      thread_counts.push_back(threads.size());
      size_t bytes = 0;
      for (const ThreadTree& t : threads) {
        headers.push_back(header_of(t));
        bytes += MergedTree::bytes_held(t, parsed.metric_count());
      }
      if (shared.present && bytes <= room) room -= bytes, opened[i] = std::move(threads);
    };
    auto parse_in_turn = [&](size_t i) {
      std::string_view b = piece_bytes(access, pieces[i], true, buffer, map);
      RankFileParser(pieces[i].name, b, parsed, options, shared.present ? &shared : nullptr)
          .parse();
      add(i, parsed.threads);
      parsed.threads.clear();
    };
    if (!shared.present) {
      for (size_t i = 0; i < pieces.size(); ++i) parse_in_turn(i);
      return headers;
    }
    struct Parsed {
      std::optional<Experiment> file;
      std::exception_ptr error;
    };
    const Experiment before = definitions_of(parsed);
    bool moved = false;  // a file brought definitions: the rest are parsed in their turn
    detail::read_ahead<Parsed>(
        0, pieces.size(), readers(),
        [&](size_t i) {
          Parsed out;
          try {
            Experiment p = definitions_of(before);
            std::vector<char> own_buffer;
            Mapping own_map;
            std::string_view b = piece_bytes(access, pieces[i], true, own_buffer, own_map);
            RankFileParser(pieces[i].name, b, p, options, &shared).parse();
            out.file = std::move(p);
          } catch (...) {
            out.error = std::current_exception();
          }
          return out;
        },
        [&](size_t i, Parsed& ahead) {
          if (!moved && ahead.error) std::rethrow_exception(ahead.error);
          if (!moved && (ahead.file->regions.size() != parsed.regions.size() ||
                         ahead.file->metrics != parsed.metrics))
            moved = true;
          if (moved) return parse_in_turn(i);
          add(i, ahead.file->threads);
        });
    return headers;
  }

  // This process's block of files: each file's threads' identities, or the first failure, or
  // that a file has definitions of its own.
  std::vector<char> open_block() {
    ByteWriter out;
    opened.assign(pieces.size(), {});
    size_t room = MergedTree::kKeepBytes - std::min(MergedTree::kKeepBytes, MergedTree::kept());
    for (size_t i = block.first; i < block.second; ++i) {
      Experiment p = definitions_of(parsed);
      try {
        std::string_view b = piece_bytes(access, pieces[i], true, buffer, map);
        RankFileParser(pieces[i].name, b, p, options, &shared).parse();
      } catch (const LoadError& e) {
        out.put(kFailedFile);
        put_string(out, e.what());
        break;
      }
      if (p.regions.size() != parsed.regions.size() || p.metrics != parsed.metrics) {
        out.put(kOwnDefinitions);
        break;
      }
      out.put(kParsedFile);
      put_headers(out, p.threads);
      size_t bytes = 0;
      for (const ThreadTree& t : p.threads) bytes += MergedTree::bytes_held(t, p.metric_count());
      if (bytes <= room) room -= bytes, opened[i] = std::move(p.threads);
    }
    return std::move(out.bytes());
  }

  // The files opened together, each process its block (file_block), when every file holds
  // threads only; returns false on every process when one has definitions of its own. Throws
  // the first failure in file order on every process.
  bool open_together(int64_t declared_ranks, std::vector<ThreadTree>& headers) {
    block = file_block(pieces.size(), team->rank, team->size);
    std::vector<char> all = team->step(open_block(), [&](std::vector<std::vector<char>>& parts) {
      return combine_openings(parts, pieces, declared_ranks);
    });
    ByteReader in(all);
    const auto opened = in.get<Opened>();
    if (opened == kFailedFile) throw LoadError(get_string(in));
    if (opened == kOwnDefinitions) return false;
    for (size_t i = 0; i < pieces.size(); ++i) {
      std::vector<ThreadTree> threads = get_headers(in);
      thread_counts.push_back(threads.size());
      for (ThreadTree& t : threads) headers.push_back(std::move(t));
    }
    return true;
  }

  void open(const std::string& dir) {
    std::vector<char>& bytes = buffer;
    Listing listing =
        list_files(dir, parsed, options, [&](const std::string& path) -> const std::vector<char>& {
          access.whole(path, bytes);
          return bytes;
        });
    pieces = data_pieces(access, dir, dir + "/" + fmt::kMetaFile, parsed.meta, listing.names);
    shared = std::move(listing.shared);
    if (team && (team->size <= 1 || !shared.present)) team = nullptr;
    std::vector<ThreadTree> headers;
    if (team && !open_together(listing.declared_ranks, headers)) team = nullptr, opened = {};
    if (!team) headers = open_every_file(listing.declared_ranks);
    if (headers.empty()) throw LoadError(dir + ": the experiment holds no threads");
    reread = options;
    reread.verify_checksums = false;
    settled = parsed;
    // A step that observes the threads reads the files again, rewritten by the steps before it;
    // a step that rewrites them is recorded in the settlement and done when a file is read.
    auto files = [&](size_t first, size_t last) -> ThreadVisitor {
      return [this, first, last](const std::function<void(ThreadTree&)>& f) {
        const Settlement before = settlement;
        detail::read_ahead<std::vector<ThreadTree>>(
            first, last, readers(), [&](size_t i) { return read(i, before, false); },
            [&](size_t, std::vector<ThreadTree>& threads) {
              for (ThreadTree& t : threads) f(t);
            });
      };
    };
    Observers observers{files(block.first, block.second), nullptr, nullptr};
    if (team) {
      observers.combine = [this](std::vector<uint32_t>& notes) {
        exchange(*team, notes, combine_notes);
      };
      observers.combine_firsts = [this](std::vector<uint64_t>& firsts) {
        exchange(*team, firsts, combine_firsts);
      };
    }
    auto recorded = [](const std::function<void(ThreadTree&)>&) {};
    settle_regions(settled, options, settlement, observers, recorded);
    settled.threads = std::move(headers);
  }
};

RankFiles::RankFiles(const std::string& dir, const LoadOptions& options, const Team* team)
    : impl_(std::make_unique<Impl>()) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0)
    throw LoadError(dir + ": no such experiment (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw LoadError(dir + ": not an experiment directory");
  impl_->options = options;
  impl_->access = FileAccess{read_file_into, read_part_into, file_size, directory_names, true};
  impl_->team = team;
  impl_->open(dir);
}

RankFiles::RankFiles(const std::string& dir, const LoadOptions& options, const FileReader& read,
                     const Team* team)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->access = reader_access(read);
  impl_->team = team;
  impl_->open(dir);
}

RankFiles::~RankFiles() = default;
RankFiles::RankFiles(RankFiles&&) noexcept = default;

const Experiment& RankFiles::definitions() const { return impl_->settled; }
size_t RankFiles::files() const { return impl_->pieces.size(); }
std::vector<ThreadTree> RankFiles::threads(size_t i) const {
  return impl_->read(i, impl_->settlement, true);
}
size_t RankFiles::threads_in(size_t i) const { return impl_->thread_counts[i]; }
unsigned RankFiles::readers() const { return impl_->readers(); }
const Team* RankFiles::team() const { return impl_->team; }
std::pair<size_t, size_t> RankFiles::block() const { return impl_->block; }

}  // namespace scalea::drg
