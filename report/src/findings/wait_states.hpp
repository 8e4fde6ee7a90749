// The wait-state patterns of Scalasca, by MPI call: what an MPI call that waited was waiting for,
// and what to try. Named per call site in the findings, the JSON and `report --view mpi`
// (docs/mpi.md, "Wait states").
#pragma once
#include <string_view>

#include "scalea/drg/experiment.hpp"

namespace scalea::cli {

struct WaitState {
  std::string_view name;  // "late sender", "late receiver", "wait at NxN", ... ("" none)
  std::string_view what;  // the finding's words: what the waiting is
  std::string_view hint;  // what to try
};

// The pattern of an MPI call region's waiting: a blocking send waits for a late receiver, a
// receive (or MPI_Wait, MPI_Probe) for a late sender, an all-to-all collective at N x N, a
// broadcast or scatter for its root (late broadcast), a reduce or gather's root for the others
// (early reduce), a barrier at the barrier. Empty name for a region that is not such a call.
WaitState wait_state(const drg::Region& r);

}  // namespace scalea::cli
