#include "wait_states.hpp"

#include <string>

namespace scalea::cli {

namespace {

using format::MpiClass;

bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

constexpr WaitState kLateSender = {
    "late sender", "MPI waiting for a late sender",
    "the receive waits for a message its sender has not sent yet: the sender's work before the "
    "send is longer; balance it, or post the receive early (MPI_Irecv) and compute meanwhile"};
constexpr WaitState kLateReceiver = {
    "late receiver", "MPI waiting for a late receiver",
    "a blocking send waits until its receiver posts the receive (a large message goes by "
    "rendezvous): the receiver's work before the receive is longer; balance it, post the "
    "receive earlier, or send with MPI_Isend and compute meanwhile"};
constexpr WaitState kLateSenderOrReceiver = {
    "late sender or receiver", "MPI waiting for a late partner",
    "the exchange waits for a partner that arrives late: balance the work before it, or overlap "
    "it with computation (non-blocking calls)"};
constexpr WaitState kWaitNxN = {
    "wait at NxN", "MPI waiting in a collective (ranks arrive at different times)",
    "every rank waits until the last one arrives: the work before the collective differs "
    "between the ranks; balance it, or overlap the collective (non-blocking collective)"};
constexpr WaitState kLateBroadcast = {
    "late broadcast", "MPI waiting for the root of a broadcast",
    "the other ranks wait for the root, which arrives late: the root's work before it is "
    "longer; give the root less work, or overlap (MPI_Ibcast)"};
constexpr WaitState kEarlyReduce = {
    "early reduce", "MPI waiting at the root of a reduction",
    "the root waits for the other ranks to contribute: their work before it is longer; balance "
    "it, or overlap (MPI_Ireduce)"};
constexpr WaitState kWaitAtBarrier = {
    "wait at barrier", "MPI waiting for the last rank at a barrier",
    "the barrier absorbs imbalance between ranks: balance the work before it, or drop the "
    "barrier if it is not needed"};

}  // namespace

WaitState wait_state(const drg::Region& r) {
  if (r.kind != format::RegionKind::Mpi) return {};
  const std::string& n = r.name;
  switch (MpiClass(r.subkind)) {
    case MpiClass::Sync: return kWaitAtBarrier;
    case MpiClass::P2P:
      if (one_of(n, {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"})) return kLateReceiver;
      if (one_of(n, {"MPI_Sendrecv", "MPI_Sendrecv_replace"})) return kLateSenderOrReceiver;
      return kLateSender;  // MPI_Recv, MPI_Probe, MPI_Mprobe, MPI_Mrecv
    case MpiClass::Wait: return kLateSenderOrReceiver;
    case MpiClass::Collective:
      if (one_of(n, {"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv"})) return kLateBroadcast;
      if (one_of(n, {"MPI_Reduce", "MPI_Gather", "MPI_Gatherv"})) return kEarlyReduce;
      return kWaitNxN;
    default: return {};
  }
}

}  // namespace scalea::cli
