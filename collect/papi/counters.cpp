#include "counters.hpp"

#include <linux/perf_event.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "../core/background.hpp"
#include "../core/config.hpp"
#include "../core/log.hpp"
#include "../core/recorder.hpp"
#include "papi_api.hpp"
#include "scalea/format.hpp"

namespace scalea::collect::counters {

bool g_on = false;
namespace detail {
uint32_t g_count = 0;
}

namespace {

// Set once PAPI is loaded (start_papi); every PAPI call comes after that.
const PapiApi* g_papi = nullptr;
const PapiApi& papi() { return *g_papi; }

enum class Backend : uint8_t { Papi, Perf };

struct Event {
  std::string name;
  Backend backend;
  int papi_code = 0;
  uint32_t perf_type = 0;
  uint64_t perf_config = 0;
};

using Dropped = CounterReport::Dropped;

struct State {
  std::vector<std::string> requested;
  std::string requested_by = "default";  // "SCALEA_COUNTERS" or "default"
  std::vector<Event> events;             // measured, column order
  std::vector<std::string> names;
  std::vector<uint32_t> papi_cols, perf_cols;  // column of each backend's i-th event
  std::vector<Dropped> dropped;
  bool papi_wanted = true, papi_started = false, multiplexed = false;
  std::string papi_problem, papi_version;
  std::vector<std::string> papi_components;  // "name: active" / "name: disabled (why)"
  std::vector<std::string> offered;          // what PAPI offers here (perf events: see below)
  bool kinds[format::kRegionKindCount] = {};
  std::string kinds_text;
  double cost_per_read_ns = 0;
  std::atomic<uint64_t> read_failures{0};
  std::atomic<uint64_t> thread_failures{0};
  std::string first_failure;
  std::mutex mu;
};

State& st() {
  static State* s = new State();  // never destroyed: threads may read while the process exits
  return *s;
}

// The default set serves the cache-miss drill-down: misses and accesses at L1, L2 and L3,
// cycles, instructions. Events the machine lacks are dropped silently (meta.json says which).
// Constant-initialized: the tool starts from other files' static constructors, which may run
// before this file's dynamic initializers (a std::vector here was still empty then).
constexpr const char* kDefaultEvents[] = {"PAPI_L1_DCM",  "PAPI_L1_DCA", "PAPI_L2_DCM",
                                          "PAPI_L2_DCA",  "PAPI_L3_TCM", "PAPI_L3_TCA",
                                          "PAPI_TOT_CYC", "PAPI_TOT_INS"};
void add_default_events(std::vector<std::string>& to) {
  to.insert(to.end(), std::begin(kDefaultEvents), std::end(kDefaultEvents));
}
void set_default_events(std::vector<std::string>& to) {
  to.assign(std::begin(kDefaultEvents), std::end(kDefaultEvents));
}

struct SoftwareEvent {
  const char* name;
  uint64_t config;
};
// The kernel's software events under the names PAPI's perf_event component gives them.
const SoftwareEvent kSoftware[] = {
    {"PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
    {"FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
    {"MINOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK},
    {"CPU-CLOCK", PERF_COUNT_SW_CPU_CLOCK},
    {"CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"CS", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"ALIGNMENT-FAULTS", PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"EMULATION-FAULTS", PERF_COUNT_SW_EMULATION_FAULTS},
};
const char* kSoftwareShown[] = {
    "perf::PAGE-FAULTS", "perf::MINOR-FAULTS",     "perf::MAJOR-FAULTS",  "perf::TASK-CLOCK",
    "perf::CPU-CLOCK",   "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS"};

bool software_event(const std::string& name, uint64_t& config) {
  std::string n = name;
  if (n.rfind("perf::", 0) == 0) n = n.substr(6);
  else return false;
  if (n.rfind("PERF_COUNT_SW_", 0) == 0) {
    n = n.substr(14);
    for (char& ch : n)
      if (ch == '_') ch = '-';
  }
  for (const SoftwareEvent& e : kSoftware)
    if (n == e.name) return config = e.config, true;
  return false;
}

int perf_open(uint32_t type, uint64_t config, int group, bool leader) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = type;
  a.config = config;
  // perf_event_paranoid 2 allows user-level counting only; but context switches and migrations
  // happen in the kernel: counted at user level they are always 0, so they need kernel counting
  // (root, CAP_PERFMON, or perf_event_paranoid <= 1), and without it the event is refused with
  // the kernel's reason instead of counting nothing.
  bool kernel_side = type == PERF_TYPE_SOFTWARE && (config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
                                                    config == PERF_COUNT_SW_CPU_MIGRATIONS);
  a.exclude_kernel = kernel_side ? 0 : 1;
  a.exclude_hv = 1;
  // A group's leader opens disabled and is enabled once its members are in (open_thread): an
  // event added to a group that already counts stays off until its thread is next scheduled in
  // (Linux 6.18: NPB IS.W at 1 thread, no context switch in 0.1 s, read a task clock of 0 for the
  // whole run in 14 of 15 runs, and a sibling page-fault count started late).
  if (leader) a.read_format = PERF_FORMAT_GROUP, a.disabled = 1;
  return int(syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC));
}

unsigned long papi_thread_id() { return (unsigned long)pthread_self(); }

// Whether the kernel's software events can be opened here, for the "offered" list only. The first
// task-bound perf event the kernel has seen for a while costs 10-20 ms on some virtual machines
// (the kernel switches its scheduler hooks on and waits for an RCU grace period), whatever the
// process then does; so when nothing measured needs the answer at start, a short-lived thread
// finds it out while the program runs, and meta.json waits for it at the end.
enum ProbeState : int { kProbeNotStarted, kProbeRunning, kProbeYes, kProbeNo };
// Waiting for a probe under way polls it every kProbePollUs.
constexpr int kProbePollUs = 500;
// A caller that needs the answer now waits for another caller's probe at most this long.
constexpr int kProbeWaitMs = 1000;
std::atomic<int> g_perf_probe{kProbeNotStarted};

void probe_perf_now() {
  int fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, -1, false);
  if (fd >= 0) close(fd);
  g_perf_probe.store(fd >= 0 ? kProbeYes : kProbeNo, std::memory_order_release);
}

void* probe_thread(void*) {
  probe_perf_now();
  return nullptr;
}

// sync: have the answer before returning; otherwise start the background probe (or answer at
// once when no thread can be started). Probes once per process: the answer does not change.
void probe_perf(bool sync) {
  int expected = kProbeNotStarted;
  if (!g_perf_probe.compare_exchange_strong(expected, kProbeRunning)) {
    // Another caller's probe is under way (a perf_event_open: milliseconds): wait for it, bounded.
    for (int waited_us = 0; sync && waited_us < kProbeWaitMs * 1000 &&
                            g_perf_probe.load(std::memory_order_acquire) == kProbeRunning;
         waited_us += kProbePollUs)
      usleep(kProbePollUs);
    return;
  }
  if (!sync && start_background_thread(probe_thread, nullptr) == 0) return;
  probe_perf_now();
}

// What the machine offers: PAPI's presets, then the kernel's software events once the probe says
// they open. Waits up to max_wait_ms for a background probe.
std::vector<std::string> offered_now(const State& s, int max_wait_ms) {
  std::vector<std::string> out = s.offered;
  for (int waited_us = 0; waited_us < max_wait_ms * 1000 &&
                          g_perf_probe.load(std::memory_order_acquire) == kProbeRunning;
       waited_us += kProbePollUs)
    usleep(kProbePollUs);
  int p = g_perf_probe.load(std::memory_order_acquire);
  if (p == kProbeYes)
    for (const char* n : kSoftwareShown) out.push_back(n);
  else if (p == kProbeRunning) out.push_back("perf:: events (not known: the probe did not finish)");
  else if (p == kProbeNotStarted && !s.requested.empty())
    out.push_back("perf:: events (not probed: the default set does not use them)");
  return out;
}

// Builds a PAPI event set holding `codes`; -1 on failure (why in `why`).
int papi_set(const std::vector<int>& codes, bool multiplex, std::string& why) {
  int set = PAPI_NULL;
  int r = papi().PAPI_create_eventset(&set);
  if (r != PAPI_OK)
    return why = std::string("PAPI_create_eventset: ") + papi().PAPI_strerror(r), -1;
  if (multiplex) {
    r = papi().PAPI_assign_eventset_component(set, 0);
    if (r == PAPI_OK) r = papi().PAPI_set_multiplex(set);
    if (r != PAPI_OK) {
      why = std::string("PAPI_set_multiplex: ") + papi().PAPI_strerror(r);
      papi().PAPI_destroy_eventset(&set);
      return -1;
    }
  }
  for (int code : codes) {
    r = papi().PAPI_add_event(set, code);
    if (r != PAPI_OK) {
      why = std::string(r == PAPI_ECNFLCT ? "conflict" : "PAPI_add_event: ") +
            papi().PAPI_strerror(r);
      papi().PAPI_cleanup_eventset(set);
      papi().PAPI_destroy_eventset(&set);
      return r == PAPI_ECNFLCT ? -2 : -1;
    }
  }
  r = papi().PAPI_start(set);
  if (r != PAPI_OK) {
    why = std::string("PAPI_start: ") + papi().PAPI_strerror(r);
    papi().PAPI_cleanup_eventset(set);
    papi().PAPI_destroy_eventset(&set);
    return r == PAPI_ECNFLCT ? -2 : -1;
  }
  return set;
}

void papi_close(int& set) {
  if (set < 0) return;
  long long v[kMax];
  papi().PAPI_stop(set, v);
  papi().PAPI_cleanup_eventset(set);
  papi().PAPI_destroy_eventset(&set);
  set = -1;
}

void close_thread(ThreadCounters& c) {
  papi_close(c.papi_set);
  for (int fd : c.perf_fds) close(fd);
  c.perf_fds.clear();
  c.perf_leader = -1;
}

// Starts this thread's event sets; false (with why) when it cannot.
bool open_thread(ThreadCounters& c, std::string& why) {
  State& s = st();
  if (!s.papi_cols.empty()) {
    std::vector<int> codes;
    for (uint32_t col : s.papi_cols) codes.push_back(s.events[col].papi_code);
    c.papi_set = papi_set(codes, s.multiplexed, why);
    if (c.papi_set < 0) return c.papi_set = -1, false;
  }
  for (uint32_t col : s.perf_cols) {
    const Event& e = s.events[col];
    int fd = perf_open(e.perf_type, e.perf_config, c.perf_leader, c.perf_leader < 0);
    if (fd < 0) {
      why = e.name + ": perf_event_open: " + std::strerror(errno);
      close_thread(c);
      return false;
    }
    if (c.perf_leader < 0) c.perf_leader = fd;
    c.perf_fds.push_back(fd);
  }
  if (c.perf_leader >= 0 && ioctl(c.perf_leader, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    why = std::string("enabling the perf events: ") + std::strerror(errno);
    close_thread(c);
    return false;
  }
  return true;
}

bool read_thread(ThreadCounters& c, uint64_t* out) {
  State& s = st();
  if (c.papi_set >= 0) {
    long long v[kMax];
    if (papi().PAPI_read(c.papi_set, v) != PAPI_OK) return false;
    for (size_t i = 0; i < s.papi_cols.size(); ++i) out[s.papi_cols[i]] = uint64_t(v[i]);
  }
  if (c.perf_leader >= 0) {
    uint64_t buf[1 + kMax];
    size_t want = (1 + s.perf_cols.size()) * 8;
    ssize_t n = ::read(c.perf_leader, buf, want);
    if (n != ssize_t(want) || buf[0] != s.perf_cols.size()) return false;
    for (size_t i = 0; i < s.perf_cols.size(); ++i) out[s.perf_cols[i]] = buf[1 + i];
  }
  return true;
}

void parse_kinds(const std::string& spec, State& s, std::vector<std::string>& problems) {
  std::string v = spec.empty() ? "coarse" : spec;
  for (bool& k : s.kinds) k = false;
  for (const std::string& item : split_list(v)) {
    if (item == "coarse" || item == "default") {
      // One PAPI_read costs about 0.5-1 us without rdpmc, far more than a clock read: only the
      // kinds marked kCoarse (format.hpp) read counters by default, not barriers, locks, tasks.
      for (uint16_t k = 0; k < format::kRegionKindCount; ++k)
        s.kinds[k] = s.kinds[k] || format::region_kind_has(format::RegionKind(k), format::kCoarse);
      continue;
    }
    if (item == "all") {
      for (bool& k : s.kinds) k = true;
      continue;
    }
    bool found = false;
    for (uint16_t k = 0; k < format::kRegionKindCount; ++k)
      if (format::region_kind_name(format::RegionKind(k)) == item) s.kinds[k] = found = true;
    if (!found)
      problems.push_back("unknown region kind '" + item + "' in SCALEA_COUNTER_REGIONS ignored");
  }
  s.kinds_text.clear();
  for (uint16_t k = 0; k < format::kRegionKindCount; ++k)
    if (s.kinds[k])
      s.kinds_text += (s.kinds_text.empty() ? "" : ",") +
                      std::string(format::region_kind_name(format::RegionKind(k)));
}

// PMUs that every kernel registers under these names and never as the CPU's (their types are
// fixed or given out from PERF_TYPE_MAX up): their type files are not read. Each read is an open,
// a read and a close of a sysfs file; on this machine, whose PMUs are all of these, the check
// went from 120 us to 15 us at every start.
bool never_the_cpu_pmu(const char* name) {
  static const char* const kNames[] = {"software", "tracepoint", "breakpoint", "kprobe",
                                       "uprobe",   "msr",        "power"};
  for (const char* n : kNames)
    if (std::strcmp(name, n) == 0) return true;
  return false;
}

// Whether the kernel has a CPU performance monitoring unit: the core PMU registers as
// PERF_TYPE_RAW (x86 "cpu" or "cpu_core", the first Arm PMU, POWER "cpu", s390 "cpum_cf").
// Without one (most virtual machines) no PAPI preset can be counted. Unknown (no sysfs): true.
bool cpu_pmu_present() {
  const char* root = "/sys/bus/event_source/devices";
  DIR* d = opendir(root);
  if (!d) return true;
  bool found = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || never_the_cpu_pmu(e->d_name)) continue;
    std::string path = std::string(root) + "/" + e->d_name + "/type";
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f) continue;
    unsigned type = 0;
    if (std::fscanf(f, "%u", &type) == 1 && type == PERF_TYPE_RAW) found = true;
    std::fclose(f);
    if (found) break;
  }
  closedir(d);
  return found;
}

void start_papi(State& s) {
  std::string why;
  g_papi = load_papi(why);
  if (!g_papi) {
    s.papi_problem = why;
    return;
  }
  int r = papi().PAPI_library_init(PAPI_VER_CURRENT);
  if (r != PAPI_VER_CURRENT) {
    s.papi_problem = r > 0 ? "PAPI_library_init: version mismatch"
                           : std::string("PAPI_library_init: ") + papi().PAPI_strerror(r);
    return;
  }
  r = papi().PAPI_thread_init(papi_thread_id);
  if (r != PAPI_OK) {
    s.papi_problem = std::string("PAPI_thread_init: ") + papi().PAPI_strerror(r);
    return;
  }
  s.papi_started = true;
  char ver[32];
  std::snprintf(ver, sizeof ver, "%d.%d.%d", PAPI_VERSION_MAJOR(PAPI_VER_CURRENT),
                PAPI_VERSION_MINOR(PAPI_VER_CURRENT), PAPI_VERSION_REVISION(PAPI_VER_CURRENT));
  s.papi_version = ver;
  int ncomp = papi().PAPI_num_components();
  for (int cid = 0; cid < ncomp; ++cid) {
    const PAPI_component_info_t* ci = papi().PAPI_get_component_info(cid);
    if (!ci) continue;
    std::string line = std::string(ci->name) + ": ";
    if (ci->disabled) line += std::string("disabled (") + ci->disabled_reason + ")";
    else
      line += "active, " + std::to_string(ci->num_native_events) + " native events, " +
              std::to_string(ci->num_cntrs) + " counters";
    s.papi_components.push_back(line);
  }
  // What PAPI offers: its first kPresetsShown available presets, and how many there are.
  constexpr int kPresetsShown = 12;
  int code = PAPI_PRESET_MASK;
  int presets = 0;
  if (papi().PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
    do {
      PAPI_event_info_t info;
      if (papi().PAPI_get_event_info(code, &info) == PAPI_OK && info.count > 0) {
        if (presets < kPresetsShown) s.offered.push_back(info.symbol);
        ++presets;
      }
    } while (papi().PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
  }
  if (presets > kPresetsShown)
    s.offered.push_back("... (" + std::to_string(presets) + " PAPI presets)");
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// ---- setup, step by step ---------------------------------------------------------------------

// The events asked for: SCALEA_COUNTERS (a list, "default" standing for the default set, or
// "none") or else the default set.
void parse_request(const Config& c, State& s) {
  if (!c.counters_set) return set_default_events(s.requested);
  s.requested_by = "SCALEA_COUNTERS";
  const std::string& v = c.counters;
  if (v == "none" || v == "off" || v == "0") return s.requested.clear();
  if (v == "default") return set_default_events(s.requested);
  for (const std::string& item : split_list(v)) {
    if (item == "default") add_default_events(s.requested);
    else s.requested.push_back(item);
  }
}

// Whether one event can be counted alone, through PAPI or else as a kernel software event; the
// event to measure, or why not.
bool validate_alone(const State& s, const std::string& name, Event& e, std::string& why) {
  // The kernel's software events are opened directly (perf_open), not through PAPI: the same
  // kernel counter, without loading and starting PAPI for it; context switches and migrations
  // also need kernel-level counting, which PAPI's default domain leaves out (they would read 0).
  uint64_t sw = 0;
  bool direct = software_event(name, sw);
  if (s.papi_started && !direct) {
    int code = 0;
    int r = papi().PAPI_event_name_to_code(const_cast<char*>(name.c_str()), &code);
    if (r == PAPI_OK) {
      int set = papi_set({code}, false, why);
      if (set >= 0) {
        long long v[1];
        int rr = papi().PAPI_read(set, v);
        papi_close(set);
        if (rr == PAPI_OK) return e = Event{name, Backend::Papi, code, 0, 0}, true;
        why = std::string("PAPI_read: ") + papi().PAPI_strerror(rr);
      }
    } else {
      why = std::string("not available in PAPI (") + papi().PAPI_strerror(r) + ")";
    }
  } else if (!direct) {
    why = s.papi_problem;
  }
  uint64_t config = 0;
  if (!software_event(name, config)) {
    if (why.empty()) why = "unknown event";
    return false;
  }
  int fd = perf_open(PERF_TYPE_SOFTWARE, config, -1, true);
  if (fd < 0 && (errno == EACCES || errno == EPERM) &&
      (config == PERF_COUNT_SW_CONTEXT_SWITCHES || config == PERF_COUNT_SW_CPU_MIGRATIONS))
    return why =
               "counted in the kernel, which perf_event_paranoid forbids here (needs root, "
               "CAP_PERFMON or perf_event_paranoid <= 1)",
           false;
  if (fd < 0) return why = std::string("perf_event_open: ") + std::strerror(errno), false;
  uint64_t buf[2];
  bool ok = ::read(fd, buf, sizeof buf) == ssize_t(sizeof buf);
  close(fd);
  if (!ok) return why = "reading the kernel's software event failed", false;
  return e = Event{name, Backend::Perf, 0, PERF_TYPE_SOFTWARE, config}, true;
}

// Each requested event alone: the ones that can be counted become s.events (at most kMax).
void validate_each(State& s) {
  for (const std::string& name : s.requested) {
    bool dup = false;
    for (const Event& e : s.events) dup = dup || e.name == name;
    if (dup) continue;
    if (s.events.size() >= kMax) {
      s.dropped.push_back({name, "more than " + std::to_string(kMax) + " events requested"});
      continue;
    }
    Event e;
    std::string why;
    if (validate_alone(s, name, e, why)) s.events.push_back(e);
    else s.dropped.push_back({name, why});
  }
}

void assign_columns(State& s) {
  s.papi_cols.clear();
  s.perf_cols.clear();
  for (uint32_t i = 0; i < s.events.size(); ++i)
    (s.events[i].backend == Backend::Papi ? s.papi_cols : s.perf_cols).push_back(i);
}

// The PAPI events together: more than the counters are multiplexed; when even that fails, only
// the first is kept and the others are dropped with the reason.
void validate_together(State& s) {
  assign_columns(s);
  if (s.papi_cols.empty()) return;
  std::vector<int> codes;
  for (uint32_t col : s.papi_cols) codes.push_back(s.events[col].papi_code);
  std::string why;
  int set = papi_set(codes, false, why);
  if (set == -2 && papi().PAPI_multiplex_init() == PAPI_OK) {
    set = papi_set(codes, true, why);
    if (set >= 0) s.multiplexed = true;
  }
  if (set >= 0) return papi_close(set);
  for (size_t i = 1; i < s.papi_cols.size(); ++i)
    s.dropped.push_back({s.events[s.papi_cols[i]].name, "cannot be counted together: " + why});
  std::vector<Event> kept;
  for (uint32_t i = 0; i < s.events.size(); ++i)
    if (s.events[i].backend != Backend::Papi || i == s.papi_cols[0]) kept.push_back(s.events[i]);
  s.events = kept;
  assign_columns(s);
}

// The cost of one read on this machine, on this thread; when this thread cannot even start the
// events, nothing is measured.
void measure_read_cost(State& s) {
  if (s.events.empty()) return;
  ThreadCounters probe;
  std::string why;
  if (!open_thread(probe, why)) {
    s.dropped.clear();
    for (const Event& e : s.events) s.dropped.push_back({e.name, why});
    s.events.clear();
    s.names.clear();
    s.papi_cols.clear();
    s.perf_cols.clear();
    detail::g_count = 0;
    return;
  }
  uint64_t v[kMax];
  read_thread(probe, v);
  constexpr int kReads = 200;
  uint64_t t0 = monotonic_ns();
  for (int i = 0; i < kReads; ++i) read_thread(probe, v);
  s.cost_per_read_ns = double(monotonic_ns() - t0) / kReads;
  close_thread(probe);
}

// One message for a user who asked for events: what was dropped and why (events dropped for the
// same reason named together), what is measured, what the machine offers.
void say_what_was_dropped(const State& s) {
  if (!s.dropped.empty() || s.events.empty()) {
    std::vector<std::pair<std::string, std::string>> groups;  // reason -> names
    for (const Dropped& d : s.dropped) {
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto& g) { return g.first == d.reason; });
      if (it == groups.end()) groups.emplace_back(d.reason, d.name);
      else it->second += ", " + d.name;
    }
    std::string drops;
    for (const auto& [reason, names] : groups)
      drops += (drops.empty() ? "" : "; ") + names + " (" + reason + ")";
    std::vector<std::string> offered = offered_now(s, 0);
    std::string offers = offered.empty() ? "nothing" : joined(offered);
    std::string papi = s.papi_started || s.papi_problem.empty() ? "" : " [" + s.papi_problem + "]";
    if (s.events.empty())
      log_job_message(
          "counters: none of the requested events can be measured: %s; this machine offers: "
          "%s%s. The run goes on with time only.",
          drops.c_str(), offers.c_str(), papi.c_str());
    else
      log_job_message("counters: dropped %s; measuring %s; this machine offers: %s%s",
                      drops.c_str(), joined(s.names).c_str(), offers.c_str(), papi.c_str());
  }
  if (s.multiplexed)
    log_job_message(
        "counters: %zu events multiplexed on fewer hardware counters (values are estimates)",
        s.events.size());
}

}  // namespace

const std::vector<std::string>& measured() { return st().names; }

bool kind_selected(uint16_t kind) { return kind < format::kRegionKindCount && st().kinds[kind]; }

void setup(const Config& c) {
  State& s = st();
  std::vector<std::string> problems;
  parse_kinds(c.counter_regions, s, problems);
  s.papi_wanted = c.papi;
  parse_request(c, s);
  bool explicit_request = c.counters_set && !s.requested.empty();
  for (const std::string& p : problems) log_job_message("%s", p.c_str());
  if (s.requested.empty()) return;

  // PAPI is loaded and started only for events that are not the kernel's software events, which
  // are opened directly (validate_alone).
  uint64_t sw = 0;
  bool papi_needed = std::any_of(s.requested.begin(), s.requested.end(),
                                 [&](const std::string& n) { return !software_event(n, sw); });
  if (papi_needed && !s.papi_wanted) {
    s.papi_problem = "PAPI not started (SCALEA_PAPI=off)";
  } else if (papi_needed && !explicit_request && !cpu_pmu_present()) {
    // The default set is PAPI presets of the CPU's counters: without a CPU PMU none exists, and
    // loading and starting PAPI would cost the process 4-5 ms to learn it.
    s.papi_problem =
        "no hardware counters: the kernel shows no CPU performance monitoring unit "
        "(a virtual machine without PMU passthrough?); PAPI not started";
  } else if (papi_needed) {
    start_papi(s);
  }
  // Whether the kernel's software events open here: needed now only for the message to a user
  // who asked for events (whose own perf events, if any, are opened below anyway). Not probed for
  // the default set on a machine without hardware counters: nobody asked, and the probe's first
  // perf event would cost the kernel 10-20 ms (probe_perf) that a short program waits for at exit.
  if (explicit_request || s.papi_started) probe_perf(explicit_request);

  validate_each(s);
  validate_together(s);
  for (const Event& e : s.events) s.names.push_back(e.name);
  detail::g_count = uint32_t(s.events.size());
  measure_read_cost(s);
  g_on = !s.events.empty();
  if (explicit_request) say_what_was_dropped(s);
}

bool read(ThreadState& t, uint64_t* out) {
  ThreadCounters* c = t.ctr;
  if (!c) {
    c = new ThreadCounters();
    c->snaps.resize(size_t(16) * count());
    c->slots = 1;
    std::string why;
    if (!open_thread(*c, why)) {
      c->broken = true;
      State& s = st();
      if (s.thread_failures.fetch_add(1) == 0) {
        std::lock_guard<std::mutex> lock(s.mu);
        s.first_failure = why;
      }
    }
    t.ctr = c;
  }
  if (c->broken) return false;
  if (!read_thread(*c, out)) {
    st().read_failures.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void on_enter(ThreadState& t, Frame& f) {
  uint32_t n = count();
  ThreadCounters* c = t.ctr;
  if (c && c->broken) return;
  uint64_t v[kMax];
  if (!read(t, v)) return;
  c = t.ctr;
  uint32_t slot;
  if (!c->free_slots.empty()) {
    slot = c->free_slots.back();
    c->free_slots.pop_back();
  } else {
    slot = c->slots++;
    if (c->snaps.size() < size_t(c->slots) * n) c->snaps.resize(size_t(c->slots) * n * 2);
  }
  std::memcpy(&c->snaps[size_t(slot) * n], v, n * sizeof(uint64_t));
  f.ctr = slot;
}

void on_leave(ThreadState& t, const Frame& f) {
  ThreadCounters* c = t.ctr;
  if (!c) return;
  uint32_t n = count();
  uint64_t v[kMax];
  if (read(t, v) && f.node) {
    const uint64_t* snap = &c->snaps[size_t(f.ctr) * n];
    for (uint32_t i = 0; i < n; ++i) f.node->counters[i] += v[i] > snap[i] ? v[i] - snap[i] : 0;
  }
  c->free_slots.push_back(f.ctr);
}

CounterReport report() {
  State& s = st();
  CounterReport r;
  r.requested = s.requested;
  r.requested_by = s.requested_by;
  for (const Event& e : s.events)
    r.measured.push_back(
        {e.name, "papi:" + e.name, e.backend == Backend::Papi ? "papi" : "perf_event"});
  for (const Dropped& d : s.dropped) r.dropped.push_back({d.name, d.reason});
  r.multiplexed = s.multiplexed;
  r.read_failures = s.read_failures.load();
  r.threads_failed = s.thread_failures.load();
  r.cost_per_read_ns = s.cost_per_read_ns;
  r.regions = s.kinds_text;
  r.offered = offered_now(s, 200);
  r.papi_started = s.papi_started;
  r.papi_version = s.papi_version;
  r.papi_problem = s.papi_problem;
  r.papi_components = s.papi_components;
  return r;
}

void report_at_end() {
  State& s = st();
  uint64_t f = s.read_failures.load(), tf = s.thread_failures.load();
  if (f)
    log_message("counters: %llu counter reads failed; the regions concerned have partial counts",
                (unsigned long long)f);
  if (tf)
    log_message("counters: %llu thread(s) could not start their counters (%s); they have none",
                (unsigned long long)tf, s.first_failure.c_str());
}

}  // namespace scalea::collect::counters
