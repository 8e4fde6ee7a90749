// Hand-written part of the PMPI layer: MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort (C and
// Fortran), the calibration of the transfer model, the helpers the generated wrappers use, and the
// -finstrument-functions hooks.
#include "mpi_layer.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "../core/log.hpp"
#include "../core/snapshot.hpp"
#include "../user/function_hooks.hpp"
#include "mpi_state.hpp"

namespace scalea::mpi {

Model g_model;
LayerState& g_layer = *new LayerState();
thread_local int tl_in_mpi __attribute__((tls_model("initial-exec"))) = 0;
thread_local SiteTable tl_sites __attribute__((tls_model("initial-exec"))) = {nullptr, 0, 0};
std::atomic<bool> g_world_alone{false};

double wall_s() { return double(monotonic_ns()) * 1e-9; }

namespace {
// Frees a thread's site table when the thread exits (a later MPI call on it, from another key's
// destructor, starts a new table).
pthread_key_t g_sites_key;
void free_sites(void*) {
  delete[] tl_sites.slots;
  tl_sites = SiteTable{nullptr, 0, 0};
}
SiteEntry* new_slots(uint32_t n) {
  auto* slots = new SiteEntry[n];
  for (uint32_t i = 0; i < n; ++i) slots[i] = SiteEntry{0, kNoFn, 0};
  return slots;
}
void put_site(SiteTable& c, const SiteEntry& e) {
  size_t i = site_hash(e.site, e.fn) & c.mask;
  while (c.slots[i].fn != kNoFn) i = (i + 1) & c.mask;
  c.slots[i] = e;
  ++c.used;
}
}  // namespace

uint32_t site_region_slow(uint32_t fn, uintptr_t site) {
  const FnInfo& f = kFunctions[fn];
  uint32_t id = Recorder::get().site_region(RegionKind::Mpi, uint16_t(f.cls), f.name,
                                            reinterpret_cast<const void*>(site));
  SiteTable& c = tl_sites;
  if (!c.slots) {
    static bool key_ok = [] { return pthread_key_create(&g_sites_key, free_sites) == 0; }();
    c = SiteTable{new_slots(64), 63, 0};
    if (key_ok) pthread_setspecific(g_sites_key, c.slots);
  } else if ((c.used + 1) * 2 > c.mask + 1) {  // at most half full
    SiteTable old = c;
    c = SiteTable{new_slots((old.mask + 1) * 2), (old.mask + 1) * 2 - 1, 0};
    for (uint32_t i = 0; i <= old.mask; ++i)
      if (old.slots[i].fn != kNoFn) put_site(c, old.slots[i]);
    delete[] old.slots;
  }
  put_site(c, SiteEntry{site, fn, id});
  return id;
}

void Call::close(uint64_t sent, uint64_t recv, Ticks wait, Ticks transfer) {
  ToolScope scope(t_);
  if (!scope) return;  // the writer already closed the frame (finish() ran meanwhile)
  ThreadState& t = *t_;
  long i = find_frame(t, FrameType::Region, frame_key(FrameTag::Mpi, rid_));
  if (i < 0) {
    ++t.anomalies.unmatched_end;
  } else {
    Node* n = t.stack[size_t(i)].node;
    leave_at(t, size_t(i), t1_);
    if (n) {
      Stats& s = n->s;
      s.bytes_sent += sent;
      s.bytes_recv += recv;
      s.wait += wait;
      s.transfer += transfer;
    }
  }
}

// ---- persistent requests ------------------------------------------------------------------------

namespace {
std::mutex g_pst_mu;
std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>>& pst_map() {
  static auto* m = new std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>>();
  return *m;
}
uint64_t req_key(MPI_Request r) {
  uint64_t k = 0;
  std::memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
  return k;
}
}  // namespace

void pst_add(const MPI_Request* req, uint64_t sent, uint64_t recv) {
  if (!req || *req == MPI_REQUEST_NULL) return;
  std::lock_guard<std::mutex> lock(g_pst_mu);
  pst_map()[req_key(*req)] = {sent, recv};
}
void pst_del(const MPI_Request* req) {
  if (!req || *req == MPI_REQUEST_NULL) return;
  std::lock_guard<std::mutex> lock(g_pst_mu);
  pst_map().erase(req_key(*req));
}
static uint64_t pst_sum(const MPI_Request* reqs, int n, bool sent) {
  if (!reqs || n <= 0) return 0;
  std::lock_guard<std::mutex> lock(g_pst_mu);
  uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    auto it = pst_map().find(req_key(reqs[i]));
    if (it != pst_map().end()) sum += sent ? it->second.first : it->second.second;
  }
  return sum;
}
uint64_t pst_sent(const MPI_Request* reqs, int n) { return pst_sum(reqs, n, true); }
uint64_t pst_recv(const MPI_Request* reqs, int n) { return pst_sum(reqs, n, false); }

void* fortran_symbol(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) p = dlsym(RTLD_DEFAULT, name);
  if (!p) {
    log_message("the MPI library has no Fortran binding %s; cannot continue", name);
    std::abort();
  }
  return p;
}

// ---- set-up at MPI_Init -------------------------------------------------------------------------

namespace {

// Ping-pong between ranks 0 and 1 of the tool's communicator; minimum round trip over a few
// repetitions (robust to oversubscription noise). Returns false when there is nobody to talk to.
bool calibrate(double& lat_ns, double& ns_per_byte) {
  const LayerState& L = g_layer;
  constexpr int kTag = 0x5c00;  // on the tool's own communicator: no program message matches
  double res[2] = {0, 0};
  if (L.size >= 2) {
    const int small_reps = 30, large_reps = 6, large = 256 * 1024;
    std::vector<char> buf(large);
    double best_small = 1e30, best_large = 1e30;
    if (L.rank <= 1) {
      int peer = 1 - L.rank;
      for (int pass = 0; pass < 2; ++pass) {
        int bytes = pass == 0 ? 8 : large, reps = pass == 0 ? small_reps : large_reps;
        double& best = pass == 0 ? best_small : best_large;
        for (int i = 0; i < reps; ++i) {
          double t0 = wall_s();
          if (L.rank == 0) {
            PMPI_Send(buf.data(), bytes, MPI_BYTE, peer, kTag, L.comm);
            PMPI_Recv(buf.data(), bytes, MPI_BYTE, peer, kTag, L.comm, MPI_STATUS_IGNORE);
          } else {
            PMPI_Recv(buf.data(), bytes, MPI_BYTE, peer, kTag, L.comm, MPI_STATUS_IGNORE);
            PMPI_Send(buf.data(), bytes, MPI_BYTE, peer, kTag, L.comm);
          }
          best = std::min(best, wall_s() - t0);
        }
      }
      res[0] = best_small / 2 * 1e9;
      res[1] = std::max(0.0, (best_large / 2 * 1e9 - res[0]) / large);
    }
  }
  if (L.size >= 2) PMPI_Bcast(res, 2, MPI_DOUBLE, 0, L.comm);
  if (L.size < 2 || res[0] <= 0) return false;
  lat_ns = res[0];
  ns_per_byte = res[1];
  return true;
}

// SCALEA_MPI_LAYOUT: ranks, nodes or auto (docs/mpi.md, "Settings").
void read_layout(LayerState& L) {
  const char* v = getenv("SCALEA_MPI_LAYOUT");
  if (!v) return;
  using Layout = LayerState::Layout;
  if (std::strcmp(v, "ranks") == 0) L.layout = Layout::Ranks;
  else if (std::strcmp(v, "nodes") == 0) L.layout = Layout::Nodes;
  else if (std::strcmp(v, "auto") == 0) L.layout = Layout::Auto;
  else if (L.rank == 0)
    log_message("%s", invalid_value_message("SCALEA_MPI_LAYOUT", v, "auto").c_str());
}

// SCALEA_MPI_NODE_RANKS: the most ranks of a node in one container (0: the whole node).
int node_ranks_setting(const LayerState& L) {
  const char* v = getenv("SCALEA_MPI_NODE_RANKS");
  if (!v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (end != v && *end == '\0' && n > 0 && n <= INT_MAX) return int(n);
  if (L.rank == 0)
    log_message("%s", invalid_value_message("SCALEA_MPI_NODE_RANKS", v, "whole nodes").c_str());
  return 0;
}

// The lowest rank of the ranks that share this rank's node (its memory), which names the node
// for the few-files layout; with SCALEA_MPI_NODE_RANKS = k, of this rank's group of k
// consecutive ranks of the node. This rank itself when MPI cannot tell.
int node_first_rank(const LayerState& L) {
  MPI_Comm node = MPI_COMM_NULL;
  int first = L.rank;
  if (PMPI_Comm_split_type(L.comm, MPI_COMM_TYPE_SHARED, L.rank, MPI_INFO_NULL, &node) !=
      MPI_SUCCESS)
    return first;
  if (int k = node_ranks_setting(L); k > 0) {
    int local = 0;
    MPI_Comm group = MPI_COMM_NULL;
    if (PMPI_Comm_rank(node, &local) == MPI_SUCCESS &&
        PMPI_Comm_split(node, local / k, L.rank, &group) == MPI_SUCCESS) {
      PMPI_Comm_free(&node);
      node = group;
    }
  }
  if (PMPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, node) != MPI_SUCCESS)
    first = L.rank;
  PMPI_Comm_free(&node);
  return first;
}

void setup(int provided) {
  double t0 = wall_s();
  LayerState& L = g_layer;
  Recorder& rec = Recorder::get();
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &L.comm) != MPI_SUCCESS) {
    log_message("MPI: cannot duplicate MPI_COMM_WORLD; each rank writes its own experiment");
    return;
  }
  PMPI_Comm_rank(L.comm, &L.rank);
  PMPI_Comm_size(L.comm, &L.size);
  PMPI_Comm_set_errhandler(L.comm, MPI_ERRORS_RETURN);
  L.thread_level = provided;
  rec.rank = L.rank;
  MPI_Comm parent = MPI_COMM_NULL;
  PMPI_Comm_get_parent(&parent);
  g_world_alone.store(L.size == 1 && parent == MPI_COMM_NULL, std::memory_order_relaxed);
  // Every rank learns rank 0's experiment directory: the default name holds a pid.
  std::string dir = rec.output_dir();
  int len = int(dir.size());
  PMPI_Bcast(&len, 1, MPI_INT, 0, L.comm);
  dir.resize(size_t(len));
  PMPI_Bcast(dir.data(), len, MPI_CHAR, 0, L.comm);
  L.dir = dir;
  snapshot::follow(dir);  // SCALEA_SNAPSHOT: this rank's snapshots beside rank 0's
  if (const char* t = getenv("SCALEA_MPI_TIMEOUT")) {
    char* end = nullptr;
    double v = std::strtod(t, &end);
    if (end != t && v > 0) L.timeout_s = v;
    else if (L.rank == 0) {
      char kept[32];
      std::snprintf(kept, sizeof kept, "%g s", L.timeout_s);
      log_message("%s", invalid_value_message("SCALEA_MPI_TIMEOUT", t, kept).c_str());
    }
  }
  read_layout(L);
  L.node_first = node_first_rank(L);
  // Transfer model: SCALEA_MPI_CALIBRATE=0 keeps the defaults, =LAT_NS,NS_PER_BYTE sets it.
  const char* cal = getenv("SCALEA_MPI_CALIBRATE");
  double lat = 0, npb = 0;
  if (cal && std::strchr(cal, ',') && std::sscanf(cal, "%lf,%lf", &lat, &npb) == 2 && lat >= 0 &&
      npb >= 0) {
    L.lat_ns = lat, L.ns_per_byte = npb, L.model_source = "SCALEA_MPI_CALIBRATE";
  } else if (cal && std::strcmp(cal, "0") == 0) {
    L.model_source = "default";
  } else if (calibrate(lat, npb)) {
    L.lat_ns = lat, L.ns_per_byte = npb, L.model_source = "ping-pong rank 0 <-> 1 at MPI_Init";
  }
  // The model in clock ticks: the tick rate since the tool started (MPI_Init comes later).
  const ClockCalibration& ck = rec.clock();
  Ticks tk = now();
  uint64_t ns = monotonic_ns();
  constexpr uint64_t kShortestRatioNs = 1000000, kRatioMeasureNs = 2000000;
  double ticks_per_ns = (ns > ck.ns0 + kShortestRatioNs && tk > ck.ticks0)
                            ? double(tk - ck.ticks0) / double(ns - ck.ns0)
                            : 1.0;
  if (ns <= ck.ns0 + kShortestRatioNs) {  // too short to tell: measure over 2 ms
    Ticks a = now();
    uint64_t b = monotonic_ns();
    while (monotonic_ns() < b + kRatioMeasureNs) {}
    ticks_per_ns = double(now() - a) / double(monotonic_ns() - b);
  }
  g_model.lat_ticks = L.lat_ns * ticks_per_ns;
  g_model.ticks_per_byte = L.ns_per_byte * ticks_per_ns;
  rec.set_finish_hook(&finish_hook);
  L.ready = true;
  L.setup_s = wall_s() - t0;
}

// `site`: the return address into the program (the caller of MPI_Init, mpi_init_, ...).
int init_common(int* argc, char*** argv, int required, int* provided, const void* site) {
  if (g_state.load() == 0) Recorder::get().start("mpi");
  int rc, prov = MPI_THREAD_SINGLE;
  {
    Call c(required < 0 ? kFn_Init : kFn_Init_thread, site);
    rc = required < 0 ? PMPI_Init(argc, argv) : PMPI_Init_thread(argc, argv, required, &prov);
    c.stop();
    c.record(0, 0, 0);
  }
  if (required < 0) PMPI_Query_thread(&prov);
  if (provided) *provided = prov;
  if (rc == MPI_SUCCESS && active()) setup(prov);
  return rc;
}

int finalize_common(const void* site) {
  {
    Call c(kFn_Finalize, site);
    c.stop();
    c.record(0, 0, 0);
  }
  g_layer.in_finalize = true;
  tl_in_mpi = 1;  // MPI calls made while writing are the tool's own
  Recorder::get().finish("MPI_Finalize");
  tl_in_mpi = 0;
  return PMPI_Finalize();
}

int abort_common(MPI_Comm comm, int code, const void* site) {
  {
    Call c(kFn_Abort, site);
    c.stop();
    c.record(0, 0, 0);
  }
  g_layer.aborting = true;
  g_layer.abort_code = code;
  tl_in_mpi = 1;
  Recorder::get().finish("MPI_Abort");
  return PMPI_Abort(comm, code);
}

}  // namespace
}  // namespace scalea::mpi

using namespace scalea::mpi;

// The call site: the return address into the program's code.
#define RA __builtin_return_address(0)

extern "C" {

SCALEA_EXPORT int MPI_Init(int* argc, char*** argv) {
  return init_common(argc, argv, -1, nullptr, RA);
}

SCALEA_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return init_common(argc, argv, required, provided, RA);
}

SCALEA_EXPORT int MPI_Finalize(void) { return finalize_common(RA); }

SCALEA_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode) {
  return abort_common(comm, errorcode, RA);
}

// Fortran: Open MPI's mpi_init_ etc. call PMPI_Init directly, so they are replaced here.
SCALEA_EXPORT void mpi_init_(MPI_Fint* ierr) {
  *ierr = init_common(nullptr, nullptr, -1, nullptr, RA);
}

SCALEA_EXPORT void mpi_init_thread_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  int prov = 0;
  *ierr = init_common(nullptr, nullptr, int(*required), &prov, RA);
  *provided = MPI_Fint(prov);
}

SCALEA_EXPORT void mpi_finalize_(MPI_Fint* ierr) { *ierr = finalize_common(RA); }

SCALEA_EXPORT void mpi_abort_(MPI_Fint* comm, MPI_Fint* errorcode, MPI_Fint* ierr) {
  *ierr = abort_common(PMPI_Comm_f2c(*comm), int(*errorcode), RA);
}

// `use mpi_f08`: the same, under Open MPI's f08 names. A handle (TYPE(MPI_Comm)) holds one
// integer, and the error argument is optional: null when the caller left it out.
SCALEA_EXPORT void mpi_init_f08_(MPI_Fint* ierr) {
  int rc = init_common(nullptr, nullptr, -1, nullptr, RA);
  if (ierr) *ierr = rc;
}

SCALEA_EXPORT void mpi_init_thread_f08_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  int prov = 0;
  int rc = init_common(nullptr, nullptr, int(*required), &prov, RA);
  *provided = MPI_Fint(prov);
  if (ierr) *ierr = rc;
}

SCALEA_EXPORT void mpi_finalize_f08_(MPI_Fint* ierr) {
  int rc = finalize_common(RA);
  if (ierr) *ierr = rc;
}

SCALEA_EXPORT void mpi_abort_f08_(MPI_Fint* comm, MPI_Fint* errorcode, MPI_Fint* ierr) {
  int rc = abort_common(PMPI_Comm_f2c(*comm), int(*errorcode), RA);
  if (ierr) *ierr = rc;
}

// -finstrument-functions: the library is preloaded ahead of libc, whose no-op stubs of these
// would otherwise win over libscalea-omp.so's. The same bodies as there (function_hooks.hpp).
SCALEA_EXPORT __attribute__((no_instrument_function)) void __cyg_profile_func_enter(void* fn,
                                                                                    void*) {
  scalea::collect::function_enter(fn);
}

SCALEA_EXPORT __attribute__((no_instrument_function)) void __cyg_profile_func_exit(void* fn,
                                                                                   void*) {
  scalea::collect::function_exit(fn);
}

}  // extern "C"
