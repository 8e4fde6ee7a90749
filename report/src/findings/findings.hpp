// Findings: the largest overheads of a run, ranked, each with its region, class and subclass,
// seconds and share of the region's time, source location and a plain-language hint. The hint
// table is data (findings.cpp), documented in docs/exports.md.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/overheads/classify.hpp"
#include "directive.hpp"

namespace scalea::cli {

struct Finding {
  uint32_t node = 0;       // merged node of the run
  std::string path;        // call path of the region
  std::string region;      // label of the region, e.g. "barrier (implicit, end of worksharing)"
  std::string location;    // "md.c:88", or "" when unknown
  std::string context;     // label and location of the enclosing construct the share refers to
  std::string cls;         // "synchronization"
  std::string subclass;    // "barrier" ("" when the class has no subclass breakdown)
  double seconds = 0;      // wall-time seconds of this overhead in this region itself
  double percent = 0;      // seconds / T_p of the context region, in %
  std::string hint;        // plain-language hint from the table
  std::string wait_state;  // MPI waiting: its pattern, "late sender", "wait at NxN", ... or ""
  std::string evidence;    // what the counters say about it ("" when nothing)
  // Where inside the region the time went, from call-path sampling ("62% in f @md.c:3, ...
  // (sampled on-CPU time)"), "" without samples or for overheads that are not work.
  std::string sampled;
  std::string
      same_time;     // another region whose overhead is the same time, e.g. "the loop at md.c:90"
  double noise = 0;  // the region's run-to-run noise (s) the finding is above (0: not measured)
  // The source at the region's line (source_excerpt: its directive down to the line), and the
  // file and line it is from; empty when the file cannot be read here.
  std::string source_file;
  uint32_t line = 0;
  std::vector<SourceLine> source;
  // Whether the program's code can change it: false for fixed costs of the runtime or the MPI
  // library (start-up and shut-down), whose hint says there is nothing in the code to change.
  bool actionable = true;
  std::string text;  // one sentence: what, where, how much, hint
  // The calls an MPI call's advice names together (fuse them, overlap them), as
  // "file:line,line,...", and that advice, the start of `hint`; "" when none. The advice is said
  // on the group's first finding only: the others refer to it.
  std::string call_group, call_advice;
};

// What findings are chosen against (docs/overhead-model.md, "How findings are chosen").
struct FindingContext {
  const drg::MergedTree* reference = nullptr;  // the reference run, for counter evidence
  // Run-to-run noise of each region of the run (merged node -> seconds): an overhead within it
  // is not a finding. Empty: not measured (one run).
  std::vector<double> noise;
  // Rows the report hides (recursion folded, fold_recursion): not findings themselves, their
  // overheads count in their visible ancestor's. Empty: every row is shown.
  std::vector<char> hidden;
};

// MPI calls that move fewer bytes than this per call (sent and received, on average) are
// latency-bound: their hint says so instead of "reduce the volume".
inline constexpr double kSmallMessageBytes = 4096;

// Findings below these are not made: an absolute floor, and a share of the program's wall time.
inline constexpr double kFindingMinSeconds = 0.001;
inline constexpr double kFindingMinProgramShare = 0.01;

// One row of the hint table: a subclass key ("class.subclass" or "class" alone), optionally
// narrowed to the kind of the enclosing region ("" matches any), and the hint.
struct Hint {
  std::string_view key;
  std::string_view context_kind;
  std::string_view what;  // what the overhead is, e.g. "barrier wait after the loop"
  std::string_view hint;  // what to try
  bool in_code = true;    // false: a fixed cost the program's code cannot change
};
const std::vector<Hint>& hint_table();

// The `limit` largest overheads of the run, largest first. Each overhead is attributed to the
// deepest region that holds it (its own share, not its children's), so one wait is not listed
// again for every enclosing region; an idle time that a later synchronization's waits already
// hold (a loop's load imbalance and the barrier after it) is one finding, not two. Overheads
// below kFindingMinSeconds, kFindingMinProgramShare of the program's time or the region's noise
// are not findings.
std::vector<Finding> find_findings(const drg::MergedTree& t, const overheads::Analysis& a,
                                   size_t limit, const FindingContext& context = {});

// What one execution of the loop at merged node `loop` costs (directive.hpp): its iterations,
// their time, its threads and the chunks they took; iterations == 0 when the run did not record
// them. Holders: the threads of one team (a loop in several teams at once averages them).
LoopCost loop_cost(const drg::MergedTree& t, uint32_t loop);

// The floor below which an overhead is not a finding in this analysis (without noise).
double finding_floor(const overheads::Analysis& a);

// Threads that share CPUs (meta.json "affinity"): per host, when more threads ran than the CPUs
// they were allowed on, one sentence saying so and how; empty when no host was oversubscribed or
// the experiment does not record affinity. Their time lost shows as unidentified time, waits and
// slow code, whatever the program does.
// A last sentence says how long the threads waited for a CPU while ready to run (meta.json
// affinity threads' runqueue_s, from the kernel's schedstat), when at least kCpuWaitMinSeconds and
// kCpuWaitMinShare of their time on or waiting for a CPU: other processes took CPU time.
std::vector<std::string> cpu_sharing(const drg::Experiment& e);
// What cpu_sharing() says it from, for a summary of many runs (scalea report STUDY).
struct CpuSharing {
  std::vector<std::string> notes;  // cpu_sharing()'s sentences; empty: the threads had CPUs
  size_t threads = 0, cpus = 0;    // on the most oversubscribed host; 0, 0: none was
  // The threads' time waiting for a CPU while ready to run and on one (schedstat), 0 when the
  // experiment does not record it.
  double waited_s = 0, ran_s = 0;
  // Processes whose threads were bound to fewer CPUs than they were, on a host with more CPUs
  // online (mpirun's default binding of a rank to one core): a launcher option would free them.
  size_t narrow_processes = 0;
  bool shared() const { return !notes.empty(); }
};
CpuSharing cpu_sharing_evidence(const drg::Experiment& e);
inline constexpr double kCpuWaitMinSeconds = 0.010;
inline constexpr double kCpuWaitMinShare = 0.05;

// The threads' time on a CPU and runnable without one (meta.json affinity, from the kernel's
// schedstat), summed over the run's threads.
struct CpuWait {
  double ran = 0, queued = 0;  // s
  double share() const { return ran + queued > 0 ? queued / (ran + queued) : 0; }
  // At least kCpuWaitMinSeconds and kCpuWaitMinShare: other processes took CPU time.
  bool significant() const { return queued >= kCpuWaitMinSeconds && share() >= kCpuWaitMinShare; }
};
CpuWait cpu_wait(const drg::Experiment& e);

// When threads shared CPUs and waited in OpenMP synchronization (kCpuWaitMinSeconds or more), and
// the run did not ask for passive waiting (OMP_WAIT_POLICY=passive, KMP_BLOCKTIME=0): that they
// spun meanwhile, how long they waited, and the settings that let them sleep; "" otherwise.
// With at least kManyForks parallel regions started, kManyForksPerSecond or more, it adds that
// waking the sleeping threads at every start has its own price (measure both).
std::string spinning_note(const drg::MergedTree& t);
inline constexpr double kManyForks = 1000, kManyForksPerSecond = 100;

// What a light-mode experiment (SCALEA_OPENMP=light, meta.json openmp.events) does not show, in
// one sentence; empty for a full recording.
std::string light_mode_note(const drg::Meta& m);

}  // namespace scalea::cli
