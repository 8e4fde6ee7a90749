#include "scalea/drg/experiment.hpp"

#include <sys/stat.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>
#include <tuple>
#include <unordered_set>
#include <atomic>
#include <exception>
#include <optional>
#include <thread>
#include <algorithm>

#include "scalea/drg/flat_map.hpp"
#include "scalea/drg/symbols.hpp"

#ifdef SCALEA_HAVE_ZLIB
#include <zlib.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace scalea::drg {

namespace fmt = scalea::format;

std::string Region::label() const {
  std::string k(fmt::region_kind_name(kind));
  switch (kind) {
    case RegionKind::Program: return name.empty() ? "program" : name;
    case RegionKind::User: return name;
    case RegionKind::Function: return name.empty() ? function : name;
    case RegionKind::Mpi: return name;
    case RegionKind::Loop: {
      static const char* sched[] = {"", " (static)", " (dynamic)", " (guided)", " (other)"};
      return "loop" + std::string(subkind < 5 ? sched[subkind] : "");
    }
    case RegionKind::BarrierImplicit: {
      static const char* fl[] = {"barrier (implicit)", "barrier (implicit, end of worksharing)",
                                 "barrier (implicit, join)", "barrier (implicit, teams)"};
      return subkind < 4 ? fl[subkind] : "barrier (implicit)";
    }
    case RegionKind::BarrierExplicit: return "barrier";
    case RegionKind::BarrierImplementation: return "barrier (runtime)";
    default: return k;
  }
}

std::string Region::location() const {
  if (file.empty()) return "";
  size_t slash = file.rfind('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  return line ? base + ":" + std::to_string(line) : base;
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
  [[noreturn]] void fail(const std::string& problem) const { throw LoadError(name_ + ": " + problem); }

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

// How the loader gets a file's bytes: from the disk into a reused buffer, or from a FileReader.
using ReadInto = std::function<void(const std::string& path, std::vector<char>& bytes)>;

Experiment load(const std::string& dir, const LoadOptions& options, const ReadInto& read_into);

// A file name from meta.json: a plain name inside the experiment directory.
bool plain_file_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 255) return false;
  for (char c : name)
    if (c == '/' || c == '\0') return false;
  return true;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SCALEA_HAVE_PCLMUL_CRC 1
// CRC-32 of `len` bytes (a multiple of 16, at least 64) by carry-less multiplication: four
// 128-bit lanes fold 64 bytes per step, then one lane, then a Barrett reduction to 32 bits.
// `state` is the bare register (not inverted). The algorithm and constants (powers of x modulo
// the reflected polynomial 0xEDB88320) are those of Intel's "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ" as used by Linux (arch/x86/crypto/crc32-pclmul_asm.S).
#define SCALEA_PCLMUL __attribute__((target("pclmul,sse4.1")))
SCALEA_PCLMUL inline __m128i load(const char* at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}
// x (128 bits) times x^(128·k) modulo the polynomial, added to the next 128 bits.
SCALEA_PCLMUL inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}
SCALEA_PCLMUL uint32_t crc32_fold_pclmul(uint32_t state, const char* p, size_t len) {
  __m128i x1 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(int(state)));
  __m128i x2 = load(p + 16), x3 = load(p + 32), x4 = load(p + 48);
  p += 64;
  len -= 64;
  const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
  for (; len >= 64; p += 64, len -= 64) {
    x1 = fold(x1, k1k2, load(p));
    x2 = fold(x2, k1k2, load(p + 16));
    x3 = fold(x3, k1k2, load(p + 32));
    x4 = fold(x4, k1k2, load(p + 48));
  }
  const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
  x1 = fold(x1, k3k4, x2);
  x1 = fold(x1, k3k4, x3);
  x1 = fold(x1, k3k4, x4);
  for (; len >= 16; p += 16, len -= 16) x1 = fold(x1, k3k4, load(p));
  // 128 -> 64 bits (appending 32 zero bits), then -> 32 bits.
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(k3k4, x1, 0x01));
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 4), _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00));
  const __m128i poly = _mm_set_epi64x(0x1f7011641, 0x1db710641);  // mu, P
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
  return uint32_t(_mm_extract_epi32(_mm_xor_si128(t, x1), 1));
}
#endif

}  // namespace

uint32_t payload_crc32(const char* data, size_t size) {
#ifdef SCALEA_HAVE_PCLMUL_CRC
  static const bool pclmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  if (pclmul && size >= 64) {
    size_t bulk = size & ~size_t(15);
    uint32_t crc = ~crc32_fold_pclmul(~0u, data, bulk);
    return fmt::crc32_update(crc, data + bulk, size - bulk);
  }
#endif
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

// Two code regions unified into one (same source position) can leave a thread with two nodes on
// the same call path: they are folded into the first, metric by metric (the METR merge rule), and
// their children re-parented, so every call path has one node per thread.
// `first` is scratch, kept by the caller across threads.
void fold_duplicate_paths(ThreadTree& t, const std::vector<fmt::MetricRecord>& metrics,
                          FlatMap64& first) {
  const size_t nm = metrics.size();
  first.clear();  // (new parent, region) -> new index
  bool any = false;
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
    uint32_t parent = n == 0 ? fmt::kNoIndex : to[t.parent[n]];
    uint64_t key = uint64_t(parent) << 32 | t.region[n];
    const uint32_t* found = n == 0 ? nullptr : first.find(key);
    const double* v = &t.values[size_t(n) * nm];
    if (!found) {
      to[n] = uint32_t(out.parent.size());
      if (n) first.emplace(key, to[n]);
      out.parent.push_back(parent);
      out.region.push_back(t.region[n]);
      out.values.insert(out.values.end(), v, v + nm);
      continue;
    }
    to[n] = *found;
    double* into = &out.values[size_t(*found) * nm];
    for (size_t m = 0; m < nm; ++m) {
      switch (fmt::MetricMerge(metrics[m].merge)) {
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

using RegionKey = std::tuple<int, int, std::string, std::string, uint64_t>;
using SourceKey = std::tuple<int, int, std::string, std::string, uint32_t, std::string>;
SourceKey source_key(const Region& r) {
  return {int(r.kind), r.subkind, r.name, r.file, r.line, r.function};
}

}  // namespace

FileDefinitions parse_rank_file(const std::string& name, const std::vector<char>& bytes,
                                Experiment& into, const LoadOptions& options,
                                const FileDefinitions* shared) {
  Reader file(name, bytes.data(), bytes.size());
  if (bytes.size() < 8 || std::memcmp(bytes.data(), fmt::kMagic, 8) != 0)
    file.fail("not a scalea sub-DRG file (bad magic)");
  auto header = file.get<fmt::FileHeader>("header");
  if (header.version != fmt::kVersion)
    file.fail("format version " + std::to_string(header.version) + ", this scalea reads version " +
              std::to_string(fmt::kVersion));
  if (header.header_size != sizeof(fmt::FileHeader)) file.fail("bad header size");
  if (header.payload_size != file.left())
    file.fail("truncated or padded: payload is " + std::to_string(file.left()) +
              " bytes, header says " + std::to_string(header.payload_size));
  const char* payload = bytes.data() + sizeof(fmt::FileHeader);
  if (payload_crc32(payload, file.left()) != header.payload_crc32)
    file.fail("checksum mismatch (corrupt file)");
  if (header.rank < -1 || header.rank > kMaxRank)
    file.fail("rank " + std::to_string(header.rank) + " out of range");
  // Every section header takes 16 bytes: a count beyond that is a lie, not a reason to loop.
  if (uint64_t(header.section_count) * sizeof(fmt::SectionHeader) > file.left())
    file.fail("section count " + std::to_string(header.section_count) + " exceeds the file");

  std::vector<std::string> strings;
  struct Mod { std::string path; };
  std::vector<Mod> modules;
  FileDefinitions own;
  std::vector<uint32_t>& region_map = own.region_map;
  std::vector<fmt::MetricRecord>& metric_records = own.metrics;
  std::map<RegionKey, uint32_t> known;  // filled when the file has a region table
  auto str = [&](Reader& r, uint32_t idx, const char* what) -> const std::string& {
    if (idx >= strings.size())
      r.fail(std::string(what) + ": string index " + std::to_string(idx) + " out of range");
    return strings[idx];
  };
  SymbolResolver resolver;
  bool have[5] = {};
  static const char* section_name[5] = {"STRG", "MODL", "REGN", "METR", "THRD"};
  auto once = [&](Reader& r, int which) {
    if (which < 4 && have[which]) r.fail(std::string("duplicate ") + section_name[which] + " section");
    have[which] = true;
  };
  std::vector<uint32_t> seen_threads;  // thread indices of this file, to reject duplicates
  FlatMap64 paths_seen;                // scratch of fold_duplicate_paths
  for (uint32_t s = 0; s < header.section_count; ++s) {
    auto sh = file.get<fmt::SectionHeader>("section header");
    Reader body = file.sub(sh.size, "section");
    if (sh.tag == fmt::kTagStrings) {
      once(body, 0);
      if (sh.count > sh.size / 4) body.fail("string count too large");
      strings.reserve(sh.count);
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto len = body.get<uint32_t>("string length");
        strings.push_back(body.bytes(len, "string"));
      }
      if (strings.empty() || !strings[0].empty()) body.fail("string table must start with \"\"");
    } else if (sh.tag == fmt::kTagModules) {
      once(body, 1);
      if (uint64_t(sh.count) * sizeof(fmt::ModuleRecord) != sh.size) body.fail("bad module table size");
      modules.reserve(sh.count);
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto m = body.get<fmt::ModuleRecord>("module");
        modules.push_back({str(body, m.path, "module")});
      }
    } else if (sh.tag == fmt::kTagRegions) {
      once(body, 2);
      if (uint64_t(sh.count) * sizeof(fmt::RegionRecord) != sh.size) body.fail("bad region table size");
      if (sh.count == 0) body.fail("empty region table");
      region_map.reserve(sh.count);
      // Regions at the same source position are one region: a construct the compiler copied
      // (inlining) or a rank whose table kept another address still merges with the others.
      std::map<SourceKey, uint32_t> by_source;
      for (uint32_t i = 0; i < into.regions.size(); ++i) {
        const Region& r = into.regions[i];
        known.emplace(RegionKey{int(r.kind), r.subkind, r.name, r.module, r.address}, i);
        if (!r.file.empty() && r.line) by_source.emplace(source_key(r), i);
      }
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto rr = body.get<fmt::RegionRecord>("region");
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
          if (rr.module >= modules.size())
            body.fail("region " + std::to_string(i) + ": module index " + std::to_string(rr.module) +
                      " out of range");
          r.module = modules[rr.module].path;
        }
        r.address = rr.address;
        RegionKey key{int(r.kind), r.subkind, r.name, r.module, r.address};
        auto it = known.find(key);
        if (it != known.end()) {
          region_map.push_back(it->second);
          continue;
        }
        if (options.resolve_symbols && !r.module.empty() && r.address) {
          SourceLocation loc;
          // OMPT and function hooks give return addresses for constructs; -finstrument-functions
          // gives the function's entry, which is not a return address.
          bool ret = r.kind != RegionKind::Function;
          if (resolver.resolve(r.module, r.address, ret, loc)) {
            if (r.file.empty()) r.file = loc.file;
            if (!r.line) r.line = loc.line;
            if (r.function.empty()) r.function = loc.function;
          }
        }
        if (!r.file.empty() && r.line) {
          auto same = by_source.find(source_key(r));
          if (same != by_source.end()) {
            known.emplace(key, same->second);
            region_map.push_back(same->second);
            continue;
          }
        }
        uint32_t id = uint32_t(into.regions.size());
        if (!r.file.empty() && r.line) by_source.emplace(source_key(r), id);
        into.regions.push_back(std::move(r));
        known.emplace(key, id);
        region_map.push_back(id);
      }
    } else if (sh.tag == fmt::kTagMetrics) {
      once(body, 3);
      if (uint64_t(sh.count) * sizeof(fmt::MetricRecord) != sh.size) body.fail("bad metric table size");
      std::vector<std::string> names;
      std::vector<fmt::MetricMerge> merge;
      std::vector<fmt::MetricType> type;
      metric_records.reserve(sh.count);
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto m = body.get<fmt::MetricRecord>("metric");
        if (m.type > 1 || m.merge > 2) body.fail("metric " + std::to_string(i) + ": bad descriptor");
        const std::string& n = str(body, m.name, "metric name");
        if (n.empty()) body.fail("metric " + std::to_string(i) + ": no name");
        for (const std::string& o : names)
          if (o == n) body.fail("duplicate metric column " + n);
        metric_records.push_back(m);
        names.push_back(n);
        merge.push_back(fmt::MetricMerge(m.merge));
        type.push_back(fmt::MetricType(m.type));
      }
      if (!into.metrics_defined) {
        into.metrics = std::move(names);
        into.metric_merge = std::move(merge);
        into.metric_type = std::move(type);
        into.metrics_defined = true;
      } else if (into.metrics != names || into.metric_merge != merge) {
        body.fail("metric columns differ from the other files'");
      }
    } else if (sh.tag == fmt::kTagThreads) {
      have[4] = true;
      bool local = have[0] && have[2] && have[3];
      if (!local && (have[0] || have[2] || have[3])) body.fail("thread section before its tables");
      if (!local && !shared) body.fail("thread section without definitions");
      const std::vector<uint32_t>& regmap = local ? region_map : shared->region_map;
      const std::vector<fmt::MetricRecord>& mrec = local ? metric_records : shared->metrics;
      const size_t nm = mrec.size();
      if (nm != into.metrics.size()) body.fail("metric columns differ from the definitions'");
      // Each thread takes at least its header: a count beyond that cannot be honest.
      if (uint64_t(sh.count) * sizeof(fmt::ThreadRecord) > body.left())
        body.fail("thread count " + std::to_string(sh.count) + " exceeds the section");
      std::vector<char> f64(nm);
      for (size_t m = 0; m < nm; ++m) f64[m] = fmt::MetricType(mrec[m].type) == fmt::MetricType::F64;
      for (uint32_t ti = 0; ti < sh.count; ++ti) {
        auto tr = body.get<fmt::ThreadRecord>("thread header");
        std::string what = "thread " + std::to_string(tr.index);
        for (uint32_t o : seen_threads)
          if (o == tr.index) body.fail(what + " appears twice");
        seen_threads.push_back(tr.index);
        uint64_t need = uint64_t(tr.node_count) * (sizeof(fmt::NodeRecord) + 8 * nm);
        if (need > body.left()) body.fail(what + ": truncated nodes");
        if (tr.node_count == 0) body.fail(what + " has no root");
        ThreadTree t;
        t.rank = header.rank;
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
                      std::to_string(nr.parent) + (n == 0 ? " (root must have none)" : " (must precede the node)"));
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
        fold_duplicate_paths(t, mrec, paths_seen);
        into.threads.push_back(std::move(t));
      }
    }  // unknown sections are skipped: a newer minor writer may add some
  }
  if (file.left() != 0) file.fail(std::to_string(file.left()) + " bytes after the last section");
  bool defs = have[0] && have[2] && have[3];
  if (!defs && !have[4]) file.fail("missing section (neither definitions nor threads)");
  if ((have[0] || have[2] || have[3]) && !defs) {
    std::string missing;
    for (int i : {0, 2, 3})
      if (!have[i]) missing += std::string(missing.empty() ? "" : ", ") + section_name[i];
    file.fail("missing section " + missing);
  }
  own.present = defs;
  return own;
}

namespace {

bool is_uint(const nlohmann::json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0); }

}  // namespace

nlohmann::json parse_meta(const std::string& name, const std::vector<char>& bytes) {
  if (bytes.size() > kMaxMetaBytes) throw LoadError(name + ": too large for a meta file");
  nlohmann::json meta = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (meta.is_discarded()) throw LoadError(name + ": not valid JSON");
  if (!meta.is_object()) throw LoadError(name + ": not a JSON object");
  auto fail = [&](const std::string& problem) { throw LoadError(name + ": " + problem); };
  auto f = meta.find("format");
  if (f == meta.end() || !f->is_string() || *f != "scalea-experiment") fail("not a scalea experiment");
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
  if (meta.contains("definitions") &&
      (!meta["definitions"].is_string() || !plain_file_name(meta["definitions"].get<std::string>())))
    fail("bad definitions entry");
  // Fields the reports read: wrong types would surface as type errors far from the loader.
  for (const char* key : {"tool_version", "cwd", "host", "start_time", "end_time", "finished_by",
                          "program_start", "omp_num_threads"})
    if (meta.contains(key) && !meta[key].is_string()) fail(std::string(key) + " is not a string");
  for (const char* key : {"ranks", "threads", "max_team_size", "pid"})
    if (meta.contains(key) && !is_uint(meta[key])) fail(std::string(key) + " is not a count");
  if (meta.contains("complete") && !meta["complete"].is_boolean()) fail("complete is not a boolean");
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
      if (c.contains(key) && !c[key].is_number()) fail(std::string("clock.") + key + " is not a number");
  }
  if (meta.contains("openmp")) {
    const auto& o = meta["openmp"];
    if (!o.is_object()) fail("openmp is not an object");
    for (const char* key : {"runtime", "runtime_path"})
      if (o.contains(key) && !o[key].is_string()) fail(std::string("openmp.") + key + " is not a string");
    if (o.contains("callbacks") && !o["callbacks"].is_object()) fail("openmp.callbacks is not an object");
  }
  for (const char* key : {"environment", "anomalies"})
    if (meta.contains(key) && !meta[key].is_object()) fail(std::string(key) + " is not an object");
  return meta;
}

Experiment load_experiment(const std::string& dir, const LoadOptions& options) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) throw LoadError(dir + ": no such experiment (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw LoadError(dir + ": not an experiment directory");
  return load(dir, options, read_file_into);
}

Experiment load_experiment(const std::string& dir, const LoadOptions& options,
                           const FileReader& read) {
  return load(dir, options, [&](const std::string& path, std::vector<char>& bytes) { bytes = read(path); });
}

namespace {

Experiment load(const std::string& dir, const LoadOptions& options, const ReadInto& read_into) {
  std::vector<char> bytes;  // the serial path's buffer
  auto read = [&](const std::string& path) -> const std::vector<char>& {
    read_into(path, bytes);
    return bytes;
  };
  Experiment e;
  e.path = dir;
  std::string meta_path = dir + "/" + fmt::kMetaFile;
  e.meta = parse_meta(meta_path, read(meta_path));
  int64_t declared_ranks = e.meta.contains("ranks") ? e.meta["ranks"].get<int64_t>() : -1;
  FileDefinitions shared;
  std::unordered_set<std::string> names;
  if (e.meta.contains("definitions")) {
    std::string name = e.meta["definitions"].get<std::string>();
    std::string path = dir + "/" + name;
    shared = parse_rank_file(path, read(path), e, options, nullptr);
    if (!shared.present) throw LoadError(path + ": holds no definitions");
    if (!e.threads.empty()) throw LoadError(path + ": a definitions file holds no threads");
    names.insert(name);
  }
  std::vector<std::string> paths;
  for (const auto& f : e.meta["files"]) {
    std::string name = f.get<std::string>();
    if (!names.insert(name).second) throw LoadError(meta_path + ": file " + name + " listed twice");
    paths.push_back(dir + "/" + name);
  }
  std::unordered_set<int32_t> ranks_seen;
  auto check_rank = [&](const std::string& path, size_t before) {
    if (e.threads.size() == before) return;
    int32_t rank = e.threads[before].rank;
    if (declared_ranks > 0 && rank >= declared_ranks)
      throw LoadError(path + ": rank " + std::to_string(rank) + " but meta.json says " +
                      std::to_string(declared_ranks) + " rank(s)");
    if (!ranks_seen.insert(rank).second)
      throw LoadError(path + ": rank " + std::to_string(rank) + " appears in two files");
  };
  auto parse_into_e = [&](const std::string& path) {
    size_t before = e.threads.size();
    parse_rank_file(path, read(path), e, options, shared.present ? &shared : nullptr);
    check_rank(path, before);
  };
  unsigned workers = options.threads ? options.threads : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  if (!shared.present || workers <= 1 || paths.size() < 4) {
    for (const std::string& path : paths) parse_into_e(path);
  } else {
    // Threads-only rank files (the MPI layout) parse independently: each worker fills its own
    // Experiment, seeded with the unified definitions; results are merged in file order, so the
    // outcome (and the first error reported) is the serial one.
    std::vector<std::optional<Experiment>> parts(paths.size());
    std::vector<std::exception_ptr> errors(paths.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      std::vector<char> buffer;  // this worker's
      for (size_t i; (i = next.fetch_add(1)) < paths.size();) {
        try {
          Experiment p;
          p.metrics = e.metrics;
          p.metric_merge = e.metric_merge;
          p.metric_type = e.metric_type;
          p.metrics_defined = e.metrics_defined;
          p.regions = e.regions;
          read_into(paths[i], buffer);
          parse_rank_file(paths[i], buffer, p, options, &shared);
          parts[i] = std::move(p);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < std::min<size_t>(workers, paths.size()); ++w) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    for (size_t i = 0; i < paths.size(); ++i) {
      if (errors[i]) std::rethrow_exception(errors[i]);
      Experiment& p = *parts[i];
      if (p.regions.size() != e.regions.size()) {  // the file brought its own regions: redo serially
        parse_into_e(paths[i]);
        continue;
      }
      size_t before = e.threads.size();
      for (ThreadTree& t : p.threads) e.threads.push_back(std::move(t));
      parts[i].reset();
      check_rank(paths[i], before);
    }
  }
  if (e.threads.empty()) throw LoadError(dir + ": the experiment holds no threads");
  return e;
}

}  // namespace

}  // namespace scalea::drg
