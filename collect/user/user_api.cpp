// The user-region API (scalea.h) and the -finstrument-functions hooks: thin adapters over the
// recorder. Recording starts on first use when no OpenMP runtime started it.
#include <cstring>

#include "../core/recorder.hpp"
#include "scalea/scalea.h"

namespace scalea::collect {
namespace {

constexpr uint64_t kKeyUser = 4ull << 40, kKeyFunction = 5ull << 40;

// The calling thread's state when recording, else nullptr. Starts the recorder on first use.
__attribute__((no_instrument_function)) inline ThreadState* recording_thread() {
  int s = g_state.load(std::memory_order_relaxed);
  if (__builtin_expect(s != 1, 0)) {
    if (s != 0 || !Recorder::get().start("user")) return nullptr;
  }
  return Recorder::get().thread();
}

// Marks the thread as inside a hook so the finishing thread waits for it (tool_enter, the
// handshake with finish()); not ok() when recording ended meanwhile.
class Busy {
 public:
  __attribute__((no_instrument_function)) explicit Busy(ThreadState* t)
      : t_(t && tool_enter(t) ? t : nullptr) {}
  __attribute__((no_instrument_function)) bool ok() const { return t_ != nullptr; }
  __attribute__((no_instrument_function)) ~Busy() {
    if (t_) tool_leave(t_);
  }

 private:
  ThreadState* t_;
};

}  // namespace
}  // namespace scalea::collect

using namespace scalea::collect;

extern "C" {

__attribute__((visibility("default"), no_instrument_function)) void scalea_region_begin_loc(
    const char* name, const char* file, int line, const char* function) {
  ThreadState* t = recording_thread();
  if (!t || !name) return;
  Busy busy(t);
  if (!busy.ok()) return;
  uint32_t rid = Recorder::get().named_region(*t, RegionKind::User, name, file, line, function);
  enter_region(*t, rid, kKeyUser | rid, name);
}

__attribute__((visibility("default"), no_instrument_function)) void scalea_region_end(
    const char* name) {
  ThreadState* t = recording_thread();
  if (!t || !name) return;
  Busy busy(t);
  if (!busy.ok()) return;
  // Names are looked up first (a buffer may be reused for another name), then the clock read,
  // unless the visit is throttled.
  uint32_t rid = Recorder::get().named_region(*t, RegionKind::User, name, nullptr, 0, nullptr);
  if (leave_throttled_top(*t, kKeyUser | rid)) return;
  leave_region(*t, kKeyUser | rid, now(), g_throttle_calls_user);
}

__attribute__((visibility("default"), no_instrument_function)) void scalea_measure_enable(void) {
  recording_thread();
  g_measure_on.store(true);
}

__attribute__((visibility("default"), no_instrument_function)) void scalea_measure_disable(void) {
  recording_thread();
  g_measure_on.store(false);
}

__attribute__((visibility("default"), no_instrument_function)) int scalea_measure_enabled(void) {
  return active() && g_measure_on.load() ? 1 : 0;
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(
    void* fn, void*) {
  ThreadState* t = recording_thread();
  if (!t) return;
  Busy busy(t);
  if (!busy.ok()) return;
  uint32_t rid = Recorder::get().region(*t, RegionKind::Function, 0, fn);
  if (rid == kFilteredRegion) return;
  enter_region(*t, rid, kKeyFunction | rid, fn);
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(
    void* fn, void*) {
  ThreadState* t = recording_thread();
  if (!t) return;
  Busy busy(t);
  if (!busy.ok()) return;
  // The innermost frame is normally this function's (recorded or throttled): no lookup.
  if (leave_region_by_tag(*t, fn, g_throttle_calls_function)) return;
  // Excluded by SCALEA_FUNCTIONS_INCLUDE/_EXCLUDE (no frame): no clock read either.
  uint32_t rid = Recorder::get().region(*t, RegionKind::Function, 0, fn);
  if (rid == kFilteredRegion) return;
  leave_region(*t, kKeyFunction | rid, now(), g_throttle_calls_function);
}

}  // extern "C"
