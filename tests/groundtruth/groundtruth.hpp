// The ground truth helpers shared by the ground-truth tests (groundtruth_test.cpp: one planted
// overhead per app; diagnoses_test.cpp: the shapes of real codes): running the planted apps,
// classifying their experiments and checking a planted overhead is recovered in its class,
// subclass and region (docs/groundtruth.md).
//
// Units: the classifier reports seconds of wall time, i.e. PE-seconds / p. A planted wait of w_i
// seconds on PE i contributes sum_i w_i / p; a section of S seconds that 1 of p PEs runs while the
// others idle contributes S (p-1)/p. Planted sizes come from the apps' own "truth" lines (what they
// really slept and waited) where the app prints them (apps/omp), otherwise from the constants in
// the app's source (apps/mpi, read from the file) times the scale the test passes.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::test {

namespace ov = overheads;

// ---- the classifier's figures -------------------------------------------------------------------

// A planted overhead: its size (s of wall time) and the subclass keys that must hold it (their sum;
// more than one key only where the runtime legitimately splits one planted cause, see locks).
struct Planted {
  std::vector<std::string> subclasses;
  double seconds;
  std::string what;
};

inline double subclass(const ov::RegionOverheads& r, const std::string& key) {
  auto it = r.subclasses.find(key);
  return it == r.subclasses.end() ? 0.0 : it->second;
}

inline double cls(const ov::RegionOverheads& r, ov::Class c) { return r.classes[size_t(c)]; }

inline std::string describe(const ov::RegionOverheads& r) {
  std::ostringstream o;
  o.precision(5);
  o << std::fixed << r.path << " (p " << r.p << "): T_p " << r.t_p << " s, T_s " << r.t_s
    << (r.t_s_estimated ? " (estimated)" : "") << ", T_o " << r.t_o << " s\n  classes:";
  for (int c = 0; c < ov::kClassCount; ++c)
    o << " " << ov::kClassKeys[size_t(c)] << " " << r.classes[size_t(c)];
  o << "\n  subclasses:";
  for (const auto& [k, v] : r.subclasses)
    if (std::fabs(v) >= 1e-5) o << " " << k << " " << v;
  return o.str();
}

// Every planted overhead of region `r` is in its subclass within tolerance(planted). With
// `whole_region`, the region's T_o also holds nothing else: what the classifier put in any other
// subclass or class (absolute values, summed) is at most tolerance(sum of the planted sizes).
// Control of parallelism (fork/join: the runtime starting and ending teams) is not counted as
// elsewhere: no app plants it, and it is the one overhead every parallel region has whatever is
// planted (several ms per region with 8 threads on 2 loaded cores).
// `not_planted`: subclasses the app produces as a consequence of what it plants, whose size it does
// not print (not counted elsewhere; say why at the call). `unplanned_s`: wall time the region
// lasted beyond its planted schedule (a thread or rank that wakes late on a loaded machine: after a
// sleep, or when released from a barrier after the app's truth clock stopped). Nobody planted it
// and the classifier must put it somewhere: it widens the allowance upwards, for the planted
// subclass (waiters stuck longer) and for elsewhere.
inline void expect_recovered(const ov::RegionOverheads& r, const std::vector<Planted>& planted,
                             bool whole_region, const std::string& where,
                             const std::set<std::string>& not_planted = {},
                             double unplanned_s = 0) {
  SCOPED_TRACE(where);
  std::set<std::string> keys;
  double total = 0;
  for (const Planted& pl : planted) {
    double got = 0;
    std::string names;
    for (const std::string& k : pl.subclasses) {
      got += subclass(r, k);
      keys.insert(k);
      names += (names.empty() ? "" : " + ") + k;
    }
    total += pl.seconds;
    EXPECT_GE(got, pl.seconds - tolerance(pl.seconds))
        << pl.what << ": planted " << pl.seconds << " s in " << names << ", the classifier gave "
        << got << " s\n"
        << describe(r);
    EXPECT_LE(got, pl.seconds + tolerance(pl.seconds) + unplanned_s)
        << "(" << unplanned_s << " s unplanned delay) " << pl.what << ": planted " << pl.seconds
        << " s in " << names << ", the classifier gave " << got << " s\n"
        << describe(r);
  }
  if (!whole_region) return;
  // Everything else: subclasses not planted, plus class values their subclasses do not explain
  // (unidentified has no subclasses; additional computation has none without a reference).
  double elsewhere = 0;
  std::ostringstream list;
  std::array<double, ov::kClassCount> in_subclasses{};
  for (const auto& [k, v] : r.subclasses) {
    for (int c = 0; c < ov::kClassCount; ++c)
      if (k.rfind(std::string(ov::kClassKeys[size_t(c)]) + ".", 0) == 0)
        in_subclasses[size_t(c)] += v;
    if (keys.count(k) || not_planted.count(k) || std::fabs(v) < 1e-6 ||
        k.rfind("control_of_parallelism.", 0) == 0)
      continue;
    elsewhere += std::fabs(v);
    list << " " << k << " " << v;
  }
  for (int c = 0; c < ov::kClassCount; ++c) {
    if (ov::Class(c) == ov::Class::ControlOfParallelism) continue;
    double rest = r.classes[size_t(c)] - in_subclasses[size_t(c)];
    if (std::fabs(rest) < 1e-6) continue;
    elsewhere += std::fabs(rest);
    list << " " << ov::kClassKeys[size_t(c)] << "(no subclass) " << rest;
  }
  EXPECT_LE(elsewhere, tolerance(total) + unplanned_s)
      << "planted " << total << " s in this region (" << unplanned_s
      << " s of it unplanned delay); the classifier put " << elsewhere
      << " s elsewhere:" << list.str() << "\n"
      << describe(r);
}

// The six classes of every region sum to T_o (also with a reference run).
inline void expect_identity(const ov::Analysis& a) {
  auto bad = ov::identity_violations(a, 1e-9);
  EXPECT_TRUE(bad.empty()) << bad.size() << " regions break T_o = sum of classes, e.g. " << bad[0];
}

// ---- running the apps ---------------------------------------------------------------------------

inline std::string sp(int p) { return std::to_string(p); }

// An OpenMP app of apps/omp with p threads.
inline AppRun run_omp(int p, const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> argv{app(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_with_tool(argv, {{"OMP_NUM_THREADS", sp(p)}, {"SCALEA_QUIET", "1"}});
}

// An MPI app of apps/mpi on np ranks under `scalea run` (which preloads libscalea-mpi.so).
inline AppRun run_mpi(int np, const std::string& program, const std::vector<std::string>& args,
                      const Env& env = {}) {
  std::vector<std::string> argv{
      SCALEA_GT_MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", sp(np), "-x",
      "SCALEA_OUTPUT"};
  for (const auto& kv : env) {
    argv.push_back("-x");
    argv.push_back(kv.first);
  }
  argv.insert(argv.end(),
              {SCALEA_CLI, "run", "-q", "--", std::string(SCALEA_BUILD_DIR) + "/bin/" + program});
  argv.insert(argv.end(), args.begin(), args.end());
  Env e = env;
  e.push_back({"OMPI_ALLOW_RUN_AS_ROOT", "1"});
  e.push_back({"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"});
  // Under the tests' own 120 s, so that a hang is reported with its stacks (harness.cpp).
  return run_with_tool(argv, e, 75);
}

// `#define NAME value` of a source file of the project (the planted constants of apps/mpi).
// The line of a source file of the project holding `marker` (1-based; 0 when absent).
inline int source_line(const std::string& rel, const std::string& marker) {
  std::ifstream in(std::string(SCALEA_SOURCE_DIR) + "/" + rel);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(marker) != std::string::npos) return n;
  ADD_FAILURE() << "no '" << marker << "' in " << rel;
  return 0;
}

inline double source_define(const std::string& rel, const std::string& name) {
  std::ifstream in(std::string(SCALEA_SOURCE_DIR) + "/" + rel);
  std::regex re("^#define\\s+" + name + "\\s+([0-9.eE+-]+)\\s*$");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, re)) return std::stod(m[1]);
  ADD_FAILURE() << "no '#define " << name << " <number>' in " << rel;
  return 0;
}

// A run (and optionally its p=1 reference) loaded and classified.
struct Classified {
  AppRun run;
  std::unique_ptr<AppRun> ref_run;
  std::unique_ptr<Measured> m, ref;
  ov::Analysis a;
  Classified(AppRun r, std::unique_ptr<AppRun> reference = nullptr)
      : run(std::move(r)), ref_run(std::move(reference)) {
    m = std::make_unique<Measured>(run);
    if (ref_run) ref = std::make_unique<Measured>(*ref_run);
    if (m->ok() && (!ref || ref->ok())) {
      a = ov::classify(m->tree(), ref ? &ref->tree() : nullptr);
      expect_identity(a);
    }
  }
  bool ok() const { return m->ok() && (!ref || ref->ok()) && !a.regions.empty(); }
  const ov::RegionOverheads& at(uint32_t node) const {
    static const ov::RegionOverheads none;
    return node == kNone || node >= a.regions.size() ? none : a.regions[node];
  }
};

}  // namespace scalea::test
