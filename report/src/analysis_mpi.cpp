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
#include <numeric>
#include <stdexcept>
#include <string>

#include "scalea/overheads/share.hpp"

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

int count_of(size_t bytes) {
  if (bytes > size_t(INT_MAX))
    throw std::runtime_error("MPI: a message of " + std::to_string(bytes) +
                             " bytes is beyond what one collective moves (2 GiB)");
  return int(bytes);
}

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

  std::vector<std::vector<char>> gather(const std::vector<char>& mine) override {
    int count = count_of(mine.size());
    std::vector<int> counts(rank_ == 0 ? size_ : 0), offsets(counts.size(), 0);
    check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_), "MPI_Gather");
    std::vector<char> all;
    if (rank_ == 0) {
      size_t total = std::accumulate(counts.begin(), counts.end(), size_t(0));
      count_of(total);
      for (int r = 1; r < size_; ++r)
        offsets[size_t(r)] = offsets[size_t(r) - 1] + counts[size_t(r) - 1];
      all.resize(total);
    }
    check(MPI_Gatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), offsets.data(),
                      MPI_BYTE, 0, comm_),
          "MPI_Gatherv");
    std::vector<std::vector<char>> out(counts.size());
    for (size_t r = 0; r < counts.size(); ++r)
      out[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + counts[r]);
    return out;
  }

  std::vector<char> broadcast(const std::vector<char>& bytes) override {
    int count = rank_ == 0 ? count_of(bytes.size()) : 0;
    check(MPI_Bcast(&count, 1, MPI_INT, 0, comm_), "MPI_Bcast");
    std::vector<char> out = rank_ == 0 ? bytes : std::vector<char>(size_t(count));
    check(MPI_Bcast(out.data(), count, MPI_BYTE, 0, comm_), "MPI_Bcast");
    return out;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

// The module's one entry point: MPI started, this process's place in the job.
extern "C" scalea::overheads::Share* scalea_analysis_share() { return new MpiShare(); }
