// The machine model in the classifier: extra cache misses over the reference are priced as
// data_movement.local_memory (rule memory.extra_misses) and moved out of useful work; the tool's
// own cost below a region (NOISE) is events below x calibrated cost. Hand-built experiments.
#include <gtest/gtest.h>

#include "drg_builder.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::overheads {
namespace {

using drg::RegionKind;
using drg::test::Builder;

// One thread: program > user "work" (time t_ns, L1 misses m1, L2 misses m2) > n "tiny" visits.
drg::Experiment make(double t_ns, double m1, double m2, double tiny_visits) {
  Builder b({"visits", "time", "time_min", "time_max", "wait", "fork", "join", "team_size",
             "papi:PAPI_L1_DCM", "papi:PAPI_L2_DCM"});
  uint32_t prog = b.region(RegionKind::Program, "app");
  uint32_t work = b.region(RegionKind::User, "work", 0, "app.c", 10);
  uint32_t tiny = b.region(RegionKind::User, "tiny", 0, "app.c", 12);
  uint32_t t = b.thread(0, 0, prog, {{"visits", 1}, {"time", t_ns + 1e6}});
  uint32_t w = b.node(t, 0, work, {{"visits", 1}, {"time", t_ns}, {"papi:PAPI_L1_DCM", m1},
                                   {"papi:PAPI_L2_DCM", m2}});
  if (tiny_visits > 0) b.node(t, w, tiny, {{"visits", tiny_visits}, {"time", 1000}});
  return b.e;
}

const RegionOverheads& find(const Analysis& a, const std::string& part) {
  for (const auto& r : a.regions)
    if (r.path.find(part) != std::string::npos && r.path.find("tiny") == std::string::npos) return r;
  static RegionOverheads none;
  ADD_FAILURE() << "no region " << part;
  return none;
}

TEST(MachineModel, ExtraMissesAreLocalMemoryDataMovement) {
  drg::Experiment run = make(1e9, 3e6, 1e6, 0), ref = make(0.8e9, 1e6, 0.5e6, 0);
  drg::MergedTree rt(run), ft(ref);
  MachineModel m;
  m.miss_penalty_ns = {{"L1", 10}, {"L2", 100}};
  Options o;
  o.machine = &m;
  Analysis a = classify(rt, &ft, o);
  EXPECT_TRUE(a.misses_priced);
  const RegionOverheads& w = find(a, "work");
  // (3e6 - 1e6) x 10 ns + (1e6 - 0.5e6) x 100 ns = 0.02 + 0.05 = 0.07 s
  EXPECT_NEAR(w.classes[size_t(Class::DataMovement)], 0.07, 1e-9);
  EXPECT_NEAR(w.subclasses.at("data_movement.local_memory"), 0.07, 1e-9);
  EXPECT_TRUE(identity_violations(a).empty());
  // Without the machine, the same time stays unidentified.
  Analysis plain = classify(rt, &ft, Options{});
  EXPECT_FALSE(plain.misses_priced);
  EXPECT_NEAR(find(plain, "work").classes[size_t(Class::DataMovement)], 0.0, 1e-12);
  EXPECT_NEAR(find(plain, "work").classes[size_t(Class::Unidentified)] -
                  w.classes[size_t(Class::Unidentified)], 0.07, 1e-9);
}

TEST(MachineModel, FewerMissesThanReferenceCostNothing) {
  drg::Experiment run = make(1e9, 1e6, 1e5, 0), ref = make(1e9, 2e6, 2e5, 0);
  drg::MergedTree rt(run), ft(ref);
  MachineModel m;
  m.miss_penalty_ns = {{"L1", 10}, {"L2", 100}};
  Options o;
  o.machine = &m;
  Analysis a = classify(rt, &ft, o);
  EXPECT_NEAR(find(a, "work").classes[size_t(Class::DataMovement)], 0.0, 1e-12);
}

TEST(MachineModel, NoiseIsEventsBelowTimesCost) {
  drg::Experiment run = make(0.05e9, 0, 0, 100000);
  drg::MergedTree rt(run);
  MachineModel m;
  m.tool_cost_ns = {{"user", 40}, {"default", 40}};
  Options o;
  o.machine = &m;
  Analysis a = classify(rt, nullptr, o);
  EXPECT_TRUE(a.noise_priced);
  const RegionOverheads& w = find(a, "work");
  EXPECT_NEAR(w.noise, 100000 * 40e-9, 1e-12);
  EXPECT_EQ(w.events_below, 100000);
  Analysis plain = classify(rt, nullptr, Options{});
  EXPECT_EQ(find(plain, "work").noise, 0);
}

}  // namespace
}  // namespace scalea::overheads
