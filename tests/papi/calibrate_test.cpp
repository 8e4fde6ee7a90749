// `scalea calibrate` writes a usable machine file in under a minute, and compensation with it
// brings a densely instrumented planted region closer to its planted time.
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace scalea::test {
namespace {

// One calibration for the whole test program (it takes a few seconds).
const std::string& machine_file() {
  static std::string path;
  if (path.empty()) {
    auto t0 = std::chrono::steady_clock::now();
    AppRun r = run_scalea_cli({"calibrate", "-o", "{exp}.machine.json"});
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, 0) << r.describe();
    EXPECT_LT(s, 60.0) << "calibrate must finish in under a minute";
    EXPECT_NE(r.out.find("wrote machine file"), std::string::npos) << r.out;
    path = r.experiment + ".machine.json";
  }
  return path;
}

TEST(Calibrate, WritesMachineFile) {
  std::ifstream in(machine_file());
  ASSERT_TRUE(in) << machine_file();
  auto m = nlohmann::json::parse(in);
  EXPECT_EQ(m["format"], "scalea-machine");
  EXPECT_EQ(m["format_version"], 1);
  EXPECT_GT(m["clock"]["resolution_ns"].get<double>(), 0);
  EXPECT_GT(m["clock"]["read_cost_ns"].get<double>(), 0);
  for (const char* k : {"user", "lock", "barrier", "parallel", "default"})
    EXPECT_GE(m["tool_cost_ns"][k].get<double>(), 0) << k;
  // Entering and leaving a user region costs the tool something, and not a microsecond.
  EXPECT_GT(m["tool_cost_ns"]["user"].get<double>(), 1);
  EXPECT_LT(m["tool_cost_ns"]["user"].get<double>(), 2000);
  for (const char* p : {"1", "2", "4"}) {
    EXPECT_GT(m["openmp"]["fork_join_ns"][p].get<double>(), 0) << p;
    EXPECT_GT(m["openmp"]["barrier_ns"][p].get<double>(), 0) << p;
    EXPECT_GT(m["openmp"]["lock_ns"][p].get<double>(), 0) << p;
  }
  ASSERT_GE(m["memory"]["levels"].size(), 2u);
  double prev = 0;
  for (const auto& l : m["memory"]["levels"]) {
    EXPECT_GT(l["latency_ns"].get<double>(), 0) << l.dump();
    prev = std::max(prev, l["latency_ns"].get<double>());
  }
  // Main memory is slower than the first level.
  EXPECT_GT(m["memory"]["levels"].back()["latency_ns"].get<double>(),
            m["memory"]["levels"][0]["latency_ns"].get<double>());
  EXPECT_TRUE(m["memory"]["miss_penalty_ns"].contains("L1"));
}

TEST(Calibrate, BadMachineFileIsAOneLineError) {
  AppRun r = run_with_tool({SCALEA_PAPI_APP, "dense", "10", "1"});
  ASSERT_EQ(r.status, 0) << r.describe();
  std::string bad = r.workdir + "/bad.json";
  std::ofstream(bad) << "{\"format\": \"something else\"}";
  AppRun rep = run_scalea_cli({"report", r.experiment, "--machine", bad});
  EXPECT_EQ(rep.status, 2) << rep.describe();
  EXPECT_NE(rep.err.find("not a scalea machine file"), std::string::npos) << rep.err;
  AppRun none = run_scalea_cli({"report", r.experiment, "--compensate"},
                            {{"SCALEA_MACHINE", r.workdir + "/absent.json"}});
  EXPECT_EQ(none.status, 2) << none.describe();
  EXPECT_NE(none.err.find("--compensate needs a machine file"), std::string::npos) << none.err;
}

TEST(Compensation, DenseRegionCloserToPlantedTime) {
  constexpr int kTiny = 100000;
  constexpr double kSleepMs = 20;
  AppRun r = run_with_tool({SCALEA_PAPI_APP, "dense", std::to_string(kTiny), std::to_string(kSleepMs)});
  ASSERT_EQ(r.status, 0) << r.describe();
  double planted = truth(r, "dense", kSleepMs * 1e-3);
  AppRun rep = run_scalea_cli({"report", r.experiment, "--machine", machine_file(), "--compensate",
                            "--format", "json"});
  ASSERT_EQ(rep.status, 0) << rep.describe();
  auto j = nlohmann::json::parse(rep.out);
  EXPECT_TRUE(j["compensated"].get<bool>());
  const nlohmann::json* dense = nullptr;
  for (const auto& reg : j["regions"])
    if (reg["name"] == "dense") dense = &reg;
  ASSERT_NE(dense, nullptr) << rep.out;
  double raw = (*dense)["time"], comp = (*dense)["time_compensated"], noise = (*dense)["noise"];
  EXPECT_EQ((*dense)["events_below"].get<double>(), kTiny);
  EXPECT_GT(noise, 0);
  EXPECT_LT(std::abs(comp - planted), std::abs(raw - planted))
      << "raw " << raw << " s, compensated " << comp << " s, planted " << planted << " s";
  // The text report says that times are compensated and shows the NOISE column.
  AppRun text = run_scalea_cli({"report", r.experiment, "--machine", machine_file(), "--compensate"});
  ASSERT_EQ(text.status, 0) << text.describe();
  EXPECT_NE(text.out.find("COMPENSATED"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("NOISE"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace scalea::test
