#include "recorder.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <thread>

#include "log.hpp"
#include "sampler.hpp"
#include "signals.hpp"
#include "snapshot.hpp"
#include "writer.hpp"

extern char** environ;

namespace scalea::collect {

EventFlags g_flags;
uint64_t g_throttle_calls_function = UINT64_MAX, g_throttle_calls_user = UINT64_MAX;
uint64_t g_throttle_ns = 0;
__thread ThreadState* Recorder::tls_ __attribute__((tls_model("initial-exec"))) = nullptr;
__thread int tl_tool_io __attribute__((tls_model("initial-exec"))) = 0;

namespace {
long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

// The finishing side of tool_enter()'s handshake: every thread of the process executes a full
// barrier. Needs the registration done at start; the global command (slower, no registration)
// is the fallback if the expedited one fails.
void fence_all_threads() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!g_asymmetric_fence.load(std::memory_order_relaxed)) return;
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  membarrier(MEMBARRIER_CMD_GLOBAL);
}

std::atomic<uint64_t> g_claim_waits{0}, g_claim_wait_ns{0};
}  // namespace

// ---- entering the tool while the snapshot publisher holds a tree --------------------------------

bool tool_enter_slow(ThreadState* t) {
  // The fast path made only a compiler fence: without membarrier (state 5) that is not enough, so
  // the state is read again after a real one. This fence also orders the read of snap_claim below
  // after the read of 3: the flag was set before g_state became 3 (claims_begin, claim_thread).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  int state = g_state.load(std::memory_order_acquire);
  if (state == kStateClaims) {
    if (t->snap_claim.load(std::memory_order_acquire)) {
      uint64_t t0 = monotonic_ns();
      for (int spin = 0; t->snap_claim.load(std::memory_order_acquire); ++spin) {
        if (spin < 64) __builtin_ia32_pause();
        else sched_yield();
      }
      g_claim_waits.fetch_add(1, std::memory_order_relaxed);
      g_claim_wait_ns.fetch_add(monotonic_ns() - t0, std::memory_order_relaxed);
    }
    if (recording(g_state.load(std::memory_order_relaxed))) return true;
  } else if (recording(state)) {
    return true;
  }
  t->in_callback.store(0, std::memory_order_release);
  return false;
}

bool claims_begin() {
  int expected = recording_state();
  return g_state.compare_exchange_strong(expected, kStateClaims) || expected == kStateClaims;
}

bool claim_thread(ThreadState& t, uint64_t timeout_ns) {
  t.snap_claim.store(1, std::memory_order_relaxed);
  // Dekker with tool_enter(): either the thread's store of in_callback is seen below, or its
  // load of g_state after that store sees 3 (and then its claim).
  fence_all_threads();
  uint64_t deadline = monotonic_ns() + timeout_ns;
  for (int spin = 0; t.in_callback.load(std::memory_order_acquire); ++spin) {
    if (monotonic_ns() > deadline) {
      t.snap_claim.store(0, std::memory_order_release);
      return false;
    }
    if (spin < 64) __builtin_ia32_pause();
    else sched_yield();
  }
  return true;
}

void release_thread(ThreadState& t) { t.snap_claim.store(0, std::memory_order_release); }

void claims_end() {
  int expected = kStateClaims;
  g_state.compare_exchange_strong(expected, recording_state());
}

ClaimWaits claim_waits() {
  return ClaimWaits{g_claim_waits.load(std::memory_order_relaxed),
                    g_claim_wait_ns.load(std::memory_order_relaxed)};
}

// ---- PtrMap -------------------------------------------------------------------------------------

PtrMap::PtrMap() : slots_(new Slot[64]()), cap_(64) {}
PtrMap::~PtrMap() { delete[] slots_; }

void PtrMap::insert(uint64_t key, void* value) {
  if ((size_ + 1) * 2 > cap_) grow();
  size_t mask = cap_ - 1;
  size_t i = hash(key) & mask;
  while (slots_[i].value && slots_[i].key != key) i = (i + 1) & mask;
  if (!slots_[i].value) ++size_;
  slots_[i] = Slot{key, value};
}

void PtrMap::grow() {
  Slot* old = slots_;
  size_t old_cap = cap_;
  cap_ *= 2;
  slots_ = new Slot[cap_]();
  size_ = 0;
  for (size_t i = 0; i < old_cap; ++i)
    if (old[i].value) insert(old[i].key, old[i].value);
  delete[] old;
}

// ---- per-thread tree ----------------------------------------------------------------------------

Node* ThreadState::new_chunk() { return static_cast<Node*>(::operator new(sizeof(Node) * kChunk)); }

Node* ThreadState::new_node(Node* parent, uint32_t region) {
  if (node_count % kChunk == 0) chunks.push_back(new_chunk());
  Node* n = new (node_at(node_count)) Node();
  n->parent = parent;
  n->region = region;
  n->index = node_count++;
  n->owner = index;
  return n;
}

Node* child_of_slow(ThreadState& t, Node* parent, uint32_t region) {
  Node* c = t.new_node(parent, region);
  if (counters::g_on) c->counted = Recorder::get().region_reads_counters(region);
  t.children.insert(uint64_t(parent->index) << 32 | region, c);
  return c;
}

void close_counters(ThreadState& t, const Frame& f) { counters::on_leave(t, f); }

void leave_at(ThreadState& t, size_t i, Ticks when) {
  if (i + 1 == t.stack.size()) return leave_top(t, when);
  if (t.stack[i].wait_begin) wait_end(t, t.stack[i], when);
  Frame f = t.stack[i];
  t.stack.erase(t.stack.begin() + long(i));
  // The tasks whose frames moved down keep their positions (task_frame).
  for (size_t j = i; j < t.stack.size(); ++j)
    if (t.stack[j].type == FrameType::ExplicitTask)
      if (auto* r = static_cast<TaskRecord*>(t.stack[j].rec);
          r && r->frame_thread == t.index && r->frame_at == j + 1)
        r->frame_at = uint32_t(j);
  close_visit(t, f, when, f.type);
  if (is_team_frame(f.type)) team_frame_changed(t);
}

void leave_below_top(ThreadState& t, FrameType type, Ticks when, uint64_t key) {
  long i = find_frame(t, type, key);
  if (i < 0) {
    ++t.anomalies.unmatched_end;
    return;
  }
  leave_at(t, size_t(i), when);
}

void team_frame_changed(ThreadState& t) {
  t.worker_team = nullptr;
  for (size_t i = t.stack.size(); i > 0; --i) {
    const Frame& f = t.stack[i - 1];
    if (!is_team_frame(f.type)) continue;
    if (f.type == FrameType::ImplicitTask) t.worker_team = static_cast<ParallelRecord*>(f.rec);
    return;
  }
}

void throttle_check(ThreadState& t, Node* n) {
  n->throttle_base = n->s.visits;
  if (!n->s.visits) return;
  // Ticks to ns with the ratio measured since start (the run has lasted at least `calls` visits).
  double ns_per_tick = 1.0;
  if (g_clock.use_tsc) {
    const ClockCalibration& c = Recorder::get().clock();
    Ticks ticks = now();
    uint64_t ns = monotonic_ns();
    if (ticks > c.ticks0 && ns > c.ns0) ns_per_tick = double(ns - c.ns0) / double(ticks - c.ticks0);
  }
  double mean_ns = double(n->s.time) / double(n->s.visits) * ns_per_tick;
  if (mean_ns >= double(g_throttle_ns)) return;
  n->throttled = true;
  t.throttled.push_back(ThrottleEvent{n, now(), n->s.visits, mean_ns});
}

void unwind_to(ThreadState& t, size_t i, Ticks when) {
  while (t.stack.size() > i + 1) {
    ++t.anomalies.unclosed;
    leave_at(t, t.stack.size() - 1, when);
  }
  leave_at(t, i, when);
}

namespace {
// mirror_of() of a node met for the first time.
Node* rebuild_mirror(ThreadState& t, Node* foreign) {
  if (foreign->owner == t.index) return foreign;
  // Up the foreign path to the nearest node this thread knows (the root, or a node mirrored
  // before), then down it in this thread's tree, remembering each node on the way: every foreign
  // node is walked once per thread. Rebuilding each path from the root made a recursion of tasks
  // stolen at ever deeper levels (BOTS concom) quadratic in its depth. Foreign nodes never change
  // parent or region once created, and were published to this thread through the runtime's own
  // synchronization.
  std::vector<Node*>& path = t.mirror_path;  // grows to the longest walk seen, then is reused
  path.clear();
  Node* local = t.root;
  for (Node* n = foreign; n->parent; n = n->parent) {
    if (auto* known = static_cast<Node*>(t.mirror.find(reinterpret_cast<uintptr_t>(n)))) {
      local = known;
      break;
    }
    path.push_back(n);
  }
  for (size_t i = path.size(); i > 0; --i) {
    local = child_of(t, local, path[i - 1]->region);
    t.mirror.insert(reinterpret_cast<uintptr_t>(path[i - 1]), local);
  }
  return local;
}
}  // namespace

Node* mirror_of_slow(ThreadState& t, Node* foreign) {
  if (!foreign) return nullptr;
  // The local map first: `foreign` is usually the master's node of the region being forked, a
  // cache line the master has just written; reading its owner on every fork would pull that
  // line across the cores each time.
  Node* local = static_cast<Node*>(t.mirror.find(reinterpret_cast<uintptr_t>(foreign)));
  if (!local) local = rebuild_mirror(t, foreign);
  t.last_mirror.foreign = foreign;
  t.last_mirror.local = local;
  return local;
}

ParallelRecord* alloc_parallel(ThreadState& t) { return t.parallel_pool.take(); }

void release_parallel(ThreadState& t, ParallelRecord* r) {
  if (r->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  RecordPool<ParallelRecord>::give_back(r, r->pool == &t.parallel_pool);
}

// ---- recorder -----------------------------------------------------------------------------------

std::atomic<Recorder*> Recorder::instance_{nullptr};

Recorder& Recorder::create() {
  // Never destroyed: threads may still report events while the process exits.
  static Recorder* r = new Recorder();
  instance_.store(r, std::memory_order_release);
  return *r;
}

namespace {

std::string program_name() {
  std::string exe = executable_path();
  if (exe.empty()) return "program";
  return exe.substr(exe.rfind('/') + 1);  // npos + 1 = 0: the whole name
}

std::string iso_now() {
  time_t t = time(nullptr);
  struct tm tm;
  localtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return buf;
}

// Whether a function passes the include/exclude globs. Names come from the dynamic symbol table
// (dladdr): functions of an executable need -rdynamic to be selected by name.
bool function_selected(const Config& c, const void* fn) {
  if (c.functions_include.empty() && c.functions_exclude.empty()) return true;
  Dl_info info;
  const char* name = dladdr(fn, &info) && info.dli_sname ? info.dli_sname : "";
  auto matches = [&](const std::vector<std::string>& globs) {
    for (const std::string& g : globs)
      if (fnmatch(g.c_str(), name, 0) == 0) return true;
    return false;
  };
  if (!c.functions_include.empty() && !matches(c.functions_include)) return false;
  return !matches(c.functions_exclude);
}

uint64_t process_age_ns() {
  // open/read rather than stdio: fopen's buffer would come from the program's heap.
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces
  if (!p) return 0;
  // Field 22 (starttime); p points at the end of field 2.
  for (int field = 2; field < 22 && *p; ++p)
    if (*p == ' ') ++field;
  char* end = nullptr;
  unsigned long long start_ticks = std::strtoull(p, &end, 10);
  if (end == p) return 0;
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  double now_s = double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  double start_s = double(start_ticks) / double(sysconf(_SC_CLK_TCK));
  return now_s > start_s ? uint64_t((now_s - start_s) * 1e9) : 0;
}

// `scalea run` preloads the tool libraries (config.run_preload), after what LD_PRELOAD held, so
// that the tool starts with the program. They are taken out of LD_PRELOAD again here: the program
// sees the LD_PRELOAD it was given, and the processes it starts (a shell, a helper) do not load the
// tool at their start and write experiments of their own (OMP_TOOL_LIBRARIES still measures the
// OpenMP ones, as without the preload). True when this process was preloaded that way.
bool take_back_preload(const std::string& ours) {
  const char* preload = getenv("LD_PRELOAD");
  if (ours.empty() || !preload) return false;
  // Ours is one run of entries, after whatever LD_PRELOAD held before (the loader separates
  // entries by ':' or spaces).
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
      if (c == ':' || c == ' ') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  };
  std::vector<std::string> all = split(preload), mine = split(ours);
  if (mine.empty() || all.size() < mine.size()) return false;
  for (size_t at = 0; at + mine.size() <= all.size(); ++at) {
    if (!std::equal(mine.begin(), mine.end(), all.begin() + std::ptrdiff_t(at))) continue;
    std::string rest;
    for (size_t i = 0; i < all.size(); ++i)
      if (i < at || i >= at + mine.size()) rest += (rest.empty() ? "" : ":") + all[i];
    if (!rest.empty()) setenv("LD_PRELOAD", rest.c_str(), 1);
    else unsetenv("LD_PRELOAD");
    return true;
  }
  return false;
}

void finish_at_exit() { Recorder::get().finish("exit"); }

// The kernel counts a process's age in 10 ms ticks: a process younger than three ticks when the
// tool starts is taken as starting with it.
constexpr uint64_t kLateStartNs = 30000000;

// How long finish() waits for a callback still under way on another thread before it reads that
// thread's tree anyway: kCallbackPolls polls kCallbackPollUs apart (50 ms). A callback takes
// microseconds; a thread stopped inside one (a debugger, a signal) must not hang the exit.
constexpr int kCallbackPolls = 1000;
constexpr int kCallbackPollUs = 50;

// The experiment's directory: SCALEA_OUTPUT (`given`), else the default name in the working
// directory. Where that cannot be made, the program must still run as it would without the tool
// (plain OMP_TOOL_LIBRARIES; `scalea run` refuses such a -o before it starts the program): the
// experiment goes to the first place that can hold it, the default name in the working
// directory, then in $TMPDIR (or /tmp), said once. "" when none can (measurement off, said).
std::string choose_output(const std::string& given) {
  char stamp[32];
  time_t t = time(nullptr);
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::string name = "scalea-" + program_name() + "-" + stamp + "-" + std::to_string(getpid());
  std::string dir = given.empty() ? name : given, why, ignored;
  if (output_parent_writable(dir, why)) return dir;
  const char* tmp = getenv("TMPDIR");
  std::string tmp_dir = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/" + name;
  for (const std::string& fallback : {name, tmp_dir}) {
    if (fallback == dir || !output_parent_writable(fallback, ignored)) continue;
    log_job_message("cannot write the experiment to %s (%s); writing it to %s instead", dir.c_str(),
                    why.c_str(), fallback.c_str());
    return fallback;
  }
  log_message(
      "cannot write the experiment to %s (%s); measurement is off, the program runs unchanged",
      dir.c_str(), why.c_str());
  return "";
}

// A forked child must not write the parent's experiment again: it stops recording.
void disable_in_child() { g_state.store(2); }

}  // namespace

bool Recorder::start(const char* origin) {
  const bool at_load = std::strcmp(origin, "load") == 0;
  std::call_once(started_, [&] {
    config_ = read_config(environ);
    // Preloaded by `scalea run` without the MPI layer, the tool starts before the program's own
    // start-up: its signal handlers wait until the OpenMP runtime starts it (below), as when the
    // runtime loads it. A program that chooses its handlers by the dispositions it inherited
    // (CPython installs its ^C handler only over SIG_DFL) then sees what it would see without
    // the tool. With the MPI layer (preloaded or linked) and when the program links the tool,
    // they are installed at load.
    bool preloaded = at_load && take_back_preload(config_.run_preload);
    bool signals_now =
        !preloaded || config_.run_preload.find("libscalea-mpi.so") != std::string::npos;
    if (!config_.enabled) {
      g_state.store(2);
      return;
    }
    for (const std::string& p : config_.problems) log_job_message("%s", p.c_str());
    check_function_hooks(config_);
    // Events may skip their fence once the process is registered for expedited membarriers.
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
      g_asymmetric_fence.store(true, std::memory_order_relaxed);
    counters::setup(config_);
    if (std::optional<int> r = launcher_rank()) rank = *r;

    std::string dir = choose_output(config_.output);
    if (dir.empty()) {
      g_state.store(2);
      return;
    }
    output_dir_ = dir;
    clock_init(clock_, config_.clock.empty() ? nullptr : config_.clock.c_str());
    start_time_iso = iso_now();
    cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
    read_affinity(0, process_cpus);
    command = command_line();
    regions_.push_back(RegionInfo{RegionKind::Program, 0, 0, program_name(), "", "main", 0});
    region_keys_.emplace("program", 0);
    g_measure_on.store(config_.start_on);
    if (config_.throttle_calls) {
      if (config_.throttle_functions) g_throttle_calls_function = config_.throttle_calls;
      if (config_.throttle_user) g_throttle_calls_user = config_.throttle_calls;
      g_throttle_ns = config_.throttle_ns;
    }
    std::atexit(finish_at_exit);
    pthread_atfork(nullptr, nullptr, disable_in_child);
    if (signals_now) install_signal_handlers();
    // Preloaded by `scalea run`, the tool starts with the program: the process's age is the
    // dynamic loader's work (an MPI rank's many libraries take tens of ms), no program code ran
    // yet. Loaded later by the OpenMP runtime (at the first construct; its constructor runs then
    // too, so at_load does not tell), it adds the time the process ran before.
    uint64_t age = preloaded ? 0 : process_age_ns();
    if (age >= kLateStartNs) {
      pre_start_ns = age;
      start_estimated = true;
    }
    start_ok_ = true;
    sampler::setup(config_);  // before the first thread registers (it gets a timer)
    g_state.store(recording_state());
    thread();                // the thread that starts the tool is the initial one
    snapshot::start(*this);  // SCALEA_SNAPSHOT: the publisher thread
  });
  bool on = start_ok_ && recording(g_state.load());
  if (on && !at_load) install_signal_handlers();  // once; see above
  return on;
}

ThreadState* event_thread_first() { return active() ? Recorder::get().thread() : nullptr; }

ThreadState* Recorder::register_thread() {
  auto* t = new ThreadState();
  t->os_tid = uint64_t(syscall(SYS_gettid));
  t->stack.reserve(64);
  t->region_cache.assign(256, RegionCacheEntry{0, UINT32_MAX, 0, nullptr});
  read_affinity(0, t->cpus);
  t->sched_begin = read_schedstat(0);
  {
    // The thread is complete before finish() can see it; once finish() has closed the list
    // (it then reads the trees without the lock), a late thread is not added: it records nothing
    // anyway, recording being over.
    std::lock_guard<std::mutex> lock(mu_);
    t->index = uint32_t(threads_.size());
    t->root = t->new_node(nullptr, 0);
    t->born = now();
    if (t->index == 0) t->flags |= format::kThreadInitial;
    if (!threads_closed_) threads_.push_back(t);
  }
  tls_ = t;
  sampler::thread_start(*t);
  return t;
}

namespace {
inline size_t cache_hash(uintptr_t a, uint32_t ks) {
  uint64_t k = uint64_t(a) ^ (uint64_t(ks) << 40);
  k ^= k >> 29;
  k *= 0xbf58476d1ce4e5b9ULL;
  k ^= k >> 32;
  return size_t(k);
}
}  // namespace

uint32_t Recorder::region(ThreadState& t, RegionKind kind, uint16_t subkind, const void* code) {
  uint32_t ks = uint32_t(kind) << 16 | subkind;
  uintptr_t a = reinterpret_cast<uintptr_t>(code);
  size_t mask = t.region_cache.size() - 1;
  for (size_t i = cache_hash(a, ks) & mask;; i = (i + 1) & mask) {
    const RegionCacheEntry& e = t.region_cache[i];
    if (e.kind_sub == UINT32_MAX) break;
    if (e.addr == a && e.kind_sub == ks && !e.name) return e.id;
  }
  return region_slow(t, kind, subkind, a, nullptr, nullptr, 0, nullptr);
}

uint32_t Recorder::named_region(ThreadState& t, RegionKind kind, const char* name, const char* file,
                                int line, const char* function, uint16_t subkind) {
  uint32_t ks = uint32_t(kind) << 16;
  uintptr_t a = reinterpret_cast<uintptr_t>(name);
  size_t mask = t.region_cache.size() - 1;
  for (size_t i = cache_hash(a, ks) & mask;; i = (i + 1) & mask) {
    const RegionCacheEntry& e = t.region_cache[i];
    if (e.kind_sub == UINT32_MAX) break;
    if (e.addr == a && e.kind_sub == ks && e.name && std::strcmp(e.name, name) == 0) return e.id;
  }
  return region_slow(t, kind, subkind, a, name, file, line, function);
}

bool Recorder::region_reads_counters(uint32_t region) {
  std::lock_guard<std::mutex> lock(mu_);
  return region < regions_.size() && counters::kind_selected(uint16_t(regions_[region].kind));
}

uint32_t Recorder::intern_region(std::string key, RegionInfo info) {
  auto it = region_keys_.find(key);
  if (it != region_keys_.end()) return it->second;
  uint32_t id = uint32_t(regions_.size());
  regions_.push_back(std::move(info));
  region_keys_.emplace(std::move(key), id);
  return id;
}

uint32_t Recorder::site_region(RegionKind kind, uint16_t subkind, const char* name,
                               const void* code) {
  uintptr_t addr = reinterpret_cast<uintptr_t>(code);
  std::lock_guard<std::mutex> lock(mu_);
  return intern_region(std::to_string(int(kind)) + ":" + std::to_string(subkind) + "@" +
                           std::to_string(addr) + "\x1f" + name,
                       RegionInfo{kind, subkind, addr, name, "", "", 0});
}

uint32_t Recorder::region_slow(ThreadState& t, RegionKind kind, uint16_t subkind, uintptr_t addr,
                               const char* name, const char* file, int line, const char* function) {
  uint32_t id = kFilteredRegion;
  const char* stable_name = nullptr;
  if (kind == RegionKind::Function && !function_selected(config_, reinterpret_cast<void*>(addr))) {
    // Cached below like any region, so the filter runs once per function and thread.
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    // Named regions are identified by kind and name; code regions by kind, subkind and address.
    std::string key = name ? std::to_string(int(kind)) + "\x1f" + name
                           : std::to_string(int(kind)) + ":" + std::to_string(subkind) + "@" +
                                 std::to_string(addr);
    id = intern_region(std::move(key), RegionInfo{kind, subkind, name ? 0 : addr, name ? name : "",
                                                  file ? file : "", function ? function : "",
                                                  line > 0 ? uint32_t(line) : 0});
    if (name) {
      stable_names_.emplace_back(name);
      stable_name = stable_names_.back().c_str();
    }
  }
  // Cache it in this thread; the cache is at most half full.
  if ((t.region_cache_used + 1) * 2 > t.region_cache.size()) {
    std::vector<RegionCacheEntry> old;
    old.swap(t.region_cache);
    t.region_cache.assign(old.size() * 2, RegionCacheEntry{0, UINT32_MAX, 0, nullptr});
    size_t mask = t.region_cache.size() - 1;
    for (const RegionCacheEntry& e : old) {
      if (e.kind_sub == UINT32_MAX) continue;
      size_t i = cache_hash(e.addr, e.kind_sub) & mask;
      while (t.region_cache[i].kind_sub != UINT32_MAX) i = (i + 1) & mask;
      t.region_cache[i] = e;
    }
  }
  uint32_t ks = uint32_t(kind) << 16 | (name ? 0 : subkind);
  size_t mask = t.region_cache.size() - 1;
  size_t i = cache_hash(addr, ks) & mask;
  // A reused name buffer with new text: replace the stale entry instead of adding a duplicate.
  while (t.region_cache[i].kind_sub != UINT32_MAX &&
         !(t.region_cache[i].addr == addr && t.region_cache[i].kind_sub == ks))
    i = (i + 1) & mask;
  if (t.region_cache[i].kind_sub == UINT32_MAX) ++t.region_cache_used;
  t.region_cache[i] = RegionCacheEntry{addr, ks, id, stable_name};
  return id;
}

namespace {
// Closes what a thread still has open when the run ends. A worker still inside a parallel region
// the master already left is idle in the runtime (its join barrier and implicit task end are only
// reported at the next fork): those frames end at the release, and are not anomalies.
void close_at_exit(ThreadState& t, Ticks end) {
  while (!t.stack.empty()) {
    Ticks when = end;
    bool released = false;
    for (long i = long(t.stack.size()) - 1; i >= 0; --i) {
      const Frame& f = t.stack[size_t(i)];
      if (f.type != FrameType::ImplicitTask) continue;
      Ticks rel = static_cast<ParallelRecord*>(f.rec)->release.load(std::memory_order_acquire);
      if (rel && rel < end) when = rel, released = true;
      break;
    }
    if (!released) {
      ++t.anomalies.unclosed;
      const Frame& f = t.stack.back();
      if (f.node && f.type != FrameType::Throttled)
        t.open_at_end.push_back({f.node, end > f.enter ? end - f.enter : 0});
    }
    leave_at(t, t.stack.size() - 1, when);
  }
}
}  // namespace

void close_thread(ThreadState& t, Ticks end) {
  close_at_exit(t, end);
  t.root->s.visits = 1;
  t.root->s.time = end > t.born ? end - t.born : 0;
  t.root->s.time_min = t.root->s.time_max = t.root->s.time;
  // Every explicit task this thread ran, ran while its root was open.
  t.root->s.task_exec = t.task_exec_total;
}

size_t Recorder::throttled_count() const {
  size_t n = 0;
  for (ThreadState* t : threads_) n += t->throttled.size();
  return n;
}

void Recorder::say_throttled(size_t count, const std::string& where) const {
  if (!count || config_.quiet) return;
  log_message(
      "throttled %zu call path(s) of tiny hot regions%s (%llu visits, mean below %llu ns): "
      "later visits not recorded, see meta.json \"throttle\"; SCALEA_THROTTLE=off "
      "records every visit",
      count, where.c_str(), (unsigned long long)config_.throttle_calls,
      (unsigned long long)config_.throttle_ns);
}

void Recorder::finish(const char* why) {
  if (finished_.exchange(true)) return;
  if (!recording(g_state.exchange(2))) return;
  sampler::stop();  // no timer fires from here on; a handler under way is waited for below
  // The snapshot publisher first: it may hold a thread (state 3 until now), which then waits in
  // tool_enter_slow until it is released.
  snapshot::stop();
  fence_all_threads();
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads_closed_ = true;  // threads_ no longer changes: read below without the lock
  }
  // Let callbacks already under way on other threads end before their trees are read.
  for (ThreadState* t : threads_) {
    for (int poll = 0; poll < kCallbackPolls && t->in_callback.load(std::memory_order_acquire);
         ++poll)
      std::this_thread::sleep_for(std::chrono::microseconds(kCallbackPollUs));
  }
  // Threads may have been bound since they registered; the ones still alive are read again.
  for (ThreadState* t : threads_)
    if (own_thread_alive(t->os_tid)) {
      read_affinity(pid_t(t->os_tid), t->cpus);
      t->sched_end = read_schedstat(t->os_tid);
    }
  clock_finish(clock_);
  end_time_iso = iso_now();
  Ticks end = now();
  for (ThreadState* t : threads_) {
    close_thread(*t, end);
    sampler::to_nodes(*t, clock_.ns_per_tick());
  }
  counters::report_at_end();
  // The last snapshot: the trees as the experiment holds them (SCALEA_SNAPSHOT).
  snapshot::write_final(*this, why);
  // An event source that writes the experiment itself (the MPI layer, collect/mpi) takes over,
  // and says what was throttled: over all ranks, from rank 0.
  if (!finish_hook_ || !finish_hook_(*this, why)) write_and_say(why);
  release_signal_watcher();
}

void Recorder::write_and_say(const char* why) {
  say_throttled(throttled_count());
  std::string written, error;
  WriteSummary summary;
  if (write_experiment(*this, output_dir_, why, written, summary, error)) {
    if (!config_.quiet)
      log_message("wrote experiment %s (%u thread%s, %zu regions, %llu call-path nodes)",
                  written.c_str(), summary.threads, summary.threads == 1 ? "" : "s",
                  summary.regions, (unsigned long long)summary.nodes);
  } else {
    log_message("could not write the experiment: %s", error.c_str());
  }
}

}  // namespace scalea::collect
