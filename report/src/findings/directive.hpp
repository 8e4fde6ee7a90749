// The OpenMP directive at a region's source line, read from the source file (a "quick parser" in
// the sense of Kappa Pi: enough of the directive to make the advice fit the code). C and C++
// `#pragma omp` lines with their `\` continuations, and Fortran `!$omp` lines with `&`. Nothing
// is guessed: a file that cannot be read, or no directive near the line, gives found = false.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalea/format.hpp"

namespace scalea::cli {

struct Directive {
  bool found = false;
  std::string text;      // the directive as written, continuations joined ("omp for ...")
  std::string schedule;  // the schedule kind as written ("static", "dynamic", ...), "" if none
  std::string chunk;     // the chunk expression, "" if none
  bool nowait = false;
  uint32_t line = 0;       // where the directive starts (1-based)
  uint32_t last_line = 0;  // where it ends (its last continuation line)
};

// The clauses of one directive's text (the part after `#pragma` or `!$`, continuations joined).
Directive parse_directive(const std::string& text);

// The directive that starts on `line` of `file` or on one of the kDirectiveLinesAbove lines before
// it (a loop's region may be placed at its `for` statement, below the pragma).
inline constexpr uint32_t kDirectiveLinesAbove = 3;
Directive directive_at(const std::string& file, uint32_t line);

// The same on the first lines of a file, already read (read_source_lines), with at most
// kContinuationLines continuation lines below the line.
inline constexpr uint32_t kContinuationLines = 16;
Directive directive_in(const std::vector<std::string>& lines, uint32_t line);
// The first `count` lines of a readable source file of at most 16 MiB (fewer at its end; none
// when it cannot be read).
std::vector<std::string> read_source_lines(const std::string& file, size_t count);

// The worksharing construct (`omp for`, `sections`, `single`, Fortran's `do`, `sections`,
// `single`, `workshare`) without nowait whose end the explicit barrier at `line` of `file`
// directly follows, with nothing but blanks and comments between: that construct's own barrier
// already holds every thread there, so this one only adds its cost (statements.cpp). found =
// false when there is none or the source does not say so for sure (unbalanced brackets, a
// construct inside another statement that ends first, no barrier directive at the line).
Directive construct_ending_before(const std::string& file, uint32_t line);

// The serial loops (`for`, `while`) around the directive at `line` of a C or C++ `file`, outermost
// first, inside the innermost `omp parallel` construct the file shows around it (all of them in a
// function whose construct is orphaned): each loop's line and header ("for (j = 1; j <= n;
// j++)"). Empty when there are none, or the file cannot be followed to the line for sure.
struct EnclosingLoop {
  uint32_t line = 0;
  std::string header;
};
std::vector<EnclosingLoop> loops_around(const std::string& file, uint32_t line);

// What one execution of a loop costs, as measured: its iterations, the time one takes on a
// thread, and the threads that share them. iterations == 0: not measured.
struct LoopCost {
  double iterations = 0;  // per execution of the loop (all threads)
  double seconds_per_iteration = 0;
  int threads = 1;
  double chunk = 0;  // iterations per chunk the threads took (dispatches), 0: not measured
};
// A chunk of a dynamic or guided schedule should take at least this long, so that taking it
// from the runtime (well under a microsecond, more when threads contend for the next chunk) costs
// at most a few percent; and a thread should get about kChunksPerThread of them, so that the last
// chunks, which decide when the loop ends, are small against a thread's share.
inline constexpr double kChunkMinSeconds = 20e-6;
inline constexpr int kChunksPerThread = 8;
// The chunk size for a dynamic (or guided) schedule of a loop that costs `c`: kChunksPerThread
// chunks per thread, but not so small that one takes under kChunkMinSeconds; 0 when the cost is
// not measured.
uint64_t suggested_chunk(const LoopCost& c);

// What a loop's barrier wait should advise about the schedule, from the directive and the
// schedule the runtime reported (its subkind, format::LoopSchedule), "" when nothing is known
// beyond the general advice. `where` names the directive ("md.c:88"). With the loop's measured
// cost, a chunk size is named (suggested_chunk) and a chunk too small to pay for taking it said.
std::string schedule_advice(const Directive& d, format::LoopSchedule runtime,
                            const std::string& where, const LoopCost& cost = {});

// Whether a loop hands out chunks too small to pay for taking them: its schedule is dynamic or
// guided (the directive's, else the runtime's) and a chunk (the directive's number, 1 without
// one, else as the threads took them) takes under a quarter of kChunkMinSeconds at `cost`.
bool chunks_too_small(const Directive& d, format::LoopSchedule runtime, const LoopCost& cost);

// The source a finding points at: the directive at or above `line` of `file` (kDirectiveLinesAbove)
// down to `line` and the statement line after the directive (the loop's header, a critical
// section's body), or `line` alone when no directive is there; at most kExcerptLines lines, each
// cut to kExcerptWidth characters. Empty when the file cannot be read or is shorter.
struct SourceLine {
  uint32_t line = 0;
  std::string text;
};
inline constexpr size_t kExcerptLines = 5, kExcerptWidth = 100;
std::vector<SourceLine> source_excerpt(const std::string& file, uint32_t line);

// What a critical section's waits should advise from its body, read after the `critical`
// directive at or above `line` of `file`: a body that is one update of one variable (`s += v`,
// `s = s * v`, `++n`, `if (d > m) m = d`) is named with the construct that does it without the
// lock (atomic, or a reduction); "" for any other body, or when the source cannot be read.
std::string critical_advice(const std::string& file, uint32_t line);

}  // namespace scalea::cli
