// What an MPI call costs when nobody is late, from the run itself: the message model the
// collector calibrated at MPI_Init is checked against the run's own calls, and the shortest call
// of each call site on each rank bounds the part of its time that was waiting
// (docs/overhead-model.md, "MPI: waiting is time beyond the call's own cost").
#pragma once
#include <string>

#include "scalea/drg/cct.hpp"

namespace scalea::overheads {

// The calibrated message model (meta.json mpi.model), and whether the run contradicts it.
struct ModelCheck {
  bool present = false;  // the run recorded a model
  bool usable = true;    // false: the run's calls contradict it (then `doubt` says how)
  double latency_ns = 0, ns_per_byte = 0;
  std::string doubt;
};

// A model is contradicted when its latency exceeds, by twice and 10 us, the shortest call of a
// blocking point-to-point or collective call site (every such call pays at least one latency), or
// when its time per byte makes a call site's bytes cost more than twice the site's whole time.
inline constexpr double kModelLatencySlack = 2.0, kModelLatencyMarginNs = 10e3;
// A PE's calls of a collective vary by less than this per call (and twice the site's shortest
// call) on average: the variation of the calls themselves (polling, the OS, the network), which
// the statistics cannot tell from ranks late in turn; beyond it, some rank was late at each call.
inline constexpr double kLatenessPerCallNs = 10e3;
// The model the collector keeps when it cannot calibrate (collect/mpi/mpi_state.hpp), used in
// place of one the run contradicts.
inline constexpr double kDefaultLatencyNs = 1000, kDefaultNsPerByte = 0.2;
ModelCheck check_message_model(const drg::MergedTree& t);

// Blocking point-to-point calls, collectives and barriers: calls that wait for a partner and
// whose time the collector splits by the model (not the nonblocking posts MPI_Isend, MPI_Ibcast,
// MPI_Start..., which never wait, nor the Wait/Test family).
bool waits_for_partner(const drg::Region& r);
// A collective whose data flow from one root to every rank (MPI_Bcast, MPI_Scatter(v)): the
// others wait in it for the root's data, so for the root's code before it when only the root ran
// that code. In the others (MPI_Allreduce, MPI_Reduce, MPI_Gather, ...) every rank contributes:
// a rank that arrives late was doing its share, and the waits for it are synchronization.
bool distributes_from_root(const drg::Region& r);

}  // namespace scalea::overheads
