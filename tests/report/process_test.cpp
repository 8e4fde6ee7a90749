// Where the command finds its own libraries (report/src/output/process.cpp, own_library_in): ../lib
// beside the binary, else the install's libdir (Debian's lib/x86_64-linux-gnu under /usr). The
// ../lib case is what every integration test runs; consumer.install runs it installed.
#include "output/process.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../temp_dir.hpp"

namespace scalea::cli {
namespace {

namespace fs = std::filesystem;

TEST(OwnLibrary, LibThenTheInstallsLibdir) {
  const test::TempDir tmp("scalea-own-lib");
  const fs::path root = tmp.path();
  fs::create_directories(root / "bin");
  const std::string bin = (root / "bin").string();
  // Nothing there: the ../lib path, which an error names.
  const std::string debian = "lib/x86_64-linux-gnu";
  EXPECT_EQ(own_library_in(bin, debian, "libscalea-omp.so"), bin + "/../lib/libscalea-omp.so");
  // Only in the install's libdir.
  fs::create_directories(root / debian);
  std::ofstream(root / debian / "libscalea-omp.so") << "x";
  EXPECT_EQ(own_library_in(bin, debian, "libscalea-omp.so"),
            bin + "/../" + debian + "/libscalea-omp.so");
  // ../lib first when both hold it.
  fs::create_directories(root / "lib");
  std::ofstream(root / "lib" / "libscalea-omp.so") << "x";
  EXPECT_EQ(own_library_in(bin, debian, "libscalea-omp.so"), bin + "/../lib/libscalea-omp.so");
}

}  // namespace
}  // namespace scalea::cli
