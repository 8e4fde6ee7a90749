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

TEST(Numbers, CountersWithTheirUnits) {
  EXPECT_EQ(counter_value("papi:perf::TASK-CLOCK", 1157131950), "1.157 s");
  EXPECT_EQ(counter_value("perf::CPU-CLOCK", 289e6), "0.289 s");
  EXPECT_EQ(counter_value("papi:perf::PAGE-FAULTS", 1234567), "1,234,567");
  EXPECT_EQ(counter_value("papi:PAPI_L2_DCM", 999), "999");
  EXPECT_TRUE(is_cpu_time_counter("papi:perf::TASK-CLOCK"));
  EXPECT_FALSE(is_cpu_time_counter("papi:perf::PAGE-FAULTS"));
}

}  // namespace
}  // namespace scalea::cli
