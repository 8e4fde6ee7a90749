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

// How many items `readers` threads may have made and not yet used.
inline size_t read_ahead_window(unsigned readers) { return 2 * (size_t(readers) + 1); }

// Calls use(i, produce(i)) for i in [first, last), in order, on the calling thread; produce(i)
// runs on `readers` other threads (at most read_ahead_window(readers) items made, not yet used).
// With no readers, or one item, it is the plain loop. An exception from produce(i) is thrown when
// item i's turn comes, after every earlier item was used, as the plain loop would throw it; an
// exception from use() stops the readers and is thrown. T must be movable. A thread is woken only
// when what it waits for is there (the item it uses next, a free slot), not at every change: with
// one condition for all, the wake-ups of every item were a tenth of a report's CPU at 4,096 ranks.
template <class T, class Produce, class Use>
void read_ahead(size_t first, size_t last, unsigned readers, Produce&& produce, Use&& use) {
  if (readers == 0 || last - first <= 1) {
    for (size_t i = first; i < last; ++i) {
      T item = produce(i);
      use(i, item);
    }
    return;
  }
  const size_t window = read_ahead_window(readers);
  struct Slot {
    std::optional<T> item;
    std::exception_ptr error;
    bool ready = false;
  };
  std::vector<Slot> slots(window);  // item i in slot i % window
  std::mutex m;
  std::condition_variable item_ready,
      slot_free;        // the caller waits on the first, readers on the other
  size_t next = first;  // the next item a reader takes
  size_t used = first;  // items before this one were used (their slots are free)
  unsigned readers_waiting = 0;
  bool stop = false;
  auto reader = [&] {
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      ++readers_waiting;
      slot_free.wait(lock, [&] { return stop || next == last || next < used + window; });
      --readers_waiting;
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
      if (i == used) item_ready.notify_one();  // the caller's next item
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(readers);
  auto stop_all = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    slot_free.notify_all();
    for (std::thread& t : pool) t.join();
  };
  try {
    for (unsigned r = 0; r < readers && r < last - first; ++r) pool.emplace_back(reader);
    for (size_t i = first; i < last; ++i) {
      std::optional<T> item;
      std::exception_ptr error;
      bool wake = false;
      {
        std::unique_lock<std::mutex> lock(m);
        Slot& s = slots[i % window];
        item_ready.wait(lock, [&] { return s.ready; });
        item = std::move(s.item);
        error = s.error;
        s = Slot{};
        ++used;
        wake = readers_waiting > 0 && next < last;
      }
      if (wake) slot_free.notify_one();
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
