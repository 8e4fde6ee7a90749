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

// The phases of the run: each distinct parallel region below the program (outermost only) whose
// work (its threads' time less their waits at its barriers) is at least kPhaseMinShare of the
// threads' time in the whole run and, for an MPI run, the program itself as the ranks' pattern.
std::vector<Phase> program_phases(const drg::MergedTree& t);
inline constexpr double kPhaseMinShare = 0.01;

// The loop a node stands for: the loop itself; for a barrier, the loop it ends (the sibling before
// it at the same source line) or, for the join barrier of a parallel region whose one worksharing
// construct is a loop (`parallel for`, whose loop barrier the join is), that loop;
// format::kNoIndex otherwise.
uint32_t loop_of(const drg::MergedTree& t, uint32_t node);

// loop_of(node) when its iterations signal each other through flush (a pipeline's or wavefront's
// loop: flush regions below it), format::kNoIndex otherwise. Other loops of the same parallel
// region are not a pipeline's (NPB LU's ordinary loops beside its wavefront).
uint32_t pipeline_loop(const drg::MergedTree& t, uint32_t node);

}  // namespace scalea::cli
