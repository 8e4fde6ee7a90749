#include "sampler.hpp"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "config.hpp"
#include "log.hpp"
#include "recorder.hpp"

extern "C" int __sigaction(int, const struct sigaction*, struct sigaction*);  // glibc's own

namespace scalea::collect::sampler {
namespace {

constexpr uint32_t kCostBuckets = 4 * 40;  // durations up to 2^40 ticks

// One frame of a sampled call path: its code address, the entry it was called from (or the
// region node the path hangs below) and how many periods ended with the path at this frame.
struct Entry {
  uint64_t ip;
  uint64_t parent;  // entry index + 1 << 1, or a Node* with the low bit set (the path's top)
  uint64_t self;    // periods whose leaf was this entry
  uint32_t leaf;    // 1: the interrupted instruction (the path's leaf), 0: a return address
};

// A thread's call paths: entries in creation order (a parent before its children) and an
// open-addressing index over (parent, ip, leaf). Both are mapped by the sampler itself and grown
// in the handler (mremap and mmap are system calls, safe there; malloc is not).
struct Table {
  Entry* entries = nullptr;
  uint32_t used = 0, cap = 0;
  uint32_t* slots = nullptr;  // entry index + 1, 0 = empty
  uint32_t slot_cap = 0;
  // The thread's source of samples: a software perf event counting its CPU time (task-clock),
  // whose overflow signals it (fd >= 0), else a POSIX timer on its CPU clock.
  int fd = -1;
  timer_t timer{};
  itimerspec period{};
  // Either source is running. Atomic: a thread's exit (the key's destructor) and the end of the
  // run (stop) may both stop it; only one of them closes it.
  std::atomic<bool> has_timer{false};
  uint64_t dropped = 0, in_tool = 0, truncated = 0;
  // The thread's CPU clock, and its time when the timer started and when sampling ended (or the
  // thread did): the samples stand for that CPU time.
  clockid_t clock{};
  uint64_t cpu_start_ns = 0, cpu_end_ns = 0;
  // The handler's own time per sample, in clock ticks: a histogram of 4 buckets per power of two
  // (bucket_of), for meta.json's median and 99th percentile.
  uint32_t cost[kCostBuckets] = {};
};

// Bucket of a duration: 4 per power of two (a bucket spans at most 19% of its lower bound).
uint32_t bucket_of(uint64_t ticks) {
  if (ticks < 4) return uint32_t(ticks);
  const int high = 63 - __builtin_clzll(ticks);
  const uint32_t b = uint32_t(high) * 4 + uint32_t((ticks >> (high - 2)) & 3);
  return b < kCostBuckets ? b : kCostBuckets - 1;
}
// The lower bound of a bucket, in ticks.
double bucket_floor(uint32_t b) {
  if (b < 4) return b;
  const uint32_t high = b / 4;
  return double((uint64_t(4) | (b & 3)) << (high - 2));
}

uint64_t cpu_ns(clockid_t clock) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

constexpr int kMaxDepth = 256;
constexpr uint32_t kInitialEntries = 1024;
constexpr uint32_t kMaxEntries = 1u << 22;  // 4 M entries (128 MiB): then samples are dropped
constexpr int kSignalOffset = 6;            // SIGRTMIN + 6 (docs/sampling.md)

// libunwind, opened when sampling starts (RTLD_LOCAL): linked, its _Unwind_* functions would come
// before the C++ runtime's in a preloaded program's symbol lookup and unwind its exceptions.
struct Unwinder {
  decltype(&_ULx86_64_init_local2) init_local2 = nullptr;
  decltype(&_ULx86_64_step) step = nullptr;
  decltype(&_ULx86_64_get_reg) get_reg = nullptr;
  decltype(&_ULx86_64_set_caching_policy) set_caching_policy = nullptr;
  unw_addr_space_t* local_space = nullptr;
};
Unwinder g_unw;
constexpr const char* kUnwindLibrary = "libunwind.so.8";

// Opens libunwind; "" when ready, else why not.
std::string open_unwinder() {
  void* h = dlopen(kUnwindLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!h) return std::string("cannot open ") + kUnwindLibrary + " (Debian: libunwind8)";
  auto sym = [&](const char* name) { return dlsym(h, name); };
  g_unw.init_local2 = reinterpret_cast<decltype(g_unw.init_local2)>(sym("_ULx86_64_init_local2"));
  g_unw.step = reinterpret_cast<decltype(g_unw.step)>(sym("_ULx86_64_step"));
  g_unw.get_reg = reinterpret_cast<decltype(g_unw.get_reg)>(sym("_ULx86_64_get_reg"));
  g_unw.set_caching_policy =
      reinterpret_cast<decltype(g_unw.set_caching_policy)>(sym("_ULx86_64_set_caching_policy"));
  g_unw.local_space = static_cast<unw_addr_space_t*>(sym("_ULx86_64_local_addr_space"));
  if (!g_unw.init_local2 || !g_unw.step || !g_unw.get_reg || !g_unw.set_caching_policy ||
      !g_unw.local_space)
    return std::string(kUnwindLibrary) + " lacks unw_init_local2 (libunwind 1.3 or later needed)";
  return "";
}

std::atomic<bool> g_on{false};
bool g_under_tsan = false;  // the process runs under ThreadSanitizer (sampling is off)
// The threads' sources: perf events while g_perf (asked for, and no thread has been refused one
// before any had one), else POSIX timers; g_perf_works once a thread has had one.
std::atomic<bool> g_perf{false}, g_perf_works{false};
int g_signal = 0;
uint64_t g_period_ns = 0;
// Why sampling is off: a plain array, as everything here that setup() may touch before this file's
// dynamic initializers have run (the tool starts from another file's constructor).
char g_off_reason[256] = "";
void set_off_reason(const std::string& why) {
  std::snprintf(g_off_reason, sizeof g_off_reason, "%s", why.c_str());
}
pthread_key_t g_key;
std::mutex g_mu;  // the list of tables (threads registering, finish)
std::vector<Table*>* g_tables = nullptr;
std::atomic<uint64_t> g_timer_failures{0};

void* map_bytes(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}
uint64_t key_hash(uint64_t parent, uint64_t ip, uint32_t leaf) {
  return mix(parent * 0x9e3779b97f4a7c15ULL ^ ip ^ (uint64_t(leaf) << 63));
}

// Index rebuilt at twice the size; false when the kernel refuses memory.
bool grow_slots(Table& tb) {
  uint32_t cap = tb.slot_cap ? tb.slot_cap * 2 : kInitialEntries * 2;
  auto* slots = static_cast<uint32_t*>(map_bytes(size_t(cap) * sizeof(uint32_t)));
  if (!slots) return false;
  for (uint32_t i = 0; i < tb.used; ++i) {
    const Entry& e = tb.entries[i];
    uint32_t s = uint32_t(key_hash(e.parent, e.ip, e.leaf)) & (cap - 1);
    while (slots[s]) s = (s + 1) & (cap - 1);
    slots[s] = i + 1;
  }
  if (tb.slots) munmap(tb.slots, size_t(tb.slot_cap) * sizeof(uint32_t));
  tb.slots = slots;
  tb.slot_cap = cap;
  return true;
}

bool grow_entries(Table& tb) {
  uint32_t cap = tb.cap ? tb.cap * 2 : kInitialEntries;
  if (cap > kMaxEntries) return false;
  void* p = tb.entries ? mremap(tb.entries, size_t(tb.cap) * sizeof(Entry),
                                size_t(cap) * sizeof(Entry), MREMAP_MAYMOVE)
                       : map_bytes(size_t(cap) * sizeof(Entry));
  if (p == MAP_FAILED || !p) return false;
  tb.entries = static_cast<Entry*>(p);
  tb.cap = cap;
  return true;
}

// The entry for (parent, ip, leaf), added when new; UINT32_MAX when the table cannot grow.
uint32_t find_or_add(Table& tb, uint64_t parent, uint64_t ip, uint32_t leaf) {
  if ((tb.used + 1) * 2 > tb.slot_cap && !grow_slots(tb)) return UINT32_MAX;
  uint32_t mask = tb.slot_cap - 1;
  for (uint32_t s = uint32_t(key_hash(parent, ip, leaf)) & mask;; s = (s + 1) & mask) {
    uint32_t i = tb.slots[s];
    if (!i) {
      if (tb.used == tb.cap && !grow_entries(tb)) return UINT32_MAX;
      tb.entries[tb.used] = Entry{ip, parent, 0, leaf};
      tb.slots[s] = ++tb.used;
      return tb.used - 1;
    }
    const Entry& e = tb.entries[i - 1];
    if (e.parent == parent && e.ip == ip && e.leaf == leaf) return i - 1;
  }
}

// Folds recursion in a sampled path (ips[0] the interrupted instruction, then the return
// addresses up to the outermost frame): from the outermost frame inwards, a return address met
// again goes back to its first occurrence, and the frames between (the recursion's deeper levels)
// are left out; the interrupted instruction is kept as it is. A recursion through two call sites
// (BOTS fib's tasks) otherwise makes a new path of nearly every sample: its table grew with the
// run (fib: 35 KB per sample) instead of with the code's distinct call sites. Returns the new
// depth; ips[0..depth) is the folded path, in the same order. O(depth), with a table on the stack.
int fold_recursion(uint64_t* ips, int depth) {
  if (depth <= 2) return depth;
  constexpr int kSlots = 2 * kMaxDepth;  // a power of two, at most half full
  int16_t slot[kSlots];
  std::memset(slot, -1, sizeof slot);
  uint64_t kept[kMaxDepth];
  int n = 0;
  for (int i = depth - 1; i >= 1; --i) {
    const uint64_t ip = ips[i];
    uint32_t h = uint32_t((ip * 0x9e3779b97f4a7c15ull) >> 55) & (kSlots - 1);
    int found = -1;
    for (; slot[h] >= 0; h = (h + 1) & (kSlots - 1)) {
      // A slot may name a position already cut off: only a live one counts.
      if (slot[h] < n && kept[slot[h]] == ip) {
        found = slot[h];
        break;
      }
    }
    if (found >= 0) {
      n = found + 1;  // back to the first occurrence
      continue;
    }
    slot[h] = int16_t(n);
    kept[n++] = ip;
  }
  // Written back leaf first: kept[n - 1] is the innermost return address.
  for (int k = 0; k < n; ++k) ips[n - k] = kept[k];
  return n + 1;
}

// Counts `weight` periods for the interrupted call path (`uc`) below `node`.
void record(Table& tb, Node* node, void* uc, uint64_t weight) {
  unw_cursor_t cursor;
  if (g_unw.init_local2(&cursor, static_cast<unw_context_t*>(uc), UNW_INIT_SIGNAL_FRAME) < 0) {
    tb.dropped += weight;
    return;
  }
  uint64_t ips[kMaxDepth];
  int depth = 0;
  do {
    unw_word_t ip = 0;
    if (g_unw.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    ips[depth++] = ip;
  } while (depth < kMaxDepth && g_unw.step(&cursor) > 0);
  if (depth == kMaxDepth) ++tb.truncated;
  if (depth == 0) {
    tb.dropped += weight;
    return;
  }
  depth = fold_recursion(ips, depth);
  // From the outermost frame down to the leaf, each frame below the previous one.
  uint64_t parent = reinterpret_cast<uintptr_t>(node) | 1;
  uint32_t at = UINT32_MAX;
  for (int i = depth - 1; i >= 0; --i) {
    at = find_or_add(tb, parent, ips[i], i == 0 ? 1 : 0);
    if (at == UINT32_MAX) {
      tb.dropped += weight;
      return;
    }
    parent = uint64_t(at + 1) << 1;
  }
  tb.entries[at].self += weight;
}

// ---- The program's own handler of the sampler's signal ----
// A program may install a handler for SIGRTMIN+6 after the tool started (it uses real-time signals
// of its own). The tool library's sigaction and signal (signal_calls.cpp) hand such a call to
// program_sigaction: the program's action is kept here and the sampler's handler stays, passing
// on every signal that is not a sample, as libmonitor does for HPCToolkit. Written under a
// sequence count (odd while a write is under way; the writer blocks the signal meanwhile, so a
// handler never waits for a write of its own thread). Zero: SIG_DFL.
struct sigaction g_program;
std::atomic<uint32_t> g_program_seq{0};
std::atomic<bool> g_program_writing{false};
// The C library's sigaction: the tool library's own (signal_calls.cpp) comes first in a preloaded
// program; glibc's __sigaction is its own, reached without a symbol lookup.
int real_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return ::__sigaction(sig, act, old);
}

// The mark of the sampler's POSIX timers (sigev_value), and the descriptors of its perf events
// (set when opened, never cleared: a signal of a closed event still comes from the sampler).
char g_timer_mark;
constexpr int kMarkedFds = 1 << 16;
std::atomic<uint64_t> g_event_fds[kMarkedFds / 64];
void mark_event_fd(int fd) {
  if (fd >= 0 && fd < kMarkedFds)
    g_event_fds[fd / 64].fetch_or(uint64_t(1) << (fd % 64), std::memory_order_relaxed);
}

// Whether a signal comes from the sampler's timers or events (else: kill, sigqueue, or a source
// of the program's own).
bool is_sample(const siginfo_t* si) {
  if (si->si_code == SI_TIMER) return si->si_value.sival_ptr == &g_timer_mark;
  if (si->si_code < POLL_IN || si->si_code > POLL_HUP) return false;
  const int fd = si->si_fd;
  return fd >= 0 && fd < kMarkedFds &&
         (g_event_fds[fd / 64].load(std::memory_order_relaxed) >> (fd % 64) & 1);
}

struct sigaction program_action() {
  struct sigaction a;
  for (;;) {
    const uint32_t seq = g_program_seq.load(std::memory_order_acquire);
    if (seq & 1) continue;  // another thread is writing it
    std::memcpy(&a, &g_program, sizeof a);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (g_program_seq.load(std::memory_order_relaxed) == seq) return a;
  }
}

void set_program_action(const struct sigaction& a) {
  g_program_seq.fetch_add(1, std::memory_order_acq_rel);
  std::memcpy(&g_program, &a, sizeof a);
  g_program_seq.fetch_add(1, std::memory_order_release);
}

// A signal that is not a sample, handled as the program asked (errno as the handler leaves it).
void to_program(int sig, siginfo_t* si, void* uc) {
  struct sigaction a = program_action();
  const bool info = a.sa_flags & SA_SIGINFO;
  if (!info && a.sa_handler == SIG_IGN) return;
  if (!info && a.sa_handler == SIG_DFL) {
    // A real-time signal's default action ends the process, as it would without the tool: the
    // signal is pending again once this handler returns and unblocks it.
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    real_sigaction(sig, &dfl, nullptr);
    g_claimed_signal.store(0);
    raise(sig);
    return;
  }
  if (a.sa_flags & SA_RESETHAND) {
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    set_program_action(dfl);
  }
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &a.sa_mask, &old);
  if (info) a.sa_sigaction(sig, si, uc);
  else a.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// The periods a signal stands for, or 0 when it is not this thread's sample (sent by kill).
uint64_t weight_of(const Table& tb, const siginfo_t* si) {
  if (tb.fd >= 0) return si->si_code > 0 && si->si_fd == tb.fd ? 1 : 0;
  if (si->si_code != SI_TIMER) return 0;
  // The kernel checks CPU-time timers at its clock tick: a signal stands for the periods that
  // expired since the last one (docs/sampling.md says where that places them).
  int over = timer_getoverrun(tb.timer);
  return 1 + uint64_t(over > 0 ? over : 0);
}

void on_sample(int sig, siginfo_t* si, void* uc) {
  if (!is_sample(si)) return to_program(sig, si, uc);
  const Ticks entered = now();
  const int saved_errno = errno;
  ThreadState* t = Recorder::registered_thread();
  auto* tb = t ? static_cast<Table*>(t->samples) : nullptr;
  const uint64_t weight =
      tb && tb->has_timer.load(std::memory_order_relaxed) ? weight_of(*tb, si) : 0;
  if (weight && g_on.load(std::memory_order_relaxed)) {
    if (t->in_callback.load(std::memory_order_relaxed)) {
      // The tool's own code was running: its tree may be half updated. Counted, not unwound.
      tb->in_tool += weight;
    } else if (tool_enter(t)) {
      // Inside the tool from here, as an event: finish() and the snapshot publisher wait for it.
      Node* node = current_node(*t);
      if (node && g_measure_on.load(std::memory_order_relaxed)) record(*tb, node, uc, weight);
      else tb->dropped += weight;
      tool_leave(t);
    } else {
      tb->dropped += weight;
    }
    // A perf event disables itself after each overflow (below): the next period starts now.
    if (tb->fd >= 0) ioctl(tb->fd, PERF_EVENT_IOC_REFRESH, 1);
    ++tb->cost[bucket_of(now() - entered)];
  }
  errno = saved_errno;
}

long perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

// Whether `fd` is still a perf event (the program may have closed it and reused the number).
bool is_perf_event(int fd) {
  char path[64], target[64];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = 0;
  return std::strstr(target, "perf_event") != nullptr;
}

// A task-clock event of the calling thread that signals it every `period_ns` of its CPU time
// (high-resolution: not at the clock tick, so a thread that runs in short bursts is sampled
// where it runs); -1 when the kernel refuses (perf_event_paranoid, a container's filter).
int open_task_clock(uint64_t period_ns, pid_t tid) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = period_ns;
  attr.disabled = 1;
  attr.exclude_hv = 1;
  long fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    attr.exclude_kernel = 1;  // perf_event_paranoid 2: the thread's user time only
    fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  }
  if (fd < 0) return -1;
  mark_event_fd(int(fd));
  f_owner_ex owner{F_OWNER_TID, tid};
  if (fcntl(int(fd), F_SETSIG, g_signal) != 0 || fcntl(int(fd), F_SETOWN_EX, &owner) != 0 ||
      fcntl(int(fd), F_SETFL, O_ASYNC) != 0 || ioctl(int(fd), PERF_EVENT_IOC_RESET, 0) != 0) {
    close(int(fd));
    return -1;
  }
  return int(fd);
}

// Stops a thread's sampling: at its exit (the key's destructor, on the thread) or at the end.
void delete_timer(void* p) {
  auto* tb = static_cast<Table*>(p);
  if (!tb || !tb->has_timer.exchange(false)) return;
  if (tb->fd >= 0) {
    if (is_perf_event(tb->fd)) {
      ioctl(tb->fd, PERF_EVENT_IOC_DISABLE, 0);
      close(tb->fd);
    }
  } else {
    timer_delete(tb->timer);
  }
  if (uint64_t now = cpu_ns(tb->clock)) tb->cpu_end_ns = now;
}

// Why sampling cannot run in this process, or "".
std::string sampling_obstacle() {
  // ThreadSanitizer holds a signal back until the thread reaches one of its own points, and
  // calls the handler there: the stack it would unwind is not the one the signal interrupted.
  if ((g_under_tsan = dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr))
    return "the program runs under ThreadSanitizer, which delays signals to points of its own";
  g_signal = SIGRTMIN + kSignalOffset;
  struct sigaction current;
  if (real_sigaction(g_signal, nullptr, &current) != 0 ||
      (current.sa_flags & SA_SIGINFO ? current.sa_sigaction != nullptr
                                     : current.sa_handler != SIG_DFL))
    return "the program handles signal SIGRTMIN+" + std::to_string(kSignalOffset) + " itself";
  if (std::string why = open_unwinder(); !why.empty()) return why;
  if (pthread_key_create(&g_key, delete_timer) != 0) return "no thread key left";
  return "";
}

}  // namespace

std::atomic<int> g_claimed_signal{0};

void setup(const Config& config) {
  if (!config.sample_period_ns) return;
  set_off_reason(sampling_obstacle());
  if (g_off_reason[0]) {
    // meta.json says it in any case (sampling.off_reason). Not under ThreadSanitizer: a sanitized
    // run of a program is a test of it, where a line in every run is noise (docs/sampling.md).
    if (!config.quiet && !g_under_tsan) log_message("call-path sampling is off: %s", g_off_reason);
    return;
  }
  g_unw.set_caching_policy(*g_unw.local_space, UNW_CACHE_PER_THREAD);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sample;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  if (real_sigaction(g_signal, &sa, nullptr) != 0) {
    set_off_reason(std::string("cannot install the handler: ") + std::strerror(errno));
    log_message("call-path sampling is off: %s", g_off_reason);
    return;
  }
  g_claimed_signal.store(g_signal);
  g_tables = new std::vector<Table*>();
  g_period_ns = config.sample_period_ns;
  // Perf events when asked for, tried by the first thread that registers (start_source): no probe
  // of its own, an event opened and closed costs 10-70 us at the start of every process.
  g_perf.store(config.sample_perf);
  g_on.store(true);
}

namespace {
// Opens the thread's source of samples (not started yet); false when neither can be had.
bool start_source(Table& tb, uint64_t tid) {
  if (g_perf.load(std::memory_order_relaxed)) {
    tb.fd = open_task_clock(g_period_ns, pid_t(tid));
    if (tb.fd >= 0) {
      g_perf_works.store(true, std::memory_order_relaxed);
      return true;
    }
    // Refused (perf_event_paranoid, a container's filter): timers for this thread, and for the
    // threads after it unless another thread has had an event.
    if (!g_perf_works.load(std::memory_order_relaxed))
      g_perf.store(false, std::memory_order_relaxed);
  }
  sigevent ev;
  std::memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = g_signal;
  ev.sigev_value.sival_ptr = &g_timer_mark;
  ev._sigev_un._tid = pid_t(tid);
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &tb.timer) != 0) return false;
  tb.period.it_interval.tv_sec = time_t(g_period_ns / 1000000000);
  tb.period.it_interval.tv_nsec = long(g_period_ns % 1000000000);
  tb.period.it_value = tb.period.it_interval;
  return true;
}
}  // namespace

void thread_start(ThreadState& t) {
  if (!g_on.load(std::memory_order_relaxed)) return;
  auto* tb = new Table();
  if (!grow_slots(*tb) || !grow_entries(*tb)) {
    g_timer_failures.fetch_add(1);
    return;
  }
  if (pthread_getcpuclockid(pthread_self(), &tb->clock) != 0 || !start_source(*tb, t.os_tid)) {
    g_timer_failures.fetch_add(1);
  } else {
    pthread_setspecific(g_key, tb);  // the source is stopped when the thread exits
    tb->cpu_start_ns = tb->cpu_end_ns = cpu_ns(tb->clock);
    t.samples = tb;  // before the first signal can come
    std::atomic_signal_fence(std::memory_order_seq_cst);
    tb->has_timer.store(true);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (tb->fd >= 0) ioctl(tb->fd, PERF_EVENT_IOC_REFRESH, 1);
    else timer_settime(tb->timer, 0, &tb->period, nullptr);
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_tables->push_back(tb);
}

bool program_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (sig == 0 || sig != g_claimed_signal.load()) return false;
  sigset_t block, prev;
  sigemptyset(&block);
  sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &prev);
  while (g_program_writing.exchange(true, std::memory_order_acquire)) {}
  if (old) *old = program_action();
  if (act) set_program_action(*act);
  g_program_writing.store(false, std::memory_order_release);
  pthread_sigmask(SIG_SETMASK, &prev, nullptr);
  return true;
}

void stop() {
  if (!g_on.exchange(false)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  for (Table* tb : *g_tables) delete_timer(tb);
}

void to_nodes(ThreadState& t, double ns_per_tick) {
  auto* tb = static_cast<Table*>(t.samples);
  if (!tb || !tb->used) return;
  Recorder& rec = Recorder::get();
  // A count is of sample periods of the thread's CPU time.
  const double ticks_per_period = ns_per_tick > 0 ? double(g_period_ns) / ns_per_tick : 0;
  std::vector<Node*> nodes(tb->used);
  for (uint32_t i = 0; i < tb->used; ++i) {
    const Entry& e = tb->entries[i];
    Node* parent = e.parent & 1 ? reinterpret_cast<Node*>(e.parent & ~uint64_t(1))
                                : nodes[(e.parent >> 1) - 1];
    uint32_t region = rec.region(t, RegionKind::Sampled, uint16_t(e.leaf ? 0 : 1),
                                 reinterpret_cast<const void*>(e.ip));
    Node* n = child_of(t, parent, region);
    n->s.visits += e.self;
    n->s.time += Ticks(double(e.self) * ticks_per_period + 0.5);
    n->s.time_min = 0;  // no visit was timed
    nodes[i] = n;
  }
  t.sampled_nodes = tb->used;
}

Summary summary(double ns_per_tick) {
  Summary s;
  s.off_reason = g_off_reason;
  s.period_ns = g_period_ns;
  s.signal = g_signal;
  s.timer_failures = g_timer_failures.load();
  s.source = !g_tables ? "" : g_perf_works.load() ? "perf task-clock" : "timer";
  if (!g_tables) return s;
  s.on = true;
  std::lock_guard<std::mutex> lock(g_mu);
  uint64_t cost[kCostBuckets] = {}, handled = 0;
  for (const Table* tb : *g_tables)
    for (uint32_t b = 0; b < kCostBuckets; ++b) cost[b] += tb->cost[b], handled += tb->cost[b];
  // The median and 99th percentile of the handler's time, from the histogram's buckets.
  auto percentile = [&](double q) {
    uint64_t seen = 0;
    for (uint32_t b = 0; b < kCostBuckets; ++b)
      if ((seen += cost[b]) >= uint64_t(q * double(handled)) && cost[b]) return bucket_floor(b);
    return 0.0;
  };
  if (handled) {
    s.cost_median_ns = percentile(0.5) * ns_per_tick;
    s.cost_p99_ns = percentile(0.99) * ns_per_tick;
  }
  for (const Table* tb : *g_tables) {
    ++s.threads;
    for (uint32_t i = 0; i < tb->used; ++i) s.samples += tb->entries[i].self;
    s.cpu_ns += tb->cpu_end_ns - tb->cpu_start_ns;
    s.in_tool += tb->in_tool;
    s.dropped += tb->dropped;
    s.truncated += tb->truncated;
  }
  return s;
}

}  // namespace scalea::collect::sampler
