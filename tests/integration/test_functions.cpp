// Functions as regions (-finstrument-functions): exact call counts and the name filter.
#include "harness.hpp"
#include "scalea/drg/symbols.hpp"

namespace scalea::test {
namespace {

constexpr int kP = 3;
constexpr double kL = 0.002;

AppRun run_instrfn(const Env& extra = {}) {
  Env env{{"OMP_NUM_THREADS", std::to_string(kP)}};
  env.insert(env.end(), extra.begin(), extra.end());
  return run_with_tool({app("instrfn"), "2"}, env);
}

TEST(Functions, CallCounts) {
  AppRun r = run_instrfn();
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_NE(r.out.find("leaf called 12 times"), std::string::npos) << r.out;
  uint32_t main_fn = m.child(m.root(), RegionKind::Function, "main");
  EXPECT_EQ(m.sum(main_fn, "visits"), 1);
  uint32_t top = m.child(main_fn, RegionKind::Function, "top");
  EXPECT_EQ(m.region(top).location().rfind("instrfn.c:", 0), 0u) << m.region(top).location();
  EXPECT_EQ(m.sum(top, "visits"), 1);
  uint32_t mid = m.child(top, RegionKind::Function, "mid");
  EXPECT_EQ(m.sum(mid, "visits"), 4);
  uint32_t leaf = m.child(mid, RegionKind::Function, "leaf");
  EXPECT_EQ(m.sum(leaf, "visits"), 12);
  double leaf_t = truth(r, "leaf", 12 * kL);
  EXPECT_TIME_NEAR(m.sum(leaf, "time"), leaf_t);
  EXPECT_TIME_NEAR(m.sum(mid, "time"), leaf_t);
  EXPECT_TIME_NEAR(m.sum(top, "time"), leaf_t);
  // work() runs once on each thread of the parallel region, below it.
  uint32_t par = m.child(main_fn, RegionKind::Parallel, "instrfn.c");
  std::vector<uint32_t> work = m.descendants(par, RegionKind::Function);
  double work_visits = 0;
  for (uint32_t w : work)
    if (m.region(w).label() == "work") work_visits += m.sum(w, "visits");
  EXPECT_EQ(work_visits, kP) << m.dump();
  EXPECT_EQ(m.find_all(RegionKind::Function, "leaf").size(), 1u);
}

// The compiler's outlined body of the parallel region (.omp_outlined., .omp_outlined._debug__) is
// instrumented too: the loader folds it into the parallel region, so work() is the region's
// child, and the time it held (inside the parallel region's) is neither lost nor counted twice.
TEST(Functions, OutlinedBodiesFoldIntoTheirConstruct) {
  AppRun r = run_instrfn();
  Measured m(r);
  ASSERT_TRUE(m.ok());
  for (uint32_t f : m.find_all(RegionKind::Function))
    EXPECT_FALSE(drg::is_outlined_function(m.region(f).label())) << m.tree().path(f);
  uint32_t main_fn = m.child(m.root(), RegionKind::Function, "main");
  uint32_t par = m.child(main_fn, RegionKind::Parallel, "instrfn.c");
  uint32_t work = m.child(par, RegionKind::Function, "work");
  EXPECT_EQ(m.sum(work, "visits"), kP) << m.dump();

  // The same experiment as recorded, the bodies kept.
  drg::LoadOptions keep;
  keep.fold_outlined_functions = false;
  drg::Experiment raw = drg::load_experiment(r.experiment, keep);
  drg::MergedTree t(raw);
  const int time = raw.metric("time");
  auto exclusive = [&](const drg::MergedTree& tree, uint32_t n) {
    double x = tree.sum(n, time);
    for (uint32_t c : tree.node(n).children) x -= tree.sum(c, time);
    return x;
  };
  uint32_t raw_par = format::kNoIndex;
  std::vector<uint32_t> bodies, raw_work;
  for (uint32_t n : t.preorder()) {
    const drg::Region& reg = t.region_of(n);
    if (reg.kind == RegionKind::Parallel) raw_par = n;
    if (reg.kind == RegionKind::Function && drg::is_outlined_function(reg.label())) bodies.push_back(n);
    if (reg.kind == RegionKind::Function && reg.label() == "work") raw_work.push_back(n);
  }
  ASSERT_NE(raw_par, format::kNoIndex);
  ASSERT_FALSE(bodies.empty()) << "instrfn records no outlined body: nothing to fold";
  double raw_work_time = 0, bodies_exclusive = 0;
  for (uint32_t n : raw_work) raw_work_time += t.sum(n, time);
  for (uint32_t n : bodies) bodies_exclusive += exclusive(t, n);
  const drg::MergedTree& folded = m.tree();
  EXPECT_EQ(folded.sum(par, time), t.sum(raw_par, time));
  EXPECT_EQ(folded.sum(work, time), raw_work_time);
  EXPECT_EQ(exclusive(folded, par), exclusive(t, raw_par) + bodies_exclusive);
  EXPECT_GE(exclusive(folded, par), 0);
}

// The one line the tool prints when the program's hooks do not reach it.
size_t unbound_hook_lines(const std::string& err) {
  size_t n = 0;
  for (size_t at = 0; (at = err.find("built with -finstrument-functions", at)) != std::string::npos; ++at) ++n;
  return n;
}

TEST(Functions, LinkedToolGetsTheHooksWithoutAWord) {
  AppRun r = run_instrfn();
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_EQ(unbound_hook_lines(r.err), 0u) << r.err;
}

// instrfn_plain does not link the tool. Loaded by the OpenMP runtime (OMP_TOOL_LIBRARIES), the
// tool comes too late: the program's hook calls are bound to libc's empty ones. The tool says so,
// once, and what to do.
TEST(Functions, UnboundHooksAreReportedOnce) {
  AppRun r = run_with_tool({app("instrfn_plain"), "2"}, {{"OMP_NUM_THREADS", std::to_string(kP)}});
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_EQ(unbound_hook_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("scalea run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("LD_PRELOAD="), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-lscalea-omp"), std::string::npos) << r.err;
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m.find_all(RegionKind::Function).empty()) << m.dump();
  AppRun quiet = run_with_tool({app("instrfn_plain"), "2"},
                               {{"OMP_NUM_THREADS", std::to_string(kP)}, {"SCALEA_QUIET", "1"}});
  ASSERT_EQ(quiet.status, 0) << quiet.describe();
  EXPECT_EQ(unbound_hook_lines(quiet.err), 0u) << quiet.err;
}

// `scalea run` preloads the tool: the same program's functions are recorded, exactly.
TEST(Functions, ScaleaRunRecordsFunctionsOfAProgramThatDoesNotLinkTheTool) {
  AppRun r = run_scalea_cli({"run", "-q", "-o", "{exp}", "--", app("instrfn_plain"), "2"},
                            {{"OMP_NUM_THREADS", std::to_string(kP)}});
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_EQ(unbound_hook_lines(r.err), 0u) << r.err;
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.exp().meta.value("program_start", ""), "measured");
  uint32_t main_fn = m.child(m.root(), RegionKind::Function, "main");
  EXPECT_EQ(m.sum(main_fn, "visits"), 1);
  uint32_t mid = m.child(m.child(main_fn, RegionKind::Function, "top"), RegionKind::Function, "mid");
  EXPECT_EQ(m.sum(mid, "visits"), 4);
  uint32_t leaf = m.child(mid, RegionKind::Function, "leaf");
  EXPECT_EQ(m.sum(leaf, "visits"), 12);
  EXPECT_TIME_NEAR(m.sum(leaf, "time"), truth(r, "leaf", 12 * kL));
}

TEST(Functions, ExcludeFilter) {
  AppRun r = run_instrfn({{"SCALEA_FUNCTIONS_EXCLUDE", "leaf"}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m.find_all(RegionKind::Function, "leaf").empty()) << m.dump();
  uint32_t mid = m.find(RegionKind::Function, "mid");
  EXPECT_EQ(m.sum(mid, "visits"), 4);
  EXPECT_TIME_NEAR(m.sum(mid, "time"), truth(r, "leaf", 12 * kL));  // covers the calls it made
  EXPECT_EQ(m.sum(m.find(RegionKind::Function, "top"), "visits"), 1);
}

TEST(Functions, IncludeGlobs) {
  AppRun r = run_instrfn({{"SCALEA_FUNCTIONS_INCLUDE", "top,l*"}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  for (const char* gone : {"main", "mid", "work"})
    EXPECT_TRUE(m.find_all(RegionKind::Function, gone).empty()) << gone << "\n" << m.dump();
  uint32_t top = m.child(m.root(), RegionKind::Function, "top");
  EXPECT_EQ(m.sum(top, "visits"), 1);
  uint32_t leaf = m.child(top, RegionKind::Function, "leaf");
  EXPECT_EQ(m.sum(leaf, "visits"), 12);
  EXPECT_TIME_NEAR(m.sum(leaf, "time"), truth(r, "leaf", 12 * kL));
  // Only the two selected functions are function regions.
  EXPECT_EQ(m.find_all(RegionKind::Function).size(), 2u) << m.dump();
}

}  // namespace
}  // namespace scalea::test
