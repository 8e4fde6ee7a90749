// The PMPI layer of libscalea-mpi.so: what every generated wrapper (mpi_wrappers.cpp, from
// mpi_spec.txt) and the hand-written ones (mpi_layer.cpp) share. Documented in docs/mpi.md.
//
// A wrapped call is a region in the calling thread's sub-DRG, below whatever region the thread is
// in (an OpenMP construct, a user region): one region per call site (kind Mpi, subkind = its MPI
// class, name = the MPI function, address = the return address into the caller, resolved to
// file:line after the run). Per visit: time, bytes sent/received, and the split of the time into
// waiting (`wait`) and transfer (`transfer`) by the latency/bandwidth model calibrated at MPI_Init.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>

#include "../core/recorder.hpp"

#define SCALEA_EXPORT __attribute__((visibility("default")))

namespace scalea::mpi {

using namespace scalea::collect;

struct FnInfo {
  const char* name;
  uint16_t cls;  // format::MpiClass
};
// Generated from mpi_spec.txt.
extern const uint32_t kFunctionCount;
extern const FnInfo kFunctions[];
extern const uint32_t kFn_Init, kFn_Init_thread, kFn_Finalize, kFn_Abort;

// Frame key tag of MPI regions (the other adapters use 1..5 << 40).
inline constexpr uint64_t kKeyMpi = 6ull << 40;

// The transfer model: a call's transfer time is steps x latency + bytes x time per byte (ticks);
// the rest of its duration is waiting for the partner(s). Calibrated at MPI_Init (mpi_layer.cpp).
struct Model {
  double lat_ticks = 0;       // one message's latency
  double ticks_per_byte = 0;  // inverse bandwidth
};
extern Model g_model;

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
// (on() is false) when recording is off or the thread is already inside a wrapped call. Holds
// ThreadState::in_callback only while it touches the tree, never across the MPI call, so a thread
// blocked in MPI never delays the writer.
class Call {
 public:
  Call(uint32_t fn, const void* site) : fn_(fn) {
    if (!active() || tl_in_mpi) return;
    ThreadState* t = Recorder::get().thread();
    if (!tool_enter(t)) return;
    tl_in_mpi = 1;
    t_ = t;
    rid_ = site_region(fn, site);
    t->flags |= format::kThreadMpiCalls;
    t0_ = now();
    enter(*t, rid_, FrameType::Region, t0_, kKeyMpi | rid_);
    tool_leave(t);
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call() {
    if (t_) tl_in_mpi = 0;
  }
  bool on() const { return t_ != nullptr; }
  void stop() { t1_ = now(); }
  // Closes the region: `steps` is the number of message latencies the model charges.
  void record(uint64_t sent, uint64_t recv, uint32_t steps);

 private:
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
  if (PMPI_Get_count(st, dt, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0) return nb(count, dt);
  return uint64_t(n) * tsz(dt);
}
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
