// Scaling studies end to end: `scalea study` runs study_app (a sleep-based OpenMP program with a
// planted serial part) at several thread counts, `scalea report STUDYDIR` reads the study back.
// Plus unit tests of the plan, the launcher templates and study.json (report/src/study/study.cpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "output/errors.hpp"
#include "study/study.hpp"

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;
namespace st = scalea::cli::study;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The running test's own directory, as its ctest name: <build>/tests/study.Suite.Name.tmp, emptied
// when the test first asks for it, so that the tests can run side by side (ctest -j).
std::string test_dir() {
  static std::string made;
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string("study.") + t->test_suite_name() + "." + t->name();
  for (char& c : name)
    if (c == '/') c = '_';
  std::string dir = std::string(STUDY_TMP_ROOT) + "/" + name + ".tmp";
  if (made != dir) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    made = dir;
  }
  return dir;
}

std::string scratch(const std::string& name) {
  std::string dir = test_dir() + "/" + name;
  fs::remove_all(dir);
  return dir;
}

// Runs argv (no shell) with stdout and stderr captured; returns the exit status.
pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err,
            const std::vector<std::string>& extra_env = {}) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  for (const auto& e : extra_env) env.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, a.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

Result run(std::vector<std::string> args, const std::vector<std::string>& extra_env = {}) {
  args.insert(args.begin(), SCALEA_CLI);
  std::string out = test_dir() + "/.out", err = test_dir() + "/.err";
  Result r;
  pid_t pid = spawn(args, out, err, extra_env);
  if (pid < 0) return r;
  int status = 0;
  waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

json read_json(const std::string& path) { return json::parse(slurp(path)); }

size_t lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

ino_t inode(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

const json* run_entry(const json& study, const std::string& id) {
  for (const auto& r : study["runs"])
    if (r["id"] == id) return &r;
  return nullptr;
}

constexpr int kUnitMs = 10;  // study_app's unit: 120 ms at p = 1

// ---------------------------------------------------------------------------------------------

TEST(Study, EndToEndReportAndResume) {
  std::string dir = scratch("e2e.study");
  Result r = run({"study", "-o", dir, "--threads", "1,2,4", "--repeat", "2", "--", STUDY_APP,
                  std::to_string(kUnitMs)});
  ASSERT_EQ(r.status, 0) << r.err;
  // Not a terminal: one progress line per run, then the summary.
  EXPECT_NE(r.err.find("run 1/6"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run 6/6"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  EXPECT_NE(r.err.find("6 of 6 runs ok"), std::string::npos) << r.err;

  // study.json
  json s = read_json(dir + "/study.json");
  EXPECT_EQ(s["format"], "scalea-study");
  EXPECT_EQ(s["version"], 1);
  EXPECT_EQ(s["command"], json::array({STUDY_APP, std::to_string(kUnitMs)}));
  EXPECT_EQ(s["threads"], json::array({1, 2, 4}));
  EXPECT_EQ(s["ranks"], json::array({1}));
  EXPECT_EQ(s["repeat"], 2);
  EXPECT_TRUE(s["launcher"].is_null());
  ASSERT_EQ(s["runs"].size(), 6u);
  std::set<std::pair<std::string, int>> seen;
  std::vector<std::string> order;
  for (const auto& run : s["runs"]) {
    SCOPED_TRACE(run.dump());
    EXPECT_EQ(run["status"], "ok");
    EXPECT_EQ(run["exit_code"], 0);
    // At least the planted sleeps: 4u + 8u/p.
    EXPECT_GT(run["duration_s"].get<double>(), (4 + 8.0 / run["threads"].get<int>()) * kUnitMs * 1e-3);
    EXPECT_EQ(run["ranks"], 1);
    EXPECT_EQ(run["p"], run["threads"]);
    EXPECT_EQ(run["reference"].get<bool>(), run["threads"] == 1);
    EXPECT_EQ(run["experiment"], "runs/" + run["id"].get<std::string>());
    EXPECT_TRUE(fs::exists(dir + "/" + run["experiment"].get<std::string>() + "/meta.json"));
    // Throttling is off in study runs (SCALEA_THROTTLE unset here): every visit is counted.
    if (!getenv("SCALEA_THROTTLE"))
      EXPECT_EQ(read_json(dir + "/" + run["experiment"].get<std::string>() + "/meta.json")["throttle"]["setting"],
                "off");
    EXPECT_TRUE(fs::exists(dir + "/" + run["stdout"].get<std::string>()));
    EXPECT_NE(slurp(dir + "/" + run["stdout"].get<std::string>()).find("study_app: " +
                                                                       std::to_string(run["threads"].get<int>()) +
                                                                       " threads"),
              std::string::npos);
    seen.insert({run["config"].get<std::string>(), run["repetition"].get<int>()});
    order.push_back(run["id"].get<std::string>());
  }
  EXPECT_EQ(seen.size(), 6u);
  // Round by round, the reference first.
  EXPECT_EQ(order, (std::vector<std::string>{"t1-r1-rep1", "t2-r1-rep1", "t4-r1-rep1", "t1-r1-rep2",
                                             "t2-r1-rep2", "t4-r1-rep2"}));

  // report: text
  Result t = run({"report", dir});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("Speedup per region"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("program study_app"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("parallel @study_app.c:"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("  loop"), std::string::npos) << t.out;  // indented under the parallel region

  // report: JSON, one entry per p per region; the classes sum to the total.
  Result j = run({"report", dir, "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  json rep = json::parse(j.out);
  EXPECT_EQ(rep["schema"], "scalea-study-report/1");
  EXPECT_EQ(rep["configurations"].size(), 3u);
  std::map<int, const json*> program, loop;
  size_t entries = 0;
  for (const auto& e : rep["regions"]) {
    ++entries;
    double sum = 0;
    for (const char* k : {"data_movement", "synchronization", "control_of_parallelism",
                          "additional_computation", "loss_of_parallelism", "unidentified"}) {
      ASSERT_TRUE(e["overheads"].contains(k)) << e.dump();
      sum += e["overheads"][k].get<double>();
    }
    EXPECT_NEAR(sum, e["overheads"]["total"].get<double>(), 1e-9) << e.dump();
    for (const char* k : {"path", "kind", "source", "p", "time", "time_min", "time_max", "speedup",
                          "efficiency", "repetitions"})
      EXPECT_TRUE(e.contains(k)) << k;
    EXPECT_LE(e["time_min"].get<double>(), e["time"].get<double>());
    EXPECT_GE(e["time_max"].get<double>(), e["time"].get<double>());
    if (e["kind"] == "program") program[e["p"].get<int>()] = &e;
    if (e["kind"] == "loop") loop[e["p"].get<int>()] = &e;
  }
  ASSERT_EQ(program.size(), 3u);
  ASSERT_EQ(loop.size(), 3u);
  for (int p : {1, 2, 4}) EXPECT_EQ((*program[p])["repetitions"], 2);
  // Planted: the loop is balanced (speedup ~p); the program has a serial part of 4 units, so its
  // speedup is 12/(4 + 8/p) and its loss of parallelism 4u - 4u/p. Two cores shared with other
  // work can slow one repetition down, so the checks use the best repetition (time_min) and the
  // range of the repetitions.
  auto best_speedup = [](const json& e) {
    return e["reference_time"].get<double>() / e["time_min"].get<double>();
  };
  EXPECT_GT(best_speedup(*loop[4]), 3.0) << loop[4]->dump();
  double prog4 = best_speedup(*program[4]);
  EXPECT_GT(prog4, 1.6) << program[4]->dump();
  EXPECT_LT(prog4, 2.4) << program[4]->dump();
  double planted_loss = 3 * kUnitMs * 1e-3, tol = 1.0 * kUnitMs * 1e-3;
  EXPECT_GE(planted_loss, (*program[4])["overheads_min"]["loss_of_parallelism"].get<double>() - tol)
      << program[4]->dump();
  EXPECT_LE(planted_loss, (*program[4])["overheads_max"]["loss_of_parallelism"].get<double>() + tol)
      << program[4]->dump();

  // report: CSV, a header and one row per JSON entry.
  Result c = run({"report", dir, "--format", "csv"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out.rfind("region_id,parent_id,depth,path,kind,label,location,p,threads,ranks", 0), 0u) << c.out;
  EXPECT_NE(c.out.find(",total,cpus_shared\n"), std::string::npos);
  EXPECT_EQ(lines(c.out), entries + 1);

  // report: markdown
  Result m = run({"report", dir, "--format", "markdown"});
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_NE(m.out.find("# Scaling study"), std::string::npos);
  EXPECT_NE(m.out.find("| p | threads x ranks |"), std::string::npos) << m.out;

  // --region and --top focus the report.
  Result f = run({"report", dir, "--region", "loop", "--format", "json"});
  ASSERT_EQ(f.status, 0) << f.err;
  const json focused = json::parse(f.out);  // a range-for over parse(...)["regions"] would dangle
  for (const auto& e : focused["regions"])
    EXPECT_TRUE(e["kind"] == "program" || e["kind"] == "loop") << e["path"];
  Result top = run({"report", dir, "--top", "1", "--format", "csv"});
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_EQ(lines(top.out), 1u + 2 * 3);
  Result none = run({"report", dir, "--region", "no-such-region"});
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(lines(none.err), 1u) << none.err;

  // Plots with gnuplot.
  std::string plots = dir + "/plots";
  Result pl = run({"report", dir, "--plots", plots});
  ASSERT_EQ(pl.status, 0) << pl.err;
  EXPECT_TRUE(fs::exists(plots + "/study.gp"));
  if (STUDY_HAVE_GNUPLOT) {
    for (const char* f : {"speedup.svg", "speedup.png", "overheads-program.svg", "overheads-program.png"}) {
      EXPECT_TRUE(fs::exists(plots + "/" + f)) << f;
      if (fs::exists(plots + "/" + f)) EXPECT_GT(fs::file_size(plots + "/" + f), 1000u) << f;
    }
    EXPECT_EQ(slurp(plots + "/speedup.png").substr(1, 3), "PNG");
    EXPECT_NE(slurp(plots + "/speedup.svg").find("<svg"), std::string::npos);
  } else {
    EXPECT_NE(pl.err.find("gnuplot not found"), std::string::npos) << pl.err;
  }

  // Refused without --resume.
  Result again = run({"study", "-o", dir, "--threads", "1,2", "--", STUDY_APP});
  EXPECT_EQ(again.status, 2);
  EXPECT_EQ(lines(again.err), 1u) << again.err;
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;

  // --resume after deleting one run's experiment reruns that run only.
  std::map<std::string, ino_t> before;
  for (const auto& id : order) before[id] = inode(dir + "/runs/" + id + "/meta.json");
  fs::remove_all(dir + "/runs/t2-r1-rep2");
  Result res = run({"study", "-o", dir, "--resume"});
  ASSERT_EQ(res.status, 0) << res.err;
  EXPECT_NE(res.err.find("5 of 6 runs complete, 1 to run"), std::string::npos) << res.err;
  EXPECT_NE(res.err.find("run 6/6"), std::string::npos) << res.err;
  EXPECT_EQ(res.err.find("run 5/6"), std::string::npos) << res.err;
  for (const auto& id : order) {
    if (id == "t2-r1-rep2") EXPECT_TRUE(fs::exists(dir + "/runs/" + id + "/meta.json"));
    else EXPECT_EQ(inode(dir + "/runs/" + id + "/meta.json"), before[id]) << id << " was rerun";
  }
  json s2 = read_json(dir + "/study.json");
  for (const auto& run : s2["runs"]) EXPECT_EQ(run["status"], "ok") << run["id"];
  // Nothing left to do.
  Result done = run({"study", "-o", dir, "--resume"});
  EXPECT_EQ(done.status, 0) << done.err;
  EXPECT_NE(done.err.find("all 6 runs"), std::string::npos) << done.err;
}

// An overhead within the run-to-run noise is not a finding. The single's body sleeps 0, X, 2X ms
// in successive runs (shapes jitter): with one repetition per configuration the idle team of the
// single is a finding; with three, its spread over the repetitions is larger than it, and the
// study's findings leave it out and say why.
TEST(Study, FindingsWithinTheNoiseAreNotMade) {
  auto findings = [](int repeat) {
    std::string dir = scratch("noise" + std::to_string(repeat));
    std::string counter = dir + ".counter";
    fs::remove(counter);
    Result r = run({"study", "-o", dir, "--threads", "1,2", "--repeat", std::to_string(repeat), "--",
                    SHAPES_APP, "jitter", "30"},
                   {"SHAPES_COUNTER=" + counter});
    EXPECT_EQ(r.status, 0) << r.err;
    Result rep = run({"report", dir, "--format", "json"});
    EXPECT_EQ(rep.status, 0) << rep.err;
    json doc = json::parse(rep.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded());
    Result text = run({"report", dir});
    return std::make_pair(doc.is_discarded() ? json() : doc["findings"], text.out);
  };
  auto single_findings = [](const json& f) {
    int n = 0;
    if (!f.is_object()) return n;
    for (const auto& x : f["list"])
      if (x.value("class", "") == "loss_of_parallelism") ++n;
    return n;
  };
  auto [once, once_text] = findings(1);
  ASSERT_TRUE(once.is_object()) << once_text;
  EXPECT_FALSE(once["noise_measured"].get<bool>());
  EXPECT_GE(single_findings(once), 1) << once.dump(1);
  EXPECT_NE(once_text.find("the run-to-run noise is not measured"), std::string::npos) << once_text;
  auto [thrice, thrice_text] = findings(3);
  ASSERT_TRUE(thrice.is_object()) << thrice_text;
  EXPECT_TRUE(thrice["noise_measured"].get<bool>());
  EXPECT_EQ(single_findings(thrice), 0) << thrice.dump(1);
  for (const auto& x : thrice["list"]) EXPECT_GT(x["seconds"].get<double>(), x["noise"].get<double>());
  EXPECT_NE(thrice_text.find("within the run-to-run noise"), std::string::npos) << thrice_text;
}

TEST(Study, FailingRunIsReportedAndTheStudyGoesOn) {
  std::string dir = scratch("fail.study");
  Result r = run({"study", "-o", dir, "--threads", "1,2,4", "--", STUDY_APP, "2", "2"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("t2-r1-rep1 failed: exit status 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("planted failure at 2 threads"), std::string::npos) << r.err;  // its stderr
  EXPECT_NE(r.err.find("2 of 3 runs ok"), std::string::npos) << r.err;
  json s = read_json(dir + "/study.json");
  const json* failed = run_entry(s, "t2-r1-rep1");
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["status"], "failed");
  EXPECT_EQ((*failed)["exit_code"], 3);
  EXPECT_EQ((*failed)["error"], "exit status 3");
  ASSERT_FALSE((*failed)["stderr_tail"].empty());
  EXPECT_NE((*failed)["stderr_tail"].back().get<std::string>().find("planted failure"), std::string::npos);
  EXPECT_EQ((*run_entry(s, "t4-r1-rep1"))["status"], "ok");  // the study went on
  // The report works on what succeeded and names the failure.
  Result t = run({"report", dir});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("failed      t2-r1-rep1: exit status 3"), std::string::npos) << t.out;
  // Resume reruns the failed run only (it fails again).
  Result res = run({"study", "-o", dir, "--resume"});
  EXPECT_EQ(res.status, 1);
  EXPECT_NE(res.err.find("2 of 3 runs complete, 1 to run"), std::string::npos) << res.err;
}

TEST(Study, TimeoutAndInterrupt) {
  // A run over --timeout is killed and counts as failed.
  std::string dir = scratch("timeout.study");
  Result r = run({"study", "-o", dir, "--threads", "1", "--timeout", "0.3", "--", STUDY_APP, "200"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  // ^C stops the current run, leaves it pending, and says how to resume.
  std::string dir2 = scratch("interrupt.study");
  std::string out = test_dir() + "/.int.out", err = test_dir() + "/.int.err";
  pid_t pid = spawn({SCALEA_CLI, "study", "-o", dir2, "--threads", "1,2", "--", STUDY_APP, "200"}, out, err);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 100 && !fs::exists(dir2 + "/study.json"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << slurp(err);
  EXPECT_NE(slurp(err).find("--resume"), std::string::npos) << slurp(err);
  json s = read_json(dir2 + "/study.json");
  for (const auto& run : s["runs"]) EXPECT_EQ(run["status"], "pending") << run.dump();
}

// A pure MPI program: --ranks alone, every run with one thread per rank, through mpirun.
TEST(Study, RanksAloneRunAnMpiStudyWithOneThreadPerRank) {
  if (std::string(STUDY_MPI_APP).empty()) GTEST_SKIP() << "no MPI: mpi_planted not built";
  std::string dir = scratch("mpi.study");
  Result r = run({"study", "-o", dir, "--ranks", "1,2", "--", STUDY_MPI_APP, "0.05"}, {"OMP_NUM_THREADS=4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--threads not given: 1 thread per rank"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 of 2 runs ok"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ranks 1,2, 1 thread per rank"), std::string::npos) << r.err;
  json s = read_json(dir + "/study.json");
  EXPECT_EQ(s["threads"], json::array({1}));
  EXPECT_EQ(s["ranks"], json::array({1, 2}));
  EXPECT_EQ(s["launcher"], "mpirun -np {ranks}");
  ASSERT_EQ(s["runs"].size(), 2u);
  std::vector<std::string> ids;
  for (const auto& run : s["runs"]) {
    SCOPED_TRACE(run.dump());
    ids.push_back(run["id"].get<std::string>());
    EXPECT_EQ(run["status"], "ok");
    EXPECT_EQ(run["argv"][0], "mpirun");
    json meta = read_json(dir + "/" + run["experiment"].get<std::string>() + "/meta.json");
    EXPECT_EQ(meta["ranks"], run["ranks"]);
    EXPECT_EQ(meta["omp_num_threads"], "1");  // not the 4 the study was started with
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"t1-r1-rep1", "t1-r2-rep1"}));
  Result j = run({"report", dir, "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  json rep = json::parse(j.out);
  ASSERT_EQ(rep["configurations"].size(), 2u);
  EXPECT_EQ(rep["configurations"][1]["p"], 2);
  EXPECT_EQ(rep["configurations"][1]["ranks"], 2);
  EXPECT_EQ(rep["configurations"][1]["threads"], 1);
}

// How the text report marks a configuration whose threads shared CPUs: its p column ("  4* ")
// and the speedup table's head ("p=4*").
const std::regex kCpuSharedMark(R"(p=\d+\*|\n +\d+\* )");

// More threads than CPUs (item 11 of "Diagnoses that hold on MPI codes and on shared CPUs"):
// threads 1, C, 2C on the C CPUs this test may use. The study says once, before the first run,
// that p = 2C will share CPUs, and runs it; the report marks p = 2C with "*" in its tables, names
// it under the speedup table with its threads, CPUs and wait, gives it in CSV and JSON, and its
// findings (at p = 2C) start with the run's own CPU note.
TEST(Study, MoreThreadsThanCpusAreSaidBeforeAndInTheReport) {
  const int cpus = st::usable_cpus();
  const std::string C = std::to_string(cpus), P = std::to_string(2 * cpus);
  std::string dir = scratch("crowded.study");
  Result r = run({"study", "-o", dir, "--threads", "1," + C + "," + P, "--", STUDY_APP, "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string said = "scalea study: p = " + P + " has more threads than the " + C +
                           " CPU(s) this study may use: its threads will share CPUs and its times will "
                           "include waiting for a CPU (scalea report marks it with *); the largest p that "
                           "fits is " + C + "\n";
  size_t at = r.err.find(said);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(said, at + 1), std::string::npos) << "said twice: " << r.err;
  EXPECT_LT(at, r.err.find("run 1/")) << "said after the first run: " << r.err;
  EXPECT_NE(r.err.find("3 of 3 runs ok"), std::string::npos) << r.err;  // still run

  Result t = run({"report", dir});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find(" p=" + P + "*\n"), std::string::npos) << t.out;  // speedup table head
  EXPECT_TRUE(std::regex_search(t.out, kCpuSharedMark)) << t.out;
  EXPECT_NE(t.out.find("\nCPUS        p=" + P + "*: threads shared CPUs in 1 of 1 repetition(s) (" + P +
                       " threads ran on " + C + " CPU(s)"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("): its times include waiting for a CPU; scalea report " + dir + "/runs/t" + P +
                       "-r1-rep1 says more\n"),
            std::string::npos)
      << t.out;
  // Within the CPUs no configuration is said to have more threads than CPUs (a busy machine may
  // still make a run's threads wait for a CPU: that note is the run queue's, "waited").
  EXPECT_EQ(t.out.find("p=" + C + "*: threads shared CPUs in 1 of 1 repetition(s) (" + C + " threads ran"),
            std::string::npos)
      << t.out;
  EXPECT_EQ(t.out.find("p=1*: threads shared CPUs in 1 of 1 repetition(s) (1 threads ran"), std::string::npos)
      << t.out;
  size_t findings = t.out.find("\nFindings at p = " + P);
  ASSERT_NE(findings, std::string::npos) << t.out;
  size_t first = t.out.find("\nfirst, threads shared CPUs: " + P + " threads ran on " + C + " CPU(s)", findings);
  EXPECT_NE(first, std::string::npos) << t.out.substr(findings);
  EXPECT_LT(first, t.out.find("\nfindings", findings)) << t.out.substr(findings);

  Result m = run({"report", dir, "--format", "markdown"});
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_NE(m.out.find("| p=" + P + "\\* |"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("\n- p=" + P + "\\*: threads shared CPUs in 1 of 1 repetition(s)"), std::string::npos)
      << m.out;
  EXPECT_NE(m.out.find("\n| " + P + "\\* | " + P + " x 1 |"), std::string::npos) << m.out;

  Result c = run({"report", dir, "--format", "csv"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("\n0,,0,"), std::string::npos) << c.out;
  std::istringstream rows(c.out);
  std::string line;
  std::getline(rows, line);
  while (std::getline(rows, line)) {
    // The program's row at p = 2C; the others may count a busy machine's run-queue wait.
    if (line.rfind("0,,0,", 0) == 0 && line.find("," + P + "," + P + ",1,") != std::string::npos)
      EXPECT_EQ(line.substr(line.rfind(',')), ",1") << line;
  }

  Result j = run({"report", dir, "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  json doc = json::parse(j.out);
  for (const json& cf : doc["configurations"]) {
    SCOPED_TRACE(cf.dump());
    const json& cs = cf["cpu_sharing"];
    if (cf["p"] == 2 * cpus) {
      ASSERT_TRUE(cs.is_object());
      EXPECT_EQ(cs["repetitions"], 1);
      EXPECT_EQ(cs["experiment"], "runs/t" + P + "-r1-rep1");
      EXPECT_EQ(cs["threads"], 2 * cpus);
      EXPECT_EQ(cs["cpus"], cpus);
      EXPECT_GE(cs["notes"].size(), 1u);
    } else {
      EXPECT_TRUE(cs.is_null() || cs["threads"] == 0);  // at most the run queue's wait
    }
  }

  std::string page = test_dir() + "/crowded.html";
  Result h = run({"report", dir, "--html", page});
  ASSERT_EQ(h.status, 0) << h.err;
  std::string html = slurp(page);
  EXPECT_NE(html.find("\"label\":\"" + P + "*\""), std::string::npos);
  EXPECT_NE(html.find("\"cpu_note\":\"p=" + P + "*: threads shared CPUs in 1 of 1 repetition(s)"),
            std::string::npos);
  EXPECT_NE(html.find("\"findings_note\":\"First, threads shared CPUs: " + P + " threads ran on"),
            std::string::npos);
}

// A study within the CPUs says nothing of them before it starts, and its report marks no
// configuration for more threads than CPUs.
TEST(Study, WithinTheCpusNothingIsSaid) {
  const int cpus = st::usable_cpus();
  std::string dir = scratch("fits.study");
  Result r = run({"study", "-o", dir, "--threads", "1," + std::to_string(cpus), "--", STUDY_APP, "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("more threads than"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("CPU"), std::string::npos) << r.err;
  Result t = run({"report", dir});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(t.out.find("threads ran on"), std::string::npos) << t.out;
  // A CPUS line here can only be the run queue's (a busy machine): none when the threads ran.
  // The mark is the p column's ("2*") and the speedup table head's ("p=2*"), not any "*": the
  // findings quote the program's source, comments ("/* LOOP */") included.
  if (t.out.find("waited") == std::string::npos) {
    EXPECT_EQ(t.out.find("CPUS "), std::string::npos) << t.out;
    EXPECT_FALSE(std::regex_search(t.out, kCpuSharedMark)) << t.out;
  }
}

TEST(Study, LauncherTemplateStartsEveryRun) {
  std::string dir = scratch("launcher.study");
  Result r = run({"study", "-o", dir, "--threads", "1", "--launcher", "env STUDY_LAUNCHED={ranks}x{threads}", "--",
                  STUDY_APP, "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  json s = read_json(dir + "/study.json");
  EXPECT_EQ(s["launcher"], "env STUDY_LAUNCHED={ranks}x{threads}");
  ASSERT_EQ(s["runs"].size(), 1u);
  const json& argv = s["runs"][0]["argv"];
  EXPECT_EQ(argv[0], "env");
  EXPECT_EQ(argv[1], "STUDY_LAUNCHED=1x1");
  EXPECT_EQ(argv[3], "run");
}

TEST(Study, ThrottlingChosenByTheUserIsKeptWithAWarning) {
  std::string dir = scratch("throttle.study");
  Result r = run({"study", "-o", dir, "--threads", "1", "--", STUDY_APP, "1"}, {"SCALEA_THROTTLE=5000:1us"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("SCALEA_THROTTLE=5000:1us kept"), std::string::npos) << r.err;
  json s = read_json(dir + "/study.json");
  ASSERT_EQ(s["runs"].size(), 1u);
  json meta = read_json(dir + "/" + s["runs"][0]["experiment"].get<std::string>() + "/meta.json");
  EXPECT_EQ(meta["throttle"]["setting"], "5000:1us") << meta["throttle"].dump();
}

TEST(Study, BadInputExitsTwoWithOneLine) {
  std::string dir = scratch("errors.study");
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  fs::create_directories(dir + "-exists");
  std::vector<Case> cases = {
      {{"study", "-o", dir, "--threads", "1,x,4", "--", STUDY_APP}, "--threads"},
      {{"study", "-o", dir, "--threads", "0", "--", STUDY_APP}, "positive integer"},
      {{"study", "-o", dir, "--threads", "1,,2", "--", STUDY_APP}, "--threads"},
      {{"study", "-o", dir, "--threads", "1", "--ranks", "-2", "--", STUDY_APP}, ""},
      {{"study", "-o", dir, "--threads", "1", "--repeat", "0", "--", STUDY_APP}, "repeat"},
      {{"study", "-o", dir, "--threads", "1", "--", "./no-such-program"}, "not found"},
      {{"study", "-o", dir, "--threads", "1", "--ranks", "2", "--launcher", "no-such-launcher -n {ranks}", "--",
        STUDY_APP},
       "launcher 'no-such-launcher' not found"},
      {{"study", "-o", dir, "--threads", "1", "--ranks", "2", "--launcher", "mpirun -np {rank}", "--", STUDY_APP},
       "unknown placeholder"},
      {{"study", "-o", dir, "--", STUDY_APP}, "--threads or --ranks is required"},
      {{"study", "-o", dir, "--threads", "1"}, "no program"},
      {{"study", "-o", dir + "-exists", "--threads", "1", "--", STUDY_APP}, "already exists"},
      {{"study", "-o", "/dev/null/study", "--threads", "1", "--", STUDY_APP}, "cannot create"},
      {{"study", "--threads", "1", "--", STUDY_APP}, "output"},
      {{"report", dir + "-exists"}, ""},
  };
  for (const Case& c : cases) {
    std::string cmd;
    for (const auto& a : c.args) cmd += a + " ";
    SCOPED_TRACE(cmd);
    Result r = run(c.args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir)) << "created the study directory";
  }
}

// ---- unit tests of report/src/study/study.cpp ----

TEST(StudyPlan, ParseList) {
  EXPECT_EQ(st::parse_list("8,1,2,4,2", "--threads"), (std::vector<int>{1, 2, 4, 8}));
  for (const char* bad : {"", "1,", ",1", "a", "1.5", "-1", "0", "1;2", "9999999"})
    EXPECT_THROW(st::parse_list(bad, "--threads"), scalea::cli::UserError) << bad;
}

TEST(StudyPlan, RunsRoundByRoundReferenceFirst) {
  auto runs = st::plan_runs({1, 2}, {1, 2}, 2);
  std::vector<std::string> ids;
  for (const auto& r : runs) ids.push_back(r.id());
  EXPECT_EQ(ids, (std::vector<std::string>{"t1-r1-rep1", "t2-r1-rep1", "t1-r2-rep1", "t2-r2-rep1", "t1-r1-rep2",
                                           "t2-r1-rep2", "t1-r2-rep2", "t2-r2-rep2"}));
  // The reference is planned even when the lists do not hold 1.
  EXPECT_EQ(st::plan_runs({4}, {1}, 1).front().id(), "t1-r1-rep1");
  EXPECT_EQ(st::plan_runs({4}, {1}, 1).size(), 2u);
}

TEST(StudyPlan, MoreThreadsThanCpusNamed) {
  std::vector<st::Config> plan{{1, 1}, {2, 1}, {4, 1}, {8, 1}};
  EXPECT_EQ(st::oversubscription_note(plan, 8, false), "");
  EXPECT_EQ(st::oversubscription_note(plan, 4, false),
            "scalea study: p = 8 has more threads than the 4 CPU(s) this study may use: its threads will share CPUs "
            "and its times will include waiting for a CPU (scalea report marks it with *); the largest p that fits "
            "is 4");
  EXPECT_EQ(st::oversubscription_note(plan, 2, false),
            "scalea study: p = 4 and p = 8 have more threads than the 2 CPU(s) this study may use: their threads "
            "will share CPUs and their times will include waiting for a CPU (scalea report marks them with *); the "
            "largest p that fits is 2");
  EXPECT_EQ(st::oversubscription_note({{1, 1}, {2, 2}, {1, 4}, {4, 1}}, 2, true),
            "scalea study: p = 4 (4 thread(s) x 1 rank(s)), p = 4 (2 thread(s) x 2 rank(s)) and p = 4 (1 thread(s) "
            "x 4 rank(s)) have more threads than the 2 CPU(s) this study may use: their threads will share CPUs "
            "and their times will include waiting for a CPU (scalea report marks them with *); the largest p that "
            "fits is 2 (if the launcher places ranks on other hosts, this does not apply)");
  EXPECT_GE(st::usable_cpus(), 1);
}

TEST(StudyLauncher, Templates) {
  EXPECT_EQ(st::expand_launcher("mpirun -np {ranks}", {2, 4}), (std::vector<std::string>{"mpirun", "-np", "4"}));
  EXPECT_EQ(st::expand_launcher("srun -n {ranks} -c {threads} --label 'p={p}'", {2, 4}),
            (std::vector<std::string>{"srun", "-n", "4", "-c", "2", "--label", "p=8"}));
  EXPECT_EQ(st::expand_launcher("a \"b c\" d\\ e", {1, 1}), (std::vector<std::string>{"a", "b c", "d e"}));
  EXPECT_THROW(st::expand_launcher("", {1, 1}), scalea::cli::UserError);
  EXPECT_THROW(st::expand_launcher("mpirun 'x", {1, 1}), scalea::cli::UserError);
  EXPECT_THROW(st::expand_launcher("mpirun -np {nodes}", {1, 1}), scalea::cli::UserError);
  // As root, Open MPI's mpirun gets --allow-run-as-root --oversubscribe; srun does not.
  auto root = st::launcher_argv("/usr/bin/mpirun -np {ranks}", {1, 2}, true);
  EXPECT_EQ(root, (std::vector<std::string>{"/usr/bin/mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2"}));
  EXPECT_EQ(st::launcher_argv("mpirun -np {ranks}", {1, 2}, false), (std::vector<std::string>{"mpirun", "-np", "2"}));
  EXPECT_EQ(st::launcher_argv("srun -n {ranks}", {1, 2}, true), (std::vector<std::string>{"srun", "-n", "2"}));
  EXPECT_EQ(st::launcher_argv("mpirun --oversubscribe -np {ranks}", {1, 2}, true).size(), 5u);
}

TEST(StudyJson, RoundTripAndRejects) {
  st::Study s;
  s.command = {"./md", "4096"};
  s.cwd = "/tmp";
  s.threads = {1, 2};
  s.ranks = {1};
  s.repeat = 1;
  s.runs = st::plan_runs(s.threads, s.ranks, s.repeat);
  s.runs[1].status = st::Status::Failed;
  s.runs[1].exit_code = 3;
  s.runs[1].error = "exit status 3";
  s.runs[1].stderr_tail = {"boom"};
  auto j = st::to_json(s);
  st::Study back = st::from_json(json::parse(j.dump()), "study.json");
  EXPECT_EQ(back.command, s.command);
  ASSERT_EQ(back.runs.size(), 2u);
  EXPECT_EQ(back.runs[1].status, st::Status::Failed);
  EXPECT_EQ(back.runs[1].exit_code, 3);
  EXPECT_EQ(back.runs[1].stderr_tail, (std::vector<std::string>{"boom"}));
  EXPECT_THROW(st::from_json(json::object(), "x"), scalea::cli::UserError);
  json wrong = json::parse(j.dump());
  wrong["version"] = 99;
  EXPECT_THROW(st::from_json(wrong, "x"), scalea::cli::UserError);
}

}  // namespace
