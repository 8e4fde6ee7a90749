// The OMPT adapter: translates libomp's callbacks into recorder operations. Every callback is a
// static function named after its event; all registrations come from one table (below), and the
// support level the runtime grants for each is kept in the experiment.
//
// Event orders this file relies on were observed on libomp 14 and 19 (docs/architecture.md,
// "OMPT event orders"): a worker reports the end of the join barrier and of its implicit task only
// when it is woken for the next parallel region, so those two ends are clipped to the moment the
// master left the region. A league of teams (host `teams`) is reported as a parallel region with
// the league flag whose threads' implicit tasks are initial tasks (one per team): it is recorded as
// a team of its own, of region kind teams.
#include <dlfcn.h>
#include <link.h>
#include <omp-tools.h>
#include <unwind.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "callbacks.hpp"
#include "online_tune.hpp"

#include "../core/log.hpp"
#include "../core/recorder.hpp"
#include "../core/writer.hpp"

namespace scalea::collect::ompt {

const void* caller_after_runtime(void* const* frames, int n, uintptr_t runtime_lo,
                                 uintptr_t runtime_hi, uintptr_t tool_lo, uintptr_t tool_hi,
                                 const void* fallback) {
  auto inside = [](const void* p, uintptr_t lo, uintptr_t hi) {
    auto a = reinterpret_cast<uintptr_t>(p);
    return a >= lo && a < hi;
  };
  int i = 0;
  while (i < n && !inside(frames[i], runtime_lo, runtime_hi)) ++i;
  if (i < n) {
    while (i < n && inside(frames[i], runtime_lo, runtime_hi)) ++i;
    return i < n ? frames[i] : fallback;
  }
  for (i = 0; i < n; ++i)
    if (!inside(frames[i], tool_lo, tool_hi)) return frames[i];
  return fallback;
}

namespace {

using format::BarrierFlavour;
using format::LoopSchedule;

ompt_set_callback_t g_set_callback = nullptr;

// The OpenMP runtime's code, to recognize code addresses that point into it instead of the caller.
uintptr_t g_runtime_lo = 0, g_runtime_hi = 0;
inline bool in_runtime(const void* p) {
  auto a = reinterpret_cast<uintptr_t>(p);
  return a == 0 || (a >= g_runtime_lo && a < g_runtime_hi);
}

// The return addresses on the calling thread's stack, innermost first, this function's caller
// the first; at most `max`. What glibc's backtrace() gives, from the unwinder linked into the
// tool (-static-libgcc): backtrace() loads libgcc_s.so for its unwinder at its first call, and a
// library needing libgcc_s has it loaded at start, about 0.1 ms of every process's start either
// way (a C or Fortran program does not load it otherwise).
struct Frames {
  void** out;
  int max;
  int n;  // -1 while at this function's own frame
};
_Unwind_Reason_Code add_frame(_Unwind_Context* context, void* arg) {
  auto* f = static_cast<Frames*>(arg);
  if (f->n >= 0) f->out[f->n] = reinterpret_cast<void*>(_Unwind_GetIP(context));
  return ++f->n == f->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}
__attribute__((noinline)) int stack_frames(void** out, int max) {
  Frames f{out, max, -1};
  _Unwind_Backtrace(add_frame, &f);
  // The unwinder reports a null address above the outermost frame.
  if (f.n > 1 && !out[f.n - 1]) --f.n;
  return std::max(f.n, 0);
}

// The caller of a lock routine when libomp reports an address inside itself (it does on a lock's
// first, initializing use): caller_after_runtime() of a backtrace. A backtrace costs
// microseconds, but this happens about once per lock and thread.
uintptr_t g_tool_lo = 0, g_tool_hi = 0;
const void* caller_outside_runtime(const void* fallback) {
  void* frames[48];
  int n = stack_frames(frames, 48);
  return caller_after_runtime(frames, n, g_runtime_lo, g_runtime_hi, g_tool_lo, g_tool_hi,
                              fallback);
}
inline const void* user_code(const void* codeptr) {
  return in_runtime(codeptr) ? caller_outside_runtime(codeptr) : codeptr;
}

// The address a test-lock call reported at mutex_acquire, for its mutex_acquired on this thread.
thread_local const void* t_test_code = nullptr;

// The address range of the loaded object holding `inside`, and its path (the program's own is the
// executable's). dladdr() would say the path too, but it also scans the object's symbols for the
// nearest one: 20 us for libomp's at the tool's start.
void module_range(const void* inside, uintptr_t& lo_out, uintptr_t& hi_out,
                  std::string* path = nullptr) {
  struct Query {
    uintptr_t addr, lo = 0, hi = 0;
    const char* name = nullptr;
  } q{reinterpret_cast<uintptr_t>(inside)};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
          uintptr_t b = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
          lo = std::min(lo, b);
          hi = std::max(hi, uintptr_t(b + info->dlpi_phdr[i].p_memsz));
        }
        if (q->addr < lo || q->addr >= hi) return 0;
        q->lo = lo;
        q->hi = hi;
        q->name = info->dlpi_name;
        return 1;
      },
      &q);
  lo_out = q.lo;
  hi_out = q.hi;
  if (path && q.hi) *path = q.name && *q.name ? std::string(q.name) : executable_path();
}

// A thread blocked acquiring a lock reports nothing else: when it reports another event while
// its innermost frame still waits for an acquisition, that acquisition was a test that failed
// (libomp 14 reports omp_test_lock's acquire as a plain lock). The frame goes, unrecorded.
inline void drop_failed_test(ThreadState& t) {
  if (!t.waited_for_lock) return;
  if (!t.stack.empty() && t.stack.back().type == FrameType::Mutex && t.stack.back().wait_begin)
    t.stack.pop_back();
}

// A callback inside the tool (ToolScope): false when recording is off. Every callback first drops
// the frame of a test-lock that failed (FailedTest::Drop), but the two that may end a lock wait
// (mutex_acquired, nest_lock) and a sync region's wait: its sync region's begin came just before
// and dropped it, as did the scheduling of any task run in the wait (FailedTest::Keep).
enum class FailedTest { Drop, Keep };
class CallbackScope : public ToolScope {
 public:
  __attribute__((always_inline)) explicit CallbackScope(FailedTest failed = FailedTest::Drop)
      : ToolScope(event_thread()) {
    if (failed == FailedTest::Drop && thread()) drop_failed_test(*thread());
  }
};

inline ParallelRecord* parallel_of(ompt_data_t* d) {
  return d ? static_cast<ParallelRecord*>(d->ptr) : nullptr;
}

// The parallel region the thread currently works in (innermost), or nullptr.
ParallelRecord* enclosing_parallel(const ThreadState& t) {
  for (long i = long(t.stack.size()) - 1; i >= 0; --i) {
    const Frame& f = t.stack[size_t(i)];
    if (is_team_frame(f.type)) return static_cast<ParallelRecord*>(f.rec);
  }
  return nullptr;
}

// The end of an event a worker may report late (its implicit task, an implicit barrier and its
// wait; `p` its team): clipped to the team's release. Once the master has let the team go
// (release set) the end is the release, which lies before now: no clock is read then.
Ticks late_end(const ParallelRecord* p) {
  if (p)
    if (Ticks rel = p->release.load(std::memory_order_acquire)) return rel;
  return now();
}

// Inside each team of a league libomp forks a team of its own (the thread limit's hot team, to
// run the team's nested parallel regions), reported as a parallel region with no code address
// right where the team's initial task began. It is no construct of the program: its frame is a
// Throttled one, whose node is the team's (what runs inside attaches to the teams region) and
// which records nothing; its parallel_data holds this marker, so that its implicit tasks open
// nothing either.
constexpr uint64_t kRuntimeTeamKey = frame_key(FrameTag::Team);
ParallelRecord g_runtime_team_marker{};
ParallelRecord* const kRuntimeTeam = &g_runtime_team_marker;

bool is_runtime_team_frame(const Frame& f) {
  return f.type == FrameType::Throttled && f.key == kRuntimeTeamKey;
}

// Whether a parallel region beginning now is a league team's own: no code address, and the
// thread's innermost frame is its team's frame in a league (the league's master frame on the
// thread that started the league, a member's implicit task on the others).
bool is_runtime_team(const ThreadState& t, int flags, const void* codeptr) {
  if (codeptr || (flags & ompt_parallel_league) || t.stack.empty()) return false;
  const Frame& top = t.stack.back();
  return is_team_frame(top.type) && static_cast<const ParallelRecord*>(top.rec)->league;
}

}  // namespace

// A worker joining a new team may still hold the frames of a team whose master already left
// (libomp reports a worker's join-barrier end late, and with nested teams sometimes not before
// the worker is handed to another team). Those frames end at that team's release.
void close_released_teams(ThreadState& t, Ticks when) {
  for (;;) {
    long i = find_innermost(t, FrameType::ImplicitTask);
    if (i < 0) return;
    auto* p = static_cast<ParallelRecord*>(t.stack[size_t(i)].rec);
    Ticks rel = p->release.load(std::memory_order_acquire);
    if (!rel) return;  // the team is still running: this thread is nested inside it
    Ticks end = rel < when ? rel : when;
    while (t.stack.size() > size_t(i) + 1) leave_at(t, t.stack.size() - 1, end);
    leave_at(t, size_t(i), end);
    release_parallel(t, p);
  }
}

// ---- thread and parallel region -----------------------------------------------------------------

void on_thread_begin(ompt_thread_t type, ompt_data_t*) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  if (type == ompt_thread_initial) t->flags |= format::kThreadInitial;
}

void on_thread_end(ompt_data_t*) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  t->flags |= format::kThreadEnded;
  t->sched_end = read_schedstat(0);
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t* parallel_data,
                       unsigned requested, int flags, const void* codeptr) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  Ticks when = now();
  if (is_runtime_team(*t, flags, codeptr)) {
    Node* team = current_node(*t);
    Frame& f = t->stack.emplace_back();
    f.node = team;
    f.enter = when;
    f.wait_begin = 0;
    f.key = kRuntimeTeamKey;
    f.rec = nullptr;
    f.type = FrameType::Throttled;
    f.ctr = 0;
    parallel_data->ptr = kRuntimeTeam;
    return;
  }
  // The region follows from its kind (league or not), its address and the current node: the
  // construct cache answers a region forked again from the same place (construct_child).
  bool league = flags & ompt_parallel_league;
  Node* n = construct_child(*t, frame_key(FrameTag::Parallel, league), codeptr,
                            [](ThreadState& t, uint64_t key, const void* code) {
                              RegionKind kind =
                                  frame_id(key) ? RegionKind::Teams : RegionKind::Parallel;
                              return Recorder::get().region(t, kind, 0, code);
                            });
  ParallelRecord* p = alloc_parallel(*t);
  push_frame(*t, n, FrameType::Parallel, when, reinterpret_cast<uintptr_t>(p), p);
  p->master_node = n;
  p->begin = when;
  p->release.store(0, std::memory_order_relaxed);
  // One reference per thread of the requested team; the master returns the ones the runtime did
  // not start when it learns the actual size. Workers only ever drop theirs (no shared increment).
  p->requested = requested ? requested : 1;
  p->refs.store(int(p->requested), std::memory_order_relaxed);
  p->league = league;
  p->codeptr = codeptr;
  p->tune = nullptr;
  if (__builtin_expect(online_tune::g_on, 0))
    p->tune = online_tune::parallel_begin(*t, codeptr, n ? n->region : UINT32_MAX, league);
  parallel_data->ptr = p;
}

// The region that ends is the thread's innermost open one: parallel regions nest per thread.
// parallel_data is not trusted here: libomp may return a nested team's structure to its pool
// before reporting parallel_end, and another thread may already have reused it for a new region
// (seen with 3-deep nesting), so it can hold that region's record. Nor is it cleared, for the
// same reason: it may no longer be ours.
void on_parallel_end(ompt_data_t*, ompt_data_t*, int, const void*) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  Ticks when = now();
  long i = find_innermost(*t, FrameType::Parallel);
  for (long k = long(t->stack.size()) - 1; k > i; --k) {
    if (!is_runtime_team_frame(t->stack[size_t(k)])) continue;
    unwind_to(*t, size_t(k), when);  // a league team's own team: nothing recorded
    return;
  }
  if (i < 0) {
    ++t->anomalies.unmatched_end;
    return;
  }
  Frame& f = t->stack[size_t(i)];
  auto* p = static_cast<ParallelRecord*>(f.rec);
  if (__builtin_expect(p->tune != nullptr, 0)) online_tune::parallel_end(*t, p->tune);
  // The master's implicit task ended (release set, by this thread) when the join began.
  Ticks join_begin = p->release.load(std::memory_order_relaxed);
  if (f.node && join_begin) f.node->s.join += when > join_begin ? when - join_begin : 0;
  if (size_t(i) + 1 == t->stack.size()) leave_top(*t, when, FrameType::Parallel);
  else unwind_to(*t, size_t(i), when);
  release_parallel(*t, p);
}

namespace {
// Whether an initial task is a team's in a league (the program's own initial task is not: its
// root is the tree root). Its begin comes with the league's record, and marks its task data for
// its end, which comes without parallel data.
bool is_league_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                    ompt_data_t* task_data) {
  if (!task_data) return false;
  if (endpoint == ompt_scope_begin) {
    ParallelRecord* p = parallel_of(parallel_data);
    task_data->ptr = p && p != kRuntimeTeam && p->league ? p : nullptr;
    return task_data->ptr != nullptr;
  }
  bool league = task_data->ptr != nullptr;
  task_data->ptr = nullptr;
  return league;
}

// An implicit task's begin and end, each in its own function (as sync_region_begin/end).
__attribute__((noinline)) void implicit_task_begin(ParallelRecord* p, unsigned actual_parallelism,
                                                   unsigned index) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t || !p || p == kRuntimeTeam) return;
  Ticks when = now();
  long master =
      index == 0 ? find_frame(*t, FrameType::Parallel, reinterpret_cast<uintptr_t>(p)) : -1;
  if (master >= 0) {
    Frame& f = t->stack[size_t(master)];
    if (f.node) {
      f.node->s.fork += when > p->begin ? when - p->begin : 0;
      f.node->s.team_size += actual_parallelism;
    }
    Recorder::get().note_team_size(actual_parallelism);
    if (actual_parallelism < p->requested) {
      for (unsigned k = actual_parallelism; k < p->requested; ++k) release_parallel(*t, p);
    }
    return;
  }
  close_released_teams(*t, when);
  if (__builtin_expect(t->created == 0, 0)) t->created = p->begin;
  Node* n = g_measure_on.load(std::memory_order_relaxed) ? mirror_of(*t, p->master_node) : nullptr;
  push_frame(*t, n, FrameType::ImplicitTask, when, reinterpret_cast<uintptr_t>(p), p);
  if (n) n->s.fork += when > p->begin ? when - p->begin : 0;
}

// libomp passes no parallel data at the end; the innermost task context tells which one.
__attribute__((noinline)) void implicit_task_end() {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  for (long i = long(t->stack.size()) - 1; i >= 0; --i) {
    Frame& f = t->stack[size_t(i)];
    // A league team's own team ends (its parallel_end closes its frame).
    if (is_runtime_team_frame(f)) return;
    if (f.type == FrameType::Parallel) {  // master: the join starts now
      static_cast<ParallelRecord*>(f.rec)->release.store(now(), std::memory_order_release);
      return;
    }
    if (f.type == FrameType::ImplicitTask) {
      auto* p = static_cast<ParallelRecord*>(f.rec);  // a worker
      Ticks when = late_end(p);
      if (size_t(i) + 1 == t->stack.size()) leave_top(*t, when, FrameType::ImplicitTask);
      else unwind_to(*t, size_t(i), when);
      release_parallel(*t, p);
      return;
    }
  }
  ++t->anomalies.unmatched_end;
}
}  // namespace

// A league's teams begin with initial tasks (`index`: the team), a parallel region's threads with
// implicit tasks: both make the thread a member of its team. A league team's own team
// (kRuntimeTeam) opens nothing.
void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                      ompt_data_t* task_data, unsigned actual_parallelism, unsigned index,
                      int flags) {
  if ((flags & ompt_task_initial) && !is_league_task(endpoint, parallel_data, task_data)) return;
  if (endpoint == ompt_scope_begin)
    implicit_task_begin(parallel_of(parallel_data), actual_parallelism, index);
  else implicit_task_end();
}

// ---- synchronization ----------------------------------------------------------------------------

namespace {
// A region's identity as the region table keys it.
struct CodeRegion {
  RegionKind kind;
  uint16_t subkind;
  const void* code;
};

// Barriers whose end a worker may report late (at the next fork): their ends are clipped.
bool is_implicit_barrier(ompt_sync_region_t kind) {
  switch (kind) {
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
    case ompt_sync_region_barrier_teams: return true;
    default: return false;
  }
}

// The end of a sync region or its wait, clipped as a late end when it is an implicit barrier's.
// Only a worker has a team to clip to: the team is tested first, which spares a master (and a
// thread at one thread) the test of the kind.
Ticks sync_end_time(const ThreadState& t, ompt_sync_region_t kind) {
  return t.worker_team && is_implicit_barrier(kind) ? late_end(t.worker_team) : now();
}

CodeRegion classify_sync(const ThreadState& t, ompt_sync_region_t kind, const void* codeptr) {
  switch (kind) {
    case ompt_sync_region_barrier_explicit: return {RegionKind::BarrierExplicit, 0, codeptr};
    case ompt_sync_region_barrier_implementation:
      return {RegionKind::BarrierImplementation, 0, codeptr};
    case ompt_sync_region_taskwait: return {RegionKind::Taskwait, 0, codeptr};
    case ompt_sync_region_taskgroup: return {RegionKind::Taskgroup, 0, codeptr};
    case ompt_sync_region_reduction: return {RegionKind::Reduction, 0, codeptr};
    case ompt_sync_region_barrier_implicit_workshare:
      return {RegionKind::BarrierImplicit, uint16_t(BarrierFlavour::Workshare), codeptr};
    case ompt_sync_region_barrier_teams: {
      // libomp 19: the teams' address on the league's first thread, none on the others.
      ParallelRecord* p = enclosing_parallel(t);
      if (p && p->league && codeptr == nullptr) codeptr = p->codeptr;
      return {RegionKind::BarrierImplicit, uint16_t(BarrierFlavour::Teams), codeptr};
    }
    default: {
      // barrier, barrier_implicit, barrier_implicit_parallel. libomp 14 reports the join barrier
      // as plain "implicit", with the parallel construct's address on the master and no address
      // on workers: both become the parallel region's join barrier (the teams barrier in a
      // league, which libomp 14 reports the same way).
      ParallelRecord* p = enclosing_parallel(t);
      uint16_t flavour = kind == ompt_sync_region_barrier_implicit_parallel
                             ? uint16_t(BarrierFlavour::Parallel)
                             : uint16_t(BarrierFlavour::Unknown);
      if (p && (codeptr == nullptr || codeptr == p->codeptr)) {
        codeptr = p->codeptr;
        flavour = uint16_t(p->league ? BarrierFlavour::Teams : BarrierFlavour::Parallel);
      }
      return {RegionKind::BarrierImplicit, flavour, codeptr};
    }
  }
}
}  // namespace

namespace {
// A sync region's begin and end, each in its own function: the end keeps fewer values alive
// across its rare calls, so it saves fewer registers than one function for both would.
__attribute__((noinline)) void sync_region_begin(ompt_sync_region_t kind, const void* codeptr) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  // The region follows from the kind, the address and the current node (construct_child): an
  // implicit barrier's parallel region is the nearest parallel region on the node's call path.
  enter_construct(*t, frame_key(FrameTag::Sync, uint64_t(kind)), codeptr, now(),
                  [](ThreadState& t, uint64_t key, const void* code) {
                    auto kind = ompt_sync_region_t(frame_id(key));
                    CodeRegion s = classify_sync(t, kind, code);
                    return Recorder::get().region(t, s.kind, s.subkind, s.code);
                  });
}

__attribute__((noinline)) void sync_region_end(ompt_sync_region_t kind) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  leave(*t, FrameType::Region, sync_end_time(*t, kind), frame_key(FrameTag::Sync, uint64_t(kind)));
}
}  // namespace

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                    ompt_data_t*, const void* codeptr) {
  if (endpoint == ompt_scope_begin) sync_region_begin(kind, codeptr);
  else sync_region_end(kind);
}

void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                         ompt_data_t*, const void*) {
  CallbackScope scope(FailedTest::Keep);
  ThreadState* t = scope.thread();
  if (!t) return;
  Frame* f = innermost_frame(*t, FrameType::Region, frame_key(FrameTag::Sync, uint64_t(kind)));
  if (!f) return;
  if (endpoint == ompt_scope_begin) wait_begin(*t, *f, now());
  else wait_end(*t, *f, sync_end_time(*t, kind));
}

void on_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel,
                  ompt_data_t* task, const void* codeptr) {
  on_sync_region(kind, endpoint, parallel, task, codeptr);
}

// ---- worksharing and masked ---------------------------------------------------------------------

namespace {
// The loop work types of OpenMP 5.2, which the omp-tools.h of older runtimes does not define.
enum : int {
  kWorkLoopStatic = 10,
  kWorkLoopDynamic = 11,
  kWorkLoopGuided = 12,
  kWorkLoopOther = 13,
};

// The region kind and subkind of a work type.
CodeRegion classify_work(ompt_work_t wstype, const void* codeptr) {
  switch (int(wstype)) {
    case ompt_work_sections: return {RegionKind::Sections, 0, codeptr};
    case ompt_work_single_executor:
    case ompt_work_single_other: return {RegionKind::Single, 0, codeptr};
    case ompt_work_workshare: return {RegionKind::Workshare, 0, codeptr};
    case ompt_work_distribute: return {RegionKind::Distribute, 0, codeptr};
    case ompt_work_taskloop: return {RegionKind::Taskloop, 0, codeptr};
    case ompt_work_scope: return {RegionKind::Scope, 0, codeptr};
    // OpenMP 5.2 loop work types (newer runtimes): the schedule becomes the subkind.
    case kWorkLoopStatic: return {RegionKind::Loop, uint16_t(LoopSchedule::Static), codeptr};
    case kWorkLoopDynamic: return {RegionKind::Loop, uint16_t(LoopSchedule::Dynamic), codeptr};
    case kWorkLoopGuided: return {RegionKind::Loop, uint16_t(LoopSchedule::Guided), codeptr};
    case kWorkLoopOther: return {RegionKind::Loop, uint16_t(LoopSchedule::Other), codeptr};
    default: return {RegionKind::Loop, 0, codeptr};  // ompt_work_loop
  }
}
}  // namespace

namespace {
// Begin and end of one construct report different addresses: frames match on the work type.
uint64_t work_key(ompt_work_t wstype) {
  int type = int(wstype);
  if (type == ompt_work_single_other) type = ompt_work_single_executor;
  return frame_key(FrameTag::Work, uint64_t(type));
}

// A worksharing construct's begin and end in functions of their own, as sync_region_begin/end.
__attribute__((noinline)) void work_begin(ompt_work_t wstype, uint64_t count, const void* codeptr) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  // The key's work type names the region: a single's two work types share one (classify_work).
  Frame& f = enter_construct(*t, work_key(wstype), codeptr, now(),
                             [](ThreadState& t, uint64_t key, const void* code) {
                               CodeRegion w = classify_work(ompt_work_t(frame_id(key)), code);
                               return Recorder::get().region(t, w.kind, w.subkind, w.code);
                             });
  if (!f.node) return;
  if (wstype == ompt_work_single_executor) ++f.node->s.executed;
  else if (wstype != ompt_work_single_other) f.node->s.iterations += count;
}

// The key a distribute end closes. libomp (14 and 19) reports the end of the loop of a `distribute
// parallel for` with the distribute work type (the loop's ident is the combined construct's): when
// the thread's innermost worksharing frame in its current team is a loop, that is what ended; the
// distribute frame lies below the loop's parallel region.
uint64_t distribute_end_key(const ThreadState& t) {
  uint64_t key = work_key(ompt_work_distribute);
  for (size_t i = t.stack.size(); i > 0; --i) {
    const Frame& f = t.stack[i - 1];
    if (is_team_frame(f.type)) break;
    if (f.type != FrameType::Region || (f.key >> 40) != uint64_t(FrameTag::Work)) continue;
    int type = int(frame_id(f.key));
    bool loop = type == ompt_work_loop || (type >= kWorkLoopStatic && type <= kWorkLoopOther);
    return loop ? f.key : key;
  }
  return key;
}

__attribute__((noinline)) void work_end(ompt_work_t wstype) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  uint64_t key = wstype == ompt_work_distribute ? distribute_end_key(*t) : work_key(wstype);
  leave(*t, FrameType::Region, now(), key);
}
}  // namespace

namespace {
// A work event with the on-line tuner on (SCALEA_TUNE=on), out of line: the tuner's part, then
// the recorder's. on_work only tests the flag and jumps here, so that with the tuner off it
// stays a test and a tail call.
__attribute__((noinline)) void tuned_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint,
                                          ompt_data_t* parallel_data, uint64_t count,
                                          const void* codeptr) {
  {
    CallbackScope scope;
    ThreadState* t = scope.thread();
    ParallelRecord* p = parallel_of(parallel_data);
    if (t && p && p != kRuntimeTeam && p->tune)
      online_tune::work(*t, p->tune, int(wstype), endpoint == ompt_scope_begin, count, codeptr);
  }
  if (endpoint == ompt_scope_end) work_end(wstype);
  else work_begin(wstype, count, codeptr);
}
}  // namespace

void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
             ompt_data_t*, uint64_t count, const void* codeptr) {
  if (__builtin_expect(online_tune::g_on, 0))
    return tuned_work(wstype, endpoint, parallel_data, count, codeptr);
  if (endpoint == ompt_scope_end) work_end(wstype);
  else work_begin(wstype, count, codeptr);
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, const void* codeptr) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  Ticks when = now();
  if (endpoint == ompt_scope_begin)
    enter(*t, Recorder::get().region(*t, RegionKind::Masked, 0, codeptr), FrameType::Region, when,
          frame_key(FrameTag::Masked));
  else leave(*t, FrameType::Region, when, frame_key(FrameTag::Masked));
}

void on_dispatch(ompt_data_t*, ompt_data_t*, ompt_dispatch_t, ompt_data_t) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  if (Node* n = current_node(*t)) ++n->s.dispatches;
}

// ---- mutual exclusion ---------------------------------------------------------------------------

namespace {
RegionKind mutex_kind(ompt_mutex_t kind) {
  switch (kind) {
    case ompt_mutex_nest_lock:
    case ompt_mutex_test_nest_lock: return RegionKind::NestLock;
    case ompt_mutex_critical: return RegionKind::Critical;
    case ompt_mutex_atomic: return RegionKind::Atomic;
    case ompt_mutex_ordered: return RegionKind::Ordered;
    default: return RegionKind::Lock;
  }
}

bool is_test(ompt_mutex_t kind) {
  return kind == ompt_mutex_test_lock || kind == ompt_mutex_test_nest_lock;
}

// The node of a mutex construct below the current node. An address in the program is the
// construct cache's key (construct_child): a lock taken again at the same place costs no region
// lookup and no child lookup. An address inside the runtime (a lock's first, initializing use)
// stands for whichever caller a backtrace finds, so it is not a key: looked up each time.
__attribute__((noinline)) Node* mutex_child_in_runtime(ThreadState& t, ompt_mutex_t kind,
                                                       const void* codeptr) {
  uint32_t rid = Recorder::get().region(t, mutex_kind(kind), 0, user_code(codeptr));
  Node* parent = current_node(t);
  return parent && g_measure_on.load(std::memory_order_relaxed) ? child_of(t, parent, rid)
                                                                : nullptr;
}
// The construct cache's answer, out of line; a cacheable answer becomes the thread's last lock
// site, which a lock taken again and again at one place finds without the cache's hash.
__attribute__((noinline)) Node* mutex_child_slow(ThreadState& t, ompt_mutex_t kind,
                                                 const void* codeptr) {
  if (in_runtime(codeptr)) return mutex_child_in_runtime(t, kind, codeptr);
  Node* n = construct_child(t, frame_key(FrameTag::Mutex, uint64_t(kind)), codeptr,
                            [](ThreadState& t, uint64_t key, const void* code) {
                              auto kind = mutex_kind(ompt_mutex_t(frame_id(key)));
                              return Recorder::get().region(t, kind, 0, code);
                            });
  if (n) t.last_lock = {current_node(t), codeptr, uint32_t(kind), n};
  return n;
}
inline Node* mutex_child(ThreadState& t, ompt_mutex_t kind, const void* codeptr) {
  const auto& last = t.last_lock;
  if (last.code == codeptr && last.kind == uint32_t(kind) && last.parent == current_node(t) &&
      g_measure_on.load(std::memory_order_relaxed))
    return last.node;
  return mutex_child_slow(t, kind, codeptr);
}

// A test-lock's acquire and acquired, out of line: the plain lock's path keeps fewer registers.
// A test that fails reports no further event, so a test opens no frame until it succeeds.
__attribute__((noinline)) void test_acquire(const void* codeptr) {
  CallbackScope scope;
  if (scope.thread()) t_test_code = codeptr;
}
__attribute__((noinline)) void test_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id,
                                             const void* codeptr) {
  CallbackScope scope(FailedTest::Keep);
  ThreadState* t = scope.thread();
  if (!t) return;
  Ticks when = now();
  const void* code = in_runtime(codeptr) ? t_test_code : codeptr;
  push_frame(*t, mutex_child(*t, kind, code), FrameType::Mutex, when, wait_id);
}
}  // namespace

void on_mutex_acquire(ompt_mutex_t kind, unsigned, unsigned, ompt_wait_id_t wait_id,
                      const void* codeptr) {
  if (is_test(kind)) return test_acquire(codeptr);
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  Ticks when = now();
  Frame& f = push_frame(*t, mutex_child(*t, kind, codeptr), FrameType::Mutex, when, wait_id);
  f.wait_begin = when;  // wait_begin(): the wait begins as the frame opens
  f.wait_task_snap = f.task_snap;
  t->waited_for_lock = true;
}

void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr) {
  if (is_test(kind)) return test_acquired(kind, wait_id, codeptr);
  CallbackScope scope(FailedTest::Keep);
  ThreadState* t = scope.thread();
  if (!t) return;
  Ticks when = now();
  if (Frame* f = innermost_frame(*t, FrameType::Mutex, wait_id)) wait_end(*t, *f, when);
}

void on_mutex_released(ompt_mutex_t, ompt_wait_id_t wait_id, const void*) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  leave(*t, FrameType::Mutex, now(), wait_id);
}

void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void*) {
  CallbackScope scope(FailedTest::Keep);
  ThreadState* t = scope.thread();
  if (!t) return;
  // libomp reports mutex_acquire for every omp_set_nest_lock; for a re-acquisition by the owner
  // it then reports nest_lock(begin) instead of mutex_acquired, and nest_lock(end) at the inner
  // unset. The re-acquisition's frame (the innermost with this wait id) closes here: the owner
  // never waits, and the outer acquisition stays open until mutex_released.
  if (endpoint != ompt_scope_begin) return;
  long i = find_frame(*t, FrameType::Mutex, wait_id);
  long outer = i > 0 ? find_frame_below(*t, size_t(i), FrameType::Mutex, wait_id) : -1;
  if (i >= 0 && outer >= 0) leave_at(*t, size_t(i), now());
}

void on_flush(ompt_data_t*, const void* codeptr) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  // A flush is a point event (point_event), with its last node kept: the spin-wait of a pipeline
  // flushes at one place until its flag changes, and costs no region lookup then.
  Node* parent = current_node(*t);
  if (!parent || !g_measure_on.load(std::memory_order_relaxed)) return;
  auto& last = t->last_flush;
  if (last.parent != parent || last.code != codeptr) {
    last.node = child_of(*t, parent, Recorder::get().region(*t, RegionKind::Flush, 0, codeptr));
    last.parent = parent;
    last.code = codeptr;
  }
  ++last.node->s.visits;
}

void on_cancel(ompt_data_t*, int, const void* codeptr) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  Recorder& rec = Recorder::get();
  point_event(*t, rec.region(*t, RegionKind::Cancel, 0, codeptr));
}

// ---- tasks --------------------------------------------------------------------------------------

void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t* new_task, int flags, int,
                    const void* codeptr) {
  if (flags & (ompt_task_initial | ompt_task_implicit)) return;
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  Recorder& rec = Recorder::get();
  TaskRecord* r = alloc_task(*t);
  Node* creator = current_node(*t);
  bool on = creator && g_measure_on.load(std::memory_order_relaxed);
  r->creator_node = on ? creator : nullptr;
  r->region = rec.region(*t, RegionKind::Task, 0, codeptr);
  r->started = false;
  r->frame_thread = UINT32_MAX;  // no frame yet
  new_task->ptr = r;
  if (on) ++creator->s.tasks_created;
}

namespace {
void start_task(ThreadState& t, TaskRecord* r, Ticks when) {
  Node* n = r->creator_node ? child_of(t, mirror_of(t, r->creator_node), r->region) : nullptr;
  push_frame(t, n, FrameType::ExplicitTask, when, reinterpret_cast<uintptr_t>(r), r);
  r->frame_thread = t.index;
  r->frame_at = uint32_t(t.stack.size() - 1);
}
}  // namespace

void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  CallbackScope scope;
  ThreadState* t = scope.thread();
  if (!t) return;
  Ticks when = now();
  auto* done = prior ? static_cast<TaskRecord*>(prior->ptr) : nullptr;
  bool finished =
      status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_detach;
  if (done && finished) {
    long i = task_frame(*t, done);
    if (i >= 0) unwind_to(*t, size_t(i), when);
    else ++t->anomalies.unmatched_end;
    if (status != ompt_task_detach) {
      prior->ptr = nullptr;
      free_task(*t, done);
    }
  }
  auto* r = next ? static_cast<TaskRecord*>(next->ptr) : nullptr;
  long next_frame = r && r->started ? task_frame(*t, r) : -1;
  if (done && !finished) {
    // A suspended task whose thread goes back down its stack (to the implicit task, or to a task
    // it had interrupted) has left the thread: an untied task's part ends at each task scheduling
    // point and the task resumes later, on any thread, as a new part. Its frames close now, so
    // that the tasks this thread runs meanwhile are not recorded inside it. A task suspended at a
    // taskwait or taskyield while the thread runs another task on top of it keeps its frames.
    long i = task_frame(*t, done);
    if (i >= 0 && (!r || (next_frame >= 0 && next_frame < i))) unwind_to(*t, size_t(i), when);
  }
  if (!r) return;
  if (!r->started) {
    r->started = true;
    r->ran_on = t->index;
    start_task(*t, r, when);
  } else if (next_frame < 0) {
    // The next part of a task whose last part ended: a new fragment in its creation context.
    if (r->ran_on != t->index) ++t->anomalies.foreign_resume;
    r->ran_on = t->index;
    start_task(*t, r, when);
  }
}

// ---- registration -------------------------------------------------------------------------------

namespace {
const char* support_name(int result) {
  switch (result) {
    case ompt_set_never: return "never";
    case ompt_set_impossible: return "impossible";
    case ompt_set_sometimes: return "sometimes";
    case ompt_set_sometimes_paired: return "sometimes_paired";
    case ompt_set_always: return "always";
    default: return "error";
  }
}

// Every event the tool listens to, once, with its callback type (omp-tools.h) and whether light
// mode (SCALEA_OPENMP=light) keeps it: the registration below assigns on_<event> to a pointer of
// that type, so a callback whose signature does not match its event does not compile. Light mode
// keeps what the six classes need at the granularity of parallel regions: the regions, their
// implicit tasks, barriers and their waits (also taskwait and taskgroup), and tasks. It drops the
// events of constructs inside a region (worksharing, masked, dispatch, mutexes, flush, cancel,
// reductions), which fine-grained codes raise millions of times.
#define SCALEA_OMPT_EVENTS(X)                             \
  X(thread_begin, ompt_callback_thread_begin_t, true)     \
  X(thread_end, ompt_callback_thread_end_t, true)         \
  X(parallel_begin, ompt_callback_parallel_begin_t, true) \
  X(parallel_end, ompt_callback_parallel_end_t, true)     \
  X(implicit_task, ompt_callback_implicit_task_t, true)   \
  X(sync_region, ompt_callback_sync_region_t, true)       \
  X(sync_region_wait, ompt_callback_sync_region_t, true)  \
  X(reduction, ompt_callback_sync_region_t, false)        \
  X(work, ompt_callback_work_t, false)                    \
  X(masked, ompt_callback_masked_t, false)                \
  X(dispatch, ompt_callback_dispatch_t, false)            \
  X(mutex_acquire, ompt_callback_mutex_acquire_t, false)  \
  X(mutex_acquired, ompt_callback_mutex_t, false)         \
  X(mutex_released, ompt_callback_mutex_t, false)         \
  X(nest_lock, ompt_callback_nest_lock_t, false)          \
  X(flush, ompt_callback_flush_t, false)                  \
  X(cancel, ompt_callback_cancel_t, false)                \
  X(task_create, ompt_callback_task_create_t, true)       \
  X(task_schedule, ompt_callback_task_schedule_t, true)

int tool_initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  g_set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!g_set_callback) {
    log_message("the OpenMP runtime offers no ompt_set_callback; OpenMP events are not recorded");
    return 0;
  }
  SourceInfo& info = Recorder::get().openmp_info();
  Ticks ready = now();
  std::string path;
  std::vector<std::pair<std::string, std::string>> granted;
  module_range(reinterpret_cast<const void*>(lookup), g_runtime_lo, g_runtime_hi, &path);
  module_range(reinterpret_cast<const void*>(&tool_initialize), g_tool_lo, g_tool_hi);
  bool light = Recorder::get().config().openmp_light;
  // Not registered in light mode: "off" in meta.json's list of callbacks.
#define SCALEA_REGISTER(event, type, in_light)                                                 \
  {                                                                                            \
    type typed = &on_##event;                                                                  \
    granted.emplace_back(                                                                      \
        #event, light && !(in_light)                                                           \
                    ? "off"                                                                    \
                    : support_name(g_set_callback(ompt_callback_##event,                       \
                                                  reinterpret_cast<ompt_callback_t>(typed)))); \
  }
  SCALEA_OMPT_EVENTS(SCALEA_REGISTER)
#undef SCALEA_REGISTER
  std::lock_guard<std::mutex> lock(Recorder::get().mutex());  // the snapshot publisher reads it
  info.runtime_ready = ready;
  info.runtime_path = path;
  info.callbacks.insert(info.callbacks.end(), granted.begin(), granted.end());
  info.light = light;
  online_tune::start(Recorder::get().config(), !light);
  return 1;
}

void tool_finalize(ompt_data_t*) { Recorder::get().finish("openmp-shutdown"); }

// Whether a parallel construct is initializing the runtime (its fork entry is on the stack), not
// an API call: then everything from here to the team's start is the runtime starting. Once per
// process. The entry is the outermost of the runtime's frames above the tool's (the program
// called it, and it called ompt_start_tool): only that frame's symbol is looked up, since
// dladdr() scans the runtime's symbol table for each address (0.17 M instructions for the five
// frames of libomp 14's start, the largest part of the tool's start-up).
bool started_by_fork() {
  void* frames[32];
  int n = stack_frames(frames, 32);
  uintptr_t tool_lo = 0, tool_hi = 0, lo = 0, hi = 0;
  module_range(reinterpret_cast<const void*>(&started_by_fork), tool_lo, tool_hi);
  auto within = [](const void* p, uintptr_t a, uintptr_t b) {
    return reinterpret_cast<uintptr_t>(p) >= a && reinterpret_cast<uintptr_t>(p) < b;
  };
  int i = 0;
  while (i < n && within(frames[i], tool_lo, tool_hi)) ++i;
  if (i == n) return false;
  module_range(frames[i], lo, hi);
  while (i + 1 < n && within(frames[i + 1], lo, hi)) ++i;
  Dl_info dl;
  if (!dladdr(frames[i], &dl) || !dl.dli_sname) return false;
  std::string_view name(dl.dli_sname);
  return name == "__kmpc_fork_call" || name == "__kmpc_fork_teams" ||
         name.rfind("GOMP_parallel", 0) == 0 || name.rfind("GOMP_teams", 0) == 0;
}

}  // namespace
}  // namespace scalea::collect::ompt

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(
    unsigned int, const char* runtime_version) {
  using namespace scalea::collect;
  using namespace scalea::collect::ompt;
  if (!Recorder::get().start("ompt")) return nullptr;  // disabled: the program runs untouched
  Ticks init = now();
  bool by_fork = started_by_fork();
  {
    std::lock_guard<std::mutex> lock(Recorder::get().mutex());  // the snapshot publisher reads it
    SourceInfo& info = Recorder::get().openmp_info();
    info.runtime = runtime_version ? runtime_version : "";
    info.runtime_init = init;
    info.init_by_fork = by_fork;
  }
  static ompt_start_tool_result_t result = {&tool_initialize, &tool_finalize, {0}};
  return &result;
}
