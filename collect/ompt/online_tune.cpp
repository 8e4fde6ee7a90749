#include "online_tune.hpp"

#include <dlfcn.h>
#include <omp-tools.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "../core/config.hpp"
#include "../core/json_text.hpp"
#include "../core/log.hpp"
#include "../core/online_tuner.hpp"
#include "../core/recorder_types.hpp"

namespace scalea::collect::online_tune {

bool g_on __attribute__((visibility("hidden"))) = false;

namespace {

// The runtime's routines, found at start (the tool does not link an OpenMP runtime).
using GetSchedule = void (*)(int*, int*);
using SetSchedule = void (*)(int, int);
using GetLevel = int (*)();
GetSchedule g_get_schedule = nullptr;
SetSchedule g_set_schedule = nullptr;
GetLevel g_get_level = nullptr;
tune::Settings g_settings;
const char* g_off_reason = "";

constexpr unsigned kMaxThreads = 256;  // threads of a team whose loop times are kept
constexpr size_t kMaxLoops = 8;        // loops of an execution whose schedules are kept
constexpr size_t kMaxRegions = 64;     // regions tuned per process
// omp_sched_t's monotonic modifier: the tuner compares and sets kinds without it.
constexpr int kMonotonic = int(0x80000000u);

// One tuned region: its tuner, and the execution under way (one at a time: a second thread that
// encounters the region meanwhile runs it untuned).
struct Slot {
  const void* code = nullptr;
  uint32_t region = UINT32_MAX;  // the recorder's region id (UINT32_MAX: not recorded)
  tune::RegionTuner tuner;
  std::atomic<bool> in_flight{false};
  std::atomic<uint64_t> gen{0};
  uint64_t begin_ns = 0;
  tune::Schedule saved;  // the program's run-sched-var, given back at the end
  bool changed = false;
  std::atomic<unsigned> threads{0};
  std::atomic<uint64_t> busy_ns[kMaxThreads] = {};
  tune::LoopSeen loops[kMaxLoops];
  size_t loop_count = 0;  // written by the encountering thread only
};

std::mutex g_mutex;  // guards the table and the tuners (twice per region execution)
Slot* g_slots[kMaxRegions] = {};
size_t g_slot_count = 0;
bool g_table_full = false;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// The slot of a region's code address, made at its first execution; g_mutex held.
Slot* slot_of(const void* code) {
  for (size_t i = 0; i < g_slot_count; ++i)
    if (g_slots[i]->code == code) return g_slots[i];
  if (g_slot_count == kMaxRegions) {
    g_table_full = true;
    return nullptr;
  }
  Slot* s = new Slot;
  s->code = code;
  s->tuner = tune::RegionTuner(g_settings);
  g_slots[g_slot_count++] = s;
  return s;
}

tune::Schedule program_schedule() {
  int kind = 0, chunk = 0;
  g_get_schedule(&kind, &chunk);
  return {kind & ~kMonotonic, chunk};
}

// The first schedule set is read back: a runtime whose run-sched-var does not take it turns the
// tuner off (said once), and the program's is given back.
bool set_checked(tune::Schedule s, tune::Schedule program) {
  static bool checked = false;
  g_set_schedule(s.kind, s.chunk);
  if (checked) return true;
  checked = true;
  tune::Schedule got = program_schedule();
  if (got.kind == s.kind && (s.chunk == 0 || got.chunk == s.chunk)) return true;
  g_set_schedule(program.kind, program.chunk);
  g_on = false;
  g_off_reason = "omp_set_schedule did not change run-sched-var";
  log_message("on-line tuning off: %s", g_off_reason);
  return false;
}

bool is_loop(int wstype) {
  return wstype == ompt_work_loop || (wstype >= tune::kWorkLoopStatic && wstype <= 13);
}
}  // namespace

void start(const Config& c, bool work_callback) {
  g_settings.repeat = c.tune_repeat;
  if (!c.tune) return;
  g_get_schedule = reinterpret_cast<GetSchedule>(dlsym(RTLD_DEFAULT, "omp_get_schedule"));
  g_set_schedule = reinterpret_cast<SetSchedule>(dlsym(RTLD_DEFAULT, "omp_set_schedule"));
  g_get_level = reinterpret_cast<GetLevel>(dlsym(RTLD_DEFAULT, "omp_get_level"));
  if (!g_get_schedule || !g_set_schedule || !g_get_level)
    g_off_reason = "the OpenMP runtime's omp_set_schedule was not found";
  else if (!work_callback)
    g_off_reason = "the work callback is not registered (SCALEA_OPENMP=light)";
  else g_on = true;
  if (!g_on) log_message("on-line tuning off: %s", g_off_reason);
}

void* parallel_begin(ThreadState& t, const void* codeptr, uint32_t region, bool league) {
  // Only the outermost regions: a nested one inherits its encountering task's schedule.
  if (league || !codeptr || g_get_level() != 0) return nullptr;
  tune::Schedule program = program_schedule(), set;
  Slot* s = nullptr;
  {
    // The tuner changes here and in parallel_end; meta.json may be written meanwhile.
    std::lock_guard<std::mutex> lock(g_mutex);
    s = slot_of(codeptr);
    if (!s || s->in_flight.exchange(true, std::memory_order_acquire)) return nullptr;
    if (region != UINT32_MAX) s->region = region;
    s->changed = s->tuner.before(program, set) && set != program;
  }
  if (s->changed && !set_checked(set, program)) s->changed = false;
  s->saved = program;
  s->threads.store(0, std::memory_order_relaxed);
  for (auto& b : s->busy_ns) b.store(0, std::memory_order_relaxed);
  s->loop_count = 0;
  s->gen.fetch_add(1, std::memory_order_relaxed);
  t.tune_master = s;
  s->begin_ns = now_ns();
  return s;
}

void work(ThreadState& t, void* slot, int wstype, bool begin, uint64_t count, const void* codeptr) {
  if (!is_loop(wstype)) return;
  auto* s = static_cast<Slot*>(slot);
  uint64_t gen = s->gen.load(std::memory_order_relaxed);
  if (!begin) {
    if (t.tune_slot == s && t.tune_gen == gen && t.tune_index < kMaxThreads)
      s->busy_ns[t.tune_index].fetch_add(now_ns() - t.tune_begin, std::memory_order_relaxed);
    return;
  }
  if (t.tune_slot != s || t.tune_gen != gen) {
    t.tune_slot = s;
    t.tune_gen = gen;
    t.tune_index = s->threads.fetch_add(1, std::memory_order_relaxed);
  }
  if (t.tune_master == s && s->loop_count < kMaxLoops)
    s->loops[s->loop_count++] = tune::LoopSeen{codeptr, wstype, count};
  t.tune_begin = now_ns();
}

void parallel_end(ThreadState& t, void* slot) {
  auto* s = static_cast<Slot*>(slot);
  uint64_t end = now_ns();
  if (s->changed) g_set_schedule(s->saved.kind, s->saved.chunk);
  tune::Execution e;
  e.seconds = double(end - s->begin_ns) * 1e-9;
  e.threads = std::min(s->threads.load(std::memory_order_relaxed), kMaxThreads);
  uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
  for (unsigned i = 0; i < e.threads; ++i) {
    uint64_t b = s->busy_ns[i].load(std::memory_order_relaxed);
    lo = std::min(lo, b), hi = std::max(hi, b), sum += b;
  }
  e.imbalance = e.threads ? double(hi - lo) * 1e-9 : 0;
  e.busy = double(sum) * 1e-9;
  e.loops.assign(s->loops, s->loops + s->loop_count);
  {
    std::lock_guard<std::mutex> lock(g_mutex);  // meta.json may be written meanwhile
    s->tuner.after(e);
  }
  t.tune_master = nullptr;
  s->in_flight.store(false, std::memory_order_release);
}

}  // namespace scalea::collect::online_tune

namespace scalea::collect::tune {
std::string online_tuning_json() {
  using namespace online_tune;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::string j = std::string("{\"on\": ") + (g_on ? "true" : "false") +
                  ", \"off_reason\": " + json_escape(g_off_reason) +
                  ", \"repeat\": " + std::to_string(g_settings.repeat) +
                  ", \"min_gain\": " + std::to_string(g_settings.min_gain) +
                  ", \"table_full\": " + (g_table_full ? "true" : "false") + ", \"regions\": [";
  for (size_t i = 0; i < g_slot_count; ++i) {
    // The module and offset as the region table writes them: the report finds the region by
    // them in every process's table (an MPI job's unified one has other ids).
    const void* code = g_slots[i]->code;
    Dl_info dl;
    std::string module;
    uintptr_t offset = 0;
    if (dladdr(code, &dl) && dl.dli_fbase) {
      module = dl.dli_fname ? dl.dli_fname : "";
      offset = reinterpret_cast<uintptr_t>(code) - reinterpret_cast<uintptr_t>(dl.dli_fbase);
    }
    std::string r = region_json(g_slots[i]->tuner, code, g_slots[i]->region);
    r.insert(
        1, "\"module\": " + json_escape(module) + ", \"offset\": " + std::to_string(offset) + ", ");
    j += std::string(i ? ", " : "") + r;
  }
  return j + "]}";
}
}  // namespace scalea::collect::tune
