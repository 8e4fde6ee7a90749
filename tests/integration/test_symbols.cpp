// Region identity with and without line information (docs/symbols.md): inlined_regions built at
// -O2 with -g and without, whose constructs the compiler copied by inlining or left by tail jumps.
#include <algorithm>
#include <fstream>
#include <regex>
#include <tuple>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "scalea/drg/names.hpp"
#include "scalea/drg/symbols.hpp"

namespace scalea::test {
namespace {

// "inlined_regions.c:<line>" of the "/* marker */" comment in tests/integration/inlined_regions.c.
std::string here(const std::string& marker) {
  std::ifstream in(std::string(SCALEA_SOURCE_DIR) + "/tests/integration/inlined_regions.c");
  std::string line, tag = "/* " + marker + " */";
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(tag) != std::string::npos) return "inlined_regions.c:" + std::to_string(n);
  ADD_FAILURE() << "marker " << marker << " not found";
  return "?";
}

AppRun run_inlined(const std::string& name) {
  return run_with_tool({app(name)}, {{"OMP_NUM_THREADS", "2"}});
}

// The tree's shape: per node, its depth and kind and its parent's kind, sorted (children's order
// is the order the threads met them in).
std::vector<std::tuple<uint32_t, int, int, int>> shape(const Measured& m) {
  std::vector<std::tuple<uint32_t, int, int, int>> out;
  for (uint32_t n : m.tree().preorder()) {
    const drg::Region& r = m.region(n);
    int parent = n == 0 ? -1 : int(m.region(m.parent(n)).kind);
    out.emplace_back(m.tree().node(n).depth, int(r.kind), int(r.subkind), parent);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every region but the program has a location, and none stays inside the OpenMP runtime.
void expect_every_region_placed(const Measured& m) {
  for (uint32_t n : m.tree().preorder()) {
    if (n == 0) continue;
    const drg::Region& r = m.region(n);
    EXPECT_FALSE(r.location().empty()) << m.tree().path(n);
    EXPECT_NE(r.symbol.rfind("__kmp", 0), 0u) << m.tree().path(n) << " at " << r.location();
    EXPECT_FALSE(drg::is_outlined_function(r.function)) << m.tree().path(n) << ": " << r.function;
  }
}

// With -g every construct is one region at its pragma, named after the function holding the
// pragma: the two inlined copies of sweep()'s parallel region, the task that ends spawn() (reached
// by tail jumps from left() and right(), so its return addresses are their call lines), the
// taskwait that ends drain() (called twice), and the barrier the outlined body jumps into last.
TEST(Symbols, WithLinesEveryConstructIsOneRegionAtItsPragma) {
  AppRun r = run_inlined("inlined_regions_g");
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_NE(r.out.find("sum 9"), std::string::npos) << r.out;
  Measured m(r);
  ASSERT_TRUE(m.ok());
  uint32_t sweep = m.find(RegionKind::Parallel, here("SWEEP"));
  EXPECT_EQ(m.max(sweep, "visits"), 2);  // per thread: both copies
  EXPECT_EQ(m.region(m.child(sweep, RegionKind::Loop, here("SWEEP_LOOP"))).function, "sweep");

  ASSERT_EQ(m.find_all(RegionKind::Task).size(), 1u) << m.dump();
  uint32_t task = m.find(RegionKind::Task, here("SPAWN"));
  EXPECT_EQ(m.region(task).function, "spawn");
  EXPECT_EQ(m.sum(task, "visits"), 2);
  EXPECT_EQ(m.region(m.child(task, RegionKind::Critical, here("SPAWN_CRITICAL"))).function, "spawn");

  ASSERT_EQ(m.find_all(RegionKind::Taskwait).size(), 1u) << m.dump();
  uint32_t wait = m.find(RegionKind::Taskwait, here("DRAIN"));
  EXPECT_EQ(m.region(wait).function, "drain");
  EXPECT_EQ(m.sum(wait, "visits"), 2);

  uint32_t single = m.find(RegionKind::Single, here("TASKS_SINGLE"));
  EXPECT_EQ(m.region(single).function, "main");  // not .omp_outlined._debug__
  uint32_t tasks = m.find(RegionKind::Parallel, here("TASKS"));
  std::vector<uint32_t> barriers = m.children(tasks, RegionKind::BarrierImplicit, here("TASKS_SINGLE"));
  EXPECT_EQ(barriers.size(), 1u) << m.dump();
  expect_every_region_placed(m);
}

// Without -g the same program gives the same tree: the copies of a parallel region or task are
// told by the outlined body they run, tail jumps are followed, and every region is named by its
// symbol and offset, in the function the code came from.
TEST(Symbols, WithoutLinesTheTreeHasTheSameShape) {
  AppRun g = run_inlined("inlined_regions_g");
  AppRun plain = run_inlined("inlined_regions");
  ASSERT_EQ(plain.status, 0) << plain.describe();
  ASSERT_EQ(g.status, 0) << g.describe();
  Measured mg(g), m(plain);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(mg.ok());
  EXPECT_EQ(shape(m), shape(mg)) << m.dump() << mg.dump();
  expect_every_region_placed(m);

  std::vector<uint32_t> parallels = m.find_all(RegionKind::Parallel);
  ASSERT_EQ(parallels.size(), 2u) << m.dump();
  for (uint32_t p : parallels) {
    const drg::Region& r = m.region(p);
    EXPECT_TRUE(r.body);
    EXPECT_TRUE(drg::is_outlined_function(r.symbol)) << r.symbol;
    EXPECT_EQ(r.function, "main");
    EXPECT_EQ(r.location(), "main (" + r.symbol + ")");
    EXPECT_TRUE(r.file.empty());
  }
  uint32_t loop = m.find(RegionKind::Loop);
  EXPECT_EQ(m.region(loop).function, "main");  // sweep() was inlined into main
  EXPECT_TRUE(m.region(loop).outlined);
  EXPECT_EQ(m.region(loop).location().rfind("main (.omp_outlined", 0), 0u) << m.region(loop).location();

  uint32_t task = m.find(RegionKind::Task);
  EXPECT_TRUE(m.region(task).body);
  EXPECT_EQ(m.region(task).function, "left, right");
  EXPECT_EQ(m.sum(task, "visits"), 2);
  uint32_t wait = m.find(RegionKind::Taskwait);
  EXPECT_EQ(m.region(wait).symbol, "drain");
  EXPECT_EQ(m.region(wait).location().rfind("drain+0x", 0), 0u) << m.region(wait).location();
  EXPECT_EQ(m.sum(wait, "visits"), 2);
}

// One pragma in two instances of a function template: two regions at one file:line, siblings
// below the program. Their call paths in the JSON report are unique ("#1", "#2" by region key:
// step<1> first), in the report's JSON as in scalea diff's.
TEST(Symbols, TemplateInstancesHaveUniquePaths) {
  AppRun r = run_with_tool({app("template_twins")}, {{"OMP_NUM_THREADS", "2"}});
  ASSERT_EQ(r.status, 0) << r.describe();
  Measured m(r);
  ASSERT_TRUE(m.ok());
  std::vector<uint32_t> steps = m.find_all(RegionKind::Parallel);
  ASSERT_EQ(steps.size(), 2u) << m.dump();
  std::ifstream in(std::string(SCALEA_SOURCE_DIR) + "/tests/integration/template_twins.cpp");
  std::string text, at;
  for (int n = 1; std::getline(in, text); ++n)
    if (text.find("/* STEP */") != std::string::npos) at = "template_twins.cpp:" + std::to_string(n);
  for (uint32_t s : steps) EXPECT_EQ(m.region(s).location(), at);
  AppRun json = run_scalea_cli({"report", r.experiment, "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.describe();
  nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;
  std::vector<std::string> regions;
  for (const auto& region : doc["regions"]) regions.push_back(region["path"]);
  std::vector<std::string> sorted = regions;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
      << "a call path twice in:\n" << json.out;
  for (const char* k : {"#1", "#2"})
    EXPECT_NE(std::find(regions.begin(), regions.end(), "template_twins/parallel@" + at + k),
              regions.end())
        << k << " missing in:\n" << json.out;
  AppRun diff = run_scalea_cli({"diff", r.experiment, r.experiment, "--format", "json"});
  ASSERT_EQ(diff.status, 0) << diff.describe();
  doc = nlohmann::json::parse(diff.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << diff.out;
  std::vector<std::string> rows;
  for (const auto& row : doc["regions"]) rows.push_back(row["path"]);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, sorted) << diff.out;
}

// The calling contexts and regions `scalea drg` merges from `experiments` (its "threads" line).
std::pair<int, int> drg_counts(const std::vector<std::string>& experiments) {
  std::vector<std::string> args{"drg"};
  args.insert(args.end(), experiments.begin(), experiments.end());
  Run r = run_scalea_cli(args);
  EXPECT_EQ(r.status, 0) << r.describe();
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex(R"(\((\d+) calling contexts, (\d+) regions\))"))) {
    ADD_FAILURE() << "no counts in scalea drg's output:\n" << r.out;
    return {-1, -1};
  }
  return {std::stoi(m[1]), std::stoi(m[2])};
}

// One program built in two directories: each run's files and module have other paths, with the
// same base names. `scalea drg` of both runs merges their regions, as the classifier matches them.
TEST(Symbols, OneProgramBuiltInTwoDirectoriesMergesAcrossRuns) {
  AppRun a = run_with_tool({app("tree_a/imbalance"), "5"}, {{"OMP_NUM_THREADS", "2"}});
  AppRun b = run_with_tool({app("tree_b/imbalance"), "5"}, {{"OMP_NUM_THREADS", "2"}});
  ASSERT_EQ(a.status, 0) << a.describe();
  ASSERT_EQ(b.status, 0) << b.describe();
  Measured ma(a), mb(b);
  ASSERT_TRUE(ma.ok());
  ASSERT_TRUE(mb.ok());
  const drg::Region& loop_a = ma.region(ma.find(RegionKind::Loop));
  const drg::Region& loop_b = mb.region(mb.find(RegionKind::Loop));
  EXPECT_NE(loop_a.file.find("/tree_a/"), std::string::npos) << loop_a.file;
  EXPECT_NE(loop_b.file.find("/tree_b/"), std::string::npos) << loop_b.file;
  EXPECT_NE(loop_a.module, loop_b.module);

  std::pair<int, int> one = drg_counts({a.experiment});
  std::pair<int, int> both = drg_counts({a.experiment, b.experiment});
  EXPECT_EQ(both.second, one.second) << "regions of run A alone, and merged with run B";
  EXPECT_EQ(both.first, one.first) << "calling contexts of run A alone, and merged with run B";
}

// C++ templates: a parallel region in Grid<...>::update, a member function template of a class
// template over nested std::maps, whose demangled names run to thousands of characters. With -g
// it is labelled at its pragma; without, by the function's short name and the outlined body.
// Never longer than a label's width.
TEST(Symbols, TemplateRegionsHaveShortLabels) {
  std::ifstream in(std::string(SCALEA_SOURCE_DIR) + "/tests/integration/template_regions.cpp");
  std::string text, at;
  for (int n = 1; std::getline(in, text); ++n)
    if (text.find("/* UPDATE */") != std::string::npos)
      at = "template_regions.cpp:" + std::to_string(n);
  for (const char* name : {"template_regions_g", "template_regions"}) {
    AppRun r = run_inlined(name);
    ASSERT_EQ(r.status, 0) << r.describe();
    Measured m(r);
    ASSERT_TRUE(m.ok());
    uint32_t par = m.find(RegionKind::Parallel);
    const drg::Region& reg = m.region(par);
    EXPECT_GT(reg.function.size(), 1000u) << reg.function;  // the whole signature is kept
    std::string label = reg.label() + " @" + reg.location();
    EXPECT_LE(label.size(), drg::kMaxNameLength) << label;
    if (std::string(name) == "template_regions_g") EXPECT_EQ(reg.location(), at);
    else EXPECT_EQ(reg.location(), "physics::Grid<...>::update<...> (" + reg.symbol + ")");
    for (uint32_t n : m.tree().preorder())
      EXPECT_LE(m.region(n).location().size(), drg::kMaxNameLength) << m.tree().path(n);
  }
}

}  // namespace
}  // namespace scalea::test
