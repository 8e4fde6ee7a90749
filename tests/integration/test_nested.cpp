// Nested parallelism: 2 outer threads, each forking an inner team of 2.
#include "harness.hpp"

namespace scalea::test {
namespace {

TEST(Nested, TwoByTwo) {
  constexpr double kT = 0.020;
  AppRun r = run_with_tool({app("nested"), "20"}, {{"OMP_MAX_ACTIVE_LEVELS", "2"}});
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_NE(r.out.find("2 inner teams of 2"), std::string::npos) << r.out;
  EXPECT_EQ(m.exp().threads.size(), 4u);
  uint32_t outer = m.child(m.root(), RegionKind::Parallel, at("nested.c", "OUTER"));
  ASSERT_NE(outer, kNone);
  EXPECT_EQ(m.sum(outer, "visits"), 2);     // two implicit tasks
  EXPECT_EQ(m.sum(outer, "team_size"), 2);  // forked once, team of 2
  uint32_t inner = m.child(outer, RegionKind::Parallel, at("nested.c", "INNER"));
  ASSERT_NE(inner, kNone);
  EXPECT_EQ(m.sum(inner, "visits"), 4);     // 2 teams x 2 implicit tasks
  EXPECT_EQ(m.sum(inner, "team_size"), 4);  // forked twice (once per outer thread), teams of 2
  EXPECT_EQ(m.thread_count(inner), 4u);
  EXPECT_TRUE(m.find_all(RegionKind::Parallel, at("nested.c", "INNER")).size() == 1)
      << "the inner region appears only below the outer one\n"
      << m.dump();
  // Inner thread j sleeps (j+1)T: each inner region lasts 2T, its master waits T at the join.
  double longest = truth(r, "inner_longest", 2 * kT);
  // The longest inner implicit task: at least the longest body, at most the region's wall time
  // on its master (fork and join included).
  EXPECT_GE(m.max(inner, "time"), longest - tolerance(longest));
  EXPECT_LE(m.max(inner, "time"), truth(r, "inner_wall", 2 * kT) + tolerance(longest));
  // The outer region lasts at least the longest inner body, at most its wall time around the
  // construct (which includes the runtime's start-up and the inner teams' creation).
  EXPECT_GE(m.max(outer, "time"), longest - tolerance(longest));
  EXPECT_LE(m.max(outer, "time"), truth(r, "outer", 2 * kT) + tolerance(longest));
  uint32_t inner_join = m.child(inner, RegionKind::BarrierImplicit, "barrier (implicit, join)");
  // The program's truth ends each master's wait when its partner's body ends; the barrier ends
  // when the partner has reached it and the master runs again. With 4 threads on 2 CPUs (and
  // any other load) either may first wait for a CPU: the measured wait may exceed the truth by
  // at most the time the threads waited for a CPU while ready (meta.json affinity runqueue_s,
  // the kernel's account; 0 on free CPUs). Beside a busy loop: 47 ms against 40 ms.
  double queued = 0;
  for (const auto& t : m.exp().meta["affinity"].value("threads", nlohmann::json::array()))
    if (t.contains("runqueue_s") && t["runqueue_s"].is_number())
      queued += t["runqueue_s"].get<double>();
  const double inner_wait = truth(r, "inner_master_wait", 0.9 * 2 * kT);
  EXPECT_GE(m.sum(inner_join, "wait"), inner_wait - tolerance(inner_wait));
  EXPECT_LE(m.sum(inner_join, "wait"), inner_wait + tolerance(inner_wait) + queued)
      << "the threads waited " << queued << " s for a CPU";
  uint32_t outer_join = m.child(outer, RegionKind::BarrierImplicit, "barrier (implicit, join)");
  EXPECT_EQ(m.sum(outer_join, "visits"), 2);
  // Not planted (~0, truth outer_master_wait): the outer master waits only for scheduling delays.
  EXPECT_LT(m.sum(outer_join, "wait"), truth(r, "outer_master_wait") + 0.5 * kT);
  EXPECT_EQ(m.exp().meta["max_team_size"], 2);
  EXPECT_EQ(m.exp().meta["anomalies"]["unclosed"], 0);
}

}  // namespace
}  // namespace scalea::test
