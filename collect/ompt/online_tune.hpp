// The on-line tuner's OMPT adapter (SCALEA_TUNE=on, docs/tuning.md "On-line tuning"): at a
// parallel region's begin it gives the encountering thread's run-sched-var the schedule the
// region's tuner (collect/core/online_tuner.hpp) chooses, measures the execution (its wall time,
// each thread's time in its worksharing loops, the loops' reported schedules) and, at the
// region's end, gives the program's own schedule back and tells the tuner what it measured.
// Off (the default), each callback pays one test of g_on.
#pragma once
#include <cstdint>

namespace scalea::collect {
struct ThreadState;
struct Config;
}  // namespace scalea::collect

namespace scalea::collect::online_tune {

// Set once when the runtime starts the tool; read by the callbacks (hidden: a PC-relative load,
// not one through the GOT).
extern bool g_on __attribute__((visibility("hidden")));

// Turns the tuner on when the settings ask for it and it can work (the runtime's
// omp_get_schedule, omp_set_schedule and omp_get_level are found, the work callback is
// registered); says once on stderr when it cannot.
void start(const Config& c, bool work_callback);

// The encountering thread of a parallel region, before the team forks: the region's slot (for
// ParallelRecord::tune), or nullptr when it is not tuned (nested, a league, a full table).
// `region`: the recorder's id of the region (UINT32_MAX when not recorded).
void* parallel_begin(ThreadState& t, const void* codeptr, uint32_t region, bool league);
// The same thread after the join: measure, restore the program's schedule, tell the tuner.
void parallel_end(ThreadState& t, void* slot);
// Any thread of the team: a worksharing construct's begin or end.
void work(ThreadState& t, void* slot, int wstype, bool begin, uint64_t count, const void* codeptr);

}  // namespace scalea::collect::online_tune
