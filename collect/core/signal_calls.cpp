// sigaction and signal of libscalea-omp.so, which `scalea run` preloads: a program that installs
// its own handler for the sampler's signal after the tool started keeps it, and the sampler goes
// on (sampler::program_sigaction). Every other call goes straight to the C library. A program that
// loads the tool through OMP_TOOL_LIBRARIES alone does not reach these (a library the OpenMP
// runtime opens does not interpose): docs/sampling.md says what happens then.
#include <dlfcn.h>
#include <signal.h>

#include <atomic>
#include <cstring>

#include "sampler.hpp"

#define SCALEA_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
// The next definition after this library's, else the C library's own: preloaded as a dependency
// of libscalea-mpi.so, this library comes after the C library in the search order, where
// RTLD_NEXT finds nothing.
template <typename Fn>
Fn next_symbol(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (!fn) {
    void* p = dlsym(RTLD_NEXT, name);
    if (!p)
      if (void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD)) p = dlsym(libc, name);
    fn = reinterpret_cast<Fn>(p);
    slot.store(fn, std::memory_order_release);
  }
  return fn;
}
using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);
std::atomic<SigactionFn> g_sigaction{nullptr};
std::atomic<SignalFn> g_signal{nullptr};
}  // namespace

SCALEA_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (scalea::collect::sampler::program_sigaction(sig, act, old)) return 0;
  return next_symbol(g_sigaction, "sigaction")(sig, act, old);
}

SCALEA_EXPORT sighandler_t signal(int sig, sighandler_t handler) {
  // As the C library's signal(): BSD semantics, the signal blocked in its own handler.
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  if (scalea::collect::sampler::program_sigaction(sig, &act, &old))
    return old.sa_flags & SA_SIGINFO ? reinterpret_cast<sighandler_t>(old.sa_sigaction)
                                     : old.sa_handler;
  return next_symbol(g_signal, "signal")(sig, handler);
}
