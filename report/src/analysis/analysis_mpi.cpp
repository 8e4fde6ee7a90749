// The communication of `mpirun -np N scalea report` (docs/drg.md, "The analysis as an MPI
// program"): MPI started and finished, and the two collectives the shared analysis is made of
// (overheads/share.hpp). Built as a module of its own (libscalea-analysis-mpi.so) that the scalea
// command loads only under a launcher with more than one process: libmpi and what it loads would
// cost every start of the command, `scalea run`'s included.
//
// A process that dies ends the job: Open MPI's mpirun kills the others (docs/drg.md says what
// was measured). Failures a process survives reach every process through the steps themselves.
#include <mpi.h>

#include <climits>
#include <ctime>
#include <stdexcept>
#include <string>

#include "scalea/overheads/share.hpp"

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// Waits for requests to complete, sleeping between tests: a process that waits for the others
// (rank 0 for the slowest block, the others for rank 0's combining) then leaves its core to the
// processes that work, where Open MPI's blocking calls poll at full speed (docs/performance.md,
// "The analysis as an MPI program", measures both).
void wait_all(std::vector<MPI_Request>& requests, const char* what) {
  constexpr timespec kPause{0, 200 * 1000};  // 0.2 ms: short against a step's milliseconds
  for (int done = 0;;) {
    check(MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), what);
    if (done) return;
    nanosleep(&kPause, nullptr);
  }
}

int count_of(size_t bytes) {
  if (bytes > size_t(INT_MAX))
    throw std::runtime_error("MPI: a message of " + std::to_string(bytes) +
                             " bytes is beyond what one collective moves (2 GiB)");
  return int(bytes);
}

// The tag of a gather's messages: on the share's own communicator, nothing else is sent.
constexpr int kGatherTag = 1;

class MpiShare final : public scalea::overheads::Share {
 public:
  MpiShare() {
    int started = 0;
    check(MPI_Initialized(&started), "MPI_Initialized");
    int provided = 0;
    // Only the main thread talks; the classifier's workers never do.
    if (!started)
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  ~MpiShare() override {
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // The sizes by a gather, then each process's bytes straight into rank 0's part for it.
  std::vector<std::vector<char>> gather(const std::vector<char>& mine) override {
    int count = count_of(mine.size());
    std::vector<int> counts(rank_ == 0 ? size_ : 0);
    std::vector<MPI_Request> requests(1);
    check(MPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_, &requests[0]),
          "MPI_Igather");
    wait_all(requests, "MPI_Igather");
    if (rank_ != 0) {
      check(MPI_Isend(mine.data(), count, MPI_BYTE, 0, kGatherTag, comm_, &requests[0]),
            "MPI_Isend");
      wait_all(requests, "MPI_Isend");
      return {};
    }
    std::vector<std::vector<char>> out(static_cast<size_t>(size_));
    out[0] = mine;
    requests.assign(size_t(size_) - 1, MPI_REQUEST_NULL);
    for (int r = 1; r < size_; ++r) {
      out[size_t(r)].resize(size_t(counts[size_t(r)]));
      check(MPI_Irecv(out[size_t(r)].data(), counts[size_t(r)], MPI_BYTE, r, kGatherTag, comm_,
                      &requests[size_t(r) - 1]),
            "MPI_Irecv");
    }
    wait_all(requests, "MPI_Irecv");
    return out;
  }

  std::vector<char> broadcast(const std::vector<char>& bytes) override {
    int count = rank_ == 0 ? count_of(bytes.size()) : 0;
    std::vector<MPI_Request> requests(1);
    check(MPI_Ibcast(&count, 1, MPI_INT, 0, comm_, &requests[0]), "MPI_Ibcast");
    wait_all(requests, "MPI_Ibcast");
    std::vector<char> out = rank_ == 0 ? bytes : std::vector<char>(size_t(count));
    check(MPI_Ibcast(out.data(), count, MPI_BYTE, 0, comm_, &requests[0]), "MPI_Ibcast");
    wait_all(requests, "MPI_Ibcast");
    return out;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

// The module's one entry point: MPI started, this process's place in the job.
extern "C" scalea::overheads::Share* scalea_analysis_share() { return new MpiShare(); }
