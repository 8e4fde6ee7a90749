#include "log.hpp"

#include <cstdarg>
#include <cstdio>
#include <unistd.h>

namespace scalea::collect {

void log_message(const char* fmt, ...) {
  // One write(2) per line, so lines from several processes (MPI ranks) do not interleave.
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "scalea: ");
  va_list ap;
  va_start(ap, fmt);
  n += std::vsnprintf(buf + n, sizeof buf - size_t(n) - 1, fmt, ap);
  va_end(ap);
  if (n > int(sizeof buf) - 2) n = int(sizeof buf) - 2;
  buf[n++] = '\n';
  ssize_t w = write(STDERR_FILENO, buf, size_t(n));
  (void)w;
}

}  // namespace scalea::collect
