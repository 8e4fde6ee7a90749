#include "writer.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "json_text.hpp"
#include "online_tuner.hpp"
#include "sampler.hpp"
#include "scalea/compact.hpp"
#include "scalea/crc32.hpp"
#include "scalea/creatable.hpp"
#include "snapshot.hpp"

extern char** environ;

namespace scalea::collect {

namespace fmt = scalea::format;

namespace {

std::string parent_of(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  size_t slash = d.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return d.substr(0, slash);
}

std::string base_of(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  size_t slash = d.rfind('/');
  return slash == std::string::npos ? d : d.substr(slash + 1);
}

class StringTable {
 public:
  StringTable() { intern(""); }
  uint32_t intern(const std::string& s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    uint32_t id = uint32_t(strings_.size());
    strings_.push_back(s);
    index_.emplace(s, id);
    return id;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> index_;
};

struct Buffer {
  std::vector<char> bytes;
  template <class T>
  void put(const T& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void put_bytes(const void* p, size_t n) {
    bytes.insert(bytes.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
  }
  void section(uint32_t tag, uint32_t count, const Buffer& body) {
    put(fmt::SectionHeader{tag, count, uint64_t(body.bytes.size())});
    put_bytes(body.bytes.data(), body.bytes.size());
  }
};

// A data file built in one buffer: the file header's place comes first and is filled in by
// seal(), and large sections are written in place (begin_section/end_section), so the file is
// never copied: its peak memory is the file's size.
struct FileBuffer : Buffer {
  explicit FileBuffer(size_t payload_hint = 0) {
    bytes.reserve(sizeof(fmt::FileHeader) + payload_hint);
    bytes.resize(sizeof(fmt::FileHeader));
  }
  size_t begin_section(uint32_t tag, uint32_t count) {
    size_t at = bytes.size();
    put(fmt::SectionHeader{tag, count, 0});
    return at;
  }
  void end_section(size_t at) {
    fmt::SectionHeader h;
    std::memcpy(&h, bytes.data() + at, sizeof h);
    h.size = uint64_t(bytes.size() - at - sizeof h);
    std::memcpy(bytes.data() + at, &h, sizeof h);
  }
  std::vector<char> seal(uint32_t sections, int rank, uint32_t version = fmt::kVersion) {
    fmt::FileHeader header{};
    std::memcpy(header.magic, fmt::kMagic, 8);
    header.version = version;
    header.header_size = sizeof(fmt::FileHeader);
    const char* payload = bytes.data() + sizeof(fmt::FileHeader);
    header.payload_size = bytes.size() - sizeof(fmt::FileHeader);
    header.section_count = sections;
    header.payload_crc32 = fmt::crc32_fast(payload, header.payload_size);
    header.rank = rank;
    std::memcpy(bytes.data(), &header, sizeof header);
    return std::move(bytes);
  }
};

// Definition sections into `payload`; returns the number of sections.
uint32_t put_definitions(Buffer& payload, const std::vector<PortableRegion>& regions) {
  StringTable strings;
  std::vector<std::string> module_paths;
  std::unordered_map<std::string, uint32_t> module_index;
  Buffer regions_body, modules_body, metrics_body, strings_body;
  for (const PortableRegion& r : regions) {
    fmt::RegionRecord rr{};
    rr.kind = r.kind;
    rr.subkind = r.subkind;
    rr.name = strings.intern(r.name);
    rr.file = strings.intern(r.file);
    rr.function = strings.intern(r.function);
    rr.line = r.line;
    rr.module = fmt::kNoIndex;
    rr.address = r.address;
    if (!r.module.empty()) {
      auto it = module_index.find(r.module);
      if (it == module_index.end()) {
        it = module_index.emplace(r.module, uint32_t(module_paths.size())).first;
        module_paths.push_back(r.module);
      }
      rr.module = it->second;
    }
    regions_body.put(rr);
  }
  for (const std::string& m : module_paths)
    modules_body.put(fmt::ModuleRecord{strings.intern(m), 0, 0});
  for (const fmt::MetricSpec& m : fmt::kCoreMetrics)
    metrics_body.put(
        fmt::MetricRecord{strings.intern(m.name), uint16_t(m.type), uint16_t(m.merge)});
  // One column per measured counter (collect/papi): inclusive deltas, summed when merged.
  for (const std::string& c : counters::measured())
    metrics_body.put(fmt::MetricRecord{strings.intern("papi:" + c), uint16_t(fmt::MetricType::U64),
                                       uint16_t(fmt::MetricMerge::Sum)});
  for (const std::string& s : strings.strings()) {
    strings_body.put(uint32_t(s.size()));
    strings_body.put_bytes(s.data(), s.size());
  }
  payload.section(fmt::kTagStrings, uint32_t(strings.strings().size()), strings_body);
  payload.section(fmt::kTagModules, uint32_t(module_paths.size()), modules_body);
  payload.section(fmt::kTagRegions, uint32_t(regions.size()), regions_body);
  payload.section(fmt::kTagMetrics, fmt::kCoreMetricCount + counters::count(), metrics_body);
  return 4;
}

// The bytes of the threads section: its header, and per thread a record and its nodes.
size_t threads_section_size(const std::vector<ThreadState*>& threads) {
  size_t per_node =
      sizeof(fmt::NodeRecord) + (fmt::kCoreMetricCount + counters::count()) * sizeof(uint64_t);
  size_t n = sizeof(fmt::SectionHeader);
  for (const ThreadState* t : threads)
    n += sizeof(fmt::ThreadRecord) + size_t(t->node_count) * per_node;
  return n;
}

std::vector<ThreadState*> threads_of(Recorder& rec) {
  std::lock_guard<std::mutex> lock(rec.mutex());
  return rec.threads();
}

// A node's statistic as the file holds it: times converted from clock ticks to ns (the sum of
// squares to ns²), the minimum of a node never visited 0, f64 values as their bits.
struct Column {
  double ns_per_tick;
  uint64_t operator()(uint64_t v, fmt::MetricUnit unit, fmt::MetricMerge merge,
                      uint64_t visits) const {
    if (merge == fmt::MetricMerge::Min && !visits) return 0;
    return unit == fmt::MetricUnit::Ns ? uint64_t(std::llround(double(v) * ns_per_tick)) : v;
  }
  uint64_t operator()(double v, fmt::MetricUnit unit, fmt::MetricMerge, uint64_t) const {
    double x = unit == fmt::MetricUnit::Ns2  ? v * ns_per_tick * ns_per_tick
               : unit == fmt::MetricUnit::Ns ? v * ns_per_tick
                                             : v;
    uint64_t bits;
    std::memcpy(&bits, &x, 8);
    return bits;
  }
};

// A node's values as the file holds them, core columns then counter columns.
void node_values(const Recorder& rec, const ThreadState& t, uint32_t i, const Column& column,
                 uint64_t* values) {
  const Stats& s = t.node_at(i)->s;
  const uint64_t core[fmt::kCoreMetricCount] = {
#define SCALEA_X(id, name, type, merge, unit, scope, field) \
  column(s.field, fmt::MetricUnit::unit, fmt::MetricMerge::merge, s.visits),
      SCALEA_CORE_METRICS(SCALEA_X)
#undef SCALEA_X
  };
  std::memcpy(values, core, sizeof core);
  // The run before the tool began, on the initial thread's root.
  if (i == 0 && t.index == 0) values[size_t(fmt::CoreMetric::TimeSum)] += rec.pre_start_ns;
  if (counters::count())
    std::memcpy(values + fmt::kCoreMetricCount, t.node_at(i)->counters,
                counters::count() * sizeof(uint64_t));
}

// The threads section in `version`'s layout (docs/experiment-format.md, "Threads").
void put_threads(FileBuffer& body, Recorder& rec, const std::vector<ThreadState*>& threads,
                 const std::vector<uint32_t>& remap, double ns_per_tick, uint32_t version,
                 WriteSummary& summary) {
  const Column column{ns_per_tick};
  const size_t columns = fmt::kCoreMetricCount + counters::count();
  std::vector<uint64_t> values(columns), last_mask, cols;  // cols: version 3's, column-major
  std::vector<std::string> names;
  for (const fmt::MetricSpec& m : fmt::kCoreMetrics) names.push_back(m.name);
  names.resize(columns);  // counters: u64 columns whose names the coding does not look at
  const fmt::ValueCoding coding = fmt::value_coding(names, [](size_t m) {
    return m < fmt::kCoreMetricCount && fmt::kCoreMetrics[m].type == fmt::MetricType::F64;
  });
  fmt::ShapeTable shapes;
  std::vector<uint32_t> parent, region;
  size_t section = body.begin_section(fmt::kTagThreads, uint32_t(threads.size()));
  for (uint32_t position = 0; position < threads.size(); ++position) {
    const ThreadState& t = *threads[position];
    parent.resize(t.node_count);
    region.resize(t.node_count);
    for (uint32_t i = 0; i < t.node_count; ++i) {
      const Node* n = t.node_at(i);
      parent[i] = n->parent ? n->parent->index : fmt::kNoIndex;
      region[i] = n->region < remap.size() ? remap[n->region] : n->region;
    }
    uint32_t same = version >= 2 ? shapes.find_or_add(parent, region, position) : 0;
    body.put(fmt::ThreadRecord{t.index, t.flags, t.os_tid, t.node_count, same});
    if (version >= 2 && same == fmt::kNoIndex) fmt::put_shape(body.bytes, parent, region);
    last_mask.assign(coding.mask_words(), 0);
    if (version >= 3) cols.resize(size_t(t.node_count) * columns);
    for (uint32_t i = 0; i < t.node_count; ++i) {
      node_values(rec, t, i, column, values.data());
      if (version >= 3) {
        fmt::code_node_values(values.data(), coding, i, t.node_count, cols.data());
        continue;
      }
      if (version >= 2) {
        fmt::put_node_values(body.bytes, values.data(), coding, last_mask);
        continue;
      }
      body.put(fmt::NodeRecord{parent[i], region[i]});
      body.put_bytes(values.data(), columns * sizeof(uint64_t));
    }
    if (version >= 3) fmt::put_columns(body.bytes, cols.data(), t.node_count, columns);
    summary.nodes += t.node_count - t.sampled_nodes;
  }
  summary.threads = uint32_t(threads.size());
  body.end_section(section);
}

struct Module {
  std::string path;
  uint64_t base;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [begin, end) of PT_LOAD segments
};

std::vector<Module> loaded_modules() {
  std::vector<Module> mods;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* out = static_cast<std::vector<Module>*>(data);
        Module m;
        m.path = info->dlpi_name ? info->dlpi_name : "";
        if (m.path.empty()) m.path = executable_path();
        m.base = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          m.ranges.emplace_back(info->dlpi_addr + ph.p_vaddr,
                                info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        // The vDSO (linux-vdso.so.1) too: samples land in it (clock_gettime). Nothing can read it
        // after the run, so its code stays an offset in "linux-vdso.so.1".
        if (!m.ranges.empty()) out->push_back(std::move(m));
        return 0;
      },
      &mods);
  return mods;
}

// Environment that changes what a run measures. Not SCALEA_DB: it changes nothing in the run,
// and a postgresql:// URL may carry a password, which must not land in meta.json.
bool relevant_env(const char* e) {
  static const char* prefixes[] = {"OMP_",  "KMP_",      "SCALEA_", "OMPI_COMM_WORLD_SIZE",
                                   "GOMP_", "LD_PRELOAD"};
  if (std::strncmp(e, "SCALEA_DB=", 10) == 0) return false;
  for (const char* p : prefixes)
    if (std::strncmp(e, p, std::strlen(p)) == 0) return true;
  return false;
}

}  // namespace

bool write_new_file(int dirfd, const std::string& name, const std::vector<char>& data,
                    std::string& error) {
  int fd = openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = name + ": " + std::strerror(errno);
    return false;
  }
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error = name + ": " + std::strerror(w < 0 ? errno : ENOSPC);
      close(fd);
      unlinkat(dirfd, name.c_str(), 0);
      return false;
    }
    p += w;
    left -= size_t(w);
  }
  if (close(fd) != 0) {
    error = name + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string rank_file_name(int rank) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "rank-%06d.sdrg", rank < 0 ? 0 : rank);
  return buf;
}

bool output_parent_writable(const std::string& dir, std::string& why) {
  why = why_no_directory_in(parent_of(dir), ".scalea-probe-" + std::to_string(getpid()));
  return why.empty();
}

std::vector<PortableRegion> portable_regions(Recorder& rec) {
  std::vector<RegionInfo> regions;
  {
    std::lock_guard<std::mutex> lock(rec.mutex());
    regions = rec.regions();
  }
  std::vector<Module> modules = loaded_modules();
  std::vector<PortableRegion> out;
  out.reserve(regions.size());
  for (const RegionInfo& r : regions) {
    PortableRegion p;
    p.kind = uint16_t(r.kind);
    p.subkind = r.subkind;
    p.name = r.name;
    p.file = r.file;
    p.function = r.function;
    p.line = r.line;
    p.address = r.address;
    for (const Module& m : modules) {
      if (!r.address || !p.module.empty()) break;
      for (const auto& range : m.ranges)
        if (r.address >= range.first && r.address < range.second) {
          p.module = m.path;
          p.address = r.address - m.base;
          break;
        }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<char> encode_definitions(const std::vector<PortableRegion>& regions, int rank) {
  FileBuffer file;
  uint32_t n = put_definitions(file, regions);
  return file.seal(n, rank);
}

std::vector<char> encode_threads(Recorder& rec, const std::vector<uint32_t>& remap, int rank,
                                 WriteSummary& summary) {
  std::vector<ThreadState*> threads = threads_of(rec);
  FileBuffer file(threads_section_size(threads));
  put_threads(file, rec, threads, remap, rec.clock().ns_per_tick(), fmt::kVersion, summary);
  return file.seal(1, rank);
}

namespace {
// The definitions and the threads in one file, and a snapshot's meta when `snapshot_meta` is set.
std::vector<char> encode_whole(Recorder& rec, const std::vector<ThreadState*>& threads,
                               double ns_per_tick, int rank, WriteSummary& summary,
                               const std::string* snapshot_meta) {
  std::vector<PortableRegion> regions = portable_regions(rec);
  // The definitions take about 40 B per region and its strings: reserved too, roughly.
  size_t meta_size = snapshot_meta ? snapshot_meta->size() + sizeof(fmt::SectionHeader) : 0;
  FileBuffer file(threads_section_size(threads) + regions.size() * 64 + 4096 + meta_size);
  uint32_t n = put_definitions(file, regions);
  // A snapshot keeps the fixed-size records its readers subtract in place (format.hpp).
  uint32_t version = snapshot_meta ? fmt::kSnapshotVersion : fmt::kVersion;
  put_threads(file, rec, threads, {}, ns_per_tick, version, summary);
  summary.regions =
      size_t(std::count_if(regions.begin(), regions.end(), [](const PortableRegion& r) {
        return r.kind != uint16_t(RegionKind::Sampled);
      }));
  if (!snapshot_meta) return file.seal(n + 1, rank, version);
  size_t at = file.begin_section(fmt::kTagSnapshot, 1);
  file.put_bytes(snapshot_meta->data(), snapshot_meta->size());
  file.end_section(at);
  return file.seal(n + 2, rank, version);
}
}  // namespace

std::vector<char> encode_process(Recorder& rec, int rank, WriteSummary& summary) {
  return encode_whole(rec, threads_of(rec), rec.clock().ns_per_tick(), rank, summary, nullptr);
}

std::vector<char> encode_snapshot(Recorder& rec, const std::vector<ThreadState*>& threads,
                                  double ns_per_tick, int rank, const std::string& meta,
                                  WriteSummary& summary) {
  return encode_whole(rec, threads, ns_per_tick, rank, summary, &meta);
}

// ---- meta.json ----------------------------------------------------------------------------------

std::vector<ThrottledPath> throttled_paths(Recorder& rec, size_t limit, size_t& count) {
  const ClockCalibration& clk = rec.clock();
  std::vector<ThrottledPath> out;
  count = 0;
  std::lock_guard<std::mutex> lock(rec.mutex());
  for (ThreadState* t : rec.threads())
    for (const ThrottleEvent& ev : t->throttled) {
      if (count++ >= limit) continue;  // the count says how many were left out
      double at = ev.at > clk.ticks0 ? double(ev.at - clk.ticks0) * clk.ns_per_tick() * 1e-9 : 0;
      out.push_back(ThrottledPath{rec.rank, t->index, ev.node->index, ev.visits, ev.mean_ns, at});
    }
  return out;
}

namespace {
std::string host_name() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return host;
}
}  // namespace

std::string executable_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

// The process's command line, one string per argument.
std::vector<std::string> command_line() {
  std::vector<std::string> args;
  // open/read rather than stdio: fopen's buffer would come from the program's heap.
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return args;
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    all.append(buf, size_t(n));
  }
  close(fd);
  // NUL-terminated arguments; a last one without its NUL (a rewritten command line) counts too.
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    args.emplace_back(all, at, end - at);
    at = end + 1;
  }
  return args;
}

namespace {
// What meta.json is written from: the recorder's threads and clock at the end of the run, or a
// snapshot's copies of the threads and the clock calibrated up to it.
struct MetaSource {
  std::vector<ThreadState*> threads;
  const ClockCalibration* clock;
};
MetaSource live_source(Recorder& rec) { return MetaSource{threads_of(rec), &rec.clock()}; }

// Seconds from the initial thread's start (its root, which includes the time before the tool
// started when that was estimated) to `when`; < 0 when unknown.
double since_start(Recorder& rec, const MetaSource& src, Ticks when) {
  if (!when || src.threads.empty()) return -1;
  Ticks born = src.threads[0]->born;
  return (double(when > born ? when - born : 0) * src.clock->ns_per_tick() +
          double(rec.pre_start_ns)) *
         1e-9;
}

ProcessAffinity process_affinity(Recorder& rec, int rank, const MetaSource& src) {
  ProcessAffinity a;
  a.rank = rank;
  a.host = host_name();
  a.cpus_online = rec.cpus_online;
  a.process_cpus = cpu_list(rec.process_cpus);
  for (const ThreadState* t : src.threads) {
    ThreadCpus c{t->index, t->os_tid, cpu_list(t->cpus), cpu_count(t->cpus),
                 since_start(rec, src, t->created)};
    // The end's reading is taken when the run ends (a snapshot's copies have none).
    if (t->sched_begin.ok && t->sched_end.ok && t->sched_end.run_ns >= t->sched_begin.run_ns &&
        t->sched_end.wait_ns >= t->sched_begin.wait_ns) {
      c.cpu_s = double(t->sched_end.run_ns - t->sched_begin.run_ns) * 1e-9;
      c.runqueue_s = double(t->sched_end.wait_ns - t->sched_begin.wait_ns) * 1e-9;
    }
    a.threads.push_back(c);
  }
  return a;
}
}  // namespace

ProcessAffinity process_affinity(Recorder& rec, int rank) {
  return process_affinity(rec, rank, live_source(rec));
}

namespace {

// Text of meta.json values, in the order and form docs/experiment-format.md gives.
std::string fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string int_list(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string throttled_json(const std::vector<ThrottledPath>& paths) {
  std::string out;
  for (const ThrottledPath& p : paths) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s{\"rank\": %d, \"thread\": %u, \"node\": %u, \"visits\": %llu, "
                  "\"mean_ns\": %.1f, \"at_s\": %.6f}",
                  out.empty() ? "" : ", ", p.rank, p.thread, p.node, (unsigned long long)p.visits,
                  p.mean_ns, p.at_s);
    out += buf;
  }
  return out;
}

// A time in seconds, or null when unknown (< 0).
std::string seconds_or_null(double s) { return s < 0 ? "null" : std::to_string(s); }

// "cpus_online": N, "process_cpus": "0-1", "threads": [{"index", "os_tid", "cpus", "count",
// "created_s", "cpu_s", "runqueue_s"}, ...]
std::string affinity_members(const ProcessAffinity& a) {
  std::string threads;
  for (const ThreadCpus& t : a.threads)
    threads += std::string(threads.empty() ? "" : ", ") + "{\"index\": " + std::to_string(t.index) +
               ", \"os_tid\": " + std::to_string(t.os_tid) + ", \"cpus\": " + json_escape(t.cpus) +
               ", \"count\": " + std::to_string(t.count) +
               ", \"created_s\": " + seconds_or_null(t.created_s) +
               ", \"cpu_s\": " + seconds_or_null(t.cpu_s) +
               ", \"runqueue_s\": " + seconds_or_null(t.runqueue_s) + "}";
  return "\"cpus_online\": " + std::to_string(a.cpus_online) +
         ", \"process_cpus\": " + json_escape(a.process_cpus) + ", \"threads\": [" + threads + "]";
}

std::string affinity_json(const ProcessAffinity& mine, const std::vector<ProcessAffinity>& ranks) {
  std::string ranks_text;
  for (const ProcessAffinity& r : ranks)
    ranks_text += std::string(ranks_text.empty() ? "" : ", ") +
                  "{\"rank\": " + std::to_string(r.rank) + ", \"host\": " + json_escape(r.host) +
                  ", " + affinity_members(r) + "}";
  return "{" + affinity_members(mine) + (ranks.empty() ? "" : ", \"ranks\": [" + ranks_text + "]") +
         "}";
}

std::string clock_json(const ClockCalibration& clk) {
  return "{\"source\": " + json_escape(clk.source()) +
         // Every digit: the report converts a snapshot's times to the next one's ratio with it
         // (drg::subtract), and 6 decimals of 0.385 ns moved a 0.5 s time by 0.5-0.9 us.
         ", \"ns_per_tick\": " + fixed("%.17g", clk.ns_per_tick()) +
         ", \"duration_s\": " + std::to_string(double(clk.ns1 - clk.ns0) * 1e-9) + "}";
}

std::string openmp_json(Recorder& rec, const MetaSource& src) {
  const SourceInfo& omp = rec.openmp_info();
  std::string callbacks = "{";
  for (size_t i = 0; i < omp.callbacks.size(); ++i)
    callbacks += std::string(i ? ", " : "") + json_escape(omp.callbacks[i].first) + ": " +
                 json_escape(omp.callbacks[i].second);
  callbacks += "}";
  return "{\"runtime\": " + json_escape(omp.runtime) +
         ", \"runtime_path\": " + json_escape(omp.runtime_path) +
         ", \"events\": " + (omp.light ? "\"light\"" : "\"full\"") +
         ", \"callbacks\": " + callbacks +
         ", \"runtime_init_s\": " + seconds_or_null(since_start(rec, src, omp.runtime_init)) +
         ", \"runtime_ready_s\": " + seconds_or_null(since_start(rec, src, omp.runtime_ready)) +
         ", \"init_by_fork\": " + (omp.init_by_fork ? "true" : "false") + "}";
}

}  // namespace

std::string environment_json() {
  std::string env = "{";
  bool first = true;
  for (char** e = environ; e && *e; ++e) {
    if (!relevant_env(*e)) continue;
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    env += std::string(first ? "" : ", ") + json_escape(std::string(*e, size_t(eq - *e))) + ": " +
           json_escape(eq + 1);
    first = false;
  }
  return env + "}";
}

namespace {

std::string anomalies_json(const MetaSource& src) {
  Anomalies a;
  for (ThreadState* t : src.threads) {
    a.unmatched_end += t->anomalies.unmatched_end;
    a.unclosed += t->anomalies.unclosed;
    a.foreign_resume += t->anomalies.foreign_resume;
  }
  return "{\"unmatched_end\": " + std::to_string(a.unmatched_end) +
         ", \"unclosed\": " + std::to_string(a.unclosed) +
         ", \"foreign_resume\": " + std::to_string(a.foreign_resume) + "}";
}

std::string counters_json(const counters::CounterReport& r) {
  std::string m = "{\"requested\": " + json_string_list(r.requested) +
                  ", \"requested_by\": " + json_escape(r.requested_by) + ", \"measured\": [";
  for (size_t i = 0; i < r.measured.size(); ++i)
    m += std::string(i ? ", " : "") + "{\"name\": " + json_escape(r.measured[i].name) +
         ", \"column\": " + json_escape(r.measured[i].column) +
         ", \"backend\": " + json_escape(r.measured[i].backend) + "}";
  m += "], \"dropped\": [";
  for (size_t i = 0; i < r.dropped.size(); ++i)
    m += std::string(i ? ", " : "") + "{\"name\": " + json_escape(r.dropped[i].name) +
         ", \"reason\": " + json_escape(r.dropped[i].reason) + "}";
  m += "], \"multiplexed\": " + std::string(r.multiplexed ? "true" : "false") +
       ", \"read_failures\": " + std::to_string(r.read_failures) +
       ", \"threads_failed\": " + std::to_string(r.threads_failed) +
       ", \"cost_per_read_ns\": " + fixed("%.1f", r.cost_per_read_ns) +
       ", \"regions\": " + json_escape(r.regions) +
       ", \"offered\": " + json_string_list(r.offered) +
       ", \"papi\": {\"started\": " + (r.papi_started ? "true" : "false") +
       ", \"version\": " + json_escape(r.papi_version) +
       ", \"problem\": " + json_escape(r.papi_problem) +
       ", \"components\": " + json_string_list(r.papi_components) + "}}";
  return m;
}

// The regions threads had not left when the run ended (close_thread), innermost first per
// thread: {"count": N, "open": [{"rank", "thread", "node", "open_s"}, ...]} (at most
// kOpenListed listed), or "" when every thread had left every region.
std::string open_at_end_json(Recorder& rec, const MetaSource& src) {
  size_t count = 0;
  std::string list;
  const double s_per_tick = src.clock->ns_per_tick() * 1e-9;
  for (ThreadState* t : src.threads)
    for (const OpenAtEnd& o : t->open_at_end) {
      if (count++ >= kOpenListed) continue;
      char buf[160];
      std::snprintf(
          buf, sizeof buf, "%s{\"rank\": %d, \"thread\": %u, \"node\": %u, \"open_s\": %.6f}",
          list.empty() ? "" : ", ", rec.rank, t->index, o.node->index, double(o.open) * s_per_tick);
      list += buf;
    }
  if (!count) return "";
  return "{\"count\": " + std::to_string(count) + ", \"open\": [" + list + "]}";
}

std::string throttle_json(Recorder& rec, const MetaExtras& extras) {
  const Config& cfg = rec.config();
  size_t count = 0;
  std::vector<ThrottledPath> paths = throttled_paths(rec, kThrottledListed, count);
  paths.insert(paths.end(), extras.other_throttled.begin(), extras.other_throttled.end());
  count += extras.other_throttled_count;
  std::string kinds = std::string("[") + (cfg.throttle_functions ? "\"function\"" : "") +
                      (cfg.throttle_functions && cfg.throttle_user ? ", " : "") +
                      (cfg.throttle_user ? "\"user\"" : "") + "]";
  return "{\"setting\": " + json_escape(cfg.throttle_text) +
         ", \"calls\": " + std::to_string(cfg.throttle_calls) +
         ", \"mean_below_ns\": " + std::to_string(cfg.throttle_calls ? cfg.throttle_ns : 0) +
         ", \"kinds\": " + kinds + ", \"count\": " + std::to_string(count) + ", \"throttled\": [" +
         throttled_json(paths) + "]}";
}

// Call-path sampling (sampler.cpp, docs/sampling.md): this process's figures.
std::string sampling_json(Recorder& rec) {
  const sampler::Summary s = sampler::summary(rec.clock().ns_per_tick());
  auto num = [](uint64_t v) { return std::to_string(v); };
  return std::string("{\"on\": ") + (s.on ? "true" : "false") +
         ", \"off_reason\": " + json_escape(s.off_reason) + ", \"period_ns\": " + num(s.period_ns) +
         ", \"signal\": " + std::to_string(s.signal) + ", \"source\": " + json_escape(s.source) +
         ", \"samples\": " + num(s.samples) + ", \"in_tool\": " + num(s.in_tool) +
         ", \"dropped\": " + num(s.dropped) + ", \"truncated\": " + num(s.truncated) +
         ", \"cpu_s\": " + fixed("%.6f", double(s.cpu_ns) * 1e-9) +
         ", \"cost_median_ns\": " + fixed("%.0f", s.cost_median_ns) +
         ", \"cost_p99_ns\": " + fixed("%.0f", s.cost_p99_ns) + ", \"threads\": " + num(s.threads) +
         ", \"timer_failures\": " + num(s.timer_failures) + "}";
}

std::string mpi_json(const MpiMeta& m) {
  char head[512];
  std::snprintf(head, sizeof head,
                "{\"size\": %d, \"thread_level\": \"%s\", \"model\": {\"latency_ns\": %.1f, "
                "\"ns_per_byte\": %.5f, \"source\": ",
                m.size, m.thread_level.c_str(), m.latency_ns, m.ns_per_byte);
  std::string out = head + json_escape(m.model_source) + "}, \"timeout_s\": ";
  char tail[64];
  std::snprintf(tail, sizeof tail, "%g, \"setup_s\": %.6f", m.timeout_s, m.setup_s);
  out += tail;
  out += ", \"ranks_written\": " + int_list(m.ranks_written);
  if (m.unified)
    out += ", \"missing_ranks\": " + int_list(m.missing_ranks) +
           ", \"no_finalize_ranks\": " + int_list(m.no_finalize_ranks);
  if (m.unification) {
    const MpiUnification& u = *m.unification;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  ", \"unification\": {\"tree\": \"binomial\", \"seconds\": %.6f, "
                  "\"regions\": %llu, \"root_bytes\": %llu, \"root_peak_rss_kb\": %lld, "
                  "\"root_rss_growth_kb\": %lld, \"max_other_rss_growth_kb\": %llu, "
                  "\"after_last_arrival_s\": %.6f}",
                  u.seconds, (unsigned long long)u.regions, (unsigned long long)u.root_bytes,
                  (long long)u.root_peak_rss_kb, (long long)u.root_rss_growth_kb,
                  (unsigned long long)u.max_other_rss_growth_kb, u.after_last_arrival_s);
    out += buf;
  }
  return out + "}";
}

}  // namespace

std::string encode_meta(Recorder& rec, const char* trigger, const std::vector<std::string>& files,
                        const MetaExtras& extras) {
  const SnapshotView* snap = extras.snapshot;
  MetaSource src = snap ? MetaSource{*snap->threads, &snap->clock} : live_source(rec);
  char cwd[4096] = "";
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
  const char* omp_num = getenv("OMP_NUM_THREADS");
  std::string m = "{\n";
  auto field = [&m](const char* key, const std::string& value) {
    m += std::string("  \"") + key + "\": " + value + ",\n";
  };
  field("format", "\"scalea-experiment\"");
  field("format_version", std::to_string(fmt::kVersion));
  field("tool_version", json_escape(SCALEA_VERSION));
  field("command", json_string_list(rec.command.empty() ? command_line() : rec.command));
  field("cwd", json_escape(cwd));
  field("host", json_escape(host_name()));
  field("pid", std::to_string(getpid()));
  field("start_time", json_escape(rec.start_time_iso));
  field("end_time", json_escape(rec.end_time_iso));
  field("finished_by", json_escape(trigger));
  field("complete", extras.complete ? "true" : "false");
  field("notes", json_string_list(extras.notes));
  field("program_start", json_escape(rec.start_estimated ? "estimated" : "measured"));
  field("program_start_estimated_s",
        fixed("%.3f", rec.start_estimated ? double(rec.pre_start_ns) * 1e-9 : 0.0));
  field("clock", clock_json(*src.clock));
  field("ranks", std::to_string(extras.ranks));
  field("threads", std::to_string(src.threads.size()));
  field("max_team_size", std::to_string(rec.max_team()));
  field("omp_num_threads", json_escape(omp_num ? omp_num : ""));
  field("affinity", affinity_json(process_affinity(rec, snap ? snap->rank : rec.rank, src),
                                  extras.rank_affinity));
  field("openmp", openmp_json(rec, src));
  field("environment", snap ? snap->environment : environment_json());
  field("anomalies", anomalies_json(src));
  // Other threads may be changing these while a snapshot is taken: the experiment has them.
  if (!snap) {
    field("counters", counters_json(counters::report()));
    field("throttle", throttle_json(rec, extras));
    field("sampling", sampling_json(rec));
    if (std::string open = open_at_end_json(rec, src); !open.empty()) field("open_at_end", open);
    if (rec.config().tune) field("online_tuning", tune::online_tuning_json());
  }
  if (extras.mpi) field("mpi", mpi_json(*extras.mpi));
  if (snap) field("snapshot", snap->object);
  if (!extras.definitions_file.empty()) field("definitions", json_escape(extras.definitions_file));
  m += "  \"files\": " + json_string_list(files) + "\n}\n";
  return m;
}

bool publish_experiment(const std::string& dir,
                        const std::vector<std::pair<std::string, std::vector<char>>>& files,
                        std::string& written_dir, std::string& error) {
  std::string parent = parent_of(dir), base = base_of(dir);
  std::string tmp = parent + "/." + base + ".partial-" + std::to_string(getpid());
  if (mkdir(tmp.c_str(), 0777) != 0) {
    error = tmp + ": " + std::strerror(errno);
    return false;
  }
  int dirfd = open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  bool ok = dirfd >= 0;
  if (!ok) error = tmp + ": " + std::strerror(errno);
  for (size_t i = 0; ok && i < files.size(); ++i)
    ok = write_new_file(dirfd, files[i].first, files[i].second, error);
  if (dirfd >= 0) close(dirfd);
  // The snapshots taken while the program ran go into the experiment (SCALEA_SNAPSHOT).
  bool adopted = ok && snapshot::adopt(dir, tmp);
  if (ok) {
    // Never replace an existing experiment: take the first free name dir, dir.1, dir.2, ...
    std::string target = dir;
    for (int n = 1; n < 1000; ++n) {
      if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
        written_dir = target;
        return true;
      }
      if (errno != EEXIST && errno != ENOTEMPTY) {
        error = target + ": " + std::strerror(errno);
        break;
      }
      target = dir + "." + std::to_string(n);
    }
    if (error.empty()) error = dir + ": no free name";
  }
  if (adopted) snapshot::unadopt(dir, tmp);
  for (const auto& f : files) unlinkat(AT_FDCWD, (tmp + "/" + f.first).c_str(), 0);
  rmdir(tmp.c_str());
  return false;
}

bool write_experiment(Recorder& rec, const std::string& dir, const char* trigger,
                      std::string& written_dir, WriteSummary& summary, std::string& error) {
  std::vector<std::pair<std::string, std::vector<char>>> files;
  std::string name = rank_file_name(rec.rank);
  files.emplace_back(name, encode_process(rec, rec.rank, summary));
  MetaExtras extras;
  extras.complete = rec.ending_complete;
  extras.notes = rec.ending_notes;
  std::string meta = encode_meta(rec, trigger, {name}, extras);
  files.emplace_back(fmt::kMetaFile, std::vector<char>(meta.begin(), meta.end()));
  return publish_experiment(dir, files, written_dir, error);
}

}  // namespace scalea::collect
