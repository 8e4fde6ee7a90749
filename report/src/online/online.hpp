// The snapshots of a run (SCALEA_SNAPSHOT) as `scalea top` and `scalea report --over-time` read
// them: the points every rank has published, the statistics of a window between two points as an
// experiment (drg::subtract, drg::load_snapshot), classified by overheads::classify like any
// experiment (docs/online.md).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/snapshots.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::cli::online {

// A moment of the run every rank has a snapshot of: a tick, or the end (each rank's final.sdrg).
struct Point {
  uint64_t tick = 0;  // the wall-clock time / the interval (the end: 0)
  bool final = false;
  std::map<int32_t, std::string> files;  // rank -> file
};

// The points of `s`, in time order: the ticks that every rank directory holds, then the end when
// every rank has written its final snapshot.
std::vector<Point> complete_points(const drg::SnapshotDir& s);

// Snapshot files read once: the live view reads the newest ones again at every refresh.
class Parts {
 public:
  const drg::SnapshotPart& get(const std::string& path);
  drg::SnapshotPart& edit(const std::string& path);  // get(), to change (settle())
  // When a file's snapshot was taken: kept when the file itself is forgotten.
  struct Times {
    double wall_s = 0, time_s = 0, interval_s = 0;
  };
  const Times& times(const std::string& path);
  // Forgets every file not in `keep` (the live view keeps the few it still needs).
  void keep_only(const std::set<std::string>& keep);

 private:
  std::map<std::string, std::unique_ptr<drg::SnapshotPart>> cache_;
  std::map<std::string, Times> times_;
};

// How windows are classified: call paths interned into one table (so regions match across
// windows by RegionOverheads::key), p, and an optional reference run (`scalea top -r`).
struct Classifier {
  std::shared_ptr<overheads::CallPathKeys> keys = std::make_shared<overheads::CallPathKeys>();
  int p = 0;
  const drg::MergedTree* reference = nullptr;
};

// The statistics of the run between two points (or from its start to a point), classified.
struct Window {
  double t0 = 0, t1 = 0;  // s since the job started
  drg::Experiment e;
  std::optional<drg::MergedTree> t;
  std::optional<drg::Experiment> scaled_ref;  // the reference scaled to the window (-r)
  std::optional<drg::MergedTree> scaled_ref_t;
  overheads::Analysis a;
  uint64_t entered = 0;  // regions entered in the window, all ranks
  int ranks = 1;
};

// When the job started: the earliest start of its ranks, s since the epoch (from `point`'s files).
double job_start(Parts& parts, const Point& point);
// When `point` was taken (its last rank's snapshot), s since the job started.
double point_time(Parts& parts, const Point& point, double start);
// Whether the ranks took their snapshots of `point` at about the same moment (within 5 % of the
// interval, at least 10 ms). A rank whose publisher ran late (a loaded machine) would mix
// another stretch of its time into the window. The end always is.
bool aligned(Parts& parts, const Point& point);
// The points that end windows of at least `window` s (the snapshots' interval, or longer):
// aligned points, each at least a window after the one before, and the last aligned point; a last
// window shorter than half a window joins the one before it. Empty when no point is aligned.
std::vector<const Point*> window_ends(Parts& parts, const std::vector<Point>& points, double start,
                                      double window);

// Settles each end's snapshots to the next end's (drg::settle_to_later), from the last end back
// to the first: the windows between `ends` then add up to the last one, each PE's time to its
// time in the run.
void settle(Parts& parts, const std::vector<const Point*>& ends);

// The window from `earlier` (nullptr: the start of the run) to `later`. Throws drg::LoadError.
std::unique_ptr<Window> window(Parts& parts, const Point* earlier, const Point& later, double start,
                               const Classifier& c);

// The reference run scaled to a window, for `scalea top -r REF` (docs/online.md): every region
// without children in the reference is scaled by its visits in the window over its visits in the
// reference; a region with children by its children's progress, weighted by their reference time.
drg::Experiment scale_reference(const drg::MergedTree& reference, const drg::MergedTree& window,
                                overheads::CallPathKeys& keys);

// Per processing element of a window: how much of its time it was busy (not waiting in an
// OpenMP synchronization, not in an MPI call, and, for a worker thread, not idle outside a team).
struct PeLoad {
  int32_t rank = -1;
  uint32_t thread = 0;
  double time = 0, busy = 0;  // s
};
std::vector<PeLoad> pe_loads(const drg::Experiment& e);
// The same summed per rank (thread 0), ranks in order.
std::vector<PeLoad> rank_loads(const std::vector<PeLoad>& pes);
// max / mean of the busy times (1 when balanced); 0 when nothing ran.
double imbalance(const std::vector<double>& busy);

// The regions with the largest T_o in `a` (not the program), at most n, largest first.
std::vector<uint32_t> top_regions(const overheads::Analysis& a, size_t n);

// keep.cpp: a run that ended without writing its experiment (SIGKILL, the OOM killer) and had
// snapshots on: its last snapshot that every rank published, kept as the experiment `experiment`
// (its live snapshots moved in as snapshots/), marked incomplete ("complete": false,
// "finished_by": "snapshot") with a note that starts with `ended` ("the program was killed by
// signal 9 (SIGKILL)"), so that `scalea report` reads what was measured until then.
struct KeptSnapshot {
  std::string dir;    // the experiment
  bool kept = false;  // written
  double at_s = 0;    // when the snapshot was taken, s since the process started
  std::string error;  // why it could not be written ("" when there was no snapshot to keep)
};
KeptSnapshot keep_last_snapshot(const std::string& experiment, const std::string& ended);

}  // namespace scalea::cli::online
