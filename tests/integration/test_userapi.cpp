// User regions: the C API (nested, enable/disable, SCALEA_START=off), C++ scopes, Fortran.
#include "harness.hpp"

#include <sstream>

#include "scalea/drg/graph.hpp"

namespace scalea::test {
namespace {

constexpr int kP = 3;
constexpr double kI = 0.010, kPt = 0.020;

void expect_after_part(const Run& r, const Measured& m) {
  uint32_t after = m.child(m.root(), RegionKind::User, "after");
  EXPECT_EQ(m.sum(after, "visits"), 1);
  EXPECT_TIME_NEAR(m.sum(after, "time"), truth(r, "after", kI));
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("userapi.c", "PER_THREAD"));
  uint32_t per = m.child(par, RegionKind::User, "per_thread");
  EXPECT_EQ(m.sum(per, "visits"), kP);
  EXPECT_EQ(m.thread_count(per), size_t(kP));
  for (double t : m.per_thread(per, "time")) EXPECT_GE(t, kPt);
  EXPECT_TIME_NEAR(m.sum(per, "time"), truth(r, "per_thread", kP * kPt));
  // Nothing of the part recorded while switched off.
  EXPECT_TRUE(m.find_all(RegionKind::User, "hidden").empty()) << m.dump();
  EXPECT_TRUE(m.find_all(RegionKind::User, "hidden_par").empty()) << m.dump();
  EXPECT_TRUE(m.find_all(RegionKind::Parallel, at("userapi.c", "HIDDEN_PAR")).empty()) << m.dump();
}

TEST(UserApi, NestedRegionsAndDisable) {
  AppRun r = run_with_tool({app("userapi"), "10", "20"}, {{"OMP_NUM_THREADS", std::to_string(kP)}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_NE(r.out.find("enabled at start=1 while off=0 after enable=1"), std::string::npos) << r.out;
  uint32_t outer = m.child(m.root(), RegionKind::User, "outer");
  ASSERT_NE(outer, kNone);
  EXPECT_EQ(m.region(outer).file.empty(), false);
  EXPECT_EQ(m.region(outer).location().rfind("userapi.c:", 0), 0u) << m.region(outer).location();
  EXPECT_EQ(m.region(outer).function, "main");
  EXPECT_EQ(m.sum(outer, "visits"), 1);
  double inner_t = truth(r, "inner", 3 * kI);
  EXPECT_TIME_NEAR(m.sum(outer, "time"), inner_t);
  uint32_t inner = m.child(outer, RegionKind::User, "inner");
  EXPECT_EQ(m.sum(inner, "visits"), 3);
  EXPECT_TIME_NEAR(m.sum(inner, "time"), inner_t);
  EXPECT_GE(m.sum(inner, "time_min"), kI);
  expect_after_part(r, m);
}

TEST(UserApi, StartOff) {
  AppRun r = run_with_tool({app("userapi"), "10", "20"},
                        {{"OMP_NUM_THREADS", std::to_string(kP)}, {"SCALEA_START", "off"}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_NE(r.out.find("enabled at start=0 while off=0 after enable=1"), std::string::npos) << r.out;
  EXPECT_TRUE(m.find_all(RegionKind::User, "outer").empty()) << m.dump();
  EXPECT_TRUE(m.find_all(RegionKind::User, "inner").empty()) << m.dump();
  expect_after_part(r, m);
}

TEST(UserApi, CxxScope) {
  constexpr double kS = 0.010;
  AppRun r = run_with_tool({app("cxxscope"), "10"}, {{"OMP_NUM_THREADS", std::to_string(kP)}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  uint32_t solve = m.child(m.root(), RegionKind::User, "solve");
  EXPECT_EQ(m.region(solve).location(), at("cxxscope.cpp", "SOLVE"));
  EXPECT_EQ(m.sum(solve, "visits"), 1);
  double step_t = truth(r, "step", 4 * kS);
  EXPECT_TIME_NEAR(m.sum(solve, "time"), step_t);
  uint32_t step = m.child(solve, RegionKind::User, "step");
  EXPECT_EQ(m.region(step).location(), at("cxxscope.cpp", "STEP"));
  EXPECT_EQ(m.sum(step, "visits"), 4);
  EXPECT_TIME_NEAR(m.sum(step, "time"), step_t);
  // A scope left by an exception ends there: what follows is its sibling.
  uint32_t throws = m.child(m.root(), RegionKind::User, "throws");
  EXPECT_EQ(m.sum(throws, "visits"), 1);
  EXPECT_TIME_NEAR(m.sum(throws, "time"), truth(r, "throws", kS));
  uint32_t after = m.child(m.root(), RegionKind::User, "after_throw");
  EXPECT_EQ(m.sum(after, "visits"), 1);
  EXPECT_TIME_NEAR(m.sum(after, "time"), truth(r, "after_throw", kS));
  uint32_t par = m.child(m.root(), RegionKind::Parallel, "cxxscope.cpp");
  uint32_t work = m.child(par, RegionKind::User, "thread_work");
  EXPECT_EQ(m.sum(work, "visits"), kP);
  EXPECT_TIME_NEAR(m.sum(work, "time"), truth(r, "thread_work", kP * kS));
}

// A user region enclosing a parallel for (apps/omp/user_parallel.c): the workers hold the user
// region's path without entering it. Per thread that ran it, its inclusive time holds its
// children's and its exclusive time is its own serial part, in `scalea drg` as in the report;
// `report --view times` averages it over the one thread that ran it.
TEST(UserApi, UserRegionAroundParallelRegion) {
  AppRun r =
      run_with_tool({app("user_parallel"), "20", "30"}, {{"OMP_NUM_THREADS", std::to_string(kP)}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  const uint32_t phase = m.child(m.root(), RegionKind::User, "phase");
  ASSERT_NE(phase, kNone);
  const uint32_t par = m.child(phase, RegionKind::Parallel, at("user_parallel.c", "PHASE_PAR"));
  ASSERT_NE(par, kNone);
  // The case: every thread holds the user region, one entered it.
  EXPECT_EQ(m.thread_count(phase), size_t(kP)) << m.dump();
  EXPECT_EQ(m.sum(phase, "visits"), 1);
  const double serial = truth(r, "serial", 0.020), whole = truth(r, "phase", 0.050);
  EXPECT_TIME_NEAR(m.sum(phase, "time"), whole);

  // scalea drg's numbers (drg::Drg): exclusive = the serial part, not serial - (p - 1) W.
  drg::Drg d(m.exp());
  const int time = d.metric("time");
  ASSERT_EQ(d.regions_named("phase").size(), 1u);
  const uint32_t v = d.vertices_of(d.regions_named("phase")[0]).at(0);
  EXPECT_EQ(d.ran(v), 1u);
  double children = 0;
  for (uint32_t c : d.children(v)) children += d.inclusive(c, time);
  EXPECT_GE(d.inclusive(v, time), children);
  EXPECT_TIME_NEAR(d.exclusive(v, time) * 1e-9, serial);
  EXPECT_TIME_NEAR(d.mean(v, time) * 1e-9, whole);

  // The command's text: the drg tree's exclusive column, and the times view's average.
  const std::string label = "phase @" + at("user_parallel.c", "PHASE");
  AppRun tree = run_scalea_cli({"drg", r.experiment});
  ASSERT_EQ(tree.status, 0) << tree.describe();
  std::istringstream lines(tree.out);
  bool found = false;
  for (std::string line; std::getline(lines, line);)
    if (line.find(label) != std::string::npos) {
      std::istringstream fields(line.substr(line.find(label) + label.size()));
      double inclusive = 0, exclusive = 0;
      fields >> inclusive >> exclusive;
      EXPECT_TIME_NEAR(exclusive, serial) << line;
      found = true;
    }
  EXPECT_TRUE(found) << tree.out;
  AppRun times = run_scalea_cli({"report", r.experiment, "--view", "times"});
  ASSERT_EQ(times.status, 0) << times.describe();
  std::istringstream rows(times.out);
  found = false;
  for (std::string line; std::getline(rows, line);)
    if (line.find(label) != std::string::npos) {
      // visits, threads that ran it, time max, time avg
      std::istringstream fields(line.substr(line.find(label) + label.size()));
      double visits = 0, threads = 0, max_s = 0, avg_s = 0;
      fields >> visits >> threads >> max_s >> avg_s;
      EXPECT_EQ(threads, 1) << line;
      EXPECT_TIME_NEAR(avg_s, whole) << line;
      found = true;
    }
  EXPECT_TRUE(found) << times.out;
}

TEST(UserApi, Fortran) {
  if (!SCALEA_HAVE_FORTRAN) GTEST_SKIP() << "no Fortran compiler: fortran_user not built";
  AppRun r = run_with_tool({app("fortran_user")});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_NE(r.out.find("fortran_user: done"), std::string::npos) << r.out;
  uint32_t solve = m.child(m.root(), RegionKind::User, "fsolve");
  EXPECT_EQ(m.region(solve).location(), at("fortran_user.f90", "FSOLVE"));
  EXPECT_EQ(m.sum(solve, "visits"), 1);
  double step_t = truth(r, "fstep", 0.060);
  EXPECT_TIME_NEAR(m.sum(solve, "time"), step_t);
  uint32_t step = m.child(solve, RegionKind::User, "fstep");
  EXPECT_EQ(m.sum(step, "visits"), 3);
  EXPECT_TIME_NEAR(m.sum(step, "time"), step_t);
  EXPECT_TRUE(m.find_all(RegionKind::User, "fhidden").empty()) << m.dump();
  uint32_t after = m.child(m.root(), RegionKind::User, "fafter");
  EXPECT_EQ(m.sum(after, "visits"), 1);
  EXPECT_TIME_NEAR(m.sum(after, "time"), truth(r, "fafter", 0.020));
}

}  // namespace
}  // namespace scalea::test
