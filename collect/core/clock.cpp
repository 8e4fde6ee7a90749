#include "clock.hpp"

#include <cstdio>
#include <cstring>

namespace scalea::collect {

ClockState g_clock;
#ifdef SCALEA_FAKE_CLOCK
std::atomic<uint64_t> g_fake_now{1};
#else
Ticks monotonic_ticks() { return monotonic_ns(); }
#endif

namespace {
// The TSC is usable across cores only when it is invariant: the kernel reports both flags then.
bool cpu_has_invariant_tsc() {
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool constant = false, nonstop = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    constant = std::strstr(line, " constant_tsc") != nullptr;
    nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
    break;
  }
  std::fclose(f);
  return constant && nonstop;
}
}  // namespace

void clock_init(ClockCalibration& cal, const char* requested) {
  bool want_tsc = cpu_has_invariant_tsc();
  if (requested && std::strcmp(requested, "monotonic") == 0) want_tsc = false;
#ifdef SCALEA_FAKE_CLOCK
  want_tsc = false;
#endif
  g_clock.use_tsc = want_tsc;
  cal.ns0 = monotonic_ns();
  cal.ticks0 = now();
}

void clock_finish(ClockCalibration& cal) {
#ifdef SCALEA_FAKE_CLOCK
  cal.ns1 = cal.ns0 + (now() - cal.ticks0);
  cal.ticks1 = now();
  return;
#endif
  cal.ns1 = monotonic_ns();
  cal.ticks1 = now();
}

double ClockCalibration::ns_per_tick() const {
  if (!g_clock.use_tsc) return 1.0;
  if (ticks1 <= ticks0 || ns1 <= ns0) return 1.0;
  return double(ns1 - ns0) / double(ticks1 - ticks0);
}

const char* ClockCalibration::source() const { return g_clock.use_tsc ? "tsc" : "monotonic"; }

}  // namespace scalea::collect
