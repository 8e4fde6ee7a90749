#include "calibrate.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "output/errors.hpp"
#include "output/process.hpp"

extern char** environ;

namespace scalea::cli {

namespace {

using nlohmann::json;

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// ---- clock ------------------------------------------------------------------------------------

json measure_clock() {
  timespec res;
  clock_getres(CLOCK_MONOTONIC, &res);
  constexpr int kReads = 200000;
  double min_step = 1e30;
  timespec a, b;
  double t0 = now_ns();
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < kReads; ++i) {
    clock_gettime(CLOCK_MONOTONIC, &b);
    double d = double(b.tv_sec - a.tv_sec) * 1e9 + double(b.tv_nsec - a.tv_nsec);
    if (d > 0 && d < min_step) min_step = d;
    a = b;
  }
  double read_ns = (now_ns() - t0) / kReads;
  uint64_t sum = 0;
  t0 = now_ns();
  for (int i = 0; i < kReads; ++i) sum += __rdtsc();
  double tsc_ns = (now_ns() - t0) / kReads;
  asm volatile("" : : "r"(sum));  // the reads are kept
  return {{"source", "CLOCK_MONOTONIC"},
          {"resolution_ns", double(res.tv_nsec)},
          {"smallest_step_ns", min_step},
          {"read_cost_ns", read_ns},
          {"tsc_read_cost_ns", tsc_ns}};
}

// ---- memory -----------------------------------------------------------------------------------

// Cache sizes of cpu0's data/unified caches, by level, from sysfs (the per-core view), else
// sysconf.
std::map<int, long> cache_sizes() {
  std::map<int, long> out;
  for (int i = 0; i < 8; ++i) {
    std::string d = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::ifstream lv(d + "/level"), ty(d + "/type"), sz(d + "/size");
    if (!lv || !ty || !sz) continue;
    int level = 0;
    std::string type, size;
    lv >> level;
    ty >> type;
    sz >> size;
    if (type == "Instruction" || size.empty()) continue;
    long v = std::atol(size.c_str());
    char unit = size.back();
    if (unit == 'K') v *= 1024;
    else if (unit == 'M') v *= 1024 * 1024;
    if (v > 0) out[level] = v;
  }
  long sc[3] = {sysconf(_SC_LEVEL1_DCACHE_SIZE), sysconf(_SC_LEVEL2_CACHE_SIZE),
                sysconf(_SC_LEVEL3_CACHE_SIZE)};
  for (int l = 1; l <= 3; ++l)
    if (!out.count(l) && sc[l - 1] > 0) out[l] = sc[l - 1];
  return out;
}

// Mean latency of one dependent load over a working set of `bytes` (random cyclic permutation of
// cache lines: no prefetcher helps).
double chase_ns(size_t bytes, size_t loads) {
  constexpr size_t kLine = 64;
  size_t n = std::max<size_t>(bytes / kLine, 16);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(42);
  std::shuffle(order.begin() + 1, order.end(), rng);
  auto* mem = static_cast<char*>(aligned_alloc(kLine, n * kLine));
  if (!mem) return 0;
  for (size_t i = 0; i < n; ++i)
    *reinterpret_cast<void**>(mem + order[i] * kLine) = mem + order[(i + 1) % n] * kLine;
  void* p = mem;
  for (size_t i = 0; i < n; ++i) p = *static_cast<void**>(p);  // warm the working set
  double t0 = now_ns();
  for (size_t i = 0; i < loads; ++i) {
    p = *static_cast<void**>(p);
    asm volatile("" : "+r"(p));  // each load depends on the last and stays inside the timing
  }
  double d = now_ns() - t0;
  volatile void* sink = p;
  (void)sink;
  std::free(mem);
  return d / double(loads);
}

json measure_memory(bool quick) {
  std::map<int, long> sizes = cache_sizes();
  size_t loads = quick ? 1000000 : 3000000;
  json levels = json::array();
  std::vector<std::pair<std::string, double>> lat;
  for (const auto& [level, size] : sizes) {
    if (level > 3) continue;
    size_t ws = size_t(size) / 2;
    double ns = chase_ns(ws, loads);
    std::string name = "L" + std::to_string(level);
    levels.push_back(
        {{"level", name}, {"cache_bytes", size}, {"working_set_bytes", ws}, {"latency_ns", ns}});
    lat.emplace_back(name, ns);
  }
  long last = sizes.empty() ? 8l << 20 : sizes.rbegin()->second;
  size_t ws = std::clamp<size_t>(size_t(last) * 4, 64u << 20, 256u << 20);
  double mem_ns = chase_ns(ws, loads / 2);
  levels.push_back({{"level", "memory"}, {"working_set_bytes", ws}, {"latency_ns", mem_ns}});
  lat.emplace_back("memory", mem_ns);
  json penalty = json::object();
  for (size_t i = 0; i + 1 < lat.size(); ++i)
    penalty[lat[i].first] = std::max(0.0, lat[i + 1].second - lat[i].second);
  return {{"levels", levels}, {"miss_penalty_ns", penalty}};
}

// ---- the probe program ------------------------------------------------------------------------

struct ProbeResult {
  std::map<std::string, double> ns_per_instance;  // event -> ns
  bool ok = false;
  std::string error;
};

ProbeResult run_probe(const std::string& probe, int threads, double scale, bool with_tool,
                      const std::string& tmpdir, int serial) {
  ProbeResult r;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string s(*e);
    if (s.rfind("SCALEA_", 0) == 0 || s.rfind("OMP_TOOL", 0) == 0 ||
        s.rfind("OMP_NUM_THREADS", 0) == 0)
      continue;
    env.push_back(s);
  }
  if (with_tool) {
    env.push_back("OMP_TOOL_LIBRARIES=" + own_library("libscalea-omp.so"));
    env.push_back("SCALEA_OUTPUT=" + tmpdir + "/probe-" + std::to_string(serial));
    env.push_back("SCALEA_QUIET=1");
    env.push_back("SCALEA_COUNTERS=none");  // the tool alone; counter reads are priced apart
  } else {
    env.push_back("SCALEA_ENABLE=0");
  }
  std::string out_file = tmpdir + "/probe-" + std::to_string(serial) + ".out";
  std::vector<std::string> args = {probe, std::to_string(threads), fmt::format("{}", scale)};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, probe.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.error = probe + ": " + std::strerror(rc);
    return r;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    r.error = "the probe failed (status " + std::to_string(status) + ")";
    return r;
  }
  std::ifstream in(out_file);
  std::string name;
  double count, seconds;
  while (in >> name >> count >> seconds)
    if (count > 0) r.ns_per_instance[name] = seconds * 1e9 / count;
  r.ok = r.ns_per_instance.size() == 4;
  if (!r.ok) r.error = "unexpected probe output";
  return r;
}

// Minimum over repeats, per event (the least disturbed run).
std::map<std::string, double> best_of(const std::string& probe, int threads, double scale,
                                      bool with_tool, const std::string& tmpdir, int repeats,
                                      int& serial) {
  std::map<std::string, double> best;
  for (int i = 0; i < repeats; ++i) {
    ProbeResult r = run_probe(probe, threads, scale, with_tool, tmpdir, serial++);
    if (!r.ok)
      throw UserError("calibration probe (" + std::to_string(threads) + " threads): " + r.error);
    for (const auto& [k, v] : r.ns_per_instance) best[k] = best.count(k) ? std::min(best[k], v) : v;
  }
  return best;
}

void remove_tree(const std::string& dir) {
  std::string cmd;  // small, known layout: files in dir and in its experiment subdirectories
  std::vector<std::string> stack = {dir};
  std::vector<std::string> dirs;
  while (!stack.empty()) {
    std::string d = stack.back();
    stack.pop_back();
    dirs.push_back(d);
    if (DIR* h = opendir(d.c_str())) {
      while (dirent* e = readdir(h)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        std::string p = d + "/" + n;
        struct stat st;
        if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) stack.push_back(p);
        else unlink(p.c_str());
      }
      closedir(h);
    }
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) rmdir(it->c_str());
}

bool make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/') continue;
    std::string p = path.substr(0, i);
    if (mkdir(p.c_str(), 0777) != 0 && errno != EEXIST) return false;
  }
  return true;
}

std::string parent_dir(const std::string& f) {
  size_t s = f.rfind('/');
  return s == std::string::npos ? "." : (s == 0 ? "/" : f.substr(0, s));
}

}  // namespace

// The machine file's identification: format, host, time of creation, CPUs, tool version.
json machine_header(long cpus) {
  json m;
  m["format"] = "scalea-machine";
  m["format_version"] = 1;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  m["host"] = host;
  time_t t = time(nullptr);
  struct tm tm;
  localtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  m["created"] = buf;
  m["cpus"] = cpus;
  m["tool_version"] = SCALEA_VERSION;
  return m;
}

namespace {

// The OpenMP events' own cost and the tool's cost per event, from the probe run with and without
// the tool at 1, 2 and 4 threads: into m["openmp"] and m["tool_cost_ns..."], and printed.
void measure_openmp(json& m, const std::string& probe, bool quick, long cpus) {
  double scale = quick ? 0.3 : 1.0;
  int repeats = quick ? 2 : 5;
  char tmpl[] = "/tmp/scalea-calibrate-XXXXXX";
  if (!mkdtemp(tmpl))
    throw UserError(std::string("cannot create a temporary directory: ") + std::strerror(errno));
  std::string tmpdir = tmpl;
  json omp = json::object();
  json by_threads = json::object();
  std::map<int, std::map<std::string, double>> without, with;
  int serial = 0;
  try {
    // Interleaved, best of several: other load on the machine disturbs both sides alike.
    for (int rep = 0; rep < repeats; ++rep)
      for (int p : {1, 2, 4})
        for (bool tool : {false, true}) {
          auto r = best_of(probe, p, scale, tool, tmpdir, 1, serial);
          auto& into = tool ? with[p] : without[p];
          for (const auto& [k, v] : r) into[k] = into.count(k) ? std::min(into[k], v) : v;
        }
  } catch (...) {
    remove_tree(tmpdir);
    throw;
  }
  remove_tree(tmpdir);
  auto tool_cost = [&](int p) {
    auto d = [&](const char* k) { return std::max(0.0, with[p][k] - without[p][k]); };
    json c;
    c["barrier"] = d("barrier");
    // An empty parallel region also records its implicit join barrier.
    c["parallel"] = std::max(0.0, d("forkjoin") - d("barrier"));
    c["lock"] = d("lock");
    c["user"] = d("user");
    return c;
  };
  fmt::print("  openmp         {:>8} {:>12} {:>12} {:>12}   (without the tool)\n", "threads",
             "fork/join", "barrier", "lock");
  for (int p : {1, 2, 4}) {
    std::string k = std::to_string(p);
    omp["fork_join_ns"][k] = without[p]["forkjoin"];
    omp["barrier_ns"][k] = without[p]["barrier"];
    omp["lock_ns"][k] = without[p]["lock"];
    by_threads[k] = tool_cost(p);
    fmt::print("                 {:>8} {:>9.0f} ns {:>9.0f} ns {:>9.0f} ns\n", p,
               without[p]["forkjoin"], without[p]["barrier"], without[p]["lock"]);
  }
  omp["threads"] = {1, 2, 4};
  m["openmp"] = omp;
  // The figures compensation uses: user regions and uncontended locks on one thread, parallel
  // regions and barriers with as many threads as CPUs (at most 4, without oversubscription).
  int team = int(std::clamp<long>(cpus, 1, 4));
  if (team == 3) team = 2;
  json cost = tool_cost(team);
  json one = tool_cost(1);
  cost["user"] = one["user"];
  cost["lock"] = one["lock"];
  cost["default"] = one["user"];  // a frame pushed and popped: what any other region costs
  m["tool_cost_ns"] = cost;
  m["tool_cost_ns_by_threads"] = by_threads;
  m["tool_cost_threads"] = team;
  fmt::print(
      "  tool cost      per recorded event: user region {:.0f} ns, lock {:.0f} ns, "
      "barrier {:.0f} ns, parallel region {:.0f} ns ({} threads)\n",
      cost["user"].get<double>(), cost["lock"].get<double>(), cost["barrier"].get<double>(),
      cost["parallel"].get<double>(), team);
}

// The memory levels' load latency and the miss penalties: into m["memory"], and printed.
void measure_memory_levels(json& m, bool quick) {
  m["memory"] = measure_memory(quick);
  for (const auto& l : m["memory"]["levels"]) {
    std::string size = l.contains("cache_bytes")
                           ? fmt::format(" ({} KiB cache)", l["cache_bytes"].get<long>() / 1024)
                           : "";
    fmt::print("  memory         {:<6} working set {:>8} KiB: {:6.1f} ns per load{}\n",
               l["level"].get<std::string>(), l["working_set_bytes"].get<size_t>() / 1024,
               l["latency_ns"].get<double>(), size);
  }
  std::string pens;
  for (const auto& [k, v] : m["memory"]["miss_penalty_ns"].items())
    pens += fmt::format("{}{} {:.1f} ns", pens.empty() ? "" : ", ", k, v.get<double>());
  fmt::print("  miss penalty   {}\n", pens);
}

// Writes the machine file whole: beside itself, then renamed over it.
void write_machine_file(const json& m, const std::string& out) {
  if (!make_dirs(parent_dir(out))) throw UserError("cannot create the directory of " + out);
  std::string tmp = out + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream f(tmp);
    f << m.dump(2) << "\n";
    if (!f) throw UserError("cannot write " + tmp);
  }
  if (rename(tmp.c_str(), out.c_str()) != 0) {
    unlink(tmp.c_str());
    throw UserError("cannot write " + out + ": " + std::strerror(errno));
  }
}

}  // namespace

int run_calibrate(const std::string& output, bool quick) {
  auto start = std::chrono::steady_clock::now();
  std::string out = output.empty() ? default_machine_path() : output;
  std::string probe = self_dir() + "/scalea-calibrate-probe";
  if (access(probe.c_str(), X_OK) != 0) throw UserError("probe program " + probe + " not found");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  json m = machine_header(cpus);
  fmt::print("scalea calibrate: measuring this machine ({} CPUs){}\n", cpus,
             quick ? ", quick" : "");
  m["clock"] = measure_clock();
  fmt::print(
      "  clock          resolution {} ns, smallest step {:.0f} ns, read {:.1f} ns (rdtsc {:.1f} "
      "ns)\n",
      m["clock"]["resolution_ns"].get<double>(), m["clock"]["smallest_step_ns"].get<double>(),
      m["clock"]["read_cost_ns"].get<double>(), m["clock"]["tsc_read_cost_ns"].get<double>());
  measure_openmp(m, probe, quick, cpus);
  measure_memory_levels(m, quick);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m["duration_s"] = secs;
  write_machine_file(m, out);
  fmt::print("wrote machine file {} ({:.1f} s)\n", out, secs);
  return 0;
}

std::string default_machine_path() {
  if (const char* m = getenv("SCALEA_MACHINE"); m && *m) return m;
  const char* xdg = getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/scalea/machine.json";
  const char* home = getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.config/scalea/machine.json";
}

overheads::MachineModel load_machine(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError("machine file " + path + ": " + std::strerror(errno));
  json m;
  try {
    m = json::parse(in);
  } catch (const std::exception& e) {
    throw UserError("machine file " + path + ": not JSON (" + std::string(e.what()) + ")");
  }
  if (!m.is_object() || m.value("format", "") != "scalea-machine")
    throw UserError("machine file " + path +
                    ": not a scalea machine file (format \"scalea-machine\")");
  if (m.value("format_version", 0) != 1)
    throw UserError("machine file " + path + ": unsupported format_version");
  overheads::MachineModel model;
  try {
    if (m.contains("tool_cost_ns"))
      for (const auto& [k, v] : m["tool_cost_ns"].items()) model.tool_cost_ns[k] = v.get<double>();
    if (m.contains("memory") && m["memory"].contains("miss_penalty_ns"))
      for (const auto& [k, v] : m["memory"]["miss_penalty_ns"].items())
        model.miss_penalty_ns[k] = v.get<double>();
  } catch (const std::exception& e) {
    throw UserError("machine file " + path + ": bad value (" + std::string(e.what()) + ")");
  }
  return model;
}

std::optional<overheads::MachineModel> find_machine(const std::string& given, std::string& used) {
  if (!given.empty()) {
    used = given;
    return load_machine(given);
  }
  std::string def = default_machine_path();
  if (access(def.c_str(), R_OK) != 0) return std::nullopt;
  try {
    used = def;
    return load_machine(def);
  } catch (const UserError& e) {
    std::fprintf(stderr, "scalea: ignoring the default machine file: %s\n", e.what());
    used.clear();
    return std::nullopt;
  }
}

}  // namespace scalea::cli
