// Writes a literal experiment with L2 cache counters (this machine has none to measure): one
// parallel region on 4 threads where the master's L2 miss ratio is 0.30 and the workers' 0.10,
// as in the SCALEA paper's Figure 6. Usage: make_cache_experiment DIR
#include <iostream>

#include "scalea/drg/encode.hpp"
#include "scalea/drg/experiment.hpp"

using namespace scalea;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_cache_experiment DIR\n";
    return 2;
  }
  drg::Experiment e;
  e.meta = {{"format", "scalea-experiment"}, {"format_version", 1}, {"complete", true}};
  for (const auto& m : format::kCoreMetrics) {
    e.metrics.push_back(m.name);
    e.metric_merge.push_back(m.merge);
    e.metric_type.push_back(m.type);
  }
  for (const char* c : {"papi:PAPI_L2_DCM", "papi:PAPI_L2_DCA", "papi:PAPI_TOT_INS"}) {
    e.metrics.push_back(c);
    e.metric_merge.push_back(format::MetricMerge::Sum);
    e.metric_type.push_back(format::MetricType::U64);
  }
  e.metrics_defined = true;
  drg::Region prog, par;
  prog.kind = drg::RegionKind::Program;
  prog.name = "md";
  par.kind = drg::RegionKind::Parallel;
  par.file = "md.c";
  par.line = 88;
  e.regions = {prog, par};
  for (uint32_t t = 0; t < 4; ++t) {
    drg::ThreadTree th;
    th.thread = t;
    th.flags = t == 0 ? format::kThreadInitial : 0;
    th.parent = {format::kNoIndex, 0};
    th.region = {0, 1};
    th.values.assign(2 * e.metrics.size(), 0.0);
    auto set = [&](uint32_t node, const char* name, double v) {
      th.values[node * e.metrics.size() + size_t(e.metric(name))] = v;
    };
    set(0, "visits", 1);
    set(0, "time", 2e9);
    set(1, "visits", 1);
    set(1, "time", 1e9);
    set(1, "papi:PAPI_L2_DCA", 1e6);
    set(1, "papi:PAPI_L2_DCM", t == 0 ? 3e5 : 1e5);
    set(1, "papi:PAPI_TOT_INS", 1e8);
    e.threads.push_back(th);
  }
  drg::write_experiment(e, argv[1]);
  return 0;
}
