// The tuner between runs (`scalea tune`, docs/tuning.md): from one measured run of a program, the
// settings worth trying that cannot change its results (a knowledge base of rules, each from a
// fact of the analysis), and from the runs of each, which one is faster beyond the noise.
// cmd_tune.cpp runs the program; this layer only decides.
#pragma once
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analyze.hpp"
#include "scalea/overheads/classes.hpp"

namespace scalea::cli::tune {

// One environment setting a variant makes.
struct Setting {
  std::string name, value;
  bool operator==(const Setting& o) const { return name == o.name && value == o.value; }
};

struct Variant {
  std::vector<Setting> settings;  // empty: the baseline (the program as the user runs it)
  int ranks = 0;                  // MPI ranks through the launcher, 0: the baseline's
  std::string rule;               // the rule that chose it ("schedule", "wait", "bind", "try")
  std::string why;                // the fact it answers, one phrase
  // Words put after the launcher's program ("--bind-to", "none"): where its ranks run.
  std::vector<std::string> launcher_options = {};
  // "OMP_SCHEDULE=dynamic,4 OMP_PROC_BIND=close", "ranks=4 OMP_NUM_THREADS=1", "baseline"
  std::string name() const;
};

// `--try 'NAME=VALUE [NAME=VALUE...]'`: a variant of the user's. Throws UserError naming the
// word that is not NAME=VALUE.
Variant parse_try(const std::string& text);

// The settings of the user's environment the rules look at (OMP_*, KMP_*): a rule never
// overrides one the user set.
using Environment = std::map<std::string, std::string>;
Environment tuning_environment(char** environ_);

// A loop whose schedule OMP_SCHEDULE sets (`schedule(runtime)`), as the baseline ran it.
struct RuntimeLoop {
  uint32_t node = 0;
  std::string where;      // "md.c:88"
  double waited = 0;      // s: its synchronization and control of parallelism (the loop's and
                          // its barrier's), per PE
  uint64_t chunk = 0;     // suggested_chunk() of its measured cost, 0 unknown
  double iterations = 0;  // per execution
};
std::vector<RuntimeLoop> runtime_loops(const Analyzed& x);

// What the rules chose, and the knobs they looked at but left (one phrase each: why not).
struct Choice {
  std::vector<Variant> variants;
  std::vector<std::string> left;
};
// The knowledge base (docs/tuning.md, "Rules"): the variants worth trying after the baseline
// run `x`, whose environment had `env`, on `cpus` CPUs.
//   schedule: a schedule(runtime) loop with waits or dispatch cost above the finding floor ->
//             OMP_SCHEDULE = static,1 / dynamic,C / guided,C (C from the loop's measured cost)
//   wait:     OpenMP waits of 5 % of the run or more, or threads sharing CPUs ->
//             OMP_WAIT_POLICY=passive
//   bind:     threads that fit the CPUs and time in data movement, unidentified or fork/join of
//             5 % or more -> OMP_PROC_BIND=close / spread with OMP_PLACES=cores
//   split:    an MPI run with OpenMP, started through a launcher (`launcher`, the words the
//             runs start with; empty: none) -> every other ranks x threads of the same total
//             (ranks=R OMP_NUM_THREADS=T)
//   place:    the same, through Open MPI's mpirun, whose ranks had their threads bound to fewer
//             CPUs than them while the host had more (mpirun binds a rank to one core by
//             default) -> mpirun --bind-to none / --map-by slot:PE=T (T threads per rank)
Choice choose_variants(const Analyzed& x, const Environment& env, int cpus,
                       const std::vector<std::string>& launcher = {});
inline constexpr double kRuleMinShare = 0.05;

// The runs of one variant.
struct Outcome {
  Variant variant;
  std::vector<double> seconds;        // the program's wall time of each repetition that passed
  std::vector<std::string> failures;  // why each failed repetition failed
  // Mean over the passed repetitions of the program's overhead classes (s), and whether any
  // was read.
  std::array<double, overheads::kClassCount> classes{};
  size_t classified = 0;
  // The largest share of the threads' time any run waited for a CPU (other processes had it),
  // 0 when none waited significantly (findings.hpp CpuWait).
  double cpu_wait_share = 0;
  bool ok() const { return failures.empty() && !seconds.empty(); }
  double median() const;
  double min() const;
  double max() const;
};

// The outcome chosen (index into `o`, whose first is the baseline): the one with the lowest
// median among those that passed every repetition, if its slowest repetition was faster than the
// baseline's fastest (with one repetition each: faster at all, said as unsure); 0 when none.
size_t choose_best(const std::vector<Outcome>& o);
// Whether the choice is beyond the noise (ranges apart, more than one repetition each).
bool beyond_noise(const Outcome& base, const Outcome& v);

// The largest changes of the program's classes from `base` to `v`, e.g. "synchronization
// -0.120 s, control of parallelism +0.004 s" (at most three, those of 1 ms or more).
std::string class_changes(const Outcome& base, const Outcome& v);

nlohmann::json to_json(const Variant& v);
nlohmann::json to_json(const Outcome& o);

}  // namespace scalea::cli::tune
