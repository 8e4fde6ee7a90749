// File I/O as regions (collect/io, docs/user-guide.md "File I/O", docs/groundtruth.md): a program
// that writes and reads files of known size in main and in a parallel region
// (apps/omp/io_planted.c, which times its own calls) runs under `scalea run`; its I/O call sites
// must be regions at their call paths with exactly the bytes the program moved and the time it
// measured (within 10% or 2 ms), and the program must print and return what it does without the
// tool.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>

#include "groundtruth.hpp"

namespace scalea::test {
namespace {

using nlohmann::json;

AppRun run_io(const std::vector<std::string>& args, const Env& env = {}) {
  std::vector<std::string> argv{"run", "-q", "-o", "{exp}", "--", app("io_planted"), "{exp}-files"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_scalea_cli(argv, env);
}

json report_json(const AppRun& run) {
  AppRun r = run_scalea_cli({"report", run.experiment, "--format", "json"});
  EXPECT_EQ(r.status, 0) << r.describe();
  json doc = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << r.out.substr(0, 400);
  return doc;
}

// A sanitizer's interceptors came before the tool's wrappers: the call sites are theirs, and the
// regions are told apart by function and call path only (the tool says so on stderr).
// The calls reached the tool through another library's wrappers: the tool said so, or (a
// sanitizer's, which it does not name) I/O call sites are interceptors (TSan's; the calls it does
// not intercept, fsync, keep their own sites).
bool interposed(const AppRun& run, const json& doc) {
  if (run.err.find("I/O calls reach the tool through") != std::string::npos) return true;
  for (const json& r : doc["regions"])
    if (r.value("kind", "") == "io" && r.value("location", "").rfind("__interceptor_", 0) == 0)
      return true;
  return false;
}

// The io regions called `label` below a parent that `parent_ok` accepts; when the call sites are
// the program's, each at the line of `marker` in io_planted.c.
struct Sites {
  double time = 0;  // s, summed over threads
  uint64_t read = 0, written = 0, visits = 0;
  size_t regions = 0, threads = 0;
};
template <class ParentOk>
Sites sites(const json& doc, const AppRun& run, const std::string& label, const std::string& marker,
            ParentOk parent_ok) {
  std::map<uint64_t, const json*> by_id;
  for (const json& r : doc["regions"]) by_id[r.value("id", uint64_t(0))] = &r;
  Sites s;
  for (const json& r : doc["regions"]) {
    if (r.value("kind", "") != "io" || r.value("label", "") != label) continue;
    if (!interposed(run, doc) && r.value("location", "") != at("io_planted.c", marker)) continue;
    if (r["parent"].is_null() || !parent_ok(*by_id.at(r["parent"].get<uint64_t>()))) continue;
    ++s.regions;
    s.read += r["io"].value("bytes_read", uint64_t(0));
    s.written += r["io"].value("bytes_written", uint64_t(0));
    for (const json& pt : r["per_thread"]) {
      s.time += pt.value("time", 0.0);
      s.visits += pt.value("visits", uint64_t(0));
      s.threads += pt.value("visits", uint64_t(0)) > 0;
    }
  }
  EXPECT_GE(s.regions, 1u) << "no io region '" << label << "' at " << marker << " in "
                           << doc["regions"].dump(1).substr(0, 3000);
  return s;
}

bool is_root(const json& parent) { return parent["parent"].is_null(); }
bool is_par(const json& parent) {
  return parent.value("kind", "") == "parallel" &&
         parent.value("location", "") == at("io_planted.c", "PAR");
}

TEST(IoRegions, BytesAndTimesAtTheirCallPaths) {
  AppRun run = run_io({"4"});
  ASSERT_EQ(run.status, 0) << run.describe();
  json doc = report_json(run);
  ASSERT_TRUE(doc.contains("regions")) << run.describe();
  const uint64_t main_bytes = uint64_t(truth(run, "main_bytes"));
  const uint64_t par_bytes = uint64_t(truth(run, "par_bytes"));
  ASSERT_EQ(main_bytes, 4u << 20);

  Sites w = sites(doc, run, "write", "MAIN_WRITE", is_root);
  Sites sync = sites(doc, run, "fsync", "MAIN_FSYNC", is_root);
  EXPECT_EQ(w.written, main_bytes);
  EXPECT_EQ(w.read, 0u);
  EXPECT_EQ(w.visits, 4u);
  EXPECT_EQ(sync.visits, 1u);
  EXPECT_TIME_NEAR(w.time + sync.time, truth(run, "main_write"));

  Sites r = sites(doc, run, "read", "MAIN_READ", is_root);
  EXPECT_EQ(r.read, main_bytes);
  EXPECT_EQ(r.written, 0u);
  EXPECT_TIME_NEAR(r.time, truth(run, "main_read"));

  Sites fw = sites(doc, run, "fwrite", "STDIO_WRITE", is_root);
  if (interposed(run, doc)) {
    // Through a sanitizer's fwrite interceptor, the program's other fwrite calls (its stdout
    // lines) share the one call site: the planted bytes and at most a few lines more.
    EXPECT_GE(fw.written, main_bytes);
    EXPECT_LE(fw.written, main_bytes + 4096);
  } else {
    EXPECT_EQ(fw.written, main_bytes);
  }
  EXPECT_TIME_NEAR(fw.time, truth(run, "stdio_write"));
  Sites fr = sites(doc, run, "fread", "STDIO_READ", is_root);
  EXPECT_EQ(fr.read, main_bytes);
  EXPECT_TIME_NEAR(fr.time, truth(run, "stdio_read"));

  // The parallel region: one file per thread, both threads' calls at the same call path.
  Sites pw = sites(doc, run, "pwrite", "PAR_WRITE", is_par);
  EXPECT_EQ(pw.written, 2 * par_bytes);
  EXPECT_EQ(pw.threads, 2u);
  EXPECT_TIME_NEAR(pw.time, truth(run, "par_write"));
  Sites pr = sites(doc, run, "pread", "PAR_READ", is_par);
  EXPECT_EQ(pr.read, 2 * par_bytes);
  EXPECT_EQ(pr.threads, 2u);
  EXPECT_TIME_NEAR(pr.time, truth(run, "par_read"));

  // Classified as data movement (I/O): a PE's time in the calls, over p (seconds of wall time).
  const double p = doc["experiment"].value("p", 1.0);
  size_t classified = 0;
  for (const json& reg : doc["regions"]) {
    if (reg.value("kind", "") != "io" || reg.value("label", "") != "pwrite") continue;
    double pe_time = 0;
    for (const json& pt : reg["per_thread"]) pe_time += pt.value("time", 0.0);
    EXPECT_NEAR(reg["overheads"]["subclasses"].value("data_movement.io", 0.0), pe_time / p,
                1e-6 + 0.01 * pe_time)
        << reg.dump(1);
    ++classified;
  }
  EXPECT_GE(classified, 1u);

  // Findings about I/O regions (those the machine made large enough: fsync on a disk, not on
  // tmpfs) say what the calls moved and how fast, before the hint.
  std::set<std::string> io_labels{"write", "fsync", "read", "fwrite", "fread", "pwrite", "pread"};
  const std::regex volume(
      "^[0-9]+ calls? (moved no data|(read|wrote) [0-9.]+ MB[^;]*) in [0-9.]+ s");
  for (const json& f : doc["findings"]) {
    if (!io_labels.count(f.value("region", ""))) continue;
    const std::string hint = f.value("hint", "");
    EXPECT_TRUE(std::regex_search(hint, volume)) << f.dump(1);
    if (hint.find("moved no data") == std::string::npos)
      EXPECT_NE(hint.find(" MB/s; "), std::string::npos) << f.dump(1);
  }

  // The I/O view lists the call sites with their bytes and rate.
  AppRun view = run_scalea_cli({"report", run.experiment, "--view", "io"});
  ASSERT_EQ(view.status, 0) << view.describe();
  EXPECT_NE(view.out.find("MB/s"), std::string::npos) << view.out;
  EXPECT_NE(view.out.find(std::to_string(main_bytes)), std::string::npos) << view.out;
  if (!interposed(run, doc))
    EXPECT_NE(view.out.find("pwrite @" + at("io_planted.c", "PAR_WRITE")), std::string::npos)
        << view.out;
}

// Non-truth lines of the program's output (timings differ from run to run).
std::string without_truth(const std::string& out) {
  std::istringstream in(out);
  std::string line, kept;
  while (std::getline(in, line))
    if (line.rfind("truth ", 0) != 0) kept += line + "\n";
  return kept;
}

TEST(IoRegions, ProgramOutputAndStatusUnchanged) {
  AppRun plain = run_with_tool({app("io_planted"), "{exp}-files", "1", "3"},
                               {{"OMP_TOOL_LIBRARIES", ""}, {"SCALEA_ENABLE", "0"}});
  AppRun tool = run_io({"1", "3"});
  EXPECT_EQ(plain.status, 3) << plain.describe();
  EXPECT_EQ(tool.status, 3) << tool.describe();
  EXPECT_EQ(without_truth(tool.out), without_truth(plain.out));
  EXPECT_NE(plain.out.find("open missing: -1 errno 2\n"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("writev /dev/null: 1 errno 0\n"), std::string::npos) << plain.out;
  for (const char* line : {"written by a constructor\n", "written by a destructor\n"}) {
    EXPECT_NE(plain.err.find(line), std::string::npos) << plain.err;
    EXPECT_NE(tool.err.find(line), std::string::npos) << tool.err;
  }
  // The experiment was written, with the program's I/O in it.
  json doc = report_json(tool);
  size_t io = 0;
  for (const json& r : doc["regions"]) io += r.value("kind", "") == "io";
  EXPECT_GT(io, 5u);

  // The text table leaves out the I/O call sites of less than 0.1% of the run each (the
  // program's printf lines, when they are that short: not under a sanitizer) and counts them
  // under it; --min-time 0 shows every one.
  AppRun text = run_scalea_cli({"report", tool.experiment});
  AppRun all = run_scalea_cli({"report", tool.experiment, "--min-time", "0"});
  ASSERT_EQ(text.status, 0) << text.describe();
  ASSERT_EQ(all.status, 0) << all.describe();
  auto table_rows = [](const std::string& out) {
    size_t from = out.find("region (call tree)");
    size_t to = out.find("\n\n", from);
    return size_t(std::count(out.begin() + from, out.begin() + to, '\n'));
  };
  std::set<double> parents;
  double root = 0;
  for (const json& r : doc["regions"]) {
    if (!r["parent"].is_null()) parents.insert(r["parent"].get<double>());
    if (r.value("depth", 1) == 0) root = r.value("time", 0.0);
  }
  size_t small = 0;  // the I/O leaves under 0.1% of the program's T_p, from the JSON report
  for (const json& r : doc["regions"])
    small += r.value("kind", "") == "io" && !parents.count(r.value("id", -1.0)) &&
             r.value("time", 0.0) < 0.001 * root;
  std::smatch m;
  const std::regex hidden(
      "\n([0-9]+) file I/O call site\\(s\\) of less than 0.1% of the run each are not rows here");
  if (small == 0) {
    EXPECT_FALSE(std::regex_search(text.out, m, hidden)) << text.out;
  } else {
    ASSERT_TRUE(std::regex_search(text.out, m, hidden)) << text.out;
    EXPECT_EQ(std::stoul(m[1]), small) << text.out;
  }
  EXPECT_EQ(table_rows(all.out) - table_rows(text.out), small) << text.out << all.out;
  EXPECT_EQ(all.out.find("are not rows here"), std::string::npos) << all.out;
}

TEST(IoRegions, OffRecordsNone) {
  AppRun run = run_io({"1"}, {{"SCALEA_IO", "off"}});
  ASSERT_EQ(run.status, 0) << run.describe();
  json doc = report_json(run);
  ASSERT_TRUE(doc.contains("regions"));
  size_t io = 0, parallel = 0;
  for (const json& r : doc["regions"]) {
    io += r.value("kind", "") == "io";
    parallel += r.value("kind", "") == "parallel";
  }
  EXPECT_EQ(io, 0u);
  EXPECT_EQ(parallel, 1u) << "the rest is recorded as before";
}

}  // namespace
}  // namespace scalea::test
