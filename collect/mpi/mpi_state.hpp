// State of the MPI layer shared by mpi_layer.cpp (Init/Finalize/Abort, calibration) and
// unify.cpp (the tree-shaped unification and the writing of the experiment at MPI_Finalize).
#pragma once
#include <mpi.h>

#include <string>

#include "../core/recorder.hpp"

namespace scalea::mpi {

struct LayerState {
  bool ready = false;             // MPI_Init went through the wrapper and the layer is set up
  MPI_Comm comm = MPI_COMM_NULL;  // duplicate of MPI_COMM_WORLD: the tool's own traffic
  int rank = 0, size = 1;
  int thread_level = -1;     // provided level (MPI_Init: MPI_THREAD_SINGLE)
  bool in_finalize = false;  // finish() was triggered by MPI_Finalize
  bool aborting = false;     // ... by MPI_Abort
  int abort_code = 0;
  std::string dir;         // the experiment directory (rank 0's choice, broadcast)
  double timeout_s = 120;  // SCALEA_MPI_TIMEOUT
  // SCALEA_MPI_LAYOUT: one rank file per rank, one container per node, or containers when a
  // node holds more than one rank (docs/experiment-format.md, "Containers").
  enum class Layout { Ranks, Nodes, Auto } layout = Layout::Auto;
  int node_first = 0;  // the lowest rank of this rank's node (MPI_COMM_TYPE_SHARED)
  double lat_ns = 1000, ns_per_byte = 0.2;  // the transfer model, in ns
  std::string model_source = "default";
  double setup_s = 0;  // the tool's own time in MPI_Init (dup, broadcast, calibration)
};
// Never destroyed: a program that leaves without MPI_Finalize is written from an atexit handler,
// which may run after the library's static destructors.
extern LayerState& g_layer;

// Recorder::finish hook: unifies over MPI and writes the experiment (unify.cpp).
bool finish_hook(collect::Recorder& rec, const char* why);

double wall_s();

}  // namespace scalea::mpi
