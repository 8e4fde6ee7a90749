// Throttling of tiny hot function regions (SCALEA_THROTTLE) on a real program: a million calls
// of a tiny -finstrument-functions function, an OpenMP critical inside another tiny function,
// a slow function. The throttled paths stop at exactly N visits, OpenMP constructs below them
// keep every visit, the tree stays consistent, meta.json and the report say what was throttled.
#include <set>
#include <sstream>

#include "harness.hpp"

namespace scalea::test {
namespace {

constexpr long kTiny = 1000000, kLocked = 150000, kSlow = 20;

AppRun run_throttle_app(const Env& extra = {}) {
  Env env{{"OMP_NUM_THREADS", "2"}};
  env.insert(env.end(), extra.begin(), extra.end());
  return run_with_tool({app("throttle_app"), std::to_string(kTiny), std::to_string(kLocked),
                        std::to_string(kSlow)},
                       env);
}

// "calls <name> <n>" from the program's stdout, or -1.
long calls(const AppRun& r, const std::string& name) {
  std::istringstream in(r.out);
  std::string word, key;
  long n;
  while (in >> word >> key >> n)
    if (word == "calls" && key == name) return n;
  return -1;
}

// Merged nodes that meta.json's "throttle" list names (rank, thread, node of a data file).
std::set<uint32_t> throttled_nodes(const Measured& m) {
  std::set<uint32_t> out;
  const auto& meta = m.exp().meta;
  if (!meta.contains("throttle")) return out;
  std::set<std::tuple<int, uint32_t, uint32_t>> keys;
  for (const auto& x : meta["throttle"]["throttled"])
    keys.emplace(x["rank"].get<int>(), x["thread"].get<uint32_t>(), x["node"].get<uint32_t>());
  m.tree().for_each_batch([&](const drg::ThreadBatch& b) {
    for (uint32_t i = 0; i < b.count; ++i)
      for (uint32_t node = 0; node < b.threads[i].size(); ++node)
        if (keys.count({b.threads[i].rank, b.threads[i].thread, node}))
          out.insert(b.merged[i][node]);
  });
  return out;
}

// Inclusive times nest: a node's children (one thread) fit in it.
void expect_children_fit(const Measured& m, uint32_t node) {
  double children = 0;
  for (uint32_t c : m.tree().node(node).children) children += m.sum(c, "time");
  EXPECT_LE(children, m.sum(node, "time") + 1e-6) << m.region(node).label() << "\n" << m.dump();
}

TEST(Throttle, DefaultThrottlesTheTinyFunctionOnly) {
  AppRun r = run_throttle_app();
  ASSERT_EQ(r.status, 0) << r.describe();
  ASSERT_EQ(calls(r, "tiny"), kTiny) << r.out;
  ASSERT_EQ(calls(r, "locked"), kLocked) << r.out;
  Measured m(r);
  ASSERT_TRUE(m.ok());
  const auto& meta = m.exp().meta;
  ASSERT_TRUE(meta.contains("throttle")) << r.describe();
  long n = meta["throttle"]["calls"].get<long>();
  EXPECT_EQ(n, 100000);  // the documented default
  EXPECT_EQ(meta["throttle"]["setting"], "100000:10us");

  uint32_t main_fn = m.child(m.root(), RegionKind::Function, "main");
  uint32_t hot = m.child(main_fn, RegionKind::Function, "hot");
  uint32_t tiny = m.child(hot, RegionKind::Function, "tiny");
  ASSERT_NE(tiny, kNone);
  // Counted up to the check that throttled it, then never again.
  EXPECT_EQ(m.sum(tiny, "visits"), double(n)) << m.dump();
  EXPECT_EQ(m.sum(hot, "visits"), 1);

  // The tiny function around the critical is throttled too; the critical is not: every one of
  // its visits is recorded, below `locked` until the throttling, then directly below the loop.
  uint32_t loop = m.child(main_fn, RegionKind::Function, "locked_loop");
  uint32_t locked = m.child(loop, RegionKind::Function, "locked");
  EXPECT_EQ(m.sum(locked, "visits"), double(n)) << m.dump();
  std::vector<uint32_t> crit_in = m.children(locked, RegionKind::Critical);
  std::vector<uint32_t> crit_after = m.children(loop, RegionKind::Critical);
  ASSERT_EQ(crit_in.size(), 1u) << m.dump();
  ASSERT_EQ(crit_after.size(), 1u) << m.dump();
  EXPECT_EQ(m.sum(crit_in[0], "visits"), double(n));
  EXPECT_EQ(m.sum(crit_in[0], "visits") + m.sum(crit_after[0], "visits"), double(kLocked));

  // The slow function (1 ms a visit) keeps every visit.
  uint32_t slow = m.child(main_fn, RegionKind::Function, "slow");
  EXPECT_EQ(m.sum(slow, "visits"), double(kSlow));

  // Exactly the two tiny call paths are listed, and only they.
  EXPECT_EQ(meta["throttle"]["count"], 2) << meta["throttle"].dump();
  EXPECT_EQ(throttled_nodes(m), (std::set<uint32_t>{tiny, locked}));
  for (const auto& x : meta["throttle"]["throttled"]) {
    EXPECT_EQ(x["visits"].get<long>(), n);
    EXPECT_LT(x["mean_ns"].get<double>(), 10000.0);
    EXPECT_GT(x["at_s"].get<double>(), 0.0);
  }

  // Consistent tree: balanced frames, inclusive times nest.
  EXPECT_EQ(meta["anomalies"]["unmatched_end"], 0);
  EXPECT_EQ(meta["anomalies"]["unclosed"], 0);
  for (uint32_t node : {m.root(), main_fn, hot, loop, locked}) expect_children_fit(m, node);
  // The throttled visits' time is still inside the caller (its exclusive time).
  EXPECT_GT(m.sum(hot, "time"), m.sum(tiny, "time"));

  // One line at the end says what was throttled and how to switch it off.
  EXPECT_NE(r.err.find("throttled 2 call path"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SCALEA_THROTTLE=off"), std::string::npos) << r.err;

  // The report says so too.
  AppRun rep = run_scalea_cli({"report", r.experiment});
  ASSERT_EQ(rep.status, 0) << rep.describe();
  EXPECT_NE(rep.out.find("throttled   2 call path(s)"), std::string::npos) << rep.out;
  // ... and marks exactly the throttled paths in the tree.
  std::istringstream lines(rep.out);
  std::string line;
  int marked = 0;
  while (std::getline(lines, line))
    if (line.rfind("throttled ", 0) != 0 && line.find("[throttled]") != std::string::npos) {
      ++marked;
      EXPECT_TRUE(line.find("tiny") != std::string::npos || line.find("locked ") != std::string::npos)
          << line;
    }
  EXPECT_EQ(marked, 2) << rep.out;
}

TEST(Throttle, OffRecordsEveryCall) {
  AppRun r = run_throttle_app({{"SCALEA_THROTTLE", "off"}});
  ASSERT_EQ(r.status, 0) << r.describe();
  Measured m(r);
  ASSERT_TRUE(m.ok());
  uint32_t tiny = m.find(RegionKind::Function, "tiny");
  EXPECT_EQ(m.sum(tiny, "visits"), double(calls(r, "tiny")));
  EXPECT_EQ(m.sum(tiny, "visits"), double(kTiny));
  uint32_t locked = m.find(RegionKind::Function, "locked");
  EXPECT_EQ(m.sum(locked, "visits"), double(kLocked));
  EXPECT_EQ(m.exp().meta["throttle"]["count"], 0);
  EXPECT_EQ(r.err.find("throttled"), std::string::npos) << r.err;
}

TEST(Throttle, CustomLimit) {
  AppRun r = run_throttle_app({{"SCALEA_THROTTLE", "5000:50us"}});
  ASSERT_EQ(r.status, 0) << r.describe();
  Measured m(r);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.sum(m.find(RegionKind::Function, "tiny"), "visits"), 5000);
  EXPECT_EQ(m.sum(m.find(RegionKind::Function, "locked"), "visits"), 5000);
  EXPECT_EQ(m.sum(m.find(RegionKind::Function, "slow"), "visits"), double(kSlow));
  EXPECT_EQ(m.exp().meta["throttle"]["mean_below_ns"], 50000);
}

}  // namespace
}  // namespace scalea::test
