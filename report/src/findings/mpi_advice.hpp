// The hints of MPI transfers read from the calls themselves: small messages cost their latency,
// small collectives side by side can be one call (fused_collectives_advice), and blocking
// point-to-point calls beside computation could overlap with it (overlap_advice). Both read the
// calls' arguments in the source (mpi_calls.hpp); a call that cannot be read gets no such advice.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "scalea/drg/cct.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::cli {

// The hint of an MPI call's transfer (`key` data_movement.mpi_collective or mpi_p2p) at merged
// node `n`, starting from the table's `hint`; when it advises on a group of calls (fuse them,
// overlap them), `group` names them ("file:line,line,...", Finding::call_group) and the hint
// starts with `advice`, the part every call of the group shares.
struct TransferHint {
  std::string hint, group, advice;
  auto tie() { return std::tie(hint, group, advice); }
};
// A group's advice by each of its calls (merged node -> group, advice), kept over the findings of
// one report: the group's other calls take it from here instead of reading the source and the
// threads again.
using CallAdvice = std::map<uint32_t, std::pair<std::string, std::string>>;
TransferHint transfer_hint(const drg::MergedTree& t, const overheads::Analysis& a, uint32_t n,
                           const std::string& key, std::string hint, CallAdvice& said);

}  // namespace scalea::cli
