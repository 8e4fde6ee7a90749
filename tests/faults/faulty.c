/* A program that ends badly on request, for the fault tests:
 *   faulty term     sleeps inside a parallel region until SIGTERM arrives
 *   faulty segv     crashes (SIGSEGV) inside a parallel region after some work
 *   faulty exit     a worker calls exit(3) inside a parallel region
 *   faulty fork     forks inside the run; the child runs a parallel region and exits
 * Each first runs a user region "before" (10 ms) so the experiment has known content. */
#include <omp.h>
#include <scalea/scalea.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "term";
  SCALEA_REGION_BEGIN("before");
  usleep(10000);
  SCALEA_REGION_END("before");
  if (!strcmp(mode, "term")) {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) {
        printf("ready\n");
        fflush(stdout);
      }
      for (;;) usleep(1000);
    }
  } else if (!strcmp(mode, "segv")) {
#pragma omp parallel num_threads(2)
    {
      usleep(5000);
#pragma omp barrier
      if (omp_get_thread_num() == 1) {
        volatile int* p = (volatile int*)(uintptr_t)8;
        *p = 1;
      }
      usleep(100000);
    }
  } else if (!strcmp(mode, "exit")) {
#pragma omp parallel num_threads(2)
    {
      usleep(5000);
      if (omp_get_thread_num() == 1) exit(3);
      usleep(200000);
    }
  } else if (!strcmp(mode, "fork")) {
    pid_t pid = fork();
    if (pid == 0) {
#pragma omp parallel num_threads(2)
      usleep(1000);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
#pragma omp parallel num_threads(2)
    usleep(1000);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return 0;
}
