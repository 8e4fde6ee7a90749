// Call-path sampling (docs/sampling.md): each thread gets a timer on its own CPU time
// (timer_create on CLOCK_THREAD_CPUTIME_ID, delivered to that thread by a real-time signal). The
// signal handler unwinds the thread's stack with libunwind and counts the call path below the
// thread's current region node in a table of the thread's own (memory the sampler maps itself:
// no malloc, no lock in the handler; the table grows with distinct paths, never with run time).
// When the run ends the paths become nodes of kind `sampled` below their region nodes, so that the
// writer, the MPI unification and the symbol resolution treat them as any code address; the
// analysis keeps them apart from the measured regions (drg: ThreadTree::samples).
#pragma once
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace scalea::collect {

struct Config;
struct ThreadState;

namespace sampler {

// What the sampler saw, for meta.json "sampling".
struct Summary {
  bool on = false;          // sampling ran (else `off_reason` says why when it was asked for)
  std::string off_reason;   // "" when on or not asked for
  uint64_t period_ns = 0;   // CPU time per sample period
  int signal = 0;           // the signal the timers deliver
  const char* source = "";  // "perf task-clock" (a software perf event per thread) or "timer"
  uint64_t samples = 0;     // samples counted in call paths
  uint64_t in_tool = 0;     // samples that fell inside the tool's own code (not unwound)
  uint64_t dropped = 0;     // samples not recorded (recording off, table full, unwinding failed)
  uint64_t cpu_ns = 0;      // the sampled threads' CPU time while they were sampled
  // The handler's time per sample (unwinding and counting), median and 99th percentile, ns:
  // the lower bound of a histogram bucket (4 per power of two).
  double cost_median_ns = 0, cost_p99_ns = 0;
  uint64_t truncated = 0;  // samples whose stack was deeper than the unwinder's limit
  uint64_t threads = 0;    // threads that had a timer
  uint64_t timer_failures = 0;
};

// At start (Recorder::start), before the first thread registers: installs the handler when
// SCALEA_SAMPLE asks for sampling and the signal is free. Says why not once otherwise.
void setup(const Config& config);
// The calling thread, as it registers: its table and its timer.
void thread_start(ThreadState& t);
// At finish(), after g_state left recording: no timer fires any more (every thread's is
// deleted, and the threads' CPU time read). The handlers still under way are waited for by
// finish() (they hold in_callback).
void stop();
// At finish(), after the thread's frames are closed: its call paths become nodes of kind
// `sampled` below their region nodes: visits = samples, time = their share of the thread's CPU
// time while it was sampled (in clock ticks, `ns_per_tick` ns each).
void to_nodes(ThreadState& t, double ns_per_tick);
Summary summary(double ns_per_tick);

// The program's sigaction on the sampler's signal, from the tool library's sigaction and signal
// (signal_calls.cpp): false when `sig` is not the sampler's (the call goes to the C library).
// Otherwise the program's action is kept (its previous one in `old`) and the sampler's handler
// passes it every signal that is not a sample: the program behaves as without the tool, and
// sampling goes on (docs/sampling.md).
bool program_sigaction(int sig, const struct sigaction* act, struct sigaction* old);
// The signal whose handler the sampler installed, 0 while none: signal_calls.cpp (built without
// sanitizer instrumentation) reads it first, so that a call for any other signal never enters
// instrumented code: a sanitizer's runtime calls sigaction while it starts, before instrumented
// code may run.
extern std::atomic<int> g_claimed_signal;

}  // namespace sampler
}  // namespace scalea::collect
