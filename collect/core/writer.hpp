// Encodes a run's data in the experiment format (drg/include/scalea/format.hpp,
// docs/experiment-format.md) and publishes the experiment directory.
//
// A process without MPI writes one file holding both its definitions (strings, modules, region
// table, metric columns) and its threads. With MPI, the ranks unify their region tables first;
// the root then writes one definitions file and one threads-only file per rank.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "recorder.hpp"

namespace scalea::collect {

// A region with its code address made position-independent: (module path, offset).
struct PortableRegion {
  uint16_t kind = 0, subkind = 0;
  std::string name, file, function;
  uint32_t line = 0;
  std::string module;    // "" when the region has no code address
  uint64_t address = 0;  // offset within the module
};

struct WriteSummary {
  uint32_t threads = 0;
  size_t regions = 0;
  uint64_t nodes = 0;
};

// True when the directory that will hold `dir` exists and is writable.
bool output_parent_writable(const std::string& dir, std::string& why);

// This process's region table, addresses made portable (reads /proc and the loaded objects).
std::vector<PortableRegion> portable_regions(Recorder& rec);

// A file with the definition sections only (STRG, MODL, REGN, METR).
std::vector<char> encode_definitions(const std::vector<PortableRegion>& regions, int rank);

// A file with this process's threads only; node regions go through `remap` (local -> unified id).
std::vector<char> encode_threads(Recorder& rec, const std::vector<uint32_t>& remap, int rank,
                                 WriteSummary& summary);

// Both in one file: what a process without MPI writes.
std::vector<char> encode_process(Recorder& rec, int rank, WriteSummary& summary);

struct MetaExtras {
  int ranks = 1;
  // Other ranks' throttled call paths, as throttled_entries() gives them, and how many they had.
  std::string other_throttled;
  size_t other_throttled_count = 0;
  bool complete = true;
  std::string definitions_file;           // "" when each file carries its own definitions
  std::vector<std::string> notes;         // e.g. why the experiment is incomplete
  std::vector<std::pair<std::string, std::string>> raw_fields;  // name -> JSON value
  // MPI: every rank's affinity_of_rank() objects, comma separated: meta.json "affinity.ranks".
  std::string affinity_ranks;
};
std::string encode_meta(Recorder& rec, const char* trigger, const std::vector<std::string>& files,
                        const MetaExtras& extras);

// meta.json "throttle" entries of this process's throttled call paths ("{...}, {...}"), at most
// `limit` of them; `count` is set to how many there are in all.
std::string throttled_entries(Recorder& rec, size_t limit, size_t& count);
constexpr size_t kThrottledListed = 1000;  // entries listed in meta.json, over all ranks

// Creates the experiment directory atomically: files are written and synced under a temporary
// name, then renamed to `dir`, or to dir.1, dir.2, ... when that exists (never overwritten).
bool publish_experiment(const std::string& dir,
                        const std::vector<std::pair<std::string, std::vector<char>>>& files,
                        std::string& written_dir, std::string& error);

// The whole path for a process without MPI: encode and publish.
bool write_experiment(Recorder& rec, const std::string& dir, const char* trigger,
                      std::string& written_dir, WriteSummary& summary, std::string& error);

// This process's meta.json "affinity" members: "cpus_online": N, "process_cpus": "0-1",
// "threads": [{"index", "os_tid", "cpus", "count"}, ...] (without the braces).
std::string affinity_members(Recorder& rec);
// The same as one rank's object of "affinity.ranks": {"rank": r, "host": "...", <members>}.
std::string affinity_of_rank(Recorder& rec, int rank);

std::string json_escape(const std::string& s);
std::string rank_file_name(int rank);

}  // namespace scalea::collect
