#include "scalea/drg/encode.hpp"
#include "scalea/compact.hpp"
#include "scalea/crc32.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace scalea::drg {

namespace fmt = scalea::format;

namespace {

template <class T>
void put(std::vector<char>& out, const T& v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

struct Strings {
  std::vector<std::string> list{""};
  std::unordered_map<std::string, uint32_t> index{{"", 0}};
  uint32_t operator()(const std::string& s) {
    auto [it, fresh] = index.emplace(s, uint32_t(list.size()));
    if (fresh) list.push_back(s);
    return it->second;
  }
};

void section(std::vector<char>& out, uint32_t tag, uint32_t count, const std::vector<char>& body) {
  put(out, fmt::SectionHeader{tag, count, uint64_t(body.size())});
  out.insert(out.end(), body.begin(), body.end());
}

}  // namespace

void seal_rank_file(std::vector<char>& bytes) {
  if (bytes.size() < sizeof(fmt::FileHeader)) return;
  fmt::FileHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  h.payload_size = bytes.size() - sizeof h;
  h.payload_crc32 = fmt::crc32_fast(bytes.data() + sizeof h, bytes.size() - sizeof h);
  std::memcpy(bytes.data(), &h, sizeof h);
}

std::vector<char> encode_rank_file(const Experiment& e, int32_t rank, const EncodeOptions& o) {
  const size_t nm = e.metrics.size();
  std::vector<fmt::MetricType> type(nm, fmt::MetricType::U64);
  std::vector<fmt::MetricMerge> merge(nm, fmt::MetricMerge::Sum);
  for (size_t m = 0; m < nm; ++m) {
    for (const fmt::MetricSpec& s : fmt::kCoreMetrics)
      if (e.metrics[m] == s.name) {
        type[m] = s.type;
        merge[m] = s.merge;
      }
    if (m < e.metric_type.size()) type[m] = e.metric_type[m];
    if (m < e.metric_merge.size()) merge[m] = e.metric_merge[m];
  }
  std::vector<char> payload;
  uint32_t sections = 0;
  if (o.definitions) {
    Strings str;
    std::vector<std::string> modules;
    std::unordered_map<std::string, uint32_t> module_index;
    std::vector<char> modl, regn, metr, strg;
    for (const Region& r : e.regions)
      if (!r.module.empty() && module_index.emplace(r.module, uint32_t(modules.size())).second)
        modules.push_back(r.module);
    for (const std::string& m : modules) put(modl, fmt::ModuleRecord{str(m), 0, 0});
    for (const Region& r : e.regions)
      put(regn, fmt::RegionRecord{
                    uint16_t(r.kind), r.subkind, str(r.name), str(r.file), str(r.function), r.line,
                    r.module.empty() ? fmt::kNoIndex : module_index[r.module], r.address});
    for (size_t m = 0; m < nm; ++m)
      put(metr, fmt::MetricRecord{str(e.metrics[m]), uint16_t(type[m]), uint16_t(merge[m])});
    for (const std::string& s : str.list) {
      put(strg, uint32_t(s.size()));
      strg.insert(strg.end(), s.begin(), s.end());
    }
    section(payload, fmt::kTagStrings, uint32_t(str.list.size()), strg);
    section(payload, fmt::kTagModules, uint32_t(modules.size()), modl);
    section(payload, fmt::kTagRegions, uint32_t(e.regions.size()), regn);
    section(payload, fmt::kTagMetrics, uint32_t(nm), metr);
    sections += 4;
  }
  if (o.threads) {
    std::vector<char> thrd;
    uint32_t count = 0;
    std::vector<uint64_t> raw(nm), last_mask, cols;
    const fmt::ValueCoding coding =
        fmt::value_coding(e.metrics, [&](size_t m) { return type[m] == fmt::MetricType::F64; });
    fmt::ShapeTable shapes;
    for (const ThreadTree& t : e.threads) {
      if (t.rank != rank) continue;
      uint32_t same = o.version >= 2 ? shapes.find_or_add(t.parent, t.region, count) : 0;
      ++count;
      put(thrd, fmt::ThreadRecord{t.thread, t.flags, t.os_tid, uint32_t(t.size()), same});
      if (o.version >= 2 && same == fmt::kNoIndex) fmt::put_shape(thrd, t.parent, t.region);
      last_mask.assign(coding.mask_words(), 0);
      if (o.version >= 3) cols.assign(t.size() * nm, 0);
      for (size_t n = 0; n < t.size(); ++n) {
        for (size_t m = 0; m < nm; ++m) {
          double v = t.values[n * nm + m];
          if (coding.f64[m]) std::memcpy(&raw[m], &v, 8);
          else raw[m] = v <= 0 || std::isnan(v) ? 0 : uint64_t(std::llround(v));
        }
        if (o.version >= 3) {
          fmt::code_node_values(raw.data(), coding, n, t.size(), cols.data());
          continue;
        }
        if (o.version >= 2) {
          fmt::put_node_values(thrd, raw.data(), coding, last_mask);
          continue;
        }
        put(thrd, fmt::NodeRecord{t.parent[n], t.region[n]});
        thrd.insert(thrd.end(), reinterpret_cast<const char*>(raw.data()),
                    reinterpret_cast<const char*>(raw.data() + nm));
      }
      if (o.version >= 3) fmt::put_columns(thrd, cols.data(), t.size(), nm);
    }
    section(payload, fmt::kTagThreads, count, thrd);
    sections += 1;
  }
  fmt::FileHeader h{};
  std::memcpy(h.magic, fmt::kMagic, 8);
  h.version = o.version;
  h.header_size = sizeof h;
  h.section_count = sections;
  h.rank = rank;
  std::vector<char> out;
  out.reserve(sizeof h + payload.size());
  put(out, h);
  out.insert(out.end(), payload.begin(), payload.end());
  seal_rank_file(out);
  return out;
}

std::string encode_meta(const Experiment& e, const std::vector<std::string>& files,
                        const std::string& definitions) {
  nlohmann::json m = e.meta.is_object() ? e.meta : nlohmann::json::object();
  m["format"] = "scalea-experiment";
  m["format_version"] = fmt::kVersion;
  if (!m.contains("complete")) m["complete"] = true;
  m["ranks"] = e.ranks();
  m["files"] = files;
  if (!definitions.empty()) m["definitions"] = definitions;
  else m.erase("definitions");
  return m.dump(2) + "\n";
}

void write_experiment(const Experiment& e, const std::string& dir, bool shared_definitions,
                      int ranks_per_node) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error(dir + ": cannot create (" + std::strerror(errno) + ")");
  auto write = [&](const std::string& name, const char* data, size_t size) {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(data, std::streamsize(size));
    if (!out) throw std::runtime_error(dir + "/" + name + ": cannot write");
  };
  std::set<int32_t> ranks;
  for (const ThreadTree& t : e.threads) ranks.insert(t.rank);
  std::vector<std::string> files;
  std::string defs;
  if (shared_definitions) {
    defs = "definitions.sdrg";
    auto bytes = encode_rank_file(e, -1, EncodeOptions{true, false});
    write(defs, bytes.data(), bytes.size());
  }
  std::vector<fmt::ContainerPart> node;  // the ranks of the container to write
  auto write_container = [&] {
    files.push_back(fmt::container_file_name(int(files.size())));
    auto bytes = fmt::encode_container(node);
    write(files.back(), bytes.data(), bytes.size());
    node.clear();
  };
  for (int32_t r : ranks) {
    auto bytes = encode_rank_file(e, r, EncodeOptions{!shared_definitions, true});
    if (ranks_per_node > 0) {
      node.push_back({r, payload_crc32(bytes.data(), bytes.size()), std::move(bytes)});
      if (node.size() == size_t(ranks_per_node)) write_container();
      continue;
    }
    char name[32];
    std::snprintf(name, sizeof name, "rank-%06d.sdrg", r < 0 ? 0 : r);
    write(name, bytes.data(), bytes.size());
    files.push_back(name);
  }
  if (!node.empty()) write_container();
  std::string meta = encode_meta(e, files, defs);
  write(fmt::kMetaFile, meta.data(), meta.size());
}

}  // namespace scalea::drg
