// CPU affinity of the process and its threads, for meta.json "affinity"
// (docs/experiment-format.md): which CPUs each thread may run on, so that threads sharing a CPU can
// be named in the report.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace scalea::collect {

using CpuMask = std::vector<uint64_t>;  // bit i: CPU i

// The CPUs thread `tid` (0: the calling thread) may run on; false (mask untouched) when unknown.
bool read_affinity(pid_t tid, CpuMask& mask);
// A Linux cpulist ("0-3,8,10-11"); "" for an empty mask.
std::string cpu_list(const CpuMask& mask);
size_t cpu_count(const CpuMask& mask);
// The scheduler's account of a thread (Linux /proc schedstat): time it ran on a CPU and time it
// was runnable but waited for one (other processes or threads had the CPUs). `ok` false: unknown
// (no /proc, a kernel without schedstats).
struct SchedStat {
  uint64_t run_ns = 0;
  uint64_t wait_ns = 0;
  bool ok = false;
};
// Thread `tid` of this process (0: the calling thread).
SchedStat read_schedstat(uint64_t tid);

// Whether `tid` is still a thread of this process (so that a reused thread id is not read).
bool own_thread_alive(uint64_t tid);

}  // namespace scalea::collect
