// The work of the -finstrument-functions hooks (__cyg_profile_func_enter/exit) and what the user
// API shares with them, inline. Both libraries define the two hooks with these bodies:
// libscalea-omp.so (user_api.cpp) and libscalea-mpi.so (collect/mpi/mpi_layer.cpp). The MPI
// library must export them itself: it is preloaded ahead of libc, whose no-op stubs would
// otherwise win over libscalea-omp.so, which comes after libc in the lookup order.
#pragma once
#include "../core/recorder.hpp"

namespace scalea::collect {

// The calling thread's state when recording, else nullptr. Starts the recorder on first use.
__attribute__((no_instrument_function)) inline ThreadState* recording_thread() {
  int s = g_state.load(std::memory_order_relaxed);
  if (__builtin_expect(!recording(s), 0)) {
    if (s != 0 || !Recorder::get().start("user")) return nullptr;
  }
  return Recorder::get().thread();
}

// Entry of the instrumented function `fn`.
__attribute__((no_instrument_function)) inline void function_enter(void* fn) {
  ThreadState* t = recording_thread();
  if (!t) return;
  ToolScope scope(t);
  if (!scope) return;
  uint32_t rid = Recorder::get().region(*t, RegionKind::Function, 0, fn);
  if (rid == kFilteredRegion) return;
  enter_region(*t, rid, frame_key(FrameTag::Function, rid), fn);
}

// Exit of the instrumented function `fn`.
__attribute__((no_instrument_function)) inline void function_exit(void* fn) {
  ThreadState* t = recording_thread();
  if (!t) return;
  ToolScope scope(t);
  if (!scope) return;
  // The innermost frame is normally this function's (recorded or throttled): no lookup.
  if (leave_region_by_tag(*t, fn, g_throttle_calls_function)) return;
  // Excluded by SCALEA_FUNCTIONS_INCLUDE/_EXCLUDE (no frame): no clock read either.
  uint32_t rid = Recorder::get().region(*t, RegionKind::Function, 0, fn);
  if (rid == kFilteredRegion) return;
  leave_region(*t, frame_key(FrameTag::Function, rid), now(), g_throttle_calls_function);
}

}  // namespace scalea::collect
