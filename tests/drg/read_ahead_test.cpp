// unit.drg: reading rank files ahead of their use (drg/src/read_ahead.hpp). Items are used in
// order on the calling thread whatever order the readers finish in, no more are made ahead than
// the window allows, and a failure surfaces where the plain loop would have met it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "read_ahead.hpp"

namespace scalea::drg::detail {
namespace {

// Item i takes longer the smaller i is within each group of 3, so readers finish out of order.
void uneven_work(size_t i) {
  std::this_thread::sleep_for(std::chrono::microseconds(300 * (2 - i % 3)));
}

TEST(ReadAhead, UsesEveryItemInOrderOnTheCallingThread) {
  for (unsigned readers : {0u, 1u, 2u, 4u}) {
    std::vector<size_t> used;
    const std::thread::id caller = std::this_thread::get_id();
    bool elsewhere = false;
    read_ahead<std::string>(
        3, 40, readers,
        [&](size_t i) {
          uneven_work(i);
          return "item " + std::to_string(i);
        },
        [&](size_t i, std::string& item) {
          EXPECT_EQ(item, "item " + std::to_string(i));
          elsewhere = elsewhere || std::this_thread::get_id() != caller;
          used.push_back(i);
        });
    ASSERT_EQ(used.size(), 37u) << readers << " readers";
    for (size_t k = 0; k < used.size(); ++k) EXPECT_EQ(used[k], k + 3) << readers << " readers";
    EXPECT_FALSE(elsewhere) << readers << " readers";
  }
}

TEST(ReadAhead, MakesNoMoreThanTheWindowAheadAndUsesTheReaders) {
  const unsigned readers = 3;
  std::atomic<int> made{0}, most_ahead{0};
  std::atomic<int> at_once{0}, most_at_once{0};
  int used = 0;
  read_ahead<int>(
      0, 60, readers,
      [&](size_t i) {
        int now = ++at_once;
        for (int m = most_at_once; now > m && !most_at_once.compare_exchange_weak(m, now);) {}
        uneven_work(i);
        --at_once;
        return ++made;
      },
      [&](size_t, int&) {
        ++used;
        // Made beyond the one in use: at most the window.
        int ahead = made - used;
        for (int m = most_ahead; ahead > m && !most_ahead.compare_exchange_weak(m, ahead);) {}
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      });
  EXPECT_EQ(used, 60);
  EXPECT_LE(most_ahead.load(), int(read_ahead_window(readers)));
  EXPECT_GE(most_at_once.load(), 2) << "the readers never worked at the same time";
}

TEST(ReadAhead, AFailureIsThrownAtItsItemsTurnAfterTheItemsBefore) {
  for (unsigned readers : {0u, 1u, 3u}) {
    std::vector<size_t> used;
    try {
      read_ahead<size_t>(
          0, 30, readers,
          [&](size_t i) {
            uneven_work(i);
            if (i == 7 || i == 11)
              throw std::runtime_error("file " + std::to_string(i) + " is cut");
            return i;
          },
          [&](size_t i, size_t&) { used.push_back(i); });
      ADD_FAILURE() << "no error with " << readers << " readers";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "file 7 is cut") << readers << " readers";
    }
    ASSERT_EQ(used.size(), 7u) << readers << " readers";
    for (size_t k = 0; k < used.size(); ++k) EXPECT_EQ(used[k], k);
  }
}

TEST(ReadAhead, AFailureOfTheUserStopsTheReaders) {
  std::atomic<size_t> made{0};
  try {
    read_ahead<size_t>(
        0, 1000, 2,
        [&](size_t i) {
          ++made;
          return i;
        },
        [&](size_t i, size_t&) {
          if (i == 5) throw std::logic_error("stop at 5");
        });
    ADD_FAILURE() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "stop at 5");
  }
  // Items 0..5 used, at most the window made beyond them.
  EXPECT_LE(made.load(), 6u + read_ahead_window(2));
}

TEST(ReadAhead, DefaultReadersFollowTheRequestedThreads) {
  EXPECT_EQ(read_ahead_threads(1), 0u);  // LoadOptions::threads = 1: serial
  EXPECT_EQ(read_ahead_threads(4), 3u);
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  const unsigned cores = unsigned(CPU_COUNT(&mine));
  EXPECT_EQ(read_ahead_threads(0), cores == 1 ? 0u : std::min(4u, cores));
  // Bound to one core (taskset -c 0, mpirun's binding): nothing reads ahead.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
  std::thread bound([&] {
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    EXPECT_EQ(read_ahead_threads(0), 0u);
  });
  bound.join();
}

}  // namespace
}  // namespace scalea::drg::detail
