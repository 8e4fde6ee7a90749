// The recorder: the plain C++ core every event source (OMPT, PMPI, user API, function hooks)
// feeds. Each thread owns a calling-context tree of regions (its sub-DRG) and a stack of open
// frames. The hot path (enter/leave) takes no lock and does not allocate once the thread has seen
// a call path; memory grows with distinct call paths, never with run time.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "affinity.hpp"
#include "clock.hpp"
#include "config.hpp"
#include "../papi/counters.hpp"
#include "scalea/format.hpp"

namespace scalea::collect {

using format::RegionKind;
inline constexpr uint32_t kMaxCounters = counters::kMax;
inline constexpr uint32_t kFilteredRegion = UINT32_MAX;

template <format::MetricType>
struct StatField {
  using value_type = uint64_t;
  static constexpr value_type initial(format::MetricMerge m) {
    return m == format::MetricMerge::Min ? UINT64_MAX : 0;
  }
};
template <>
struct StatField<format::MetricType::F64> {
  using value_type = double;
  static constexpr value_type initial(format::MetricMerge m) {
    return m == format::MetricMerge::Min ? __DBL_MAX__ : 0;
  }
};

// Per-node statistics: one field per core metric (format.hpp, SCALEA_CORE_METRICS), in its order,
// of its type. A minimum starts at the largest value. Times are in clock ticks until the
// experiment is written (writer.cpp converts them by the metric's unit).
struct Stats {
#define SCALEA_X(id, name, type, merge, unit, scope, field) \
  StatField<format::MetricType::type>::value_type field =   \
      StatField<format::MetricType::type>::initial(format::MetricMerge::merge);
  SCALEA_CORE_METRICS(SCALEA_X)
#undef SCALEA_X
};

struct Node {
  Node* parent = nullptr;
  Node* last_child = nullptr;  // the child entered last: a loop body finds itself here
  uint32_t region = 0;
  uint32_t index = 0;      // creation order within the thread; a parent precedes its children
  uint32_t owner = 0;      // index of the thread whose tree holds this node
  bool counted = false;    // its region kind reads counters (SCALEA_COUNTER_REGIONS)
  bool throttled = false;  // no longer recorded (SCALEA_THROTTLE): its frames are Throttled
  Stats s;
  uint64_t throttle_base = 0;  // visits at the last throttling check
  uint64_t counters[kMaxCounters] = {};
};

// Throttled: a visit of a throttled call path. Its node is the parent's node (what runs inside
// attaches there), it records nothing and read no clock; rec holds the code address or name.
enum class FrameType : uint8_t { Region, Parallel, ImplicitTask, ExplicitTask, Mutex, Throttled };

struct Frame {
  // Leaves the fields unset: whoever pushes a frame writes them (a vector's emplace_back() would
  // otherwise zero the whole frame first, on every event).
  Frame() {}
  Node* node;  // nullptr: a "ghost" frame, opened while recording was off; records nothing
  Ticks enter;
  Ticks wait_begin;  // 0 when not waiting
  Ticks task_snap;   // thread's task_exec_total at enter
  Ticks wait_task_snap;  // thread's task_exec_total at wait_begin (set with it)
  uint64_t key;  // mutex wait id, or 0
  void* rec;     // ParallelRecord* for Parallel/ImplicitTask, TaskRecord* for ExplicitTask
  FrameType type;
  uint32_t ctr;  // counter snapshot slot taken at enter (collect/papi), 0 = none
};
// A power of two: the callbacks turn stack addresses into positions and back on every event.
static_assert(sizeof(Frame) == 64);

// Records shared between threads (a team's parallel region, an explicit task) come from the pool
// of the thread that creates them and go back to that pool, whichever thread frees them: most
// parallel records are freed by a worker, most tasks by the thread that ran them. Kept in the
// freeing thread's pool instead, they would pile up there while the creator allocated new ones
// (memory growing with the number of regions run). A record freed by another thread is pushed
// onto the owner's return stack (many producers, CAS); the owner takes the whole stack at once
// when its own list runs dry (one consumer, exchange: no ABA). R has `next_free` and `pool`.
template <class R>
struct RecordPool {
  static constexpr int kBlock = 32;
  R* local = nullptr;                             // only the owner touches it
  uint32_t blocks = 0;                            // blocks allocated so far (owner only)
  alignas(64) std::atomic<R*> returned{nullptr};  // other threads push here
  char pad[64 - sizeof(std::atomic<R*>)];

  R* take() {
    if (!local) local = returned.exchange(nullptr, std::memory_order_acquire);
    if (!local) {
      R* block = new R[kBlock];
      ++blocks;
      for (int i = 0; i < kBlock; ++i) {
        block[i].pool = this;
        block[i].next_free = local;
        local = &block[i];
      }
    }
    R* r = local;
    local = r->next_free;
    // The next record was most likely last written by another thread (freed there): fetch it for
    // writing now, a region ahead, instead of stalling on it at the next fork.
    if (local) __builtin_prefetch(local, 1);
    return r;
  }
  // `mine`: the calling thread owns this pool.
  static void give_back(R* r, bool mine) {
    RecordPool* p = r->pool;
    if (mine) {
      r->next_free = p->local;
      p->local = r;
      return;
    }
    R* head = p->returned.load(std::memory_order_relaxed);
    do r->next_free = head;
    while (!p->returned.compare_exchange_weak(head, r, std::memory_order_release,
                                              std::memory_order_relaxed));
  }
};

// Shared between the master and the workers of one parallel region; lives in ompt_data_t::ptr.
struct ParallelRecord {
  ParallelRecord* next_free;
  RecordPool<ParallelRecord>* pool;  // the pool of the thread that allocated it (the master)
  Node* master_node;           // the region's node in the master's tree (nullptr: not recorded)
  Ticks begin;                 // parallel_begin on the master
  std::atomic<Ticks> release;  // master's implicit task end: when the join barrier let go
  std::atomic<int> refs;       // one per thread of the requested team, dropped as each ends
  unsigned requested;          // team size asked for at parallel_begin
  uint32_t region;
  const void* codeptr;
};

// One explicit task; lives in its ompt_data_t::ptr from creation to completion.
struct TaskRecord {
  TaskRecord* next_free;
  RecordPool<TaskRecord>* pool;  // the pool of the creating thread
  Node* creator_node;            // creation context, in the creator's tree (nullptr: not recorded)
  uint32_t region;
  uint32_t ran_on;  // index of the thread that ran its last part
  bool started;
};

// Open-addressing map from a 64-bit key to a pointer; grows only when a new key is inserted.
class PtrMap {
 public:
  PtrMap();
  ~PtrMap();
  void* find(uint64_t key) const {
    size_t mask = cap_ - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (!slots_[i].value) return nullptr;
      if (slots_[i].key == key) return slots_[i].value;
    }
  }
  void insert(uint64_t key, void* value);
  size_t size() const { return size_; }
  size_t bytes() const { return cap_ * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t key;
    void* value;
  };
  static size_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return size_t(k);
  }
  void grow();
  Slot* slots_;
  size_t cap_, size_ = 0;
};

struct RegionCacheEntry {
  uintptr_t addr;     // code address, or the name pointer for named regions
  uint32_t kind_sub;  // kind << 16 | subkind
  uint32_t id;
  const char* name;  // stable copy of the name for named regions, to detect a reused buffer
};

struct Anomalies {
  uint64_t unmatched_end = 0;   // an end event with no open begin (dropped)
  uint64_t unclosed = 0;        // frames still open at the end of their task or the run
  uint64_t foreign_resume = 0;  // a suspended task resumed on another thread
};

// A call path this thread stopped recording (SCALEA_THROTTLE), for meta.json.
struct ThrottleEvent {
  Node* node;
  Ticks at;         // when
  uint64_t visits;  // visits counted so far (all the node will have)
  double mean_ns;   // their mean inclusive time
};

struct ThreadState {
  uint32_t index = 0;
  uint64_t os_tid = 0;
  uint32_t flags = 0;
  Ticks born = 0;     // when the tool first saw the thread
  Ticks created = 0;  // a worker: when the parallel region it was created for began (0: unknown)
  Node* root = nullptr;
  std::vector<Frame> stack;
  // The team whose release clips this thread's late-reported ends: the record of its innermost
  // team frame when that is a worker's implicit task, else nullptr (it is the master of its
  // innermost team, or in none). Kept by push_frame and by closing frames (team_frame_changed).
  ParallelRecord* worker_team = nullptr;
  Ticks task_exec_total = 0;  // exclusive time of explicit tasks this thread has run
  // Set when the thread first waits to acquire a lock: until then no frame of a failed test-lock
  // can be on its stack, and its events skip looking for one (collect/ompt, drop_failed_test).
  bool waited_for_lock = false;
  std::atomic<int> in_callback{0};
  // Set by the snapshot publisher (collect/core/snapshot.cpp) while it copies this thread's tree:
  // the thread then waits at its next entry into the tool until the copy is done (claim_thread).
  std::atomic<int> snap_claim{0};
  Anomalies anomalies;
  std::vector<ThrottleEvent> throttled;  // grows once per throttled call path
  // The CPUs the thread may run on: read when it registers and again when the run ends (the
  // OpenMP runtime may bind it after it started); the last one seen.
  CpuMask cpus;
  // The scheduler's account when the thread registered and when the run ended (or the thread did).
  SchedStat sched_begin, sched_end;

  // Node storage: chunks never move, so nodes can be shared by pointer with other threads. A
  // chunk's nodes are constructed one by one as they are created (new_node): a chunk is 60 KB,
  // and constructing it whole wrote its 15 pages at once, page faults every thread paid when it
  // registered (its root is its first node) for nodes most threads never have.
  std::vector<Node*> chunks;
  uint32_t node_count = 0;
  PtrMap children;  // (parent index, region) -> Node*
  PtrMap mirror;    // another thread's Node* -> this thread's node on the same call path
  std::vector<uint32_t> mirror_path;  // mirror_of's scratch: a call path's regions, leaf first
  std::vector<RegionCacheEntry> region_cache;  // open addressing, power-of-two size
  // The node of this thread's last flush, by where it was (enclosing node, code address): the
  // spin-waits of pipelined codes flush millions of times at one place (on_flush).
  struct {
    const Node* parent = nullptr;
    const void* code = nullptr;
    Node* node = nullptr;
  } last_flush;
  uint32_t region_cache_used = 0;
  // The node of a construct by where it began (construct_child): direct-mapped.
  struct Site {
    const Node* parent = nullptr;
    const void* code = nullptr;
    uint64_t key = 0;
    Node* node = nullptr;
  };
  static constexpr int kSiteBits = 8;
  Site sites[1 << kSiteBits];

  RecordPool<ParallelRecord> parallel_pool;
  RecordPool<TaskRecord> task_pool;
  counters::ThreadCounters* ctr = nullptr;  // this thread's event sets (collect/papi), lazily

  Node* new_node(Node* parent, uint32_t region);
  // Storage for kChunk nodes, none constructed.
  static Node* new_chunk();
  Node* node_at(uint32_t i) const { return &chunks[i / kChunk][i % kChunk]; }
  static constexpr uint32_t kChunk = 256;
};

// Says once (unless SCALEA_QUIET) when the program is built with -finstrument-functions but its
// hook calls bind to another library's empty hooks (libc's): the tool was loaded after the program
// (by the OpenMP runtime), so its functions would silently not be recorded. collect/user.
void check_function_hooks(const Config& config);

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

// Frame keys of the adapters' Region frames: a tag above bit 40 and the adapter's own id below
// (a sync-region or work type, a region id), so that an end event closes a frame of its adapter.
enum class FrameTag : uint64_t { Sync = 1, Work = 2, Masked = 3, User = 4, Function = 5, Mpi = 6 };
inline constexpr uint64_t frame_key(FrameTag tag, uint64_t id = 0) {
  return uint64_t(tag) << 40 | id;
}
// The adapter's own id in a frame key.
inline constexpr uint64_t frame_id(uint64_t key) { return key & ((uint64_t(1) << 40) - 1); }

// ---- hot-path operations on one thread ---------------------------------------------------------

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
  uint64_t h = (reinterpret_cast<uintptr_t>(code) ^ key ^ reinterpret_cast<uintptr_t>(parent) >> 4) *
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

// Records the visit of a frame that closes at `when` (its wait already ended): the node's
// statistics, the counter deltas, and for a task its exclusive time in the thread's total, so that
// waits enclosing it can discount it (nested tasks were already counted when they ended).
inline void close_visit(ThreadState& t, const Frame& f, Ticks when) {
  if (f.type == FrameType::Throttled) return;  // a throttled visit: nothing to record
  if (f.ctr) counters::on_leave(t, f);
  Ticks d = when > f.enter ? when - f.enter : 0;
  Ticks tasks = t.task_exec_total - f.task_snap;
  if (f.node) record_visit(f.node, d, tasks);
  if (f.type == FrameType::ExplicitTask) t.task_exec_total += d > tasks ? d - tasks : 0;
}

// Closes the top frame. A wait still open when its frame closes (a worker's join barrier at the
// end of the run, a frame closed by unwinding) ends with it.
__attribute__((always_inline)) inline void leave_top(ThreadState& t, Ticks when) {
  Frame& f = t.stack.back();
  if (f.wait_begin) wait_end(t, f, when);
  close_visit(t, f, when);
  bool team = is_team_frame(f.type);
  t.stack.pop_back();
  if (team) team_frame_changed(t);
}

// ---- user and function regions, with throttling (SCALEA_THROTTLE) -----------------------------

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

// Closes the frame at stack position i (normally the top; locks may be released out of order).
void leave_at(ThreadState& t, size_t i, Ticks when);

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

// Closes the innermost frame of this type and key; counts an anomaly when there is none.
void leave_below_top(ThreadState& t, FrameType type, Ticks when, uint64_t key);
__attribute__((always_inline)) inline void leave(ThreadState& t, FrameType type, Ticks when,
                                                uint64_t key) {
  if (!t.stack.empty() && t.stack.back().type == type && t.stack.back().key == key)
    leave_top(t, when);
  else leave_below_top(t, type, when, key);
}

// A region without duration (flush, cancel, a failed test-lock): one visit, no time.
inline void point_event(ThreadState& t, uint32_t region) {
  Node* parent = current_node(t);
  if (!parent || !g_measure_on.load(std::memory_order_relaxed)) return;
  ++child_of(t, parent, region)->s.visits;
}

// This thread's node on the same call path as `foreign` (a node of any thread, at any depth).
// Foreign nodes never change parent or region once created: the answer is cached per node.
Node* mirror_of(ThreadState& t, Node* foreign);

ParallelRecord* alloc_parallel(ThreadState& t);
void release_parallel(ThreadState& t, ParallelRecord* r);
inline TaskRecord* alloc_task(ThreadState& t) { return t.task_pool.take(); }
inline void free_task(ThreadState& t, TaskRecord* r) {
  RecordPool<TaskRecord>::give_back(r, r->pool == &t.task_pool);
}

// ---- the process-wide recorder -----------------------------------------------------------------

struct RegionInfo {
  RegionKind kind;
  uint16_t subkind;
  uintptr_t address;  // code address (0 when none)
  std::string name, file, function;
  uint32_t line = 0;
};

// Metadata an event source adds to the experiment (e.g. the OMPT runtime and callbacks granted).
struct SourceInfo {
  std::string runtime;                                         // runtime version string
  std::string runtime_path;                                    // file of the runtime library
  std::vector<std::pair<std::string, std::string>> callbacks;  // name -> support level
  bool light = false;  // light mode (SCALEA_OPENMP=light): only the events light mode keeps
  // When the OpenMP runtime started initializing (it asked for a tool, ompt_start_tool: libomp
  // does at the program's first OpenMP construct or call), when it was ready (it initialized the
  // tool), and whether a parallel construct started it (else an API call such as
  // omp_get_max_threads did, and the program may have run serial code before its first fork).
  Ticks runtime_init = 0, runtime_ready = 0;
  bool init_by_fork = false;
  // Written under Recorder::mutex() while the program runs: the snapshot publisher reads it.
};

class Recorder {
 public:
  static Recorder& get() {
    Recorder* r = instance_.load(std::memory_order_acquire);
    return __builtin_expect(r != nullptr, 1) ? *r : create();
  }

  // Starts recording (idempotent; any event source may call it first). False when disabled.
  bool start(const char* origin);
  // Writes the experiment once; later calls do nothing. `why` names the trigger (for the log).
  void finish(const char* why);

  __attribute__((returns_nonnull)) ThreadState* thread() {
    if (__builtin_expect(tls_ != nullptr, 1)) return tls_;
    return register_thread();
  }
  __attribute__((returns_nonnull)) ThreadState* register_thread();
  // The calling thread's state if it has registered, else nullptr; needs no recorder instance.
  static ThreadState* registered_thread() { return tls_; }

  // Region ids: per-thread cache in front of the shared table (the table takes a lock).
  // Functions excluded by SCALEA_FUNCTIONS_INCLUDE/_EXCLUDE get kFilteredRegion.
  uint32_t region(ThreadState& t, RegionKind kind, uint16_t subkind, const void* code);
  uint32_t named_region(ThreadState& t, RegionKind kind, const char* name, const char* file,
                        int line, const char* function, uint16_t subkind = 0);
  // A named region at a code address: one region per (kind, subkind, name, address), e.g. an MPI
  // call site (the MPI function's name, the return address into its caller). Takes the lock and
  // caches nothing: the caller keeps its own per-thread cache (collect/mpi).
  uint32_t site_region(RegionKind kind, uint16_t subkind, const char* name, const void* code);
  // Whether nodes of this region read counters (its kind is in SCALEA_COUNTER_REGIONS).
  bool region_reads_counters(uint32_t region);

  // An event source that writes the experiment itself (the MPI layer unifies across ranks): called
  // by finish() once the threads' trees are closed, instead of write_experiment. Returns false to
  // let finish() write the single-process experiment after all (e.g. MPI never initialized).
  using FinishHook = bool (*)(Recorder& rec, const char* why);
  void set_finish_hook(FinishHook hook) { finish_hook_ = hook; }
  // Call paths this process throttled (SCALEA_THROTTLE), over all its threads (after finish()).
  size_t throttled_count() const;
  // Says once how many call paths were throttled (nothing when none, or SCALEA_QUIET); `where`
  // qualifies them, e.g. " on 3 of 4 ranks".
  void say_throttled(size_t count, const std::string& where = "") const;
  // The experiment directory chosen at start (SCALEA_OUTPUT or the default name).
  const std::string& output_dir() const { return output_dir_; }

  void note_team_size(uint32_t n) {
    uint32_t cur = max_team_.load(std::memory_order_relaxed);
    while (n > cur && !max_team_.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {}
  }

  const Config& config() const { return config_; }
  SourceInfo& openmp_info() { return openmp_; }
  std::mutex& mutex() { return mu_; }

  // For the writer.
  const std::vector<ThreadState*>& threads() const { return threads_; }
  const std::vector<RegionInfo>& regions() const { return regions_; }
  const ClockCalibration& clock() const { return clock_; }
  uint32_t max_team() const { return max_team_.load(); }
  std::string start_time_iso, end_time_iso;
  // Time the process ran before the tool started (only when it started late, e.g. loaded by the
  // OpenMP runtime at its first construct): from /proc, 10 ms resolution. Added to the initial
  // thread's root.
  uint64_t pre_start_ns = 0;
  bool start_estimated = false;
  // The machine's online CPUs and the CPUs the process may use (the initial thread's set when
  // the tool started), for meta.json "affinity".
  long cpus_online = 0;
  CpuMask process_cpus;
  // The command line when the tool started: programs may overwrite argv later (BOTS does).
  std::vector<std::string> command;
  // Set before finish() when the run ends abnormally (a signal): written to meta.json.
  std::vector<std::string> ending_notes;
  bool ending_complete = true;
  int rank = -1;

 private:
  Recorder() = default;
  uint32_t region_slow(ThreadState& t, RegionKind kind, uint16_t subkind, uintptr_t addr,
                       const char* name, const char* file, int line, const char* function);
  // The id of the region with this identity key, added with `info` when new (mu_ held).
  uint32_t intern_region(std::string key, RegionInfo info);
  // Writes this process's experiment and says where (finish(), without an event source's hook).
  void write_and_say(const char* why);

  static Recorder& create();
  static std::atomic<Recorder*> instance_;
  // initial-exec: one %fs-relative load instead of a __tls_get_addr call per event. The library is
  // usually dlopen()ed by the OpenMP runtime; its 16 bytes of TLS fit glibc's static TLS surplus.
  // __thread, not thread_local: a plain pointer with no dynamic initialization, so an access from
  // another translation unit does not call a TLS init function first (two tests per callback).
  static __thread ThreadState* tls_ __attribute__((tls_model("initial-exec")));
  std::mutex mu_;
  std::once_flag started_;
  bool start_ok_ = false;
  std::atomic<bool> finished_{false};
  Config config_;
  ClockCalibration clock_;
  std::vector<ThreadState*> threads_;
  bool threads_closed_ = false;  // set by finish() under mu_: no thread is added after
  std::vector<RegionInfo> regions_;
  std::unordered_map<std::string, uint32_t> region_keys_;
  std::deque<std::string> stable_names_;  // never moves: the thread caches point into it
  std::atomic<uint32_t> max_team_{0};
  SourceInfo openmp_;
  std::string output_dir_;
  FinishHook finish_hook_ = nullptr;
};

// The calling thread for an event, registered if need be; nullptr when recording is off. A thread
// already registered skips the state check here: tool_enter (ToolScope) makes it anyway. The
// first event of a thread registers it out of line: the callbacks' common path then keeps no
// value alive across that call, and saves fewer registers.
__attribute__((noinline)) ThreadState* event_thread_first();
inline ThreadState* event_thread() {
  if (ThreadState* t = Recorder::registered_thread()) return t;
  return event_thread_first();
}

}  // namespace scalea::collect
