#include "rank_file_parser.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "region_identity.hpp"
#include "scalea/compact.hpp"
#include "scalea/crc32.hpp"
#include "scalea/drg/flat_map.hpp"
#include "scalea/drg/region_key.hpp"
#include "scalea/drg/symbols.hpp"

#ifdef SCALEA_HAVE_ZLIB
#include <zlib.h>
#endif

namespace scalea::drg {

namespace fmt = scalea::format;

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
  // The unread bytes, for decoders that read them themselves and then move on (seek).
  const uint8_t* at() const { return reinterpret_cast<const uint8_t*>(p_); }
  const uint8_t* end() const { return reinterpret_cast<const uint8_t*>(end_); }
  void seek(const uint8_t* p) { p_ = reinterpret_cast<const char*>(p); }
  [[noreturn]] void fail(const std::string& problem) const {
    throw LoadError(name_ + ": " + problem);
  }

 private:
  std::string name_;
  const char* p_;
  const char* end_;
};

// One rank file read section by section (docs/experiment-format.md): the header, then each
// section into the experiment; the definitions it held are returned for threads-only files.
class RankFileParser {
 public:
  RankFileParser(const std::string& name, std::string_view bytes, Experiment& into,
                 const LoadOptions& options, const FileDefinitions* shared,
                 const MetricSet& columns)
      : file_(name, bytes.data(), bytes.size()),
        bytes_(bytes),
        into_(into),
        options_(options),
        shared_(shared),
        columns_(columns) {}

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
    if (header_.version < fmt::kOldestVersion || header_.version > fmt::kVersion)
      file_.fail("format version " + std::to_string(header_.version) +
                 ", this scalea reads versions " + std::to_string(fmt::kOldestVersion) + " to " +
                 std::to_string(fmt::kVersion));
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
    // A sample's innermost frame is the instruction it interrupted; its callers are return
    // addresses (subkind 1).
    bool found = r.kind == RegionKind::Function ? resolver_.resolve(r.module, r.address, false, loc)
                 : r.kind == RegionKind::Sampled
                     ? resolver_.resolve(r.module, r.address, r.subkind == 1, loc)
                     : resolver_.resolve_call_site(r.module, r.address, runtime_entry(r), loc);
    if (!found) return;
    if (r.file.empty()) r.file = loc.file;
    if (!r.line) r.line = loc.line;
    if (r.function.empty()) r.function = loc.function;
    if (r.kind == RegionKind::Sampled) r.inlined_into = std::move(loc.inlined_into);
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
    expansion_limit_ = kExpansion * sh.size + kExpansionSlack;
    expanded_ = 0;
    std::vector<char> f64(nm);
    std::vector<fmt::MetricMerge> merge(nm);
    for (size_t m = 0; m < nm; ++m) {
      f64[m] = fmt::MetricType(mrec[m].type) == fmt::MetricType::F64;
      merge[m] = fmt::MetricMerge(mrec[m].merge);
    }
    shapes_.clear();
    const fmt::ValueCoding coding =
        fmt::value_coding(into_.metrics, [&](size_t m) { return f64[m] != 0; });
    for (uint32_t ti = 0; ti < sh.count; ++ti) {
      bool repeats = true;  // a call path may have two nodes (known per shape in version 2 on)
      ThreadTree t = header_.version >= 2 ? read_compact_thread(body, regmap, coding, repeats)
                                          : read_thread(body, regmap, f64);
      if (repeats) fold_duplicate_paths(t, merge, paths_seen_);
      into_.threads.push_back(std::move(t));
    }
  }

  // A thread's header, checked; `what` names the thread in messages.
  fmt::ThreadRecord thread_header(Reader& body, std::string& what) {
    auto tr = body.get<fmt::ThreadRecord>("thread header");
    what = "thread " + std::to_string(tr.index);
    for (uint32_t o : seen_threads_)
      if (o == tr.index) body.fail(what + " appears twice");
    seen_threads_.push_back(tr.index);
    if (tr.node_count == 0) body.fail(what + " has no root");
    return tr;
  }

  // Version 1: fixed-size node records.
  ThreadTree read_thread(Reader& body, const std::vector<uint32_t>& regmap,
                         const std::vector<char>& f64) {
    const size_t nm = f64.size();
    std::string what;
    auto tr = thread_header(body, what);
    uint64_t need = uint64_t(tr.node_count) * (sizeof(fmt::NodeRecord) + 8 * nm);
    if (need > body.left()) body.fail(what + ": truncated nodes");
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

  // Version 2 (scalea/compact.hpp): the structure once per distinct shape, values compact.
  ThreadTree read_compact_thread(Reader& body, const std::vector<uint32_t>& regmap,
                                 const fmt::ValueCoding& coding, bool& repeats) {
    std::string what;
    auto tr = thread_header(body, what);
    ThreadTree t;
    t.rank = header_.rank;
    t.thread = tr.index;
    t.flags = tr.flags;
    t.os_tid = tr.os_tid;
    if (tr.same_shape == fmt::kNoIndex) {
      // Each node's structure takes two bytes at least: a larger count is a lie.
      if (uint64_t(tr.node_count) * 2 > body.left()) body.fail(what + ": truncated nodes");
      shapes_.push_back(std::make_shared<Shape>(read_shape(body, regmap, tr.node_count, what)));
    } else if (tr.same_shape >= shapes_.size()) {
      body.fail(what + ": its shape names thread " + std::to_string(tr.same_shape) +
                " of the section, which does not precede it");
    } else {
      shapes_.push_back(shapes_[tr.same_shape]);
      if (shapes_.back()->parent.size() != tr.node_count)
        body.fail(what + ": " + std::to_string(tr.node_count) +
                  " nodes, but the shape it repeats has " +
                  std::to_string(shapes_.back()->parent.size()));
    }
    // A repeated shape and columns of zeros cost a few bytes a thread, whatever its nodes: a
    // section that would unfold beyond any honest ratio is damaged (not memory to exhaust).
    expanded_ += uint64_t(tr.node_count) * (8 + 8 * coding.columns());
    if (expanded_ > expansion_limit_)
      body.fail(what + ": the section's threads would take over " +
                std::to_string(expansion_limit_ >> 20) + " MiB in memory, " +
                std::to_string(kExpansion) + " times its size and more: damaged");
    t.parent = shapes_.back()->parent;
    t.region = shapes_.back()->region;
    repeats = shapes_.back()->repeats;
    if (header_.version >= 3) read_column_values(body, coding, t, what);
    else read_compact_values(body, coding, t, what);
    return t;
  }

  struct Shape {
    std::vector<uint32_t> parent, region;  // regions already mapped to the experiment's
    bool repeats = false;                  // two nodes have the same call path
  };

  Shape read_shape(Reader& body, const std::vector<uint32_t>& regmap, uint32_t count,
                   const std::string& what) {
    Shape s;
    s.parent.resize(count);
    s.region.resize(count);
    const uint8_t* p = body.at();
    for (uint32_t n = 0; n < count; ++n) {
      uint64_t up, region;
      if (!fmt::get_varint(p, body.end(), up) || !fmt::get_varint(p, body.end(), region))
        body.fail(what + " node " + std::to_string(n) + ": truncated or bad structure");
      if (n == 0 ? up != 0 : up == 0 || up > n)
        body.fail(what + " node " + std::to_string(n) + ": bad parent distance " +
                  std::to_string(up) +
                  (n == 0 ? " (root must have none)" : " (must precede the node)"));
      if (region >= regmap.size())
        body.fail(what + " node " + std::to_string(n) + ": region " + std::to_string(region) +
                  " out of range");
      s.parent[n] = n == 0 ? fmt::kNoIndex : uint32_t(n - up);
      s.region[n] = regmap[region];
    }
    body.seek(p);
    paths_seen_.clear();
    for (uint32_t n = 1; n < count && !s.repeats; ++n)
      s.repeats = !paths_seen_.emplace(uint64_t(s.parent[n]) << 32 | s.region[n], n).second;
    return s;
  }

  // A u64 as a double; the signed conversion (one instruction) below 2^63.
  static double to_double(uint64_t v) {
    return __builtin_expect(int64_t(v) >= 0, 1) ? double(int64_t(v)) : double(v);
  }

  void read_compact_values(Reader& body, const fmt::ValueCoding& coding, ThreadTree& t,
                           const std::string& what) {
    const size_t nm = coding.columns(), words = coding.mask_words(), nodes = t.parent.size();
    // Each node's mask takes a byte at least per 64 columns: a larger count is a lie.
    if (uint64_t(nodes) * words > body.left()) body.fail(what + ": truncated values");
    t.values.assign(nodes * nm, 0.0);
    last_mask_.assign(words, 0);
    fmt::VarintCursor in(body.at(), body.end());
    auto bad = [&](size_t n, const char* problem) {
      body.fail(what + " node " + std::to_string(n) + ": " + problem);
    };
    for (size_t n = 0; n < nodes; ++n) {
      double* out = &t.values[n * nm];
      uint64_t head[4] = {};  // columns 0-3 as integers: the visit times need them
      for (size_t w = 0; w < words; ++w) {
        uint64_t mask;
        if (!in.next(mask)) bad(n, "truncated or bad values");
        mask ^= last_mask_[w];
        last_mask_[w] = mask;
        size_t here = std::min<size_t>(64, nm - w * 64);
        if (here < 64 && mask >> here) bad(n, "a value for no column");
        const uint64_t f64w = coding.f64_words[w];
        for (; mask; mask &= mask - 1) {
          unsigned i = unsigned(__builtin_ctzll(mask));
          size_t m = w * 64 + i;
          if (f64w >> i & 1) {
            if (!in.raw8(&out[m])) bad(n, "truncated value");
            continue;
          }
          uint64_t v;
          if (!in.next(v)) bad(n, "truncated or bad value");
          if (m < 4) head[m] = v;
          else out[m] = to_double(v);
        }
      }
      if (coding.visit_times) {
        uint64_t mean = fmt::mean_visit(head);
        head[2] = mean - fmt::unzigzag(head[2]);
        head[3] = mean + fmt::unzigzag(head[3]);
      }
      for (size_t m = 0; m < 4 && m < nm; ++m)
        if (!(coding.f64_words[0] >> m & 1)) out[m] = to_double(head[m]);
    }
    body.seek(in.position());
  }

  // Version 3: the values column by column (compact.hpp, put_columns); the columns not asked for
  // are skipped without being decoded, and none asked for leaves `values` empty.
  void read_column_values(Reader& body, const fmt::ValueCoding& coding, ThreadTree& t,
                          const std::string& what) {
    const size_t nm = coding.columns(), nodes = t.parent.size();
    // Each column takes its code byte at least: more columns than bytes left is a lie.
    if (nm > body.left()) body.fail(what + ": truncated values");
    const bool decode = !columns_.empty();
    if (decode) t.values.assign(nodes * nm, 0.0);
    // The visit times are coded from the visits and the time: columns 0-3 as integers first.
    const bool visit_times = decode && coding.visit_times && (columns_.has(2) || columns_.has(3));
    if (visit_times) head_.assign(4 * nodes, 0);
    const uint8_t* p = body.at();
    const uint8_t* limit = body.end();
    for (size_t m = 0; m < nm; ++m) {
      const fmt::PackedColumn c = fmt::packed_column(p, limit, nodes);
      if (!c.ok) body.fail(what + " column " + std::to_string(m) + ": truncated or bad values");
      p = c.next;
      if (visit_times && m < 4) {
        uint64_t* h = head_.data() + m * nodes;
        fmt::for_each_packed(c, limit, nodes, [&](size_t n, uint64_t v) { h[n] = v; });
        continue;
      }
      if (!decode || !columns_.has(m)) continue;
      double* out = t.values.data() + m;
      if (coding.f64_words[m / 64] >> (m % 64) & 1)
        fmt::for_each_packed(c, limit, nodes,
                             [&](size_t n, uint64_t v) { std::memcpy(&out[n * nm], &v, 8); });
      else
        fmt::for_each_packed(c, limit, nodes,
                             [&](size_t n, uint64_t v) { out[n * nm] = to_double(v); });
    }
    for (size_t n = 0; visit_times && n < nodes; ++n) {
      const uint64_t raw[2] = {head_[n], head_[nodes + n]};
      const uint64_t mean = fmt::mean_visit(raw);
      double* out = t.values.data() + n * nm;
      out[0] = to_double(raw[0]);
      out[1] = to_double(raw[1]);
      out[2] = to_double(mean - fmt::unzigzag(head_[2 * nodes + n]));
      out[3] = to_double(mean + fmt::unzigzag(head_[3 * nodes + n]));
    }
    body.seek(p);
  }

  Reader file_;
  std::string_view bytes_;
  Experiment& into_;
  const LoadOptions& options_;
  const FileDefinitions* shared_;
  const MetricSet& columns_;
  fmt::FileHeader header_{};
  std::vector<std::string> strings_;
  std::vector<std::string> modules_;
  FileDefinitions own_;
  SymbolResolver resolver_;
  bool have_[5] = {};
  std::vector<uint32_t> seen_threads_;  // thread indices of this file, to reject duplicates
  std::vector<std::shared_ptr<const Shape>> shapes_;  // by position in the thread section
  std::vector<uint64_t> last_mask_;                   // scratch of read_compact_values
  std::vector<uint64_t> head_;                        // scratch of read_column_values
  // The memory a thread section may unfold to: kExpansion times its bytes and kExpansionSlack
  // (the synthetic experiments take 5 times their compact bytes, a thread of 100 nodes whose
  // values are all 0 about 350 times).
  static constexpr uint64_t kExpansion = 1024, kExpansionSlack = uint64_t(16) << 20;
  uint64_t expansion_limit_ = 0, expanded_ = 0;
  FlatMap64 paths_seen_;  // scratch of fold_duplicate_paths
};

}  // namespace

FileDefinitions parse_rank_bytes(const std::string& name, std::string_view bytes, Experiment& into,
                                 const LoadOptions& options, const FileDefinitions* shared,
                                 const MetricSet& columns) {
  return RankFileParser(name, bytes, into, options, shared, columns).parse();
}

FileDefinitions parse_rank_file(const std::string& name, const std::vector<char>& bytes,
                                Experiment& into, const LoadOptions& options,
                                const FileDefinitions* shared, const MetricSet& columns) {
  return RankFileParser(name, {bytes.data(), bytes.size()}, into, options, shared, columns).parse();
}

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

Experiment definitions_of(const Experiment& e) {
  Experiment p;
  p.metrics = e.metrics;
  p.metric_merge = e.metric_merge;
  p.metric_type = e.metric_type;
  p.metrics_defined = e.metrics_defined;
  p.regions = e.regions;
  return p;
}

}  // namespace scalea::drg
