// Counters per region and thread (docs/counters.md): PAPI for every event PAPI offers, and the
// Linux kernel's software events (perf::PAGE-FAULTS, perf::TASK-CLOCK, ...) read directly with
// perf_event_open when PAPI's perf_event component is disabled (it is on a machine without a
// hardware PMU: libpfm4 finds no default PMU and PAPI then offers no event at all). Both backends
// take the same path: validated one by one at start, one event set per thread, one read at the
// enter and one at the leave of the selected region kinds, deltas summed per call-path node.
//
// Included by the recorder (collect/core/recorder_types.hpp, hot_path.hpp): nothing here may
// include them back.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace scalea::collect {

struct Config;
struct ThreadState;
struct Frame;

namespace counters {

inline constexpr uint32_t kMax = 8;  // = kMaxCounters of the recorder's Node

// True once at least one event is measured: the recorder's hot path tests only this.
extern bool g_on;

// One thread's event sets and its snapshot slots (a frame holds a slot index, 0 = none; frames
// may close out of order, so slots come from a free list, not a stack).
struct ThreadCounters {
  int papi_set = -1;     // PAPI event set of this thread (-1: none)
  int perf_leader = -1;  // perf_event group leader fd (-1: none)
  std::vector<int> perf_fds;
  bool broken = false;          // the thread could not start its counters: it reads nothing
  std::vector<uint64_t> snaps;  // slot-major: snaps[slot * n + i]; slot 0 unused
  std::vector<uint32_t> free_slots;
  uint32_t slots = 1;
};

// Validates the requested events (SCALEA_COUNTERS or the default set), starts PAPI when needed,
// measures the cost of one read and reports once what was dropped and why. Called once, by the
// recorder's start, on the thread that starts the tool. Never fails the program.
void setup(const Config& c);

// Measured events, in column order (names as requested, e.g. "perf::PAGE-FAULTS").
const std::vector<std::string>& measured();
inline uint32_t count();

// Whether nodes of this region kind read counters (SCALEA_COUNTER_REGIONS).
bool kind_selected(uint16_t kind);

// Reads this thread's counters into out[0..count()). False on failure (counted; reported once).
bool read(ThreadState& t, uint64_t* out);

// Frame hooks (called only when g_on and the frame's node is selected).
void on_enter(ThreadState& t, Frame& f);
void on_leave(ThreadState& t, const Frame& f);

// What was asked for, measured and dropped, for meta.json "counters" (docs/counters.md), which
// collect/core/writer.cpp writes from it.
struct CounterReport {
  struct Measured {
    std::string name, column, backend;  // column: the metric column; backend: papi | perf_event
  };
  struct Dropped {
    std::string name, reason;
  };
  std::vector<std::string> requested;
  std::string requested_by;  // "SCALEA_COUNTERS" or "default"
  std::vector<Measured> measured;
  std::vector<Dropped> dropped;
  bool multiplexed = false;
  uint64_t read_failures = 0, threads_failed = 0;
  double cost_per_read_ns = 0;
  std::string regions;               // the kinds that read counters, comma-separated
  std::vector<std::string> offered;  // what the machine offers
  bool papi_started = false;
  std::string papi_version, papi_problem;
  std::vector<std::string> papi_components;
};
// Waits up to 200 ms for the probe of the kernel's software events (the "offered" list).
CounterReport report();

// Says once, at the end of the run, how many reads failed (nothing when none did).
void report_at_end();

namespace detail {
extern uint32_t g_count;
}
inline uint32_t count() { return detail::g_count; }

}  // namespace counters
}  // namespace scalea::collect
