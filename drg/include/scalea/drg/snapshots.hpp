// Reading the snapshots a run publishes while it runs (SCALEA_SNAPSHOT, docs/online.md and
// docs/experiment-format.md, "Snapshots"): finding them, merging the ranks of one tick into one
// experiment, and the statistics between two ticks (an interval) as an experiment of its own, so
// that every analysis of an experiment (overheads::classify over a MergedTree) applies unchanged.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalea/drg/experiment.hpp"

namespace scalea::drg {

// The snapshots of one run, as the file system holds them now.
struct SnapshotDir {
  std::string path;   // the directory holding rank-NNNNNN/ (DIR/snapshots or DIR.live)
  bool live = false;  // DIR.live: the program runs (or ended without writing its experiment)
  std::vector<int32_t> ranks;  // the rank directories present
  // Per tick (wall-clock time / interval), the file of each rank that has one, ticks in order.
  std::map<uint64_t, std::map<int32_t, std::string>> ticks;
  std::map<int32_t, std::string> finals;  // each rank's final.sdrg (the run's end)
};

// The snapshots of the experiment `dir`: DIR/snapshots once the experiment is written, else the
// live directory DIR.live; nullopt when there is neither (the program has not started yet, or ran
// without SCALEA_SNAPSHOT). Files being written (hidden names) are not listed.
std::optional<SnapshotDir> find_snapshots(const std::string& dir);

// One rank's snapshot file, read and checked: its bytes and its meta.json (the SNAP section).
struct SnapshotPart {
  int32_t rank = -1;  // the file's rank (-1 without MPI)
  std::string path;
  std::vector<char> bytes;
  nlohmann::json meta;
  // Visits of all nodes: regions entered so far (an open frame counts when entered); in a
  // difference, the regions entered in the interval.
  uint64_t entered = 0;
  double time_s() const;  // seconds since the process started (meta "snapshot.time_s")
  double wall_s() const;  // when it was taken (the moment of time_s), s since the epoch
};
// Reads one snapshot file. Throws LoadError (one line) when it is not a complete snapshot.
SnapshotPart read_snapshot(const std::string& path);

// The statistics of `later` minus those of `earlier`, two snapshots of one process: what
// happened between them, as a snapshot of its own. Counts and sums are subtracted node by node
// (a thread's nodes keep their index from one snapshot to the next); minima and maxima are the
// later snapshot's; a region open over the whole interval counts one visit. The meta's times
// (thread creation, the runtime's start) are made relative to the interval's start and its
// clock.duration_s is the interval's length. Throws LoadError when `later` does not continue
// `earlier` (another process, or the trees differ).
SnapshotPart subtract(const SnapshotPart& later, const SnapshotPart& earlier);

// Makes `earlier` what `later` continues exactly, so that a series of snapshots, settled from
// its last one back to its first, has intervals that add up to the last one (each PE's time in
// the windows to its time in the run):
// - its times in `later`'s clock ratio (each snapshot converts ticks to ns with the ratio measured
//   up to it; converted pair by pair, the windows of a 0.5 s run added up to 0.2-0.9 us more);
// - lowered, node by node, to what `later` holds where that is less and still continues it
//   (subtract()'s rule): a snapshot closes a thread's open regions at the moment of its copy, but a
//   thread that had timed its next event before the copy ends the region at that earlier moment,
//   so `earlier` overstated the region by the difference, which subtract() takes as 0.
// Leaves `earlier` as it is when `later` does not continue it; true when it changed.
bool settle_to_later(SnapshotPart& earlier, const SnapshotPart& later);

// The ranks' parts of one tick (or of one interval) as the files of an experiment directory:
// meta.json (the first rank's, naming every rank's data file, with every rank's affinity) and the
// ranks' data files by name (the parts' bytes, not copied). Throws LoadError when a rank appears
// twice.
struct SnapshotFiles {
  nlohmann::json meta;
  std::map<std::string, const std::vector<char>*> files;
};
SnapshotFiles snapshot_files(const std::vector<SnapshotPart>& parts, const std::string& name);

// The ranks' parts of one tick (or of one interval) as one experiment named `name`, loaded like
// an experiment directory (LoadOptions apply; regions unified across ranks by identity).
Experiment load_snapshot(const std::vector<SnapshotPart>& parts, const std::string& name,
                         const LoadOptions& options = {});

}  // namespace scalea::drg
