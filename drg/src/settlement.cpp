#include "settlement.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "region_identity.hpp"
#include "scalea/drg/symbols.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

void note(uint32_t& slot, uint32_t value) {
  if (slot == kUnset) slot = value;
  else if (slot != value) slot = kConflict;
}

namespace {

// Strings as small ids, for per-node work without string compares.
class Names {
 public:
  uint32_t id(const std::string& s) {
    auto [it, fresh] = ids_.emplace(s, uint32_t(text_.size()));
    if (fresh) text_.push_back(s);
    return it->second;
  }
  const std::string& text(uint32_t id) const { return text_[id]; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> text_;
};

// -finstrument-functions records the bodies the compiler outlined for constructs as functions,
// two levels below every parallel region and task: they vanish, their children attach to the
// construct. Their time is inside the construct's (its inclusive time), so nothing is lost: the
// construct's exclusive time (time minus its children's) grows by theirs.
void fold_outlined_functions(const Experiment& e, Settlement& s, const ThreadVisitor& visit) {
  std::vector<char> drop(e.regions.size(), 0);
  bool any = false;
  for (size_t i = 0; i < e.regions.size(); ++i) {
    const Region& r = e.regions[i];
    if (r.kind == RegionKind::Function &&
        (is_outlined_function(r.label()) || is_outlined_function(r.symbol)))
      drop[i] = any = true;
  }
  if (!any) return;
  s.outlined = std::move(drop);
  FlatMap64 scratch;
  visit([&](ThreadTree& t) { s.fold_outlined(t, scratch); });
}

bool has_body(RegionKind k) {
  return k == RegionKind::Parallel || k == RegionKind::Teams || k == RegionKind::Task ||
         k == RegionKind::Taskloop;
}

// The outlined body each parallel region, task and taskloop runs, when the calling contexts show
// it: the function symbol (.omp_outlined..N, .omp_task_entry..N, main._omp_fn.0) that holds the
// code of the region's children, if they agree. Bodies are told apart by their start address
// (per-file names such as ".omp_outlined." repeat across a program's files).
struct Bodies {
  std::vector<uint32_t> of;         // region -> index in `start`, kUnset or kConflict
  std::vector<uint64_t> start;      // module offset of the body's first instruction
  std::vector<std::string> symbol;  // its name
};
Bodies outlined_bodies(const Experiment& e, const Observers& observers) {
  const size_t nr = e.regions.size();
  Bodies b;
  b.of.assign(nr, kUnset);
  std::vector<char> candidate(nr, 0);
  bool any = false;
  for (size_t i = 0; i < nr; ++i) {
    candidate[i] = has_body(e.regions[i].kind) && !e.regions[i].module.empty();
    any = any || candidate[i];
  }
  if (!any) return b;
  // Per region, once: its module's id and the body its code lies in, if any.
  Names modules;
  std::vector<uint32_t> module(nr), in_body(nr, kUnset);
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> index;  // (module, start) -> body
  for (uint32_t i = 0; i < nr; ++i) {
    const Region& c = e.regions[i];
    module[i] = modules.id(c.module);
    if (c.module.empty() || c.code == 0 || !is_outlined_function(c.symbol)) continue;
    const uint64_t start = c.code - c.symbol_offset;
    auto [it, fresh] = index.emplace(std::make_pair(module[i], start), uint32_t(b.start.size()));
    if (fresh) {
      b.start.push_back(start);
      b.symbol.push_back(c.symbol);
    }
    in_body[i] = it->second;
  }
  observers.observe(
      [&](ThreadTree& t) {
        for (uint32_t n = 1; n < t.size(); ++n) {
          const uint32_t p = t.region[t.parent[n]], c = t.region[n];
          if (candidate[p] && in_body[c] != kUnset && module[c] == module[p])
            note(b.of[p], in_body[c]);
        }
      },
      b.of);
  return b;
}

// A construct that ends an outlined body and enters the runtime by a tail jump reports a return
// address inside the runtime (the body returns straight to __kmp_invoke_microtask): such a
// region is placed at that jump in the body of the region it ran in, one region per enclosing
// region (as recorded: a placed region's children keep their pairs). The pairs are placed in the
// order the threads first meet them, in file order; processes sharing the files each observe
// their block and the orders are joined (combine_firsts). Returns whether any pair was placed;
// marks in `moved_from` the runtime regions no node uses any more.
bool place_runtime_returns(Experiment& e, const Bodies& bodies, std::vector<char>& moved_from,
                           Settlement& s, const Observers& observers) {
  std::string runtime_path;
  if (e.meta.is_object() && e.meta.contains("openmp") && e.meta["openmp"].is_object() &&
      e.meta["openmp"].contains("runtime_path") && e.meta["openmp"]["runtime_path"].is_string())
    runtime_path = e.meta["openmp"]["runtime_path"].get<std::string>();
  const size_t nr = e.regions.size();
  std::vector<char> in_runtime(nr, 0);
  bool any = false;
  for (size_t i = 0; i < nr; ++i) {
    const Region& r = e.regions[i];
    in_runtime[i] =
        !has_source(r) && !r.module.empty() && r.kind != RegionKind::Function &&
        r.kind != RegionKind::Sampled &&
        ((!runtime_path.empty() && r.module == runtime_path) || r.symbol.rfind("__kmp", 0) == 0);
    any = any || in_runtime[i];
  }
  if (!any || bodies.start.empty()) return false;
  std::vector<uint64_t> firsts;  // (region << 32 | enclosing region), each once
  std::unordered_set<uint64_t> met;
  observers.mine([&](ThreadTree& t) {
    for (uint32_t n = 1; n < t.size(); ++n) {
      const uint32_t x = t.region[n], p = t.region[t.parent[n]];
      if (x >= nr || !in_runtime[x]) continue;
      const uint64_t pair = uint64_t(x) << 32 | p;
      if (met.insert(pair).second) firsts.push_back(pair);
    }
  });
  if (observers.combine_firsts) observers.combine_firsts(firsts);
  SymbolResolver resolver;
  std::vector<char> still_used(nr, 0);
  bool moved = false;
  for (const uint64_t pair : firsts) {
    const uint32_t x = uint32_t(pair >> 32), p = uint32_t(pair);
    uint32_t id = fmt::kNoIndex;
    if (p < nr && bodies.of[p] < kConflict) {
      const uint32_t body = bodies.of[p];
      SourceLocation loc;
      if (resolver.resolve_tail_jump(e.regions[p].module, bodies.start[body],
                                     runtime_entry(e.regions[x]), loc)) {
        Region r = e.regions[x];
        r.module = e.regions[p].module;
        r.address = loc.address;  // the recorded address lay in the runtime
        r.file = loc.file;
        r.line = loc.line;
        r.function = loc.function;
        set_code(r, loc);
        id = uint32_t(e.regions.size());
        for (uint32_t i = 0; i < e.regions.size(); ++i)
          if (same_region(e.regions[i], r)) id = i;
        if (id == e.regions.size()) e.regions.push_back(std::move(r));
      }
    }
    s.placed.emplace(std::make_pair(x, p), id);
    if (id == fmt::kNoIndex) still_used[x] = true;
    else moved = true;
  }
  s.in_runtime = std::move(in_runtime);
  for (const auto& [key, id] : s.placed)
    if (id != fmt::kNoIndex && !still_used[key.first]) moved_from[key.first] = true;
  return moved;
}

// Without line information, the copies of one parallel region or task that inlining made (one
// fork or task-creation call per copy) are one region when they run the same outlined body.
// Regions recorded at the same code address (the join barrier, at its parallel region's) follow.
// Sets remap[i] to the region i is now one with; returns whether any two became one.
bool identify_by_body(Experiment& e, const Bodies& bodies, std::vector<uint32_t>& remap) {
  const size_t nr = std::min(bodies.of.size(), e.regions.size());
  std::vector<uint32_t> body(nr, kUnset);
  std::map<std::pair<std::string, uint64_t>, uint32_t> site_body;  // (module, code) -> body
  for (size_t i = 0; i < nr; ++i) {
    const Region& r = e.regions[i];
    if (has_source(r) || r.body || bodies.of[i] >= kConflict) continue;
    body[i] = bodies.of[i];
    site_body.emplace(std::make_pair(r.module, r.code ? r.code : r.address), body[i]);
  }
  if (site_body.empty()) return false;
  for (size_t i = 0; i < nr; ++i) {
    const Region& r = e.regions[i];
    if (body[i] != kUnset || has_source(r) || r.module.empty()) continue;
    auto it = site_body.find(std::make_pair(r.module, r.code ? r.code : r.address));
    if (it != site_body.end()) body[i] = it->second;
  }
  // Representative of each (kind, subkind, name, module, body): its first region.
  std::map<std::tuple<int, int, std::string, std::string, uint32_t>, uint32_t> group;
  std::vector<std::set<std::string>> functions(nr);  // of the copies, by representative
  bool merged = false;
  for (uint32_t i = 0; i < nr; ++i) {
    if (body[i] >= kConflict) continue;
    const Region& r = e.regions[i];
    auto [it, fresh] =
        group.emplace(std::make_tuple(int(r.kind), int(r.subkind), r.name, r.module, body[i]), i);
    remap[i] = it->second;
    merged = merged || !fresh;
    if (!fresh) keep_lowest_address(e.regions[it->second], r);
    if (!r.function.empty()) functions[it->second].insert(r.function);
  }
  for (auto& [key, rep] : group) {
    Region& r = e.regions[rep];
    r.body = true;
    r.code = bodies.start[std::get<4>(key)];
    r.symbol = bodies.symbol[std::get<4>(key)];
    r.symbol_offset = 0;
    std::string joined;  // copies inlined into different functions: all of them
    for (const std::string& f : functions[rep]) joined += (joined.empty() ? "" : ", ") + f;
    r.function = joined;
  }
  return merged;
}

// Drops the regions that became another (remap[i] != i) or that no node uses any more (`drop`),
// renumbers the rest and folds every thread's tree over the new numbers.
void renumber_regions(Experiment& e, std::vector<uint32_t>& remap, const std::vector<char>& drop,
                      Settlement& s, const ThreadVisitor& visit) {
  const size_t nr = e.regions.size();
  std::vector<uint32_t> index(nr, fmt::kNoIndex);
  std::vector<Region> kept;
  for (uint32_t i = 0; i < nr; ++i)
    if (remap[i] == i && !drop[i]) {
      index[i] = uint32_t(kept.size());
      kept.push_back(std::move(e.regions[i]));
    }
  for (uint32_t i = 0; i < nr; ++i) remap[i] = index[remap[i]];
  e.regions = std::move(kept);
  s.remap = remap;
  FlatMap64 scratch;
  visit([&](ThreadTree& t) { s.renumber(t, scratch); });
}

// Code in an outlined body (.omp_outlined..N, .omp_outlined._debug__, main._omp_fn.0) belongs to
// the function the body was outlined from: the function of the nearest enclosing region in the
// calling context whose code is not outlined (a parallel region's fork, a task's creation). When
// the contexts disagree (copies inlined into different functions, no line information), the
// name the compiler gave the body says it (gcc, LLVM 17+), else it stays the body's name.
void name_outlined_code(Experiment& e, const Observers& observers) {
  const size_t nr = e.regions.size();
  std::vector<char> inside(nr, 0);
  bool any = false;
  for (size_t i = 0; i < nr; ++i) {
    // (A function region's function is the region itself: an outlined body recorded by
    // -finstrument-functions keeps its name when it is kept.)
    // (A sampled frame's context is its caller's frame, not the construct around it: sampled
    // frames in an outlined body keep the body's name.)
    inside[i] = e.regions[i].kind != RegionKind::Function &&
                e.regions[i].kind != RegionKind::Sampled && !e.regions[i].outlined &&
                is_outlined_function(e.regions[i].function);
    any = any || inside[i];
  }
  if (!any) return;
  Names names;
  std::vector<uint32_t> own(nr);  // a region's function id, kUnset when it passes its context on
  for (size_t i = 0; i < nr; ++i)
    own[i] = inside[i] || e.regions[i].function.empty() ? kUnset : names.id(e.regions[i].function);
  std::vector<uint32_t> origin(nr, kUnset), context;
  observers.observe(
      [&](ThreadTree& t) {
        context.resize(t.size());
        for (uint32_t n = 0; n < t.size(); ++n) {
          uint32_t r = t.region[n];
          context[n] = own[r] != kUnset ? own[r] : n ? context[t.parent[n]] : kUnset;
          if (inside[r] && context[n] != kUnset) note(origin[r], context[n]);
        }
      },
      origin);
  for (size_t i = 0; i < nr; ++i) {
    if (!inside[i]) continue;
    Region& r = e.regions[i];
    std::string from = origin[i] < kConflict ? names.text(origin[i]) : outlined_origin(r.function);
    if (from.empty()) from = outlined_origin(r.symbol);
    if (from.empty()) continue;
    r.function = from;
    r.outlined = true;
  }
}

}  // namespace

void settle_regions(Experiment& e, const LoadOptions& options, Settlement& s,
                    const Observers& observe, const ThreadVisitor& rewrite) {
  s.merge = e.metric_merge;
  s.metric_count = e.metrics.size();
  s.counter_columns.clear();
  for (size_t i = 0; i < e.metrics.size(); ++i)
    if (e.metrics[i].rfind("papi:", 0) == 0) s.counter_columns.push_back(i);
  if (options.fold_outlined_functions) fold_outlined_functions(e, s, rewrite);
  Bodies bodies = outlined_bodies(e, observe);
  std::vector<char> drop(e.regions.size(), 0);
  bool moved = options.resolve_symbols && place_runtime_returns(e, bodies, drop, s, observe);
  if (moved) rewrite([&](ThreadTree& t) { s.place(t); });
  drop.resize(e.regions.size(), 0);
  std::vector<uint32_t> remap(e.regions.size());
  for (uint32_t i = 0; i < remap.size(); ++i) remap[i] = i;
  bool merged = identify_by_body(e, bodies, remap);
  if (moved || merged) renumber_regions(e, remap, drop, s, rewrite);
  name_outlined_code(e, observe);
  s.sampled.clear();
  s.visits_column = e.metric(fmt::CoreMetric::Visits);
  s.time_column = e.metric(fmt::CoreMetric::TimeSum);
  for (size_t i = 0; i < e.regions.size(); ++i)
    if (e.regions[i].kind == RegionKind::Sampled) {
      s.sampled.resize(e.regions.size(), 0);
      s.sampled[i] = 1;
    }
  rewrite([&](ThreadTree& t) {
    s.root_counters(t);
    s.split_samples(t);
  });
}

void Settlement::fold_outlined(ThreadTree& t, FlatMap64& scratch) const {
  if (!outlined.empty()) fold_duplicate_paths(t, merge, scratch, nullptr, &outlined);
}

void Settlement::place(ThreadTree& t) const {
  if (placed.empty()) return;
  // Children first: each pair is looked up with its enclosing region as recorded.
  for (uint32_t n = t.size(); n-- > 1;) {
    const uint32_t x = t.region[n], p = t.region[t.parent[n]];
    if (x >= in_runtime.size() || !in_runtime[x]) continue;
    auto it = placed.find(std::make_pair(x, p));
    if (it != placed.end() && it->second != fmt::kNoIndex) t.region[n] = it->second;
  }
}

void Settlement::renumber(ThreadTree& t, FlatMap64& scratch) const {
  if (!remap.empty()) fold_duplicate_paths(t, merge, scratch, &remap);
}

// The program root does not read counters (a thread's counters are read by the thread itself, and
// its root closes when the run ends): its counter values are its children's sum, not 0 (which made
// its exclusive value negative).
void Settlement::root_counters(ThreadTree& t) const {
  const size_t m = metric_count;
  if (counter_columns.empty() || t.parent.empty() || t.values.size() < t.parent.size() * m) return;
  for (size_t c : counter_columns) {
    if (t.values[c] != 0) continue;
    double sum = 0;
    for (size_t n = 1; n < t.parent.size(); ++n)
      if (t.parent[n] == 0) sum += t.values[n * m + c];
    t.values[c] = sum;
  }
}

void Settlement::split_samples(ThreadTree& t) const {
  if (sampled.empty()) return;
  const size_t m = t.values.empty() ? 0 : metric_count;  // read without values: frames of 0
  std::vector<uint32_t> at(t.size(), fmt::kNoIndex);     // old node -> measured index or sample
  std::vector<char> is_sample(t.size(), 0);
  ThreadTree kept;
  for (uint32_t n = 0; n < t.size(); ++n) {
    const uint32_t r = t.region[n], p = n ? t.parent[n] : fmt::kNoIndex;
    if (r < sampled.size() && sampled[r]) {
      is_sample[n] = 1;
      // Below a measured node: the path's outermost frame; below a sampled one: its caller.
      const bool top = p == fmt::kNoIndex || !is_sample[p];
      const double* v = t.values.data() + size_t(n) * m;
      SampledFrame f{top ? fmt::kNoIndex : at[p], top && p != fmt::kNoIndex ? at[p] : 0, r,
                     m && visits_column >= 0 ? v[visits_column] : 0.0,
                     m && time_column >= 0 ? v[time_column] * 1e-9 : 0.0};
      if (!top) f.node = t.samples[at[p]].node;
      at[n] = uint32_t(t.samples.size());
      t.samples.push_back(f);
      continue;
    }
    at[n] = uint32_t(kept.parent.size());
    kept.parent.push_back(p == fmt::kNoIndex ? fmt::kNoIndex : at[p]);
    kept.region.push_back(r);
    kept.values.insert(kept.values.end(), t.values.data() + size_t(n) * m,
                       t.values.data() + size_t(n + 1) * m);
  }
  if (t.samples.empty()) return;
  t.parent = std::move(kept.parent);
  t.region = std::move(kept.region);
  t.values = std::move(kept.values);
}

void Settlement::apply(ThreadTree& t, FlatMap64& scratch) const {
  fold_outlined(t, scratch);
  place(t);
  renumber(t, scratch);
  root_counters(t);
  split_samples(t);
}

}  // namespace scalea::drg
