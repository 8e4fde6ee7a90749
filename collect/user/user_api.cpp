// The user-region API (scalea.h) and the -finstrument-functions hooks: thin adapters over the
// recorder. Recording starts on first use when no OpenMP runtime started it.
#include <cstring>

#include "function_hooks.hpp"
#include "scalea/scalea.h"

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

// The bodies are shared with libscalea-mpi.so (function_hooks.hpp).
__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(
    void* fn, void*) {
  function_enter(fn);
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(
    void* fn, void*) {
  function_exit(fn);
}

}  // extern "C"
