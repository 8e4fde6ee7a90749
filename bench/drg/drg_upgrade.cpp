// Rewrites an experiment of format version 1 or 2 in the current version (3), in place, byte for
// byte the same but for the thread sections (scalea/compact.hpp), the headers and meta.json's
// format_version. For scripts/compare_outputs.sh --formats: the same measurements in both
// formats, so that every report can be compared. Snapshots stay version 1, as the collector writes them.
//   drg_upgrade EXPERIMENT_DIR...
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalea/compact.hpp"
#include "scalea/drg/experiment.hpp"

namespace fmt = scalea::format;

namespace {

std::vector<char> read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

template <class T>
T at(const std::vector<char>& b, size_t off) {
  if (off + sizeof(T) > b.size()) throw std::runtime_error("truncated file");
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

template <class T>
void put(std::vector<char>& out, const T& v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

// The metric columns of a file's METR section (none when it has none), with their names.
struct Columns {
  std::vector<std::string> names;
  std::vector<uint8_t> f64;
};
Columns columns_of(const std::vector<char>& b) {
  Columns c;
  std::vector<std::string> strings;
  size_t off = sizeof(fmt::FileHeader);
  auto h = at<fmt::FileHeader>(b, 0);
  for (uint32_t s = 0; s < h.section_count; ++s) {
    auto sh = at<fmt::SectionHeader>(b, off);
    for (size_t i = 0, p = off + sizeof sh; sh.tag == fmt::kTagStrings && i < sh.count; ++i) {
      auto len = at<uint32_t>(b, p);
      strings.emplace_back(b.data() + p + 4, len);
      p += 4 + len;
    }
    for (uint32_t m = 0; sh.tag == fmt::kTagMetrics && m < sh.count; ++m) {
      auto r = at<fmt::MetricRecord>(b, off + sizeof sh + m * sizeof(fmt::MetricRecord));
      c.names.push_back(strings.at(r.name));
      c.f64.push_back(r.type == uint16_t(fmt::MetricType::F64));
    }
    off += sizeof sh + sh.size;
  }
  return c;
}

// Node n's values of a version-2 thread (compact.hpp, put_node_values) as the file's raw words
// (an f64 as its bits), read at `p`; `last` is the mask of the node before.
const uint8_t* version2_values(const uint8_t* p, const uint8_t* end, const fmt::ValueCoding& c,
                               std::vector<uint64_t>& last, uint64_t* raw) {
  const size_t nm = c.columns();
  std::fill(raw, raw + nm, 0);
  for (size_t w = 0; w < c.mask_words(); ++w) {
    uint64_t mask;
    if (!fmt::get_varint(p, end, mask)) throw std::runtime_error("bad version-2 values");
    mask ^= last[w];
    last[w] = mask;
    for (; mask; mask &= mask - 1) {
      const size_t m = w * 64 + unsigned(__builtin_ctzll(mask));
      if (m >= nm) throw std::runtime_error("bad version-2 values");
      if (c.f64[m]) {
        if (end - p < 8) throw std::runtime_error("truncated version-2 values");
        std::memcpy(&raw[m], p, 8);
        p += 8;
      } else if (!fmt::get_varint(p, end, raw[m])) {
        throw std::runtime_error("bad version-2 values");
      }
    }
  }
  if (c.visit_times) {
    const uint64_t mean = fmt::mean_visit(raw);
    raw[2] = mean - fmt::unzigzag(raw[2]);
    raw[3] = mean + fmt::unzigzag(raw[3]);
  }
  return p;
}

// A THRD body of version 1 or 2 in the current version.
std::vector<char> upgrade_threads(const std::vector<char>& b, size_t off, size_t size,
                                  uint32_t count, uint32_t version, const Columns& columns) {
  const size_t nm = columns.f64.size();
  const fmt::ValueCoding coding =
      fmt::value_coding(columns.names, [&](size_t m) { return columns.f64[m] != 0; });
  std::vector<uint64_t> last_mask, cols, raw(nm);
  std::vector<char> out;
  fmt::ShapeTable shapes;
  std::vector<std::vector<uint32_t>> parents, regions;  // version 2: by position in the section
  const auto* end = reinterpret_cast<const uint8_t*>(b.data()) + off + size;
  for (uint32_t position = 0; position < count; ++position) {
    auto tr = at<fmt::ThreadRecord>(b, off);
    off += sizeof tr;
    std::vector<uint32_t> parent(tr.node_count), region(tr.node_count);
    cols.assign(size_t(tr.node_count) * nm, 0);
    const size_t node_size = sizeof(fmt::NodeRecord) + 8 * nm;
    if (version == 1) {
      for (uint32_t n = 0; n < tr.node_count; ++n) {
        auto nr = at<fmt::NodeRecord>(b, off + n * node_size);
        parent[n] = nr.parent;
        region[n] = nr.region;
        for (size_t m = 0; m < nm; ++m)
          raw[m] = at<uint64_t>(b, off + n * node_size + sizeof(fmt::NodeRecord) + 8 * m);
        fmt::code_node_values(raw.data(), coding, n, tr.node_count, cols.data());
      }
      off += tr.node_count * node_size;
    } else {
      const auto* p = reinterpret_cast<const uint8_t*>(b.data()) + off;
      if (tr.same_shape != fmt::kNoIndex) {
        parent = parents.at(tr.same_shape);
        region = regions.at(tr.same_shape);
      }
      for (uint32_t n = 0; tr.same_shape == fmt::kNoIndex && n < tr.node_count; ++n) {
        uint64_t up, r;
        if (!fmt::get_varint(p, end, up) || !fmt::get_varint(p, end, r))
          throw std::runtime_error("bad version-2 structure");
        parent[n] = n == 0 ? fmt::kNoIndex : uint32_t(n - up);
        region[n] = uint32_t(r);
      }
      last_mask.assign(coding.mask_words(), 0);
      for (uint32_t n = 0; n < tr.node_count; ++n) {
        p = version2_values(p, end, coding, last_mask, raw.data());
        fmt::code_node_values(raw.data(), coding, n, tr.node_count, cols.data());
      }
      off = size_t(p - reinterpret_cast<const uint8_t*>(b.data()));
    }
    parents.push_back(parent);
    regions.push_back(region);
    tr.same_shape = shapes.find_or_add(parent, region, position);
    put(out, tr);
    if (tr.same_shape == fmt::kNoIndex) fmt::put_shape(out, parent, region);
    fmt::put_columns(out, cols.data(), tr.node_count, nm);
  }
  return out;
}

// One rank file in the current version; the columns from the shared definitions when the file has
// no METR.
std::vector<char> upgrade_file(const std::vector<char>& b, Columns columns) {
  auto h = at<fmt::FileHeader>(b, 0);
  if (std::memcmp(h.magic, fmt::kMagic, 8) != 0) throw std::runtime_error("not a rank file");
  if (h.version >= fmt::kVersion) return b;
  Columns own = columns_of(b);
  if (!own.names.empty()) columns = own;
  std::vector<char> out(b.begin(), b.begin() + sizeof h);
  size_t off = sizeof h;
  for (uint32_t s = 0; s < h.section_count; ++s) {
    auto sh = at<fmt::SectionHeader>(b, off);
    if (sh.tag != fmt::kTagThreads) {
      out.insert(out.end(), b.begin() + long(off), b.begin() + long(off + sizeof sh + sh.size));
    } else {
      std::vector<char> body =
          upgrade_threads(b, off + sizeof sh, sh.size, sh.count, h.version, columns);
      put(out, fmt::SectionHeader{sh.tag, sh.count, body.size()});
      out.insert(out.end(), body.begin(), body.end());
    }
    off += sizeof sh + sh.size;
  }
  h.version = fmt::kVersion;
  h.payload_size = out.size() - sizeof h;
  h.payload_crc32 = scalea::drg::payload_crc32(out.data() + sizeof h, out.size() - sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

std::vector<char> upgrade_container(const std::vector<char>& b, const Columns& columns) {
  auto h = at<fmt::ContainerHeader>(b, 0);
  std::vector<fmt::ContainerPart> parts;
  for (uint32_t i = 0; i < h.count; ++i) {
    auto e = at<fmt::ContainerEntry>(b, sizeof h + i * sizeof(fmt::ContainerEntry));
    if (e.offset + e.length > b.size()) throw std::runtime_error("truncated container");
    std::vector<char> part(b.begin() + long(e.offset), b.begin() + long(e.offset + e.length));
    part = upgrade_file(part, columns);
    parts.push_back(
        {e.rank, scalea::drg::payload_crc32(part.data(), part.size()), std::move(part)});
  }
  return fmt::encode_container(parts);
}

void upgrade(const std::string& dir) {
  std::vector<char> text = read(dir + "/meta.json");
  nlohmann::json meta = nlohmann::json::parse(text.begin(), text.end());
  Columns shared;
  if (meta.contains("definitions")) {
    std::string defs = dir + "/" + meta["definitions"].get<std::string>();
    std::vector<char> b = read(defs);
    shared = columns_of(b);
    write(defs, upgrade_file(b, shared));
  }
  for (const auto& f : meta["files"]) {
    std::string path = dir + "/" + f.get<std::string>();
    std::vector<char> b = read(path);
    bool container = path.size() > 5 && path.compare(path.size() - 5, 5, ".sdrc") == 0;
    write(path, container ? upgrade_container(b, shared) : upgrade_file(b, shared));
  }
  // meta.json's text keeps everything else as it was: only the version's digit changes.
  std::string s(text.begin(), text.end());
  size_t v = s.find("\"format_version\": ");
  if (v == std::string::npos || s[v + 18] == char('0' + fmt::kVersion)) return;
  s[v + 18] = char('0' + fmt::kVersion);
  write(dir + "/meta.json", std::vector<char>(s.begin(), s.end()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: drg_upgrade EXPERIMENT_DIR...\n");
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      upgrade(argv[i]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "drg_upgrade: %s: %s\n", argv[i], e.what());
      status = 1;
    }
  }
  return status;
}
