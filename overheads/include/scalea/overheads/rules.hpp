// Every mapping from a measured quantity to an overhead class is one row of this table
// (rules.cpp), documented with its formula and reason in docs/overhead-model.md. The classifier
// looks rules up here; it contains no class decisions of its own.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "scalea/format.hpp"
#include "scalea/overheads/classes.hpp"

namespace scalea::overheads {

// Which part of a region's time on one processing element (PE) a rule classifies.
enum class Part {
  Exclusive,           // time in the region itself, outside its children, its wait, fork and join
  Wait,                // waiting reported by the runtime (barrier, lock acquire, MPI partner)
  ForkJoin,            // parallel region: fork and join on the master
  IdleOneRan,          // PEs that did not run the region while one PE ran it
  IdleSomeRan,         // PEs that did not run the region while 1 < q < p PEs ran it
  IdleShorter,         // PEs that ran the region for less than its wall time
  IdleFork,            // parallel region: workers before their implicit task began / after it ended
  IdleBeforeStart,     // program: PEs that did not exist yet (the serial start of the run)
  PartialBarrierWait,  // barrier wait right after a single, sections or masked construct, or
                       // synchronization right after a region that 1 < q < p PEs ran
  SerialWait,          // synchronization right after a region that one PE ran
  Replicated,          // work every PE repeated (needs the reference run)
  ExtraWork,           // work the parallel run did beyond the reference's (needs the reference run)
  IdleRoot,            // program region on a non-initial thread: the thread is idle in the runtime
  ExtraMisses,         // cache misses beyond the reference's, priced by the calibrated penalty
  IdlePartial,         // PEs of the team idle while one or a few run a single/masked/sections body
  IdleLaunchSkew,      // program: an MPI rank's initial thread that started after the first rank's
  BetweenConstructs,   // parallel region's own code when it only reaches many small constructs
  SpinWait,          // work region whose flush visits reveal a busy-wait (needs the reference run)
  NoPartner,         // MPI call with no other rank to wait for (a one-rank run)
  IdleInTask,        // PEs that did not run (all of) an explicit task's work: they ran other tasks
  IdleRuntimeStart,  // program: a thread of the OpenMP runtime, before it began, after the runtime
                     // started
  RootLate,       // program on a non-initial thread: outside the parallel regions it ran, while the
                  // initial thread was in them (it started after the fork, ended before the join)
  RootNotInTeam,  // program on a non-initial thread: while the initial thread ran parallel
                  // regions this thread was not part of (a smaller team)
  IdleMpiStartup,  // program on a non-initial thread: idle (before it existed, or outside every
                   // region) while its rank's initial thread was in MPI_Init or MPI_Finalize
};

// MPI_Init, MPI_Init_thread and MPI_Finalize are management calls in the files (format::MpiClass);
// the classifier treats them as this subkind of their own: starting and ending the MPI library.
// Not stored in files.
inline constexpr uint16_t kMpiStartup = format::kMpiClassCount;
bool is_mpi_startup(std::string_view name);
// The start-up call that ends MPI (the others start it).
inline bool is_mpi_shutdown(std::string_view name) { return name == "MPI_Finalize"; }

// Any region kind (used by the idle and derived parts).
inline constexpr int kAnyKind = -1;
// MPI rules also match a subkind (format::MpiClass); -1 matches any subkind.
struct Rule {
  std::string_view id;  // stable name, used in docs and tests
  int kind;             // format::RegionKind, or kAnyKind
  int subkind;          // or -1
  Part part;
  bool useful;                // useful computation U (not an overhead class)
  Class cls;                  // the overhead class when !useful
  std::string_view subclass;  // e.g. "barrier", "fork_join", "unparallelized"
  std::string_view formula;
  std::string_view reason;
};

const std::vector<Rule>& rules();

// The rule table as the Markdown table of docs/overhead-model.md ("The rule table"): one row per
// rule, in table order. A test checks the document holds exactly this text.
std::string rule_table_markdown();

// The rule for (kind, subkind, part); nullptr when the table has none (the time then stays
// unidentified).
const Rule* find_rule(format::RegionKind kind, uint16_t subkind, Part part);

}  // namespace scalea::overheads
