// The on-line tuner's policy (SCALEA_TUNE=on, docs/tuning.md "On-line tuning"): for one parallel
// region, which loop schedule to give its next execution, from the executions measured so far.
// Plain C++ with no OpenMP runtime: the OMPT adapter (collect/ompt/online_tune.cpp) feeds it what
// it measured, unit tests feed it synthetic executions (tests/unit/online_tuner_test.cpp).
//
// The schedule it sets is the encountering thread's run-sched-var (omp_set_schedule), which the
// OpenMP standard lets only `schedule(runtime)` loops read: no other loop can change.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace scalea::collect::tune {

// A schedule as omp_set_schedule takes it: kind 1 static, 2 dynamic, 3 guided, 4 auto
// (omp_sched_t, modifiers left out), chunk 0 for the runtime's default.
struct Schedule {
  int kind = 1;
  int chunk = 0;
  bool operator==(const Schedule& o) const { return kind == o.kind && chunk == o.chunk; }
  bool operator!=(const Schedule& o) const { return !(*this == o); }
};
// "static", "dynamic,4", as OMP_SCHEDULE writes it.
std::string schedule_text(Schedule s);

// ompt_work_t values of a worksharing loop (omp-tools.h, OpenMP 5.1): libomp 14 reports every
// loop as kWorkLoop (schedule unknown), newer runtimes the schedule the loop ran with.
constexpr int kWorkLoop = 1, kWorkLoopStatic = 10, kWorkLoopDynamic = 11, kWorkLoopGuided = 12;

// A worksharing loop one execution ran, as its encountering thread's work callback saw it.
struct LoopSeen {
  const void* code = nullptr;  // the loop's code address
  int type = kWorkLoop;        // its ompt_work_t
  uint64_t iterations = 0;     // its trip count
};

// One execution of the region, measured by the adapter.
struct Execution {
  double seconds = 0;    // the region's wall time, fork to join, on the encountering thread
  double imbalance = 0;  // the longest minus the shortest of the threads' times in its loops
  double busy = 0;       // the threads' times in its loops, summed (dispatch cost shows here)
  unsigned threads = 0;  // the threads that ran a loop of it
  std::vector<LoopSeen> loops;
};

struct Settings {
  int repeat = 3;          // executions measured per schedule (SCALEA_TUNE_REPEAT)
  double min_gain = 0.05;  // a schedule replaces the best so far only when this much faster
};

// One schedule's measured executions.
struct Trial {
  Schedule schedule;
  bool program = false;  // the program's own schedule (the baseline)
  std::vector<Execution> runs;
  double median_seconds() const;
  double median_imbalance() const;
  double median_busy() const;
  double min_seconds() const;
  double max_seconds() const;
};

// Whether the region has a loop that follows run-sched-var, i.e. a schedule(runtime) loop.
enum class RuntimeLoops : uint8_t {
  Unknown,  // the runtime reports loops without their schedule (libomp 14): not known
  Proven,   // a loop reported the schedule the tuner set, another under the program's own
  None,     // the runtime reports schedules and no loop followed the one set: none is runtime
};

enum class Phase : uint8_t {
  WarmUp,   // the first execution: the program's own schedule, not timed; learns the loops
  Trying,   // each trial's executions in turn
  Fixed,    // chosen: every later execution gets the chosen schedule
  Stopped,  // not tuned (reason): the program's own schedule from now on
};

// The candidates for a loop of `iterations` iterations on `threads` threads, the program's own
// schedule first: static, static,1, dynamic,1 and dynamic,C, guided,1 with C about 8 chunks per
// thread; a candidate equal to the program's own is left out.
std::vector<Trial> candidates(Schedule program, uint64_t iterations, unsigned threads);

// Whether `c` is faster than `best` beyond the noise: its median at least min_gain below best's
// and its slowest execution faster than best's fastest.
bool beats(const Trial& c, const Trial& best, const Settings& s);

class RegionTuner {
 public:
  explicit RegionTuner(Settings s = {}) : settings_(s) {}

  // Before an execution, with the program's run-sched-var now: whether to set a schedule, and
  // which. A program that changes its own schedule between executions stops the tuning.
  bool before(Schedule program, Schedule& set);
  // After it, what was measured (the schedule it ran with is the one `before` gave).
  void after(const Execution& e);

  Phase phase() const { return phase_; }
  RuntimeLoops runtime_loops() const { return loops_; }
  const std::string& reason() const { return reason_; }
  const std::vector<Trial>& trials() const { return trials_; }
  // The chosen trial's index (0: the program's own kept), valid once Fixed.
  size_t chosen() const { return chosen_; }
  Schedule program() const { return program_; }
  uint64_t executions() const { return executions_; }
  uint64_t fixed_from() const { return fixed_from_; }  // the first execution with the choice
  uint64_t iterations() const { return iterations_; }
  unsigned threads() const { return threads_; }
  // The chosen schedule's median time below the program's own, as a fraction (0 when kept).
  double gain() const;

 private:
  void learn(const Execution& e);
  void check_loops(const Execution& e);
  void choose();
  void stop(std::string why);

  Settings settings_;
  Phase phase_ = Phase::WarmUp;
  RuntimeLoops loops_ = RuntimeLoops::Unknown;
  bool loops_decided_ = false;
  std::string reason_;
  Schedule program_;
  std::vector<LoopSeen> base_loops_;  // as the warm-up execution reported them
  std::vector<Trial> trials_;
  size_t current_ = 0, chosen_ = 0;
  uint64_t executions_ = 0, fixed_from_ = 0, iterations_ = 0;
  unsigned threads_ = 0;
};

// meta.json's "online_tuning" object (docs/experiment-format.md): the settings and every tuned
// region; made by the OMPT adapter (collect/ompt/online_tune.cpp), which holds the regions.
std::string online_tuning_json();

// A region's tuning as meta.json's "online_tuning" "regions" entry (docs/experiment-format.md).
std::string region_json(const RegionTuner& r, const void* code, uint32_t region);

}  // namespace scalea::collect::tune
