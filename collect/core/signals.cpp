#include "signals.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <ctime>

#include "background.hpp"
#include "log.hpp"
#include "recorder.hpp"

namespace scalea::collect {
namespace {

int g_pipe[2] = {-1, -1};
pid_t g_pid = 0;
std::atomic<int> g_handling{0};  // the first signal handled; later ones take their default action
std::atomic<bool> g_written{false};

// Signals whose default action ends the process and that jobs get when they are stopped or
// warned (terminal, batch systems, launchers; `scalea run` passes them on).
constexpr int kTerminating[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
constexpr int kCrashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// A writer that cannot finish (e.g. the crash left the heap locked) must not hang the process.
constexpr int kWriteTimeoutSeconds = 10;

[[noreturn]] void die_by(int sig) {
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig);  // a blocked or ignored signal: still end as the program would have
}

bool is_crash(int sig) {
  for (int s : kCrashes)
    if (s == sig) return true;
  return false;
}

// Waits (bounded) until the watcher has written the experiment.
void wait_for_writer() {
  for (int i = 0; i < kWriteTimeoutSeconds * 100 && !g_written.load(); ++i) {
    timespec ts{0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
}

// Async-signal-safe: only write(), nanosleep() and raise().
void on_signal(int sig) {
  if (getpid() != g_pid) die_by(sig);
  int expected = 0;
  if (!g_handling.compare_exchange_strong(expected, sig)) {
    // The same signal again while the experiment is being written (sent to the whole process
    // group, it reaches the program directly and through `scalea run`): it ends the process as
    // the first one does, after the write. Another signal ends it at once.
    if (expected == sig) wait_for_writer();
    die_by(sig);
  }
  if (!recording(g_state.load())) die_by(sig);
  unsigned char byte = static_cast<unsigned char>(sig);
  if (write(g_pipe[1], &byte, 1) != 1) die_by(sig);
  // Wait here (this thread may hold locks the program needs) until the watcher has written.
  wait_for_writer();
  die_by(sig);
}

// What release_signal_watcher() sends the watcher: no signal has the number 0.
constexpr unsigned char kWatcherDone = 0;

void* watch(void*) {
  unsigned char byte;
  while (read(g_pipe[0], &byte, 1) != 1) {}
  if (byte == kWatcherDone) {
    // A handler that passed its recording check before the experiment was written, and wrote its
    // signal after this, must not wait for a watcher that is gone.
    g_written.store(true);
    return nullptr;
  }
  int sig = byte;
  Recorder& rec = Recorder::get();
  std::string note = std::string("the program was ended by signal ") + strsignal(sig);
  rec.ending_notes.push_back(note);
  if (is_crash(sig)) rec.ending_complete = false;
  std::string why = std::string("signal ") + std::to_string(sig);
  rec.finish(why.c_str());
  g_written.store(true);
  return nullptr;
}

}  // namespace

void install_signal_handlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  if (pipe2(g_pipe, O_CLOEXEC) != 0) return;
  g_pid = getpid();
  int rc = start_background_thread(watch, nullptr);  // it must not receive the signals itself
  if (rc != 0) {
    log_message(
        "cannot start the signal watcher: the experiment is not written if a signal ends the "
        "program");
    return;
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  auto install = [&](int sig) {
    struct sigaction current;
    // The program's own handlers (and ignored signals) are left alone.
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
        !(current.sa_flags & SA_SIGINFO))
      sigaction(sig, &sa, nullptr);
  };
  for (int s : kTerminating) install(s);
  for (int s : kCrashes) install(s);
}

void release_signal_watcher() {
  static std::atomic<bool> released{false};
  if (g_pipe[1] < 0 || released.exchange(true)) return;
  unsigned char byte = kWatcherDone;
  // Nothing to do if it fails: the watcher then ends with the process, as before.
  (void)!write(g_pipe[1], &byte, 1);
}

}  // namespace scalea::collect
