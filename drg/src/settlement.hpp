// What the loader settles once every thread is in (settlement.cpp; docs/drg.md, docs/symbols.md):
// the outlined function regions dropped, the runtime's return addresses placed, the copies of one
// construct made one region, the code of outlined bodies named after its function. Used by the
// loader (drg/src) only.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "scalea/drg/experiment.hpp"
#include "scalea/drg/flat_map.hpp"
#include "scalea/format.hpp"

namespace scalea::drg {

// Every thread of an experiment, once: visit(f) calls f on each, in order, as the loader's steps
// so far left it.
using ThreadVisitor = std::function<void(const std::function<void(ThreadTree&)>&)>;

// How the settling observes the threads: `mine` visits this process's share of them, after which
// `combine` turns the notes it took per region (note() below) into those of every thread, and
// `combine_firsts` the values its threads met, each once in the order first met, into those
// every thread met in that order (file order). Alone, `mine` visits every thread and the
// combines are empty.
struct Observers {
  ThreadVisitor mine;
  std::function<void(std::vector<uint32_t>& notes)> combine;
  std::function<void(std::vector<uint64_t>& firsts)> combine_firsts;

  void observe(const std::function<void(ThreadTree&)>& f, std::vector<uint32_t>& notes) const {
    mine(f);
    if (combine) combine(notes);
  }
};

// How the loader rewrote every thread once all were in (settle_regions): the outlined function
// regions dropped, the runtime's return addresses placed, the regions renumbered, the root's
// counters filled. apply() repeats all of it on a thread as parsed, for readers that parse a file
// again after settling (RankFiles).
class Settlement {
 public:
  std::vector<format::MetricMerge> merge;  // per column
  size_t metric_count = 0;
  std::vector<size_t> counter_columns;  // columns of hardware counters
  std::vector<char> outlined;           // by region as parsed: dropped, empty when none
  std::vector<char> in_runtime;         // by region before placing: a return into the runtime
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> placed;  // (region, enclosing) -> region
  std::vector<uint32_t> remap;  // old region -> new, empty when not renumbered

  // `scratch`: fold_duplicate_paths's, kept by the caller across threads.
  void fold_outlined(ThreadTree& t, FlatMap64& scratch) const;
  void place(ThreadTree& t) const;
  void renumber(ThreadTree& t, FlatMap64& scratch) const;
  void root_counters(ThreadTree& t) const;
  // Moves the nodes of sampled regions out of the tree into t.samples (the measured nodes keep
  // their order). `sampled`: by region after settling, empty when the experiment has none.
  std::vector<char> sampled;
  int visits_column = -1, time_column = -1;  // a sampled node's count and CPU time (ns)
  void split_samples(ThreadTree& t) const;
  void apply(ThreadTree& t, FlatMap64& scratch) const;
};

// One value seen over many nodes: kUnset, the value, or kConflict when two differed.
constexpr uint32_t kUnset = format::kNoIndex, kConflict = format::kNoIndex - 1;
void note(uint32_t& slot, uint32_t value);

// What the loader settles once every thread is in (docs/drg.md, docs/symbols.md). Each step
// decides from every thread as the steps before it left them (`observe` passes over them), and
// rewrites them (`rewrite`); `s` keeps what each rewrite was, so that a reader that parses the
// files again (RankFiles) can rewrite the threads when it reads them instead. Placing the
// runtime's return addresses depends on the order the threads meet each construct: it observes
// the process's block of the threads.
void settle_regions(Experiment& e, const LoadOptions& options, Settlement& s,
                    const Observers& observe, const ThreadVisitor& rewrite);

}  // namespace scalea::drg
