// User and function regions, with throttling (SCALEA_THROTTLE; docs/architecture.md, "Throttled
// call paths"): their frames open and close by a tag without a region lookup, and a call path
// whose mean time stays below the threshold stops recording. Included through recorder.hpp.
#pragma once
#include <atomic>
#include <cstdint>

#include "clock.hpp"
#include "hot_path.hpp"
#include "recorder_types.hpp"

namespace scalea::collect {

// Visits between two throttling checks of a node, per throttled kind; UINT64_MAX = never
// (set at start from the configuration).
extern uint64_t g_throttle_calls_function, g_throttle_calls_user;
extern uint64_t g_throttle_ns;  // a mean inclusive time below this throttles

// Opens a frame for a user or function region below the current node; `tag` (the function's
// address) lets its exit find it without a region lookup. A throttled call path costs a lookup
// and a push: no clock read, no counter read.
inline void enter_region(ThreadState& t, uint32_t region, uint64_t key, const void* tag) {
  Node* parent = current_node(t);
  Node* n = (parent && g_measure_on.load(std::memory_order_relaxed)) ? child_of(t, parent, region)
                                                                     : nullptr;
  if (__builtin_expect(n && n->throttled, 0)) {
    // Written in place: a Frame built on the stack and copied costs a store-forwarding stall.
    Frame& f = t.stack.emplace_back();
    f.node = parent;
    f.wait_begin = 0;
    f.key = key;
    f.rec = const_cast<void*>(tag);
    f.type = FrameType::Throttled;
    f.ctr = 0;
    return;
  }
  push_frame(t, n, FrameType::Region, now(), key, const_cast<void*>(tag));
}

// Checks the throttling rule for `n` (its visits reached the next check).
void throttle_check(ThreadState& t, Node* n);

// Closes the top frame when enter_region opened it with `tag` (a unique tag: a function's
// address), and every `calls` visits of its node checks whether to throttle it. A throttled
// visit ends without a clock read. False when the top frame is another one: the caller then
// looks the region up (an excluded function, an end out of order).
inline bool leave_region_by_tag(ThreadState& t, const void* tag, uint64_t calls) {
  if (t.stack.empty()) return false;
  Frame& f = t.stack.back();
  if (f.rec != tag || (f.type != FrameType::Region && f.type != FrameType::Throttled)) return false;
  if (f.type == FrameType::Throttled) {
    t.stack.pop_back();
    return true;
  }
  Ticks when = now();
  Node* n = f.node;
  leave_top(t, when);
  if (n && n->s.visits - n->throttle_base >= calls) throttle_check(t, n);
  return true;
}

// Closes the top frame when it is a throttled visit with this key (no clock read).
inline bool leave_throttled_top(ThreadState& t, uint64_t key) {
  if (t.stack.empty()) return false;
  const Frame& f = t.stack.back();
  if (f.type != FrameType::Throttled || f.key != key) return false;
  t.stack.pop_back();
  return true;
}

// Closes the innermost frame of a user or function region with this key (a Throttled one goes,
// recording nothing); then, every `calls` visits of its node, checks whether to throttle it.
inline void leave_region(ThreadState& t, uint64_t key, Ticks when, uint64_t calls) {
  long i = long(t.stack.size()) - 1;
  for (; i >= 0; --i) {
    const Frame& f = t.stack[size_t(i)];
    if (f.key == key && (f.type == FrameType::Region || f.type == FrameType::Throttled)) break;
  }
  if (i < 0) {
    ++t.anomalies.unmatched_end;
    return;
  }
  Node* n = t.stack[size_t(i)].type == FrameType::Region ? t.stack[size_t(i)].node : nullptr;
  leave_at(t, size_t(i), when);
  if (n && n->s.visits - n->throttle_base >= calls) throttle_check(t, n);
}

}  // namespace scalea::collect
