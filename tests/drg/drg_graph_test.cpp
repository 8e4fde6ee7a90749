// unit.drg: merges of small literal graphs whose result is known, the region graph, inclusive /
// exclusive values, the decomposition and the queries.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/graph/graph_utility.hpp>

#include "drg_builder.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/graph.hpp"

namespace scalea::drg {
namespace {

using test::Builder;
using K = RegionKind;

// Vertex of the merged tree at this label path ("main/parallel/loop"), or -1.
int at(const Drg& d, std::initializer_list<const char*> labels) {
  uint32_t v = 0;
  auto it = labels.begin();
  if (d.region_of(0).label() != *it) return -1;
  for (++it; it != labels.end(); ++it) {
    bool found = false;
    for (uint32_t c : d.children(v))
      if (d.region_of(c).label() == *it) {
        v = c;
        found = true;
        break;
      }
    if (!found) return -1;
  }
  return int(v);
}

TEST(ThreadGraph, VerticesAreNodesEdgesGoParentToChild) {
  Builder b;
  uint32_t prog = b.region(K::Program, "main"), par = b.region(K::Parallel, "", 0, "md.c", 10, 0x10),
           loop = b.region(K::Loop, "", 1, "md.c", 12, 0x20);
  uint32_t t = b.thread(-1, 0, prog);
  uint32_t p = b.node(t, 0, par);
  b.node(t, p, loop);
  b.node(t, 0, loop);
  CctGraph g = thread_graph(b.e.threads[t]);
  ASSERT_EQ(boost::num_vertices(g), 4u);
  ASSERT_EQ(boost::num_edges(g), 3u);
  EXPECT_TRUE(boost::edge(0, 1, g).second);
  EXPECT_TRUE(boost::edge(1, 2, g).second);
  EXPECT_TRUE(boost::edge(0, 3, g).second);
  EXPECT_EQ(g[2].region, loop);
  EXPECT_EQ(g[2].depth, 2u);
  EXPECT_EQ(g[3].depth, 1u);
}

// Two threads of one process: same call paths fold, a path only one thread ran stays.
Builder two_threads() {
  Builder b;
  uint32_t prog = b.region(K::Program, "main"), par = b.region(K::Parallel, "", 0, "md.c", 10, 0x10),
           loop = b.region(K::Loop, "", 1, "md.c", 12, 0x20),
           bar = b.region(K::BarrierImplicit, "", 2, "md.c", 10, 0x10);
  uint32_t t0 = b.thread(-1, 0, prog, {{"visits", 1}, {"time", 1000}});
  uint32_t p0 = b.node(t0, 0, par, {{"visits", 2}, {"time", 800}, {"time_min", 300}, {"time_max", 500}, {"team_size", 4}});
  b.node(t0, p0, loop, {{"visits", 2}, {"time", 600}, {"time_min", 250}, {"time_max", 350}});
  uint32_t t1 = b.thread(-1, 1, prog, {{"visits", 1}, {"time", 700}});
  uint32_t p1 = b.node(t1, 0, par, {{"visits", 2}, {"time", 650}, {"time_min", 200}, {"time_max", 450}});
  b.node(t1, p1, bar, {{"visits", 2}, {"time", 90}, {"wait", 80}});  // bar before loop here
  b.node(t1, p1, loop, {{"visits", 0}, {"time", 0}, {"time_min", 0}, {"time_max", 0}});
  return b;
}

TEST(Merge, ThreadsFoldByCallPathWithRulePerMetric) {
  Builder b = two_threads();
  Drg d(b.e);
  ASSERT_EQ(d.size(), 4u);  // main, parallel, loop, barrier
  int par = at(d, {"main", "parallel"}), loop = at(d, {"main", "parallel", "loop (static)"}),
      bar = at(d, {"main", "parallel", "barrier (implicit, join)"});
  ASSERT_GE(par, 0);
  ASSERT_GE(loop, 0);
  ASSERT_GE(bar, 0);
  EXPECT_EQ(d.children(uint32_t(par)).size(), 2u);
  const int visits = d.metric("visits"), time = d.metric("time"), tmin = d.metric("time_min"),
            tmax = d.metric("time_max"), wait = d.metric("wait");
  // Sum metrics add up.
  EXPECT_DOUBLE_EQ(d.value(0, time), 1700);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), time), 1450);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), visits), 4);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(bar), wait), 80);
  // Min and max by their rule; min skips a source with no completed visit (stored 0).
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), tmin), 200);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), tmax), 500);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(loop), tmin), 250);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(loop), tmax), 350);
  // Per-thread values, and the old -> new map.
  auto pt = d.per_thread(uint32_t(par), time);
  ASSERT_EQ(pt.size(), 2u);
  EXPECT_EQ(pt[0], (std::pair<uint32_t, double>{0, 800}));
  EXPECT_EQ(pt[1], (std::pair<uint32_t, double>{1, 650}));
  EXPECT_EQ(d.per_thread(uint32_t(bar), time).size(), 1u);
  EXPECT_EQ(d.map(0, 2), uint32_t(loop));
  EXPECT_EQ(d.map(1, 3), uint32_t(loop));
  EXPECT_EQ(d.map(1, 2), uint32_t(bar));
  EXPECT_DOUBLE_EQ(d.sum(uint32_t(par), tmax), 950);
  EXPECT_DOUBLE_EQ(d.mean(uint32_t(par), time), 725);

  // The existing MergedTree agrees on structure and sums.
  MergedTree mt(b.e);
  ASSERT_EQ(mt.nodes().size(), d.size());
  EXPECT_DOUBLE_EQ(mt.sum(1, b.e.metric("time")), d.value(1, time));
}

// Two ranks of two threads each.
Builder two_ranks() {
  Builder b;
  uint32_t prog = b.region(K::Program, "main"), send = b.region(K::Mpi, "MPI_Send", 0),
           recv = b.region(K::Mpi, "MPI_Recv", 0), par = b.region(K::Parallel, "", 0, "h.c", 5, 0x50);
  for (int32_t rank : {0, 1})
    for (uint32_t th : {0u, 1u}) {
      double base = 100 * (rank + 1) + 10 * th;
      uint32_t t = b.thread(rank, th, prog, {{"visits", 1}, {"time", base * 10}});
      b.node(t, 0, par, {{"visits", 1}, {"time", base}, {"time_max", base}, {"time_min", base}});
      if (th == 0) b.node(t, 0, rank == 0 ? send : recv, {{"visits", 3}, {"time", 7.0 + rank}});
    }
  return b;
}

TEST(Merge, RanksKeepPerRankValues) {
  Builder b = two_ranks();
  Drg d(b.e);
  ASSERT_EQ(d.size(), 4u);  // main, parallel, MPI_Send, MPI_Recv
  EXPECT_EQ(d.streams().size(), 4u);
  int par = at(d, {"main", "parallel"});
  ASSERT_GE(par, 0);
  const int time = d.metric("time"), tmax = d.metric("time_max"), tmin = d.metric("time_min");
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), time), 100 + 110 + 200 + 210);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), tmax), 210);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), tmin), 100);
  auto pr = d.per_rank(uint32_t(par), time);
  ASSERT_EQ(pr.size(), 2u);
  EXPECT_EQ(pr[0].rank, 0);
  EXPECT_DOUBLE_EQ(pr[0].value, 210);
  EXPECT_EQ(pr[0].threads, 2u);
  EXPECT_DOUBLE_EQ(pr[1].value, 410);
  auto prmax = d.per_rank(uint32_t(par), tmax);  // max rule within each rank
  EXPECT_DOUBLE_EQ(prmax[0].value, 110);
  EXPECT_DOUBLE_EQ(prmax[1].value, 210);
  int send = at(d, {"main", "MPI_Send"});
  ASSERT_GE(send, 0);
  auto ps = d.per_rank(uint32_t(send), time);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].rank, 0);

  // The rank level of the merge: one rank's threads only.
  Drg r1(b.e, Scope{std::nullopt, 1, std::nullopt});
  EXPECT_EQ(r1.size(), 3u);  // no MPI_Send on rank 1
  EXPECT_DOUBLE_EQ(r1.value(uint32_t(at(r1, {"main", "parallel"})), time), 410);
  // The thread level: thread 1 of every rank.
  Drg t1(b.e, Scope{std::nullopt, std::nullopt, 1u});
  EXPECT_EQ(t1.size(), 2u);
  EXPECT_DOUBLE_EQ(t1.value(uint32_t(at(t1, {"main", "parallel"})), time), 110 + 210);
}

TEST(Merge, RunsUnifyRegionsByIdentityAndKeepPerRunValues) {
  // Run A (p=1) and run B (p=2) define the same regions in a different order, and B adds one.
  Builder a({"visits", "time", "time_max"}, "runA");
  uint32_t ap = a.region(K::Program, "main"), aloop = a.region(K::Loop, "", 1, "x.c", 3, 0x30),
           apar = a.region(K::Parallel, "", 0, "x.c", 2, 0x20);
  a.e.meta["max_team_size"] = 1;
  uint32_t ta = a.thread(-1, 0, ap, {{"time", 1000}});
  uint32_t n = a.node(ta, 0, apar, {{"visits", 1}, {"time", 900}, {"time_max", 900}});
  a.node(ta, n, aloop, {{"visits", 1}, {"time", 800}, {"time_max", 800}});

  Builder bb({"visits", "time", "time_max", "wait"}, "runB");
  uint32_t bpar = bb.region(K::Parallel, "", 0, "x.c", 2, 0x20), bp = bb.region(K::Program, "main"),
           bbar = bb.region(K::BarrierImplicit, "", 2, "x.c", 2, 0x20),
           bloop = bb.region(K::Loop, "", 1, "x.c", 3, 0x30);
  for (uint32_t th : {0u, 1u}) {
    uint32_t t = bb.thread(-1, th, bp, {{"time", 600}});
    uint32_t q = bb.node(t, 0, bpar, {{"visits", 1}, {"time", 500.0 + th}, {"time_max", 500.0 + th}});
    bb.node(t, q, bloop, {{"visits", 1}, {"time", 400}, {"time_max", 400}});
    bb.node(t, q, bbar, {{"visits", 1}, {"time", 50}, {"wait", 40}});
  }
  Drg d({&a.e, &bb.e});
  ASSERT_EQ(d.runs().size(), 2u);
  EXPECT_EQ(d.runs()[0].p, 1);
  EXPECT_EQ(d.runs()[1].p, 2);
  EXPECT_EQ(d.regions().size(), 4u);
  EXPECT_EQ(d.size(), 4u);
  ASSERT_EQ(d.metrics().size(), 4u);  // union: visits, time, time_max, wait
  int par = at(d, {"main", "parallel"}), loop = at(d, {"main", "parallel", "loop (static)"});
  ASSERT_GE(par, 0);
  ASSERT_GE(loop, 0);
  const int time = d.metric("time"), tmax = d.metric("time_max"), wait = d.metric("wait");
  EXPECT_DOUBLE_EQ(d.value(uint32_t(loop), time), 800 + 400 + 400);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(loop), time, 0), 800);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(loop), time, 1), 800);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), tmax), 900);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(par), tmax, 1), 501);
  int bar = at(d, {"main", "parallel", "barrier (implicit, join)"});
  ASSERT_GE(bar, 0);
  EXPECT_DOUBLE_EQ(d.value(uint32_t(bar), wait, 0), 0);  // run A has no such column
  EXPECT_DOUBLE_EQ(d.value(uint32_t(bar), wait, 1), 80);
  // Canonical keys are equal across runs: each run alone yields the same key for the loop.
  Drg da(a.e), db(bb.e);
  int la = at(da, {"main", "parallel", "loop (static)"}), lb = at(db, {"main", "parallel", "loop (static)"});
  EXPECT_EQ(da.key(uint32_t(la)), db.key(uint32_t(lb)));
  EXPECT_EQ(d.key(uint32_t(loop)), da.key(uint32_t(la)));
  EXPECT_EQ(d.find_key(d.key(uint32_t(loop))), std::optional<uint32_t>(uint32_t(loop)));
  EXPECT_EQ(d.find_key("nope"), std::nullopt);
  // Old -> new across runs: stream 0 is run A's thread, streams 1, 2 run B's.
  EXPECT_EQ(d.streams()[0].run, 0u);
  EXPECT_EQ(d.streams()[2].run, 1u);
  EXPECT_EQ(d.map(0, 2), uint32_t(loop));
  EXPECT_EQ(d.map(2, 2), uint32_t(loop));
  // Only run B: a fresh graph without A.
  Drg only_b({&a.e, &bb.e}, Scope{1u, std::nullopt, std::nullopt});
  EXPECT_DOUBLE_EQ(only_b.value(uint32_t(at(only_b, {"main", "parallel", "loop (static)"})), time), 800);
}

TEST(RegionGraph, RecursionMakesCyclesCountedOnce) {
  // main -> f -> g -> f -> g, and main -> g: f and g recurse through each other.
  Builder b;
  uint32_t prog = b.region(K::Program, "main"), f = b.region(K::Function, "f", 0, "r.c", 1, 0x1),
           g = b.region(K::Function, "g", 0, "r.c", 9, 0x9);
  uint32_t t = b.thread(-1, 0, prog, {{"visits", 1}, {"time", 100}});
  uint32_t f1 = b.node(t, 0, f, {{"visits", 1}, {"time", 80}});
  uint32_t g1 = b.node(t, f1, g, {{"visits", 1}, {"time", 60}});
  uint32_t f2 = b.node(t, g1, f, {{"visits", 2}, {"time", 40}});
  b.node(t, f2, g, {{"visits", 2}, {"time", 10}});
  b.node(t, 0, g, {{"visits", 1}, {"time", 15}});
  Drg d(b.e);
  EXPECT_EQ(d.size(), 6u);  // the CCT keeps every calling context
  RegionGraph rg(d);
  const auto& G = rg.graph();
  ASSERT_EQ(boost::num_vertices(G), 3u);
  uint32_t vm = *rg.vertex(prog), vf = *rg.vertex(f), vg = *rg.vertex(g);
  EXPECT_EQ(boost::num_edges(G), 4u);  // main->f, f->g, g->f, main->g
  auto fg = boost::edge(vf, vg, G), gf = boost::edge(vg, vf, G), mg = boost::edge(vm, vg, G);
  ASSERT_TRUE(fg.second && gf.second && mg.second);
  EXPECT_DOUBLE_EQ(G[fg.first].visits, 3);  // g inside f: 1 + 2
  EXPECT_EQ(G[fg.first].contexts, 2u);
  EXPECT_DOUBLE_EQ(G[gf.first].visits, 2);
  EXPECT_TRUE(rg.has_cycles());
  ASSERT_EQ(rg.back_edges().size(), 1u);
  EXPECT_TRUE(G[gf.first].back);  // DFS from main reaches f first: g -> f closes the cycle
  EXPECT_TRUE(G[vf].recursive);
  EXPECT_TRUE(G[vg].recursive);
  EXPECT_FALSE(G[vm].recursive);
  const int time = d.metric("time"), visits = d.metric("visits");
  // Inclusive time: outermost instances only (f: 80; g: 60 inside f plus 15 under main).
  EXPECT_DOUBLE_EQ(G[vf].inclusive[size_t(time)], 80);
  EXPECT_DOUBLE_EQ(G[vg].inclusive[size_t(time)], 75);
  // Exclusive time sums over every context: f: (80-60) + (40-10); g: (60-40) + 10 + 15.
  EXPECT_DOUBLE_EQ(G[vf].exclusive[size_t(time)], 50);
  EXPECT_DOUBLE_EQ(G[vg].exclusive[size_t(time)], 45);
  EXPECT_DOUBLE_EQ(G[vf].exclusive[size_t(visits)], 3);
  // Decomposition of f over its outermost context: 60 in g, no start/end, 20 remain.
  Decomposition dec = rg.decompose(vf);
  EXPECT_DOUBLE_EQ(dec.total, 80);
  EXPECT_DOUBLE_EQ(dec.subregions, 60);
  EXPECT_DOUBLE_EQ(dec.remainder, 20);
}

TEST(RegionGraph, SelfRecursionIsASelfLoop) {
  Builder b;
  uint32_t prog = b.region(K::Program, "main"), f = b.region(K::Function, "fib", 0, "f.c", 1, 0x1);
  uint32_t t = b.thread(-1, 0, prog);
  uint32_t p = 0;
  for (int i = 0; i < 5; ++i) p = b.node(t, p, f, {{"visits", 1}, {"time", 50.0 - 10 * i}});
  Drg d(b.e);
  RegionGraph rg(d);
  uint32_t vf = *rg.vertex(f);
  auto self = boost::edge(vf, vf, rg.graph());
  ASSERT_TRUE(self.second);
  EXPECT_DOUBLE_EQ(rg.graph()[self.first].visits, 4);
  EXPECT_TRUE(rg.graph()[self.first].back);
  EXPECT_TRUE(rg.graph()[vf].recursive);
  EXPECT_DOUBLE_EQ(rg.graph()[vf].inclusive[size_t(d.metric("time"))], 50);
  EXPECT_DOUBLE_EQ(rg.graph()[vf].exclusive[size_t(d.metric("time"))], 50);  // 10 per level
}

TEST(Values, InclusiveAndExclusive) {
  Builder b = two_threads();
  Drg d(b.e);
  const int time = d.metric("time"), visits = d.metric("visits"), wait = d.metric("wait"),
            tmax = d.metric("time_max");
  uint32_t par = uint32_t(at(d, {"main", "parallel"}));
  // time is measured inclusive: exclusive subtracts the children (loop 600, barrier 90).
  EXPECT_DOUBLE_EQ(d.inclusive(par, time), 1450);
  EXPECT_DOUBLE_EQ(d.exclusive(par, time), 1450 - 600 - 90);
  EXPECT_DOUBLE_EQ(d.exclusive(0, time), 1700 - 1450);
  // visits and wait are the node's own: inclusive sums the subtree.
  EXPECT_DOUBLE_EQ(d.exclusive(par, visits), 4);
  EXPECT_DOUBLE_EQ(d.inclusive(par, visits), 4 + 2 + 2);
  EXPECT_DOUBLE_EQ(d.inclusive(0, wait), 80);
  EXPECT_DOUBLE_EQ(d.inclusive_all(visits)[0], 2 + 8);
  // max metrics: both are the value.
  EXPECT_DOUBLE_EQ(d.inclusive(par, tmax), d.exclusive(par, tmax));
}

// A user region enclosing a parallel region: the master enters both; the worker holds the user
// region's call path (visits 0, time 0) only as the path to the parallel region it ran in.
TEST(Values, AThreadThatOnlyHoldsAPathCoversItsChildren) {
  Builder b;
  uint32_t prog = b.region(K::Program, "main"), user = b.region(K::User, "phase", 0, "u.c", 5),
           par = b.region(K::Parallel, "", 0, "u.c", 8, 0x10);
  uint32_t t0 = b.thread(-1, 0, prog, {{"visits", 1}, {"time", 1000}});
  uint32_t u0 = b.node(t0, 0, user, {{"visits", 1}, {"time", 900}});
  b.node(t0, u0, par, {{"visits", 1}, {"time", 600}});
  uint32_t t1 = b.thread(-1, 1, prog, {{"visits", 1}, {"time", 1000}});
  uint32_t u1 = b.node(t1, 0, user, {{"visits", 0}, {"time", 0}});
  b.node(t1, u1, par, {{"visits", 1}, {"time", 600}});
  Drg d(b.e);
  const int time = d.metric("time");
  ASSERT_EQ(d.regions_named("phase").size(), 1u);
  const uint32_t user_region = d.regions_named("phase")[0];
  ASSERT_EQ(d.vertices_of(user_region).size(), 1u);
  const uint32_t u = d.vertices_of(user_region)[0];
  ASSERT_EQ(d.children(u).size(), 1u);
  const uint32_t p = d.children(u)[0];
  // Per thread: the master's phase is 900 (300 of its own), the worker's covers its 600.
  EXPECT_DOUBLE_EQ(d.inclusive(u, time), 900 + 600);
  EXPECT_DOUBLE_EQ(d.exclusive(u, time), 300);  // not 900 - 1200
  EXPECT_DOUBLE_EQ(d.inclusive_all(time)[u], 1500);
  EXPECT_DOUBLE_EQ(d.exclusive(p, time), 1200);
  EXPECT_DOUBLE_EQ(d.exclusive(0, time), 2000 - 1500);
  // The stored value stays the sum of what the threads measured.
  EXPECT_DOUBLE_EQ(d.value(u, time), 900);
  // One thread ran the user region: the mean is over it.
  EXPECT_EQ(d.source_count(u), 2u);
  EXPECT_EQ(d.ran(u), 1u);
  EXPECT_DOUBLE_EQ(d.mean(u, time), 900);
  EXPECT_DOUBLE_EQ(d.mean(p, time), 600);
  // The region graph's exclusive value is the contexts' exclusive value.
  RegionGraph rg(d);
  ASSERT_TRUE(rg.vertex(user_region).has_value());
  EXPECT_DOUBLE_EQ(rg.graph()[*rg.vertex(user_region)].exclusive[size_t(time)], 300);
}

// A task created in a single and run by the other thread in the barrier after it: the task is a
// child of the single on that thread (its creation context), outside the single's time there, and
// the barrier's time holds it (task_exec). Per thread, as the classifier counts: no part below 0.
TEST(Values, TasksCountInTheirCreationContextOnEveryThread) {
  Builder b({"visits", "time", "task_exec"});
  uint32_t prog = b.region(K::Program, "main"), par = b.region(K::Parallel, "", 0, "t.c", 3, 0x3),
           single = b.region(K::Single, "", 0, "t.c", 5, 0x5),
           task = b.region(K::Task, "", 0, "t.c", 7, 0x7),
           bar = b.region(K::BarrierImplicit, "", 0, "t.c", 3, 0x30);
  uint32_t t0 = b.thread(-1, 0, prog, {{"visits", 1}, {"time", 110}});
  uint32_t p0 = b.node(t0, 0, par, {{"visits", 1}, {"time", 100}});
  b.node(t0, p0, single, {{"visits", 1}, {"time", 40}});
  b.node(t0, p0, bar, {{"visits", 1}, {"time", 55}});
  uint32_t t1 = b.thread(-1, 1, prog, {{"visits", 1}, {"time", 110}});
  uint32_t p1 = b.node(t1, 0, par, {{"visits", 1}, {"time", 100}, {"task_exec", 30}});
  uint32_t s1 = b.node(t1, p1, single, {{"visits", 1}, {"time", 2}});
  b.node(t1, s1, task, {{"visits", 1}, {"time", 30}});
  b.node(t1, p1, bar, {{"visits", 1}, {"time", 95}, {"task_exec", 30}});
  Drg d(b.e);
  const int time = d.metric("time");
  auto vertex = [&](RegionKind kind) { return d.vertices_of(d.regions_of_kind(kind).at(0)).at(0); };
  const uint32_t vp = vertex(K::Parallel), vs = vertex(K::Single), vt = vertex(K::Task),
                 vb = vertex(K::BarrierImplicit);
  // Thread 1: the single's own 2, the task's 30 below it; the barrier's 95 less the task it ran.
  EXPECT_DOUBLE_EQ(d.inclusive(vs, time), 40 + 2 + 30);
  EXPECT_DOUBLE_EQ(d.exclusive(vs, time), 40 + 2);
  EXPECT_DOUBLE_EQ(d.exclusive(vt, time), 30);
  EXPECT_DOUBLE_EQ(d.exclusive(vb, time), 55 + 65);
  EXPECT_DOUBLE_EQ(d.inclusive(vp, time), 200);
  EXPECT_DOUBLE_EQ(d.exclusive(vp, time), 5 + 3);
}

// One call at one line in three instances of a C++ template: three regions (their functions
// differ) that print alike below one parent. Each path is unique, numbered by region key.
TEST(Paths, SiblingsThatPrintAlikeAreNumbered) {
  Builder b;
  uint32_t prog = b.region(K::Program, "main");
  auto barrier = [&](const char* function) {
    uint32_t r = b.region(K::Mpi, "MPI_Barrier", 0, "bench.h", 200, 0x100 + b.e.regions.size());
    b.e.regions[r].function = function;
    return r;
  };
  // Recorded in another order than their functions' names sort.
  uint32_t c = barrier("void run<C>()"), a = barrier("void run<A>()"),
           bb = barrier("void run<B>()");
  uint32_t other = b.region(K::Mpi, "MPI_Barrier", 0, "bench.h", 300, 0x400);
  uint32_t t = b.thread(-1, 0, prog, {{"visits", 1}, {"time", 100}});
  uint32_t nc = b.node(t, 0, c, {{"visits", 1}}), na = b.node(t, 0, a, {{"visits", 1}}),
           nb = b.node(t, 0, bb, {{"visits", 1}}), no = b.node(t, 0, other, {{"visits", 1}});
  // The same line below another parent is alone there: no number.
  uint32_t nested = b.node(t, no, a, {{"visits", 1}});
  MergedTree mt(b.e);
  const std::vector<uint32_t>& map = mt.merged_of(0);
  EXPECT_EQ(mt.path(map[na]), "main/MPI_Barrier@bench.h:200#1");
  EXPECT_EQ(mt.path(map[nb]), "main/MPI_Barrier@bench.h:200#2");
  EXPECT_EQ(mt.path(map[nc]), "main/MPI_Barrier@bench.h:200#3");
  EXPECT_EQ(mt.path(map[no]), "main/MPI_Barrier@bench.h:300");
  EXPECT_EQ(mt.path(map[nested]), "main/MPI_Barrier@bench.h:300/MPI_Barrier@bench.h:200");
  EXPECT_EQ(mt.component(map[nb]), "MPI_Barrier@bench.h:200#2");
  EXPECT_EQ(mt.component(0), "main");
}

TEST(Decomposition, ParallelRegionIntoSubregionsStartEndRemainder) {
  Builder b;
  uint32_t prog = b.region(K::Program, "main"), par = b.region(K::Parallel, "", 0, "d.c", 4, 0x4),
           loop = b.region(K::Loop, "", 2, "d.c", 6, 0x6),
           join = b.region(K::BarrierImplicit, "", uint16_t(format::BarrierFlavour::Parallel), "d.c", 4, 0x4),
           red = b.region(K::Reduction, "", 0, "d.c", 4, 0x4);
  // Master: time 100 = fork 5 + loop 60 + join barrier 10 + reduction 2 + join 3 + 20 uninstrumented.
  uint32_t t0 = b.thread(-1, 0, prog, {{"time", 200}});
  uint32_t p0 = b.node(t0, 0, par, {{"visits", 1}, {"time", 100}, {"fork", 5}, {"join", 3}, {"team_size", 2}});
  b.node(t0, p0, loop, {{"visits", 1}, {"time", 60}});
  b.node(t0, p0, join, {{"visits", 1}, {"time", 10}});
  b.node(t0, p0, red, {{"visits", 1}, {"time", 2}});
  // Worker: node opens after its fork of 7: time 80 = loop 50 + join barrier 20 + 10.
  uint32_t t1 = b.thread(-1, 1, prog, {{"time", 190}});
  uint32_t p1 = b.node(t1, 0, par, {{"visits", 1}, {"time", 80}, {"fork", 7}});
  b.node(t1, p1, loop, {{"visits", 1}, {"time", 50}});
  b.node(t1, p1, join, {{"visits", 1}, {"time", 20}});
  Drg d(b.e);
  uint32_t v = uint32_t(at(d, {"main", "parallel"}));

  Decomposition m = d.decompose(v, 0u);
  EXPECT_DOUBLE_EQ(m.total, 100);
  EXPECT_DOUBLE_EQ(m.start, 5);
  EXPECT_DOUBLE_EQ(m.subregions, 60);
  EXPECT_DOUBLE_EQ(m.end, 3 + 10 + 2);
  EXPECT_DOUBLE_EQ(m.remainder, 20);
  ASSERT_EQ(m.parts.size(), 3u);
  EXPECT_FALSE(m.parts[0].end);
  EXPECT_TRUE(m.parts[1].end);
  EXPECT_TRUE(m.parts[2].end);

  Decomposition w = d.decompose(v, 1u);
  EXPECT_DOUBLE_EQ(w.total, 87);  // the worker's share counts from the region's begin
  EXPECT_DOUBLE_EQ(w.start, 7);
  EXPECT_DOUBLE_EQ(w.subregions, 50);
  EXPECT_DOUBLE_EQ(w.end, 20);
  EXPECT_DOUBLE_EQ(w.remainder, 10);
  EXPECT_DOUBLE_EQ(w.parts[2].time, 0);  // the worker ran no reduction

  Decomposition all = d.decompose(v);
  EXPECT_DOUBLE_EQ(all.total, 187);
  EXPECT_DOUBLE_EQ(all.start, 12);
  EXPECT_DOUBLE_EQ(all.subregions, 110);
  EXPECT_DOUBLE_EQ(all.end, 35);
  EXPECT_DOUBLE_EQ(all.remainder, 30);
  EXPECT_DOUBLE_EQ(all.total, all.subregions + all.start + all.end + all.remainder);

  RegionGraph rg(d);
  Decomposition r = rg.decompose(*rg.vertex(par));
  EXPECT_DOUBLE_EQ(r.total, 187);
  EXPECT_DOUBLE_EQ(r.remainder, 30);
}

TEST(Queries, ByNameKindLocationTopAndPath) {
  Builder b = two_ranks();
  uint32_t loop = b.region(K::Loop, "", 2, "/src/app/h.c", 7, 0x70);
  uint32_t user = b.region(K::User, "solve", 0, "/src/app/solver.c", 30);
  b.e.regions[3].file = "/src/app/h.c";  // the parallel region
  uint32_t t = 0;
  uint32_t u = b.node(t, 0, user, {{"visits", 1}, {"time", 5000}});
  b.node(t, u, loop, {{"visits", 4}, {"time", 4000}});
  Drg d(b.e);
  EXPECT_EQ(d.regions_named("solve"), std::vector<uint32_t>{user});
  EXPECT_EQ(d.regions_named("MPI_Send").size(), 1u);
  EXPECT_EQ(d.regions_of_kind(K::Mpi).size(), 2u);
  EXPECT_EQ(d.regions_at("h.c").size(), 2u);
  EXPECT_EQ(d.regions_at("h.c", 7), std::vector<uint32_t>{loop});
  EXPECT_EQ(d.regions_at("app/h.c", 5), std::vector<uint32_t>{3});
  EXPECT_TRUE(d.regions_at("pp/h.c").empty());  // suffixes match whole path components
  ASSERT_EQ(d.vertices_of(loop).size(), 1u);
  uint32_t lv = d.vertices_of(loop)[0];
  EXPECT_EQ(d.path_from_root(lv), (std::vector<uint32_t>{0, d.parent(lv), lv}));
  EXPECT_EQ(d.path(lv), "main/solve@solver.c:30/loop (dynamic)@h.c:7");
  const int time = d.metric("time"), visits = d.metric("visits");
  auto top = d.top(time, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0], 0u);                        // main: 5 * ... largest
  EXPECT_EQ(top[1], d.vertices_of(user)[0]);    // 5000
  EXPECT_EQ(top[2], lv);                        // 4000
  auto topv = d.top(visits, 1, Drg::Measure::Exclusive);
  EXPECT_EQ(topv[0], 0u);
  EXPECT_EQ(d.top(visits, 100).size(), d.size());
}

}  // namespace
}  // namespace scalea::drg
