#include "affinity.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace scalea::collect {

bool read_affinity(pid_t tid, CpuMask& mask) {
  // The kernel's mask may be larger than glibc's cpu_set_t (1024 CPUs): grow until it fits.
  for (size_t words = 16; words <= 65536; words *= 2) {
    CpuMask m(words, 0);
    if (sched_getaffinity(tid, words * sizeof(uint64_t), reinterpret_cast<cpu_set_t*>(m.data())) ==
        0) {
      while (!m.empty() && m.back() == 0) m.pop_back();
      mask = std::move(m);
      return true;
    }
    if (errno != EINVAL) return false;
  }
  return false;
}

std::string cpu_list(const CpuMask& mask) {
  std::string out;
  const size_t bits = mask.size() * 64;
  auto set = [&](size_t i) { return i < bits && (mask[i / 64] >> (i % 64) & 1); };
  for (size_t i = 0; i < bits; ++i) {
    if (!set(i)) continue;
    size_t j = i;
    while (set(j + 1)) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(i);
    if (j > i) out += "-" + std::to_string(j);
    i = j;
  }
  return out;
}

size_t cpu_count(const CpuMask& mask) {
  size_t n = 0;
  for (uint64_t w : mask) n += size_t(__builtin_popcountll(w));
  return n;
}

SchedStat read_schedstat(uint64_t tid) {
  SchedStat s;
  char path[64];
  if (tid == 0) std::snprintf(path, sizeof path, "/proc/thread-self/schedstat");
  else std::snprintf(path, sizeof path, "/proc/self/task/%llu/schedstat", (unsigned long long)tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return s;
  buf[n] = 0;
  // "run_ns wait_ns timeslices"
  char* end = nullptr;
  s.run_ns = std::strtoull(buf, &end, 10);
  if (end == buf) return s;
  char* end2 = nullptr;
  s.wait_ns = std::strtoull(end, &end2, 10);
  s.ok = end2 != end;
  return s;
}

bool own_thread_alive(uint64_t tid) {
  return tid && syscall(SYS_tgkill, getpid(), pid_t(tid), 0) == 0;
}

}  // namespace scalea::collect
