// The clock of the hot path. Readings are raw ticks: the invariant TSC where the CPU has one
// (about 10 ns a read here), CLOCK_MONOTONIC otherwise (about 25 ns). Ticks are converted to
// nanoseconds once, when the experiment is written, with a ratio measured over the whole run.
#pragma once
#include <atomic>
#include <cstdint>
#include <ctime>
#include <x86intrin.h>

namespace scalea::collect {

using Ticks = uint64_t;

struct ClockState {
  bool use_tsc = false;
};
extern ClockState g_clock;

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

#ifdef SCALEA_FAKE_CLOCK
// Unit tests set the time explicitly, in nanoseconds (one tick = 1 ns).
extern std::atomic<uint64_t> g_fake_now;
inline Ticks now() { return g_fake_now.load(std::memory_order_relaxed); }
#else
// monotonic_ns() out of line: the callbacks, which read the TSC, then need no stack frame for it.
__attribute__((noinline)) Ticks monotonic_ticks();
inline Ticks now() {
  if (__builtin_expect(g_clock.use_tsc, 1)) return __rdtsc();
  return monotonic_ticks();
}
#endif

// Calibration: reference points taken at start-up and at the end of the run.
struct ClockCalibration {
  Ticks ticks0 = 0, ticks1 = 0;
  uint64_t ns0 = 0, ns1 = 0;
  double ns_per_tick() const;
  const char* source() const;
};

// Chooses the source (env SCALEA_CLOCK=tsc|monotonic overrides) and takes the first reference.
void clock_init(ClockCalibration& cal, const char* requested);
void clock_finish(ClockCalibration& cal);

}  // namespace scalea::collect
