// An experiment as the commands read it: one rank file at a time (drg::RankFiles), merged into
// one tree (drg::MergedTree), so that no command holds every PE's arrays (docs/drg.md,
// "Streaming"). What needs each thread's values reads the files again (thread_values.hpp).
#pragma once
#include <memory>
#include <string>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"

namespace scalea::cli {

class Source {
 public:
  Source() = default;  // no experiment: empty()
  explicit Source(const std::string& dir, const drg::LoadOptions& options = {})
      : files_(std::make_unique<drg::RankFiles>(dir, options)),
        tree_(std::make_unique<drg::MergedTree>(*files_)) {}

  bool empty() const { return !tree_; }
  const drg::MergedTree& tree() const { return *tree_; }
  // The definitions: meta, regions, metrics and every thread's identity, without the nodes.
  const drg::Experiment& experiment() const { return tree_->experiment(); }

 private:
  std::unique_ptr<drg::RankFiles> files_;  // the tree reads it: both stay where they are
  std::unique_ptr<drg::MergedTree> tree_;
};

}  // namespace scalea::cli
