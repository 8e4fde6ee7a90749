// sigaction and signal of libscalea-omp.so, which `scalea run` preloads: a program that installs
// its own handler for the sampler's signal after the tool started keeps it, and the sampler goes
// on (sampler::program_sigaction). Every other call goes straight to the C library's
// __sigaction: no symbol lookup (dlsym is not safe this early under a sanitizer whose
// interceptors call these first, and RTLD_NEXT finds nothing when this library comes after the C
// library in the search order, preloaded as a dependency of libscalea-mpi.so). Built without
// sanitizer instrumentation (collect/CMakeLists.txt): ThreadSanitizer's runtime calls sigaction
// while it starts, and instrumented code run then crashes. A program that
// loads the tool through OMP_TOOL_LIBRARIES alone does not reach these (a library the OpenMP
// runtime opens does not interpose): docs/sampling.md says what happens then.
#include <signal.h>

#include <cstring>

#include "sampler.hpp"

#define SCALEA_EXPORT extern "C" __attribute__((visibility("default")))

extern "C" int __sigaction(int, const struct sigaction*, struct sigaction*);  // glibc's own

namespace {
bool sampler_claims(int sig) {
  return sig != 0 &&
         sig == scalea::collect::sampler::g_claimed_signal.load(std::memory_order_acquire);
}
}  // namespace

SCALEA_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (sampler_claims(sig) && scalea::collect::sampler::program_sigaction(sig, act, old)) return 0;
  return __sigaction(sig, act, old);
}

SCALEA_EXPORT sighandler_t signal(int sig, sighandler_t handler) {
  // As the C library's signal(): BSD semantics, the signal blocked in its own handler.
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  if (sigaddset(&act.sa_mask, sig) != 0) return SIG_ERR;  // errno EINVAL, as signal() sets it
  act.sa_flags = SA_RESTART;
  if (!(sampler_claims(sig) && scalea::collect::sampler::program_sigaction(sig, &act, &old)) &&
      __sigaction(sig, &act, &old) != 0)
    return SIG_ERR;
  return old.sa_flags & SA_SIGINFO ? reinterpret_cast<sighandler_t>(old.sa_sigaction)
                                   : old.sa_handler;
}
