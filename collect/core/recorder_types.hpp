// The recorder's data (recorder.hpp): per-node statistics, the nodes of a thread's calling-context
// tree, the frames of its stack, the records a team or a task shares between threads and their
// pools, and the state each thread owns.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "affinity.hpp"
#include "clock.hpp"
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
  Ticks wait_begin;      // 0 when not waiting
  Ticks task_snap;       // thread's task_exec_total at enter
  Ticks wait_task_snap;  // thread's task_exec_total at wait_begin (set with it)
  uint64_t key;          // mutex wait id, or 0
  void* rec;             // ParallelRecord* for Parallel/ImplicitTask, TaskRecord* for ExplicitTask
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
  bool league;                 // a league of teams (its threads: the teams' initial threads)
  const void* codeptr;
  void* tune;  // the on-line tuner's slot of the region (collect/ompt/online_tune.hpp), or nullptr
};

// One explicit task; lives in its ompt_data_t::ptr from creation to completion.
struct TaskRecord {
  TaskRecord* next_free;
  RecordPool<TaskRecord>* pool;  // the pool of the creating thread
  Node* creator_node;            // creation context, in the creator's tree (nullptr: not recorded)
  uint32_t region;
  uint32_t ran_on;  // index of the thread that ran its last part
  // Where its last part's frame was opened: that thread's index and the frame's position on its
  // stack (task_frame checks that the frame is still there).
  uint32_t frame_thread;
  uint32_t frame_at;
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

// A region this thread had not left when the run ended (a signal, or exit() called while it was
// inside): its time ends there, for meta.json ("open_at_end").
struct OpenAtEnd {
  Node* node;
  Ticks open;  // from the thread's entry to the end
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
  // The on-line tuner (SCALEA_TUNE, collect/ompt/online_tune.cpp): the region execution whose
  // loops this thread last timed (slot and generation), its index among that execution's
  // threads, when its current loop began (ns); the slot of the region it encountered.
  void* tune_slot = nullptr;
  uint64_t tune_gen = 0;
  uint32_t tune_index = 0;
  uint64_t tune_begin = 0;
  void* tune_master = nullptr;
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
  std::vector<OpenAtEnd> open_at_end;    // filled when the run closes the thread (close_thread)
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
  struct {
    const Node* foreign = nullptr;
    Node* local = nullptr;
  } last_mirror;                   // the last answer of mirror_of
  std::vector<Node*> mirror_path;  // mirror_of's scratch: the foreign nodes walked, leaf first
  std::vector<RegionCacheEntry> region_cache;  // open addressing, power-of-two size
  // The node of this thread's last flush, by where it was (enclosing node, code address): the
  // spin-waits of pipelined codes flush millions of times at one place (on_flush).
  struct {
    const Node* parent = nullptr;
    const void* code = nullptr;
    Node* node = nullptr;
  } last_flush;
  // The node of this thread's last lock site, by where (enclosing node, code address, mutex kind;
  // collect/ompt, mutex_child): set only for a recorded node.
  struct {
    const Node* parent = nullptr;
    const void* code = nullptr;
    uint32_t kind = 0;
    Node* node = nullptr;
  } last_lock;
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
  void* samples = nullptr;     // this thread's sampled call paths and timer (sampler.cpp), or none
  uint32_t sampled_nodes = 0;  // nodes of kind `sampled` its paths became at the end

  Node* new_node(Node* parent, uint32_t region);
  // Storage for kChunk nodes, none constructed.
  static Node* new_chunk();
  Node* node_at(uint32_t i) const { return &chunks[i / kChunk][i % kChunk]; }
  static constexpr uint32_t kChunk = 256;
};

}  // namespace scalea::collect
