// How numbers read in the text outputs (report/src/output/text.cpp, report/src/formats/): CSV
// values without a negative zero, counters with their units, findings that hold more than a T_o
// that negative classes reduced, and `scalea diff` rows of regions that barely ran in A.
#include <gtest/gtest.h>

#include <string>

#include "formats/diff.hpp"
#include "formats/findings_out.hpp"
#include "output/text.hpp"

namespace scalea::cli {
namespace {

using overheads::Class;

TEST(Numbers, FixedHasNoNegativeZero) {
  EXPECT_EQ(fixed(-1e-12, 9), "0.000000000");
  EXPECT_EQ(fixed(-0.0, 9), "0.000000000");
  EXPECT_EQ(fixed(-4e-10, 9), "0.000000000");
  EXPECT_EQ(fixed(-6e-10, 9), "-0.000000001");
  EXPECT_EQ(fixed(-0.5, 3), "-0.500");
  EXPECT_EQ(fixed(1.25, 2), "1.25");
  EXPECT_EQ(fixed(0, 9), "0.000000000");
}

TEST(Numbers, CountersWithTheirUnits) {
  EXPECT_EQ(counter_value("papi:perf::TASK-CLOCK", 1157131950), "1.157 s");
  EXPECT_EQ(counter_value("perf::CPU-CLOCK", 289e6), "0.289 s");
  EXPECT_EQ(counter_value("papi:perf::PAGE-FAULTS", 1234567), "1,234,567");
  EXPECT_EQ(counter_value("papi:PAPI_L2_DCM", 999), "999");
  EXPECT_TRUE(is_cpu_time_counter("papi:perf::TASK-CLOCK"));
  EXPECT_FALSE(is_cpu_time_counter("papi:perf::PAGE-FAULTS"));
}

overheads::Analysis program(double t_o, std::initializer_list<std::pair<Class, double>> classes) {
  overheads::Analysis a;
  a.regions.emplace_back();
  a.regions[0].t_o = t_o;
  for (const auto& [c, v] : classes) a.regions[0].classes[size_t(c)] = v;
  return a;
}

// The text said "these findings hold 0.019 s; the program's T_o is 0.001 s" and no more.
TEST(Findings, HoldingMoreThanTheProgramsTOSaysWhy) {
  overheads::Analysis a = program(0.001, {{Class::Synchronization, 0.010},
                                          {Class::LossOfParallelism, 0.009},
                                          {Class::Unidentified, -0.018}});
  std::string why = below_findings(a, 0.019);
  EXPECT_NE(why.find("less than they hold"), std::string::npos) << why;
  EXPECT_NE(why.find("unidentified -0.018 s"), std::string::npos) << why;
  EXPECT_NE(why.find("super-linear"), std::string::npos) << why;
  // Findings within T_o, or no negative class: nothing to explain.
  EXPECT_EQ(below_findings(a, 0.001), "");
  EXPECT_EQ(below_findings(program(0.019, {{Class::Synchronization, 0.019}}), 0.020), "");
  // Another negative class is named, without the super-linear reading.
  std::string sync = below_findings(
      program(0.002, {{Class::LossOfParallelism, 0.012}, {Class::Synchronization, -0.010}}), 0.012);
  EXPECT_NE(sync.find("synchronization -0.010 s"), std::string::npos) << sync;
  EXPECT_EQ(sync.find("super-linear"), std::string::npos) << sync;
}

DiffSide side(const std::string& path, std::vector<double> times, std::vector<std::string> paths) {
  DiffSide s;
  s.path = path;
  s.p = 2;
  for (double t : times) s.regions.push_back({t, 0, {}, 2});
  s.region_path = [paths](size_t i) { return paths[i]; };
  return s;
}

// A region in both runs that took 0.05 ms in A was labelled "new".
TEST(Diff, NewOnlyForRegionsAbsentFromA) {
  DiffSide a = side("A", {1.0, 5e-5}, {"prog", "prog/tiny@t.c:3"});
  DiffSide b = side("B", {0.8, 0.01, 0.2}, {"prog", "prog/tiny@t.c:3", "prog/fresh@t.c:9"});
  testing::internal::CaptureStdout();
  print_diff(a, b, {{0, 0}, {1, 1}, {-1, 2}}, "text", 0);
  const std::string out = testing::internal::GetCapturedStdout();
  size_t table_end = out.find("regions only in B");
  ASSERT_NE(table_end, std::string::npos) << out;
  const std::string table = out.substr(0, table_end);
  EXPECT_EQ(table.find("new"), std::string::npos) << out;
  size_t row = table.find("prog/tiny@t.c:3");
  ASSERT_NE(row, std::string::npos) << out;
  const std::string line = table.substr(row, table.find('\n', row) - row);
  EXPECT_NE(line.find("  -  "), std::string::npos) << line;
  EXPECT_EQ(table.find("prog/fresh@t.c:9"), std::string::npos) << out;
  EXPECT_NE(out.find("prog/fresh@t.c:9", table_end), std::string::npos) << out;
  EXPECT_NE(out.find("less than 0.1 ms in A"), std::string::npos) << out;
  EXPECT_NE(table.find("-20.0%"), std::string::npos) << out;
}

}  // namespace
}  // namespace scalea::cli
