// Messages from the tool inside the user's process: one line each, prefixed "scalea: ", on stderr.
// Never per event: problems are counted and reported once at the end.
#pragma once

namespace scalea::collect {
void log_message(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// For what every process of an MPI job would say alike (settings, the choice of counters): said
// by rank 0 only (the rank from the launcher's environment, scalea/launcher.hpp), and by any
// process that is not an MPI rank.
void log_job_message(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
}  // namespace scalea::collect
