/* start_app: what a program sees of the tool at its start (tests/run, `scalea run` preloading the
 * tool). Built twice: start_app with -fopenmp, start_app_plain without (not an OpenMP program).
 *
 *   start_app SLEEP_MS EXIT_CODE [COMMAND ARGS...]
 *
 * Prints what main() inherited: "LD_PRELOAD=<value>" (or "LD_PRELOAD unset") and the disposition
 * of SIGINT and SIGTERM ("default", "ignored" or "handled"). Then sleeps SLEEP_MS (before any
 * OpenMP construct: the time a tool loaded by the OpenMP runtime would not see), runs one parallel
 * region when built with OpenMP ("parallel: N threads"), runs COMMAND if given and waits for it,
 * and exits with EXIT_CODE.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "../../apps/omp/planted.h"

extern char** environ;

static const char* disposition(int sig) {
  struct sigaction sa;
  if (sigaction(sig, NULL, &sa) != 0) return "unknown";
  if (sa.sa_handler == SIG_DFL) return "default";
  if (sa.sa_handler == SIG_IGN) return "ignored";
  return "handled";
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SLEEP_MS EXIT_CODE [COMMAND ARGS...]\n", argv[0]);
    return 2;
  }
  const char* preload = getenv("LD_PRELOAD");
  if (preload) printf("LD_PRELOAD=%s\n", preload);
  else printf("LD_PRELOAD unset\n");
  printf("SIGINT %s, SIGTERM %s\n", disposition(SIGINT), disposition(SIGTERM));
  fflush(stdout);
  sleep_ms(arg_num(argc, argv, 1, 0));
#ifdef _OPENMP
  int threads = 0;
#pragma omp parallel
  {
#pragma omp atomic
    ++threads;
  }
  printf("parallel: %d threads\n", threads);
  fflush(stdout);
#endif
  if (argc > 3) {
    pid_t pid;
    if (posix_spawnp(&pid, argv[3], NULL, NULL, argv + 3, environ) != 0) {
      fprintf(stderr, "%s: cannot start %s\n", argv[0], argv[3]);
      return 2;
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
  return (int)arg_num(argc, argv, 2, 0);
}
