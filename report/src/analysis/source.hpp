// An experiment as the commands read it: one rank file at a time (drg::RankFiles), merged into
// one tree (drg::MergedTree), so that no command holds every PE's arrays (docs/drg.md,
// "Streaming"). What needs each thread's values reads the files again (thread_values.hpp).
#pragma once
#include <memory>
#include <string>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/overheads/share.hpp"

namespace scalea::cli {

class Source {
 public:
  Source() = default;  // no experiment: empty()
  // Under mpirun (`share`), the processes open the experiment together: each its block of
  // files (docs/drg.md, "The analysis as an MPI program"). Every process must then make the
  // same Sources in the same order.
  // Processes that share the analysis read their files on one thread each (no reading ahead,
  // unless `options` asks for it): the processes are the parallelism, as in the classifier.
  explicit Source(const std::string& dir, overheads::Share* share = nullptr,
                  const drg::LoadOptions& options = {})
      : team_(share ? std::make_unique<drg::Team>(overheads::team_of(*share)) : nullptr),
        files_(std::make_unique<drg::RankFiles>(dir, with_team(options, team_.get()), team_.get())),
        tree_(std::make_unique<drg::MergedTree>(*files_)) {}

  bool empty() const { return !tree_; }
  const drg::MergedTree& tree() const { return *tree_; }
  // The definitions: meta, regions, metrics and every thread's identity, without the nodes.
  const drg::Experiment& experiment() const { return tree_->experiment(); }

 private:
  static drg::LoadOptions with_team(drg::LoadOptions options, const drg::Team* team) {
    if (team && team->size > 1 && options.threads == 0) options.threads = 1;
    return options;
  }

  // Each stays where it is: the files keep the team, the tree keeps the files.
  std::unique_ptr<drg::Team> team_;
  std::unique_ptr<drg::RankFiles> files_;
  std::unique_ptr<drg::MergedTree> tree_;
};

}  // namespace scalea::cli
