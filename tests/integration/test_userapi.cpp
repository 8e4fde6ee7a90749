// User regions: the C API (nested, enable/disable, SCALEA_START=off), C++ scopes, Fortran.
#include "harness.hpp"

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
