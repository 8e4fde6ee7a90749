// `mpirun -np N scalea report DIR` (docs/drg.md, "The analysis as an MPI program"): the processes
// of the job classify the run together and rank 0 prints what the serial command prints.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "scalea/overheads/share.hpp"

namespace scalea::cli {

// The processes of the MPI job this command runs in, when a launcher started more than one (MPI
// started by libscalea-analysis-mpi.so, loaded now); null otherwise, and nothing is loaded.
std::unique_ptr<overheads::Share> analysis_share();

// Ends the command with this exit status; main() prints the message, where there is one (the
// others were printed already, or are left to rank 0).
struct ExitStatus {
  int status;
  std::string message;
};

// Commands that do not run as an MPI program yet: under a launcher with more than one process,
// rank 0 says so in one line (UserError naming `what`) and the other processes exit quietly with
// the same status, rather than every process printing the same output.
void refuse_under_launcher(const std::string& what);

// An error as the command prints it ("scalea report: ...") and its exit status.
std::pair<int, std::string> describe_error(std::exception_ptr error, const std::string& command);

// Runs `body` on every process of `share` (or alone, when it is null). A failure on any process
// reaches every process: every process throws ExitStatus with its status, rank 0's with the
// message for main() to print.
void run_shared(overheads::Share* share, const std::string& command,
                const std::function<void()>& body);

}  // namespace scalea::cli
