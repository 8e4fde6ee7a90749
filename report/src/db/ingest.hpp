// Storing experiments and studies in the database: the analysis the reports compute (analyze(),
// the region fields of the JSON report), one transaction per experiment.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "database.hpp"

namespace scalea::cli::db {

using Tags = std::vector<std::pair<std::string, std::string>>;
// "k=v" -> {k, v}; throws UserError for a missing '=' or a key that is not [A-Za-z0-9_.-]+.
std::pair<std::string, std::string> parse_tag(const std::string& text);

struct AddOptions {
  Tags tags;            // --tag k=v: labels of every experiment added
  bool per_pe = false;  // --per-pe: one pe_times row per region and PE
  std::string machine;  // --machine FILE (default: the default machine file when present)
  bool force = false;   // --force: use a reference whose program, arguments or p differ
  std::vector<std::string> decomposition;  // AnalysisOptions::decomposition
};

struct Added {
  int64_t id = 0;
  std::string path;
  // "stored", "replaced" (stored before against another reference, or without per-PE rows),
  // or "unchanged" (stored before as it is: only the tags were added).
  std::string what;
  size_t regions = 0;
};

// Stores the experiment in `dir`, classified against `reference` ("" for none: T_s estimated);
// the reference is stored first (classified against itself) unless it is there already. Each
// experiment is one transaction: it is stored whole or not at all.
std::vector<Added> add_experiment(Database& db, const std::string& dir,
                                  const std::string& reference, const AddOptions& options);
// Stores every completed run of the study in `dir`, each classified against the study's
// reference (the 1 x 1 repetition of median program time, as `scalea report STUDY` chooses it)
// with p = threads x ranks, and the study with its runs.
std::vector<Added> add_study(Database& db, const std::string& dir, const AddOptions& options);

// The stable 128-bit hash the database keys by, as 32 hex digits.
std::string hash_hex(const std::string& bytes);

}  // namespace scalea::cli::db
