// The MPI call at a region's source line, read from the source (a quick parser, as the directive
// of directive.hpp): the function called and its arguments as written. C and C++ calls, and
// Fortran's `call mpi_x(...)` with `&` continuations. Nothing is guessed: a file that cannot be
// read, no call of that name near the line, or arguments that cannot be followed to their closing
// parenthesis give found = false.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace scalea::cli {

// Lines a call's arguments may span (mpi_call_in reads no further below the call's first line).
inline constexpr uint32_t kCallLines = 16;

struct MpiCall {
  bool found = false;
  uint32_t line = 0;              // where the call's name is (1-based)
  std::vector<std::string> args;  // each argument as written, blanks and comments removed
};

// The call of `function` ("MPI_Allreduce"; matched without regard to case, for Fortran) that
// starts on `line` or on one of the kDirectiveLinesAbove lines above it (debug information may
// place a call that spans lines at one of its later lines).
MpiCall mpi_call_in(const std::vector<std::string>& lines, uint32_t line,
                    const std::string& function);
MpiCall mpi_call_at(const std::string& file, uint32_t line, const std::string& function);

// The arguments two calls of a collective must agree on to become one call of their data packed
// together (datatype, operation, root, communicator), as indexes into MpiCall::args, and what each
// one is; empty for a function this rule does not know.
struct CallKey {
  size_t arg;
  const char* what;  // "datatype", "operation", "root", "communicator"
};
std::vector<CallKey> fusion_key(const std::string& function);

// The arguments of a blocking point-to-point call that say what it moves and with whom, as indexes
// into MpiCall::args (-1: the call has none): the buffer sent and its destination, the buffer
// received and its source. MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Bsend, MPI_Recv, MPI_Sendrecv and
// MPI_Sendrecv_replace (the same positions in C and Fortran); all -1 for any other function.
struct P2pRoles {
  int send_buf = -1, dest = -1, recv_buf = -1, source = -1;
  bool blocking() const { return send_buf >= 0 || recv_buf >= 0; }
  // How many arguments a call must have for every role to be read.
  size_t args_needed() const;
};
P2pRoles p2p_roles(const std::string& function);

}  // namespace scalea::cli
