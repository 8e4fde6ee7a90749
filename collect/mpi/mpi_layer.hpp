// The PMPI layer of libscalea-mpi.so: what every generated wrapper (mpi_wrappers.cpp, from
// mpi_spec.txt) and the hand-written ones (mpi_layer.cpp) share. Documented in docs/mpi.md.
//
// A wrapped call is a region in the calling thread's sub-DRG, below whatever region the thread is
// in (an OpenMP construct, a user region): one region per call site (kind Mpi, subkind = its MPI
// class, name = the MPI function, address = the return address into the caller, resolved to
// file:line after the run). Per visit: time, bytes sent/received, and the split of the time into
// waiting (`wait`) and transfer (`transfer`) by the latency/bandwidth model calibrated at MPI_Init;
// a call without a partner (only its own rank or MPI_PROC_NULL, or a communicator of one) and a
// nonblocking post never wait: all of their time is transfer.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>

#include "../core/recorder.hpp"

#define SCALEA_EXPORT __attribute__((visibility("default")))

namespace scalea::mpi {

using namespace scalea::collect;

// How a call's time splits into waiting and transfer.
enum class Split : uint8_t {
  Model,     // transfer = min(time, model), the rest is waiting for the partner(s)
  Transfer,  // all transfer: MPI-IO, nonblocking posts (Isend, Irecv, Start, Ibcast, ...)
  None,      // neither: management (control of parallelism)
};

struct FnInfo {
  const char* name;
  format::MpiClass cls;
  Split split;
};
// Generated from mpi_spec.txt.
extern const uint32_t kFunctionCount;
extern const FnInfo kFunctions[];
extern const uint32_t kFn_Init, kFn_Init_thread, kFn_Finalize, kFn_Abort;

// The transfer model: a call's transfer time is steps x latency + bytes x time per byte (ticks);
// the rest of its duration is waiting for the partner(s). Calibrated at MPI_Init (mpi_layer.cpp).
struct Model {
  double lat_ticks = 0;       // one message's latency
  double ticks_per_byte = 0;  // inverse bandwidth
};
extern Model g_model;

// True when no other process can be a partner: MPI_COMM_WORLD has one rank, there is no parent
// (MPI_Comm_spawn), and no intercommunicator to other processes was made (spawn, connect, accept).
extern std::atomic<bool> g_world_alone;

// Per-thread reentrancy guard: set while this thread is inside a wrapped call, so MPI calls the
// MPI library (or a Fortran wrapper) makes on its behalf are not counted twice. No process-wide
// flag: MPI_THREAD_MULTIPLE programs call MPI from many threads at once.
extern thread_local int tl_in_mpi __attribute__((tls_model("initial-exec")));

// Call-site regions. Each thread caches (function id, return address) -> region id in an
// open-addressing table of its own: no lock once the thread has seen the site; a new site takes
// the recorder's lock once per thread (site_region_slow).
struct SiteEntry {
  uintptr_t site;
  uint32_t fn;  // kNoFn: empty slot
  uint32_t id;
};
inline constexpr uint32_t kNoFn = UINT32_MAX;
struct SiteTable {
  SiteEntry* slots;  // nullptr until the thread's first MPI call
  uint32_t mask;     // capacity - 1
  uint32_t used;
};
extern thread_local SiteTable tl_sites __attribute__((tls_model("initial-exec")));

inline size_t site_hash(uintptr_t site, uint32_t fn) {
  uint64_t k = (uint64_t(site) ^ (uint64_t(fn) << 48)) * 0x9e3779b97f4a7c15ULL;
  return size_t(k >> 32);
}
uint32_t site_region_slow(uint32_t fn, uintptr_t site);
inline uint32_t site_region(uint32_t fn, const void* where) {
  uintptr_t site = reinterpret_cast<uintptr_t>(where);
  const SiteTable& c = tl_sites;
  if (__builtin_expect(c.slots != nullptr, 1)) {
    for (size_t i = site_hash(site, fn) & c.mask;; i = (i + 1) & c.mask) {
      const SiteEntry& e = c.slots[i];
      if (e.site == site && e.fn == fn) return e.id;
      if (e.fn == kNoFn) break;
    }
  }
  return site_region_slow(fn, site);
}

// One wrapped call, made from `site` (the return address into the caller's code). Does nothing
// (on() is false) when recording is off or the thread is already inside a wrapped call. Is inside
// the tool (ToolScope) only while it touches the tree, never across the MPI call, so a thread
// blocked in MPI never delays the writer.
class Call {
 public:
  Call(uint32_t fn, const void* site) : fn_(fn) {
    if (!active() || tl_in_mpi) return;
    ToolScope scope(Recorder::get().thread());
    if (!scope) return;
    ThreadState* t = scope.thread();
    tl_in_mpi = 1;
    ++tl_tool_io;  // the files the MPI library reads and writes in this call (collect/io)
    t_ = t;
    rid_ = site_region(fn, site);
    t->flags |= format::kThreadMpiCalls;
    t0_ = now();
    enter(*t, rid_, FrameType::Region, t0_, frame_key(FrameTag::Mpi, rid_));
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call() {
    if (t_) tl_in_mpi = 0, --tl_tool_io;
  }
  bool on() const { return t_ != nullptr; }
  void stop() { t1_ = now(); }
  // Closes the region. `steps` is the number of message latencies the model charges; `alone()`
  // tells whether the call had no partner to wait for (asked only when the model would leave
  // some of the time as waiting): then all of its time is transfer.
  template <class Alone>
  void record(uint64_t sent, uint64_t recv, uint32_t steps, Alone&& alone) {
    if (!t_) return;
    Ticks d = t1_ > t0_ ? t1_ - t0_ : 0, transfer = 0;
    Split split = kFunctions[fn_].split;
    if (split == Split::Transfer) {
      transfer = d;
    } else if (split == Split::Model) {
      double model =
          double(steps) * g_model.lat_ticks + double(sent + recv) * g_model.ticks_per_byte;
      transfer = model >= double(d) ? d : Ticks(model);
      if (transfer < d && (g_world_alone.load(std::memory_order_relaxed) || alone())) transfer = d;
    }
    close(sent, recv, split == Split::None ? 0 : d - transfer, transfer);
  }
  void record(uint64_t sent, uint64_t recv, uint32_t steps) {
    record(sent, recv, steps, [] { return false; });
  }

 private:
  void close(uint64_t sent, uint64_t recv, Ticks wait, Ticks transfer);
  ThreadState* t_ = nullptr;
  uint32_t fn_, rid_ = 0;
  Ticks t0_ = 0, t1_ = 0;
};

// ---- helpers for the clauses of mpi_spec.txt (all through PMPI: never recorded) ---------------

inline uint64_t tsz(MPI_Datatype dt) {
  if (dt == MPI_DATATYPE_NULL) return 0;
  int s = 0;
  if (PMPI_Type_size(dt, &s) != MPI_SUCCESS || s < 0) return 0;
  return uint64_t(s);
}
inline uint64_t nb(int count, MPI_Datatype dt) { return count > 0 ? uint64_t(count) * tsz(dt) : 0; }
// The bytes of a message to or from `peer`: none when the peer is MPI_PROC_NULL (nothing moves;
// Score-P counts none either).
inline uint64_t to_peer(int peer, uint64_t bytes) { return peer == MPI_PROC_NULL ? 0 : bytes; }
inline int csz(MPI_Comm comm) {
  int n = 1;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS) return 1;
  return n;
}
inline int crank(MPI_Comm comm) {
  int r = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &r) != MPI_SUCCESS) return 0;
  return r;
}
inline bool isroot(int root, MPI_Comm comm) { return root == MPI_ROOT || root == crank(comm); }
inline uint64_t nbv(const int* counts, MPI_Datatype dt, MPI_Comm comm) {
  if (!counts) return 0;
  uint64_t sum = 0;
  for (int i = 0, n = csz(comm); i < n; ++i) sum += counts[i] > 0 ? uint64_t(counts[i]) : 0;
  return sum * tsz(dt);
}
inline uint64_t nbw(const int* counts, const MPI_Datatype* dts, MPI_Comm comm) {
  if (!counts || !dts) return 0;
  uint64_t sum = 0;
  for (int i = 0, n = csz(comm); i < n; ++i) sum += nb(counts[i], dts[i]);
  return sum;
}
// Bytes a completed receive delivered; count x type when the status is not available (Fortran).
inline uint64_t rbytes(const MPI_Status* st, MPI_Datatype dt, int count) {
  if (!st) return nb(count, dt);
  if (st->MPI_SOURCE == MPI_PROC_NULL) return 0;
  int n = 0;
  if (PMPI_Get_count(st, dt, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
    return nb(count, dt);
  return uint64_t(n) * tsz(dt);
}
// The source a receive matched: the status's, when the call named MPI_ANY_SOURCE and the status is
// available (C); else `source` as given.
inline int src(int source, const MPI_Status* st) {
  return source == MPI_ANY_SOURCE && st ? st->MPI_SOURCE : source;
}
// True when the call's only partners are the calling rank itself or MPI_PROC_NULL (MPI_ANY_SOURCE
// counts as itself in a communicator of one): nobody else to wait for. In an intercommunicator a
// rank names the remote group, so only MPI_PROC_NULL counts.
inline bool self_only(MPI_Comm comm, std::initializer_list<int> peers) {
  if (comm == MPI_COMM_NULL) return false;
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return false;
  int me = inter ? MPI_PROC_NULL : crank(comm);
  for (int p : peers) {
    if (p == MPI_PROC_NULL || p == me) continue;
    if (p == MPI_ANY_SOURCE && !inter && csz(comm) == 1) continue;
    return false;
  }
  return true;
}
// True for an intracommunicator of one rank (a collective over it has nobody to wait for).
inline bool comm_alone(MPI_Comm comm) {
  int inter = 0;
  return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&
         csz(comm) == 1;
}
// The process gained partners outside MPI_COMM_WORLD (MPI_Comm_spawn, connect, accept).
inline void world_grew() { g_world_alone.store(false, std::memory_order_relaxed); }
// ceil(log2 p): message steps of a tree-shaped collective over p ranks.
inline uint32_t lg(MPI_Comm comm) {
  uint32_t p = uint32_t(csz(comm)), s = 0;
  while ((1u << s) < p) ++s;
  return s;
}
// Persistent requests: bytes are counted at each MPI_Start, from what the *_init call declared.
void pst_add(const MPI_Request* req, uint64_t sent, uint64_t recv);
void pst_del(const MPI_Request* req);
uint64_t pst_sent(const MPI_Request* reqs, int n);
uint64_t pst_recv(const MPI_Request* reqs, int n);

// The real Fortran binding (pmpi_xxx_ of the MPI library's Fortran layer).
void* fortran_symbol(const char* name);

}  // namespace scalea::mpi
