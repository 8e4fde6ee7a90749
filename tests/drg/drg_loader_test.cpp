// unit.drg: the loader round trip, its one-line errors, the bad-input corpus and deep trees.
#include <gtest/gtest.h>

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "drg_builder.hpp"
#include "fuzz_harness.hpp"
#include "../temp_dir.hpp"
#include "same_by_file.hpp"
#include "scalea/drg/encode.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/drg/graph.hpp"

namespace scalea::drg {
namespace {

using K = RegionKind;

test::Builder sample(int32_t rank, int threads) {
  test::Builder b({"visits", "time", "time_min", "time_max", "time_sumsq"});
  uint32_t prog = b.region(K::Program, "main"), par = b.region(K::Parallel, "", 0, "s.c", 3, 0x30),
           loop = b.region(K::Loop, "", 2, "s.c", 5, 0x50);
  b.e.regions[1].module = "/opt/app/bin/app";
  for (int th = 0; th < threads; ++th) {
    uint32_t t = b.thread(rank, uint32_t(th), prog, {{"visits", 1}, {"time", 1000.0 + th}});
    uint32_t p = b.node(t, 0, par, {{"visits", 2}, {"time", 900}, {"time_min", 400}, {"time_max", 500},
                                    {"time_sumsq", 1.5e5}});
    b.node(t, p, loop, {{"visits", 2}, {"time", 700}});
  }
  return b;
}

using scalea::test::TempDir;

void write_file(const std::string& path, const std::string& s) { std::ofstream(path, std::ios::binary) << s; }

// The error's message: one line, naming `file`.
void expect_load_error(const std::function<void()>& f, const std::string& file, const std::string& problem = "") {
  try {
    f();
    ADD_FAILURE() << "no LoadError (expected one naming " << file << ")";
  } catch (const LoadError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(file), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    if (!problem.empty()) EXPECT_NE(m.find(problem), std::string::npos) << m;
  }
}

using test::no_symbols;

TEST(Loader, RoundTripOneProcess) {
  test::Builder b = sample(-1, 2);
  const TempDir tmp("scalea-drg-rt");
  const std::string& dir = tmp.path();
  write_experiment(b.e, dir);
  Experiment e = load_experiment(dir, no_symbols());
  ASSERT_EQ(e.threads.size(), 2u);
  EXPECT_EQ(e.metrics, b.e.metrics);
  ASSERT_EQ(e.metric_merge.size(), e.metrics.size());
  EXPECT_EQ(e.metric_merge[size_t(e.metric("time_min"))], format::MetricMerge::Min);
  EXPECT_EQ(e.regions.size(), 3u);
  EXPECT_EQ(e.regions[1].module, "/opt/app/bin/app");
  EXPECT_EQ(e.threads[1].parent, b.e.threads[1].parent);
  EXPECT_EQ(e.threads[1].values, b.e.threads[1].values);  // f64 time_sumsq kept bit for bit
  EXPECT_TRUE(e.complete());
  EXPECT_EQ(test::by_file_difference(dir, no_symbols()), "");
}

// Format versions 2 (compact threads) and 3 (values column by column) hold exactly what version 1
// held, and the older versions still load.
TEST(Loader, EveryFormatVersionLoadsTheSameTrees) {
  test::Builder b = sample(-1, 3);  // threads 0-2 share one shape
  uint32_t extra = b.region(K::BarrierExplicit, "", 0, "s.c", 9, 0x90);
  b.node(2, 1, extra, {{"visits", 1}, {"time", double(uint64_t(1) << 60)}, {"time_sumsq", 0.25}});
  b.e.threads[1].values[1] = 0;  // a zero among the values
  size_t thread_bytes[3] = {};
  Experiment loaded[3];
  for (uint32_t version : {1u, 2u, 3u}) {
    const TempDir tmp("scalea-drg-v" + std::to_string(version));
    const std::string& dir = tmp.path();
    std::vector<char> bytes = encode_rank_file(b.e, -1, {true, true, version});
    write_file(dir + "/rank-000000.sdrg", std::string(bytes.begin(), bytes.end()));
    std::string meta = encode_meta(b.e, {"rank-000000.sdrg"});
    const std::string written = "\"format_version\": " + std::to_string(format::kVersion);
    meta.replace(meta.find(written), written.size(),
                 "\"format_version\": " + std::to_string(version));
    write_file(dir + "/meta.json", meta);
    for (size_t at = sizeof(format::FileHeader); at < bytes.size();) {  // the sections
      format::SectionHeader sh;
      std::memcpy(&sh, bytes.data() + at, sizeof sh);
      if (sh.tag == format::kTagThreads) thread_bytes[version - 1] = sh.size;
      at += sizeof sh + sh.size;
    }
    loaded[version - 1] = load_experiment(dir, no_symbols());
  }
  for (size_t v = 0; v < 3; ++v) {
    ASSERT_EQ(loaded[v].threads.size(), 3u) << "version " << v + 1;
    for (size_t t = 0; t < 3; ++t) {
      EXPECT_EQ(loaded[v].threads[t].parent, b.e.threads[t].parent);
      EXPECT_EQ(loaded[v].threads[t].region, loaded[0].threads[t].region);
      EXPECT_EQ(loaded[v].threads[t].values, b.e.threads[t].values)  // bit for bit, 2^60 too
          << "version " << v + 1 << " thread " << t;
    }
  }
  // 10 nodes of 5 columns: 480 B of records in version 1; two shapes, small values after.
  EXPECT_LT(thread_bytes[1], thread_bytes[0] / 2) << "v1 " << thread_bytes[0] << " B, v2 " << thread_bytes[1];
  EXPECT_LT(thread_bytes[2], thread_bytes[0] / 2) << "v1 " << thread_bytes[0] << " B, v3 " << thread_bytes[2];
}

// Version 3 decodes the columns a reader names and skips the others; older versions decode all.
TEST(Loader, ColumnsNotAskedForAreNotDecoded) {
  test::Builder b = sample(-1, 3);
  b.node(2, 1, b.region(K::BarrierExplicit, "", 0, "s.c", 9, 0x90),
         {{"visits", 3}, {"time", 7e9}, {"time_min", 1e9}, {"time_max", 4e9}, {"time_sumsq", 0.25}});
  // The visits, and a column past the visit times (those bring the visits and time with them).
  const int visits = b.e.metric("visits"), sumsq = b.e.metric("time_sumsq");
  ASSERT_EQ(visits, 0);
  ASSERT_GE(sumsq, 4);
  const size_t nm = b.e.metric_count();
  for (uint32_t version : {2u, 3u}) {
    std::vector<char> bytes = encode_rank_file(b.e, -1, {true, true, version});
    Experiment some, none;
    parse_rank_file("r.sdrg", bytes, some, no_symbols(), nullptr,
                    MetricSet::none().add(visits).add(sumsq));
    parse_rank_file("r.sdrg", bytes, none, no_symbols(), nullptr, MetricSet::none());
    ASSERT_EQ(some.threads.size(), 3u);
    ASSERT_EQ(none.threads.size(), 3u);
    for (size_t t = 0; t < 3; ++t) {
      const ThreadTree& full = b.e.threads[t];
      EXPECT_EQ(none.threads[t].parent, full.parent);
      EXPECT_EQ(none.threads[t].region.size(), full.region.size());
      EXPECT_EQ(none.threads[t].values.empty(), version >= 3) << "version " << version;
      ASSERT_EQ(some.threads[t].values.size(), full.values.size());
      for (size_t n = 0; n < full.size(); ++n)
        for (size_t m = 0; m < nm; ++m) {
          const double want = version < 3 || int(m) == visits || int(m) == sumsq
                                  ? full.values[n * nm + m]
                                  : 0.0;
          EXPECT_EQ(some.threads[t].values[n * nm + m], want)
              << "version " << version << " thread " << t << " node " << n << " column " << m;
        }
    }
  }
}

TEST(Loader, RoundTripSharedDefinitionsAcrossRanks) {
  test::Builder b = sample(0, 2);
  test::Builder r1 = sample(1, 3);
  for (auto& t : r1.e.threads) b.e.threads.push_back(t);
  const TempDir tmp("scalea-drg-mpi");
  const std::string& dir = tmp.path();
  write_experiment(b.e, dir, true);
  Experiment e = load_experiment(dir, no_symbols());
  EXPECT_EQ(e.threads.size(), 5u);
  EXPECT_EQ(e.ranks(), 2);
  Drg d(e);
  EXPECT_EQ(d.size(), 3u);
  EXPECT_EQ(d.per_rank(1, d.metric("time")).size(), 2u);
  EXPECT_DOUBLE_EQ(d.value(1, d.metric("time")), 5 * 900);
  EXPECT_EQ(test::by_file_difference(dir, no_symbols()), "");
}

TEST(Loader, MissingDirectoryMetaAndRankFile) {
  expect_load_error([] { load_experiment("/nonexistent/drg-exp", no_symbols()); }, "/nonexistent/drg-exp",
                    "no such experiment");
  const TempDir tmp("scalea-drg-missing");
  const std::string& dir = tmp.path();
  expect_load_error([&] { load_experiment(dir, no_symbols()); }, dir + "/meta.json", "cannot open");
  write_file(dir + "/meta.json", "this is { not json");
  expect_load_error([&] { load_experiment(dir, no_symbols()); }, dir + "/meta.json", "not valid JSON");
  write_file(dir + "/meta.json", encode_meta(sample(-1, 1).e, {"rank-000000.sdrg"}));
  expect_load_error([&] { load_experiment(dir, no_symbols()); }, dir + "/rank-000000.sdrg", "cannot open");
}

TEST(Loader, WrongVersionNamesTheFile) {
  const TempDir tmp("scalea-drg-version");
  const std::string& dir = tmp.path();
  write_experiment(sample(-1, 1).e, dir);
  std::string meta;
  {
    std::ifstream in(dir + "/meta.json");
    meta.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string bad = meta;
  bad.replace(bad.find("\"format_version\": 3"), 19, "\"format_version\": 9");
  write_file(dir + "/meta.json", bad);
  expect_load_error([&] { load_experiment(dir, no_symbols()); }, dir + "/meta.json", "unsupported format version 9");
  write_file(dir + "/meta.json", meta);
  // The data file's own version.
  std::vector<char> bytes = encode_rank_file(sample(-1, 1).e, -1);
  uint32_t v = 7;
  std::memcpy(bytes.data() + offsetof(format::FileHeader, version), &v, 4);
  write_file(dir + "/rank-000000.sdrg", std::string(bytes.begin(), bytes.end()));
  expect_load_error([&] { load_experiment(dir, no_symbols()); }, dir + "/rank-000000.sdrg", "format version 7");
}

TEST(Loader, InMemoryReaderServesFiles) {
  test::Builder b = sample(-1, 2);
  std::map<std::string, std::vector<char>> files;
  std::string meta = encode_meta(b.e, {"r.sdrg"});
  files["mem/meta.json"] = std::vector<char>(meta.begin(), meta.end());
  files["mem/r.sdrg"] = encode_rank_file(b.e, -1);
  FileReader read = [&](const std::string& p) {
    auto it = files.find(p);
    if (it == files.end()) throw LoadError(p + ": cannot open");
    return it->second;
  };
  Experiment e = load_experiment("mem", no_symbols(), read);
  EXPECT_EQ(e.threads.size(), 2u);
}

// Every file of tests/drg/corpus is bad input: a LoadError, never a crash.
TEST(Corpus, EveryBadInputGivesALoadError) {
  DIR* d = opendir(SCALEA_DRG_CORPUS);
  ASSERT_NE(d, nullptr) << SCALEA_DRG_CORPUS;
  size_t n = 0;
  while (dirent* ent = readdir(d)) {
    std::string name = ent->d_name;
    if (name[0] == '.') continue;
    std::ifstream in(std::string(SCALEA_DRG_CORPUS) + "/" + name, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    SCOPED_TRACE(name);
    ++n;
    auto ends = [&](const char* s) {
      return name.size() >= strlen(s) && name.compare(name.size() - strlen(s), strlen(s), s) == 0;
    };
    if (ends(".sdrg")) {
      Experiment e;
      // The repeated shape: refused before it unfolds (not for running out of memory).
      const char* problem = name == "v3-repeated-shape-unfolds-too-far.sdrg" ? "would take over" : "";
      expect_load_error([&] { parse_rank_file(name, bytes, e, no_symbols()); }, name, problem);
    } else if (ends(".json")) {
      expect_load_error([&] { parse_meta(name, bytes); }, name);
    } else {  // fuzz harness layout (hand-made whole experiments, fuzzer findings)
      EXPECT_EQ(fuzz::run_one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 1);
    }
  }
  closedir(d);
  EXPECT_GE(n, 40u);
}

// A valid very deep tree (recursion 200,000 levels deep): loads, merges, and its region graph and
// queries work without recursion in the code.
TEST(Loader, VeryDeepTree) {
  test::Builder b({"visits", "time"});
  uint32_t prog = b.region(K::Program, "main"), f = b.region(K::Function, "f", 0, "deep.c", 1, 0x10);
  uint32_t t = b.thread(-1, 0, prog, {{"time", 1e6}});
  uint32_t p = 0;
  const int depth = 200000;
  for (int i = 0; i < depth; ++i) p = b.node(t, p, f, {{"visits", 1}, {"time", double(depth - i)}});
  std::vector<char> bytes = encode_rank_file(b.e, -1);
  Experiment e;
  parse_rank_file("deep.sdrg", bytes, e, no_symbols());
  Drg d(e);
  ASSERT_EQ(d.size(), size_t(depth) + 1);
  EXPECT_EQ(d.depth(uint32_t(depth)), uint32_t(depth));
  EXPECT_EQ(d.preorder().size(), size_t(depth) + 1);
  EXPECT_DOUBLE_EQ(d.inclusive(0, d.metric("visits")), depth);
  RegionGraph rg(d);
  EXPECT_EQ(boost::num_vertices(rg.graph()), 2u);
  EXPECT_TRUE(rg.has_cycles());
  EXPECT_DOUBLE_EQ(rg.graph()[*rg.vertex(f)].inclusive[size_t(d.metric("time"))], depth);
  EXPECT_EQ(d.path_from_root(uint32_t(depth)).size(), size_t(depth) + 1);
}

}  // namespace
}  // namespace scalea::drg

namespace scalea::drg {
namespace {

// Two code addresses of one source construct (an inlined copy) are one region, and a thread's two
// nodes on that path fold into one, metric by metric.
TEST(Loader, RegionsAtOneSourcePositionFoldIntoOne) {
  test::Builder b;
  uint32_t prog = b.region(RegionKind::Program, "app");
  uint32_t a = b.region(RegionKind::Parallel, "", 0, "md.c", 100, 0x1000);
  uint32_t c = b.region(RegionKind::Parallel, "", 0, "md.c", 100, 0x2000);  // inlined copy
  uint32_t loop_a = b.region(RegionKind::Loop, "", 0, "md.c", 101, 0x1100);
  uint32_t loop_c = b.region(RegionKind::Loop, "", 0, "md.c", 101, 0x2100);
  uint32_t t = b.thread(-1, 0, prog, {{"visits", 1}, {"time", 100}});
  uint32_t pa = b.node(t, 0, a, {{"visits", 1}, {"time", 30}, {"time_min", 30}, {"time_max", 30}});
  b.node(t, pa, loop_a, {{"visits", 1}, {"time", 20}});
  uint32_t pc = b.node(t, 0, c, {{"visits", 2}, {"time", 50}, {"time_min", 20}, {"time_max", 30}});
  b.node(t, pc, loop_c, {{"visits", 2}, {"time", 40}});
  const TempDir tmp("scalea-drg-fold");
  const std::string& dir = tmp.path();
  write_experiment(b.e, dir);
  Experiment e = load_experiment(dir, no_symbols());
  ASSERT_EQ(e.regions.size(), 3u);
  const ThreadTree& th = e.threads[0];
  ASSERT_EQ(th.size(), 3u);  // root, parallel, loop
  EXPECT_EQ(e.value(th, 1, e.metric("visits")), 3);
  EXPECT_EQ(e.value(th, 1, e.metric("time")), 80);
  EXPECT_EQ(e.value(th, 1, e.metric("time_min")), 20);
  EXPECT_EQ(e.value(th, 1, e.metric("time_max")), 30);
  EXPECT_EQ(th.parent[2], 1u);
  EXPECT_EQ(e.value(th, 2, e.metric("time")), 60);
  EXPECT_EQ(test::by_file_difference(dir, no_symbols()), "");
}

// The region keeps the lowest of its recorded addresses, whichever copy the run met first, so
// that two runs of one program name it alike.
TEST(Loader, RegionOfSeveralAddressesKeepsTheLowest) {
  test::Builder b;
  uint32_t prog = b.region(RegionKind::Program, "app");
  uint32_t late = b.region(RegionKind::Parallel, "", 0, "md.c", 100, 0x2000);
  uint32_t early = b.region(RegionKind::Parallel, "", 0, "md.c", 100, 0x1000);
  b.e.regions[late].module = b.e.regions[early].module = "/opt/app";
  uint32_t t = b.thread(-1, 0, prog);
  b.node(t, 0, late);
  b.node(t, 0, early);
  const TempDir tmp("scalea-drg-lowest");
  const std::string& dir = tmp.path();
  write_experiment(b.e, dir);
  Experiment e = load_experiment(dir, no_symbols());
  ASSERT_EQ(e.regions.size(), 2u);
  EXPECT_EQ(e.regions[1].address, 0x1000u);
  EXPECT_EQ(e.threads[0].size(), 2u);
}

}  // namespace
}  // namespace scalea::drg

namespace scalea::drg {
namespace {

// Per thread, the values of the nodes of one region on the path below `parent` (kNoIndex: any).
std::vector<uint32_t> nodes_of(const ThreadTree& t, uint32_t region, uint32_t parent = format::kNoIndex) {
  std::vector<uint32_t> out;
  for (uint32_t n = 0; n < t.size(); ++n)
    if (t.region[n] == region && (parent == format::kNoIndex || t.parent[n] == parent)) out.push_back(n);
  return out;
}

uint32_t region_labelled(const Experiment& e, const std::string& label) {
  for (uint32_t i = 0; i < e.regions.size(); ++i)
    if (e.regions[i].label() == label) return i;
  return format::kNoIndex;
}

// Time minus the children's time, per node (what the classifier derives as exclusive time).
std::vector<double> exclusive_time(const Experiment& e, const ThreadTree& t) {
  const int time = e.metric("time");
  std::vector<double> out(t.size());
  for (uint32_t n = 0; n < t.size(); ++n) out[n] = e.value(t, n, time);
  for (uint32_t n = 1; n < t.size(); ++n) out[t.parent[n]] -= e.value(t, n, time);
  return out;
}

// -finstrument-functions records the compiler's outlined bodies as functions: they vanish, their
// children attach to the construct (merging with its own children of the same region), and the
// construct's exclusive time grows by theirs: no time is lost or counted twice.
TEST(Loader, OutlinedFunctionRegionsFoldIntoTheirConstruct) {
  test::Builder b({"visits", "time", "time_min", "time_max"});
  // (Distinct addresses: regions identified by address alone are one region per address.)
  uint32_t prog = b.region(K::Program, "app");
  uint32_t par = b.region(K::Parallel, "", 0, "md.c", 10, 0x100);
  uint32_t outlined = b.region(K::Function, "", 0, "", 0, 0x200), debug = b.region(K::Function, "", 0, "", 0, 0x210);
  uint32_t work = b.region(K::Function, "", 0, "", 0, 0x220), gomp = b.region(K::Function, "", 0, "", 0, 0x230);
  uint32_t entry = b.region(K::Function, "", 0, "", 0, 0x240);
  uint32_t loop = b.region(K::Loop, "", 1, "md.c", 12, 0x120);
  uint32_t join = b.region(K::BarrierImplicit, "", 2, "md.c", 10, 0x100);
  uint32_t task = b.region(K::Task, "", 0, "md.c", 20, 0x140);
  b.e.regions[outlined].function = ".omp_outlined.";
  b.e.regions[debug].function = ".omp_outlined._debug__";
  b.e.regions[work].function = "work";
  b.e.regions[gomp].function = "main._omp_fn.0";
  b.e.regions[entry].function = ".omp_task_entry..3";
  // clang: parallel -> .omp_outlined. -> .omp_outlined._debug__ -> {work, loop}; the loop also
  // ran directly below the parallel region (a path without the instrumented body).
  uint32_t t0 = b.thread(-1, 0, prog, {{"visits", 1}, {"time", 100}});
  uint32_t p0 = b.node(t0, 0, par, {{"visits", 1}, {"time", 80}, {"time_min", 80}, {"time_max", 80}});
  uint32_t o0 = b.node(t0, p0, outlined, {{"visits", 1}, {"time", 70}, {"time_min", 70}, {"time_max", 70}});
  uint32_t d0 = b.node(t0, o0, debug, {{"visits", 1}, {"time", 69}, {"time_min", 69}, {"time_max", 69}});
  b.node(t0, d0, work, {{"visits", 1}, {"time", 30}, {"time_min", 30}, {"time_max", 30}});
  b.node(t0, d0, loop, {{"visits", 1}, {"time", 20}, {"time_min", 20}, {"time_max", 20}});
  b.node(t0, p0, loop, {{"visits", 2}, {"time", 5}, {"time_min", 2}, {"time_max", 3}});
  b.node(t0, p0, join, {{"visits", 1}, {"time", 5}, {"time_min", 5}, {"time_max", 5}});
  // gcc: main._omp_fn.0 below the program; a task's entry below the task.
  uint32_t t1 = b.thread(-1, 1, prog, {{"visits", 1}, {"time", 90}});
  uint32_t g1 = b.node(t1, 0, gomp, {{"visits", 1}, {"time", 60}});
  uint32_t k1 = b.node(t1, g1, task, {{"visits", 4}, {"time", 40}});
  uint32_t e1 = b.node(t1, k1, entry, {{"visits", 4}, {"time", 39}});
  b.node(t1, e1, loop, {{"visits", 4}, {"time", 30}});
  const TempDir tmp("scalea-drg-outlined");
  const std::string& dir = tmp.path();
  write_experiment(b.e, dir);

  LoadOptions keep = no_symbols();
  keep.fold_outlined_functions = false;
  Experiment before = load_experiment(dir, keep);
  Experiment e = load_experiment(dir, no_symbols());
  ASSERT_EQ(before.threads[0].size(), 8u);
  EXPECT_EQ(test::by_file_difference(dir, no_symbols()), "");

  for (const ThreadTree& t : e.threads)
    for (uint32_t n = 0; n < t.size(); ++n)
      if (e.regions[t.region[n]].kind == K::Function) EXPECT_EQ(e.regions[t.region[n]].function, "work");
  const ThreadTree& a = e.threads[0];
  ASSERT_EQ(a.size(), 5u);  // program, parallel, work, loop, join
  const uint32_t p = nodes_of(a, region_labelled(e, "parallel"))[0];
  const int time = e.metric("time"), visits = e.metric("visits");
  std::vector<uint32_t> loops = nodes_of(a, region_labelled(e, "loop (static)"), p);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(e.value(a, loops[0], visits), 3);
  EXPECT_EQ(e.value(a, loops[0], time), 25);
  EXPECT_EQ(e.value(a, loops[0], e.metric("time_min")), 2);
  EXPECT_EQ(e.value(a, loops[0], e.metric("time_max")), 20);
  ASSERT_EQ(nodes_of(a, region_labelled(e, "work"), p).size(), 1u);
  EXPECT_EQ(e.value(a, p, time), 80);  // inclusive time unchanged
  // The parallel region's exclusive time: its own (0) plus the two bodies' (1 + 19).
  EXPECT_EQ(exclusive_time(e, a)[p], 20);
  double sum_after = 0, sum_before = 0;
  for (double x : exclusive_time(e, a)) sum_after += x;
  for (double x : exclusive_time(before, before.threads[0])) sum_before += x;
  EXPECT_EQ(sum_after, sum_before);

  const ThreadTree& c = e.threads[1];
  ASSERT_EQ(c.size(), 3u);  // program, task, loop
  EXPECT_EQ(e.regions[c.region[1]].kind, K::Task);
  EXPECT_EQ(c.parent[1], 0u);
  EXPECT_EQ(e.regions[c.region[2]].kind, K::Loop);
  EXPECT_EQ(c.parent[2], 1u);
  EXPECT_EQ(e.value(c, 2, time), 30);
}

// Code in an outlined body is named after the function the body came from: the enclosing
// construct's (when every calling context agrees), else what the body's own name says.
TEST(Loader, OutlinedCodeIsNamedAfterTheFunctionItCameFrom) {
  test::Builder b;
  uint32_t prog = b.region(K::Program, "app");
  uint32_t par = b.region(K::Parallel, "", 0, "md.c", 10, 0x10), par2 = b.region(K::Parallel, "", 0, "md.c", 40, 0x20);
  uint32_t single = b.region(K::Single, "", 0, "md.c", 11, 0x30), task = b.region(K::Task, "", 0, "md.c", 12, 0x40);
  uint32_t wait = b.region(K::Taskwait, "", 0, "util.h", 3, 0x50), loop = b.region(K::Loop, "", 1, "md.c", 42, 0x60);
  uint32_t gcc_loop = b.region(K::Loop, "", 1, "md.c", 43, 0x70);
  b.e.regions[par].function = "solve";
  b.e.regions[par2].function = "other";
  b.e.regions[single].function = ".omp_outlined._debug__";
  b.e.regions[task].function = ".omp_outlined._debug__";
  b.e.regions[wait].function = "helper";  // inlined into the task body: its own function
  b.e.regions[loop].function = ".omp_outlined..7";
  b.e.regions[gcc_loop].function = "main._omp_fn.3";
  uint32_t t = b.thread(-1, 0, prog);
  uint32_t p = b.node(t, 0, par), s = b.node(t, p, single), k = b.node(t, s, task);
  b.node(t, k, wait);
  b.node(t, p, loop);
  b.node(t, p, gcc_loop);
  uint32_t q = b.node(t, 0, par2);
  b.node(t, q, loop);  // the same code below two constructs of different functions
  b.node(t, q, gcc_loop);
  const TempDir tmp("scalea-drg-origin");
  const std::string& dir = tmp.path();
  write_experiment(b.e, dir);
  Experiment e = load_experiment(dir, no_symbols());
  auto at = [&](const std::string& line) -> const Region& {
    for (const Region& r : e.regions)
      if (r.location() == line) return r;
    ADD_FAILURE() << "no region at " << line;
    return e.regions[0];
  };
  EXPECT_EQ(at("md.c:11").function, "solve");
  EXPECT_TRUE(at("md.c:11").outlined);
  EXPECT_EQ(at("md.c:12").function, "solve");
  EXPECT_EQ(at("util.h:3").function, "helper");
  EXPECT_FALSE(at("util.h:3").outlined);
  EXPECT_EQ(at("md.c:42").function, ".omp_outlined..7");
  EXPECT_FALSE(at("md.c:42").outlined);
  EXPECT_EQ(at("md.c:43").function, "main");
  EXPECT_EQ(at("md.c:10").function, "solve");
  EXPECT_EQ(test::by_file_difference(dir, no_symbols()), "");
}

TEST(Region, LocationWithoutLineInformation) {
  Region r;
  r.kind = K::Parallel;
  r.module = "/opt/app/bin/cg.S";
  r.address = 0x1a2;
  EXPECT_EQ(r.location(), "cg.S+0x1a2");  // no symbol covers the address
  r.symbol = "resid";
  r.function = "resid";
  r.symbol_offset = 0x1a2;
  EXPECT_EQ(r.location(), "resid+0x1a2");
  r.kind = K::Loop;
  r.symbol = ".omp_outlined..38";
  r.symbol_offset = 0x40;
  r.function = "conj_grad";
  r.outlined = true;
  EXPECT_EQ(r.location(), "conj_grad (.omp_outlined..38+0x40)");
  r.kind = K::Parallel;
  r.body = true;
  r.outlined = false;
  r.function = "main";
  EXPECT_EQ(r.location(), "main (.omp_outlined..38)");
  r.file = "/src/cg.c";
  r.line = 372;
  EXPECT_EQ(r.location(), "cg.c:372");

  Region f;  // a function region is named by its label; without lines it has no location
  f.kind = K::Function;
  f.module = "/opt/app/bin/cg.S";
  f.address = 0x400;
  f.function = f.symbol = "resid";
  EXPECT_EQ(f.label(), "resid");
  EXPECT_EQ(f.location(), "");
  Region p;
  p.kind = K::Program;
  p.name = "cg.S";
  EXPECT_EQ(p.location(), "");
}

}  // namespace
}  // namespace scalea::drg
