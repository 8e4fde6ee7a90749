// What an MPI launcher tells a process in its environment: its rank and the job's size, from the
// first of Open MPI's, PMI's (MPICH, Slurm) and PMIx's variables that is set. Shared by the
// collector (the rank it writes as, which rank logs) and `scalea run` (which rank stores the
// experiment in the database).
#pragma once
#include <cstdlib>
#include <optional>

namespace scalea {

inline std::optional<int> launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return std::nullopt;
}

inline std::optional<int> launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return std::nullopt;
}

}  // namespace scalea
