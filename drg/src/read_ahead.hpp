// Reading rank files ahead of their use: while the calling thread folds file i into what it
// builds (in file order, so every sum is added in the serial order), other threads read and
// parse files i + 1, i + 2, ... A streaming pass over an experiment read by file is mostly
// parsing (docs/drg.md, "Streaming"), and parsing one file does not depend on another; so the
// pass runs on every core and holds at most `window` files besides the one in use.
#pragma once
#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace scalea::drg::detail {

// How many threads read ahead by default: one per core, at most 4, none on one core. Not one
// fewer for the caller's: while the experiment is opened the caller only waits for the parsed
// files (docs/drg.md, "Streaming").
// The cores are those the process may run on (taskset, a batch system's binding).
inline unsigned read_ahead_threads(unsigned requested) {
  if (requested) return requested - 1;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) == 0) cores = std::max(1, CPU_COUNT(&mine));
  return cores == 1 ? 0 : std::min(4u, cores);
}

// Calls use(i, produce(i)) for i in [first, last), in order, on the calling thread; produce(i)
// runs on `readers` other threads (at most `readers + 1` items made and not yet used). With no
// readers, or one item, it is the plain loop. An exception from produce(i) is thrown when item i's
// turn comes, after every earlier item was used, as the plain loop would throw it; an exception
// from use() stops the readers and is thrown. T must be movable.
template <class T, class Produce, class Use>
void read_ahead(size_t first, size_t last, unsigned readers, Produce&& produce, Use&& use) {
  if (readers == 0 || last - first <= 1) {
    for (size_t i = first; i < last; ++i) {
      T item = produce(i);
      use(i, item);
    }
    return;
  }
  const size_t window = size_t(readers) + 1;
  struct Slot {
    std::optional<T> item;
    std::exception_ptr error;
    bool ready = false;
  };
  std::vector<Slot> slots(window);  // item i in slot i % window
  std::mutex m;
  std::condition_variable changed;
  size_t next = first;  // the next item a reader takes
  size_t used = first;  // items before this one were used (their slots are free)
  bool stop = false;
  auto reader = [&] {
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      changed.wait(lock, [&] { return stop || next == last || next < used + window; });
      if (stop || next == last) return;
      const size_t i = next++;
      lock.unlock();
      std::optional<T> item;
      std::exception_ptr error;
      try {
        item.emplace(produce(i));
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      Slot& s = slots[i % window];
      s.item = std::move(item);
      s.error = error;
      s.ready = true;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(readers);
  auto stop_all = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    changed.notify_all();
    for (std::thread& t : pool) t.join();
  };
  try {
    for (unsigned r = 0; r < readers && r < last - first; ++r) pool.emplace_back(reader);
    for (size_t i = first; i < last; ++i) {
      std::optional<T> item;
      std::exception_ptr error;
      {
        std::unique_lock<std::mutex> lock(m);
        Slot& s = slots[i % window];
        changed.wait(lock, [&] { return s.ready; });
        item = std::move(s.item);
        error = s.error;
        s = Slot{};
        ++used;
      }
      changed.notify_all();
      if (error) std::rethrow_exception(error);
      use(i, *item);
    }
  } catch (...) {
    stop_all();
    throw;
  }
  stop_all();
}

}  // namespace scalea::drg::detail
