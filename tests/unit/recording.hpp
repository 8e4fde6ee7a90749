// Tests that drive the process-wide recorder: the recorder started when no test of the executable
// did yet; each test keeps its own files in a TempDir of its own (../temp_dir.hpp).
#pragma once
#include <stdlib.h>

#include <exception>
#include <string>

#include "../temp_dir.hpp"
#include "core/recorder.hpp"

namespace scalea::collect {

// Starts the recorder unless a test of this executable did already. It writes its experiment at
// exit, into a directory that goes after that write (a static made before the recorder starts:
// ../temp_dir.hpp). Returns what went wrong, "" when nothing did: the fixtures that start it in
// SetUpTestSuite cannot assert there (GoogleTest would skip their tests, not fail them).
inline std::string start_recording() {
  setenv("SCALEA_QUIET", "1", 1);
  if (g_state.load() != 0) return "";
  try {
    static const test::TempDir at_exit("scalea-unit");
    setenv("SCALEA_OUTPUT", (at_exit.path() + "/exp").c_str(), 1);
  } catch (const std::exception& e) {
    return e.what();
  }
  return Recorder::get().start("test") ? "" : "the recorder did not start";
}

}  // namespace scalea::collect
