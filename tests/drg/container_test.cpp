// unit.drg: the few-files layout (containers of rank files): read like rank files, and every way
// a container can be lost, cut or damaged is one LoadError naming the file and the ranks.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>

#include "../temp_dir.hpp"
#include "drg_builder.hpp"
#include "scalea/drg/encode.hpp"
#include "scalea/drg/experiment.hpp"

namespace scalea::drg {
namespace {

using K = RegionKind;

// Ranks 0..ranks-1, each with `threads` threads of a parallel region with a loop.
Experiment job(int ranks, int threads) {
  test::Builder b({"visits", "time", "time_min", "time_max", "time_sumsq"});
  uint32_t prog = b.region(K::Program, "main"), par = b.region(K::Parallel, "", 0, "s.c", 3, 0x30),
           loop = b.region(K::Loop, "", 2, "s.c", 5, 0x50);
  for (int r = 0; r < ranks; ++r)
    for (int th = 0; th < threads; ++th) {
      uint32_t t = b.thread(r, uint32_t(th), prog, {{"visits", 1}, {"time", 1000.0 + 10 * r + th}});
      uint32_t p = b.node(t, 0, par, {{"visits", 2}, {"time", 900.0 + r}, {"time_sumsq", 1.5e5}});
      b.node(t, p, loop, {{"visits", 2}, {"time", 700.0 + th}});
    }
  return b.e;
}

using test::no_symbols;

class Containers : public ::testing::Test {
 protected:
  // Five ranks, two per node: node-000000.sdrc holds ranks 0 and 1, ..., node-000002 rank 4.
  void SetUp() override { write_experiment(job(5, 3), dir_, true, 2); }

  std::string read(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ + "/" + name, std::ios::binary | std::ios::trunc) << bytes;
  }
  // The offset of rank `rank`'s file in the container `name` (from its index).
  uint64_t offset_of(const std::string& name, int32_t rank) const {
    std::string c = read(name);
    format::ContainerHeader h;
    std::memcpy(&h, c.data(), sizeof h);
    for (uint32_t i = 0; i < h.count; ++i) {
      format::ContainerEntry e;
      std::memcpy(&e, c.data() + sizeof h + i * sizeof e, sizeof e);
      if (e.rank == rank) return e.offset;
    }
    ADD_FAILURE() << "rank " << rank << " not in " << name;
    return 0;
  }
  // The one-line LoadError the load gives, naming every piece of `parts`; reading one rank file
  // at a time (RankFiles: the files' pages mapped, not read) gives the same.
  void expect_error(const std::vector<std::string>& parts) const {
    for (bool by_file : {false, true}) {
      try {
        if (by_file) RankFiles files(dir_, no_symbols());
        else load_experiment(dir_, no_symbols());
        ADD_FAILURE() << "no LoadError" << (by_file ? " by file" : "");
      } catch (const LoadError& e) {
        std::string m = e.what();
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        for (const std::string& p : parts) EXPECT_NE(m.find(p), std::string::npos) << m << "\nlacks: " << p;
      }
    }
  }
  const scalea::test::TempDir tmp_{"scalea-drg-containers"};
  const std::string dir_ = tmp_.path() + "/exp";
};

TEST_F(Containers, HoldOneFilePerNodeAndLoadLikeRankFiles) {
  Experiment e = load_experiment(dir_, no_symbols());
  nlohmann::json files = e.meta["files"];
  EXPECT_EQ(files, nlohmann::json({"node-000000.sdrc", "node-000001.sdrc", "node-000002.sdrc"}));
  std::string per_rank = tmp_.path() + "/ranks";
  write_experiment(job(5, 3), per_rank, true);
  Experiment r = load_experiment(per_rank, no_symbols());
  ASSERT_EQ(e.threads.size(), r.threads.size());
  for (size_t i = 0; i < e.threads.size(); ++i) {
    EXPECT_EQ(e.threads[i].rank, r.threads[i].rank);
    EXPECT_EQ(e.threads[i].parent, r.threads[i].parent);
    EXPECT_EQ(e.threads[i].values, r.threads[i].values);
  }
  EXPECT_EQ(e.ranks(), 5);
}

TEST_F(Containers, InMemoryReaderServesContainers) {
  // Files from a FileReader (no directory listing, parts cut from whole files) read the same.
  size_t reads = 0;
  FileReader reader = [&](const std::string& path) {
    ++reads;
    std::string bytes = read(path.substr(dir_.size() + 1));
    if (bytes.empty()) throw LoadError(path + ": cannot open");
    return std::vector<char>(bytes.begin(), bytes.end());
  };
  Experiment m = load_experiment(dir_, no_symbols(), reader);
  Experiment d = load_experiment(dir_, no_symbols());
  ASSERT_EQ(m.threads.size(), d.threads.size());
  for (size_t i = 0; i < m.threads.size(); ++i) EXPECT_EQ(m.threads[i].values, d.threads[i].values);
  EXPECT_GT(reads, 3u);
  std::string c = read("node-000001.sdrc");
  write("node-000001.sdrc", c.substr(0, c.size() - 1));
  try {
    load_experiment(dir_, no_symbols(), reader);
    ADD_FAILURE() << "no LoadError";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 3 lost"), std::string::npos) << e.what();
  }
}

TEST_F(Containers, MissingContainerIsNamed) {
  std::remove((dir_ + "/node-000001.sdrc").c_str());
  expect_error({dir_ + "/node-000001.sdrc", "cannot open"});
}

TEST_F(Containers, TruncatedContainerNamesTheRanksItLost) {
  std::string c = read("node-000001.sdrc");
  write("node-000001.sdrc", c.substr(0, offset_of("node-000001.sdrc", 3) + 10));
  expect_error({dir_ + "/node-000001.sdrc", "truncated", "rank(s) 3 lost"});
  write("node-000001.sdrc", c.substr(0, offset_of("node-000001.sdrc", 2) + 10));
  expect_error({dir_ + "/node-000001.sdrc", "rank(s) 2, 3 lost"});
  write("node-000001.sdrc", c.substr(0, 40));
  expect_error({dir_ + "/node-000001.sdrc", "truncated index", "the ranks it held are unknown"});
  write("node-000001.sdrc", c.substr(0, 12));
  expect_error({dir_ + "/node-000001.sdrc", "truncated container header"});
}

TEST_F(Containers, DamagedRankFileOrIndexIsNamed) {
  std::string c = read("node-000001.sdrc");
  std::string bad = c;
  bad[offset_of("node-000001.sdrc", 3) + 60] ^= 0x5a;
  write("node-000001.sdrc", bad);
  expect_error({dir_ + "/node-000001.sdrc [rank 3]", "CRC mismatch"});
  bad = c;
  bad[sizeof(format::ContainerHeader) + 1] ^= 0x01;  // rank 2's entry
  write("node-000001.sdrc", bad);
  expect_error({dir_ + "/node-000001.sdrc", "index damaged"});
  write("node-000001.sdrc", "SCALEADG" + c.substr(8));
  expect_error({dir_ + "/node-000001.sdrc", "not a scalea container"});
}

TEST_F(Containers, RankWrittenButInNoContainerIsNamed) {
  nlohmann::json meta = nlohmann::json::parse(read("meta.json"));
  meta["mpi"] = {{"ranks_written", {0, 1, 2, 3, 4, 5}}};
  write("meta.json", meta.dump());
  expect_error({dir_, "rank(s) 5 written by the run", "in no container"});
}

TEST_F(Containers, RankTheRunLostLoadsAsToday) {
  // A rank missing from the run is in no container and not in ranks_written: the experiment
  // loads (it says it is incomplete), as with one rank file per rank.
  nlohmann::json meta = nlohmann::json::parse(read("meta.json"));
  meta["mpi"] = {{"ranks_written", {0, 1, 2, 3}}, {"missing_ranks", {4}}};
  meta["complete"] = false;
  meta["files"] = {"node-000000.sdrc", "node-000001.sdrc"};
  write("meta.json", meta.dump());
  std::remove((dir_ + "/node-000002.sdrc").c_str());
  Experiment e = load_experiment(dir_, no_symbols());
  EXPECT_EQ(e.ranks(), 4);
  EXPECT_FALSE(e.complete());
}

TEST_F(Containers, MixedLayoutsAreOneError) {
  write("rank-000007.sdrg", "stray");
  expect_error({dir_, "mixed layouts", "rank-000007.sdrg"});
  std::remove((dir_ + "/rank-000007.sdrg").c_str());
  nlohmann::json meta = nlohmann::json::parse(read("meta.json"));
  meta["files"].push_back("rank-000007.sdrg");
  write("meta.json", meta.dump());
  expect_error({dir_ + "/meta.json", "mixed layouts"});
}

TEST(ContainersBeside, ContainerBesideRankFilesIsOneError) {
  const scalea::test::TempDir tmp("scalea-drg-containers");
  const std::string& dir = tmp.path();
  write_experiment(job(2, 1), dir, true);
  std::ofstream(dir + "/node-000000.sdrc") << "stray";
  try {
    load_experiment(dir, no_symbols());
    ADD_FAILURE() << "no LoadError";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("mixed layouts: holds node-000000.sdrc"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalea::drg
