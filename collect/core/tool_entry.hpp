// Entering the tool from an event, and the snapshot publisher's hold on one thread, by one
// handshake (docs/architecture.md, "Entering the tool"). Included through recorder.hpp; an
// event's entry and exit are inline, only the slow path (tool_enter_slow) is out of line.
#pragma once
#include <atomic>
#include <cstdint>

#include "recorder_types.hpp"

namespace scalea::collect {

// The recorder's flags that every event reads, in one object: an event loads its address once
// (through the shared library's GOT) instead of once per flag. The code uses the names below.
struct EventFlags {
  // 0 not started, 2 finished or disabled; the recording states are the odd ones: 1 recording
  // where an event's entry needs no fence of its own (asymmetric_fence), 5 recording where it
  // does, 3 recording while the snapshot publisher holds a thread's tree (claim_thread). Only 1
  // is the fast path of tool_enter(): the fence choice and the state are one load and one compare.
  std::atomic<int> state{0};
  std::atomic<bool> measure_on{true};         // the user's enable/disable switch
  std::atomic<bool> asymmetric_fence{false};  // see tool_enter()
};
extern EventFlags g_flags;
inline std::atomic<int>& g_state = g_flags.state;
inline std::atomic<bool>& g_measure_on = g_flags.measure_on;
inline bool recording(int state) { return state & 1; }
inline bool active() { return recording(g_state.load(std::memory_order_relaxed)); }
inline constexpr int kStateRecording = 1, kStateClaims = 3, kStateRecordingFenced = 5;

// Nonzero while the calling thread's file I/O is not the program's own, which collect/io passes
// straight to the C library without recording it: inside an MPI call (the MPI library's files;
// MPI-IO is the MPI call's region) and inside a recorded I/O call (its re-entry guard).
// initial-exec, like the thread pointer: one %fs load in every wrapped call.
extern __thread int tl_tool_io __attribute__((tls_model("initial-exec")));

// Entering the tool from an event (OMPT callback, user API, MPI wrapper) and leaving it.
// Recorder::finish() sets g_state to 2 and then waits until no thread is inside: a Dekker
// handshake, whose event side (store in_callback, then load g_state) needs a full fence. Where the
// kernel has membarrier(2) the fence is asymmetric: an event only keeps the compiler from
// reordering, and finish() makes every thread of the process execute a full barrier once (the
// rare side pays); the recording state is then 1. Otherwise it is 5: every entry finds it other
// than 1 and takes the slow path, which makes the real fence and reads the state again.
//
// The snapshot publisher uses the same handshake to hold one thread's tree while it copies it
// (claim_thread): it sets the thread's snap_claim and g_state to 3, so that an entry finds the
// state other than 1 and takes the slow path, which waits while its own thread is claimed. The
// fast path (state 1) is the same compare as without snapshots.
inline std::atomic<bool>& g_asymmetric_fence = g_flags.asymmetric_fence;
// The state while recording without claims: 1 or 5, by the fence events need (set at start).
inline int recording_state() {
  return g_asymmetric_fence.load(std::memory_order_relaxed) ? kStateRecording
                                                            : kStateRecordingFenced;
}
bool tool_enter_slow(ThreadState* t);
inline bool tool_enter(ThreadState* t) {
  t->in_callback.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // Acquire (a plain load on x86): an entry that finds 1 again after a snapshot's claims
  // (claims_end's store) is ordered after the publisher's copy of this thread's tree.
  if (__builtin_expect(g_state.load(std::memory_order_acquire) == kStateRecording, 1)) return true;
  return tool_enter_slow(t);
}
inline void tool_leave(ThreadState* t) { t->in_callback.store(0, std::memory_order_release); }

// The calling thread inside the tool for the scope's lifetime (tool_enter ... tool_leave): every
// adapter's event (OMPT callback, user API, function hook, MPI wrapper) holds one while it touches
// the thread's tree. False when there is no thread or recording has ended. Always inlined: it is
// part of every event's cost.
class ToolScope {
 public:
  __attribute__((no_instrument_function, always_inline)) explicit ToolScope(ThreadState* t)
      : t_(t && tool_enter(t) ? t : nullptr) {}
  __attribute__((no_instrument_function, always_inline)) ~ToolScope() {
    if (t_) tool_leave(t_);
  }
  ToolScope(const ToolScope&) = delete;
  ToolScope& operator=(const ToolScope&) = delete;
  __attribute__((no_instrument_function)) ThreadState* thread() const { return t_; }
  __attribute__((no_instrument_function)) explicit operator bool() const { return t_ != nullptr; }

 private:
  ThreadState* t_;
};

// Exclusive access to another thread's tree, for the snapshot publisher (collect/core/
// snapshot.cpp), by tool_enter()'s handshake: claims_begin() turns g_state from the recording
// state (1 or 5) to 3 (false when not recording); claim_thread() marks `t` claimed, then waits
// (at most timeout_ns) until `t` is outside the tool: from then on `t` cannot enter it (it waits
// in tool_enter_slow) until release_thread(). False when `t` stayed inside (it is not claimed
// then). claims_end() turns g_state back to the recording state unless the run finished meanwhile.
bool claims_begin();
bool claim_thread(ThreadState& t, uint64_t timeout_ns);
void release_thread(ThreadState& t);
void claims_end();
// How often, and for how long in all, threads waited at their entry for a claim to end.
struct ClaimWaits {
  uint64_t count = 0, ns = 0;
};
ClaimWaits claim_waits();

}  // namespace scalea::collect
