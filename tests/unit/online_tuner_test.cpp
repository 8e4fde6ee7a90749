// The on-line tuner's policy (collect/core/online_tuner.hpp), fed synthetic executions: which
// schedules it tries, in which order, how often, and which it keeps, with and without noise.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include "core/online_tuner.hpp"

namespace scalea::collect::tune {
namespace {

const void* const kLoop = reinterpret_cast<const void*>(0x1000);
const void* const kOther = reinterpret_cast<const void*>(0x2000);

Execution run(double seconds, int type = kWorkLoop, const void* code = kLoop) {
  Execution e;
  e.seconds = seconds;
  e.imbalance = seconds / 2;
  e.busy = seconds * 2;
  e.threads = 2;
  e.loops.push_back(LoopSeen{code, type, 16});
  return e;
}

// Drives `r` with the program's schedule `program`: each execution takes the time `time` gives
// for the schedule set (the program's own when none), until `limit` executions. Returns the
// schedules set, in order ("-" for none).
template <class F>
std::vector<std::string> drive(RegionTuner& r, Schedule program, F time, int limit = 100) {
  std::vector<std::string> set_seq;
  for (int i = 0; i < limit; ++i) {
    Schedule s;
    bool set = r.before(program, s);
    set_seq.push_back(set ? schedule_text(s) : "-");
    r.after(time(set ? s : program, i));
  }
  return set_seq;
}

TEST(OnlineTuner, CandidatesStartWithTheProgramsOwnAndLeaveOutDuplicates) {
  std::vector<Trial> c = candidates(Schedule{1, 0}, 160, 2);
  std::vector<std::string> names;
  for (const Trial& t : c) names.push_back(schedule_text(t.schedule));
  // 160 iterations, 2 threads: about 8 chunks a thread = chunks of 10.
  EXPECT_EQ(names, (std::vector<std::string>{"static", "static,1", "dynamic,1", "dynamic,10",
                                             "guided,1"}));
  EXPECT_TRUE(c[0].program);
  // A program already dynamic,1 (OMP_SCHEDULE): it is the baseline, not tried again; 16
  // iterations give chunks of 1, so dynamic,C is dynamic,1 too.
  c = candidates(Schedule{2, 1}, 16, 2);
  names.clear();
  for (const Trial& t : c) names.push_back(schedule_text(t.schedule));
  EXPECT_EQ(names, (std::vector<std::string>{"dynamic,1", "static", "static,1", "guided,1"}));
}

TEST(OnlineTuner, TriesEachScheduleRepeatTimesThenKeepsTheClearlyFastest) {
  RegionTuner r(Settings{3, 0.05});
  // The program's static is imbalanced (25 ms); dynamic,1 is the fastest (17 ms).
  std::map<std::string, double> ms = {
      {"static", 25}, {"static,1", 18.5}, {"dynamic,1", 17}, {"dynamic,1", 17}, {"guided,1", 21}};
  auto seq = drive(r, Schedule{1, 0}, [&](Schedule s, int i) {
    return run((ms.count(schedule_text(s)) ? ms[schedule_text(s)] : 30) * 1e-3 + (i % 3) * 1e-5);
  });
  // Warm-up (program's), 3 x program's, then 3 of each candidate (16 iterations: no dynamic,C).
  std::vector<std::string> expect = {"-", "-", "-", "-"};
  for (const char* s : {"static,1", "dynamic,1", "guided,1"})
    for (int k = 0; k < 3; ++k) expect.push_back(s);
  ASSERT_GE(seq.size(), expect.size() + 1);
  EXPECT_EQ(std::vector<std::string>(seq.begin(), seq.begin() + long(expect.size())), expect);
  ASSERT_EQ(r.phase(), Phase::Fixed);
  // static,1 beat static; dynamic,1 is 8 % faster than static,1: beyond the 5 % and the noise.
  EXPECT_EQ(schedule_text(r.trials()[r.chosen()].schedule), "dynamic,1");
  EXPECT_EQ(seq.back(), "dynamic,1");  // then it stays
  EXPECT_EQ(r.fixed_from(), expect.size() + 1);
  EXPECT_NEAR(r.gain(), 1 - 17.0 / 25, 0.01);
  EXPECT_EQ(r.runtime_loops(), RuntimeLoops::Unknown);  // kWorkLoop: the runtime did not say
}

TEST(OnlineTuner, AMarginalGainIsNotTaken) {
  RegionTuner r(Settings{3, 0.05});
  // Every candidate within 3 % of the program's: keep the program's own.
  auto seq = drive(r, Schedule{1, 0}, [](Schedule s, int i) {
    return run((s == Schedule{1, 0} ? 20.0 : 19.5) * 1e-3 + (i % 2) * 1e-5);
  });
  ASSERT_EQ(r.phase(), Phase::Fixed);
  EXPECT_EQ(r.chosen(), 0u);
  EXPECT_EQ(r.gain(), 0.0);
  EXPECT_EQ(seq.back(), "-");
}

TEST(OnlineTuner, AFasterMedianWithinTheNoiseIsNotTaken) {
  Trial base{Schedule{1, 0}, true, {run(0.020), run(0.021), run(0.022)}};
  // Median 10 % lower, but its slowest execution is slower than the baseline's fastest.
  Trial noisy{Schedule{2, 1}, false, {run(0.017), run(0.018), run(0.0205)}};
  EXPECT_FALSE(beats(noisy, base, Settings{}));
  Trial clear{Schedule{2, 1}, false, {run(0.017), run(0.018), run(0.0190)}};
  EXPECT_TRUE(beats(clear, base, Settings{}));
  EXPECT_FALSE(beats(clear, Trial{Schedule{1, 0}, true, {}}, Settings{}));
}

TEST(OnlineTuner, ALaterScheduleOnlyMarginallyFasterThanAnEarlierOneIsNotTaken) {
  RegionTuner r(Settings{3, 0.05});
  std::map<std::string, double> ms = {
      {"static", 25}, {"static,1", 18}, {"dynamic,1", 17.5}, {"guided,1", 17.8}};
  drive(r, Schedule{1, 0}, [&](Schedule s, int) { return run(ms[schedule_text(s)] * 1e-3); });
  ASSERT_EQ(r.phase(), Phase::Fixed);
  EXPECT_EQ(schedule_text(r.trials()[r.chosen()].schedule), "static,1");
}

TEST(OnlineTuner, ARegionWithoutLoopsOrWithOneThreadIsNotTuned) {
  RegionTuner r;
  Execution none;
  none.seconds = 0.01;
  none.threads = 2;
  auto seq = drive(
      r, Schedule{1, 0}, [&](Schedule, int) { return none; }, 5);
  EXPECT_EQ(r.phase(), Phase::Stopped);
  EXPECT_NE(r.reason().find("no worksharing loop"), std::string::npos);
  EXPECT_EQ(seq, (std::vector<std::string>(5, "-")));
  RegionTuner one;
  drive(
      one, Schedule{1, 0},
      [](Schedule, int) {
        Execution e = run(0.01);
        e.threads = 1;
        return e;
      },
      3);
  EXPECT_EQ(one.phase(), Phase::Stopped);
}

// libomp 19 reports each loop's schedule: a loop that reports the schedule set, and another one
// under the program's, is a schedule(runtime) loop; a region whose loops never follow has none.
TEST(OnlineTuner, ReportedSchedulesProveOrRefuteARuntimeLoop) {
  auto type_of = [](Schedule s) {
    return s.kind == 2 ? kWorkLoopDynamic : s.kind == 3 ? kWorkLoopGuided : kWorkLoopStatic;
  };
  RegionTuner follows;
  drive(follows, Schedule{1, 0}, [&](Schedule s, int) {
    Execution e = run(0.02, type_of(s));
    e.loops.push_back(LoopSeen{kOther, kWorkLoopStatic, 16});  // a schedule(static) loop beside
    return e;
  });
  EXPECT_EQ(follows.runtime_loops(), RuntimeLoops::Proven);
  EXPECT_EQ(follows.phase(), Phase::Fixed);

  RegionTuner fixed_loop;
  auto seq = drive(
      fixed_loop, Schedule{1, 0}, [](Schedule, int) { return run(0.02, kWorkLoopStatic); }, 30);
  EXPECT_EQ(fixed_loop.runtime_loops(), RuntimeLoops::None);
  EXPECT_EQ(fixed_loop.phase(), Phase::Stopped);
  // static,1 (same kind: says nothing) then dynamic,1 (the loop stays static): stopped, and from
  // then on the program's own schedule.
  EXPECT_EQ(seq[7], "dynamic,1");
  for (size_t i = 8; i < seq.size(); ++i) EXPECT_EQ(seq[i], "-") << i;
}

TEST(OnlineTuner, AProgramThatSetsItsOwnScheduleStopsTheTuning) {
  RegionTuner r;
  for (int i = 0; i < 6; ++i) {
    Schedule s;
    r.before(Schedule{1, 0}, s);
    r.after(run(0.02));
  }
  Schedule s;
  EXPECT_FALSE(r.before(Schedule{3, 4}, s));  // the program called omp_set_schedule(guided, 4)
  EXPECT_EQ(r.phase(), Phase::Stopped);
  EXPECT_NE(r.reason().find("guided,4"), std::string::npos);
}

TEST(OnlineTuner, RegionJsonParsesAndNamesTheChoice) {
  RegionTuner r(Settings{2, 0.05});
  drive(r, Schedule{1, 0}, [](Schedule s, int) {
    return run(s == Schedule{2, 1} ? 0.010 : 0.020);
  });
  auto j = nlohmann::json::parse(region_json(r, kLoop, 7));
  EXPECT_EQ(j["code"], 0x1000);
  EXPECT_EQ(j["region"], 7);
  EXPECT_EQ(j["state"], "fixed");
  EXPECT_EQ(j["chosen"], "dynamic,1");
  EXPECT_EQ(j["program_schedule"], "static");
  EXPECT_NEAR(j["gain"].get<double>(), 0.5, 1e-3);
  ASSERT_EQ(j["trials"].size(), 4u);
  EXPECT_EQ(j["trials"][0]["program"], true);
  EXPECT_EQ(j["trials"][0]["runs"], 2);
  EXPECT_NEAR(j["trials"][0]["imbalance_s"].get<double>(), 0.010, 1e-6);
}

}  // namespace
}  // namespace scalea::collect::tune
