// Throttling of tiny hot user and function regions (SCALEA_THROTTLE), driven through the public
// entry points (__cyg_profile_func_*, scalea_region_*) with the fake clock: exact visit counts
// before and after a call path is throttled, where its children go, balanced nesting.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "fake_clock.hpp"
#include "core/recorder.hpp"
#include "core/writer.hpp"
#include "recording.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/scalea.h"

extern "C" void __cyg_profile_func_enter(void* fn, void* site);
extern "C" void __cyg_profile_func_exit(void* fn, void* site);

namespace scalea::collect {
namespace {

// Distinct "function addresses" (never called: only their addresses are regions).
char fn_tiny, fn_slow, fn_late, fn_user_inside;
void* F(char& c) { return &c; }

void fenter(char& c) { __cyg_profile_func_enter(F(c), nullptr); }
void fexit(char& c) { __cyg_profile_func_exit(F(c), nullptr); }

class Throttle : public ::testing::Test {
 protected:
  // A failed assertion in SetUpTestSuite would make GoogleTest skip the tests (ctest counts them
  // as skipped, not failed): the set-up records what went wrong and every test fails on it.
  static void SetUpTestSuite() { setup_error_ = start_recording(); }
  static inline std::string setup_error_;
  void SetUp() override {
    ASSERT_TRUE(setup_error_.empty()) << "suite set-up: " << setup_error_;
    saved_ = {g_throttle_calls_function, g_throttle_calls_user, g_throttle_ns};
    g_throttle_calls_function = 10;
    g_throttle_calls_user = UINT64_MAX;
    g_throttle_ns = 100;
  }
  void TearDown() override {
    g_throttle_calls_function = saved_[0];
    g_throttle_calls_user = saved_[1];
    g_throttle_ns = saved_[2];
  }
  // Runs `body` on a new thread, so the scenario has a tree of its own; returns that tree.
  template <class Body>
  static ThreadState* on_new_thread(Body body) {
    ThreadState* state = nullptr;
    std::thread([&] {
      state = Recorder::get().thread();
      body();
    }).join();
    return state;
  }
  static uint32_t function_id(ThreadState* t, char& c) {
    return Recorder::get().region(*t, RegionKind::Function, 0, F(c));
  }
  static uint32_t user_id(ThreadState* t, const char* name) {
    return Recorder::get().named_region(*t, RegionKind::User, name, nullptr, 0, nullptr);
  }
  // The node of thread t at this path of region ids below the root, or nullptr.
  static const Node* node(const ThreadState* t, std::vector<uint32_t> path) {
    const Node* cur = t->root;
    for (uint32_t r : path) {
      const Node* next = nullptr;
      for (uint32_t i = 0; i < t->node_count && !next; ++i) {
        const Node* n = t->node_at(i);
        if (n->parent == cur && n->region == r) next = n;
      }
      if (!next) return nullptr;
      cur = next;
    }
    return cur;
  }
  std::vector<uint64_t> saved_;
};

// A tiny function (50 ns) around a user region, and a slow function (1000 ns), 25 visits each.
// After 10 visits the tiny function's path is throttled: its stats stop at exactly 10 visits,
// the user region inside it then attaches to the enclosing region, the slow one is untouched.
TEST_F(Throttle, TinyPathStopsAfterNVisitsChildrenAttachToParent) {
  uint64_t t0 = 10'000'000;
  ThreadState* t = on_new_thread([&] {
    at(t0);
    scalea_region_begin_loc("throttle-outer", "throttle.c", 1, "main");
    uint64_t now = t0;
    for (int i = 0; i < 25; ++i) {
      at(now += 100);
      fenter(fn_tiny);
      at(now += 10);
      scalea_region_begin_loc("throttle-inside", "throttle.c", 2, "tiny");
      at(now += 20);
      scalea_region_end("throttle-inside");
      // Once throttled, a visit may last long: it must not reach the node any more.
      at(now += i < 10 ? 20 : 5000);
      fexit(fn_tiny);
      at(now += 100);
      fenter(fn_slow);
      at(now += 1000);
      fexit(fn_slow);
    }
    at(now += 100);
    scalea_region_end("throttle-outer");
  });
  uint32_t outer = user_id(t, "throttle-outer"), inside = user_id(t, "throttle-inside");
  uint32_t tiny = function_id(t, fn_tiny), slow = function_id(t, fn_slow);

  const Node* n_tiny = node(t, {outer, tiny});
  ASSERT_NE(n_tiny, nullptr);
  EXPECT_TRUE(n_tiny->throttled);
  EXPECT_EQ(n_tiny->s.visits, 10u);
  EXPECT_EQ(n_tiny->s.time, 10u * 50);
  EXPECT_EQ(n_tiny->s.time_max, 50u);

  // The region inside: 10 visits below the tiny function, then 15 directly below "outer".
  const Node* in_before = node(t, {outer, tiny, inside});
  const Node* in_after = node(t, {outer, inside});
  ASSERT_NE(in_before, nullptr);
  ASSERT_NE(in_after, nullptr);
  EXPECT_EQ(in_before->s.visits, 10u);
  EXPECT_EQ(in_after->s.visits, 15u);
  EXPECT_EQ(in_after->s.time, 15u * 20);
  EXPECT_FALSE(in_after->throttled);  // user regions are not throttled here

  const Node* n_slow = node(t, {outer, slow});
  ASSERT_NE(n_slow, nullptr);
  EXPECT_FALSE(n_slow->throttled);
  EXPECT_EQ(n_slow->s.visits, 25u);
  EXPECT_EQ(n_slow->s.time, 25u * 1000);

  // The enclosing region still spans the throttled visits: its tree stays consistent.
  const Node* n_outer = node(t, {outer});
  ASSERT_NE(n_outer, nullptr);
  EXPECT_EQ(n_outer->s.visits, 1u);
  EXPECT_EQ(n_outer->s.time, 25u * (100 + 50 + 100 + 1000) + 15u * (5000 - 20) + 100);
  EXPECT_GE(n_outer->s.time, n_tiny->s.time + in_after->s.time + n_slow->s.time);

  // Balanced: nothing left open, nothing unmatched.
  EXPECT_TRUE(t->stack.empty());
  EXPECT_EQ(t->anomalies.unmatched_end, 0u);
  EXPECT_EQ(t->anomalies.unclosed, 0u);

  ASSERT_EQ(t->throttled.size(), 1u);
  EXPECT_EQ(t->throttled[0].node, n_tiny);
  EXPECT_EQ(t->throttled[0].visits, 10u);
  EXPECT_DOUBLE_EQ(t->throttled[0].mean_ns, 50.0);
  EXPECT_EQ(t->throttled[0].at, t0 + 9 * 1250 + 100 + 10 + 20 + 20);  // at the 10th exit
}

// The rule is checked every N visits on the mean so far: 10 visits of 150 ns keep the path,
// 10 more of 10 ns bring the mean to 80 ns and throttle it at exactly 20 visits.
TEST_F(Throttle, CheckedEveryNVisitsOnTheRunningMean) {
  ThreadState* t = on_new_thread([&] {
    uint64_t now = 20'000'000;
    for (int i = 0; i < 40; ++i) {
      at(now += 10);
      fenter(fn_late);
      at(now += i < 10 ? 150 : 10);
      fexit(fn_late);
    }
  });
  const Node* n = node(t, {function_id(t, fn_late)});
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->throttled);
  EXPECT_EQ(n->s.visits, 20u);
  EXPECT_EQ(n->s.time, 10u * 150 + 10u * 10);
  ASSERT_EQ(t->throttled.size(), 1u);
  EXPECT_DOUBLE_EQ(t->throttled[0].mean_ns, 80.0);
  EXPECT_TRUE(t->stack.empty());
}

// Throttling off (the limit never reached): every visit counts.
TEST_F(Throttle, OffRecordsEveryVisit) {
  g_throttle_calls_function = UINT64_MAX;
  ThreadState* t = on_new_thread([&] {
    uint64_t now = 30'000'000;
    for (int i = 0; i < 1000; ++i) {
      at(now += 1);
      fenter(fn_tiny);
      at(now += 1);
      fexit(fn_tiny);
    }
  });
  const Node* n = node(t, {function_id(t, fn_tiny)});
  ASSERT_NE(n, nullptr);
  EXPECT_FALSE(n->throttled);
  EXPECT_EQ(n->s.visits, 1000u);
  EXPECT_TRUE(t->throttled.empty());
}

// User regions throttled too, ended out of order (A begins, B begins, A ends, B ends) and with a
// different name buffer: the nesting stays balanced, no anomaly, B keeps counting.
TEST_F(Throttle, UserRegionsOutOfOrderEndsStayBalanced) {
  g_throttle_calls_user = 5;
  uint32_t a = 0, b = 0;
  ThreadState* t = on_new_thread([&] {
    uint64_t now = 40'000'000;
    char copy[] = "throttle-a";
    for (int i = 0; i < 12; ++i) {
      at(now += 10);
      scalea_region_begin_loc("throttle-a", "throttle.c", 3, "main");
      at(now += 10);
      scalea_region_begin_loc("throttle-b", "throttle.c", 4, "main");
      at(now += 10);
      scalea_region_end(i % 2 ? copy : "throttle-a");
      at(now += 1000);
      scalea_region_end("throttle-b");
    }
    a = user_id(Recorder::get().thread(), "throttle-a");
    b = user_id(Recorder::get().thread(), "throttle-b");
  });
  const Node* na = node(t, {a});
  ASSERT_NE(na, nullptr);
  EXPECT_TRUE(na->throttled);
  EXPECT_EQ(na->s.visits, 5u);
  // B: 5 visits inside A's path, then 7 attached to the root; never throttled (1010 ns).
  const Node* nb_in = node(t, {a, b});
  const Node* nb_out = node(t, {b});
  ASSERT_NE(nb_in, nullptr);
  ASSERT_NE(nb_out, nullptr);
  EXPECT_EQ(nb_in->s.visits, 5u);
  EXPECT_EQ(nb_out->s.visits, 7u);
  EXPECT_FALSE(nb_out->throttled);
  EXPECT_TRUE(t->stack.empty());
  EXPECT_EQ(t->anomalies.unmatched_end, 0u);
}

// What was throttled reaches meta.json (thread, node, visits, mean) and the data still loads.
TEST_F(Throttle, WrittenToMetaJson) {
  ThreadState* t = on_new_thread([&] {
    uint64_t now = 50'000'000;
    for (int i = 0; i < 15; ++i) {
      at(now += 10);
      fenter(fn_user_inside);
      at(now += 30);
      fexit(fn_user_inside);
    }
  });
  const Node* n = node(t, {function_id(t, fn_user_inside)});
  ASSERT_NE(n, nullptr);
  ASSERT_TRUE(n->throttled);
  const test::TempDir tmp("scalea-unit-throttle");
  std::string dir = tmp.path() + "/exp", written, error;
  WriteSummary summary;
  ASSERT_TRUE(write_experiment(Recorder::get(), dir, "test", written, summary, error)) << error;
  drg::Experiment e = drg::load_experiment(written);
  ASSERT_TRUE(e.meta.contains("throttle"));
  const auto& th = e.meta["throttle"];
  EXPECT_GE(th["count"].get<int>(), 1);
  bool found = false;
  for (const auto& x : th["throttled"])
    if (x["thread"] == t->index && x["node"] == n->index) {
      found = true;
      EXPECT_EQ(x["visits"], 10);
      EXPECT_DOUBLE_EQ(x["mean_ns"].get<double>(), 30.0);
    }
  EXPECT_TRUE(found);
}

// SCALEA_THROTTLE and SCALEA_THROTTLE_REGIONS: values, units, defaults and warnings.
TEST(ThrottleConfig, ParsesSettings) {
  auto read = [](std::vector<std::string> vars) {
    std::vector<char*> env;
    for (std::string& v : vars) env.push_back(v.data());
    env.push_back(nullptr);
    return read_config(env.data());
  };
  Config d = read({});
  EXPECT_EQ(d.throttle_calls, 100000u);
  EXPECT_EQ(d.throttle_ns, 10000u);
  EXPECT_TRUE(d.throttle_functions);
  EXPECT_FALSE(d.throttle_user);

  Config c = read({"SCALEA_THROTTLE=500:2.5us", "SCALEA_THROTTLE_REGIONS=functions,user"});
  EXPECT_EQ(c.throttle_calls, 500u);
  EXPECT_EQ(c.throttle_ns, 2500u);
  EXPECT_TRUE(c.throttle_user);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(read({"SCALEA_THROTTLE=1000:300ns"}).throttle_ns, 300u);
  EXPECT_EQ(read({"SCALEA_THROTTLE=1000:2ms"}).throttle_ns, 2000000u);
  EXPECT_EQ(read({"SCALEA_THROTTLE=1000:7"}).throttle_ns, 7000u);  // bare number: µs
  EXPECT_EQ(read({"SCALEA_THROTTLE=off"}).throttle_calls, 0u);
  EXPECT_EQ(read({"SCALEA_THROTTLE=on"}).throttle_calls, 100000u);
  Config none = read({"SCALEA_THROTTLE_REGIONS=none"});
  EXPECT_FALSE(none.throttle_functions);
  EXPECT_FALSE(none.throttle_user);

  for (const char* bad : {"SCALEA_THROTTLE=fast", "SCALEA_THROTTLE=10:", "SCALEA_THROTTLE=:10",
                          "SCALEA_THROTTLE=0:10", "SCALEA_THROTTLE=10:5h", "SCALEA_THROTTLE=-3:1",
                          "SCALEA_THROTTLE_REGIONS=loops"}) {
    Config x = read({bad});
    EXPECT_EQ(x.problems.size(), 1u) << bad;
    EXPECT_EQ(x.throttle_calls, 100000u) << bad;  // the default is kept
    EXPECT_TRUE(x.throttle_functions) << bad;
  }
}

}  // namespace
}  // namespace scalea::collect
