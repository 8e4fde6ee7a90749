// drg_stream_check DIR...: whether reading each experiment one rank file at a time (RankFiles)
// gives what loading it whole gives (tests/drg/same_by_file.hpp). Exit status 1 when one differs.
#include <cstdio>

#include "same_by_file.hpp"

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::string diff = scalea::drg::test::by_file_difference(argv[i]);
    if (!diff.empty()) {
      std::printf("%s: %s\n", argv[i], diff.c_str());
      status = 1;
    }
  }
  return status;
}
