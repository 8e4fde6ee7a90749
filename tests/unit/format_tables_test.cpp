// The tables of format.hpp (region kinds, MPI classes, core metrics) answer what the code used to
// write down by hand in several places: these are the answers the analyses rely on.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/recorder.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/format.hpp"

namespace scalea::format {
namespace {

std::set<std::string> kinds_with(KindTrait t) {
  std::set<std::string> out;
  for (const RegionKindSpec& k : kRegionKinds)
    if (region_kind_has(k.kind, t)) out.insert(k.name);
  return out;
}

TEST(FormatTables, RegionKindTraits) {
  EXPECT_EQ(kRegionKindCount, 30);
  EXPECT_EQ(kinds_with(kWaits),
            (std::set<std::string>{"barrier_implicit", "barrier_explicit", "barrier_implementation",
                                   "taskwait", "taskgroup", "reduction", "critical", "lock",
                                   "nest_lock", "atomic", "ordered", "mpi"}));
  EXPECT_EQ(kinds_with(kBarrier), (std::set<std::string>{"barrier_implicit", "barrier_explicit"}));
  EXPECT_EQ(kinds_with(kPartial), (std::set<std::string>{"single", "sections", "masked"}));
  EXPECT_EQ(kinds_with(kCoarse),
            (std::set<std::string>{"parallel", "teams", "loop", "sections", "single", "workshare",
                                   "taskloop", "distribute", "user", "mpi"}));
  EXPECT_EQ(kinds_with(kUndivided),
            (std::set<std::string>{"program", "function", "user", "parallel", "teams"}));
  EXPECT_EQ(kinds_with(kTeam), (std::set<std::string>{"parallel", "teams"}));
  // A kind from a damaged file has no traits and no name.
  EXPECT_FALSE(region_kind_has(RegionKind(kRegionKindCount), kWaits));
  EXPECT_EQ(region_kind_name(RegionKind(kRegionKindCount)), "unknown");
}

TEST(FormatTables, CostKindsShareTheBarrierAndLockFigures) {
  for (const RegionKindSpec& k : kRegionKinds) {
    std::string name = k.name, expected = name;
    if (name.rfind("barrier", 0) == 0) expected = "barrier";
    if (name == "nest_lock" || name == "critical") expected = "lock";
    EXPECT_EQ(region_kind_cost(k.kind), expected) << name;
  }
}

// Region::label from the kind table's label column, the subkinds' label tables and kNamed.
TEST(FormatTables, RegionLabels) {
  EXPECT_EQ(kinds_with(kNamed),
            (std::set<std::string>{"program", "function", "user", "mpi", "io"}));
  auto label = [](RegionKind k, uint16_t subkind, std::string name = "", std::string function = "") {
    drg::Region r;
    r.kind = k, r.subkind = subkind, r.name = std::move(name), r.function = std::move(function);
    return r.label();
  };
  EXPECT_EQ(label(RegionKind::Program, 0), "program");
  EXPECT_EQ(label(RegionKind::Program, 0, "md"), "md");
  EXPECT_EQ(label(RegionKind::User, 0, "solve"), "solve");
  EXPECT_EQ(label(RegionKind::Function, 0, "", "resid"), "resid");
  EXPECT_EQ(label(RegionKind::Mpi, 2, "MPI_Allreduce"), "MPI_Allreduce");
  EXPECT_EQ(label(RegionKind::Loop, 0), "loop");
  EXPECT_EQ(label(RegionKind::Loop, uint16_t(LoopSchedule::Dynamic)), "loop (dynamic)");
  EXPECT_EQ(label(RegionKind::Loop, 99), "loop");
  EXPECT_EQ(label(RegionKind::BarrierImplicit, 0), "barrier (implicit)");
  EXPECT_EQ(label(RegionKind::BarrierImplicit, uint16_t(BarrierFlavour::Parallel)), "barrier (implicit, join)");
  EXPECT_EQ(label(RegionKind::BarrierExplicit, 0), "barrier");
  EXPECT_EQ(label(RegionKind::BarrierImplementation, 0), "barrier (runtime)");
  EXPECT_EQ(label(RegionKind::Critical, 0, "ignored"), "critical");  // not named: its kind's label
  EXPECT_EQ(label(RegionKind(kRegionKindCount), 0), "unknown");
  EXPECT_EQ(label(RegionKind::Io, uint16_t(IoOp::Write), "pwrite"), "pwrite");  // the call
  EXPECT_EQ(label(RegionKind::Io, uint16_t(IoOp::Read)), "read");
  EXPECT_EQ(label(RegionKind::Io, 99), "I/O");
}

TEST(FormatTables, MpiClasses) {
  EXPECT_EQ(kMpiClassCount, 7);
  EXPECT_EQ(mpi_class_name(uint16_t(MpiClass::OneSided)), "one-sided");
  EXPECT_EQ(std::string(kMpiClasses[uint16_t(MpiClass::Collective)].spec), "coll");
  EXPECT_EQ(mpi_class_name(kMpiClassCount), "unknown");
}

TEST(FormatTables, MetricUnitsAndScopes) {
  std::set<std::string> times;
  for (const MetricSpec& m : kCoreMetrics)
    if (is_time_metric(m.name)) times.insert(m.name);
  EXPECT_EQ(times, (std::set<std::string>{"time", "time_min", "time_max", "wait", "fork", "join",
                                          "task_exec", "transfer"}));
  EXPECT_EQ(metric_unit("time_sumsq"), MetricUnit::Ns2);
  EXPECT_EQ(metric_unit("bytes_sent"), MetricUnit::Bytes);
  EXPECT_EQ(metric_unit("papi:PAPI_L1_DCM"), MetricUnit::Count);
  EXPECT_FALSE(is_time_metric("papi:perf::TASK-CLOCK"));
  EXPECT_EQ(metric_scope("time"), MetricScope::Inclusive);
  EXPECT_EQ(metric_scope("visits"), MetricScope::Own);
  EXPECT_EQ(metric_scope("time_max"), MetricScope::Visit);
  EXPECT_EQ(metric_scope("papi:PAPI_TOT_CYC"), MetricScope::Inclusive);
  static_assert(core_metric("transfer") == &kCoreMetrics[size_t(CoreMetric::Transfer)]);
  static_assert(core_metric("nope") == nullptr);
}

// The recorder's statistics are generated from the same rows: one 8-byte field per column.
TEST(FormatTables, StatsHaveOneFieldPerCoreMetric) {
  static_assert(sizeof(collect::Stats) == kCoreMetricCount * sizeof(uint64_t));
  collect::Stats s;
  EXPECT_EQ(s.time_min, UINT64_MAX);
  EXPECT_EQ(s.time_max, 0u);
  EXPECT_EQ(s.time_sumsq, 0.0);
}

}  // namespace
}  // namespace scalea::format
