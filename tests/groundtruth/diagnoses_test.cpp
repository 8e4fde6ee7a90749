// The diagnoses on the shapes real codes have (apps/omp/shapes.c): each shape plants a known
// overhead, runs under `scalea run` as a user would, and the classifier must name it in the right
// class, at the right region, and the findings must not name a cause that is not there
// (docs/groundtruth.md). Registered for libomp 14 and libomp 19.
#include <set>

#include <nlohmann/json.hpp>

#include "groundtruth.hpp"

namespace scalea::test {
namespace {

// shapes MODE ARGS... with p threads under `scalea run`.
AppRun run_shape(int p, const std::vector<std::string>& args,
                 const std::vector<std::string>& run_options = {}) {
  std::vector<std::string> argv{"run", "-q", "-o", "{exp}"};
  argv.insert(argv.end(), run_options.begin(), run_options.end());
  argv.insert(argv.end(), {"--", app("shapes")});
  argv.insert(argv.end(), args.begin(), args.end());
  return run_scalea_cli(argv, {{"OMP_NUM_THREADS", sp(p)}, {"SCALEA_QUIET", "1"}});
}

// A shape at p threads against its 1-thread reference, classified.
Classified with_reference(int p, const std::vector<std::string>& args,
                          const std::vector<std::string>& run_options = {}) {
  auto ref = std::make_unique<AppRun>(run_shape(1, args, run_options));
  return Classified(run_shape(p, args, run_options), std::move(ref));
}

// `scalea report RUN -r REF --format json`: the findings the user reads.
// The JSON report of the run (against its reference, if any).
nlohmann::json report_of(const Classified& c) {
  std::vector<std::string> args{"report", c.run.experiment, "--format", "json", "--findings", "10"};
  if (c.ref_run) args.insert(args.end(), {"-r", c.ref_run->experiment});
  AppRun r = run_scalea_cli(args);
  EXPECT_EQ(r.status, 0) << r.describe();
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  if (doc.is_discarded())
    ADD_FAILURE() << "the JSON report does not parse: " << r.out.substr(0, 400);
  return doc;
}

// The patterns of the JSON report, in order ("pipeline", "fork/join loops, task-parallel").
std::string pattern_of(const nlohmann::json& doc) {
  std::string out;
  for (const auto& p : doc.value("patterns", nlohmann::json::array()))
    out += (out.empty() ? "" : ", ") + p.value("pattern", "");
  return out;
}

nlohmann::json findings_of(const Classified& c) {
  nlohmann::json doc = report_of(c);
  if (doc.is_discarded() || !doc.contains("findings")) {
    ADD_FAILURE() << "no findings in the JSON report";
    return nlohmann::json::array();
  }
  // Each region's overhead of one kind is one finding (EP's reduction was once listed twice: the
  // loop's idle time and the barrier's waits both named the barrier).
  std::set<std::string> seen;
  for (const auto& f : doc["findings"]) {
    std::string key = std::to_string(f.value("node", 0u)) + " " + f.value("class", "") + "." +
                      f.value("subclass", "");
    EXPECT_TRUE(seen.insert(key).second) << "finding listed twice: " << f.value("text", "");
  }
  return doc["findings"];
}

// No finding names this subclass ("loss_of_parallelism.replicated").
void expect_no_finding(const nlohmann::json& findings, const std::string& key) {
  for (const auto& f : findings) {
    std::string k = f.value("class", "") + "." + f.value("subclass", "");
    EXPECT_NE(k, key) << "finding " << f.value("text", "");
  }
}

// The first finding of this subclass, or null.
nlohmann::json finding(const nlohmann::json& findings, const std::string& key) {
  for (const auto& f : findings)
    if (f.value("class", "") + "." + f.value("subclass", "") == key) return f;
  return nullptr;
}

class Shapes : public ::testing::TestWithParam<int> {};
std::string p_name(const ::testing::TestParamInfo<int>& info) { return "p" + sp(info.param); }

// ---- a worksharing loop that runs slower at p > 1 is not replicated work -----------------------
// Each of N iterations sleeps T (1 + C (p - 1)): the same divided work, slower per iteration (as
// page faults on fresh memory make it). Its extra time is unidentified; nothing is replicated.
TEST_P(Shapes, SlowLoopIsUnidentifiedNotReplicated) {
  const int p = GetParam();
  Classified c = with_reference(p, {"slowloop", "8", "10", "0.5"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("shapes.c", "PAR_SLOW"));
  uint32_t loop = m.child(par, RegionKind::Loop, at("shapes.c", "LOOP_SLOW"));
  double extra = truth(c.run, "work") - truth(*c.ref_run, "work");
  EXPECT_GT(extra, 0.5 * 0.08 * (p - 1) * 0.9) << "the planted slow-down did not happen";
  const auto& r = c.at(loop);
  EXPECT_NEAR(subclass(r, "loss_of_parallelism.replicated"), 0, 1e-6) << describe(r);
  EXPECT_NEAR(cls(r, ov::Class::Unidentified), extra / p, tolerance(extra / p)) << describe(r);
  auto f = findings_of(c);
  expect_no_finding(f, "loss_of_parallelism.replicated");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].value("class", ""), "unidentified") << f[0].dump();
  EXPECT_EQ(f[0].value("node", 0u), loop) << f[0].dump();
}

// ---- a wavefront pipeline polling flags with flush: its waiting is synchronization --------------
TEST_P(Shapes, PipelineSpinIsSynchronization) {
  const int p = GetParam();
  Classified c = with_reference(p, {"pipeline", "4", "4", "10"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("shapes.c", "PAR_PIPE"));
  uint32_t loop = m.child(par, RegionKind::Loop, at("shapes.c", "LOOP_PIPE"));
  double spin = truth(c.run, "spin");
  EXPECT_GT(spin, 0.5 * 0.010) << "the pipeline did not wait";
  // Unplanned: the steps' sleeps beyond the reference's (each may wake late).
  double late = std::fabs(truth(c.run, "work") - truth(*c.ref_run, "work")) / p;
  expect_recovered(c.at(loop),
                   {{{"synchronization.spin_wait"}, spin / p, "polling for the previous stage"}},
                   true, "the pipeline's loop", {"synchronization.load_imbalance"}, late);
  EXPECT_NEAR(subclass(c.at(loop), "loss_of_parallelism.replicated"), 0, 1e-6);
  auto f = findings_of(c);
  expect_no_finding(f, "loss_of_parallelism.replicated");
  nlohmann::json s = finding(f, "synchronization.spin_wait");
  ASSERT_FALSE(s.is_null()) << f.dump(1);
  EXPECT_EQ(s.value("node", 0u), loop);
}

// ---- tasks created by one thread and run by the team: their time is counted once ---------------
// S ms serial, then parallel { single nowait { N tasks of T ms } }.
const std::vector<std::string> kTasks = {"tasks", "150", "200", "1"};

TEST(ShapesP1, TasksCountedOnceWithoutReference) {
  Classified c(run_shape(1, kTasks));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const auto& root = c.at(c.m->root());
  EXPECT_NEAR(root.t_o, 0, tolerance(0.01 * root.t_p)) << describe(root);
  EXPECT_LE(c.a.program.parallel_efficiency, 1 + 1e-9);
  EXPECT_LE(c.a.program.communication_efficiency, 1 + 1e-9);
  for (const auto& r : c.a.regions) EXPECT_GE(r.t_o, -tolerance(0)) << describe(r);
}

TEST_P(Shapes, TasksCountedOnce) {
  const int p = GetParam();
  Classified c = with_reference(p, kTasks);
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("shapes.c", "PAR_TASKS"));
  uint32_t single = m.child(par, RegionKind::Single, at("shapes.c", "SINGLE_TASKS"));
  double serial = truth(c.run, "serial", 0.150);
  // The serial part runs on one thread; the start of the program (the tool, the runtime) is
  // not planted: up to 10 ms of it may be counted with it.
  double share = double(p - 1) / p;
  double lost = subclass(c.at(m.root()), "loss_of_parallelism.unparallelized");
  EXPECT_GE(lost, serial * share - tolerance(serial * share)) << describe(c.at(m.root()));
  EXPECT_LE(lost, serial * share + tolerance(serial * share) + 0.010 * share)
      << describe(c.at(m.root()));
  // The tasks ran in the join barrier: it holds its waiting, not their time.
  for (uint32_t bar : m.children(par, RegionKind::BarrierImplicit))
    EXPECT_LT(std::fabs(cls(c.at(bar), ov::Class::Unidentified)), tolerance(0))
        << describe(c.at(bar));
  // The single holds the tasks it created: its row makes sense on its own.
  const auto& s = c.at(single);
  EXPECT_GT(s.t_p, 0.9 * truth(c.run, "tasks") / p) << describe(s);
  EXPECT_LT(std::fabs(s.t_o), 0.5 * s.t_p) << describe(s);
  ASSERT_TRUE(c.a.program.global_efficiency.has_value());
  EXPECT_LE(*c.a.program.global_efficiency, 1.02);
  EXPECT_LE(c.a.program.parallel_efficiency, 1 + 1e-9);
  auto f = findings_of(c);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].value("class", "") + "." + f[0].value("subclass", ""),
            "loss_of_parallelism.unparallelized")
      << f[0].dump();
  EXPECT_EQ(f[0].value("node", 1u), m.root());
  expect_no_finding(f, "unidentified");
}

// ---- masked, and fewer sections than threads: part of the team works ---------------------------
TEST_P(Shapes, PartialConstructsAreLossNotImbalance) {
  const int p = GetParam();
  Classified c = with_reference(p, {"partial", "10", "10"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("shapes.c", "PAR_PARTIAL"));
  uint32_t masked = m.child(par, RegionKind::Masked, at("shapes.c", "MASKED"));
  uint32_t sections = m.child(par, RegionKind::Sections, at("shapes.c", "SECTIONS"));
  double body = truth(c.run, "masked");
  const double share = double(p - 1) / p;
  double body_ref = truth(*c.ref_run, "masked");
  expect_recovered(c.at(masked),
                   {{{"loss_of_parallelism.partially_parallelized"},
                     body * share,
                     "the team idles while the primary thread runs the body"}},
                   true, "masked", {}, std::fabs(body - body_ref));
  // Two sections per round: with more than two threads, p - 2 of them have none. The sections
  // last 3 S in all; beyond that a section's sleep ended late or a thread came late from the
  // barrier before (a loaded machine): nobody planted that, and it may show as imbalance.
  const auto& s = c.at(sections);
  double idle = p > 2 ? s.t_p * (p - 2) / p : 0.0;
  double late = std::max(0.0, s.t_p - 3 * 0.010);
  EXPECT_NEAR(subclass(s, "loss_of_parallelism.partially_parallelized"), idle,
              tolerance(idle) + late)
      << describe(s);
  EXPECT_NEAR(subclass(s, "synchronization.load_imbalance"), 0, tolerance(0) + late) << describe(s);
  // Findings at these two constructs name the loss of parallelism; what the run's own slowness
  // adds (the masked body slower than in the reference, the sections late) may be named as
  // unidentified, never as another cause.
  auto f = findings_of(c);
  for (const auto& x : f) {
    const uint32_t node = x.value("node", 0u);
    if (node != masked && node != sections) continue;
    if (x.value("class", "") == "unidentified")
      EXPECT_LE(x.value("seconds", 0.0),
                tolerance(0) + (node == masked ? std::fabs(body - body_ref) : late))
          << x.dump();
    else EXPECT_EQ(x.value("class", ""), "loss_of_parallelism") << x.dump();
  }
  // The masked body's idle team (or the waits at the barrier after it) is named as the masked
  // construct's; the sections' idle threads may rank before it (their amounts are close).
  bool named = false;
  for (const auto& x : f)
    if (x.value("class", "") + "." + x.value("subclass", "") ==
            "loss_of_parallelism.partially_parallelized" &&
        x.value("text", "").find("masked at shapes.c") != std::string::npos)
      named = true;
  EXPECT_TRUE(named) << f.dump(1);
}

// ---- a reduction libomp reports at one thread but not at small teams is not removed work --------
TEST_P(Shapes, ReductionIsNotRemovedWork) {
  const int p = GetParam();
  Classified c = with_reference(p, {"reduction", "8", "5"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  for (const auto& r : c.a.only_in_reference)
    EXPECT_NEAR(subclass(r, "additional_computation.removed"), 0, 1e-9) << describe(r);
  EXPECT_NEAR(cls(c.at(c.m->root()), ov::Class::AdditionalComputation), 0, 1e-9);
  auto f = findings_of(c);
  expect_no_finding(f, "additional_computation.removed");
  expect_no_finding(f, "additional_computation");
}

// ---- recursive tasks: counted once, folded in the report ---------------------------------------
TEST_P(Shapes, RecursiveTasksFolded) {
  const int p = GetParam();
  Classified c = with_reference(p, {"recursive", "6", "1"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  double leaves = truth(c.run, "leaves");
  EXPECT_LE(c.a.program.parallel_efficiency, 1 + 1e-9);
  // The useful time of the tree the single created is the leaves' sleeps (plus the tasks' own
  // code), once.
  uint32_t par = c.m->child(c.m->root(), RegionKind::Parallel, at("shapes.c", "PAR_TREE"));
  const auto& single = c.at(c.m->child(par, RegionKind::Single, at("shapes.c", "SINGLE_TREE")));
  EXPECT_NEAR(single.useful_pe, leaves, tolerance(leaves)) << describe(single);
  AppRun text = run_scalea_cli({"report", c.run.experiment, "-r", c.ref_run->experiment});
  ASSERT_EQ(text.status, 0) << text.describe();
  // The table's lines (the findings below it show source lines, whatever the folding).
  const std::string table = text.out.substr(0, text.out.find("\nfindings"));
  size_t lines = size_t(std::count(table.begin(), table.end(), '\n'));
  EXPECT_LT(lines, 50u) << text.out;
  EXPECT_NE(text.out.find("recursion folded"), std::string::npos) << text.out;
  // The team shares the tasks: no task (or region in one) is serial code. (The program's own
  // start and end, a few ms of a run this short, may be.)
  for (const auto& x : findings_of(c))
    if (x.value("class", "") == "loss_of_parallelism")
      EXPECT_EQ(x.value("node", 1u), c.m->root()) << x.dump();
}

// ---- untied tasks: each part is recorded in the task's creation context ------------------------
// libomp runs an untied task in parts and may resume it on another thread; the thread a part
// leaves runs other tasks meanwhile. Those must not be recorded inside the suspended task: that
// made call paths the reference does not have, and their work "additional computation" (BOTS
// health and sparselu, docs/validation.md W3).
TEST_P(Shapes, UntiedTasksKeepTheirCreationContext) {
  const int p = GetParam();
  // 20 rounds of a tree 5 levels deep, 3 children per node, whose top 2 levels are untied tasks
  // (the rest recursive calls), 5 us of work per node: fine-grained, so parts move threads often.
  const int levels = 2;
  Classified c = with_reference(p, {"untied", "5", "3", "0.005", sp(levels), "20"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  // Tasks nest as they were created: the root task and at most `levels` below it on any path, and
  // nothing else below a task than tasks and their taskwaits (no barrier of the thread that
  // created the root).
  for (uint32_t task : m.find_all(RegionKind::Task, at("shapes.c", "TASK_UNTIED"))) {
    int nesting = 0;
    for (uint32_t n = task; n != format::kNoIndex; n = m.parent(n))
      if (m.region(n).kind == RegionKind::Task) ++nesting;
    EXPECT_LE(nesting, levels + 1) << m.tree().path(task);
  }
  uint32_t root_task = m.find(RegionKind::Task, at("shapes.c", "TASK_UNTIED_ROOT"));
  for (RegionKind k : {RegionKind::BarrierImplicit, RegionKind::BarrierExplicit})
    EXPECT_TRUE(m.descendants(root_task, k).empty()) << m.dump();
  // Every path in the tree the single created is one the reference has.
  uint32_t par = m.child(m.root(), RegionKind::Parallel, at("shapes.c", "PAR_UNTIED"));
  uint32_t single_node = m.child(par, RegionKind::Single, at("shapes.c", "SINGLE_UNTIED"));
  for (RegionKind k : {RegionKind::Task, RegionKind::Taskwait})
    for (uint32_t n : m.descendants(single_node, k)) {
      EXPECT_TRUE(c.at(n).in_reference) << describe(c.at(n));
      EXPECT_NEAR(cls(c.at(n), ov::Class::AdditionalComputation), 0, 1e-9) << describe(c.at(n));
    }
  EXPECT_NEAR(cls(c.at(m.root()), ov::Class::AdditionalComputation), 0, 1e-9);
  // The nodes' work is counted once, in the single that created the tree.
  const auto& single = c.at(single_node);
  double work = truth(c.run, "work");
  EXPECT_NEAR(single.useful_pe, work, tolerance(work)) << describe(single);
  expect_no_finding(findings_of(c), "additional_computation.algorithm");
}

// ---- many parallel regions back to back: balanced work, no serial code between them ------------
// The workers are outside the regions only around each fork and join: that is fork/join, not serial
// code (docs/validation.md W1); the waits at the end of balanced loops are not imbalance and must
// not be told to use a dynamic schedule (W2).
TEST_P(Shapes, ForkJoinOfBalancedRegions) {
  const int p = GetParam();
  Classified c = with_reference(p, {"forkjoin", "1000", "4", "0.05"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const auto& root = c.at(c.m->root());
  // The serial code between the regions, and a little for the program's start and end.
  double serial = truth(c.run, "serial");
  EXPECT_LT(subclass(root, "loss_of_parallelism.unparallelized"), serial + 0.002) << describe(root);
  auto f = findings_of(c);
  expect_no_finding(f, "loss_of_parallelism.unparallelized");
  // With more threads than CPUs (p = 4 here), threads that waited for a CPU as long as their
  // work differs (sleeps on a busy machine), or a difference of a few per cent (equal sleeps took
  // 250 and 267 ms on the two CPUs of a quiet VM), threads' equal work may take unequal time: the
  // hint must say so before any advice on the schedule; so must it when the same thread was the
  // slowest in every loop (a slower CPU).
  for (const auto& x : f) {
    std::string hint = x.value("hint", "");
    if (x.value("subclass", "") != "barrier" && x.value("subclass", "") != "load_imbalance")
      continue;
    size_t dynamic = hint.find("schedule(dynamic");
    if (dynamic != std::string::npos)
      EXPECT_LT(std::min({hint.find("shared CPUs"), hint.find("for a CPU"),
                          hint.find("CPUs can make"), hint.find("slowest in")}),
                dynamic)
          << x.value("text", "") << ": " << hint;
  }
}

// ---- a loop already dynamic, whose chunks are too large: the advice reads its directive --------
// `schedule(dynamic, chunk)` with the first chunk ten times the others' work: the thread that
// takes it works while the other waits at the loop's barrier. The finding must not advise a
// dynamic schedule; it names the directive and smaller chunks (issue: "dynamic schedule" advised
// for a loop already schedule(dynamic,100)). imbalance's `schedule(static)` loop is advised one.
TEST(ShapesP2, DynamicLoopIsNotAdvisedADynamicSchedule) {
  Classified c = with_reference(2, {"chunks", "8", "4", "20"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const int line = source_line("apps/omp/shapes.c", "LOOP_CHUNKS");
  bool named = false;
  for (const auto& x : findings_of(c)) {
    std::string hint = x.value("hint", "");
    if (x.value("subclass", "") != "barrier" && x.value("subclass", "") != "load_imbalance")
      continue;
    EXPECT_EQ(hint.find("try schedule(dynamic"), std::string::npos) << hint;
    EXPECT_EQ(hint.find("(dynamic schedule"), std::string::npos) << hint;
    if (hint.find("the loop is already schedule(dynamic, chunk) (shapes.c:" + std::to_string(line) +
                  ")") != std::string::npos &&
        hint.find("smaller chunks") != std::string::npos)
      named = true;
  }
  EXPECT_TRUE(named) << "no finding names the dynamic schedule and smaller chunks";
}

// A critical section around one update (`sum += v`, 200,000 times on 2 threads): its waits are
// advised the atomic update and the reduction that need no lock, read from its body.
TEST(ShapesP2, CriticalAroundOneUpdateIsAdvisedAtomicOrReduction) {
  Classified c = with_reference(2, {"critical", "200000"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const int line = source_line("apps/omp/shapes.c", "CRITICAL_SUM");
  bool named = false;
  for (const auto& x : findings_of(c)) {
    if (x.value("subclass", "") != "critical") continue;
    std::string hint = x.value("hint", "");
    named = hint.find("the critical section (shapes.c:" + std::to_string(line) +
                      ") guards one update, `sum += v`") != std::string::npos &&
            hint.find("#pragma omp atomic") != std::string::npos &&
            hint.find("reduction(+: sum)") != std::string::npos;
    EXPECT_TRUE(named) << hint;
  }
  EXPECT_TRUE(named) << "no critical-section finding";
}

// ---- a loop with no schedule clause whose iterations cost more and more -----------------------
// `parallel for` (no clause: libomp's static) over 24 iterations, iteration i sleeping 8 (i+1)/24
// ms: the last thread gets most of the work and the other waits at the join barrier, which is the
// loop's barrier in a combined `parallel for`. The advice reads the directive (no clause) and
// names a schedule with a chunk from the measured cost: single iterations take milliseconds.
TEST(ShapesP2, RisingLoopWithoutClauseIsAdvisedAScheduleAndChunk) {
  Classified c = with_reference(2, {"rising", "3", "24", "8"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const int line = source_line("apps/omp/shapes.c", "LOOP_RISING");
  bool named = false;
  for (const auto& x : findings_of(c)) {
    if (x.value("subclass", "") != "barrier" && x.value("subclass", "") != "load_imbalance")
      continue;
    std::string hint = x.value("hint", "");
    named = named ||
            (hint.find("the loop has no schedule clause (shapes.c:" + std::to_string(line) + ")") !=
                 std::string::npos &&
             hint.find("try schedule(dynamic, 1) (1 iteration takes about") != std::string::npos);
    // The source lines shown with it: the directive at the line the region names, and below.
    const auto& src = x["source"];
    ASSERT_TRUE(src.is_object()) << x.dump();
    bool directive = false;
    for (const auto& l : src["lines"])
      directive = directive || (l.value("line", 0) == line &&
                                l.value("text", "").find("LOOP_RISING") != std::string::npos);
    EXPECT_TRUE(directive) << src.dump();
  }
  EXPECT_TRUE(named) << "no finding names the missing clause and schedule(dynamic, 1)";
}

// ---- a barrier nowait could remove -------------------------------------------------------------
// `twoloops`: in one parallel region an imbalanced `omp for schedule(static)` writing a[i], then a
// `schedule(static)` loop over the same iterations reading a[i]: the first loop's barrier could go
// (nowait), safely since each thread gets the same iterations in both. A combined `parallel for`
// (rising) is never advised nowait: its barrier ends the region.
TEST(ShapesP2, BarrierBeforeALoopIsAdvisedNowait) {
  Classified c = with_reference(2, {"twoloops", "6", "16", "8"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const int first = source_line("apps/omp/shapes.c", "LOOP_FIRST");
  bool named = false;
  for (const auto& x : findings_of(c)) {
    std::string hint = x.value("hint", "");
    if (x.value("subclass", "") != "barrier") continue;
    named =
        named || (hint.find("`nowait` on the loop's directive (shapes.c:" + std::to_string(first) +
                            ") removes this barrier") != std::string::npos &&
                  hint.find("each thread gets the same iterations in both") != std::string::npos);
  }
  EXPECT_TRUE(named) << "no barrier finding advises nowait on the first loop";
  // Each loop runs once per execution of its region: no serial loop around it to name.
  for (const auto& x : findings_of(c))
    EXPECT_EQ(x.value("hint", "").find("times per execution"), std::string::npos)
        << x.value("hint", "");
  // The region that only reads the team's size is no phase of its own.
  EXPECT_EQ(pattern_of(report_of(c)), "fork/join loops");
  Classified combined = with_reference(2, {"rising", "2", "16", "4"});
  ASSERT_TRUE(combined.ok()) << combined.run.describe();
  for (const auto& x : findings_of(combined))
    EXPECT_EQ(x.value("hint", "").find("nowait"), std::string::npos) << x.value("hint", "");
}

// ---- a barrier right after a loop's own barrier -----------------------------------------------
// `barriers`: in one parallel region, passes of an `omp for` followed directly by an explicit
// barrier (redundant: the loop's barrier holds the threads already), then an `omp for nowait`
// followed by an explicit barrier (needed). Only the first explicit barrier is advised removed,
// naming the loop it follows; the loop's own barrier is not advised nowait (the explicit barrier
// after it would hold the threads anyway).
TEST(ShapesP2, BarrierRightAfterALoopIsAdvisedRemoved) {
  Classified c = with_reference(2, {"barriers", "5000", "64"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const std::string redundant =
      "barrier@shapes.c:" + std::to_string(source_line("apps/omp/shapes.c", "BARRIER_REDUNDANT"));
  const std::string loop = std::to_string(source_line("apps/omp/shapes.c", "LOOP_BEFORE_BARRIER"));
  bool named = false;
  int barriers = 0;
  for (const auto& x : findings_of(c)) {
    const std::string hint = x.value("hint", ""), path = x.value("path", "");
    const bool removed = hint.find("remove this barrier") != std::string::npos;
    barriers += x.value("subclass", "") == "barrier";
    if (path.size() >= redundant.size() &&
        path.compare(path.size() - redundant.size(), redundant.size(), redundant) == 0)
      named = removed && hint.find("directly follows the end of `omp for` at shapes.c:" + loop) !=
                             std::string::npos;
    else EXPECT_FALSE(removed) << path << ": " << hint;
    EXPECT_EQ(hint.find("removes this barrier"), std::string::npos) << path << ": " << hint;
  }
  EXPECT_TRUE(named) << "no finding at " << redundant << " advises removing it";
  EXPECT_GE(barriers, 2) << "the needed barrier is no finding: its check says nothing";
  // The loop is entered 5,000 times per execution of its region, inside the serial loop of
  // passes: its barrier finding says so and names that loop.
  const std::string par = std::to_string(source_line("apps/omp/shapes.c", "PAR_BARRIERS")),
                    passes = std::to_string(source_line("apps/omp/shapes.c", "PASSES_LOOP"));
  bool inner = false;
  for (const auto& x : findings_of(c))
    inner =
        inner ||
        x.value("hint", "")
                .find(
                    "this loop is entered 5000 times per execution of the parallel at "
                    "shapes.c:" +
                    par + " (inside the serial `for (int r = 0; r < passes; ++r)` at shapes.c:" +
                    passes + ")") != std::string::npos;
  EXPECT_TRUE(inner) << "no finding names the serial loop around the worksharing loop";
}

// ---- a dynamic loop whose chunks cost less than taking them ------------------------------------
// `schedule(dynamic)` over 100,000 iterations of a few nanoseconds, 4 times: the two threads
// contend for every single-iteration chunk, time no event measures (unidentified). The advice is
// larger chunks with a number from the reference's cost per iteration, never a dynamic schedule.
TEST(ShapesP2, TinyDynamicChunksAreAdvisedLarger) {
  Classified c = with_reference(2, {"tiny", "4", "100000"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const int line = source_line("apps/omp/shapes.c", "LOOP_TINY");
  bool named = false;
  for (const auto& x : findings_of(c)) {
    std::string hint = x.value("hint", "");
    EXPECT_EQ(hint.find("try schedule(dynamic"), std::string::npos) << hint;
    named = named || (hint.find("the loop is already schedule(dynamic) (shapes.c:" +
                                std::to_string(line) + ")") != std::string::npos &&
                      hint.find("give larger chunks, schedule(dynamic, ") != std::string::npos);
  }
  EXPECT_TRUE(named) << "no finding advises larger chunks for the dynamic loop";
}

// ---- the program's pattern (findings/pattern.hpp) ---------------------------------------------
// The pipeline of `shapes pipeline` (threads poll their neighbour's flag with flush, as NPB LU) is
// recognised as one, and no finding advises it a schedule, which would break the wavefront; a loop
// of independent iterations is fork/join loops; a single thread creating tasks the team runs is
// task-parallel.

TEST(ShapesP2, PipelineIsRecognisedAndNotAdvisedASchedule) {
  Classified c = with_reference(2, {"pipeline", "4", "6", "10"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  nlohmann::json doc = report_of(c);
  EXPECT_EQ(pattern_of(doc), "pipeline");
  for (const auto& x : doc.value("findings", nlohmann::json::array())) {
    std::string hint = x.value("hint", "");
    EXPECT_EQ(hint.find("schedule(dynamic"), std::string::npos) << hint;
    EXPECT_EQ(hint.find("schedule(guided"), std::string::npos) << hint;
    if (x.value("subclass", "") == "barrier")
      EXPECT_NE(hint.find("the threads form a pipeline"), std::string::npos) << hint;
  }
}

// The pipeline's region also holds an ordinary imbalanced loop (as NPB LU's region holds loops
// beside its wavefront): that loop's barrier keeps its schedule advice; only the pipeline's loop
// is told that another schedule would break it (validation.md, 2026-12-02: the region-wide test
// would have called LU's ordinary loops a pipeline's).
TEST(ShapesP2, PipelinesOtherLoopKeepsItsAdvice) {
  Classified c = with_reference(2, {"pipeline", "4", "3", "5", "16", "6"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const int after = source_line("apps/omp/shapes.c", "LOOP_AFTER_PIPE");
  bool advised = false;
  for (const auto& x : findings_of(c)) {
    if (x.value("subclass", "") != "barrier" ||
        x.value("location", "") != "shapes.c:" + std::to_string(after))
      continue;
    std::string hint = x.value("hint", "");
    EXPECT_EQ(hint.find("the threads form a pipeline"), std::string::npos) << hint;
    advised = advised ||
              hint.find("the loop is schedule(static) (shapes.c:" + std::to_string(after) + ")") !=
                  std::string::npos;
  }
  EXPECT_TRUE(advised) << "the ordinary loop's barrier is not advised on its schedule";
}

TEST(ShapesP2, LoopsAndTasksAreTheirPatterns) {
  Classified loops = with_reference(2, {"rising", "1", "8", "2"});
  ASSERT_TRUE(loops.ok()) << loops.run.describe();
  EXPECT_EQ(pattern_of(report_of(loops)), "fork/join loops");
  Classified tasks = with_reference(2, {"tasks", "5", "8", "4"});
  ASSERT_TRUE(tasks.ok()) << tasks.run.describe();
  EXPECT_EQ(pattern_of(report_of(tasks)), "task-parallel");
}

// ---- a scratch buffer the parallel version maps anew at each call: page faults ----------------
// The loop's extra time over the reference is its page faults (LULESH's force arrays with more
// than one thread). The model has no class for them: unidentified, not replicated or additional
// computation, and the finding names the faults and the allocation, not "no measured event".
// At 2 threads only: with more threads than this machine's 2 CPUs, waiting for a CPU dilutes the
// faults' share of the time.
TEST(ShapesP2, ScratchPageFaultsAreNamed) {
  Classified c = with_reference(2, {"scratch", "64", "4"}, {"--counters", "perf::PAGE-FAULTS"});
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  uint32_t loop = m.find(RegionKind::Loop, at("shapes.c", "LOOP_SCRATCH"));
  ASSERT_NE(loop, kNone) << m.dump();
  auto f = findings_of(c);
  expect_no_finding(f, "loss_of_parallelism.replicated");
  expect_no_finding(f, "additional_computation");
  bool named = false;
  for (const auto& x : f) {
    // (The loop may also have a small load imbalance of its own: the faults' cost varies.)
    if (x.value("node", 0u) != loop || x.value("class", "") != "unidentified") continue;
    EXPECT_NE(x.value("evidence", "").find("PAGE-FAULTS"), std::string::npos) << x.dump();
    std::string hint = x.value("hint", "");
    EXPECT_EQ(hint.rfind("page faults take at least", 0), 0u) << hint;
    EXPECT_NE(hint.find("allocate it once"), std::string::npos) << hint;
    named = true;
  }
  EXPECT_TRUE(named) << "no unidentified finding at the scratch loop: " << f.dump(1);
}

// ---- a league of teams on the host: each team's work inside the teams region --------------------
// `teams distribute parallel for num_teams(2) thread_limit(1)`: two teams, each on its own thread,
// each running its share of the iterations in a parallel region of its own. libomp reports the
// league as a parallel region with the league flag and each team's start as an initial task; the
// teams region must hold both teams' work on the threads that ran them (before, the second team's
// work hung at the program root, the first's under a "parallel region", and each loop was called
// unparallelized code, 50 %), with every runtime event matched.
TEST(ShapesP2, HostTeamsHoldBothTeamsWork) {
  const int rounds = 2, n = 8;
  Classified c(run_shape(2, {"teams", sp(rounds), sp(n), "10"}));
  ASSERT_TRUE(c.ok()) << c.run.describe();
  const Measured& m = *c.m;
  const nlohmann::json& anomalies = m.exp().meta["anomalies"];
  EXPECT_EQ(anomalies.value("unmatched_end", -1), 0) << anomalies.dump();
  EXPECT_EQ(anomalies.value("unclosed", -1), 0) << anomalies.dump();
  uint32_t teams = m.child(m.root(), RegionKind::Teams, at("shapes.c", "TEAMS"));
  uint32_t dist = m.child(teams, RegionKind::Distribute);
  uint32_t par = m.child(dist, RegionKind::Parallel);
  uint32_t loop = m.child(par, RegionKind::Loop);
  ASSERT_NE(loop, kNone) << m.dump();
  // Nothing of the league outside it (the runtime's own team in each team is no region at all).
  for (RegionKind k : {RegionKind::Parallel, RegionKind::Distribute, RegionKind::Loop})
    EXPECT_EQ(m.find_all(k).size(), 1u) << m.dump();
  // Each team on its own thread: in the league and in a parallel region of its own every round,
  // with half of the iterations, and the loop's time there is that team's sleeps.
  const std::vector<double> each(2, double(rounds));
  EXPECT_EQ(m.per_thread(teams, "visits"), each) << m.dump();
  EXPECT_EQ(m.per_thread(par, "visits"), each) << m.dump();
  EXPECT_EQ(m.per_thread(loop, "iterations"), std::vector<double>(2, double(rounds * n / 2)));
  expect_times_near_sorted(m.per_thread(loop, "time"),
                           {truth(c.run, "team0"), truth(c.run, "team1")}, "each team's loop");
  EXPECT_TIME_NEAR(m.sum(loop, "time"), truth(c.run, "work"));
  // Both teams worked all along: no region lost parallelism, none has a negative remainder or
  // more overhead than time (expect_identity: the classes sum to T_o).
  for (uint32_t node : {teams, dist, par, loop}) {
    const auto& r = c.at(node);
    EXPECT_LT(cls(r, ov::Class::LossOfParallelism), tolerance(0)) << describe(r);
    EXPECT_GT(cls(r, ov::Class::Unidentified), -tolerance(0)) << describe(r);
    EXPECT_LT(r.t_o, 0.5 * r.t_p) << describe(r);
  }
  // No finding calls the league's work lost parallelism. The program's own serial start and end
  // (the runtime starting, main before and after the leagues: a few ms, over 10 ms on a loaded
  // machine) may be unparallelized code at the root, never more than the time outside the league.
  for (const auto& x : findings_of(c))
    if (x.value("class", "") == "loss_of_parallelism")
      EXPECT_EQ(x.value("node", 1u), m.root()) << x.dump();
  const auto& root = c.at(m.root());
  EXPECT_LE(cls(root, ov::Class::LossOfParallelism), root.t_p - c.at(teams).t_p + tolerance(0))
      << describe(root) << "\n"
      << describe(c.at(teams));
}

INSTANTIATE_TEST_SUITE_P(Threads, Shapes, ::testing::Values(2, 4), p_name);

}  // namespace
}  // namespace scalea::test
