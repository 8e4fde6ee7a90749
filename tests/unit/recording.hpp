// Tests that drive the process-wide recorder: a fresh directory for the test's files, and the
// recorder started when no test of the executable did yet.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "core/recorder.hpp"

namespace scalea::collect {

// `dir` becomes a new directory /tmp/scalea-unit-NAME-XXXXXX.
inline void start_recording(std::string& dir, const std::string& name) {
  std::string tmpl = "/tmp/scalea-unit-" + name + "-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  dir = tmpl;
  setenv("SCALEA_QUIET", "1", 1);
  if (g_state.load() == 0) {
    setenv("SCALEA_OUTPUT", (dir + "/unused").c_str(), 1);
    ASSERT_TRUE(Recorder::get().start("test"));
  }
}

}  // namespace scalea::collect
