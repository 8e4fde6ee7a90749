// Storing experiments: what identifies a run (experiments), its regions (shared by every
// experiment that ran them, identified by the canonical keys of their call path) and one row of
// statistics per region and experiment, all in one transaction.
#include "ingest.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "calibrate/calibrate.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "analysis/meta.hpp"
#include "formats/report_json.hpp"
#include "formats/sampled.hpp"
#include "study/study.hpp"
#include "study/study_data.hpp"
#include "analysis/thread_values.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/drg/region_key.hpp"
#include "schema.hpp"
#include "output/docs.hpp"
#include "output/process.hpp"
#include "output/text.hpp"

extern char** environ;

namespace scalea::cli::db {
namespace {

namespace fs = std::filesystem;
using overheads::kClassCount;
using overheads::kClassKeys;

// ---- hashing: stable across builds and machines (the keys live in the database) ----

struct Hash {
  uint64_t a = 0, b = 0;
  bool operator==(const Hash& o) const { return a == o.a && b == o.b; }
};
struct HashOf {
  size_t operator()(const Hash& h) const { return size_t(h.a ^ (h.b * 0x9E3779B97F4A7C15ull)); }
};

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Two independent 64-bit hashes of `bytes`, continuing from `seed` (a parent's hash).
Hash hash_bytes(const std::string& bytes, Hash seed = {}) {
  uint64_t a = 0xCBF29CE484222325ull ^ seed.a, b = 0x84222325CBF29CE4ull ^ mix(seed.b + 1);
  for (unsigned char ch : bytes) {
    a = (a ^ ch) * 0x100000001B3ull;         // FNV-1a
    b = b * 0x9E3779B97F4A7C15ull + ch + 1;  // a polynomial hash with another multiplier
  }
  return {mix(a ^ bytes.size()), mix(b + (bytes.size() << 1))};
}

std::string hex(Hash h) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)h.a,
                (unsigned long long)h.b);
  return buf;
}

// ---- facts about the run that meta.json does not hold ----

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The standard output of a command (no shell), "" when it cannot run or fails.
std::string capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) out.append(buf, size_t(n));
  }
  close(fds[0]);
  if (rc != 0) return "";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The program file the experiment ran: argv[0] against the run's working directory, or on PATH.
std::string program_file(const drg::Meta& meta) {
  if (meta.command.empty()) return "";
  std::string p = meta.command[0];
  if (p.find('/') == std::string::npos) return find_program(p);
  if (p[0] != '/' && !meta.cwd.empty()) p = meta.cwd + "/" + p;
  std::error_code ec;
  return fs::exists(p, ec) ? p : "";
}

// The compilers that built the program, from its ELF .comment section ("" when unreadable).
std::string compilers(const std::string& program) {
  if (program.empty()) return "";
  elf_version(EV_CURRENT);
  int fd = open(program.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  if (elf && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn))) {
      GElf_Shdr sh;
      const char* name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
      if (!name || std::strcmp(name, ".comment") != 0) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      std::set<std::string> seen;
      for (size_t i = 0; data && i < data->d_size;) {
        std::string s(static_cast<const char*>(data->d_buf) + i,
                      strnlen(static_cast<const char*>(data->d_buf) + i, data->d_size - i));
        i += s.size() + 1;
        if (!s.empty() && seen.insert(s).second) out += (out.empty() ? "" : "; ") + s;
      }
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return out;
}

// The MPI library the program links (its DT_NEEDED name), "" for none.
std::string mpi_library(const std::string& program) {
  std::string needed = capture({"readelf", "-d", program});
  for (size_t at = needed.find("[libmpi"); at != std::string::npos;
       at = needed.find("[libmpi", at + 1)) {
    size_t end = needed.find(']', at);
    std::string lib = needed.substr(at + 1, end - at - 1);
    if (lib.rfind("libmpi.so", 0) == 0 || lib.rfind("libmpich", 0) == 0) return lib;
  }
  return "";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "";
}

std::string hostname() {
  char buf[256] = {0};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "";
}

// Seconds since the epoch of meta.json's "2026-11-23T08:31:57+0000"; NaN when unreadable.
double epoch_of(const std::string& iso) {
  struct tm tm {};
  const char* rest = strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return std::nan("");
  double t = double(timegm(&tm));
  if ((*rest == '+' || *rest == '-') && std::strlen(rest) >= 5) {
    int hh = (rest[1] - '0') * 10 + (rest[2] - '0');
    int mm = (rest[rest[3] == ':' ? 4 : 3] - '0') * 10 + (rest[rest[3] == ':' ? 5 : 4] - '0');
    t -= (*rest == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
  }
  return t;
}

std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") == std::string::npos) return w;
  std::string q = "'";
  for (char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// ---- one experiment as rows ----

using Row = std::vector<Value>;

struct Column {
  const char* name;
  Value value;
};

struct RegionRow {
  Hash key, parent;
  bool root = false;
  int depth = 0;
  std::string path, kind, label, name, file, function, location;
  uint32_t line = 0;
};

struct Rows {
  std::vector<Column> experiment;
  std::vector<RegionRow> regions;                     // one per distinct call path, parents first
  std::vector<Row> stats, subclasses, counters, pes;  // region id filled in later (index 1)
  std::vector<size_t> stats_region, subclass_region, counter_region, pe_region;  // into regions
  std::vector<Row> functions, lines;  // sampled (docs/sampling.md)
  std::vector<size_t> function_region, line_region;
};

std::vector<Column> experiment_columns(const Analyzed& x, const std::string& dir,
                                       const std::string& machine, bool per_pe) {
  const drg::Meta meta = drg::read_meta(x.experiment().meta);
  std::string program, arguments;
  for (size_t i = 0; i < meta.command.size(); ++i) {
    if (i == 0) program = fs::path(meta.command[i]).filename().string();
    else arguments += (arguments.empty() ? "" : " ") + shell_word(meta.command[i]);
  }
  const std::string file = program_file(meta);
  std::string git =
      file.empty()
          ? ""
          : capture({"git", "-C", fs::path(file).parent_path().string(), "rev-parse", "HEAD"});
  Value dirty;
  if (!git.empty())
    dirty = int64_t(!capture({"git", "-C", fs::path(file).parent_path().string(), "status",
                              "--porcelain", "--untracked-files=no"})
                         .empty());
  std::string openmp = meta.openmp.runtime;
  const std::string& omp_path = meta.openmp.runtime_path;
  if (!omp_path.empty()) openmp += (openmp.empty() ? "" : " ") + ("(" + omp_path + ")");
  const int ranks = x.experiment().ranks();
  const auto& pe = x.a.program;
  auto optional = [](const std::optional<double>& v) { return v ? real(*v) : Value(); };
  return {
      {"path", fs::absolute(dir).lexically_normal().string()},
      {"program", program},
      {"command", json_text(nlohmann::json(meta.command))},
      {"arguments", arguments},
      {"cwd", text_or_null(meta.cwd)},
      {"p", int64_t(x.a.p)},
      {"threads", meta.threads.value_or(x.a.p / ranks)},
      {"ranks", int64_t(ranks)},
      {"host", text_or_null(meta.host)},
      {"cpu_model", text_or_null(meta.host == hostname() ? cpu_model() : "")},
      {"compiler", text_or_null(compilers(file))},
      {"openmp_runtime", text_or_null(openmp)},
      {"mpi_library", text_or_null(meta.mpi && !file.empty() ? mpi_library(file) : "")},
      {"tool_version", text_or_null(meta.tool_version)},
      {"git_commit", text_or_null(git)},
      {"git_dirty", dirty},
      {"started", text_or_null(meta.start_time)},
      {"started_epoch", real(epoch_of(meta.start_time))},
      {"duration", real(meta.has_duration ? meta.duration_s : std::nan(""))},
      {"complete", int64_t(x.experiment().complete())},
      {"reference_estimated", int64_t(!x.a.has_reference)},
      {"machine_file", text_or_null(machine)},
      {"program_time", real(x.a.regions.empty() ? 0 : x.a.regions[0].t_p)},
      {"load_balance", real(pe.load_balance)},
      {"communication_efficiency", real(pe.communication_efficiency)},
      {"parallel_efficiency", real(pe.parallel_efficiency)},
      {"computation_scalability", optional(pe.computation_scalability)},
      {"global_efficiency", optional(pe.global_efficiency)},
      {"per_pe", int64_t(per_pe)},
  };
}

// Per-PE sums of one region's nodes (a thread may hold several nodes of one call path), and
// the region's visits and wait over them all.
struct PeSums {
  std::vector<double> time, wait, visits;
  std::vector<uint32_t> touched;
  double visit_sum = 0, wait_sum = 0;
  explicit PeSums(size_t threads) : time(threads, 0), wait(threads, 0), visits(threads, 0) {}
  // One holder's values (time and wait in ns).
  void add(uint32_t thread, double v, double t, double w) {
    if (time[thread] == 0 && visits[thread] == 0 && wait[thread] == 0) touched.push_back(thread);
    time[thread] += ns_to_s(t);
    wait[thread] += ns_to_s(w);
    visits[thread] += v;
    visit_sum += v;
    wait_sum += w;
  }
  void clear() {
    for (uint32_t t : touched) time[t] = wait[t] = visits[t] = 0;
    touched.clear();
    visit_sum = wait_sum = 0;
  }
};

// A node's call-path key: its region's key (drg::region_key, hashed once per region) chained to
// its parent's key.
class CallPathHashes {
 public:
  explicit CallPathHashes(const drg::Experiment& e)
      : e_(e), region_(e.regions.size()), done_(e.regions.size(), 0) {}
  Hash of(uint32_t region, Hash parent) {
    if (!done_[region]) {
      region_[region] = hash_bytes(drg::region_key(e_.regions[region]));
      done_[region] = 1;
    }
    return hash_bytes(hex(region_[region]), parent);
  }

 private:
  const drg::Experiment& e_;
  std::vector<Hash> region_;
  std::vector<char> done_;
};

RegionRow region_row(const drg::Region& reg, Hash key, const Hash* parent, int depth,
                     std::string path) {
  RegionRow r;
  r.key = key;
  r.root = !parent;
  if (parent) r.parent = *parent;
  r.depth = depth;
  r.path = std::move(path);
  r.kind = std::string(format::region_kind_name(reg.kind));
  r.label = reg.label();
  r.name = reg.name;
  r.file = reg.file;
  r.function = reg.function;
  r.location = reg.location();
  r.line = reg.line;
  return r;
}

// Regions only the reference ran (their work is gone): keyed in the reference's tree, whose
// root stands for the run's (the study report matches them the same way).
void add_reference_only(const Analyzed& x, const std::vector<Hash>& keys,
                        std::unordered_map<Hash, size_t, HashOf>& group_of, Rows& out) {
  const overheads::Analysis& a = x.a;
  if (x.ref.empty() || a.only_in_reference.empty()) return;
  const drg::MergedTree& rt = x.ref.tree();
  const drg::Experiment& re = x.ref.experiment();
  CallPathHashes hashes(re);
  std::vector<Hash> ref_keys(rt.nodes().size());
  ref_keys[0] = keys[0];
  for (uint32_t n = 1; n < rt.nodes().size(); ++n)
    ref_keys[n] = hashes.of(rt.node(n).region, ref_keys[rt.node(n).parent]);
  std::map<size_t, std::vector<const overheads::RegionOverheads*>> gone;  // by region
  for (const overheads::RegionOverheads& r : a.only_in_reference) {
    if (r.ref_node == format::kNoIndex || group_of.count(ref_keys[r.ref_node])) continue;
    auto [it, added] = group_of.emplace(ref_keys[r.ref_node], out.regions.size());
    if (added) {
      const drg::MergedNode& mn = rt.node(r.ref_node);
      out.regions.push_back(region_row(rt.region_of(r.ref_node), ref_keys[r.ref_node],
                                       &ref_keys[mn.parent], int(mn.depth), r.path));
    }
    gone[it->second].push_back(&r);
  }
  for (const auto& [g, list] : gone) {
    double t_s = 0, t_o = 0;
    std::array<double, kClassCount> cls{};
    std::map<std::string, double> sub;
    for (const overheads::RegionOverheads* r : list) {
      t_s += r->t_s, t_o += r->t_o;
      for (int c = 0; c < kClassCount; ++c) cls[size_t(c)] += r->classes[size_t(c)];
      for (const auto& [k, v] : r->subclasses) sub[k] += v;
    }
    Row stats = {Value(),   Value(),    int64_t(0), int64_t(list.size()), int64_t(0), real(0.0),
                 real(t_s), int64_t(0), real(t_o)};
    for (double c : cls) stats.push_back(real(c));
    stats.insert(stats.end(),
                 {Value(), Value(), int64_t(0), Value(), Value(), Value(), Value(), Value(),
                  Value(), Value(), Value(), Value(), Value(), Value(), Value()});
    out.stats.push_back(std::move(stats));
    out.stats_region.push_back(g);
    for (const auto& [k, v] : sub) {
      out.subclasses.push_back({Value(), Value(), k, real(v)});
      out.subclass_region.push_back(g);
    }
  }
}

// The rows of one database region: its nodes' overheads and statistics added up, and the
// per-PE sums of their threads' values (`pes`).
struct RegionRows {
  const Analyzed& x;
  const std::vector<Hash>& keys;  // per merged node
  const std::vector<int>& counters;
  bool per_pe;
  Rows& out;

  void add(size_t g, const std::vector<uint32_t>& nodes, PeSums& pes) const {
    const drg::MergedTree& t = x.tree();
    const drg::Experiment& e = x.experiment();
    const overheads::Analysis& a = x.a;
    const int sent = e.metric(format::CoreMetric::BytesSent),
              recv = e.metric(format::CoreMetric::BytesRecv),
              transfer = e.metric(format::CoreMetric::Transfer);
    const uint32_t n0 = nodes[0];
    const drg::MergedNode& mn = t.node(n0);
    out.regions.push_back(region_row(t.region_of(n0), keys[n0],
                                     mn.parent == format::kNoIndex ? nullptr : &keys[mn.parent],
                                     int(mn.depth), region_path(t, a.regions[n0])));
    // Nodes of one call path are added up, as the study report does.
    const overheads::RegionOverheads& r0 = a.regions[n0];
    double t_p = 0, t_s = 0, t_o = 0, noise = 0, events = 0;
    std::array<double, kClassCount> cls{};
    std::map<std::string, double> sub;
    for (uint32_t n : nodes) {
      const overheads::RegionOverheads& r = a.regions[n];
      t_p += r.t_p, t_s += r.t_s, t_o += r.t_o, noise += r.noise, events += r.events_below;
      for (int c = 0; c < kClassCount; ++c) cls[size_t(c)] += r.classes[size_t(c)];
      for (const auto& [k, v] : r.subclasses) sub[k] += v;
    }
    std::sort(pes.touched.begin(), pes.touched.end());
    pes.touched.erase(std::unique(pes.touched.begin(), pes.touched.end()), pes.touched.end());
    double lo = INFINITY, hi = -INFINITY, sum = 0, sum2 = 0;
    for (uint32_t th : pes.touched) {
      double v = pes.time[th];
      lo = std::min(lo, v), hi = std::max(hi, v), sum += v, sum2 += v * v;
    }
    const double count = double(pes.touched.size());
    const double mean = count ? sum / count : NAN;
    const double sd = count ? std::sqrt(std::max(0.0, sum2 / count - mean * mean)) : NAN;
    const bool one = nodes.size() == 1;
    const double speedup = one ? r0.speedup : t_p > 0 ? t_s / t_p : NAN;
    auto sum_of = [&](int metric) {
      double s = 0;
      for (uint32_t n : nodes) s += t.sum(n, metric);
      return s;
    };
    const bool mpi = t.region_of(n0).kind == drg::RegionKind::Mpi;
    Row stats = {Value(),
                 Value(),
                 int64_t(1),
                 int64_t(nodes.size()),
                 int64_t(pes.visit_sum),
                 real(t_p),
                 real(t_s),
                 int64_t(r0.t_s_estimated),
                 real(t_o)};
    for (double c : cls) stats.push_back(real(c));
    for (Value v :
         {real(speedup), real(one ? r0.efficiency : speedup / a.p), Value(int64_t(count)),
          count ? real(lo) : Value(), real(mean), count ? real(hi) : Value(), real(sd),
          real(one        ? r0.imbalance
               : mean > 0 ? hi / mean
                          : NAN),
          real(ns_to_s(pes.wait_sum)), a.noise_priced ? real(noise) : Value(), real(events),
          mpi ? Value(int64_t(sum_of(sent))) : Value(),
          mpi ? Value(int64_t(sum_of(recv))) : Value(), mpi ? real(ns_to_s(pes.wait_sum)) : Value(),
          mpi ? real(ns_to_s(sum_of(transfer))) : Value()})
      stats.push_back(v);
    out.stats.push_back(std::move(stats));
    out.stats_region.push_back(g);
    for (const auto& [k, v] : sub) {
      out.subclasses.push_back({Value(), Value(), k, real(v)});
      out.subclass_region.push_back(g);
    }
    for (int m : counters) {
      out.counters.push_back({Value(), Value(), e.metrics[size_t(m)], real(sum_of(m))});
      out.counter_region.push_back(g);
    }
    if (per_pe)
      for (uint32_t th : pes.touched) {
        out.pes.push_back({Value(), Value(), int64_t(e.threads[th].rank),
                           int64_t(e.threads[th].thread), int64_t(pes.visits[th]),
                           real(pes.time[th]), real(pes.wait[th])});
        out.pe_region.push_back(g);
      }
  }
};

// The sampled functions and lines of region `g` (its nodes' samples added up).
void add_sampled(const drg::MergedTree& t, const SampledChildren& sampled, size_t g, Rows& out) {
  for (const SampledChild& c : sampled.functions) {
    const drg::SampledFunction& f = c.function;
    out.functions.push_back({Value(), Value(), f.name, f.module, real(f.own_samples), real(f.own),
                             real(f.own_error), real(f.self), real(f.inclusive),
                             text_or_null(sampled_location(t, f.hot_region))});
    out.function_region.push_back(g);
    for (const drg::SampledLine& l : c.lines) {
      out.lines.push_back({Value(), Value(), sampled_location(t, l.region), f.name, f.module,
                           real(l.samples), real(l.own), real(l.own_error)});
      out.line_region.push_back(g);
    }
  }
}

Rows make_rows(const Analyzed& x, const std::string& dir, const std::string& machine, bool per_pe) {
  Rows out;
  out.experiment = experiment_columns(x, dir, machine, per_pe);
  const drg::MergedTree& t = x.tree();
  const drg::Experiment& e = x.experiment();
  const int visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum), wait = e.metric(format::CoreMetric::Wait);
  std::vector<int> counters;
  for (size_t m = 0; m < e.metrics.size(); ++m)
    if (!format::core_metric(e.metrics[m])) counters.push_back(int(m));

  // Call-path keys: the canonical region keys from the program down (a parent's index is
  // smaller than its children's). Nodes with one key are one region of the database.
  CallPathHashes hashes(e);
  std::vector<Hash> keys(t.nodes().size());
  std::unordered_map<Hash, size_t, HashOf> group_of;  // key -> index into out.regions
  std::vector<std::vector<uint32_t>> groups;
  for (uint32_t n = 0; n < t.nodes().size(); ++n) {
    const drg::MergedNode& mn = t.node(n);
    keys[n] = hashes.of(mn.region, mn.parent == format::kNoIndex ? Hash{} : keys[mn.parent]);
    auto [it, added] = group_of.emplace(keys[n], groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(n);
  }
  // Per region: each PE's sums over the region's nodes, gathered node by node as the threads'
  // values are read (for_each_node_threads), then the region's rows.
  const RegionRows rows{x, keys, counters, per_pe, out};
  PeSums pes(e.threads.size());
  std::vector<uint32_t> listed;  // the regions' nodes, region after region
  std::vector<size_t> region_end;
  for (const std::vector<uint32_t>& nodes : groups) {
    listed.insert(listed.end(), nodes.begin(), nodes.end());
    region_end.push_back(listed.size());
  }
  size_t g = 0, visited = 0;
  for_each_node_threads(t, listed, {visits, time, wait}, [&](const NodeThreads& h) {
    for (size_t i = 0; i < h.count; ++i)
      pes.add(h.thread[i], h.value(i, 0), h.value(i, 1), h.value(i, 2));
    if (++visited < region_end[g]) return;
    rows.add(g, groups[g], pes);
    ++g;
    pes.clear();
  });

  double samples = 0;
  if (has_samples(e)) {
    const drg::SampleProfile profile(t);
    samples = profile.total_samples();
    for (size_t i = 0; i < groups.size(); ++i)
      add_sampled(t, sampled_children(t, profile, groups[i]), i, out);
  }
  out.experiment.push_back({"samples", real(samples)});
  add_reference_only(x, keys, group_of, out);
  return out;
}

std::vector<std::string> stats_columns() {
  std::vector<std::string> c = {"experiment_id", "region_id", "in_run",        "nodes", "visits",
                                "t_p",           "t_s",       "t_s_estimated", "t_o"};
  for (std::string_view k : kClassKeys) c.emplace_back(k);
  for (const char* k : {"speedup", "efficiency", "pes", "time_min", "time_mean", "time_max",
                        "time_stddev", "imbalance", "wait_total", "noise", "events_below",
                        "bytes_sent", "bytes_recv", "mpi_wait", "mpi_transfer"})
    c.emplace_back(k);
  return c;
}

int64_t next_id(Database& db, const std::string& table) {
  Result r = db.query("SELECT MAX(id) FROM " + table);
  return (r.rows.empty() ? 0 : as_int(r.rows[0][0], 0)) + 1;
}

// The database ids of the rows' regions, storing the new ones (inside the write transaction).
std::vector<int64_t> region_ids(Database& db, const std::vector<RegionRow>& regions) {
  std::vector<Value> keys;
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < regions.size(); ++i) {
    std::string k = hex(regions[i].key);
    index.emplace(k, i);
    keys.emplace_back(std::move(k));
  }
  std::vector<int64_t> ids(regions.size(), 0);
  for (const auto& row :
       select_in(db, "SELECT id, region_key FROM regions", "region_key", keys).rows)
    ids[index.at(as_text(row[1]))] = as_int(row[0]);
  std::vector<size_t> fresh;
  for (size_t i = 0; i < regions.size(); ++i)
    if (!ids[i]) fresh.push_back(i);
  if (fresh.empty()) return ids;
  int64_t next = next_id(db, "regions");
  for (size_t i : fresh) ids[i] = next++;
  // Parents first: a region refers to its parent's row.
  std::stable_sort(fresh.begin(), fresh.end(),
                   [&](size_t a, size_t b) { return regions[a].depth < regions[b].depth; });
  std::vector<Row> rows;
  for (size_t i : fresh) {
    const RegionRow& r = regions[i];
    Value parent;
    auto up = r.root ? index.end() : index.find(hex(r.parent));
    if (up != index.end()) parent = ids[up->second];
    rows.push_back({ids[i], hex(r.key), parent, int64_t(r.depth), r.path, hash_hex(r.path), r.kind,
                    r.label, text_or_null(r.name), text_or_null(r.file),
                    r.line ? Value(int64_t(r.line)) : Value(), text_or_null(r.function),
                    text_or_null(r.location)});
  }
  insert_rows(db, "regions",
              {"id", "region_key", "parent_id", "depth", "path", "path_hash", "kind", "label",
               "name", "file", "line", "function_name", "location"},
              rows);
  return ids;
}

void fill_ids(std::vector<Row>& rows, const std::vector<size_t>& region,
              const std::vector<int64_t>& ids, int64_t experiment) {
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i][0] = experiment;
    rows[i][1] = ids[region[i]];
  }
}

void delete_rows(Database& db, int64_t id) {
  for (const char* table : {"region_stats", "region_subclasses", "region_counters", "pe_times",
                            "sampled_functions", "sampled_lines"})
    db.query(std::string("DELETE FROM ") + table + " WHERE experiment_id = ?", {id});
}

void store_tags(Database& db, int64_t id, const Tags& tags) {
  for (const auto& [k, v] : tags)
    db.query(
        "INSERT INTO tags (experiment_id, tag, value) VALUES (?, ?, ?) "
        "ON CONFLICT (experiment_id, tag) DO UPDATE SET value = excluded.value",
        {id, k, v});
}

// The reference of an experiment classified against itself (a reference run).
constexpr int64_t kSelf = -1;

// One experiment, in one transaction. `reference`: the id of the experiment it was classified
// against, 0 for none, kSelf for itself. `link` runs inside the transaction (a study's run row).
Added store(Database& db, const Analyzed& x, const std::string& dir, int64_t reference,
            const AddOptions& o, const std::string& machine,
            const std::function<void(int64_t)>& link = nullptr) {
  const std::string uid = hash_hex(read_file(dir + "/meta.json"));
  Added added;
  added.path = dir;
  db.begin_write();
  try {
    Result old =
        db.query("SELECT id, reference_id, per_pe, samples FROM experiments WHERE uid = ?", {uid});
    if (!old.rows.empty()) {
      added.id = as_int(old.rows[0][0]);
      int64_t had = as_int(old.rows[0][1], 0);
      bool same_ref = reference == kSelf ? had == added.id : had == reference;
      // Stored by schema 1 (samples NULL): stored again, with its samples.
      bool complete = !std::holds_alternative<std::monostate>(old.rows[0][3]);
      if (same_ref && complete && (!o.per_pe || as_int(old.rows[0][2]) == 1)) {
        store_tags(db, added.id, o.tags);
        if (link) link(added.id);
        db.commit();
        added.what = "unchanged";
        return added;
      }
    }
    Rows rows = make_rows(x, dir, machine, o.per_pe);
    if (!added.id) added.id = next_id(db, "experiments");
    rows.experiment.push_back({"reference_id", reference == kSelf ? Value(added.id)
                                               : reference        ? Value(reference)
                                                                  : Value()});
    rows.experiment.push_back({"added", study::now_iso8601()});
    std::vector<std::string> names;
    Row values;
    for (const Column& c : rows.experiment) names.emplace_back(c.name), values.push_back(c.value);
    if (!old.rows.empty()) {
      std::string set;
      for (const std::string& n : names) set += (set.empty() ? "" : ", ") + n + " = ?";
      values.push_back(added.id);
      db.query("UPDATE experiments SET " + set + " WHERE id = ?", values);
      delete_rows(db, added.id);
      added.what = "replaced";
    } else {
      names.insert(names.begin(), {"id", "uid"});
      values.insert(values.begin(), {added.id, uid});
      insert_rows(db, "experiments", names, {values});
      added.what = "stored";
    }
    store_tags(db, added.id, o.tags);
    std::vector<int64_t> ids = region_ids(db, rows.regions);
    fill_ids(rows.stats, rows.stats_region, ids, added.id);
    fill_ids(rows.subclasses, rows.subclass_region, ids, added.id);
    fill_ids(rows.counters, rows.counter_region, ids, added.id);
    fill_ids(rows.pes, rows.pe_region, ids, added.id);
    fill_ids(rows.functions, rows.function_region, ids, added.id);
    fill_ids(rows.lines, rows.line_region, ids, added.id);
    insert_rows(db, "region_stats", stats_columns(), rows.stats);
    insert_rows(db, "region_subclasses", {"experiment_id", "region_id", "subclass", "seconds"},
                rows.subclasses);
    insert_rows(db, "region_counters", {"experiment_id", "region_id", "counter", "value"},
                rows.counters);
    insert_rows(db, "pe_times",
                {"experiment_id", "region_id", "mpi_rank", "thread", "visits", "pe_time", "wait"},
                rows.pes);
    insert_rows(db, "sampled_functions",
                {"experiment_id", "region_id", "function_name", "module", "samples", "own",
                 "own_error", "self", "on_stack", "hottest_line"},
                rows.functions);
    insert_rows(db, "sampled_lines",
                {"experiment_id", "region_id", "location", "function_name", "module", "samples",
                 "own", "own_error"},
                rows.lines);
    if (link) link(added.id);
    added.regions = rows.regions.size();
    db.commit();
  } catch (...) {
    db.rollback();
    throw;
  }
  return added;
}

// The id of an experiment already stored, by its meta.json; 0 when it is not.
int64_t stored_id(Database& db, const std::string& dir) {
  Result r = db.query("SELECT id FROM experiments WHERE uid = ?",
                      {hash_hex(read_file(dir + "/meta.json"))});
  return r.rows.empty() ? 0 : as_int(r.rows[0][0]);
}

std::string machine_for(const AddOptions& o, std::optional<overheads::MachineModel>& model) {
  std::string used;
  model = find_machine(o.machine, used);
  return used;
}

// How the experiment in `dir` is analysed against `reference` with `p` PEs (0: its threads).
std::unique_ptr<Analyzed> analyzed(const std::string& dir, const std::string& reference, int p,
                                   const AddOptions& o,
                                   const std::optional<overheads::MachineModel>& model) {
  AnalysisOptions ao;
  ao.reference = reference;
  ao.force = o.force;
  ao.decomposition = o.decomposition;
  ao.p = p;
  ao.machine = model ? &*model : nullptr;
  return analyze(dir, ao);
}

// Stores the reference (classified against itself) unless it is stored; its id.
int64_t store_reference(Database& db, const std::string& ref, const AddOptions& o,
                        std::vector<Added>& out) {
  if (int64_t id = stored_id(db, ref)) return id;
  std::optional<overheads::MachineModel> model;
  std::string machine = machine_for(o, model);
  std::unique_ptr<Analyzed> x = analyzed(ref, ref, 1, o, model);
  out.push_back(store(db, *x, ref, kSelf, o, machine));
  return out.back().id;
}

}  // namespace

std::string hash_hex(const std::string& bytes) { return hex(hash_bytes(bytes)); }

std::pair<std::string, std::string> parse_tag(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--tag " + text + ": give KEY=VALUE, e.g. --tag commit=abc123");
  std::string k = text.substr(0, eq);
  for (char ch : k)
    if (!std::isalnum((unsigned char)ch) && ch != '_' && ch != '.' && ch != '-')
      throw UserError("--tag " + text + ": a key is letters, digits, '_', '.' and '-'");
  return {k, text.substr(eq + 1)};
}

std::vector<Added> add_experiment(Database& db, const std::string& dir,
                                  const std::string& reference, const AddOptions& o) {
  std::vector<Added> out;
  std::optional<overheads::MachineModel> model;
  std::string machine = machine_for(o, model);
  // Analysed first: a bad experiment or reference is refused before anything is stored.
  std::unique_ptr<Analyzed> x = analyzed(dir, reference, 0, o, model);
  int64_t ref_id = 0;
  if (!reference.empty()) ref_id = store_reference(db, reference, o, out);
  if (ref_id && stored_id(db, dir) == ref_id) return out;  // the run is its own reference
  out.push_back(store(db, *x, dir, ref_id, o, machine));
  return out;
}

namespace {

// The study's row, found again by what identifies it however often study.json changes: its id.
int64_t store_study_row(Database& db, const std::string& dir, const study::Study& s,
                        int64_t ref_id) {
  auto list = [](const std::vector<int>& v) {
    std::string t;
    for (int x : v) t += (t.empty() ? "" : ",") + std::to_string(x);
    return t;
  };
  const std::string command = json_text(nlohmann::json(s.command));
  const std::string uid = hash_hex(s.created + "\n" + s.host + "\n" + s.cwd + "\n" + command);
  int64_t study_id = 0;
  db.begin_write();
  try {
    Result r = db.query("SELECT id FROM studies WHERE uid = ?", {uid});
    std::vector<Value> values = {fs::absolute(dir).lexically_normal().string(),
                                 command,
                                 list(s.threads),
                                 list(s.ranks),
                                 int64_t(s.repeat),
                                 text_or_null(s.created),
                                 text_or_null(s.host),
                                 ref_id};
    if (!r.rows.empty()) {
      study_id = as_int(r.rows[0][0]);
      values.push_back(study_id);
      db.query(
          "UPDATE studies SET path = ?, command = ?, threads = ?, ranks = ?, repetitions = ?, "
          "created = ?, "
          "host = ?, reference_id = ? WHERE id = ?",
          values);
    } else {
      study_id = next_id(db, "studies");
      values.insert(values.begin(), {study_id, uid});
      values.push_back(study::now_iso8601());
      insert_rows(db, "studies",
                  {"id", "uid", "path", "command", "threads", "ranks", "repetitions", "created",
                   "host", "reference_id", "added"},
                  {values});
    }
    db.commit();
  } catch (...) {
    db.rollback();
    throw;
  }
  return study_id;
}

}  // namespace

std::vector<Added> add_study(Database& db, const std::string& dir, const AddOptions& o) {
  using namespace study;
  Study s = load_study(dir);
  std::vector<std::string> warnings;
  studyrep::ReferenceRun chosen = studyrep::reference_run(dir, s, warnings);
  for (const std::string& w : warnings) std::fprintf(stderr, "scalea db: %s\n", w.c_str());
  const std::string ref_dir = dir + "/" + chosen.run->experiment();
  std::vector<Added> out;
  const int64_t ref_id = store_reference(db, ref_dir, o, out);

  const int64_t study_id = store_study_row(db, dir, s, ref_id);
  std::optional<overheads::MachineModel> model;
  std::string machine = machine_for(o, model);
  for (const Run& r : s.runs) {
    if (r.status != Status::Ok) continue;
    const std::string run_dir = dir + "/" + r.experiment();
    auto link = [&](int64_t id) {
      db.query(
          "INSERT INTO study_runs (study_id, experiment_id, run, config, repetition) VALUES (?, ?, "
          "?, ?, ?) "
          "ON CONFLICT (study_id, experiment_id) DO NOTHING",
          {study_id, id, r.id(), r.config.id(), int64_t(r.repetition)});
    };
    if (&r == chosen.run) {
      // The reference is stored already: its row joins the study.
      db.begin_write();
      try {
        link(ref_id);
        db.commit();
      } catch (...) {
        db.rollback();
        throw;
      }
      continue;
    }
    std::unique_ptr<Analyzed> x;
    try {
      x = analyzed(run_dir, ref_dir, r.config.p(), o, model);
    } catch (const drg::LoadError& e) {
      std::fprintf(stderr, "scalea db: run %s left out: %s\n", r.id().c_str(),
                   with_docs_dir(e.what()).c_str());
      continue;
    }
    out.push_back(store(db, *x, run_dir, ref_id, o, machine, link));
  }
  return out;
}

}  // namespace scalea::cli::db
