#include "scalea/overheads/classify.hpp"

#include <cmath>
#include <optional>

#include "facts.hpp"

namespace scalea::overheads {

using namespace detail;

namespace {

// "synchronization.barrier" -> PE-seconds, over the rules of each subclass, for the rules that
// classify into a class (not useful work). With `minus`, the reference's are subtracted.
std::map<std::string, double> subclass_values(const Buckets& b, const Buckets* minus, double p,
                                              bool keep_additional) {
  std::map<std::string, double> out;
  for (size_t i = 0; i < b.by_rule.size(); ++i) {
    double v = b.by_rule[i] - (minus ? minus->by_rule[i] : 0.0);
    if (v == 0 && (!minus || minus->by_rule[i] == 0) && b.by_rule[i] == 0) continue;
    const Rule& r = rules()[i];
    if (!keep_additional && r.cls == Class::AdditionalComputation) continue;
    out[std::string(class_key(r.cls)) + "." + std::string(r.subclass)] += v / p;
  }
  return out;
}

}  // namespace

std::vector<std::string> identity_violations(const Analysis& a, double tolerance) {
  std::vector<std::string> out;
  auto check = [&](const RegionOverheads& r) {
    double sum = 0;
    for (double v : r.classes) sum += v;
    std::string name = !r.path.empty() ? r.path
                       : r.in_run      ? "node " + std::to_string(r.node)
                                       : "reference node " + std::to_string(r.ref_node);
    if (!(std::fabs(sum - r.t_o) <= tolerance))
      out.push_back(name + ": classes sum to " + std::to_string(sum) + " s, T_o is " +
                    std::to_string(r.t_o) + " s");
  };
  for (const auto& r : a.regions) check(r);
  for (const auto& r : a.only_in_reference) check(r);
  return out;
}

namespace {

// The six classes of a region from its classified PE-time `b` (and the reference's `rb` of the
// same call path, classified by the same rules): every class but additional computation and
// unidentified is what the run spends in it beyond what the reference spent, in wall time;
// additional computation is the extra work the evidence found; unidentified is the rest of T_o.
void set_classes(RegionOverheads& o, const Buckets& b, const Buckets* rb, double p,
                 bool keep_additional) {
  double identified = 0;
  for (int k = 0; k < kClassCount; ++k) {
    if (Class(k) == Class::Unidentified) continue;
    double v = b.cls[size_t(k)] - (rb ? rb->cls[size_t(k)] : 0.0);
    o.classes[size_t(k)] = v / p;
    identified += v / p;
  }
  o.classes[size_t(Class::Unidentified)] = o.t_o - identified;
  o.subclasses = subclass_values(b, rb, p, keep_additional);
}

}  // namespace

namespace {

// Shared by processes, a pass records its additions in one log per file: one worker.
unsigned workers_for(const Options& options) { return options.share ? 1 : options.threads; }

// The reference run, measured and classified by the same rules as the run, its nodes matched to
// the run's by call-path key (the roots match whatever the program's name: the reference may be
// a copy of the binary). Where several reference nodes have the same key, the first one counts.
struct Reference {
  const MergedTree* tree;
  Workers workers;
  RunFacts facts;
  std::vector<uint32_t> index;  // call-path key -> reference node
  std::optional<Totals> totals;
  Reference(const MergedTree& t, const Options& options, CallPathKeys& keys)
      : tree(&t),
        workers(t, workers_for(options)),
        facts(measure(t, workers, keys.intern(t), nullptr, options.share)) {
    index.assign(keys.size(), format::kNoIndex);
    for (uint32_t n = 0; n < facts.keys.size(); ++n)
      if (index[facts.keys[n]] == format::kNoIndex) index[facts.keys[n]] = n;
  }
  uint32_t node_of(uint32_t key) const {
    return key < index.size() ? index[key] : format::kNoIndex;
  }
};

// The row of merged node n of the run.
RegionOverheads region_row(const MergedTree& run, const RunFacts& f, const Totals& tot, uint32_t n,
                           const Reference* ref, const Options& options, int p) {
  const MemberStats& st = f.stats[n];
  RegionOverheads o;
  o.node = n;
  if (options.paths) o.path = run.path(n);
  o.key = f.keys[n];
  o.p = p;
  o.t_p = f.time_max[n];
  const Buckets& b = tot.total[n];
  // A PE "ran" the region when it entered it; a PE that only holds the path (it ran parallel
  // regions nested in it, or tasks created in it) was idle during the rest.
  o.pes_ran = st.entered;
  o.most_loaded = st.most_loaded;
  o.least_loaded = st.least_loaded;
  if (options.machine) {
    o.events_below = tot.events_below[n];
    o.noise = std::max(0.0, o.t_p - std::max(0.0, tot.compensated[n]));
  }
  if (o.pes_ran > 0 && st.sum_t > 0) o.imbalance = st.max_t / (st.sum_t / double(o.pes_ran));

  // Reference time; without one, T_s is estimated as the useful work (A = 0).
  uint32_t rn = ref ? ref->node_of(f.keys[n]) : format::kNoIndex;
  const Buckets* rb = nullptr;
  o.in_reference = rn != format::kNoIndex;
  if (o.in_reference) {
    o.ref_node = rn;
    o.t_s = ref->facts.time_max[rn];
    o.t_s_estimated = false;
    rb = &ref->totals->total[rn];
  } else if (ref) {
    o.t_s = 0;  // the region does not exist in the reference: all its work is additional
    o.t_s_estimated = false;
  } else {
    o.t_s = b.useful;
  }
  o.useful_pe = b.useful;
  o.t_o = o.t_p - o.t_s / p;
  set_classes(o, b, rb, p, ref != nullptr);
  o.speedup = o.t_p > 0 ? o.t_s / o.t_p : 0;
  o.efficiency = o.speedup / p;
  return o;
}

// Regions the reference ran and this run did not: T_o = -T_s/p, each class the reference's with
// the opposite sign. Only useful work is "removed" work; a construct the runtime did not report in
// this run (a reduction done with atomics at small teams, say) takes away only its
// synchronization, and its time is in the enclosing region's.
std::vector<RegionOverheads> reference_only_rows(const RunFacts& f, const Reference& ref,
                                                 size_t keys, int p, size_t& skipped_recursion) {
  std::vector<char> in_run(keys, 0);
  for (uint32_t key : f.keys) in_run[key] = 1;
  // Deeper levels of a recursion this run ran at other depths: its work is in this run.
  const std::vector<char> recursive =
      deeper_in_recursion(*ref.tree, [&](uint32_t a) { return in_run[ref.facts.keys[a]] != 0; });
  const Buckets none;
  std::vector<RegionOverheads> out;
  for (uint32_t rn = 0; rn < ref.facts.keys.size(); ++rn) {
    if (in_run[ref.facts.keys[rn]]) continue;
    if (recursive[rn]) {
      ++skipped_recursion;
      continue;
    }
    const Buckets& rb = ref.totals->total[rn];
    RegionOverheads o;
    o.node = format::kNoIndex;
    o.ref_node = rn;
    o.path = ref.tree->path(rn);
    o.key = ref.facts.keys[rn];
    o.p = p;
    o.in_run = false;
    o.in_reference = true;
    o.t_s = ref.facts.time_max[rn];
    o.t_s_estimated = false;
    o.t_o = -o.t_s / p;
    set_classes(o, none, &rb, p, true);
    double removed = -rb.useful / p;
    o.classes[size_t(Class::AdditionalComputation)] += removed;
    o.classes[size_t(Class::Unidentified)] -= removed;
    if (removed != 0) o.subclasses["additional_computation.removed"] = removed;
    o.useful_pe = 0;
    out.push_back(std::move(o));
  }
  return out;
}

// POP metrics from the useful time per PE (and the reference's).
ProgramEfficiency pop_metrics(const RunFacts& f, const RunFacts* ref, double p, double runtime) {
  ProgramEfficiency pe;
  double max_u = f.useful_pe_max, sum_u = f.useful_pe_sum;
  double mean_u = sum_u / p;
  if (max_u > 0) pe.load_balance = mean_u / max_u;
  if (runtime > 0) pe.communication_efficiency = max_u / runtime;
  pe.parallel_efficiency = pe.load_balance * pe.communication_efficiency;
  if (ref) {
    double ref_u = ref->useful_pe_sum;
    if (sum_u > 0) {
      pe.computation_scalability = ref_u / sum_u;
      pe.global_efficiency = pe.parallel_efficiency * *pe.computation_scalability;
    }
  }
  return pe;
}

}  // namespace

Analysis classify(const MergedTree& run, const MergedTree* reference, const Options& options) {
  const drg::Experiment& e = run.experiment();
  Analysis a;
  a.p = options.p > 0 ? options.p : count_pes(e);
  a.has_reference = reference != nullptr;
  a.keys = options.keys ? options.keys : std::make_shared<CallPathKeys>();
  Workers workers(run, workers_for(options));
  std::vector<uint32_t> keys = a.keys->intern(run);

  // The reference is classified by the same rules; the evidence it gives moves work out of the
  // run's useful time before the run's buckets are summed.
  std::optional<Reference> ref;
  std::vector<double> caps;  // the reference's useful time of each run node (replicated code)
  if (reference) {
    ref.emplace(*reference, options, *a.keys);
    caps.assign(keys.size(), 0);
    for (uint32_t n = 0; n < keys.size(); ++n)
      if (uint32_t rn = ref->node_of(keys[n]); rn != format::kNoIndex)
        caps[n] = ref->facts.own_useful[rn];
  }
  const size_t cells = e.threads.size() * run.nodes().size();
  if (!options.share && cells > 0 && cells <= options.pe_own_cells) a.pe_own.resize(cells);
  RunFacts f = measure(run, workers, std::move(keys), reference ? &caps : nullptr, options.share,
                       a.pe_own.empty() ? nullptr : &a.pe_own);
  if (!f.model.usable) a.message_model_doubt = f.model.doubt;
  if (ref) {
    apply_evidence(run, f, ref->facts, ref->index, options.machine, a.misses_priced);
    ref->totals = totals(*reference, ref->facts, ref->workers, count_pes(reference->experiment()),
                         nullptr, options.share);
  }

  std::vector<double> cost;
  if (options.machine) {
    a.noise_priced = true;
    cost = visit_costs(e, *options.machine);
  }
  Totals tot = totals(run, f, workers, a.p, options.machine ? &cost : nullptr, options.share);

  a.regions.reserve(run.nodes().size());
  for (uint32_t n = 0; n < run.nodes().size(); ++n)
    a.regions.push_back(region_row(run, f, tot, n, ref ? &*ref : nullptr, options, a.p));
  if (ref)
    a.only_in_reference =
        reference_only_rows(f, *ref, a.keys->size(), a.p, a.recursion_only_in_reference);
  a.program =
      pop_metrics(f, ref ? &ref->facts : nullptr, a.p, a.regions.empty() ? 0 : a.regions[0].t_p);
  return a;
}
}  // namespace scalea::overheads
