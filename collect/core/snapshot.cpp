#include "snapshot.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "background.hpp"
#include "config.hpp"
#include "log.hpp"
#include "writer.hpp"

namespace scalea::collect::snapshot {
namespace {

// How long the publisher waits for a thread to leave the tool before it gives up on the snapshot:
// a callback takes microseconds; a thread stays inside longer only when it is descheduled there.
constexpr uint64_t kClaimTimeoutNs = 20000000;
// How long finish() waits for a snapshot under way (polls of kStopPollUs).
constexpr int kStopPolls = 1000;
constexpr int kStopPollUs = 1000;

// One thread's tree as the publisher copied it: nodes, open frames and the counts the experiment
// reports, then closed at the moment of the copy. Kept from one snapshot to the next (its chunks
// are reused): memory grows with the thread's call paths, like the thread's own tree.
struct Copy {
  ThreadState st;
  // The source's node chunks (by address) and the index of each one's first node, to turn the
  // copied pointers (parents, frames) into pointers into the copy.
  std::vector<std::pair<uintptr_t, uint32_t>> bases;
  std::deque<ParallelRecord> teams;  // release time of each open implicit task's team
  Ticks at = 0;                      // when the copy was taken
};

// Copies `src`, which the caller holds (claim_thread): only what the copy needs, as fast as
// possible, since `src` waits at its next event until this returns.
void copy_claimed(ThreadState& src, Copy& c) {
  constexpr uint32_t kChunk = ThreadState::kChunk;
  uint32_t n = src.node_count;
  size_t chunks = (n + kChunk - 1) / kChunk;
  while (c.st.chunks.size() < chunks) c.st.chunks.push_back(ThreadState::new_chunk());
  c.bases.clear();
  for (size_t k = 0; k < chunks; ++k) {
    uint32_t first = uint32_t(k) * kChunk;
    std::memcpy(static_cast<void*>(c.st.chunks[k]), src.chunks[k],
                std::min(kChunk, n - first) * sizeof(Node));
    c.bases.emplace_back(reinterpret_cast<uintptr_t>(src.chunks[k]), first);
  }
  c.st.node_count = n;
  c.st.stack.assign(src.stack.begin(), src.stack.end());
  c.teams.clear();
  for (Frame& f : c.st.stack) {
    if (f.type != FrameType::ImplicitTask) {
      f.rec = nullptr;
      continue;
    }
    // The team's record lives while this frame is open; its release may come from the master
    // at any time, so it is read now, once.
    ParallelRecord& r = c.teams.emplace_back();
    r.release.store(static_cast<ParallelRecord*>(f.rec)->release.load(std::memory_order_acquire),
                    std::memory_order_relaxed);
    f.rec = &r;
  }
  c.st.index = src.index;
  c.st.os_tid = src.os_tid;
  c.st.flags = src.flags;
  c.st.born = src.born;
  c.st.created = src.created;
  c.st.task_exec_total = src.task_exec_total;
  c.st.anomalies = src.anomalies;
  c.st.cpus = src.cpus;
  c.at = now();
}

// Makes the copy a tree of its own (pointers into the copy) and closes it at the moment it was
// taken, as the end of the run closes a thread (close_thread).
void close_copy(Copy& c) {
  std::sort(c.bases.begin(), c.bases.end());
  auto local = [&](const Node* p) -> Node* {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto it = std::upper_bound(c.bases.begin(), c.bases.end(), std::make_pair(a, UINT32_MAX));
    if (!p || it == c.bases.begin()) return nullptr;
    --it;
    uintptr_t offset = a - it->first;
    if (offset >= uintptr_t(ThreadState::kChunk) * sizeof(Node)) return nullptr;
    return c.st.node_at(it->second + uint32_t(offset / sizeof(Node)));
  };
  for (uint32_t i = 0; i < c.st.node_count; ++i) {
    Node* m = c.st.node_at(i);
    m->parent = local(m->parent);
    m->last_child = nullptr;
  }
  c.st.root = c.st.node_at(0);
  for (Frame& f : c.st.stack) {
    f.node = local(f.node);
    f.ctr = 0;  // counter deltas of open frames are not read (docs/online.md)
  }
  Anomalies kept = c.st.anomalies;  // frames open at a snapshot are not anomalies
  close_thread(c.st, c.at);
  c.st.anomalies = kept;
}

uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

std::string tick_name(uint64_t tick) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "snap-%012llu.sdrg", (unsigned long long)tick);
  return buf;
}

// What one capture measured, for its meta ("snapshot.capture").
struct CaptureCost {
  uint64_t wall_ns = 0;  // CLOCK_REALTIME when the first thread was copied: the moment of time_s
  size_t threads = 0;
  uint64_t hold_max_ns = 0, hold_total_ns = 0, spread_ns = 0, close_ns = 0;
};

struct Publisher {
  Publisher(Recorder& r, uint64_t interval) : rec(r), interval_ns(interval) {}
  Recorder& rec;
  const uint64_t interval_ns;
  int rank = -1, ranks = 1;
  // The experiment's directory, its live directory and this process's directory in that. They
  // change once in an MPI rank (follow), under files_mu, which every use of them holds.
  std::string experiment, live, rank_dir;
  std::mutex files_mu;
  std::string environment;
  std::vector<std::unique_ptr<Copy>> copies;  // by thread index
  uint64_t seq = 0, skipped = 0;
  ClaimWaits waits_before;
  uint64_t last_encode_ns = 0, last_write_ns = 0;  // of the previous snapshot
  std::atomic<bool> off{false};                    // stopped after a failure (said once)
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::atomic<bool> done{false};
};

std::atomic<Publisher*> g_pub{nullptr};

std::string num(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// meta.json "snapshot" (docs/experiment-format.md, "Snapshots").
std::string snapshot_object(Publisher& p, uint64_t tick, double time_s, bool final,
                            const CaptureCost& cost) {
  ClaimWaits w = claim_waits();
  std::string o = "{\"seq\": " + std::to_string(p.seq) + ", \"tick\": " + std::to_string(tick) +
                  ", \"interval_s\": " + num("%.6g", double(p.interval_ns) * 1e-9) +
                  ", \"time_s\": " + num("%.6f", time_s) +
                  ", \"wall_s\": " + num("%.6f", double(cost.wall_ns) * 1e-9) +
                  ", \"final\": " + (final ? "true" : "false") +
                  ", \"rank\": " + std::to_string(p.rank) +
                  ", \"skipped\": " + std::to_string(p.skipped);
  o += ", \"capture\": {\"threads\": " + std::to_string(cost.threads) +
       ", \"hold_us_max\": " + num("%.3f", double(cost.hold_max_ns) * 1e-3) +
       ", \"hold_us_total\": " + num("%.3f", double(cost.hold_total_ns) * 1e-3) +
       ", \"spread_us\": " + num("%.3f", double(cost.spread_ns) * 1e-3) +
       ", \"close_us\": " + num("%.3f", double(cost.close_ns) * 1e-3) +
       ", \"thread_waits\": " + std::to_string(w.count - p.waits_before.count) +
       ", \"thread_wait_us\": " + num("%.3f", double(w.ns - p.waits_before.ns) * 1e-3) +
       ", \"previous_encode_us\": " + num("%.3f", double(p.last_encode_ns) * 1e-3) +
       ", \"previous_write_us\": " + num("%.3f", double(p.last_write_ns) * 1e-3) + "}}";
  p.waits_before = w;
  return o;
}

// The file of `threads` (copies closed at their capture, or the real trees at the end).
std::vector<char> encode(Publisher& p, const std::vector<ThreadState*>& threads,
                         const ClockCalibration& clock, uint64_t tick, const char* trigger,
                         bool final, const CaptureCost& cost) {
  uint64_t t0 = monotonic_ns();
  SnapshotView view;
  view.threads = &threads;
  view.clock = clock;
  view.rank = p.rank;
  view.environment = p.environment;
  double ns = clock.ns_per_tick();
  const ThreadState* first = threads.empty() ? nullptr : threads[0];
  double time_s =
      first ? (double(first->root->s.time) * ns + double(p.rec.pre_start_ns)) * 1e-9 : 0;
  view.object = snapshot_object(p, tick, time_s, final, cost);
  MetaExtras extras;
  extras.ranks = p.ranks;
  extras.snapshot = &view;
  std::string meta;
  {
    std::lock_guard<std::mutex> lock(p.rec.mutex());  // the OpenMP runtime's description
    meta = encode_meta(p.rec, trigger, {}, extras);
  }
  WriteSummary summary;
  std::vector<char> bytes = encode_snapshot(p.rec, threads, ns, p.rank, meta, summary);
  p.last_encode_ns = monotonic_ns() - t0;
  return bytes;
}

// Copies every thread now, each while it is held; false when a thread could not be held.
bool capture(Publisher& p, std::vector<ThreadState*>& out, CaptureCost& cost) {
  std::vector<ThreadState*> threads;
  {
    std::lock_guard<std::mutex> lock(p.rec.mutex());
    threads = p.rec.threads();
  }
  while (p.copies.size() < threads.size()) p.copies.push_back(std::make_unique<Copy>());
  if (!claims_begin()) return false;  // the run has finished
  bool ok = true;
  Ticks first = 0, last = 0;
  for (size_t i = 0; i < threads.size() && ok; ++i) {
    uint64_t t0 = monotonic_ns();
    if (!claim_thread(*threads[i], kClaimTimeoutNs)) {
      ok = false;
      break;
    }
    copy_claimed(*threads[i], *p.copies[i]);
    release_thread(*threads[i]);
    if (i == 0) cost.wall_ns = realtime_ns();
    uint64_t held = monotonic_ns() - t0;
    cost.hold_max_ns = std::max(cost.hold_max_ns, held);
    cost.hold_total_ns += held;
    if (!first) first = p.copies[i]->at;
    last = p.copies[i]->at;
  }
  claims_end();
  if (!ok) return false;
  uint64_t t0 = monotonic_ns();
  out.clear();
  for (size_t i = 0; i < threads.size(); ++i) {
    close_copy(*p.copies[i]);
    out.push_back(&p.copies[i]->st);
  }
  cost.close_ns = monotonic_ns() - t0;
  cost.threads = threads.size();
  cost.spread_ns = uint64_t(double(last - first) * p.rec.clock().ns_per_tick());
  return true;
}

// Stops snapshots for good, saying why once; the program and its experiment are not affected.
void fail(Publisher& p, const std::string& why) {
  if (p.off.exchange(true)) return;
  log_message("snapshots stopped: %s; the program continues unaffected", why.c_str());
}

bool write_file(Publisher& p, const std::string& name, const std::vector<char>& bytes) {
  uint64_t t0 = monotonic_ns();
  // Written under a hidden name, then renamed: a reader never sees a half-written snapshot. Not
  // synced: a snapshot is of use while the machine runs.
  std::string tmp = p.rank_dir + "/." + name + ".tmp", path = p.rank_dir + "/" + name, error;
  unlink(tmp.c_str());
  if (!write_new_file(AT_FDCWD, tmp, bytes, error)) {
    fail(p, "cannot write " + error);
    return false;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    fail(p, "cannot write " + path + ": " + std::strerror(e));
    return false;
  }
  p.last_write_ns = monotonic_ns() - t0;
  return true;
}

// One snapshot for the tick: copied, encoded and written.
void take(Publisher& p, uint64_t tick) {
  std::vector<ThreadState*> threads;
  CaptureCost cost;
  if (!capture(p, threads, cost)) {
    ++p.skipped;  // a thread could not be held (or the run ended): the next tick takes it
    return;
  }
  ++p.seq;
  ClockCalibration clock = p.rec.clock();
  clock_finish(clock);  // calibrated up to now
  write_file(p, tick_name(tick), encode(p, threads, clock, tick, "snapshot", false, cost));
}

// The live directory and this process's directory in it. A directory of an earlier run of the
// same name (one that ended without writing its experiment) is emptied.
bool prepare(Publisher& p) {
  if (mkdir(p.live.c_str(), 0777) != 0 && errno != EEXIST) {
    fail(p, "cannot create " + p.live + ": " + std::strerror(errno));
    return false;
  }
  if (mkdir(p.rank_dir.c_str(), 0777) == 0) return true;
  if (errno != EEXIST) {
    fail(p, "cannot create " + p.rank_dir + ": " + std::strerror(errno));
    return false;
  }
  if (DIR* d = opendir(p.rank_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".sdrg") == 0)
        unlinkat(dirfd(d), e->d_name, 0);
      else if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0)
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
  }
  return true;
}

void* run(void* arg) {
  Publisher& p = *static_cast<Publisher*>(arg);
  bool prepared;
  {
    std::lock_guard<std::mutex> files(p.files_mu);
    prepared = prepare(p);
  }
  if (prepared) {
    // Ticks at whole multiples of the interval of the wall clock, the same in every rank.
    uint64_t next = (realtime_ns() / p.interval_ns + 1) * p.interval_ns;
    std::unique_lock<std::mutex> lock(p.mu);
    while (!p.stopping && !p.off.load()) {
      auto when = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(
              std::chrono::nanoseconds(next)));
      if (p.cv.wait_until(lock, when, [&] { return p.stopping; })) break;
      lock.unlock();
      {
        std::lock_guard<std::mutex> files(p.files_mu);
        take(p, next / p.interval_ns);
      }
      uint64_t now_rt = realtime_ns();
      next += p.interval_ns;
      if (next <= now_rt) {  // fell behind (a slow write, a stopped process): no backlog
        p.skipped += (now_rt - next) / p.interval_ns + 1;
        next = (now_rt / p.interval_ns + 1) * p.interval_ns;
      }
      lock.lock();
    }
  }
  p.done.store(true, std::memory_order_release);
  return nullptr;
}

void set_dirs(Publisher& p, const std::string& experiment) {
  p.experiment = experiment;
  p.live = live_dir(experiment);
  p.rank_dir = p.live + "/" + rank_file_name(p.rank);
  p.rank_dir.resize(p.rank_dir.size() - 5);  // "rank-000000": the rank file's name without .sdrg
}

Publisher* make_publisher(Recorder& rec, uint64_t interval_ns) {
  auto* p = new Publisher(rec, interval_ns);  // lives to the end of the process
  if (std::optional<int> r = launcher_rank()) p->rank = *r;
  if (std::optional<int> n = launcher_size()) p->ranks = std::max(1, *n);
  p->environment = environment_json();
  return p;
}

}  // namespace

std::string live_dir(const std::string& experiment_dir) {
  std::string d = experiment_dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d + ".live";
}

void start(Recorder& rec) {
  uint64_t interval = rec.config().snapshot_ns;
  if (!interval || g_pub.load()) return;
  Publisher* p = make_publisher(rec, interval);
  set_dirs(*p, rec.output_dir());
  int rc = start_background_thread(run, p);
  if (rc != 0) {
    log_message("cannot start the snapshot thread (%s): no snapshots", std::strerror(rc));
    return;
  }
  g_pub.store(p, std::memory_order_release);
  // Where to look, since the experiment's name is otherwise said only at the end.
  if (!rec.config().quiet)
    log_job_message("snapshots every %s in %s (scalea top %s)", rec.config().snapshot_text.c_str(),
                    p->live.c_str(), rec.output_dir().c_str());
}

void stop() {
  Publisher* p = g_pub.load(std::memory_order_acquire);
  if (!p) return;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    p->stopping = true;
  }
  p->cv.notify_all();
  for (int i = 0; i < kStopPolls && !p->done.load(std::memory_order_acquire); ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(kStopPollUs));
}

void follow(const std::string& dir) {
  Publisher* p = g_pub.load(std::memory_order_acquire);
  if (!p) return;
  std::lock_guard<std::mutex> files(p->files_mu);
  if (dir == p->experiment) return;
  std::string old_live = p->live, old_rank_dir = p->rank_dir;
  set_dirs(*p, dir);
  struct stat st;
  if (stat(old_rank_dir.c_str(), &st) != 0) return;  // nothing published yet: prepare() makes them
  if ((mkdir(p->live.c_str(), 0777) != 0 && errno != EEXIST) ||
      rename(old_rank_dir.c_str(), p->rank_dir.c_str()) != 0) {
    fail(*p, "cannot move " + old_rank_dir + " to " + p->rank_dir + ": " + std::strerror(errno));
    return;
  }
  rmdir(old_live.c_str());  // empty now
}

void write_final(Recorder& rec, const char* why) {
  Publisher* p = g_pub.load(std::memory_order_acquire);
  if (!p || p->off.load() || !p->done.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> files(p->files_mu);
  std::vector<ThreadState*> threads;
  {
    std::lock_guard<std::mutex> lock(rec.mutex());
    threads = rec.threads();
  }
  ++p->seq;
  CaptureCost cost;
  cost.threads = threads.size();
  cost.wall_ns = realtime_ns();  // the trees were closed a moment ago (Recorder::finish)
  uint64_t tick = cost.wall_ns / p->interval_ns;
  write_file(*p, "final.sdrg", encode(*p, threads, rec.clock(), tick, why, true, cost));
}

bool adopt(const std::string& dir, const std::string& tmp) {
  Publisher* p = g_pub.load(std::memory_order_acquire);
  if (!p) return false;
  std::lock_guard<std::mutex> files(p->files_mu);
  if (dir != p->experiment) return false;
  return rename(p->live.c_str(), (tmp + "/snapshots").c_str()) == 0;
}

void unadopt(const std::string& dir, const std::string& tmp) {
  Publisher* p = g_pub.load(std::memory_order_acquire);
  if (!p) return;
  std::lock_guard<std::mutex> files(p->files_mu);
  if (dir != p->experiment) return;
  rename((tmp + "/snapshots").c_str(), p->live.c_str());
}

std::vector<char> capture_for_test(Recorder& rec) {
  static Publisher* p =
      make_publisher(rec, rec.config().snapshot_ns ? rec.config().snapshot_ns : 1000000000u);
  std::vector<ThreadState*> threads;
  CaptureCost cost;
  if (!capture(*p, threads, cost)) return {};
  ++p->seq;
  ClockCalibration clock = rec.clock();
  clock_finish(clock);
  return encode(*p, threads, clock, p->seq, "snapshot", false, cost);
}

}  // namespace scalea::collect::snapshot
