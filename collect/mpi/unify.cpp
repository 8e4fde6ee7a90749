// Writing an MPI run as ONE experiment, with MPI itself, at MPI_Finalize (docs/mpi.md).
//
// Over a binomial tree on the tool's duplicate of MPI_COMM_WORLD (root: rank 0):
//   1 up    each rank sends its parent the union of its subtree's region tables (deduplicated by
//           identity: kind, subkind, name, module, address -- the loader's key);
//   2 down  the root's union (the unified table) goes back down the tree;
//   3 up    each rank encodes its threads with region ids mapped to the unified table, and the
//           encoded rank files are gathered up the tree;
//   4 down  rank 0 publishes the directory (definitions.sdrg, the rank files or one container of
//           them per node, meta.json) and tells everybody it is done (so no rank leaves, and
//           gets the job killed, before).
// Every wait polls (PMPI_Iprobe / PMPI_Test*) against a deadline, so a rank that never arrives,
// died, or is far late costs at most SCALEA_MPI_TIMEOUT per tree level, never a hang: the parent
// gives up on that subtree (and says so to the child), the experiment is marked incomplete, and a
// rank that could not deliver writes what it holds to a directory of its own (DIR.rank-N or
// DIR.part-N).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "../core/log.hpp"
#include "../core/writer.hpp"
#include "mpi_layer.hpp"
#include "mpi_state.hpp"
#include "scalea/crc32.hpp"
#include "scalea/drg/region_key.hpp"

namespace scalea::mpi {
namespace {

constexpr int kTagUp = 0x5ca0, kTagDown = 0x5ca1, kTagFiles = 0x5ca2, kTagDone = 0x5ca3,
              kTagGiveUp = 0x5ca4, kChunkTagOffset = 8;
constexpr size_t kChunk = size_t(64) << 20;  // MPI counts are int: large blobs go in chunks

enum RankFlags : uint32_t { kNoFinalize = 1 };

// SCALEA_MPI_LAYOUT=auto writes containers when a node holds more ranks than this: with one rank
// per node a container saves no file (docs/mpi.md, "Few files at scale").
constexpr size_t kContainerRanksPerNode = 1;

// ---- the records ranks exchange -----------------------------------------------------------------

// A rank's contribution to the experiment, as it travels up the tree in phase 3.
struct Entry {
  int rank = 0;
  int node = 0;  // the lowest rank of its node (the few-files layout groups the ranks by node)
  uint32_t flags = 0;
  uint64_t rss_growth_kb = 0;  // growth of the rank's peak RSS during the unification
  std::vector<char> bytes;
  uint32_t crc32 = 0;  // of `bytes`, for a container's index: computed by the rank, not the root
  // The rank's throttled call paths (at most kThrottledListed) and how many it had.
  uint64_t throttled_count = 0;
  std::vector<ThrottledPath> throttled;
  ProcessAffinity affinity;
};

// Each record's fields are listed once, over the direction: Out writes them, In reads them back
// in the same order.
template <class P, class R>
using If = std::enable_if_t<std::is_same_v<std::remove_const_t<P>, R>, int>;

template <class C, class P, If<P, PortableRegion> = 0>
void fields(C& c, P& r) {
  c.items(r.kind, r.subkind, r.name, r.file, r.function, r.line, r.module, r.address);
}
template <class C, class P, If<P, ThrottledPath> = 0>
void fields(C& c, P& t) {
  c.items(t.rank, t.thread, t.node, t.visits, t.mean_ns, t.at_s);
}
template <class C, class P, If<P, ThreadCpus> = 0>
void fields(C& c, P& t) {
  c.items(t.index, t.os_tid, t.cpus, t.count, t.created_s, t.cpu_s, t.runqueue_s);
}
template <class C, class P, If<P, Entry> = 0>
void fields(C& c, P& e) {
  c.items(e.rank, e.node, e.flags, e.rss_growth_kb, e.bytes, e.crc32, e.throttled_count,
          e.throttled, e.affinity.rank, e.affinity.host, e.affinity.cpus_online,
          e.affinity.process_cpus, e.affinity.threads);
}

// Numbers as their bytes; strings with a 32-bit length; blobs (std::vector<char>, of any size)
// with a 64-bit one; lists of records with a 32-bit count.
struct Out {
  std::vector<char> b;
  template <class... F>
  void items(const F&... f) {
    (item(f), ...);
  }
  template <class T>
  void item(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const char* p = reinterpret_cast<const char*>(&v);
    b.insert(b.end(), p, p + sizeof v);
  }
  void item(const std::string& s) {
    item(uint32_t(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  }
  void item(const std::vector<char>& bytes) {
    item(uint64_t(bytes.size()));
    b.insert(b.end(), bytes.begin(), bytes.end());
  }
  template <class R>
  void item(const std::vector<R>& records) {
    item(uint32_t(records.size()));
    for (const R& r : records) fields(*this, r);
  }
};

// Reads what Out wrote; `ok` turns false at the first field the bytes do not hold.
struct In {
  const char* p;
  const char* end;
  bool ok = true;
  template <class... F>
  void items(F&... f) {
    (item(f), ...);
  }
  template <class T>
  void item(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (size_t(end - p) < sizeof v) {
      ok = false;
      return;
    }
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
  }
  void item(std::string& s) {
    uint32_t n = 0;
    item(n);
    if (!ok || size_t(end - p) < n) {
      ok = false;
      return;
    }
    s.assign(p, n);
    p += n;
  }
  void item(std::vector<char>& bytes) {
    uint64_t n = 0;
    item(n);
    if (!ok || uint64_t(end - p) < n) {
      ok = false;
      return;
    }
    bytes.assign(p, p + n);
    p += n;
  }
  template <class R>
  void item(std::vector<R>& records) {
    uint32_t n = 0;
    item(n);
    for (uint32_t i = 0; ok && i < n; ++i) {
      R r;
      fields(*this, r);
      if (ok) records.push_back(std::move(r));
    }
  }
};

// ---- region tables ------------------------------------------------------------------------------

// The ranks' tables are unified on the exact key, as the loader reads one rank's.
drg::ExactKey exact_key(const PortableRegion& r) {
  return {r.kind, r.subkind, r.name, r.module, r.address};
}

struct Table {
  std::vector<PortableRegion> regions;
  std::map<drg::ExactKey, uint32_t> index;
  void add(PortableRegion r) {
    auto [it, fresh] = index.emplace(exact_key(r), uint32_t(regions.size()));
    if (fresh) regions.push_back(std::move(r));
  }
};

// ---- messages with deadlines --------------------------------------------------------------------

void pause_a_little(int& round) {
  // Busy polling for the first rounds (fast when everybody is there), then sleeps growing by
  // 10 us a round up to 1 ms, so that oversubscribed ranks leave the cores to the ranks still
  // computing.
  constexpr int kBusyRounds = 49, kSleepStepNs = 10000, kLongestSleepNs = 1000000;
  if (++round <= kBusyRounds) return;
  timespec ts{0, long(std::min(kLongestSleepNs, kSleepStepNs * (round - kBusyRounds)))};
  nanosleep(&ts, nullptr);
}

// True when `from` told us it stopped waiting for us (it gave up on our subtree).
bool given_up(int from) {
  if (from < 0) return false;
  int flag = 0;
  MPI_Status st;
  if (PMPI_Iprobe(from, kTagGiveUp, g_layer.comm, &flag, &st) != MPI_SUCCESS || !flag) return false;
  char c;
  PMPI_Recv(&c, 1, MPI_CHAR, from, kTagGiveUp, g_layer.comm, MPI_STATUS_IGNORE);
  return true;
}

void give_up_on(int child) {
  static char token = 0;
  MPI_Request r;
  if (PMPI_Isend(&token, 1, MPI_CHAR, child, kTagGiveUp, g_layer.comm, &r) == MPI_SUCCESS)
    PMPI_Request_free(&r);
}

bool wait_requests(std::vector<MPI_Request>& reqs, double deadline, int watch, bool cancel) {
  int round = 0;
  for (;;) {
    int done = 0;
    if (PMPI_Testall(int(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      break;
    if (done) return true;
    if (wall_s() > deadline || given_up(watch)) break;
    pause_a_little(round);
  }
  for (MPI_Request& r : reqs) {
    if (r == MPI_REQUEST_NULL) continue;
    if (cancel) PMPI_Cancel(&r);
    PMPI_Request_free(&r);
  }
  return false;
}

// Sends a blob (header with the size, then chunks). On failure the buffers stay allocated: the
// MPI library may still read them.
bool send_blob(int dst, int tag, std::vector<char> data, double deadline, int watch) {
  auto* hdr = new uint64_t(data.size());
  std::vector<MPI_Request> reqs(1);
  if (PMPI_Isend(hdr, 8, MPI_BYTE, dst, tag, g_layer.comm, &reqs[0]) != MPI_SUCCESS) return false;
  for (size_t off = 0; off < data.size(); off += kChunk) {
    reqs.emplace_back();
    int n = int(std::min(kChunk, data.size() - off));
    if (PMPI_Isend(data.data() + off, n, MPI_BYTE, dst, tag + kChunkTagOffset, g_layer.comm,
                   &reqs.back()) != MPI_SUCCESS) {
      reqs.pop_back();
      wait_requests(reqs, 0, -1, false);
      new std::vector<char>(std::move(data));
      return false;
    }
  }
  if (wait_requests(reqs, deadline, watch, false)) {
    delete hdr;
    return true;
  }
  new std::vector<char>(std::move(data));  // intentionally kept: a send may still be under way
  return false;
}

bool recv_blob(int src, int tag, double deadline, int watch, std::vector<char>& out) {
  int round = 0;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (PMPI_Iprobe(src, tag, g_layer.comm, &flag, &st) != MPI_SUCCESS) return false;
    if (flag) break;
    if (wall_s() > deadline || given_up(watch)) return false;
    pause_a_little(round);
  }
  uint64_t size = 0;
  if (PMPI_Recv(&size, 8, MPI_BYTE, src, tag, g_layer.comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return false;
  out.assign(size, 0);
  std::vector<MPI_Request> reqs;
  for (size_t off = 0; off < size; off += kChunk) {
    reqs.emplace_back();
    int n = int(std::min(kChunk, size_t(size) - off));
    if (PMPI_Irecv(out.data() + off, n, MPI_BYTE, src, tag + kChunkTagOffset, g_layer.comm,
                   &reqs.back()) != MPI_SUCCESS) {
      reqs.pop_back();
      wait_requests(reqs, 0, -1, true);
      return false;
    }
  }
  return wait_requests(reqs, deadline, watch, true);
}

// A list of records from a child (phase 1 and 3): true when it arrived by the deadline and reads
// whole.
template <class R>
bool recv_records(int child, int tag, double deadline, std::vector<R>& out) {
  std::vector<char> blob;
  if (!recv_blob(child, tag, deadline, -1, blob)) return false;
  In in{blob.data(), blob.data() + blob.size()};
  in.item(out);
  return in.ok;
}

// ---- the binomial tree --------------------------------------------------------------------------

struct Child {
  int rank;
  int height;  // levels below the child
  bool alive = true;
};
struct Tree {
  int parent = -1;
  std::vector<Child> children;
  int height = 0;  // ceil(log2 size)
};
Tree make_tree(int r, int p) {
  Tree t;
  int level = 0;
  for (int mask = 1; mask < p; mask <<= 1, ++level) {
    if (r & mask) {
      t.parent = r - mask;
      break;
    }
    if (r + mask < p) t.children.push_back(Child{r + mask, level});
  }
  while ((1 << t.height) < p) ++t.height;
  return t;
}

// ---- writing ------------------------------------------------------------------------------------

using Files = std::vector<std::pair<std::string, std::vector<char>>>;

// Ranks named in a note, the first kRanksNamed of them.
std::string ranks_text(const std::vector<int>& v) {
  constexpr size_t kRanksNamed = 32;
  std::string s;
  for (size_t i = 0; i < v.size() && i < kRanksNamed; ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > kRanksNamed) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s;
}

// meta.json "mpi" as every experiment of the job has it; `ranks` are the ranks it holds.
MpiMeta mpi_meta(const std::vector<int>& ranks) {
  const LayerState& L = g_layer;
  const char* levels[] = {"single", "funneled", "serialized", "multiple"};
  MpiMeta m;
  m.size = L.size;
  m.thread_level = L.thread_level >= 0 && L.thread_level <= 3 ? levels[L.thread_level] : "unknown";
  m.latency_ns = L.lat_ns;
  m.ns_per_byte = L.ns_per_byte;
  m.model_source = L.model_source;
  m.timeout_s = L.timeout_s;
  m.setup_s = L.setup_s;
  m.ranks_written = ranks;
  return m;
}

bool publish(Recorder& rec, const std::string& dir, const char* why, Files files, MetaExtras extras,
             std::string& written) {
  std::vector<std::string> names;
  for (const auto& f : files)
    if (f.first != extras.definitions_file) names.push_back(f.first);
  std::string meta = encode_meta(rec, why, names, extras);
  files.emplace_back(format::kMetaFile, std::vector<char>(meta.begin(), meta.end()));
  std::string error;
  if (publish_experiment(dir, files, written, error)) return true;
  log_message("rank %d could not write the experiment: %s", g_layer.rank, error.c_str());
  return false;
}

// This rank alone, self-contained (its own definitions): when it cannot join the others.
void publish_self(Recorder& rec, const char* why, const std::string& dir, const std::string& note) {
  WriteSummary summary;
  Files files;
  files.emplace_back(rank_file_name(g_layer.rank), encode_process(rec, g_layer.rank, summary));
  MetaExtras ex;
  ex.ranks = g_layer.size;
  ex.complete = false;
  ex.notes.push_back(note);
  ex.mpi = mpi_meta({g_layer.rank});
  std::string written;
  rec.say_throttled(rec.throttled_count(), " on rank " + std::to_string(g_layer.rank));
  if (publish(rec, dir, why, std::move(files), ex, written))
    log_message("rank %d wrote its own data to %s (%s)", g_layer.rank, written.c_str(),
                note.c_str());
}

// The ranks of each node, in rank order (entries are sorted by rank); nodes in the order of their
// first ranks.
std::vector<std::vector<Entry*>> ranks_by_node(std::vector<Entry>& entries) {
  std::vector<std::vector<Entry*>> nodes;
  std::unordered_map<int, size_t> slot;  // node -> index in nodes
  for (Entry& e : entries) {
    auto [it, fresh] = slot.emplace(e.node, nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(&e);
  }
  return nodes;
}

// Containers (one per node) rather than rank files, as SCALEA_MPI_LAYOUT says.
bool use_containers(const std::vector<std::vector<Entry*>>& nodes) {
  using Layout = LayerState::Layout;
  if (g_layer.layout != Layout::Auto) return g_layer.layout == Layout::Nodes;
  for (const auto& node : nodes)
    if (node.size() > kContainerRanksPerNode) return true;
  return false;
}

// The experiment's data files: one per rank, or one container per node (docs/mpi.md).
void add_data_files(std::vector<Entry>& entries, Files& files) {
  std::vector<std::vector<Entry*>> nodes = ranks_by_node(entries);
  if (!use_containers(nodes)) {
    for (Entry& e : entries) files.emplace_back(rank_file_name(e.rank), std::move(e.bytes));
    return;
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    std::vector<format::ContainerPart> parts;
    for (Entry* e : nodes[n]) parts.push_back({e->rank, e->crc32, std::move(e->bytes)});
    files.emplace_back(format::container_file_name(int(n)), format::encode_container(parts));
  }
}

// Experiment from a set of rank files and the unified definitions (root, or a cut-off subtree).
bool publish_ranks(Recorder& rec, const char* why, const std::string& dir,
                   const std::vector<PortableRegion>& unified, std::vector<Entry>& entries,
                   std::vector<std::string> notes, const std::optional<MpiUnification>& unification,
                   bool root, std::string& written) {
  const LayerState& L = g_layer;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
  std::vector<bool> present(size_t(L.size), false);
  std::vector<int> no_finalize, missing, have;
  for (const Entry& e : entries) {
    present[size_t(e.rank)] = true;
    have.push_back(e.rank);
    if (e.flags & kNoFinalize) no_finalize.push_back(e.rank);
  }
  for (int r = 0; r < L.size; ++r)
    if (!present[size_t(r)]) missing.push_back(r);
  if (!missing.empty())
    notes.push_back("no data from rank(s) " + ranks_text(missing) +
                    (root ? ": they did not reach the tool's unification within SCALEA_MPI_TIMEOUT="
                          : ": this is the part of the run rank " + std::to_string(L.rank) +
                                " could not hand on (timeout ") +
                    std::to_string(int(L.timeout_s)) + " s per tree level" + (root ? "" : ")") +
                    "; see docs/mpi.md");
  if (!no_finalize.empty())
    notes.push_back("rank(s) " + ranks_text(no_finalize) + " left without calling MPI_Finalize");
  Files files;
  files.emplace_back("definitions.sdrg", encode_definitions(unified, -1));
  add_data_files(entries, files);
  MetaExtras ex;
  // The other ranks' throttled call paths (this rank's own are added by encode_meta), as many
  // as the list takes; the count covers them all.
  size_t listed = 0;
  for (const Entry& e : entries) {
    if (e.rank == L.rank) {
      listed += e.throttled.size();
      continue;
    }
    ex.other_throttled_count += e.throttled_count;
    if (e.throttled.empty() || listed + e.throttled.size() > kThrottledListed) continue;
    ex.other_throttled.insert(ex.other_throttled.end(), e.throttled.begin(), e.throttled.end());
    listed += e.throttled.size();
  }
  for (const Entry& e : entries) ex.rank_affinity.push_back(e.affinity);
  ex.ranks = L.size;
  ex.complete = missing.empty() && no_finalize.empty();
  ex.definitions_file = "definitions.sdrg";
  ex.notes = std::move(notes);
  ex.mpi = mpi_meta(have);
  ex.mpi->unified = true;
  ex.mpi->missing_ranks = missing;
  ex.mpi->no_finalize_ranks = no_finalize;
  ex.mpi->unification = unification;
  return publish(rec, dir, why, std::move(files), ex, written);
}

// Says once how many call paths the ranks of `entries` throttled: one line for the experiment
// that holds them, instead of one per rank.
void say_throttled(Recorder& rec, const std::vector<Entry>& entries) {
  uint64_t total = 0;
  int ranks = 0;
  for (const Entry& e : entries) total += e.throttled_count, ranks += e.throttled_count > 0;
  rec.say_throttled(
      total, " on " + std::to_string(ranks) + " of " + std::to_string(g_layer.size) + " ranks");
}

long peak_rss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

}  // namespace

namespace {

// One rank's part in the unification: its place in the tree, the deadlines, and what each phase
// hands to the next. The phases are the protocol's four steps (see the top of this file).
class Unification {
 public:
  Unification(Recorder& rec, const char* why)
      : rec_(rec),
        why_(why),
        L_(g_layer),
        T_(L_.timeout_s),
        arrival_(wall_s()),
        rss0_(peak_rss_kb()),
        tree_(make_tree(L_.rank, L_.size)),
        far_(T_ * (tree_.height + 2)),
        rank_s_(std::to_string(L_.rank)) {}

  // 1 up: each rank sends its parent the union of its subtree's region tables. False when the
  // parent could not be reached.
  bool tables_up() {
    local_ = portable_regions(rec_);
    for (const PortableRegion& r : local_) table_.add(r);
    for (Child& c : tree_.children) {
      std::vector<PortableRegion> theirs;
      if (recv_records(c.rank, kTagUp, arrival_ + T_ * (c.height + 1), theirs)) {
        for (PortableRegion& r : theirs) table_.add(std::move(r));
        continue;
      }
      lose(c);
    }
    bool ok = true;
    if (tree_.parent >= 0) {
      Out o;
      o.item(table_.regions);
      ok = send_blob(tree_.parent, kTagUp, std::move(o.b), arrival_ + far_, tree_.parent);
    }
    tables_done_ = wall_s();  // at the root: every rank has arrived (or was given up)
    return ok;
  }

  // 2 down: the root's union goes down the tree (or, when this rank lost its parent, the word to
  // fall back, each rank on its own). False when this rank has no unified table: it then writes
  // its own experiment.
  bool table_down(bool ok) {
    std::vector<char> down;
    if (tree_.parent >= 0 && ok) {
      ok = recv_blob(tree_.parent, kTagDown, arrival_ + far_, tree_.parent, down) &&
           !down.empty() && down[0] == 1;
    } else if (tree_.parent < 0) {
      Out o;
      o.item(uint8_t(1));
      o.item(table_.regions);
      down = std::move(o.b);
    }
    for (Child& c : tree_.children) {
      if (!c.alive) continue;
      std::vector<char> msg = ok ? down : std::vector<char>(1, 0);  // 0: fall back
      if (!send_blob(c.rank, kTagDown, std::move(msg), wall_s() + far_, -1)) c.alive = false;
    }
    if (!ok) {
      publish_self(rec_, why_, L_.dir + ".rank-" + rank_s_,
                   "rank " + rank_s_ +
                       " could not join the unification (its parent in the tree "
                       "gave up or did not answer within the timeout)");
      return false;
    }
    In in{down.data() + 1, down.data() + down.size()};
    in.item(unified_);
    Table index;
    for (const PortableRegion& r : unified_) index.add(r);
    remap_.resize(local_.size());
    for (size_t i = 0; i < local_.size(); ++i) {
      auto it = index.index.find(exact_key(local_[i]));
      remap_[i] = it != index.index.end() ? it->second : 0;
    }
    return true;
  }

  // 3 up: each rank encodes its threads against the unified table, and the rank files are
  // gathered up the tree; the root publishes the experiment. False when this rank could not hand
  // its subtree's files on (it wrote them to a directory of its own).
  bool files_up() {
    std::vector<Entry> entries;
    entries.push_back(my_entry());
    const double start = wall_s();
    for (Child& c : tree_.children) {
      if (!c.alive) continue;
      std::vector<Entry> theirs;
      if (recv_records(c.rank, kTagFiles, start + T_ * (c.height + 1), theirs)) {
        std::move(theirs.begin(), theirs.end(), std::back_inserter(entries));
        continue;
      }
      lose(c);
    }
    std::string written;
    if (tree_.parent < 0) {
      publish_at_root(entries);
      return true;
    }
    Out o;
    o.item(entries);
    if (send_blob(tree_.parent, kTagFiles, std::move(o.b), wall_s() + far_, tree_.parent))
      return true;
    say_throttled(rec_, entries);
    if (publish_ranks(rec_, why_, L_.dir + ".part-" + rank_s_, unified_, entries, {}, std::nullopt,
                      false, written))
      log_message("rank %s could not hand its subtree's data on; wrote it to %s", rank_s_.c_str(),
                  written.c_str());
    return false;
  }

  // 4 down: the root says it is done, so that no rank leaves (and gets the job killed) before.
  void done_down() {
    if (tree_.parent >= 0) {
      std::vector<char> msg;
      recv_blob(tree_.parent, kTagDone, wall_s() + far_, tree_.parent, msg);
    }
    for (Child& c : tree_.children)
      if (c.alive) send_blob(c.rank, kTagDone, std::vector<char>(1, 1), wall_s() + far_, -1);
  }

 private:
  // A child that did not deliver within its deadline: given up, and told so.
  static void lose(Child& c) {
    c.alive = false;
    give_up_on(c.rank);
  }

  Entry my_entry() {
    Entry mine;
    mine.rank = L_.rank;
    mine.node = L_.node_first;
    mine.flags = L_.in_finalize ? 0 : kNoFinalize;
    WriteSummary summary;
    mine.bytes = encode_threads(rec_, remap_, L_.rank, summary);
    mine.crc32 = format::crc32_fast(mine.bytes.data(), mine.bytes.size());
    mine.rss_growth_kb = uint64_t(std::max(0L, peak_rss_kb() - rss0_));
    size_t count = 0;
    mine.throttled = throttled_paths(rec_, kThrottledListed, count);
    mine.throttled_count = count;
    mine.affinity = process_affinity(rec_, L_.rank);
    return mine;
  }

  void publish_at_root(std::vector<Entry>& entries) {
    MpiUnification u;
    for (const Entry& e : entries) {
      u.root_bytes += e.bytes.size();
      if (e.rank != L_.rank)
        u.max_other_rss_growth_kb = std::max(u.max_other_rss_growth_kb, e.rss_growth_kb);
    }
    u.seconds = wall_s() - arrival_;
    u.regions = unified_.size();
    u.root_peak_rss_kb = peak_rss_kb();
    u.root_rss_growth_kb = std::max(0L, peak_rss_kb() - rss0_);
    u.after_last_arrival_s = wall_s() - tables_done_;
    size_t nranks = entries.size();
    say_throttled(rec_, entries);
    std::string written;
    if (publish_ranks(rec_, why_, L_.dir, unified_, entries, {}, u, true, written) &&
        !rec_.config().quiet)
      log_message("wrote experiment %s (%zu of %d ranks, %zu regions, unified in %.3f s)",
                  written.c_str(), nranks, L_.size, unified_.size(), wall_s() - arrival_);
  }

  Recorder& rec_;
  const char* why_;
  const LayerState& L_;
  const double T_;        // SCALEA_MPI_TIMEOUT: the wait per tree level
  const double arrival_;  // when this rank reached the unification
  const long rss0_;
  Tree tree_;
  const double far_;  // how long anyone waits for its parent
  const std::string rank_s_;
  std::vector<PortableRegion> local_;  // this rank's regions
  Table table_;                        // the union of the subtree's regions
  double tables_done_ = 0;
  std::vector<PortableRegion> unified_;  // the root's union: the experiment's region table
  std::vector<uint32_t> remap_;          // local region id -> unified id
};

}  // namespace

bool finish_hook(Recorder& rec, const char* why) {
  LayerState& L = g_layer;
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!L.ready || !initialized || finalized) return false;  // a plain single-process write
  tl_in_mpi = 1;  // whatever MPI this takes is the tool's own
  if (L.aborting) {
    publish_self(rec, why, L.dir,
                 "MPI_Abort(errorcode " + std::to_string(L.abort_code) + ") on rank " +
                     std::to_string(L.rank) +
                     ": the MPI library terminates the other ranks, so "
                     "this experiment holds rank " +
                     std::to_string(L.rank) + " only");
    return true;
  }
  Unification u(rec, why);
  bool ok = u.tables_up();
  if (u.table_down(ok) && u.files_up()) u.done_down();
  return true;
}

}  // namespace scalea::mpi
