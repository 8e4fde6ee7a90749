/* without_perf_events PROGRAM [ARGS...]: runs PROGRAM where perf_event_open fails with EACCES, as
 * in a container whose seccomp filter refuses it (Docker's default profile does) or on a kernel
 * with perf_event_paranoid 3. The filter is inherited by every thread and survives exec, so the
 * sampler in the program meets the refusal on its first thread. Exit status 2 when the filter
 * cannot be installed (or on another architecture than x86-64), 127 when PROGRAM cannot run. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: without_perf_events PROGRAM [ARGS...]\n");
    return 2;
  }
#if defined(__x86_64__)
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("without_perf_events: seccomp filter");
    return 2;
  }
#else
  fprintf(stderr, "without_perf_events: x86-64 only\n");
  return 2;
#endif
  execvp(argv[1], argv + 1);
  perror(argv[1]);
  return 127;
}
