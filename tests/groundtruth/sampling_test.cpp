// Call-path sampling's ground truth (docs/sampling.md, docs/groundtruth.md): programs whose
// functions use known CPU time (apps/omp/sampled*.{c,cpp,f90}, apps/mpi/mpi_sampled.c; each thread
// measures its functions' CPU time itself and prints it) run under `scalea run`, and the report's
// sampled profile must give each function its CPU time within 10% (or two sample periods). And
// programs with signals, timers and children of their own (apps/omp/own_signals.c) behave under
// the tool as without it.
#include <nlohmann/json.hpp>

#include "groundtruth.hpp"
#include "scalea/drg/meta.hpp"

namespace scalea::test {
namespace {

// `scalea report DIR --format json`'s "sampled" object (null when nothing was sampled); the
// findings go to `findings` when given.
nlohmann::json sampled_of(const std::string& experiment, nlohmann::json* findings = nullptr) {
  AppRun r = run_scalea_cli({"report", experiment, "--format", "json"});
  EXPECT_EQ(r.status, 0) << r.describe();
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  if (doc.is_discarded() || !doc.contains("sampled")) {
    ADD_FAILURE() << "no sampled object in the JSON report: " << r.out.substr(0, 400);
    return nullptr;
  }
  if (findings) *findings = doc["findings"];
  return doc["sampled"];
}

// The sampled CPU time of the function whose name contains `name` in a list of the report's
// function objects (inclusive: the function and what it called).
double cpu_of(const nlohmann::json& functions, const std::string& name,
              std::string* hottest = nullptr) {
  for (const auto& f : functions)
    if (f.value("function", "").find(name) != std::string::npos) {
      if (hottest) *hottest = f.value("hottest_line", "");
      return f.value("inclusive_s", 0.0);
    }
  ADD_FAILURE() << "no sampled function named like " << name << " in " << functions.dump(1);
  return 0;
}

// 10% of the truth, or two sample periods (a count's boundaries) when that is more.
void expect_sampled(double sampled_s, double truth_s, double period_s, const std::string& what) {
  EXPECT_NEAR(sampled_s, truth_s, std::max(0.1 * truth_s, 2 * period_s))
      << what << ": sampled " << sampled_s << " s of CPU time, the program measured " << truth_s;
}

// A region's functions, by a part of its path ("parallel@sampled.c").
nlohmann::json region_functions(const nlohmann::json& sampled, const std::string& path_part) {
  for (const auto& r : sampled["regions"])
    if (r.value("path", "").find(path_part) != std::string::npos) return r["functions"];
  ADD_FAILURE() << "no sampled region with " << path_part << " in its path: " << sampled.dump(1);
  return nlohmann::json::array();
}

AppRun run_sampled(const std::string& program, const std::vector<std::string>& args = {},
                   const Env& env = {}) {
  std::vector<std::string> argv{"run", "-q", "-o", "{exp}", "--", app(program)};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_scalea_cli(argv, env);
}

// Serial code in main (a function, and a function inlined at -O2 shown at its own line), and a
// parallel region whose two threads run different functions: each in its own region.
TEST(Sampling, FunctionsOfMainAndOfEachThread) {
  AppRun run = run_sampled("sampled");
  ASSERT_EQ(run.status, 0) << run.describe();
  nlohmann::json findings;
  nlohmann::json s = sampled_of(run.experiment, &findings);
  ASSERT_TRUE(s.is_object()) << run.describe();
  const double period = s.value("period_s", 0.0);
  ASSERT_GT(period, 0);
  const nlohmann::json main_fns = region_functions(s, "sampled");  // the program's own row first
  std::string inlined_line;
  expect_sampled(cpu_of(main_fns, "serial_work"), truth(run, "cpu_serial", 0.2), period,
                 "serial_work in main");
  expect_sampled(cpu_of(main_fns, "inlined_work", &inlined_line), truth(run, "cpu_inlined", 0.1),
                 period, "inlined_work (inlined into main)");
  EXPECT_EQ(inlined_line, at("sampled.c", "INLINED_LOOP")) << "the inlined function's line";
  const nlohmann::json par = region_functions(s, "parallel@" + at("sampled.c", "PAR"));
  expect_sampled(cpu_of(par, "work_a"), truth(run, "cpu_a", 0.2), period, "work_a (thread 0)");
  expect_sampled(cpu_of(par, "work_b"), truth(run, "cpu_b", 0.1), period, "work_b (thread 1)");
  for (const auto& f : main_fns)
    EXPECT_EQ(f.value("function", "").find("work_a"), std::string::npos)
        << "the parallel region's work is listed in the program's row: " << f.dump();
  // The serial code's finding says where it is: the functions main ran, with their lines.
  bool named = false;
  for (const auto& f : findings)
    if (f.value("subclass", "") == "unparallelized" && f.value("node", 1u) == 0u)
      named = f.value("sampled", "").find("serial_work @" + at("sampled.c", "SERIAL_LOOP")) !=
              std::string::npos;
  EXPECT_TRUE(named) << findings.dump(1);
}

TEST(Sampling, CxxTemplateInstances) {
  AppRun run = run_sampled("sampled_cxx");
  ASSERT_EQ(run.status, 0) << run.describe();
  nlohmann::json s = sampled_of(run.experiment);
  ASSERT_TRUE(s.is_object()) << run.describe();
  const double period = s.value("period_s", 0.0);
  expect_sampled(cpu_of(s["functions"], "work<1>"), truth(run, "cpu_work1", 0.2), period,
                 "work<1>");
  expect_sampled(cpu_of(s["functions"], "work<2>"), truth(run, "cpu_work2", 0.1), period,
                 "work<2>");
}

TEST(Sampling, FortranSubroutines) {
  if (!std::ifstream(app("sampled_f")).good()) GTEST_SKIP() << "no Fortran compiler in this build";
  AppRun run = run_sampled("sampled_f");
  ASSERT_EQ(run.status, 0) << run.describe();
  nlohmann::json s = sampled_of(run.experiment);
  ASSERT_TRUE(s.is_object()) << run.describe();
  const double period = s.value("period_s", 0.0);
  expect_sampled(cpu_of(s["functions"], "heavy"), truth(run, "cpu_heavy", 0.2), period, "heavy");
  expect_sampled(cpu_of(s["functions"], "light"), truth(run, "cpu_light", 0.1), period, "light");
}

// What `mpirun -np N mpi_sampled` printed: "truth rank R KEY S", summed over the ranks.
double rank_truth(const AppRun& run, const std::string& key) {
  std::istringstream in(run.out);
  std::string line;
  double sum = 0;
  int found = 0;
  std::regex re("^truth rank [0-9]+ " + key + " ([0-9.]+)$");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, re)) sum += std::stod(m[1]), ++found;
  EXPECT_GT(found, 0) << "no 'truth rank R " << key << "' line:\n" << run.out;
  return sum;
}

// The fields of one CSV line (RFC 4180: a field in double quotes may hold commas and "").
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += line[++i];
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// `scalea export -f csv-sampled`'s function rows of the program's row (the first region), by
// column name: the export of an MPI experiment must hold what the JSON report holds.
std::vector<std::map<std::string, std::string>> program_function_rows(const std::string& exp) {
  AppRun r = run_scalea_cli({"export", "--format", "csv-sampled", exp});
  EXPECT_EQ(r.status, 0) << r.describe();
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = csv_fields(line);
  std::vector<std::map<std::string, std::string>> rows;
  std::string program_path;
  while (std::getline(in, line)) {
    std::vector<std::string> f = csv_fields(line);
    EXPECT_EQ(f.size(), head.size()) << line;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < f.size() && i < head.size(); ++i) row[head[i]] = f[i];
    if (program_path.empty()) program_path = row["path"];
    if (row["path"] == program_path && row["sampled"] == "function") rows.push_back(row);
  }
  return rows;
}

class SampledMpi : public ::testing::TestWithParam<int> {};

// An MPI program that computes in main with no regions: the program's row names its functions.
TEST_P(SampledMpi, FunctionsOfMain) {
  if (std::string(SCALEA_GT_MPIRUN).empty()) GTEST_SKIP() << "no MPI in this build";
  AppRun run = run_mpi(GetParam(), "mpi_sampled", {"200"});
  ASSERT_EQ(run.status, 0) << run.describe();
  nlohmann::json s = sampled_of(run.experiment);
  ASSERT_TRUE(s.is_object()) << run.describe();
  const double period = s.value("period_s", 0.0);
  const nlohmann::json main_fns = s["regions"][0]["functions"];
  EXPECT_EQ(s["regions"][0].value("id", 1u), 0u) << "the program's row";
  expect_sampled(cpu_of(main_fns, "compute_forces"), rank_truth(run, "cpu_forces"), period,
                 "compute_forces");
  expect_sampled(cpu_of(main_fns, "update_cells"), rank_truth(run, "cpu_cells"), period,
                 "update_cells");
  expect_sampled(cpu_of(main_fns, "write_output"), rank_truth(run, "cpu_output"), period,
                 "write_output (rank 0)");
  // The CSV export of the MPI experiment: the program's row, with every rank's samples.
  const auto rows = program_function_rows(run.experiment);
  for (const char* name : {"compute_forces", "update_cells", "write_output"}) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) {
      return r.at("function").find(name) != std::string::npos;
    });
    ASSERT_NE(it, rows.end()) << "csv-sampled: no " << name << " in the program's row";
    EXPECT_NEAR(std::stod(it->at("on_stack")), cpu_of(main_fns, name), 1e-6)
        << name << ": csv-sampled's on_stack is not the JSON report's inclusive_s";
    EXPECT_GT(std::stod(it->at("samples")), 0) << name;
  }
}
// Ranks that share one CPU take as long for their share of the work as one rank for all of it:
// the wall times look like replicated code. The samples say each rank did half the work: not
// replicated (issue 32, item 4). The same ranks each doing all of it are replicated.
TEST(SampledMpiShared, SharedCpusAreNotReplicatedWork) {
  if (std::string(SCALEA_GT_MPIRUN).empty()) GTEST_SKIP() << "no MPI in this build";
  auto replicated_at_root = [](const std::vector<std::string>& args, int np = 2) {
    AppRun ref = run_mpi(1, "mpi_sampled", args);
    AppRun run = run_mpi(np, "mpi_sampled", args);
    EXPECT_EQ(ref.status, 0) << ref.describe();
    EXPECT_EQ(run.status, 0) << run.describe();
    AppRun r = run_scalea_cli({"report", run.experiment, "-r", ref.experiment, "--format", "json"});
    EXPECT_EQ(r.status, 0) << r.describe();
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    double seconds = 0;
    for (const auto& f : doc["findings"])
      if (f.value("subclass", "") == "replicated" && f.value("node", 1u) == 0u)
        seconds = f.value("seconds", 0.0);
    return seconds;
  };
  EXPECT_EQ(replicated_at_root({"200", "divide", "pin"}), 0.0)
      << "each rank computed half the work, slowly: not replicated";
  EXPECT_GT(replicated_at_root({"200", "pin"}), 0.1) << "each rank computed all of it";
  // 90 ms of CPU time in the reference (about 22 samples, below kCpuEvidenceMinSeconds): the
  // counts still tell 4 ranks that divided it from copies (LULESH at 8 ranks on 2 CPUs).
  EXPECT_EQ(replicated_at_root({"60", "divide", "pin"}, 4), 0.0)
      << "4 ranks each computed a quarter, slowly: not replicated";
}

INSTANTIATE_TEST_SUITE_P(Ranks, SampledMpi, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& i) { return "np" + sp(i.param); });

// Where the kernel refuses perf events (a container's seccomp filter, perf_event_paranoid 3), the
// first thread's refusal turns it and every later thread to POSIX timers on their CPU clocks: the
// run is sampled all the same, and meta.json says which source ran.
TEST(Sampling, RefusedPerfEventsFallBackToTimers) {
  AppRun run = run_scalea_cli(
      {"run", "-q", "-o", "{exp}", "--", SCALEA_GT_WITHOUT_PERF, app("sampled")}, {});
  ASSERT_EQ(run.status, 0) << run.describe();
  Measured m(run);
  ASSERT_TRUE(m.ok()) << run.describe();
  const nlohmann::json& meta = m.exp().meta;
  EXPECT_EQ(meta.value("/sampling/source"_json_pointer, std::string("?")), "timer");
  EXPECT_EQ(meta.value("/sampling/timer_failures"_json_pointer, -1), 0);
  EXPECT_GE(meta.value("/sampling/threads"_json_pointer, 0), 2) << "both threads sampled";
  nlohmann::json s = sampled_of(run.experiment);
  ASSERT_TRUE(s.is_object()) << run.describe();
  expect_sampled(cpu_of(region_functions(s, "sampled"), "serial_work"),
                 truth(run, "cpu_serial", 0.2), s.value("period_s", 0.0), "serial_work in main");
}

// A binary recursion through two call sites: nearly every sample's path differs in which site
// each level took. The sampler folds recursion (a return address met again goes back to its first
// occurrence), so its table and the experiment grow with the code's call sites, not with the run:
// four times the rounds, four times the samples, about as many sampled nodes. The work stays
// attributed to the leaf function.
TEST(Sampling, RecursionDoesNotGrowTheTreeWithTheRun) {
  auto sampled_nodes = [](const AppRun& run, int64_t* samples, double* leaf_share) {
    Measured m(run);
    EXPECT_TRUE(m.ok()) << run.describe();
    if (!m.ok()) return size_t(0);
    size_t nodes = 0;
    for (const auto& t : m.exp().threads) nodes += t.samples.size();
    *samples = drg::read_meta(m.exp().meta).sampling->samples;
    nlohmann::json s = sampled_of(run.experiment);
    double all = 0, leaf = 0;
    for (const auto& f : s.value("functions", nlohmann::json::array())) {
      all += f.value("self_s", 0.0);
      if (f.value("function", "") == "leaf") leaf += f.value("self_s", 0.0);
    }
    *leaf_share = all > 0 ? leaf / all : 0;
    return nodes;
  };
  int64_t few = 0, many = 0;
  double share_few = 0, share_many = 0;
  AppRun short_run = run_sampled("sampled_recursion", {"6", "16"});
  ASSERT_EQ(short_run.status, 0) << short_run.describe();
  AppRun long_run = run_sampled("sampled_recursion", {"24", "16"});
  ASSERT_EQ(long_run.status, 0) << long_run.describe();
  const size_t nodes_few = sampled_nodes(short_run, &few, &share_few);
  const size_t nodes_many = sampled_nodes(long_run, &many, &share_many);
  ASSERT_GE(few, 20) << "too few samples to compare";
  EXPECT_GE(many, 3 * few) << "four times the work, samples " << few << " and " << many;
  EXPECT_LE(double(nodes_many), 1.5 * double(nodes_few) + 16)
      << "sampled nodes " << nodes_few << " after " << few << " samples, " << nodes_many
      << " after " << many;
  EXPECT_GE(share_few, 0.6);
  EXPECT_GE(share_many, 0.6);
}

// A program with SIGPROF and setitimer, children (one of which execs), every signal blocked while
// it computes, or a handler of its own for the sampler's signal: the same output and status under
// the tool, and the tool still sampled; with either source of samples (the sampler tells its
// signals from the program's by their source: its timers' mark, its perf events' descriptors).
TEST(Sampling, ProgramsOwnSignalsTimersAndChildren) {
  for (const char* source : {"timer", "perf"})
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"prof", "200"}, {"fork", "3"}, {"blocked", "100"}, {"rt", "200"}}) {
      SCOPED_TRACE(std::string(source) + " " + args[0]);
      std::vector<std::string> argv{app("own_signals")};
      argv.insert(argv.end(), args.begin(), args.end());
      AppRun bare = run_with_tool(argv, {{"SCALEA_ENABLE", "0"}});
      AppRun tool = run_sampled("own_signals", args, {{"SCALEA_SAMPLE_SOURCE", source}});
      EXPECT_EQ(bare.status, 0) << bare.describe();
      EXPECT_EQ(tool.status, 0) << tool.describe();
      EXPECT_EQ(tool.out, bare.out);
      Measured m(tool);
      ASSERT_TRUE(m.ok());
      auto sampling = drg::read_meta(m.exp().meta).sampling;
      ASSERT_TRUE(sampling.has_value());
      EXPECT_TRUE(sampling->on) << sampling->off_reason;
      // The parent of `fork` computes nothing itself: its children did (and had no timers).
      if (args[0] != "fork") EXPECT_GT(sampling->samples, 0);
      const std::string ran = m.exp().meta.value("/sampling/source"_json_pointer, std::string("?"));
      if (std::string(source) == "timer") EXPECT_EQ(ran, "timer");
      // perf events may be refused (perf_event_paranoid 3, a container's filter): the timer runs
      else if (ran != "perf task-clock")
        EXPECT_EQ(ran, "timer") << "SCALEA_SAMPLE_SOURCE=perf ran neither source";
    }
}

}  // namespace
}  // namespace scalea::test
