// Writes one run's experiment directory: meta.json and one binary sub-DRG file per process.
// The directory appears atomically (written under a temporary name, then renamed), never
// overwrites an existing one, and never follows a symlink planted in its path.
#pragma once
#include <cstdint>
#include <string>

namespace scalea::collect {

class Recorder;

struct WriteSummary {
  uint32_t threads = 0;
  size_t regions = 0;
  uint64_t nodes = 0;
};

// True when the directory that will hold `dir` exists and is writable.
bool output_parent_writable(const std::string& dir, std::string& why);

bool write_experiment(Recorder& rec, const std::string& dir, const char* trigger,
                      std::string& written_dir, WriteSummary& summary, std::string& error);

}  // namespace scalea::collect
