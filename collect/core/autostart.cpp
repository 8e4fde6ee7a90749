// Part of libscalea-omp.so only (not of the unit-test library): starts the tool when the library
// is loaded with the program (LD_PRELOAD or linked), so the whole run is measured. When the
// OpenMP runtime loads it later, through OMP_TOOL_LIBRARIES, ompt_start_tool starts it.
#include "recorder.hpp"

__attribute__((constructor)) static void scalea_on_load() {
  if (scalea::collect::g_state.load() == 0) scalea::collect::Recorder::get().start("load");
}
