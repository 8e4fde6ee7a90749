#include "writer.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

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
// never copied; its peak memory is the file's size (docs/reliability.md, finding 5).
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
  std::vector<char> seal(uint32_t sections, int rank) {
    fmt::FileHeader header{};
    std::memcpy(header.magic, fmt::kMagic, 8);
    header.version = fmt::kVersion;
    header.header_size = sizeof(fmt::FileHeader);
    const char* payload = bytes.data() + sizeof(fmt::FileHeader);
    header.payload_size = bytes.size() - sizeof(fmt::FileHeader);
    header.section_count = sections;
    header.payload_crc32 = fmt::crc32_update(0, payload, header.payload_size);
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
  for (const std::string& m : module_paths) modules_body.put(fmt::ModuleRecord{strings.intern(m), 0, 0});
  for (const fmt::MetricSpec& m : fmt::kCoreMetrics)
    metrics_body.put(fmt::MetricRecord{strings.intern(m.name), uint16_t(m.type), uint16_t(m.merge)});
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
  size_t per_node = sizeof(fmt::NodeRecord) + (fmt::kCoreMetricCount + counters::count()) * sizeof(uint64_t);
  size_t n = sizeof(fmt::SectionHeader);
  for (const ThreadState* t : threads) n += sizeof(fmt::ThreadRecord) + size_t(t->node_count) * per_node;
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
  uint64_t operator()(uint64_t v, fmt::MetricUnit unit, fmt::MetricMerge merge, uint64_t visits) const {
    if (merge == fmt::MetricMerge::Min && !visits) return 0;
    return unit == fmt::MetricUnit::Ns ? uint64_t(std::llround(double(v) * ns_per_tick)) : v;
  }
  uint64_t operator()(double v, fmt::MetricUnit unit, fmt::MetricMerge, uint64_t) const {
    double x = unit == fmt::MetricUnit::Ns2 ? v * ns_per_tick * ns_per_tick
               : unit == fmt::MetricUnit::Ns ? v * ns_per_tick : v;
    uint64_t bits;
    std::memcpy(&bits, &x, 8);
    return bits;
  }
};

void put_threads(FileBuffer& body, Recorder& rec, const std::vector<ThreadState*>& threads,
                 const std::vector<uint32_t>& remap, WriteSummary& summary) {
  const Column column{rec.clock().ns_per_tick()};
  size_t section = body.begin_section(fmt::kTagThreads, uint32_t(threads.size()));
  for (ThreadState* t : threads) {
    body.put(fmt::ThreadRecord{t->index, t->flags, t->os_tid, t->node_count, 0});
    for (uint32_t i = 0; i < t->node_count; ++i) {
      const Node* n = t->node_at(i);
      uint32_t region = n->region < remap.size() ? remap[n->region] : n->region;
      body.put(fmt::NodeRecord{n->parent ? n->parent->index : fmt::kNoIndex, region});
      const Stats& s = n->s;
      uint64_t values[fmt::kCoreMetricCount] = {
#define SCALEA_X(id, name, type, merge, unit, scope, field) \
  column(s.field, fmt::MetricUnit::unit, fmt::MetricMerge::merge, s.visits),
          SCALEA_CORE_METRICS(SCALEA_X)
#undef SCALEA_X
      };
      // The run before the tool began, on the initial thread's root.
      if (i == 0 && t->index == 0) values[size_t(fmt::CoreMetric::TimeSum)] += rec.pre_start_ns;
      body.put_bytes(values, sizeof values);
      if (counters::count()) body.put_bytes(n->counters, counters::count() * sizeof(uint64_t));
    }
    summary.nodes += t->node_count;
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
        if (m.path.empty()) {
          char buf[4096];
          ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
          if (n > 0) m.path.assign(buf, size_t(n));
        }
        m.base = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          m.ranges.emplace_back(info->dlpi_addr + ph.p_vaddr,
                                info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        if (!m.ranges.empty() && m.path.rfind("linux-vdso", 0) != 0) out->push_back(std::move(m));
        return 0;
      },
      &mods);
  return mods;
}

bool write_file(int dirfd, const std::string& name, const std::vector<char>& data,
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
      return false;
    }
    p += w;
    left -= size_t(w);
  }
  if (fsync(fd) != 0) {
    error = name + ": " + std::strerror(errno);
    close(fd);
    return false;
  }
  if (close(fd) != 0) {
    error = name + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string read_cmdline_json() {
  std::string out = "[";
  FILE* f = std::fopen("/proc/self/cmdline", "r");
  if (f) {
    std::string arg;
    int c;
    bool first = true;
    while ((c = std::fgetc(f)) != EOF) {
      if (c == 0) {
        out += (first ? "" : ", ") + json_escape(arg);
        first = false;
        arg.clear();
      } else {
        arg += char(c);
      }
    }
    std::fclose(f);
  }
  return out + "]";
}

// Environment that changes what a run measures.
bool relevant_env(const char* e) {
  static const char* prefixes[] = {"OMP_", "KMP_", "SCALEA_", "OMPI_COMM_WORLD_SIZE", "GOMP_",
                                   "LD_PRELOAD"};
  for (const char* p : prefixes)
    if (std::strncmp(e, p, std::strlen(p)) == 0) return true;
  return false;
}

}  // namespace

namespace {
// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
size_t utf8_sequence(const std::string& s, size_t i) {
  auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned c = at(i);
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    unsigned b = at(k);
    return b >= lo && b <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}
}  // namespace

// Bytes that are not UTF-8 (a command argument or path in another encoding) become U+FFFD: JSON
// must be UTF-8, and one such byte would make the whole meta.json unreadable.
std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = utf8_sequence(s, i);
      if (n) {
        out.append(s, i, n);
        i += n - 1;
      } else {
        out += "\xEF\xBF\xBD";  // U+FFFD
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string rank_file_name(int rank) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "rank-%06d.sdrg", rank < 0 ? 0 : rank);
  return buf;
}

bool output_parent_writable(const std::string& dir, std::string& why) {
  std::string parent = parent_of(dir);
  struct stat st;
  if (stat(parent.c_str(), &st) != 0) {
    why = parent + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    why = parent + " is not a directory";
    return false;
  }
  if (access(parent.c_str(), W_OK | X_OK) != 0) {
    why = parent + ": " + std::strerror(errno);
    return false;
  }
  return true;
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
  put_threads(file, rec, threads, remap, summary);
  return file.seal(1, rank);
}

std::vector<char> encode_process(Recorder& rec, int rank, WriteSummary& summary) {
  std::vector<PortableRegion> regions = portable_regions(rec);
  std::vector<ThreadState*> threads = threads_of(rec);
  // The definitions take about 40 B per region and its strings: reserved too, roughly.
  FileBuffer file(threads_section_size(threads) + regions.size() * 64 + 4096);
  uint32_t n = put_definitions(file, regions);
  put_threads(file, rec, threads, {}, summary);
  summary.regions = regions.size();
  return file.seal(n + 1, rank);
}

// Call paths throttled (SCALEA_THROTTLE): rank, thread, node index in this process's data file.
std::string throttled_entries(Recorder& rec, size_t limit, size_t& count) {
  const ClockCalibration& clk = rec.clock();
  std::string out;
  count = 0;
  std::lock_guard<std::mutex> lock(rec.mutex());
  for (ThreadState* t : rec.threads())
    for (const ThrottleEvent& ev : t->throttled) {
      if (count++ >= limit) continue;  // the count says how many were left out
      char buf[256];
      double at = ev.at > clk.ticks0 ? double(ev.at - clk.ticks0) * clk.ns_per_tick() * 1e-9 : 0;
      std::snprintf(buf, sizeof buf,
                    "%s{\"rank\": %d, \"thread\": %u, \"node\": %u, \"visits\": %llu, "
                    "\"mean_ns\": %.1f, \"at_s\": %.6f}",
                    out.empty() ? "" : ", ", rec.rank, t->index, ev.node->index,
                    (unsigned long long)ev.visits, ev.mean_ns, at);
      out += buf;
    }
  return out;
}

std::string affinity_members(Recorder& rec) {
  std::string threads;
  {
    std::lock_guard<std::mutex> lock(rec.mutex());
    for (const ThreadState* t : rec.threads())
      threads += std::string(threads.empty() ? "" : ", ") + "{\"index\": " + std::to_string(t->index) +
                 ", \"os_tid\": " + std::to_string(t->os_tid) + ", \"cpus\": " +
                 json_escape(cpu_list(t->cpus)) + ", \"count\": " + std::to_string(cpu_count(t->cpus)) + "}";
  }
  return "\"cpus_online\": " + std::to_string(rec.cpus_online) + ", \"process_cpus\": " +
         json_escape(cpu_list(rec.process_cpus)) + ", \"threads\": [" + threads + "]";
}

namespace {
std::string host_name() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return host;
}
}  // namespace

std::string affinity_of_rank(Recorder& rec, int rank) {
  return "{\"rank\": " + std::to_string(rank) + ", \"host\": " + json_escape(host_name()) + ", " +
         affinity_members(rec) + "}";
}

std::string encode_meta(Recorder& rec, const char* trigger, const std::vector<std::string>& files,
                        const MetaExtras& extras) {
  Anomalies anomalies;
  size_t thread_count;
  const ClockCalibration& clk = rec.clock();
  size_t throttled_count = 0;
  std::string throttled = throttled_entries(rec, kThrottledListed, throttled_count);
  if (!extras.other_throttled.empty())
    throttled += (throttled.empty() ? "" : ", ") + extras.other_throttled;
  throttled_count += extras.other_throttled_count;
  {
    std::lock_guard<std::mutex> lock(rec.mutex());
    thread_count = rec.threads().size();
    for (ThreadState* t : rec.threads()) {
      anomalies.unmatched_end += t->anomalies.unmatched_end;
      anomalies.unclosed += t->anomalies.unclosed;
      anomalies.foreign_resume += t->anomalies.foreign_resume;
    }
  }
  char cwd[4096] = "";
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
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
  env += "}";
  const SourceInfo& omp = rec.openmp_info();
  std::string callbacks = "{";
  for (size_t i = 0; i < omp.callbacks.size(); ++i)
    callbacks += std::string(i ? ", " : "") + json_escape(omp.callbacks[i].first) + ": " +
                 json_escape(omp.callbacks[i].second);
  callbacks += "}";
  auto list = [](const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_escape(v[i]);
    return s + "]";
  };
  const char* omp_num = getenv("OMP_NUM_THREADS");
  const Config& cfg = rec.config();
  std::string throttle_kinds = std::string("[") + (cfg.throttle_functions ? "\"function\"" : "") +
                               (cfg.throttle_functions && cfg.throttle_user ? ", " : "") +
                               (cfg.throttle_user ? "\"user\"" : "") + "]";
  std::string m;
  m += "{\n";
  m += "  \"format\": \"scalea-experiment\",\n";
  m += "  \"format_version\": " + std::to_string(fmt::kVersion) + ",\n";
  m += "  \"tool_version\": " + json_escape(SCALEA_VERSION) + ",\n";
  m += "  \"command\": " + read_cmdline_json() + ",\n";
  m += "  \"cwd\": " + json_escape(cwd) + ",\n";
  m += "  \"host\": " + json_escape(host_name()) + ",\n";
  m += "  \"pid\": " + std::to_string(getpid()) + ",\n";
  m += "  \"start_time\": " + json_escape(rec.start_time_iso) + ",\n";
  m += "  \"end_time\": " + json_escape(rec.end_time_iso) + ",\n";
  m += "  \"finished_by\": " + json_escape(trigger) + ",\n";
  m += std::string("  \"complete\": ") + (extras.complete ? "true" : "false") + ",\n";
  m += "  \"notes\": " + list(extras.notes) + ",\n";
  m += "  \"program_start\": " + json_escape(rec.start_estimated ? "estimated" : "measured") + ",\n";
  char estimated[64];
  std::snprintf(estimated, sizeof estimated, "  \"program_start_estimated_s\": %.3f,\n",
                rec.start_estimated ? double(rec.pre_start_ns) * 1e-9 : 0.0);
  m += estimated;
  m += "  \"clock\": {\"source\": " + json_escape(clk.source()) + ", \"ns_per_tick\": " +
       std::to_string(clk.ns_per_tick()) + ", \"duration_s\": " +
       std::to_string(double(clk.ns1 - clk.ns0) * 1e-9) + "},\n";
  m += "  \"ranks\": " + std::to_string(extras.ranks) + ",\n";
  m += "  \"threads\": " + std::to_string(thread_count) + ",\n";
  m += "  \"max_team_size\": " + std::to_string(rec.max_team()) + ",\n";
  m += "  \"omp_num_threads\": " + json_escape(omp_num ? omp_num : "") + ",\n";
  // When the first parallel region began, in seconds of the initial thread's time (its root).
  std::string first_fork = "null";
  const std::vector<ThreadState*>& all = rec.threads();
  Ticks fork = omp.first_fork.load(std::memory_order_relaxed);
  if (fork && !all.empty() && fork >= all[0]->born)
    first_fork = std::to_string((double(fork - all[0]->born) * rec.clock().ns_per_tick() +
                                 double(rec.pre_start_ns)) * 1e-9);
  m += "  \"affinity\": {" + affinity_members(rec) +
       (extras.affinity_ranks.empty() ? "" : ", \"ranks\": [" + extras.affinity_ranks + "]") + "},\n";
  m += "  \"openmp\": {\"runtime\": " + json_escape(omp.runtime) + ", \"runtime_path\": " +
       json_escape(omp.runtime_path) + ", \"callbacks\": " + callbacks +
       ", \"first_fork_s\": " + first_fork + "},\n";
  m += "  \"environment\": " + env + ",\n";
  m += "  \"anomalies\": {\"unmatched_end\": " + std::to_string(anomalies.unmatched_end) +
       ", \"unclosed\": " + std::to_string(anomalies.unclosed) + ", \"foreign_resume\": " +
       std::to_string(anomalies.foreign_resume) + "},\n";
  m += "  \"counters\": " + counters::meta_json() + ",\n";
  m += "  \"throttle\": {\"setting\": " + json_escape(cfg.throttle_text) +
       ", \"calls\": " + std::to_string(cfg.throttle_calls) +
       ", \"mean_below_ns\": " + std::to_string(cfg.throttle_calls ? cfg.throttle_ns : 0) +
       ", \"kinds\": " + throttle_kinds + ", \"count\": " + std::to_string(throttled_count) +
       ", \"throttled\": [" + throttled + "]},\n";
  for (const auto& [name, value] : extras.raw_fields) m += "  " + json_escape(name) + ": " + value + ",\n";
  if (!extras.definitions_file.empty())
    m += "  \"definitions\": " + json_escape(extras.definitions_file) + ",\n";
  m += "  \"files\": " + list(files) + "\n";
  m += "}\n";
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
  for (size_t i = 0; ok && i < files.size(); ++i) ok = write_file(dirfd, files[i].first, files[i].second, error);
  if (dirfd >= 0) {
    fsync(dirfd);
    close(dirfd);
  }
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
