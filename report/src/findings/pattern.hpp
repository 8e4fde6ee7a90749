// The program's pattern, phase by phase (Kappa Pi's first step: recognise the program as a known
// type, then analyse it as that type): fork/join loops, task-parallel, a pipeline of threads that
// signal each other, SPMD with point-to-point exchanges, master/worker. Recognised from the
// measured region graph alone; advice that would break a phase's pattern is not given (a pipeline's
// threads own fixed stages: no dynamic schedule).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalea/drg/cct.hpp"

namespace scalea::cli {

enum class Pattern {
  ForkJoinLoops,
  Tasks,
  Pipeline,
  ThreadParallel,
  SpmdExchange,
  SpmdCollective,
  MasterWorker
};
const char* pattern_name(Pattern p);  // "pipeline", "fork/join loops", ...

struct Phase {
  uint32_t node = 0;  // the phase's region: a parallel region, or the program for MPI
  Pattern pattern = Pattern::ForkJoinLoops;
  std::string
      evidence;  // what shows it, e.g. "threads poll flags with flush in the loop at lu.c:90"
};

// The phases of the run: each distinct parallel region below the program (outermost only) and,
// for an MPI run, the program itself as the ranks' pattern.
std::vector<Phase> program_phases(const drg::MergedTree& t);

// The merged node of the loop at or above `node` whose iterations signal each other through flush
// (the loop of a pipeline or wavefront), format::kNoIndex when there is none.
uint32_t pipeline_loop(const drg::MergedTree& t, uint32_t node);

}  // namespace scalea::cli
