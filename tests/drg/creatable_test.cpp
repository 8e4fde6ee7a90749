// scalea/creatable.hpp: whether the experiment's directory can be made where it is asked for,
// answered from the file system's facts where they suffice and by a probe where they do not.
#include <gtest/gtest.h>
#include <sys/vfs.h>

#include <fstream>
#include <string>

#include "scalea/creatable.hpp"
#include "../temp_dir.hpp"

namespace {

class Creatable : public ::testing::Test {
 protected:
  scalea::test::TempDir tmp_{"scalea-creatable"};
  const std::string dir_ = tmp_.path();
};

TEST_F(Creatable, AWritableDirectoryTakesOneAndTheProbeLeavesNothing) {
  EXPECT_EQ(scalea::why_no_directory_in(dir_, "probe"), "");
  struct stat st;
  EXPECT_NE(stat((dir_ + "/probe").c_str(), &st), 0) << "the probe directory was left behind";
}

TEST_F(Creatable, OrdinaryFileSystemsAreAnsweredWithoutAProbe) {
  struct statfs fs;
  ASSERT_EQ(statfs(dir_.c_str(), &fs), 0);
  if (!scalea::creatable_detail::ordinary_file_system(static_cast<unsigned long>(fs.f_type)))
    GTEST_SKIP() << "the temporary directory's file system (0x" << std::hex << fs.f_type
                 << ") is not one of the ordinary ones";
  EXPECT_TRUE(scalea::creatable_detail::surely_creatable(dir_));
}

TEST_F(Creatable, PseudoFileSystemsAreProbed) {
  // /proc says yes to access() for root, but takes no directory: the probe tells.
  EXPECT_FALSE(scalea::creatable_detail::surely_creatable("/proc"));
  std::string why = scalea::why_no_directory_in("/proc", "probe");
  EXPECT_NE(why.find("cannot make a directory in /proc: "), std::string::npos) << why;
}

TEST_F(Creatable, AFileOrAMissingDirectoryIsNamed) {
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_EQ(scalea::why_no_directory_in(dir_ + "/file", "probe"),
            dir_ + "/file is not a directory");
  std::string why = scalea::why_no_directory_in(dir_ + "/missing", "probe");
  EXPECT_EQ(why, dir_ + "/missing: No such file or directory");
}

}  // namespace
