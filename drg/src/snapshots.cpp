#include "scalea/drg/snapshots.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>

namespace scalea::drg {

namespace fmt = scalea::format;

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "prefix" followed by digits only, and the number they make.
bool numbered(const std::string& name, const std::string& prefix, const std::string& suffix,
              uint64_t& value) {
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  value = std::stoull(digits);
  return true;
}

// A rank directory's snapshots.
void list_rank(SnapshotDir& s, const std::string& dir, int32_t rank) {
  for (const std::string& f : entries(dir)) {
    uint64_t tick = 0;
    if (f == "final.sdrg") s.finals[rank] = dir + "/" + f;
    else if (numbered(f, "snap-", ".sdrg", tick)) s.ticks[tick][rank] = dir + "/" + f;
  }
}

std::optional<SnapshotDir> list(const std::string& path, bool live) {
  if (!is_dir(path)) return std::nullopt;
  SnapshotDir s;
  s.path = path;
  s.live = live;
  for (const std::string& d : entries(path)) {
    uint64_t rank = 0;
    if (!numbered(d, "rank-", "", rank) || rank > uint64_t(kMaxRank) || !is_dir(path + "/" + d))
      continue;
    s.ranks.push_back(int32_t(rank));
    list_rank(s, path + "/" + d, int32_t(rank));
  }
  return s;
}

void read_all(const std::string& path, std::vector<char>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) throw LoadError(path + ": cannot read");
}

// Where a file's sections are, its header and payload checked.
struct Layout {
  struct Section {
    uint32_t tag, count;
    size_t at;  // offset of the records
    uint64_t size;
  };
  int32_t rank = -1;
  std::vector<Section> sections;
  const Section* find(uint32_t tag) const {
    for (const Section& s : sections)
      if (s.tag == tag) return &s;
    return nullptr;
  }
};

Layout layout(const std::string& name, const std::vector<char>& b) {
  auto fail = [&](const std::string& why) { throw LoadError(name + ": " + why); };
  if (b.size() < sizeof(fmt::FileHeader) || std::memcmp(b.data(), fmt::kMagic, 8) != 0)
    fail("not a scalea snapshot (bad magic)");
  fmt::FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  if (h.version != fmt::kSnapshotVersion) fail("format version " + std::to_string(h.version));
  if (h.header_size != sizeof h || h.payload_size != b.size() - sizeof h)
    fail("truncated or padded");
  if (payload_crc32(b.data() + sizeof h, size_t(h.payload_size)) != h.payload_crc32)
    fail("checksum mismatch (corrupt file)");
  Layout l;
  l.rank = h.rank;
  size_t at = sizeof h;
  for (uint32_t i = 0; i < h.section_count; ++i) {
    if (b.size() - at < sizeof(fmt::SectionHeader)) fail("truncated section header");
    fmt::SectionHeader sh;
    std::memcpy(&sh, b.data() + at, sizeof sh);
    at += sizeof sh;
    if (sh.size > b.size() - at) fail("truncated section");
    l.sections.push_back({sh.tag, sh.count, at, sh.size});
    at += size_t(sh.size);
  }
  return l;
}

template <class T>
void put(std::vector<char>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

template <class T>
T get(const std::vector<char>& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// The metric columns of a file: name, type and merge rule, from METR and STRG.
struct Column {
  std::string name;
  fmt::MetricType type;
  fmt::MetricMerge merge;
};
std::vector<Column> columns(const std::string& name, const std::vector<char>& b, const Layout& l) {
  const Layout::Section* strg = l.find(fmt::kTagStrings);
  const Layout::Section* metr = l.find(fmt::kTagMetrics);
  if (!strg || !metr) throw LoadError(name + ": a snapshot without its definitions");
  std::vector<std::string> strings;
  size_t at = strg->at, end = strg->at + strg->size;
  for (uint32_t i = 0; i < strg->count; ++i) {
    if (end - at < 4) throw LoadError(name + ": truncated string table");
    uint32_t len = get<uint32_t>(b, at);
    at += 4;
    if (end - at < len) throw LoadError(name + ": truncated string table");
    strings.emplace_back(b.data() + at, len);
    at += len;
  }
  if (uint64_t(metr->count) * sizeof(fmt::MetricRecord) != metr->size)
    throw LoadError(name + ": bad metric table size");
  std::vector<Column> out;
  for (uint32_t i = 0; i < metr->count; ++i) {
    auto m = get<fmt::MetricRecord>(b, metr->at + i * sizeof(fmt::MetricRecord));
    if (m.name >= strings.size()) throw LoadError(name + ": bad metric name");
    out.push_back({strings[m.name], fmt::MetricType(m.type), fmt::MetricMerge(m.merge)});
  }
  return out;
}

// Each thread's nodes in a THRD section: thread index -> (offset of its first node, node count).
std::map<uint32_t, std::pair<size_t, uint32_t>> threads(const std::string& name,
                                                        const std::vector<char>& b, const Layout& l,
                                                        size_t node_size) {
  const Layout::Section* thrd = l.find(fmt::kTagThreads);
  if (!thrd) throw LoadError(name + ": a snapshot without threads");
  std::map<uint32_t, std::pair<size_t, uint32_t>> out;
  size_t at = thrd->at, end = thrd->at + thrd->size;
  for (uint32_t i = 0; i < thrd->count; ++i) {
    if (end - at < sizeof(fmt::ThreadRecord)) throw LoadError(name + ": truncated thread");
    auto t = get<fmt::ThreadRecord>(b, at);
    at += sizeof t;
    if (uint64_t(t.node_count) * node_size > end - at) throw LoadError(name + ": truncated thread");
    out[t.index] = {at, t.node_count};
    at += size_t(t.node_count) * node_size;
  }
  return out;
}

double number_at(const nlohmann::json& j, const char* a, const char* b, double fallback) {
  if (!j.is_object() || !j.contains(a) || !j[a].is_object() || !j[a].contains(b) ||
      !j[a][b].is_number())
    return fallback;
  return j[a][b].get<double>();
}

// A time in s since the process started, made relative to `t0`: null (affinity) or absent
// (openmp) when it lies before.
void shift(nlohmann::json& obj, const char* key, double t0, bool drop) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return;
  double v = obj[key].get<double>() - t0;
  if (v > 0) obj[key] = v;
  else if (drop) obj.erase(key);
  else obj[key] = nullptr;
}

std::string rank_file(int32_t rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%06d.sdrg", rank < 0 ? 0 : rank);
  return buf;
}

}  // namespace

std::optional<SnapshotDir> find_snapshots(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  if (auto s = list(d + "/snapshots", false)) return s;
  if (auto s = list(d + ".live", true)) return s;
  // The snapshot directory itself (DIR/snapshots, DIR.live).
  if (!is_dir(d)) return std::nullopt;
  bool live = d.size() > 5 && d.compare(d.size() - 5, 5, ".live") == 0;
  std::optional<SnapshotDir> s = list(d, live);
  if (s && s->ranks.empty()) return std::nullopt;
  return s;
}

double SnapshotPart::time_s() const { return number_at(meta, "snapshot", "time_s", 0); }
double SnapshotPart::wall_s() const { return number_at(meta, "snapshot", "wall_s", 0); }

SnapshotPart read_snapshot(const std::string& path) {
  SnapshotPart p;
  p.path = path;
  read_all(path, p.bytes);
  Layout l = layout(path, p.bytes);
  p.rank = l.rank;
  const Layout::Section* snap = l.find(fmt::kTagSnapshot);
  if (!snap) throw LoadError(path + ": not a snapshot (no SNAP section)");
  p.meta = nlohmann::json::parse(p.bytes.begin() + long(snap->at),
                                 p.bytes.begin() + long(snap->at + snap->size), nullptr, false);
  if (!p.meta.is_object() || !p.meta.contains("snapshot") || !p.meta["snapshot"].is_object())
    throw LoadError(path + ": the snapshot's description is not valid");
  std::vector<Column> cols = columns(path, p.bytes, l);
  size_t node_size = sizeof(fmt::NodeRecord) + cols.size() * 8, visits = cols.size();
  for (size_t c = 0; c < cols.size(); ++c)
    if (cols[c].name == "visits" && cols[c].type == fmt::MetricType::U64) visits = c;
  if (visits < cols.size())
    for (const auto& [index, where] : threads(path, p.bytes, l, node_size))
      for (uint32_t i = 0; i < where.second; ++i)
        p.entered += get<uint64_t>(
            p.bytes, where.first + i * node_size + sizeof(fmt::NodeRecord) + visits * 8);
  return p;
}

namespace {

// Two snapshots of one process side by side: their columns, and for each thread of the earlier
// one that the later one has, where its nodes are in each (a thread's nodes keep their index from
// one snapshot to the next, new nodes come after them).
struct Pairing {
  std::vector<Column> cols;
  size_t node_size = 0;
  int visits = -1, time = -1;  // the columns' indexes, -1 when absent
  // Each snapshot converts clock ticks to ns with the ratio measured up to it: the earlier one's
  // times are converted again with the later one's ratio, so that unchanged times subtract to 0.
  double rescale = 1;
  double skew_ns = 0;  // the time between the two snapshots
  struct Thread {
    uint32_t index = 0;
    size_t later_at = 0, earlier_at = 0;
    uint32_t nodes = 0;  // the earlier one's
  };
  std::vector<Thread> threads;

  // The factor that brings the earlier snapshot's value of column `c` to the later one's units.
  double factor(size_t c) const {
    fmt::MetricUnit unit = fmt::metric_unit(cols[c].name);
    return unit == fmt::MetricUnit::Ns    ? rescale
           : unit == fmt::MetricUnit::Ns2 ? rescale * rescale
                                          : 1;
  }
  size_t value_at(size_t node_at, size_t c) const {
    return node_at + sizeof(fmt::NodeRecord) + c * 8;
  }
  // Rounding to whole ns (and the ratio's last digits) may leave an unchanged time a few ns below
  // the earlier one. And a snapshot closes a thread's open regions at the moment of its copy,
  // while a thread that had already taken the time of its next event (and waited for the copy to
  // let it in) ends the region at that earlier time: the later snapshot may hold less, by less
  // than the time between the two. More is not the same run.
  bool same_run(double later_value, double earlier_value) const {
    return later_value >= earlier_value - std::max({4.0, 1e-6 * earlier_value, skew_ns});
  }
};

[[noreturn]] void not_continued(const SnapshotPart& later, const SnapshotPart& earlier,
                                const std::string& why) {
  throw LoadError(later.path + ": does not continue " + earlier.path + " (" + why + ")");
}

// Pairs `later` with `earlier`; throws LoadError when `later` does not continue `earlier`.
Pairing pair(const SnapshotPart& later, const SnapshotPart& earlier) {
  auto fail = [&](const std::string& why) { not_continued(later, earlier, why); };
  if (later.rank != earlier.rank) fail("another rank");
  if (later.meta.value("pid", -1) != earlier.meta.value("pid", -1) ||
      later.meta.value("host", std::string()) != earlier.meta.value("host", std::string()))
    fail("another process");
  Pairing out;
  Layout ll = layout(later.path, later.bytes), el = layout(earlier.path, earlier.bytes);
  out.cols = columns(later.path, later.bytes, ll);
  std::vector<Column> ecols = columns(earlier.path, earlier.bytes, el);
  if (out.cols.size() != ecols.size()) fail("other metric columns");
  out.node_size = sizeof(fmt::NodeRecord) + out.cols.size() * 8;
  for (size_t c = 0; c < out.cols.size(); ++c) {
    if (out.cols[c].name != ecols[c].name) fail("other metric columns");
    if (out.cols[c].name == "visits") out.visits = int(c);
    if (out.cols[c].name == "time") out.time = int(c);
  }
  double rl = number_at(later.meta, "clock", "ns_per_tick", 1),
         re = number_at(earlier.meta, "clock", "ns_per_tick", 1);
  out.rescale = rl > 0 && re > 0 ? rl / re : 1;
  out.skew_ns = std::max(0.0, later.time_s() - earlier.time_s()) * 1e9;
  auto lt = threads(later.path, later.bytes, ll, out.node_size);
  auto et = threads(earlier.path, earlier.bytes, el, out.node_size);
  for (const auto& [index, where] : lt) {
    auto e = et.find(index);
    if (e == et.end()) continue;  // a thread that started in the interval
    Pairing::Thread t{index, where.first, e->second.first, e->second.second};
    if (t.nodes > where.second) fail("thread " + std::to_string(index) + " lost nodes");
    for (uint32_t i = 0; i < t.nodes; ++i)
      if (std::memcmp(later.bytes.data() + t.later_at + i * out.node_size,
                      earlier.bytes.data() + t.earlier_at + i * out.node_size,
                      sizeof(fmt::NodeRecord)) != 0)
        fail("thread " + std::to_string(index) + " node " + std::to_string(i) + " differs");
    out.threads.push_back(t);
  }
  return out;
}

void update_crc(std::vector<char>& b) {
  fmt::FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  h.payload_crc32 = payload_crc32(b.data() + sizeof h, size_t(h.payload_size));
  std::memcpy(b.data(), &h, sizeof h);
}

}  // namespace

SnapshotPart subtract(const SnapshotPart& later, const SnapshotPart& earlier) {
  const Pairing pr = pair(later, earlier);
  SnapshotPart out = later;
  out.entered = later.entered - std::min(later.entered, earlier.entered);
  std::vector<char>& b = out.bytes;
  for (const Pairing::Thread& t : pr.threads) {
    for (uint32_t i = 0; i < t.nodes; ++i) {
      size_t l0 = t.later_at + i * pr.node_size, e0 = t.earlier_at + i * pr.node_size;
      for (size_t c = 0; c < pr.cols.size(); ++c) {
        if (pr.cols[c].merge != fmt::MetricMerge::Sum) continue;  // min, max: the later ones
        size_t at = pr.value_at(l0, c), eat_c = pr.value_at(e0, c);
        double k = pr.factor(c);
        if (pr.cols[c].type == fmt::MetricType::F64) {
          double v = get<double>(b, at) - k * get<double>(earlier.bytes, eat_c);
          if (v < 0 && -v <= 1e-6 * k * get<double>(earlier.bytes, eat_c)) v = 0;
          put(b, at, v);
        } else {
          double lv = double(get<uint64_t>(b, at)),
                 ev = k * double(get<uint64_t>(earlier.bytes, eat_c));
          if (!pr.same_run(lv, ev))
            not_continued(later, earlier,
                          "thread " + std::to_string(t.index) + " node " + std::to_string(i) +
                              ": " + pr.cols[c].name + " decreased by " +
                              std::to_string(uint64_t(ev - lv)));
          // What is less is 0 in the interval (settle_to_later() leaves none in a series).
          put<uint64_t>(b, at, lv > ev ? uint64_t(std::llround(lv - ev)) : 0);
        }
      }
      // A visit open over the whole interval: one visit, so that the region counts as run.
      if (pr.visits >= 0 && pr.time >= 0) {
        size_t va = pr.value_at(l0, size_t(pr.visits));
        if (get<uint64_t>(b, va) == 0 && get<uint64_t>(b, pr.value_at(l0, size_t(pr.time))) > 0)
          put<uint64_t>(b, va, 1);
      }
    }
  }
  update_crc(b);
  // The meta of the interval: its times relative to its start.
  double t0 = earlier.time_s(), t1 = later.time_s();
  nlohmann::json& m = out.meta;
  if (m.contains("clock") && m["clock"].is_object())
    m["clock"]["duration_s"] = std::max(0.0, t1 - t0);
  if (m.contains("affinity") && m["affinity"].is_object() && m["affinity"].contains("threads") &&
      m["affinity"]["threads"].is_array())
    for (auto& t : m["affinity"]["threads"]) shift(t, "created_s", t0, false);
  if (m.contains("openmp")) {
    shift(m["openmp"], "runtime_init_s", t0, true);
    shift(m["openmp"], "runtime_ready_s", t0, true);
  }
  m["snapshot"]["interval"] = {t0, t1};
  m["snapshot"]["earlier_seq"] = earlier.meta["snapshot"].value("seq", 0);
  return out;
}

bool settle_to_later(SnapshotPart& earlier, const SnapshotPart& later) {
  std::optional<Pairing> pr;
  try {
    pr.emplace(pair(later, earlier));
  } catch (const LoadError&) {
    return false;  // subtract() says why when the interval is read
  }
  bool changed = pr->rescale != 1;
  std::vector<char>& b = earlier.bytes;
  for (const Pairing::Thread& t : pr->threads)
    for (uint32_t i = 0; i < t.nodes; ++i) {
      size_t l0 = t.later_at + i * pr->node_size, e0 = t.earlier_at + i * pr->node_size;
      for (size_t c = 0; c < pr->cols.size(); ++c) {
        size_t at = pr->value_at(e0, c);
        double k = pr->factor(c);
        if (pr->cols[c].type == fmt::MetricType::F64) {
          // Sums of doubles subtract to negative values as they are: they add up already.
          if (k != 1) put<double>(b, at, k * get<double>(b, at));
          continue;
        }
        double ev = k * double(get<uint64_t>(b, at));
        bool lower = false;
        if (pr->cols[c].merge == fmt::MetricMerge::Sum) {
          double lv = double(get<uint64_t>(later.bytes, pr->value_at(l0, c)));
          lower = ev > lv && pr->same_run(lv, ev);  // more: subtract() refuses it
          if (lower) ev = lv;
        }
        if (k != 1 || lower) put<uint64_t>(b, at, uint64_t(std::llround(ev)));
        changed = changed || lower;
      }
    }
  if (!changed) return false;
  // Now in the later one's clock ratio: subtract() converts nothing.
  if (pr->rescale != 1 && earlier.meta.contains("clock") && earlier.meta["clock"].is_object())
    earlier.meta["clock"]["ns_per_tick"] = number_at(later.meta, "clock", "ns_per_tick", 1);
  update_crc(b);
  return true;
}

SnapshotFiles snapshot_files(const std::vector<SnapshotPart>& parts, const std::string& name) {
  if (parts.empty()) throw LoadError(name + ": no snapshot");
  std::vector<const SnapshotPart*> sorted;
  for (const SnapshotPart& p : parts) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(),
            [](const SnapshotPart* a, const SnapshotPart* b) { return a->rank < b->rank; });
  SnapshotFiles out;
  nlohmann::json& meta = out.meta;
  meta = sorted[0]->meta;
  nlohmann::json names = nlohmann::json::array(), ranks = nlohmann::json::array();
  int32_t top = 0;
  for (const SnapshotPart* p : sorted) {
    std::string f = rank_file(p->rank);
    if (!out.files.emplace(f, &p->bytes).second)
      throw LoadError(p->path + ": rank " + std::to_string(p->rank) + " appears twice");
    names.push_back(f);
    top = std::max(top, p->rank + 1);
    nlohmann::json a =
        p->meta.contains("affinity") ? p->meta["affinity"] : nlohmann::json::object();
    if (!a.is_object()) a = nlohmann::json::object();
    a.erase("ranks");
    a["rank"] = p->rank;
    a["host"] = p->meta.value("host", std::string());
    ranks.push_back(a);
  }
  meta["files"] = names;
  meta.erase("definitions");
  int64_t declared = meta.contains("ranks") && meta["ranks"].is_number_integer()
                         ? meta["ranks"].get<int64_t>()
                         : 1;
  meta["ranks"] = std::max<int64_t>(declared, top);
  if (sorted.size() > 1) {
    if (!meta["affinity"].is_object()) meta["affinity"] = nlohmann::json::object();
    meta["affinity"]["ranks"] = ranks;
  }
  return out;
}

Experiment load_snapshot(const std::vector<SnapshotPart>& parts, const std::string& name,
                         const LoadOptions& options) {
  SnapshotFiles f = snapshot_files(parts, name);
  std::string text = f.meta.dump();
  std::string meta_path = name + "/" + fmt::kMetaFile;
  return load_experiment(name, options, [&](const std::string& path) -> std::vector<char> {
    if (path == meta_path) return std::vector<char>(text.begin(), text.end());
    auto it =
        path.rfind(name + "/", 0) == 0 ? f.files.find(path.substr(name.size() + 1)) : f.files.end();
    if (it == f.files.end()) throw LoadError(path + ": no such file");
    return *it->second;
  });
}

}  // namespace scalea::drg
