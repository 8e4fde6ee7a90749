// Hot-path operations on one thread (recorder.hpp): opening and closing frames below the current
// node, finding a node's child, the construct cache, the statistics of a visit. What every event
// does is inline; the rare cases (a new child, a frame closed out of order) are out of line, so
// that the callbacks' common path stays small.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "clock.hpp"
#include "recorder_types.hpp"
#include "tool_entry.hpp"
#include "../papi/counters.hpp"

namespace scalea::collect {

// Frame keys of the adapters' Region frames: a tag above bit 40 and the adapter's own id below
// (a sync-region or work type, a region id), so that an end event closes a frame of its adapter.
// Team: the runtime's own team inside each team of a league (collect/ompt), recorded as nothing.
// Mutex and Parallel key only the construct cache (construct_child): a mutex frame's key is its
// wait id, a parallel region's its record.
enum class FrameTag : uint64_t {
  Sync = 1,
  Work = 2,
  Masked = 3,
  User = 4,
  Function = 5,
  Mpi = 6,
  Team = 7,
  Io = 8,
  Mutex = 9,
  Parallel = 10
};
inline constexpr uint64_t frame_key(FrameTag tag, uint64_t id = 0) {
  return uint64_t(tag) << 40 | id;
}
// The adapter's own id in a frame key.
inline constexpr uint64_t frame_id(uint64_t key) { return key & ((uint64_t(1) << 40) - 1); }

Node* child_of_slow(ThreadState& t, Node* parent, uint32_t region);
inline Node* child_of(ThreadState& t, Node* parent, uint32_t region) {
  Node* c = parent->last_child;
  if (c && c->region == region) return c;
  c = static_cast<Node*>(t.children.find(uint64_t(parent->index) << 32 | region));
  if (!c) c = child_of_slow(t, parent, region);
  parent->last_child = c;
  return c;
}

inline Node* current_node(const ThreadState& t) {
  return t.stack.empty() ? t.root : t.stack.back().node;
}

inline bool is_team_frame(FrameType type) {
  return type == FrameType::Parallel || type == FrameType::ImplicitTask;
}
// Sets t.worker_team from the stack, after a team frame closed.
void team_frame_changed(ThreadState& t);

// Opens a frame for `node` (nullptr: ghost).
inline Frame& push_frame(ThreadState& t, Node* node, FrameType type, Ticks when, uint64_t key = 0,
                         void* rec = nullptr) {
  Frame& f = t.stack.emplace_back();
  f.node = node;
  f.enter = when;
  f.wait_begin = 0;
  f.task_snap = t.task_exec_total;
  f.key = key;
  f.rec = rec;
  f.type = type;
  f.ctr = 0;
  if (is_team_frame(type))
    t.worker_team = type == FrameType::ImplicitTask ? static_cast<ParallelRecord*>(rec) : nullptr;
  // Counters (collect/papi): one predictable branch when none are measured.
  if (__builtin_expect(counters::g_on, 0) && node && node->counted) counters::on_enter(t, f);
  return f;
}

// Opens a frame for `region` below the current node.
inline Frame& enter(ThreadState& t, uint32_t region, FrameType type, Ticks when, uint64_t key = 0) {
  Node* parent = current_node(t);
  Node* n = (parent && g_measure_on.load(std::memory_order_relaxed)) ? child_of(t, parent, region)
                                                                     : nullptr;
  return push_frame(t, n, type, when, key);
}

// The child of the current node for a construct an adapter met at `code`, whose region follows
// from the adapter's frame key (which names the event and its kind), the code address and the
// current node: a worksharing construct, a barrier, a taskwait. The direct-mapped site cache
// answers constructs met again without a region lookup and a child lookup: a sweep of `omp for`
// loops alternates each loop with its barrier below one node, where last_child always misses.
// `region_of(t, key, code)` gives the region id (interning it) whenever the cache does not
// answer, and also when nothing is recorded (nullptr: a ghost frame), so the region table is the
// same either way. It captures nothing (what it needs comes as arguments): a closure with
// captures is built on the stack before the cache is looked at, on every event.
inline size_t site_slot(const Node* parent, uint64_t key, const void* code) {
  uint64_t h =
      (reinterpret_cast<uintptr_t>(code) ^ key ^ reinterpret_cast<uintptr_t>(parent) >> 4) *
      0x9e3779b97f4a7c15ULL;
  return size_t(h >> (64 - ThreadState::kSiteBits));
}
// The cache's miss, out of line: the callbacks' common path stays small.
template <class RegionOf>
__attribute__((noinline)) Node* construct_child_slow(ThreadState& t, Node* parent,
                                                     ThreadState::Site& site, uint64_t key,
                                                     const void* code, RegionOf region_of) {
  if (!parent || !g_measure_on.load(std::memory_order_relaxed)) {
    region_of(t, key, code);
    return nullptr;
  }
  Node* n = child_of(t, parent, region_of(t, key, code));
  site = ThreadState::Site{parent, code, key, n};
  return n;
}
template <class RegionOf>
inline Node* construct_child(ThreadState& t, uint64_t key, const void* code, RegionOf region_of) {
  Node* parent = current_node(t);
  ThreadState::Site& site = t.sites[site_slot(parent, key, code)];
  // Only recorded constructs are cached, and an empty slot matches no key: a hit has a parent.
  if (site.parent == parent && site.code == code && site.key == key &&
      g_measure_on.load(std::memory_order_relaxed))
    return site.node;
  return construct_child_slow(t, parent, site, key, code, region_of);
}

// Opens a Region frame for a construct (construct_child), keyed by the adapter's frame key.
template <class RegionOf>
inline Frame& enter_construct(ThreadState& t, uint64_t key, const void* code, Ticks when,
                              RegionOf region_of) {
  return push_frame(t, construct_child(t, key, code, region_of), FrameType::Region, when, key);
}

inline void record_visit(Node* n, Ticks d, Ticks task) {
  Stats& s = n->s;
  ++s.visits;
  s.time += d;
  if (d < s.time_min) s.time_min = d;
  if (d > s.time_max) s.time_max = d;
  // Durations fit in 63 bits: the signed conversion is one instruction, the unsigned one several.
  s.time_sumsq += double(int64_t(d)) * double(int64_t(d));
  s.task_exec += task;
}

inline void wait_begin(ThreadState& t, Frame& f, Ticks when) {
  f.wait_begin = when;
  f.wait_task_snap = t.task_exec_total;
}
inline void wait_end(ThreadState& t, Frame& f, Ticks when) {
  if (!f.wait_begin) return;
  if (f.node) {
    Ticks tasks = t.task_exec_total - f.wait_task_snap;
    Ticks d = when > f.wait_begin ? when - f.wait_begin : 0;
    f.node->s.wait += d > tasks ? d - tasks : 0;
  }
  f.wait_begin = 0;
}

// The counter deltas of a frame that closes (collect/papi), out of line: the callbacks that close
// frames keep a small stack frame and few registers when no counters are read.
__attribute__((noinline)) void close_counters(ThreadState& t, const Frame& f);

// Records the visit of a frame of type `type` (f.type) that closes at `when` (its wait already
// ended): the node's statistics, the counter deltas, and for a task its exclusive time in the
// thread's total, so that waits enclosing it can discount it (nested tasks were already counted
// when they ended). Inline with the type as a constant where the caller knows it (leave()): the
// tests the type answers then cost nothing.
__attribute__((always_inline)) inline void close_visit(ThreadState& t, const Frame& f, Ticks when,
                                                       FrameType type) {
  if (type == FrameType::Throttled) return;  // a throttled visit: nothing to record
  if (f.ctr) close_counters(t, f);
  Ticks d = when > f.enter ? when - f.enter : 0;
  Ticks tasks = t.task_exec_total - f.task_snap;
  if (f.node) record_visit(f.node, d, tasks);
  if (type == FrameType::ExplicitTask) t.task_exec_total += d > tasks ? d - tasks : 0;
}

// Closes the top frame, of type `type`. A wait still open when its frame closes (a worker's join
// barrier at the end of the run, a frame closed by unwinding) ends with it.
__attribute__((always_inline)) inline void leave_top(ThreadState& t, Ticks when, FrameType type) {
  Frame& f = t.stack.back();
  if (f.wait_begin) wait_end(t, f, when);
  close_visit(t, f, when, type);
  t.stack.pop_back();
  if (is_team_frame(type)) team_frame_changed(t);
}
// Closes the top frame, whatever its type.
__attribute__((always_inline)) inline void leave_top(ThreadState& t, Ticks when) {
  leave_top(t, when, t.stack.back().type);
}

// Closes the frame at stack position i (normally the top; locks may be released out of order).
void leave_at(ThreadState& t, size_t i, Ticks when);

// The innermost open frame of this type, whatever its key, or -1.
inline long find_innermost(const ThreadState& t, FrameType type) {
  for (long i = long(t.stack.size()) - 1; i >= 0; --i)
    if (t.stack[size_t(i)].type == type) return i;
  return -1;
}

// The innermost open frame of this type and key, or nullptr.
inline Frame* innermost_frame(ThreadState& t, FrameType type, uint64_t key) {
  for (auto f = t.stack.end(); f != t.stack.begin();) {
    --f;
    if (f->type == type && f->key == key) return &*f;
  }
  return nullptr;
}
// Its position on the stack, or -1.
inline long find_frame(const ThreadState& t, FrameType type, uint64_t key) {
  const Frame* f = innermost_frame(const_cast<ThreadState&>(t), type, key);
  return f ? f - t.stack.data() : -1;
}

// The frame of task `r` on thread t's stack (its position), or -1. A task's part opens one frame,
// on the thread that runs it, and the task keeps where (start_task); leave_at keeps that true
// when a frame below it goes. O(1): a task's frame is looked up at every task scheduling point,
// and a recursion of tasks with taskwait (BOTS concom) keeps thousands of frames open, where a
// scan of the stack made the tool's time quadratic in the recursion's depth.
inline long task_frame(const ThreadState& t, const TaskRecord* r) {
  if (r->frame_thread != t.index || r->frame_at >= t.stack.size()) return -1;
  const Frame& f = t.stack[r->frame_at];
  return f.type == FrameType::ExplicitTask && f.rec == r ? long(r->frame_at) : -1;
}

// The innermost frame of this type and key strictly below position `below`, or -1.
inline long find_frame_below(const ThreadState& t, size_t below, FrameType type, uint64_t key) {
  for (long i = long(below) - 1; i >= 0; --i) {
    const Frame& f = t.stack[size_t(i)];
    if (f.type == type && f.key == key) return i;
  }
  return -1;
}

// Closes every frame above position i (they were left open: counted) and then frame i.
void unwind_to(ThreadState& t, size_t i, Ticks when);

// Ends a thread's tree at `end` as the end of the run does: every open frame closes at `end` (a
// worker's frames of a team already released at the release), and the root holds the thread's
// whole time. Recorder::finish() applies it to every thread, the snapshot publisher to its copies.
void close_thread(ThreadState& t, Ticks end);

// Closes the innermost frame of this type and key; counts an anomaly when there is none.
void leave_below_top(ThreadState& t, FrameType type, Ticks when, uint64_t key);
__attribute__((always_inline)) inline void leave(ThreadState& t, FrameType type, Ticks when,
                                                 uint64_t key) {
  if (!t.stack.empty() && t.stack.back().type == type && t.stack.back().key == key)
    leave_top(t, when, type);
  else leave_below_top(t, type, when, key);
}

// A region without duration (flush, cancel, a failed test-lock): one visit, no time.
inline void point_event(ThreadState& t, uint32_t region) {
  Node* parent = current_node(t);
  if (!parent || !g_measure_on.load(std::memory_order_relaxed)) return;
  ++child_of(t, parent, region)->s.visits;
}

// This thread's node on the same call path as `foreign` (a node of any thread, at any depth).
// Foreign nodes never change parent or region once created: the answer is cached per node, and
// the last answer in front of that cache (a worker forked again and again for the same region).
Node* mirror_of_slow(ThreadState& t, Node* foreign);
inline Node* mirror_of(ThreadState& t, Node* foreign) {
  if (foreign && foreign == t.last_mirror.foreign) return t.last_mirror.local;
  return mirror_of_slow(t, foreign);
}

ParallelRecord* alloc_parallel(ThreadState& t);
void release_parallel(ThreadState& t, ParallelRecord* r);
inline TaskRecord* alloc_task(ThreadState& t) { return t.task_pool.take(); }
inline void free_task(ThreadState& t, TaskRecord* r) {
  RecordPool<TaskRecord>::give_back(r, r->pool == &t.task_pool);
}

}  // namespace scalea::collect
