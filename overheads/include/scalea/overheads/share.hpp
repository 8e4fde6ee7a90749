// The classification as the work of several processes (an MPI job, docs/drg.md "The analysis as
// an MPI program"): each process folds a contiguous block of the run's rank files into partial
// accumulators, one per file; rank 0 combines them in file order, as the serial analysis combines
// its own per-file partials, and gives every process the result the next pass needs. The numbers
// are therefore those of the serial analysis, bit for bit, whatever the number of processes.
//
// The communication itself is a module's (libscalea-analysis-mpi.so, which links MPI): it
// implements the two collectives below. What travels, and the agreement on failures, is here.
#pragma once
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scalea::drg {
struct Team;  // scalea/drg/team.hpp
}

namespace scalea::overheads {

class Share {
 public:
  virtual ~Share() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every process's bytes, on rank 0 in rank order (empty on the others).
  virtual std::vector<std::vector<char>> gather(const std::vector<char>& mine) = 0;
  // Rank 0's bytes, on every process (`bytes` is read on rank 0 only).
  virtual std::vector<char> broadcast(const std::vector<char>& bytes) = 0;
};

// Thrown on every process when one of them failed: the failing process's exit status and its
// one-line message (rank 0 prints it; the others print nothing).
struct SharedFailure : std::runtime_error {
  SharedFailure(int status, const std::string& message)
      : std::runtime_error(message), status(status) {}
  int status;
};

// One step of the shared analysis, the only way the processes talk: every process gives its part
// (or its failure), rank 0 makes the result from all parts (`combine`, called with them in rank
// order), and every process gets it. When a process failed, every process throws SharedFailure
// with the failure of the lowest rank instead. `mine` is this process's part (moved in, where
// it is large, to save a copy).
using Combine = std::function<std::vector<char>(std::vector<std::vector<char>>& parts)>;
std::vector<char> step(Share& share, std::vector<char> mine, const Combine& combine);

// This process failed (`status`, `message`): it takes part in the step the others are at, so every
// process learns it, and throws SharedFailure.
[[noreturn]] void fail(Share& share, int status, const std::string& message);

// The last step: every process got here without failing (else SharedFailure).
void finish(Share& share);

// The processes of `share` as drg opens an experiment with them: its steps are step() above.
// `share` must outlive the team.
drg::Team team_of(Share& share);

}  // namespace scalea::overheads
