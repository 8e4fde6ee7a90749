// Snapshots (SCALEA_SNAPSHOT=1s, docs/online.md): while the program runs, a publisher thread
// writes the statistics the recorder keeps, every interval, as a numbered sequence of files that
// `scalea top` and `scalea report --over-time` read.
//
// How a thread's tree is read without a lock on the event path: the publisher claims the thread
// (claim_thread, recorder.hpp: tool_enter()'s handshake with finish()), which waits until the
// thread is outside the tool and keeps it from entering until the copy is made; the copy is then
// closed at the moment it was taken exactly as the end of the run closes the trees (close_thread)
// and written by the experiment's own encoder. A thread that enters the tool while it is being
// copied waits for its own copy (microseconds); threads outside the tool are not stopped.
//
// Files (docs/experiment-format.md, "Snapshots"): DIR.live/rank-NNNNNN/snap-TTTTTTTTTTTT.sdrg
// while the program runs (TTTT...: the tick, the wall-clock time divided by the interval, the
// same in every rank), final.sdrg at the end; the process that writes the experiment DIR moves
// DIR.live into it as DIR/snapshots.
#pragma once
#include <string>
#include <vector>

#include "recorder.hpp"

namespace scalea::collect::snapshot {

// Starts the publisher when the configuration asks for snapshots (Recorder::start).
void start(Recorder& rec);
// Stops the publisher (Recorder::finish, before the trees are closed): waits for a snapshot under
// way, at most about a second.
void stop();
// Writes the last snapshot, final.sdrg: the trees as the experiment holds them (finish(), after
// they are closed, before the experiment is written). Nothing when snapshots are off.
void write_final(Recorder& rec, const char* why);
// The experiment is `dir` after all (an MPI rank learns rank 0's directory at MPI_Init): this
// process's snapshots move to dir's live directory.
void follow(const std::string& dir);
// Moves the live directory of the experiment `dir` into `tmp`, the experiment's directory before
// it is published, as `snapshots` (publish_experiment). False when there was nothing to move.
bool adopt(const std::string& dir, const std::string& tmp);
// Puts it back (the experiment could not be published).
void unadopt(const std::string& dir, const std::string& tmp);

// The directory snapshots are written to while the program runs.
std::string live_dir(const std::string& experiment_dir);

// One snapshot of the recorder's threads now, as the publisher encodes it (its bytes), without
// writing it: for tests, which drive the recorder with synthetic events on their own threads.
std::vector<char> capture_for_test(Recorder& rec);

}  // namespace scalea::collect::snapshot
