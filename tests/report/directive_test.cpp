// The OpenMP directive at a loop's source line and the schedule advice made from it
// (report/src/findings/directive.cpp): C pragmas with continuations, Fortran sentinels, and no
// advice where nothing is known.
#include "findings/directive.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace scalea::cli {
namespace {

using format::LoopSchedule;

TEST(Directive, ScheduleChunkAndNowait) {
  Directive d = parse_directive("omp for schedule(dynamic, 100) nowait reduction(+:s)");
  EXPECT_TRUE(d.found);
  EXPECT_EQ(d.schedule, "dynamic");
  EXPECT_EQ(d.chunk, "100");
  EXPECT_TRUE(d.nowait);
  d = parse_directive("omp parallel for schedule(monotonic: static , N/(2*p)) num_threads(4)");
  EXPECT_EQ(d.schedule, "static");
  EXPECT_EQ(d.chunk, "N/(2*p)");
  EXPECT_FALSE(d.nowait);
  d = parse_directive("omp parallel for reduction(+: nowait_count)");
  EXPECT_EQ(d.schedule, "");
  EXPECT_FALSE(d.nowait) << "a variable named nowait_count is not the clause";
  EXPECT_EQ(parse_directive("omp for schedule(dynamic").schedule, "") << "unbalanced";
}

// A source file written by the test, under its own temporary name.
struct Source {
  std::string path;
  explicit Source(const std::string& text, const std::string& suffix = "") {
    std::string name = "/tmp/scalea-directive-XXXXXX" + suffix;
    int fd = mkstemps(name.data(), int(suffix.size()));
    path = name;
    std::ofstream(path) << text;
    if (fd >= 0) close(fd);
  }
  ~Source() { std::remove(path.c_str()); }
};

TEST(Directive, FoundAtOrAboveTheLineWithContinuations) {
  Source c(
      "int f(int n) {\n"                   // 1
      "  #  pragma omp parallel for \\\n"  // 2
      "      schedule(guided, 8)\n"        // 3
      "  for (int i = 0; i < n; ++i)\n"    // 4
      "    g(i);\n"                        // 5
      "}\n");                              // 6
  Directive d = directive_at(c.path, 4);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.line, 2u);
  EXPECT_EQ(d.schedule, "guided");
  EXPECT_EQ(d.chunk, "8");
  EXPECT_TRUE(directive_at(c.path, 2).found);
  EXPECT_FALSE(directive_at(c.path, 1).found);
  EXPECT_FALSE(directive_at(c.path, 99).found) << "past the end";
  EXPECT_FALSE(directive_at("/nonexistent/file.c", 4).found);
  Source f(
      "      !$OMP PARALLEL DO SCHEDULE(DYNAMIC,CHUNK) &\n"
      "      !$OMP& PRIVATE(I)\n"
      "      DO I = 1, N\n");
  d = directive_at(f.path, 3);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.schedule, "dynamic");
  EXPECT_EQ(d.chunk, "CHUNK") << "the expression keeps its case";
  EXPECT_NE(d.text.find("PRIVATE(I)"), std::string::npos) << d.text;
}

TEST(Directive, AdviceFitsTheSchedule) {
  auto advice = [](const std::string& text, LoopSchedule runtime = LoopSchedule::Unknown) {
    Directive d = text.empty() ? Directive{} : parse_directive(text);
    return schedule_advice(d, runtime, "md.c:88");
  };
  std::string a = advice("omp for schedule(dynamic,100)");
  EXPECT_EQ(a.rfind("the loop is already schedule(dynamic, 100) (md.c:88)", 0), 0u) << a;
  EXPECT_NE(a.find("smaller chunks"), std::string::npos) << a;
  EXPECT_EQ(a.find("try schedule(dynamic"), std::string::npos) << a;
  a = advice("omp for schedule(dynamic)");
  EXPECT_NE(a.find("single iterations"), std::string::npos) << a;
  a = advice("omp for schedule(static)");
  EXPECT_NE(a.find("try schedule(dynamic, C)"), std::string::npos) << a;
  a = advice("omp parallel for");
  EXPECT_NE(a.find("no schedule clause"), std::string::npos) << a;
  a = advice("omp for schedule(runtime)");
  EXPECT_NE(a.find("OMP_SCHEDULE"), std::string::npos) << a;
  // Without the source, the runtime's word for a dynamic loop; nothing else is guessed.
  a = advice("", LoopSchedule::Dynamic);
  EXPECT_EQ(a.rfind("the loop is already schedule(dynamic) (md.c:88)", 0), 0u) << a;
  EXPECT_EQ(advice(""), "");
  EXPECT_EQ(advice("", LoopSchedule::Static), "");
  EXPECT_EQ(advice("omp parallel"), "") << "not a loop";
}

// The source under a finding: the directive with its continuations down to the region's line and
// the statement after the directive; the line alone without a directive; nothing unreadable.
TEST(Directive, SourceExcerptOfAFinding) {
  Source c(
      "int f(int n) {\n"                   // 1
      "  #  pragma omp parallel for \\\n"  // 2
      "      schedule(guided, 8)\n"        // 3
      "  for (int i = 0; i < n; ++i)\n"    // 4
      "    g(i);\n"                        // 5
      "  MPI_Barrier(comm);\n"             // 6
      "}\n");                              // 7
  auto lines = [](const std::vector<SourceLine>& x) {
    std::string s;
    for (const SourceLine& l : x) s += std::to_string(l.line) + ":" + l.text + "|";
    return s;
  };
  EXPECT_EQ(lines(source_excerpt(c.path, 2)),
            "2:  #  pragma omp parallel for \\|3:      schedule(guided, 8)|4:  for (int i = 0; i < "
            "n; ++i)|");
  EXPECT_EQ(lines(source_excerpt(c.path, 4)), lines(source_excerpt(c.path, 2)))
      << "a loop placed at its for line shows its directive";
  EXPECT_EQ(lines(source_excerpt(c.path, 6)), "6:  MPI_Barrier(comm);|");
  EXPECT_TRUE(source_excerpt(c.path, 99).empty()) << "past the end";
  EXPECT_TRUE(source_excerpt("/nonexistent/file.c", 4).empty());
}

// The chunk named for a dynamic schedule: about kChunksPerThread chunks per thread, none so small
// that taking it costs more than a few percent of it; nothing when the cost is not measured.
TEST(Directive, ChunkFromTheMeasuredCost) {
  EXPECT_EQ(suggested_chunk({}), 0u);
  // 24 iterations of 4 ms on 2 threads: single iterations already take long.
  EXPECT_EQ(suggested_chunk({24, 4e-3, 2}), 1u);
  // A million iterations of 5 ns: 20 us / 5 ns = 4,000 iterations per chunk.
  EXPECT_EQ(suggested_chunk({1e6, 5e-9, 2}), 4000u);
  // 10,000 iterations of 5 ns: 8 chunks per thread wins (625), even under 20 us each.
  EXPECT_EQ(suggested_chunk({1e4, 5e-9, 2}), 625u);
  // The advice names it, with the time of a chunk.
  std::string a = schedule_advice(parse_directive("omp parallel for"), LoopSchedule::Static,
                                  "md.c:88", {24, 4e-3, 2});
  EXPECT_NE(a.find("try schedule(dynamic, 1) (1 iteration takes about 4.0 ms here"),
            std::string::npos)
      << a;
  a = schedule_advice(parse_directive("omp for schedule(runtime)"), LoopSchedule::Static, "md.c:88",
                      {1e6, 5e-9, 2});
  EXPECT_NE(a.find("OMP_SCHEDULE=dynamic,4000"), std::string::npos) << a;
}

// A dynamic loop whose chunks take less than taking one costs: larger chunks, never "dynamic".
TEST(Directive, ChunksTooSmallAreAdvisedLarger) {
  const LoopCost cheap{1e6, 5e-9, 2};
  const Directive single = parse_directive("omp for schedule(dynamic)");
  EXPECT_TRUE(chunks_too_small(single, LoopSchedule::Dynamic, cheap));
  EXPECT_TRUE(chunks_too_small(parse_directive("omp for schedule(guided, 4)"), LoopSchedule::Guided,
                               cheap));
  EXPECT_FALSE(chunks_too_small(parse_directive("omp for schedule(dynamic, 4000)"),
                                LoopSchedule::Dynamic, cheap));
  EXPECT_FALSE(
      chunks_too_small(parse_directive("omp for schedule(static)"), LoopSchedule::Static, cheap))
      << "static chunks are not taken from the runtime";
  EXPECT_FALSE(chunks_too_small(single, LoopSchedule::Dynamic, {24, 4e-3, 2}));
  // An expression: the chunk as the threads took them (dispatches).
  LoopCost taken = cheap;
  taken.chunk = 2;
  EXPECT_TRUE(chunks_too_small(parse_directive("omp for schedule(dynamic, c)"),
                               LoopSchedule::Dynamic, taken));
  std::string a = schedule_advice(single, LoopSchedule::Dynamic, "md.c:88", cheap);
  EXPECT_EQ(a.rfind("the loop is already schedule(dynamic) (md.c:88)", 0), 0u) << a;
  EXPECT_NE(a.find("chunks of 1 iteration take about 5.0 ns each"), std::string::npos) << a;
  EXPECT_NE(a.find("give larger chunks, schedule(dynamic, 4000)"), std::string::npos) << a;
}

TEST(Directive, CriticalAroundOneUpdate) {
  Source c(
      "#pragma omp critical\n"             // 1
      "  sum += v;  // the update\n"       // 2
      "#pragma omp critical(name)\n"       // 3
      "  {\n"                              // 4
      "    n++;\n"                         // 5
      "  }\n"                              // 6
      "#pragma omp critical\n"             // 7
      "  if (d > longest) longest = d;\n"  // 8
      "#pragma omp critical\n"             // 9
      "  { a = a * x;\n"                   // 10
      "    b += 1; }\n"                    // 11
      "#pragma omp critical\n"             // 12
      "  p.count = p.count + 1;\n"         // 13
      "#pragma omp barrier\n");            // 14
  std::string a = critical_advice(c.path, 1);
  EXPECT_NE(a.find("guards one update, `sum += v`"), std::string::npos) << a;
  EXPECT_NE(a.find("#pragma omp atomic"), std::string::npos) << a;
  EXPECT_NE(a.find("reduction(+: sum)"), std::string::npos) << a;
  a = critical_advice(c.path, 3);
  EXPECT_NE(a.find("`n++`"), std::string::npos) << a;
  EXPECT_NE(a.find("reduction(+: n)"), std::string::npos) << a;
  a = critical_advice(c.path, 7);
  EXPECT_NE(a.find("guards one maximum"), std::string::npos) << a;
  EXPECT_NE(a.find("reduction(max: longest)"), std::string::npos) << a;
  EXPECT_EQ(critical_advice(c.path, 9), "") << "two statements";
  a = critical_advice(c.path, 12);
  EXPECT_NE(a.find("`p.count = p.count + 1`"), std::string::npos) << a;
  EXPECT_EQ(a.find("reduction("), std::string::npos) << "a member is no reduction variable: " << a;
  EXPECT_EQ(critical_advice(c.path, 14), "") << "not a critical section";
  EXPECT_EQ(critical_advice("/nonexistent.c", 1), "");
}

}  // namespace
}  // namespace scalea::cli

namespace scalea::cli {
namespace {

// An explicit barrier right after the end of a worksharing construct without nowait is redundant
// (NPB CG's cg.c:494 after `omp for reduction(+:d)`); after nowait, masked, a loop around the
// construct or an unbraced `if`, it is not, or the source does not say so for sure.
TEST(Directive, BarrierRightAfterAConstructsOwnBarrier) {
  Source c(
      "void f(int n, double* a, double* b) {\n"              // 1
      "#pragma omp for reduction(+:d)\n"                     // 2
      "  for (int j = 1; j <= n; j++) {\n"                   // 3
      "    d = d + a[j] * b[j]; /* } not code */\n"          // 4
      "  }\n"                                                // 5
      "/* a comment between */\n"                            // 6
      "\n"                                                   // 7
      "#pragma omp barrier\n"                                // 8
      "#pragma omp for nowait\n"                             // 9
      "  for (int j = 0; j < n; j++) b[j] = g(\"};\");\n"    // 10
      "#pragma omp barrier\n"                                // 11
      "#pragma omp masked\n"                                 // 12
      "  n = 2;\n"                                           // 13
      "#pragma omp barrier\n"                                // 14
      "  for (int m = 0; m < 5; m++) {\n"                    // 15
      "#pragma omp for\n"                                    // 16
      "    for (int j = 0; j < n; j++) a[j] = m;\n"          // 17
      "  }\n"                                                // 18
      "#pragma omp barrier\n"                                // 19
      "#pragma omp single\n"                                 // 20
      "  { if (n) a[0] = 1; else { a[1] = 2; } }\n"          // 21
      "#pragma omp barrier\n"                                // 22
      "  if (n > 3)\n"                                       // 23
      "#pragma omp for\n"                                    // 24
      "    for (int j = 0; j < n; j++) a[j] = 0;\n"          // 25
      "#pragma omp barrier\n"                                // 26
      "#pragma omp for\n"                                    // 27
      "  for (int j = 0; j < n; j++)\n"                      // 28
      "    for (int k = 0; k < n; k++)\n"                    // 29
      "      if (a[k] > 0) b[j] += a[k]; else b[j] -= 1;\n"  // 30
      "  n = 3;\n"                                           // 31
      "#pragma omp barrier\n"                                // 32
      "}\n");
  Directive d = construct_ending_before(c.path, 8);
  ASSERT_TRUE(d.found) << "after omp for, comments between";
  EXPECT_EQ(d.line, 2u);
  EXPECT_FALSE(construct_ending_before(c.path, 11).found) << "after omp for nowait";
  EXPECT_FALSE(construct_ending_before(c.path, 14).found) << "after masked (no barrier)";
  EXPECT_FALSE(construct_ending_before(c.path, 19).found) << "after the loop around omp for";
  d = construct_ending_before(c.path, 22);
  EXPECT_TRUE(d.found && d.line == 20u) << "after single's block";
  EXPECT_FALSE(construct_ending_before(c.path, 26).found) << "omp for under an unbraced if";
  EXPECT_FALSE(construct_ending_before(c.path, 32).found) << "a statement between";
  EXPECT_FALSE(construct_ending_before(c.path, 2).found) << "no barrier at the line";
  EXPECT_FALSE(construct_ending_before("/no/such/file.c", 8).found);

  Source f(
      "subroutine s(n, a)\n"   // 1
      "!$omp do\n"             // 2
      "  do i = 1, n\n"        // 3
      "    a(i) = i\n"         // 4
      "  end do\n"             // 5
      "!$omp end do\n"         // 6
      "! a comment\n"          // 7
      "!$omp barrier\n"        // 8
      "!$omp do\n"             // 9
      "  do i = 1, n\n"        // 10
      "    a(i) = 2 * i\n"     // 11
      "  end do\n"             // 12
      "!$OMP END DO NOWAIT\n"  // 13
      "!$omp barrier\n"        // 14
      "end subroutine\n",
      ".f90");
  d = construct_ending_before(f.path, 8);
  EXPECT_TRUE(d.found && d.line == 6u) << "after end do";
  EXPECT_FALSE(construct_ending_before(f.path, 14).found) << "after end do nowait";
}

}  // namespace
}  // namespace scalea::cli

namespace scalea::cli {
namespace {

// The serial loops around a worksharing directive (NPB SP's lhsx: `#pragma omp for` inside
// `for (j)` and `for (k)`), bounded by the `omp parallel` around them; a worksharing loop's own
// header, loops closed before the line and commented-out code are none of them.
TEST(Directive, SerialLoopsAroundADirective) {
  Source c(
      "void f(int n, double* a) {\n"                         // 1
      "  for (int j = 0; j < n; j++) {\n"                    // 2
      "    /* for (int x = 0; x < n; x++) { */\n"            // 3
      "    for (int k = 0; k < n; k++)\n"                    // 4
      "      {\n"                                            // 5
      "#pragma omp for\n"                                    // 6
      "        for (int i = 0; i < n; i++) a[i] = \"{\";\n"  // 7
      "      }\n"                                            // 8
      "  }\n"                                                // 9
      "  for (int m = 0; m < 5; m++) g(m);\n"                // 10
      "  while (n > 0)\n"                                    // 11
      "#pragma omp for\n"                                    // 12
      "    for (int i = 0; i < n; i++) a[i] = 0;\n"          // 13
      "#pragma omp parallel for\n"                           // 14
      "  for (int r = 0; r < n; r++) {\n"                    // 15
      "    h(r);\n"                                          // 16
      "  }\n"                                                // 17
      "  for (int r = 0; r < n; r++) {\n"                    // 18
      "#pragma omp parallel\n"                               // 19
      "    {\n"                                              // 20
      "#pragma omp for\n"                                    // 21
      "      for (int i = 0; i < n; i++) a[i] = 1;\n"        // 22
      "    }\n"                                              // 23
      "  }\n"                                                // 24
      "}\n");
  std::vector<EnclosingLoop> l = loops_around(c.path, 6);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].line, 2u);
  EXPECT_EQ(l[0].header, "for (int j = 0; j < n; j++)");
  EXPECT_EQ(l[1].line, 4u);
  l = loops_around(c.path, 12);
  ASSERT_EQ(l.size(), 1u) << "the unbraced while, not the closed loops";
  EXPECT_EQ(l[0].header, "while (n > 0)");
  EXPECT_TRUE(loops_around(c.path, 16).empty()) << "inside a parallel for's own loop";
  EXPECT_TRUE(loops_around(c.path, 21).empty()) << "the loop around the parallel construct";
  EXPECT_TRUE(loops_around("/no/such/file.c", 6).empty());
}

}  // namespace
}  // namespace scalea::cli
