// Integration-test harness: runs the bundled apps (apps/omp/) under the real tool and the real
// OpenMP runtime, loads the experiment they write and finds regions in the merged tree.
//
//   Run r = run_with_tool({app("imbalance"), "20"}, {{"OMP_NUM_THREADS", "4"}});
//   ASSERT_EQ(r.status, 0) << r.err;
//   Measured m(r);                    // loads r.experiment, checks the runtime (SCALEA_EXPECT_LIBOMP)
//   uint32_t loop = m.find(RegionKind::Loop, "imbalance.c:" + line_of("imbalance.c", "LOOP"));
//   EXPECT_TIME_NEAR(m.sum_s(loop, "wait"), 0.120);
#pragma once
#include <gtest/gtest.h>

#include <functional>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"

namespace scalea::test {

using drg::RegionKind;
using Env = std::vector<std::pair<std::string, std::string>>;
inline constexpr uint32_t kNone = format::kNoIndex;

struct Run {  // (inside a gtest fixture, write AppRun: testing::Test has its own Run)
  int status = -1;         // exit status, or 128 + signal
  bool timed_out = false;  // killed by the harness
  std::string out, err;    // the program's stdout and stderr
  std::string hang;        // when timed out: what each process of the run was doing
  std::string workdir;     // fresh temporary directory of this run
  std::string experiment;  // <workdir>/exp: the experiment directory the tool was told to write
  std::string describe() const;  // status, stderr and paths, for failure messages
};

using AppRun = Run;

// Spawns argv (no shell) with OMP_TOOL_LIBRARIES=<build>/lib/libscalea-omp.so and
// SCALEA_OUTPUT=<fresh dir>/exp added to the test's environment, then `extra_env` (which wins).
// stdout/stderr go to files in the run's directory. Kills the program after `timeout_s`.
Run run_with_tool(const std::vector<std::string>& argv, const Env& extra_env = {},
                  double timeout_s = 120);
// Runs build/bin/scalea with `args`; "{exp}" in an argument is replaced by the run's experiment
// path (e.g. {"run", "-q", "-o", "{exp}", "--", app("imbalance_gcc")}). No tool variables added.
Run run_scalea_cli(const std::vector<std::string>& args, const Env& extra_env = {},
                   double timeout_s = 120);

// Path of a bundled OpenMP app (build/bin/omp/<name>).
std::string app(const std::string& name);
// Line (1-based) of the first line of apps/omp/<file> holding "/* <marker> */" or "// <marker>";
// fails the test and returns 0 when absent.
int line_of(const std::string& file, const std::string& marker);
// "<file>:<line_of(file, marker)>": the location() string of the region at that marker.
std::string at(const std::string& file, const std::string& marker);

// The truth the program measured itself ("truth <key> <seconds>" on its stdout, see
// apps/omp/planted.h). With nominal_s > 0, also checks it against the planted size (a sleep may
// last longer than asked on a loaded machine; the tool is compared with what really happened).
double truth(const Run& run, const std::string& key, double nominal_s = 0);

// Largest of 10% of the truth and 2 ms: the tolerance of planted times.
double tolerance(double truth_s);
#define EXPECT_TIME_NEAR(measured_s, truth_s) \
  EXPECT_NEAR((measured_s), (truth_s), ::scalea::test::tolerance(truth_s))
// Element-wise EXPECT_TIME_NEAR of two lists sorted ascending (per-thread figures, where the
// tool's thread numbers need not be the OpenMP thread numbers).
void expect_times_near_sorted(std::vector<double> measured, std::vector<double> truth,
                              const std::string& what);

// One loaded experiment and its merged calling-context tree.
class Measured {
 public:
  explicit Measured(const Run& run);
  explicit Measured(const std::string& experiment_dir);

  const drg::Experiment& exp() const { return *exp_; }
  const drg::MergedTree& tree() const { return *tree_; }
  bool ok() const { return ok_; }

  static constexpr uint32_t root() { return 0; }
  const drg::Region& region(uint32_t node) const { return tree_->region_of(node); }
  uint32_t parent(uint32_t node) const { return tree_->node(node).parent; }

  // Merged nodes of this kind whose region matches `where` ("" matches all): the location
  // ("imbalance.c:28"), its file part ("imbalance.c"), the label ("loop (static)") or the name.
  std::vector<uint32_t> find_all(RegionKind kind, const std::string& where = "") const;
  // Exactly one such node (fails the test otherwise and returns kNone).
  uint32_t find(RegionKind kind, const std::string& where = "") const;
  // Children of `node` of this kind matching `where`.
  std::vector<uint32_t> children(uint32_t node, RegionKind kind, const std::string& where = "") const;
  // Exactly one such child (fails the test otherwise and returns kNone).
  uint32_t child(uint32_t node, RegionKind kind, const std::string& where = "") const;
  // Every node of the subtree below `node` (not itself) of this kind.
  std::vector<uint32_t> descendants(uint32_t node, RegionKind kind) const;

  // Metric values: times (time, wait, fork, join, task_exec, ...) in seconds, counts as they are.
  double sum(uint32_t node, const std::string& metric) const;
  double max(uint32_t node, const std::string& metric) const;
  std::vector<double> per_thread(uint32_t node, const std::string& metric) const;
  // Per experiment thread index: the metric summed over `nodes` (threads without any: absent).
  std::vector<double> per_thread_sum(const std::vector<uint32_t>& nodes,
                                     const std::string& metric) const;
  size_t thread_count(uint32_t node) const { return tree_->holders(node); }

  // The merged tree as indented text (path, visits, time, wait): for failure messages (once per
  // experiment; later calls say so).
  std::string dump() const;

 private:
  void load(const std::string& dir);
  bool matches(uint32_t node, RegionKind kind, const std::string& where) const;
  double scale(const std::string& metric) const;
  int metric_index(const std::string& metric) const;

  std::unique_ptr<drg::Experiment> exp_;
  std::unique_ptr<drg::MergedTree> tree_;
  bool ok_ = false;
  mutable bool dumped_ = false;  // the tree is printed with the first failure only
};

// Checks the runtime the experiment saw against SCALEA_EXPECT_LIBOMP (e.g. "19": the real path
// of openmp.runtime_path must contain "llvm-19"). Called by Measured.
void check_expected_runtime(const drg::Experiment& e);

// A fixture's SetUpTestSuite runs its program once for all its tests. A failure there makes
// GoogleTest skip the tests with "[  SKIPPED ]", which ctest counts as skipped, not failed (a
// program that dies would pass unnoticed). SuiteSetup::run captures the failures of the set-up and
// each test reports them as its own through check(), called from the fixture's SetUp().
class SuiteSetup {
 public:
  void run(const std::function<void()>& body);
  void check() const;

 private:
  std::string failures_;
};

}  // namespace scalea::test
