/* own_signals: a program with signals, timers and children of its own, which must behave under
 * the tool (call-path sampling on) exactly as without it (docs/sampling.md).
 *
 *   own_signals prof MS     a SIGPROF handler and setitimer(ITIMER_PROF, 1 ms); MS ms of CPU
 *                           work. Prints "prof ok" when its handler got SIGPROF ticks.
 *   own_signals fork N      N children, each 50 ms of CPU work then _exit(10 + i); child 0 execs
 *                           /bin/sh -c 'exit 3' instead. Prints each child's status.
 *   own_signals blocked MS  every signal blocked while MS ms of CPU work run, then unblocked.
 *                           Prints "blocked ok".
 *   own_signals rt MS       SIGRTMIN+6 (the tool's sampling signal) as the program's own, installed
 *                           after the tool started: its handler with sigaction, MS ms of CPU work
 *                           (the tool's samples must not reach the handler), 5 signals it sends
 *                           itself with values; then signal(SIG_IGN), raise, and a query. Prints
 *                           what it saw at each step.
 * Exit status 0 when everything behaved; otherwise a message and 1.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "planted.h"

static volatile sig_atomic_t ticks = 0;
static void on_prof(int sig) {
  (void)sig;
  ++ticks;
}

static int prof(double s) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, NULL) != 0) return 1;
  struct itimerval it = {{0, 1000}, {0, 1000}};
  if (setitimer(ITIMER_PROF, &it, NULL) != 0) return 1;
  double used = 0;
  PLANTED_CPU_WORK(s, used);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  /* The kernel checks CPU timers at its clock tick, and later on a loaded machine: some ticks, at
   * most one per ms of the work. */
  if (ticks < 1 || ticks > (int)(used * 1000) + 2) {
    fprintf(stderr, "own_signals: %d SIGPROF ticks in %.3f s of CPU time\n", (int)ticks, used);
    return 1;
  }
  printf("prof ok\n");
  return 0;
}

static int children(int n) {
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      if (i == 0) {
        execl("/bin/sh", "sh", "-c", "exit 3", (char*)NULL);
        _exit(127);
      }
      double used = 0;
      PLANTED_CPU_WORK(0.05, used);
      _exit(10 + i);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
      fprintf(stderr, "own_signals: child %d did not exit normally\n", i);
      return 1;
    }
    printf("child %d status %d\n", i, WEXITSTATUS(status));
    if (WEXITSTATUS(status) != (i == 0 ? 3 : 10 + i)) return 1;
  }
  return 0;
}

static int blocked(double s) {
  sigset_t all, old;
  sigfillset(&all);
  if (sigprocmask(SIG_BLOCK, &all, &old) != 0) return 1;
  double used = 0;
  PLANTED_CPU_WORK(s, used);
  sigprocmask(SIG_SETMASK, &old, NULL);
  printf("blocked ok\n");
  return 0;
}

static volatile sig_atomic_t rt_calls = 0, rt_value_sum = 0;
static void on_rt(int sig, siginfo_t* si, void* uc) {
  (void)sig;
  (void)uc;
  ++rt_calls;
  rt_value_sum += si->si_code == SI_QUEUE ? si->si_value.sival_int : 1000;
}

static int rt(double s) {
  const int sig = SIGRTMIN + 6;
  struct sigaction sa, old;
  if (sigaction(sig, NULL, &old) != 0) return 1;
  printf("before: %s\n", old.sa_handler == SIG_DFL ? "default" : "a handler");
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_rt;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, NULL) != 0) return 1;
  double used = 0;
  PLANTED_CPU_WORK(s, used);
  printf("after %.0f ms of work: %d calls\n", s * 1e3, (int)rt_calls);
  for (int i = 1; i <= 5; ++i) {
    union sigval v;
    v.sival_int = i;
    if (sigqueue(getpid(), sig, v) != 0) return 1;
  }
  printf("after 5 sigqueue: %d calls, values %d\n", (int)rt_calls, (int)rt_value_sum);
  void (*prev)(int) = signal(sig, SIG_IGN);
  printf("signal returned %s\n", prev == (void (*)(int))on_rt ? "the handler" : "something else");
  raise(sig);
  if (sigaction(sig, NULL, &old) != 0) return 1;
  printf("after raise: %d calls, now %s\n", (int)rt_calls,
         old.sa_handler == SIG_IGN ? "ignored" : "not ignored");
  return rt_calls == 5 && rt_value_sum == 15 ? 0 : 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "prof") == 0) return prof(arg_num(argc, argv, 2, 200) * 1e-3);
  if (strcmp(mode, "fork") == 0) return children((int)arg_num(argc, argv, 2, 3));
  if (strcmp(mode, "blocked") == 0) return blocked(arg_num(argc, argv, 2, 100) * 1e-3);
  if (strcmp(mode, "rt") == 0) return rt(arg_num(argc, argv, 2, 200) * 1e-3);
  fprintf(stderr, "usage: own_signals prof MS | fork N | blocked MS | rt MS\n");
  return 2;
}
