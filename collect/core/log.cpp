#include "log.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

#include "config.hpp"

namespace scalea::collect {

namespace {
void vlog(const char* fmt, va_list ap) {
  // One write(2) per line, so lines from several processes (MPI ranks) do not interleave.
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "scalea: ");
  n += std::vsnprintf(buf + n, sizeof buf - size_t(n) - 1, fmt, ap);
  if (n > int(sizeof buf) - 2) n = int(sizeof buf) - 2;
  buf[n++] = '\n';
  ssize_t w = write(STDERR_FILENO, buf, size_t(n));
  (void)w;
}

bool first_of_job() {
  std::optional<int> rank = launcher_rank();
  return !rank || *rank == 0;
}
}  // namespace

void log_message(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(fmt, ap);
  va_end(ap);
}

void log_job_message(const char* fmt, ...) {
  static const bool say = first_of_job();
  if (!say) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(fmt, ap);
  va_end(ap);
}

}  // namespace scalea::collect
