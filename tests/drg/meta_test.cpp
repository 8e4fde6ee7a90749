// drg::read_meta against what the collector writes (the writer's golden meta.json) and the
// per-rank entries of an MPI run.
#include <gtest/gtest.h>

#include <fstream>

#include "scalea/drg/meta.hpp"

namespace {

using scalea::drg::Meta;
using scalea::drg::read_meta;
using scalea::format::RegionKind;

TEST(Meta, ReadsTheWritersMetaJson) {
  std::ifstream in(SCALEA_GOLDEN_META);
  ASSERT_TRUE(in) << SCALEA_GOLDEN_META;
  const Meta m = read_meta(nlohmann::json::parse(in));
  EXPECT_EQ(m.clock_source, "monotonic");
  EXPECT_DOUBLE_EQ(m.duration_s, 0.000004);
  EXPECT_TRUE(m.has_duration);
  EXPECT_EQ(m.cwd, "<masked>");
  EXPECT_EQ(m.tool_version, "0.1.0");
  EXPECT_EQ(m.threads, 2);
  EXPECT_FALSE(m.mpi);
  EXPECT_FALSE(m.program_start_estimated);
  EXPECT_EQ(m.openmp.runtime, "synthetic runtime 1.0");
  EXPECT_EQ(m.openmp.runtime_path, "/opt/omp/libomp.so");
  EXPECT_FALSE(m.openmp.runtime_init_s);  // null: not known
  ASSERT_EQ(m.affinity.size(), 1u);
  EXPECT_FALSE(m.affinity_per_rank);
  EXPECT_EQ(m.affinity[0].rank, -1);
  ASSERT_EQ(m.affinity[0].threads.size(), 2u);
  EXPECT_EQ(m.affinity[0].threads[1].index, 1u);
  EXPECT_FALSE(m.affinity[0].threads[0].created_s);
  EXPECT_DOUBLE_EQ(*m.affinity[0].threads[1].created_s, 0.000002);
  EXPECT_DOUBLE_EQ(*m.affinity[0].threads[0].runqueue_s, 0);
  EXPECT_FALSE(m.affinity[0].threads[1].cpu_s);
  // No counter was measured: no kind reads them, whatever the regions' list says.
  EXPECT_TRUE(m.counters.measured.empty());
  EXPECT_EQ(m.counters.region_kinds.count("loop"), 1u);
  EXPECT_FALSE(m.counters.read_in(RegionKind::Loop));
  EXPECT_EQ(m.throttled_count, 1);
  EXPECT_EQ(m.throttle_calls, 3);
  ASSERT_EQ(m.throttled.size(), 1u);
  EXPECT_EQ(m.throttled[0].rank, -1);
  EXPECT_EQ(m.throttled[0].node, 4);
  EXPECT_FALSE(m.message_model);
  EXPECT_EQ(m.ranks, 1);
}

TEST(Meta, RanksEntriesAndCounters) {
  const Meta m = read_meta(nlohmann::json::parse(R"({
    "command": ["./halo", 3, "-n"], "host": "a", "pid": 42,
    "affinity": {"cpus_online": 4, "threads": [{"index": 0}],
                 "ranks": [{"rank": 0, "host": "b", "cpus_online": 8, "threads": [{"index": 0, "cpus": "0-1"}]},
                           {"rank": 1, "threads": [{"index": -1}, {"index": 2, "runqueue_s": 0.5}]},
                           {"threads": []}]},
    "counters": {"measured": [{"name": "PAPI_TOT_INS"}], "cost_per_read_ns": 650.0, "regions": "loop,mpi"},
    "mpi": {"model": {"latency_ns": 1500, "ns_per_byte": 0.1}},
    "program_start": "estimated", "program_start_estimated_s": 0.02})"));
  EXPECT_EQ(m.command_line(), "./halo -n");  // words that are not strings are left out
  EXPECT_EQ(m.pid, 42);
  EXPECT_TRUE(m.program_start_estimated);
  EXPECT_DOUBLE_EQ(m.program_start_estimated_s, 0.02);
  // The ranks' entries replace the process's own; one without a rank is left out.
  EXPECT_TRUE(m.affinity_per_rank);
  ASSERT_EQ(m.affinity.size(), 2u);
  EXPECT_EQ(m.affinity[0].host, "b");
  EXPECT_EQ(m.affinity[0].cpus_online, 8);
  EXPECT_EQ(m.affinity[0].threads[0].cpus, "0-1");
  EXPECT_EQ(m.affinity[1].rank, 1);
  EXPECT_EQ(m.affinity[1].host, "a");  // the experiment's host
  EXPECT_FALSE(m.affinity[1].threads[0].index);
  EXPECT_EQ(m.affinity[1].threads[1].index, 2u);
  EXPECT_TRUE(m.counters.read_in(RegionKind::Loop));
  EXPECT_TRUE(m.counters.read_in(RegionKind::Mpi));
  EXPECT_FALSE(m.counters.read_in(RegionKind::Parallel));
  EXPECT_DOUBLE_EQ(m.counters.cost_per_read_ns, 650);
  EXPECT_TRUE(m.mpi);
  ASSERT_TRUE(m.message_model);
  EXPECT_DOUBLE_EQ(m.message_model->latency_ns, 1500);
  EXPECT_EQ(m.message_model->source, "?");
}

TEST(Meta, AnythingElseReadsAsDefaults) {
  for (const char* text : {"null", "[]", "3", R"({"affinity": 1, "counters": [], "command": "x"})"}) {
    const Meta m = read_meta(nlohmann::json::parse(text));
    EXPECT_TRUE(m.command.empty()) << text;
    EXPECT_TRUE(m.affinity.empty()) << text;
    EXPECT_EQ(m.clock_source, "?") << text;
    // Absent, which ingest stores as NULL, not as a value.
    EXPECT_FALSE(m.has_duration) << text;
    EXPECT_FALSE(m.threads) << text;
    EXPECT_FALSE(m.mpi) << text;
    EXPECT_EQ(m.cwd, "") << text;
  }
}

}  // namespace
