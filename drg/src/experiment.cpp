#include "scalea/drg/experiment.hpp"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <map>
#include <tuple>

#include "scalea/drg/symbols.hpp"

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

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) throw LoadError(path + ": cannot read");
  in.seekg(0);
  std::vector<char> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(bytes.data(), size)) throw LoadError(path + ": cannot read");
  return bytes;
}

using RegionKey = std::tuple<int, int, std::string, std::string, uint64_t>;

}  // namespace

FileDefinitions parse_rank_file(const std::string& name, const std::vector<char>& bytes,
                                Experiment& into, const LoadOptions& options,
                                const FileDefinitions* shared) {
  Reader file(name, bytes.data(), bytes.size());
  auto header = file.get<fmt::FileHeader>("header");
  if (std::memcmp(header.magic, fmt::kMagic, 8) != 0) file.fail("not a scalea sub-DRG file");
  if (header.version != fmt::kVersion)
    file.fail("format version " + std::to_string(header.version) + ", this scalea reads version " +
              std::to_string(fmt::kVersion));
  if (header.header_size != sizeof(fmt::FileHeader)) file.fail("bad header size");
  if (header.payload_size != file.left())
    file.fail("truncated or padded: payload is " + std::to_string(file.left()) +
              " bytes, header says " + std::to_string(header.payload_size));
  const char* payload = bytes.data() + sizeof(fmt::FileHeader);
  if (fmt::crc32_update(0, payload, file.left()) != header.payload_crc32)
    file.fail("checksum mismatch (corrupt file)");

  std::vector<std::string> strings;
  struct Mod { std::string path; };
  std::vector<Mod> modules;
  FileDefinitions own;
  std::vector<uint32_t>& region_map = own.region_map;
  std::vector<fmt::MetricRecord>& metric_records = own.metrics;
  std::map<RegionKey, uint32_t> known;
  for (uint32_t i = 0; i < into.regions.size(); ++i) {
    const Region& r = into.regions[i];
    known.emplace(RegionKey{int(r.kind), r.subkind, r.name, r.module, r.address}, i);
  }
  auto str = [&](Reader& r, uint32_t idx) -> const std::string& {
    if (idx >= strings.size()) r.fail("string index " + std::to_string(idx) + " out of range");
    return strings[idx];
  };
  SymbolResolver resolver;
  bool have[5] = {};
  for (uint32_t s = 0; s < header.section_count; ++s) {
    auto sh = file.get<fmt::SectionHeader>("section header");
    Reader body = file.sub(sh.size, "section");
    if (sh.tag == fmt::kTagStrings) {
      have[0] = true;
      if (sh.count > sh.size / 4) body.fail("string count too large");
      strings.reserve(sh.count);
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto len = body.get<uint32_t>("string length");
        strings.push_back(body.bytes(len, "string"));
      }
    } else if (sh.tag == fmt::kTagModules) {
      have[1] = true;
      if (uint64_t(sh.count) * sizeof(fmt::ModuleRecord) != sh.size) body.fail("bad module table size");
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto m = body.get<fmt::ModuleRecord>("module");
        modules.push_back({str(body, m.path)});
      }
    } else if (sh.tag == fmt::kTagRegions) {
      have[2] = true;
      if (uint64_t(sh.count) * sizeof(fmt::RegionRecord) != sh.size) body.fail("bad region table size");
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto rr = body.get<fmt::RegionRecord>("region");
        if (rr.kind >= fmt::kRegionKindCount) body.fail("unknown region kind " + std::to_string(rr.kind));
        Region r;
        r.kind = RegionKind(rr.kind);
        r.subkind = rr.subkind;
        r.name = str(body, rr.name);
        r.file = str(body, rr.file);
        r.function = str(body, rr.function);
        r.line = rr.line;
        if (rr.module != fmt::kNoIndex) {
          if (rr.module >= modules.size()) body.fail("region module index out of range");
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
        uint32_t id = uint32_t(into.regions.size());
        into.regions.push_back(std::move(r));
        known.emplace(key, id);
        region_map.push_back(id);
      }
    } else if (sh.tag == fmt::kTagMetrics) {
      have[3] = true;
      if (uint64_t(sh.count) * sizeof(fmt::MetricRecord) != sh.size) body.fail("bad metric table size");
      std::vector<std::string> names;
      for (uint32_t i = 0; i < sh.count; ++i) {
        auto m = body.get<fmt::MetricRecord>("metric");
        if (m.type > 1 || m.merge > 2) body.fail("bad metric descriptor");
        metric_records.push_back(m);
        names.push_back(str(body, m.name));
      }
      if (into.metrics.empty()) into.metrics = names;
      else if (into.metrics != names) body.fail("metric columns differ from the other ranks'");
    } else if (sh.tag == fmt::kTagThreads) {
      have[4] = true;
      bool local = have[0] && have[2] && have[3];
      if (!local && (have[0] || have[2] || have[3])) body.fail("thread section before its tables");
      if (!local && !shared) body.fail("thread section without definitions");
      const std::vector<uint32_t>& regmap = local ? region_map : shared->region_map;
      const std::vector<fmt::MetricRecord>& mrec = local ? metric_records : shared->metrics;
      const size_t nm = mrec.size();
      for (uint32_t ti = 0; ti < sh.count; ++ti) {
        auto tr = body.get<fmt::ThreadRecord>("thread header");
        uint64_t need = uint64_t(tr.node_count) * (sizeof(fmt::NodeRecord) + 8 * nm);
        if (need > body.left()) body.fail("thread " + std::to_string(tr.index) + ": truncated nodes");
        if (tr.node_count == 0) body.fail("thread " + std::to_string(tr.index) + " has no root");
        ThreadTree t;
        t.rank = header.rank;
        t.thread = tr.index;
        t.flags = tr.flags;
        t.os_tid = tr.os_tid;
        t.parent.resize(tr.node_count);
        t.region.resize(tr.node_count);
        t.values.resize(size_t(tr.node_count) * nm);
        for (uint32_t n = 0; n < tr.node_count; ++n) {
          auto nr = body.get<fmt::NodeRecord>("node");
          if (n == 0 ? nr.parent != fmt::kNoIndex : nr.parent >= n)
            body.fail("thread " + std::to_string(tr.index) + " node " + std::to_string(n) +
                      ": bad parent " + std::to_string(nr.parent));
          if (nr.region >= regmap.size())
            body.fail("thread " + std::to_string(tr.index) + " node " + std::to_string(n) +
                      ": region " + std::to_string(nr.region) + " out of range");
          t.parent[n] = nr.parent;
          t.region[n] = regmap[nr.region];
          for (size_t m = 0; m < nm; ++m) {
            auto raw = body.get<uint64_t>("metric value");
            double v;
            if (fmt::MetricType(mrec[m].type) == fmt::MetricType::F64) std::memcpy(&v, &raw, 8);
            else v = double(raw);
            t.values[size_t(n) * nm + m] = v;
          }
        }
        into.threads.push_back(std::move(t));
      }
    }  // unknown sections are skipped: a newer minor writer may add some
  }
  bool defs = have[0] && have[2] && have[3];
  if (!defs && !have[4]) file.fail("missing section");
  if ((have[0] || have[2] || have[3]) && !defs) file.fail("missing section");
  own.present = defs;
  return own;
}

Experiment load_experiment(const std::string& dir, const LoadOptions& options) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) throw LoadError(dir + ": no such experiment (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw LoadError(dir + ": not an experiment directory");
  Experiment e;
  e.path = dir;
  std::string meta_path = dir + "/" + fmt::kMetaFile;
  {
    std::vector<char> bytes = read_file(meta_path);
    e.meta = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (e.meta.is_discarded() || !e.meta.is_object()) throw LoadError(meta_path + ": not valid JSON");
  }
  if (e.meta.value("format", "") != "scalea-experiment")
    throw LoadError(meta_path + ": not a scalea experiment");
  if (!e.meta["format_version"].is_number_integer() || e.meta["format_version"] != fmt::kVersion)
    throw LoadError(meta_path + ": unsupported format version " + e.meta["format_version"].dump());
  FileDefinitions shared;
  if (e.meta.contains("definitions")) {
    if (!e.meta["definitions"].is_string()) throw LoadError(meta_path + ": bad definitions entry");
    std::string name = e.meta["definitions"].get<std::string>();
    if (name.find('/') != std::string::npos || name.empty() || name[0] == '.')
      throw LoadError(meta_path + ": bad file name " + name);
    std::string path = dir + "/" + name;
    shared = parse_rank_file(path, read_file(path), e, options, nullptr);
    if (!shared.present) throw LoadError(path + ": holds no definitions");
  }
  const auto& files = e.meta["files"];
  if (!files.is_array() || files.empty()) throw LoadError(meta_path + ": lists no data files");
  for (const auto& f : files) {
    if (!f.is_string()) throw LoadError(meta_path + ": bad file entry");
    std::string name = f.get<std::string>();
    if (name.find('/') != std::string::npos || name.empty() || name[0] == '.')
      throw LoadError(meta_path + ": bad file name " + name);
    std::string path = dir + "/" + name;
    parse_rank_file(path, read_file(path), e, options, shared.present ? &shared : nullptr);
  }
  return e;
}

}  // namespace scalea::drg
