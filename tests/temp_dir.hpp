// A test's own temporary directory: $TMPDIR/PREFIX-XXXXXX (/tmp without TMPDIR), made by mkdtemp
// so that tests running side by side never share one, and removed with all it holds when the
// object goes (a CI machine runs the suite daily; what each run left would fill /tmp).
//
// The process-wide recorder writes its experiment at exit (finish_at_exit, registered with
// std::atexit when it starts: collect/core/recorder.cpp). A test that points SCALEA_OUTPUT into
// such a directory makes it a static before it starts the recorder: a static's destructor runs
// after every exit handler registered once it was made ([basic.start.term]), so the directory
// goes after the recorder's last write.
#pragma once
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace scalea::test {

class TempDir {
 public:
  // Throws std::runtime_error naming the directory when it cannot be made (GoogleTest reports it
  // as the test's failure).
  explicit TempDir(const std::string& prefix) {
    const char* tmp = getenv("TMPDIR");
    std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    if (!mkdtemp(name.data()))
      throw std::runtime_error("cannot make a directory " + name + ": " + std::strerror(errno));
    path_ = name;
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)), keep_(other.keep_) {
    other.path_.clear();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty() && !keep_) std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }
  // Leaves the directory in place, for a failed test whose message names a file in it.
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace scalea::test
