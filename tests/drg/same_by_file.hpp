// Whether RankFiles gives what load_experiment gives: the same settled definitions, and file by
// file the same threads, value for value. Used by the loader tests and by drg_stream_check.
#pragma once
#include <string>
#include <vector>

#include "scalea/drg/experiment.hpp"

namespace scalea::drg::test {

inline bool same_region(const Region& a, const Region& b) {
  return a.kind == b.kind && a.subkind == b.subkind && a.name == b.name && a.file == b.file &&
         a.function == b.function && a.line == b.line && a.module == b.module && a.address == b.address &&
         a.code == b.code && a.symbol == b.symbol && a.symbol_offset == b.symbol_offset &&
         a.body == b.body && a.outlined == b.outlined;
}

inline bool same_thread(const ThreadTree& a, const ThreadTree& b) {
  return a.rank == b.rank && a.thread == b.thread && a.flags == b.flags && a.os_tid == b.os_tid &&
         a.parent == b.parent && a.region == b.region && a.values == b.values;  // bit for bit
}

// "" when both readers agree on `dir` (by file: with the files read ahead on `threads` - 1
// threads, LoadOptions::threads), else the first difference.
inline std::string by_file_difference(const std::string& dir, const LoadOptions& options,
                                      unsigned threads) {
  Experiment whole = load_experiment(dir, options);
  LoadOptions by_file = options;
  by_file.threads = threads;
  RankFiles files(dir, by_file);
  const Experiment& defs = files.definitions();
  if (defs.metrics != whole.metrics) return "metrics differ";
  if (defs.regions.size() != whole.regions.size())
    return std::to_string(defs.regions.size()) + " regions, not " + std::to_string(whole.regions.size());
  for (size_t i = 0; i < defs.regions.size(); ++i)
    if (!same_region(defs.regions[i], whole.regions[i])) return "region " + std::to_string(i) + " differs";
  if (defs.threads.size() != whole.threads.size()) return "thread count differs";
  for (size_t i = 0; i < defs.threads.size(); ++i)
    if (defs.threads[i].rank != whole.threads[i].rank || defs.threads[i].thread != whole.threads[i].thread ||
        defs.threads[i].flags != whole.threads[i].flags || !defs.threads[i].parent.empty())
      return "thread " + std::to_string(i) + "'s identity differs";
  size_t next = 0;
  for (size_t f = 0; f < files.files(); ++f)
    for (const ThreadTree& t : files.threads(f)) {
      if (next >= whole.threads.size()) return "more threads by file";
      if (!same_thread(t, whole.threads[next])) return "thread " + std::to_string(next) + " differs";
      ++next;
    }
  return next == whole.threads.size() ? "" : "fewer threads by file";
}

// The same, read without threads ahead, then ahead on 3 threads whatever the cores.
inline std::string by_file_difference(const std::string& dir, const LoadOptions& options = {}) {
  for (unsigned threads : {1u, 4u})
    if (std::string d = by_file_difference(dir, options, threads); !d.empty())
      return d + " (" + std::to_string(threads - 1) + " threads reading ahead)";
  return "";
}

}  // namespace scalea::drg::test
