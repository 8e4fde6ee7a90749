#include "writer.hpp"

#include <dlfcn.h>
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
#include <vector>

#include "recorder.hpp"

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

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (unsigned char c : s) {
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
};

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

bool write_file(int dirfd, const char* name, const void* data, size_t size, std::string& error) {
  int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = std::string(name) + ": " + std::strerror(errno);
    return false;
  }
  const char* p = static_cast<const char*>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error = std::string(name) + ": " + std::strerror(w < 0 ? errno : ENOSPC);
      close(fd);
      return false;
    }
    p += w;
    left -= size_t(w);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    error = std::string(name) + ": " + std::strerror(errno);
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
  static const char* prefixes[] = {"OMP_", "KMP_", "SCALEA_", "OMPI_COMM_WORLD_SIZE",
                                   "OMPI_COMM_WORLD_RANK", "GOMP_", "LD_PRELOAD"};
  for (const char* p : prefixes)
    if (std::strncmp(e, p, std::strlen(p)) == 0) return true;
  return false;
}

}  // namespace

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

bool write_experiment(Recorder& rec, const std::string& dir, const char* trigger,
                      std::string& written_dir, WriteSummary& summary, std::string& error) {
  const double ns_per_tick = rec.clock().ns_per_tick();
  std::vector<RegionInfo> regions;
  std::vector<ThreadState*> threads;
  {
    std::lock_guard<std::mutex> lock(rec.mutex());
    regions = rec.regions();
    threads = rec.threads();
  }

  // ---- binary sub-DRG file ----
  StringTable strings;
  std::vector<Module> modules = loaded_modules();
  std::vector<fmt::ModuleRecord> module_records;
  for (const Module& m : modules) module_records.push_back({strings.intern(m.path), 0, m.base});
  std::vector<fmt::RegionRecord> region_records;
  for (const RegionInfo& r : regions) {
    fmt::RegionRecord rr{};
    rr.kind = uint16_t(r.kind);
    rr.subkind = r.subkind;
    rr.name = strings.intern(r.name);
    rr.file = strings.intern(r.file);
    rr.function = strings.intern(r.function);
    rr.line = r.line;
    rr.module = fmt::kNoIndex;
    rr.address = r.address;
    if (r.address) {
      for (size_t m = 0; m < modules.size() && rr.module == fmt::kNoIndex; ++m)
        for (auto& range : modules[m].ranges)
          if (r.address >= range.first && r.address < range.second) {
            rr.module = uint32_t(m);
            rr.address = r.address - modules[m].base;
            break;
          }
    }
    region_records.push_back(rr);
  }
  std::vector<fmt::MetricRecord> metric_records;
  for (const fmt::MetricSpec& m : fmt::kCoreMetrics)
    metric_records.push_back({strings.intern(m.name), uint16_t(m.type), uint16_t(m.merge)});

  Buffer payload;
  auto section = [&](uint32_t tag, uint32_t count, const Buffer& body) {
    payload.put(fmt::SectionHeader{tag, count, uint64_t(body.bytes.size())});
    payload.put_bytes(body.bytes.data(), body.bytes.size());
  };
  Buffer threads_body;
  uint64_t total_nodes = 0;
  for (ThreadState* t : threads) {
    threads_body.put(fmt::ThreadRecord{t->index, t->flags, t->os_tid, t->node_count, 0});
    for (uint32_t i = 0; i < t->node_count; ++i) {
      const Node* n = t->node_at(i);
      threads_body.put(fmt::NodeRecord{n->parent ? n->parent->index : fmt::kNoIndex, n->region});
      const Stats& s = n->s;
      auto ns = [&](uint64_t ticks) { return uint64_t(std::llround(double(ticks) * ns_per_tick)); };
      double sumsq = s.time_sumsq * ns_per_tick * ns_per_tick;
      uint64_t time_ns = ns(s.time);
      if (i == 0 && t->index == 0) time_ns += rec.pre_start_ns;  // the run before the tool began
      uint64_t sumsq_bits;
      std::memcpy(&sumsq_bits, &sumsq, 8);
      const uint64_t values[fmt::kCoreMetricCount] = {
          s.visits, time_ns, s.visits ? ns(s.time_min) : 0, ns(s.time_max), sumsq_bits,
          ns(s.wait), ns(s.fork), ns(s.join), ns(s.task_exec), s.team_size, s.executed,
          s.iterations, s.dispatches, s.tasks_created};
      threads_body.put_bytes(values, sizeof values);
    }
    total_nodes += t->node_count;
  }
  Buffer strings_body, modules_body, regions_body, metrics_body;
  for (const fmt::ModuleRecord& m : module_records) modules_body.put(m);
  for (const fmt::RegionRecord& r : region_records) regions_body.put(r);
  for (const fmt::MetricRecord& m : metric_records) metrics_body.put(m);
  for (const std::string& s : strings.strings()) {
    strings_body.put(uint32_t(s.size()));
    strings_body.put_bytes(s.data(), s.size());
  }
  section(fmt::kTagStrings, uint32_t(strings.strings().size()), strings_body);
  section(fmt::kTagModules, uint32_t(module_records.size()), modules_body);
  section(fmt::kTagRegions, uint32_t(region_records.size()), regions_body);
  section(fmt::kTagMetrics, uint32_t(metric_records.size()), metrics_body);
  section(fmt::kTagThreads, uint32_t(threads.size()), threads_body);

  fmt::FileHeader header{};
  std::memcpy(header.magic, fmt::kMagic, 8);
  header.version = fmt::kVersion;
  header.header_size = sizeof(fmt::FileHeader);
  header.payload_size = payload.bytes.size();
  header.section_count = 5;
  header.payload_crc32 = fmt::crc32_update(0, payload.bytes.data(), payload.bytes.size());
  header.rank = rec.rank;
  Buffer file;
  file.put(header);
  file.put_bytes(payload.bytes.data(), payload.bytes.size());

  // ---- metadata ----
  Anomalies anomalies;
  for (ThreadState* t : threads) {
    anomalies.unmatched_end += t->anomalies.unmatched_end;
    anomalies.unclosed += t->anomalies.unclosed;
    anomalies.foreign_resume += t->anomalies.foreign_resume;
  }
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  char cwd[4096] = "";
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
  char rank_file[64];
  std::snprintf(rank_file, sizeof rank_file, "rank-%06d.sdrg", rec.rank < 0 ? 0 : rec.rank);

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
  const char* omp_num = getenv("OMP_NUM_THREADS");
  std::string meta;
  meta += "{\n";
  meta += "  \"format\": \"scalea-experiment\",\n";
  meta += "  \"format_version\": " + std::to_string(fmt::kVersion) + ",\n";
  meta += "  \"tool_version\": " + json_escape(SCALEA_VERSION) + ",\n";
  meta += "  \"command\": " + read_cmdline_json() + ",\n";
  meta += "  \"cwd\": " + json_escape(cwd) + ",\n";
  meta += "  \"host\": " + json_escape(host) + ",\n";
  meta += "  \"pid\": " + std::to_string(getpid()) + ",\n";
  meta += "  \"start_time\": " + json_escape(rec.start_time_iso) + ",\n";
  meta += "  \"end_time\": " + json_escape(rec.end_time_iso) + ",\n";
  meta += "  \"finished_by\": " + json_escape(trigger) + ",\n";
  meta += "  \"complete\": true,\n";
  meta += "  \"program_start\": " + json_escape(rec.start_estimated ? "estimated" : "measured") + ",\n";
  meta += "  \"clock\": {\"source\": " + json_escape(rec.clock().source()) +
          ", \"ns_per_tick\": " + std::to_string(ns_per_tick) + ", \"duration_s\": " +
          std::to_string(double(rec.clock().ns1 - rec.clock().ns0) * 1e-9) + "},\n";
  meta += "  \"ranks\": 1,\n";
  meta += "  \"rank\": " + std::to_string(rec.rank) + ",\n";
  meta += "  \"threads\": " + std::to_string(threads.size()) + ",\n";
  meta += "  \"max_team_size\": " + std::to_string(rec.max_team()) + ",\n";
  meta += "  \"omp_num_threads\": " + json_escape(omp_num ? omp_num : "") + ",\n";
  meta += "  \"openmp\": {\"runtime\": " + json_escape(omp.runtime) + ", \"runtime_path\": " +
          json_escape(omp.runtime_path) + ", \"callbacks\": " + callbacks + "},\n";
  meta += "  \"environment\": " + env + ",\n";
  meta += "  \"anomalies\": {\"unmatched_end\": " + std::to_string(anomalies.unmatched_end) +
          ", \"unclosed\": " + std::to_string(anomalies.unclosed) + ", \"foreign_resume\": " +
          std::to_string(anomalies.foreign_resume) + "},\n";
  meta += "  \"files\": [" + json_escape(rank_file) + "]\n";
  meta += "}\n";

  // ---- atomic directory creation ----
  std::string parent = parent_of(dir), base = base_of(dir);
  std::string tmp = parent + "/." + base + ".partial-" + std::to_string(getpid());
  if (mkdir(tmp.c_str(), 0777) != 0) {
    error = tmp + ": " + std::strerror(errno);
    return false;
  }
  int dirfd = open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  bool ok = dirfd >= 0;
  if (!ok) error = tmp + ": " + std::strerror(errno);
  ok = ok && write_file(dirfd, rank_file, file.bytes.data(), file.bytes.size(), error);
  ok = ok && write_file(dirfd, fmt::kMetaFile, meta.data(), meta.size(), error);
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
        summary.threads = uint32_t(threads.size());
        summary.regions = regions.size();
        summary.nodes = total_nodes;
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
  unlinkat(AT_FDCWD, (tmp + "/" + rank_file).c_str(), 0);
  unlinkat(AT_FDCWD, (tmp + "/" + fmt::kMetaFile).c_str(), 0);
  rmdir(tmp.c_str());
  return false;
}

}  // namespace scalea::collect
