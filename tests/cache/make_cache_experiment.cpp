// Writes a literal experiment with L2 cache counters (this machine has none to measure): one
// parallel region on 4 threads where the master's L2 miss ratio is 0.30 and the workers' 0.10,
// as in the SCALEA paper's Figure 6. Usage: make_cache_experiment DIR
// With `mpi` after DIR: two MPI ranks of one thread whose only region is MPI_Allreduce, counted
// with the software events perf::TASK-CLOCK (ns: 1157131950 and 578565975) and
// perf::PAGE-FAULTS (126250 and 1234567); the program root reads none of its own.
#include <iostream>
#include <string>

#include "scalea/drg/encode.hpp"
#include "scalea/drg/experiment.hpp"

using namespace scalea;

namespace {

drg::Experiment with_metrics(std::initializer_list<const char*> counters) {
  drg::Experiment e;
  e.meta = {{"format", "scalea-experiment"}, {"format_version", 1}, {"complete", true}};
  for (const auto& m : format::kCoreMetrics) {
    e.metrics.push_back(m.name);
    e.metric_merge.push_back(m.merge);
    e.metric_type.push_back(m.type);
  }
  for (const char* c : counters) {
    e.metrics.push_back(c);
    e.metric_merge.push_back(format::MetricMerge::Sum);
    e.metric_type.push_back(format::MetricType::U64);
  }
  e.metrics_defined = true;
  return e;
}

void write_mpi(const char* dir) {
  drg::Experiment e = with_metrics({"papi:perf::TASK-CLOCK", "papi:perf::PAGE-FAULTS"});
  drg::Region prog, allreduce;
  prog.kind = drg::RegionKind::Program;
  prog.name = "halo";
  allreduce.kind = drg::RegionKind::Mpi;
  allreduce.name = "MPI_Allreduce";
  allreduce.file = "halo.c";
  allreduce.line = 40;
  e.regions = {prog, allreduce};
  for (int32_t rank = 0; rank < 2; ++rank) {
    drg::ThreadTree th;
    th.rank = rank;
    th.flags = format::kThreadInitial;
    th.parent = {format::kNoIndex, 0};
    th.region = {0, 1};
    th.values.assign(2 * e.metrics.size(), 0.0);
    auto set = [&](uint32_t node, const char* name, double v) {
      th.values[node * e.metrics.size() + size_t(e.metric(name))] = v;
    };
    set(0, "visits", 1);
    set(0, "time", 3e9);
    set(1, "visits", 10);
    set(1, "time", 2e9);
    set(1, "papi:perf::TASK-CLOCK", rank == 0 ? 1157131950 : 578565975);
    set(1, "papi:perf::PAGE-FAULTS", rank == 0 ? 126250 : 1234567);
    e.threads.push_back(th);
  }
  drg::write_experiment(e, dir);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[2]) == "mpi") {
    write_mpi(argv[1]);
    return 0;
  }
  if (argc != 2) {
    std::cerr << "usage: make_cache_experiment DIR [mpi]\n";
    return 2;
  }
  drg::Experiment e = with_metrics({"papi:PAPI_L2_DCM", "papi:PAPI_L2_DCA", "papi:PAPI_TOT_INS"});
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
