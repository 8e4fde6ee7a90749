// Termination by a signal still writes the experiment. SIGINT, SIGTERM, SIGHUP, SIGUSR1 and
// SIGUSR2 (when the program has not installed its own handlers) and crashes (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGABRT) are handed to a watcher thread that writes the experiment; the signal
// then takes its default action, so the exit status is the one the program would have had.
#pragma once

namespace scalea::collect {
// Starts the watcher thread and installs the handlers (once; later calls do nothing).
void install_signal_handlers();
// Ends the watcher once the experiment is written: a signal then takes its default action at once
// (the handler sees that recording is over). The watcher ends in parallel with the rest of the
// program's exit, instead of being ended by the exit, which waits for the process's last thread.
void release_signal_watcher();
}  // namespace scalea::collect
