// Writes an Experiment back in the on-disk format (format.hpp): for tests, the fuzz corpus, the
// synthetic benchmark and tools that filter experiments. The collector has its own writer
// (collect/core/writer.cpp): it must not depend on drg/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalea/drg/experiment.hpp"

namespace scalea::drg {

struct EncodeOptions {
  bool definitions = true;              // STRG, MODL, REGN, METR sections
  bool threads = true;                  // the THRD section: the threads whose rank is `rank`
  uint32_t version = format::kVersion;  // 1: the fixed-size records of older experiments
};

// One data file for `rank` (-1 without MPI). Metric types and merge rules come from
// e.metric_type / e.metric_merge, or from the core metric table for missing entries.
std::vector<char> encode_rank_file(const Experiment& e, int32_t rank, const EncodeOptions& o = {});

// Seals a file: sets payload_size and the CRC of the payload from the bytes that follow the
// header (for tools that patch files, e.g. the fuzzer).
void seal_rank_file(std::vector<char>& bytes);

// meta.json for an experiment whose data files are `files` (and a definitions file, if named).
std::string encode_meta(const Experiment& e, const std::vector<std::string>& files,
                        const std::string& definitions = "");

// Writes the whole experiment into `dir` (created): one file per rank, plus a shared definitions
// file when `shared_definitions` (the MPI layout); with `ranks_per_node` > 0 (and shared
// definitions), containers of that many ranks each instead of rank files (the few-files layout).
// Throws std::runtime_error on I/O failure.
void write_experiment(const Experiment& e, const std::string& dir, bool shared_definitions = false,
                      int ranks_per_node = 0);

}  // namespace scalea::drg
