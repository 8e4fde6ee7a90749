// The settings table (collect/core/config.cpp): what read_config does with it, and the docs'
// tables of settings, which must show its rows as they are.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace scalea::collect {
namespace {

// The `SCALEA_` rows of the table that follows the heading `heading` in a markdown file.
std::vector<std::string> doc_rows(const std::string& file, const std::string& heading) {
  std::ifstream in(std::string(SCALEA_SOURCE_DIR) + "/" + file);
  std::vector<std::string> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == heading;
    if (in_section && line.rfind("| `SCALEA_", 0) == 0) rows.push_back(line);
  }
  return rows;
}

std::vector<std::string> table_rows(SettingReader a, SettingReader b) {
  std::vector<std::string> rows;
  for (const Setting& s : settings())
    if (s.reader == a || s.reader == b)
      rows.push_back(std::string("| `") + s.key + "` | " + s.shown_default + " | " + s.doc + " |");
  return rows;
}

TEST(Settings, UserGuideShowsTheTable) {
  EXPECT_EQ(doc_rows("docs/user-guide.md", "## Environment"),
            table_rows(SettingReader::Tool, SettingReader::Command));
}

TEST(Settings, MpiDocShowsTheTable) {
  EXPECT_EQ(doc_rows("docs/mpi.md", "## Settings"),
            table_rows(SettingReader::MpiLayer, SettingReader::MpiLayer));
}

TEST(Settings, EveryKeyOnceEveryToolSettingParsed) {
  std::vector<std::string> keys;
  for (const Setting& s : settings()) {
    for (const std::string& k : keys) EXPECT_NE(k, s.key);
    keys.push_back(s.key);
    EXPECT_EQ(std::string(s.key).rfind("SCALEA_", 0), 0u) << s.key;
    if (s.reader == SettingReader::Tool) EXPECT_NE(s.parse, nullptr) << s.key;
    if (s.reader == SettingReader::Command || s.reader == SettingReader::MpiLayer)
      EXPECT_EQ(s.parse, nullptr) << s.key << " is read by another part";
  }
}

TEST(Settings, ReadConfigParsesWarnsAndKeepsDefaults) {
  std::vector<std::string> env = {
      "SCALEA_QUIET=on",         "SCALEA_CLOCK=bogus",          "SCALEA_OUTPUT=",
      "SCALEA_OUPUT=x",          "SCALEA_THROTTLE=50:2ms",      "SCALEA_THROTTLE_REGIONS=functions, user",
      "SCALEA_MPI_TIMEOUT=3",    "SCALEA_FUNCTIONS_EXCLUDE= a* ,,b ", "OMP_NUM_THREADS=2",
      "SCALEA_COUNTERS=none"};
  std::vector<char*> ptrs;
  for (std::string& e : env) ptrs.push_back(e.data());
  ptrs.push_back(nullptr);
  Config c = read_config(ptrs.data());
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.clock, "");
  EXPECT_EQ(c.output, "");
  EXPECT_EQ(c.throttle_calls, 50u);
  EXPECT_EQ(c.throttle_ns, 2000000u);
  EXPECT_EQ(c.throttle_text, "50:2ms");
  EXPECT_TRUE(c.throttle_functions && c.throttle_user);
  EXPECT_EQ(c.functions_exclude, (std::vector<std::string>{"a*", "b"}));
  EXPECT_TRUE(c.counters_set);
  EXPECT_EQ(c.problems,
            (std::vector<std::string>{
                "invalid value 'bogus' for SCALEA_CLOCK (valid: tsc or monotonic), default kept",
                "invalid value '' for SCALEA_OUTPUT (valid: a directory to create, not empty (its "
                "parent must exist)), default kept",
                "unknown setting SCALEA_OUPUT ignored"}));
}

// Every row says what it takes: the message about an invalid value and `scalea settings` show it.
TEST(Settings, EveryRowHasItsValidForm) {
  for (const Setting& s : settings()) {
    ASSERT_NE(s.valid, nullptr) << s.key;
    EXPECT_GT(std::string(s.valid).size(), 0u) << s.key;
  }
  const Setting* snapshot = find_setting("SCALEA_SNAPSHOT");
  ASSERT_NE(snapshot, nullptr);
  EXPECT_STREQ(snapshot->key, "SCALEA_SNAPSHOT");
  EXPECT_EQ(find_setting("SCALEA_NO_SUCH"), nullptr);
  EXPECT_EQ(invalid_value_message("SCALEA_MPI_LAYOUT", "many", "auto"),
            "invalid value 'many' for SCALEA_MPI_LAYOUT (valid: ranks, nodes or auto), auto kept");
}

TEST(Settings, SplitListTrimsAndSkipsEmptyItems) {
  EXPECT_EQ(split_list(""), std::vector<std::string>{});
  EXPECT_EQ(split_list(" , ,"), std::vector<std::string>{});
  EXPECT_EQ(split_list("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(split_list(" perf::PAGE-FAULTS , PAPI_L1_DCM"),
            (std::vector<std::string>{"perf::PAGE-FAULTS", "PAPI_L1_DCM"}));
}

TEST(Settings, LauncherRankFromAnyLauncher) {
  for (const char* k : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) unsetenv(k);
  EXPECT_FALSE(launcher_rank().has_value());
  setenv("PMIX_RANK", "3", 1);
  EXPECT_EQ(launcher_rank(), 3);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  EXPECT_EQ(launcher_rank(), 1);
  for (const char* k : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) unsetenv(k);
}

}  // namespace
}  // namespace scalea::collect
