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
