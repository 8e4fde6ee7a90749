// libFuzzer target over the experiment loader: parse_rank_file, parse_meta and whole experiments
// served from memory (layout in fuzz_harness.hpp). Built with -DSCALEA_FUZZ=ON; see docs/drg.md.
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scalea::drg::fuzz::run_one(data, size);
  return 0;
}
