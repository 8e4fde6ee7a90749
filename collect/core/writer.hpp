// Encodes a run's data in the experiment format (drg/include/scalea/format.hpp,
// docs/experiment-format.md) and publishes the experiment directory.
//
// A process without MPI writes one file holding both its definitions (strings, modules, region
// table, metric columns) and its threads. With MPI, the ranks unify their region tables first;
// the root then writes one definitions file and one threads-only file per rank.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recorder.hpp"

namespace scalea::collect {

// A region with its code address made position-independent: (module path, offset).
struct PortableRegion {
  uint16_t kind = 0, subkind = 0;
  std::string name, file, function;
  uint32_t line = 0;
  std::string module;    // "" when the region has no code address
  uint64_t address = 0;  // offset within the module
};

struct WriteSummary {
  uint32_t threads = 0;
  size_t regions = 0;  // not counting the sampled frames' code addresses
  uint64_t nodes = 0;  // not counting the sampled frames
};

// True when the directory that will hold `dir` exists and a directory can be made in it (tried).
bool output_parent_writable(const std::string& dir, std::string& why);

// This process's region table, addresses made portable (reads /proc and the loaded objects).
std::vector<PortableRegion> portable_regions(Recorder& rec);

// A file with the definition sections only (STRG, MODL, REGN, METR).
std::vector<char> encode_definitions(const std::vector<PortableRegion>& regions, int rank);

// A file with this process's threads only; node regions go through `remap` (local -> unified id).
std::vector<char> encode_threads(Recorder& rec, const std::vector<uint32_t>& remap, int rank,
                                 WriteSummary& summary);

// Both in one file: what a process without MPI writes.
std::vector<char> encode_process(Recorder& rec, int rank, WriteSummary& summary);

// A snapshot file (docs/experiment-format.md, "Snapshots"): like encode_process, for the given
// threads (copies, closed at the capture), times converted with `ns_per_tick`, and the snapshot's
// meta.json text in a SNAP section.
std::vector<char> encode_snapshot(Recorder& rec, const std::vector<ThreadState*>& threads,
                                  double ns_per_tick, int rank, const std::string& meta,
                                  WriteSummary& summary);

// A call path one thread stopped recording (SCALEA_THROTTLE): a meta.json "throttle.throttled"
// entry. `node` is the node's index in the thread's tree of this process's data file.
struct ThrottledPath {
  int32_t rank = -1;
  uint32_t thread = 0, node = 0;
  uint64_t visits = 0;
  double mean_ns = 0;  // mean inclusive time of the visits counted
  double at_s = 0;     // when, in s after the tool started
};
// This process's throttled call paths, at most `limit` of them; `count` says how many in all.
std::vector<ThrottledPath> throttled_paths(Recorder& rec, size_t limit, size_t& count);
constexpr size_t kThrottledListed = 1000;  // entries listed in meta.json, over all ranks
constexpr size_t kOpenListed = 1000;       // regions open at the end listed, per process

// The CPUs a process and its threads may run on: meta.json "affinity", and with MPI one entry
// of "affinity.ranks" per rank.
struct ThreadCpus {
  uint32_t index = 0;
  uint64_t os_tid = 0;
  std::string cpus;  // a cpulist, "0-3,8"
  uint64_t count = 0;
  double created_s =
      -1;             // a worker: its team's fork, s from the initial thread's start (< 0: none)
  double cpu_s = -1;  // time it ran on a CPU while the tool watched it (< 0: unknown)
  double runqueue_s = -1;  // time it was runnable but waited for a CPU (< 0: unknown)
};
struct ProcessAffinity {
  int32_t rank = -1;
  std::string host;
  int64_t cpus_online = 0;
  std::string process_cpus;
  std::vector<ThreadCpus> threads;
};
ProcessAffinity process_affinity(Recorder& rec, int rank);
// The process's command line, one string per argument (/proc/self/cmdline: what argv holds now).
std::vector<std::string> command_line();
// The program's executable (/proc/self/exe), or "" when the kernel does not say.
std::string executable_path();

// meta.json "mpi" (docs/mpi.md): the job, the transfer model, which ranks the experiment holds
// and, at the root of the unification, what it cost.
struct MpiUnification {
  double seconds = 0;
  uint64_t regions = 0, root_bytes = 0;
  int64_t root_peak_rss_kb = 0, root_rss_growth_kb = 0;
  uint64_t max_other_rss_growth_kb = 0;
  double after_last_arrival_s = 0;
};
struct MpiMeta {
  int size = 1;
  std::string thread_level;  // single, funneled, serialized, multiple or unknown
  double latency_ns = 0, ns_per_byte = 0;
  std::string model_source;
  double timeout_s = 0, setup_s = 0;
  std::vector<int> ranks_written;
  // Written when the experiment holds ranks unified over the tree (not a rank on its own).
  bool unified = false;
  std::vector<int> missing_ranks, no_finalize_ranks;
  std::optional<MpiUnification> unification;  // the root's experiment
};

// A snapshot (collect/core/snapshot.cpp) is described while the program runs: from copies of
// its threads, with the clock calibrated up to it. What other threads may be changing meanwhile
// is left out (counters, throttled paths), and the environment is the one read at start. Its
// encode_meta() takes no lock: the caller holds Recorder::mutex() (the OpenMP runtime's
// description is written under it).
struct SnapshotView {
  const std::vector<ThreadState*>* threads = nullptr;
  ClockCalibration clock;
  int rank = -1;
  std::string environment;  // environment_json() at start
  std::string object;       // meta.json "snapshot": a JSON object
};

// What an experiment's meta.json says beyond what the recorder holds.
struct MetaExtras {
  int ranks = 1;
  // Other ranks' throttled call paths (as many as the list takes), and how many they had.
  std::vector<ThrottledPath> other_throttled;
  size_t other_throttled_count = 0;
  bool complete = true;
  std::string definitions_file;    // "" when each file carries its own definitions
  std::vector<std::string> notes;  // e.g. why the experiment is incomplete
  std::optional<MpiMeta> mpi;
  std::vector<ProcessAffinity> rank_affinity;  // MPI: every rank's, for "affinity.ranks"
  const SnapshotView* snapshot = nullptr;      // a snapshot's meta instead of the experiment's
};

// meta.json "environment": the variables that change a measurement.
std::string environment_json();
// The text of meta.json (docs/experiment-format.md): the only place that writes it.
std::string encode_meta(Recorder& rec, const char* trigger, const std::vector<std::string>& files,
                        const MetaExtras& extras);

// Writes `data` whole to the new file `name` (relative to `dirfd`; O_EXCL, O_NOFOLLOW, mode 0666
// minus the umask). False with "name: reason" in `error`, the file removed when it was half
// written. Nothing is synced to the disk: the data is safe from the process dying once write()
// returned, and the kernel writes it back (docs/experiment-format.md, "Publishing").
bool write_new_file(int dirfd, const std::string& name, const std::vector<char>& data,
                    std::string& error);

// Creates the experiment directory atomically: files are written under a temporary name, then
// renamed to `dir`, or to dir.1, dir.2, ... when that exists (never overwritten).

bool publish_experiment(const std::string& dir,
                        const std::vector<std::pair<std::string, std::vector<char>>>& files,
                        std::string& written_dir, std::string& error);

// The whole path for a process without MPI: encode and publish.
bool write_experiment(Recorder& rec, const std::string& dir, const char* trigger,
                      std::string& written_dir, WriteSummary& summary, std::string& error);

std::string rank_file_name(int rank);

}  // namespace scalea::collect
