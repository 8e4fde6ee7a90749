#include "clock.hpp"

// glibc's <sys/platform/x86.h> uses C's _Bool: C++ compilers take it outside strict ISO mode only.
#if __has_include(<sys/platform/x86.h>) && !defined(__STRICT_ANSI__)
#include <sys/platform/x86.h>
#define SCALEA_HAVE_GLIBC_X86_FEATURES 1
#else
#include <cpuid.h>
#endif

#include <cstring>

namespace scalea::collect {

ClockState g_clock;
#ifdef SCALEA_FAKE_CLOCK
std::atomic<uint64_t> g_fake_now{1};
#else
Ticks monotonic_ticks() { return monotonic_ns(); }
#endif

namespace {
// The TSC is usable across cores only when it is invariant: CPUID leaf 0x80000007, EDX bit 8, from
// which the kernel sets both `constant_tsc` and `nonstop_tsc` in /proc/cpuinfo. Reading
// /proc/cpuinfo cost each process 55 us at start (the kernel formats the record); asking the CPU
// costs 15 us in a virtual machine, where every CPUID instruction exits to the hypervisor. The C
// library (2.33 and later) asked it once when the process started and keeps the answer.
bool cpu_has_invariant_tsc() {
#ifdef SCALEA_HAVE_GLIBC_X86_FEATURES
  return CPU_FEATURE_PRESENT(INVARIANT_TSC);
#else
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (unsigned(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u) return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) return false;
  return (edx >> 8) & 1u;
#endif
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
