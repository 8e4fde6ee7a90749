// Termination by a signal still writes the experiment. SIGINT, SIGTERM, SIGHUP, SIGUSR1 and
// SIGUSR2 (when the program has not installed its own handlers) and crashes (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGABRT) are handed to a watcher thread that writes the experiment; the signal
// then takes its default action, so the exit status is the one the program would have had.
#pragma once

namespace scalea::collect {
// Starts the watcher thread and installs the handlers (once; later calls do nothing).
void install_signal_handlers();
}  // namespace scalea::collect
