// The recorder: the plain C++ core every event source (OMPT, PMPI, user API, function hooks)
// feeds. Each thread owns a calling-context tree of regions (its sub-DRG) and a stack of open
// frames. The hot path (enter/leave) takes no lock and does not allocate once the thread has seen
// a call path; memory grows with distinct call paths, never with run time.
//
// The parts, each in a header of its own that this one includes: the data (recorder_types.hpp),
// entering the tool (tool_entry.hpp), the hot path (hot_path.hpp), user and function regions with
// throttling (throttle.hpp); here, the process-wide recorder.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "affinity.hpp"
#include "clock.hpp"
#include "config.hpp"
#include "hot_path.hpp"
#include "recorder_types.hpp"
#include "throttle.hpp"
#include "tool_entry.hpp"
#include "scalea/format.hpp"

namespace scalea::collect {

// Says once (unless SCALEA_QUIET) when the program is built with -finstrument-functions but its
// hook calls bind to another library's empty hooks (libc's): the tool was loaded after the program
// (by the OpenMP runtime), so its functions would silently not be recorded. collect/user.
void check_function_hooks(const Config& config);

struct RegionInfo {
  RegionKind kind;
  uint16_t subkind;
  uintptr_t address;  // code address (0 when none)
  std::string name, file, function;
  uint32_t line = 0;
};

// Metadata an event source adds to the experiment (e.g. the OMPT runtime and callbacks granted).
struct SourceInfo {
  std::string runtime;                                         // runtime version string
  std::string runtime_path;                                    // file of the runtime library
  std::vector<std::pair<std::string, std::string>> callbacks;  // name -> support level
  bool light = false;  // light mode (SCALEA_OPENMP=light): only the events light mode keeps
  // When the OpenMP runtime started initializing (it asked for a tool, ompt_start_tool: libomp
  // does at the program's first OpenMP construct or call), when it was ready (it initialized the
  // tool), and whether a parallel construct started it (else an API call such as
  // omp_get_max_threads did, and the program may have run serial code before its first fork).
  Ticks runtime_init = 0, runtime_ready = 0;
  bool init_by_fork = false;
  // Written under Recorder::mutex() while the program runs: the snapshot publisher reads it.
};

class Recorder {
 public:
  static Recorder& get() {
    Recorder* r = instance_.load(std::memory_order_acquire);
    return __builtin_expect(r != nullptr, 1) ? *r : create();
  }

  // Starts recording (idempotent; any event source may call it first). False when disabled.
  bool start(const char* origin);
  // Writes the experiment once; later calls do nothing. `why` names the trigger (for the log).
  void finish(const char* why);

  __attribute__((returns_nonnull)) ThreadState* thread() {
    if (__builtin_expect(tls_ != nullptr, 1)) return tls_;
    return register_thread();
  }
  __attribute__((returns_nonnull)) ThreadState* register_thread();
  // The calling thread's state if it has registered, else nullptr; needs no recorder instance.
  static ThreadState* registered_thread() { return tls_; }

  // Region ids: per-thread cache in front of the shared table (the table takes a lock).
  // Functions excluded by SCALEA_FUNCTIONS_INCLUDE/_EXCLUDE get kFilteredRegion.
  uint32_t region(ThreadState& t, RegionKind kind, uint16_t subkind, const void* code);
  uint32_t named_region(ThreadState& t, RegionKind kind, const char* name, const char* file,
                        int line, const char* function, uint16_t subkind = 0);
  // A named region at a code address: one region per (kind, subkind, name, address), e.g. an MPI
  // call site (the MPI function's name, the return address into its caller). Takes the lock and
  // caches nothing: the caller keeps its own per-thread cache (collect/mpi).
  uint32_t site_region(RegionKind kind, uint16_t subkind, const char* name, const void* code);
  // Whether nodes of this region read counters (its kind is in SCALEA_COUNTER_REGIONS).
  bool region_reads_counters(uint32_t region);

  // An event source that writes the experiment itself (the MPI layer unifies across ranks): called
  // by finish() once the threads' trees are closed, instead of write_experiment. Returns false to
  // let finish() write the single-process experiment after all (e.g. MPI never initialized).
  using FinishHook = bool (*)(Recorder& rec, const char* why);
  void set_finish_hook(FinishHook hook) { finish_hook_ = hook; }
  // Call paths this process throttled (SCALEA_THROTTLE), over all its threads (after finish()).
  size_t throttled_count() const;
  // Says once how many call paths were throttled (nothing when none, or SCALEA_QUIET); `where`
  // qualifies them, e.g. " on 3 of 4 ranks".
  void say_throttled(size_t count, const std::string& where = "") const;
  // The experiment directory chosen at start (SCALEA_OUTPUT or the default name).
  const std::string& output_dir() const { return output_dir_; }

  void note_team_size(uint32_t n) {
    uint32_t cur = max_team_.load(std::memory_order_relaxed);
    while (n > cur && !max_team_.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {}
  }

  const Config& config() const { return config_; }
  SourceInfo& openmp_info() { return openmp_; }
  std::mutex& mutex() { return mu_; }

  // For the writer.
  const std::vector<ThreadState*>& threads() const { return threads_; }
  const std::vector<RegionInfo>& regions() const { return regions_; }
  const ClockCalibration& clock() const { return clock_; }
  uint32_t max_team() const { return max_team_.load(); }
  std::string start_time_iso, end_time_iso;
  // Time the process ran before the tool started (only when it started late, e.g. loaded by the
  // OpenMP runtime at its first construct): from /proc, 10 ms resolution. Added to the initial
  // thread's root.
  uint64_t pre_start_ns = 0;
  bool start_estimated = false;
  // The machine's online CPUs and the CPUs the process may use (the initial thread's set when
  // the tool started), for meta.json "affinity".
  long cpus_online = 0;
  CpuMask process_cpus;
  // The command line when the tool started: programs may overwrite argv later (BOTS does).
  std::vector<std::string> command;
  // Set before finish() when the run ends abnormally (a signal): written to meta.json.
  std::vector<std::string> ending_notes;
  bool ending_complete = true;
  int rank = -1;

 private:
  Recorder() = default;
  uint32_t region_slow(ThreadState& t, RegionKind kind, uint16_t subkind, uintptr_t addr,
                       const char* name, const char* file, int line, const char* function);
  // The id of the region with this identity key, added with `info` when new (mu_ held).
  uint32_t intern_region(std::string key, RegionInfo info);
  // Writes this process's experiment and says where (finish(), without an event source's hook).
  void write_and_say(const char* why);

  static Recorder& create();
  static std::atomic<Recorder*> instance_;
  // initial-exec: one %fs-relative load instead of a __tls_get_addr call per event. The library is
  // usually dlopen()ed by the OpenMP runtime; its 16 bytes of TLS fit glibc's static TLS surplus.
  // __thread, not thread_local: a plain pointer with no dynamic initialization, so an access from
  // another translation unit does not call a TLS init function first (two tests per callback).
  static __thread ThreadState* tls_ __attribute__((tls_model("initial-exec")));
  std::mutex mu_;
  std::once_flag started_;
  bool start_ok_ = false;
  std::atomic<bool> finished_{false};
  Config config_;
  ClockCalibration clock_;
  std::vector<ThreadState*> threads_;
  bool threads_closed_ = false;  // set by finish() under mu_: no thread is added after
  std::vector<RegionInfo> regions_;
  std::unordered_map<std::string, uint32_t> region_keys_;
  std::deque<std::string> stable_names_;  // never moves: the thread caches point into it
  std::atomic<uint32_t> max_team_{0};
  SourceInfo openmp_;
  std::string output_dir_;
  FinishHook finish_hook_ = nullptr;
};

// The calling thread for an event, registered if need be; nullptr when recording is off. A thread
// already registered skips the state check here: tool_enter (ToolScope) makes it anyway. The
// first event of a thread registers it out of line: the callbacks' common path then keeps no
// value alive across that call, and saves fewer registers.
__attribute__((noinline)) ThreadState* event_thread_first();
inline ThreadState* event_thread() {
  if (ThreadState* t = Recorder::registered_thread()) return t;
  return event_thread_first();
}

}  // namespace scalea::collect
