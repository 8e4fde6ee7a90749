// The tool's own threads (the signal watcher, the snapshot publisher, the perf probe): detached,
// and started with every signal blocked, so that the program's signals go to the program's
// threads, never to one of ours.
#pragma once
#include <pthread.h>
#include <signal.h>

namespace scalea::collect {

// Starts `fn(arg)` on such a thread; pthread_create's result (0 when it started).
inline int start_background_thread(void* (*fn)(void*), void* arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // inherited by the new thread
  pthread_t thread;
  int rc = pthread_create(&thread, &attr, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  return rc;
}

}  // namespace scalea::collect
