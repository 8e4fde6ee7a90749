// Which rank files an experiment holds (layout.cpp): the files meta.json lists and its
// definitions, one file per rank or containers of ranks (never both in one experiment), and each
// rank in one file only. Used by the loader (drg/src) only.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "file_access.hpp"
#include "scalea/drg/experiment.hpp"

namespace scalea::drg {

// The rank files meta.json lists: the files themselves, or the ranks of its containers.
std::vector<Piece> data_pieces(const FileAccess& access, const std::string& dir,
                               const std::string& meta_path, const nlohmann::json& meta,
                               const std::vector<std::string>& names);

// An experiment directory's files as meta.json lists them, its definitions parsed into `e`.
struct Listing {
  std::vector<std::string>
      names;               // the data files (rank files or containers), in meta.json's order
  FileDefinitions shared;  // the unified definitions of an MPI experiment
  int64_t declared_ranks = -1;
};

Listing list_files(const std::string& dir, Experiment& e, const LoadOptions& options,
                   const std::function<const std::vector<char>&(const std::string&)>& read);

// Each rank in one file only, and within the ranks meta.json declares.
class RankCheck {
 public:
  explicit RankCheck(int64_t declared) : declared_(declared) {}
  // The threads from `before` on came from `path`.
  void operator()(const std::string& path, const std::vector<ThreadTree>& threads, size_t before) {
    if (threads.size() == before) return;
    int32_t rank = threads[before].rank;
    if (declared_ > 0 && rank >= declared_)
      throw LoadError(path + ": rank " + std::to_string(rank) + " but meta.json says " +
                      std::to_string(declared_) + " rank(s)");
    if (!seen_.insert(rank).second)
      throw LoadError(path + ": rank " + std::to_string(rank) + " appears in two files");
  }

 private:
  int64_t declared_;
  std::unordered_set<int32_t> seen_;
};

}  // namespace scalea::drg
