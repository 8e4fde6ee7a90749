/* signal_app: waits for a signal (tests/run, `scalea run` passing signals on).
 *
 *   signal_app [SECONDS=30]
 *
 * Runs one OpenMP parallel region (the tool is started and has set up its own signal handling by
 * then), installs handlers for SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 that count what
 * arrives, prints "ready" and waits, spinning. When a signal arrives it prints "got signal N",
 * stays 100 ms in the handler and waits 300 ms more (a second copy of the signal sent meanwhile is
 * then delivered, and counted, rather than merged with the first while pending: the spinning
 * thread takes the first copy at once), prints "signal N received K time(s)" and
 * ends as the signal would have ended it without this handler: through the handler that was in
 * place before (the tool's, which writes the experiment and lets the signal end the process), or
 * by the signal's default action. Without a signal it prints "no signal" and exits 3 after SECONDS.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../apps/omp/planted.h"

static const int kSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};
static struct sigaction g_before[65];
static volatile sig_atomic_t g_signal = 0, g_count = 0;

static void on_signal(int sig) {
  g_signal = sig;
  g_count = g_count + 1;
  char line[32];
  int n = snprintf(line, sizeof line, "got signal %d\n", sig);
  ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
  (void)w;
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  double seconds = arg_num(argc, argv, 1, 30);
  int threads = 0;
#pragma omp parallel
  {
#pragma omp atomic
    ++threads;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i)
    sigaction(kSignals[i], &sa, &g_before[kSignals[i]]);
  printf("signal_app: %d threads, ready\n", threads);
  fflush(stdout);
  double end = now_s() + seconds;
  while (!g_signal && now_s() < end) {
  }
  if (!g_signal) {
    printf("no signal\n");
    return 3;
  }
  sleep_ms(300);
  int sig = g_signal;
  printf("signal %d received %d time(s)\n", sig, (int)g_count);
  fflush(stdout);
  sigaction(sig, &g_before[sig], NULL);
  raise(sig);
  signal(sig, SIG_DFL);  /* the handler before returned: the default action */
  raise(sig);
  return 4;
}
