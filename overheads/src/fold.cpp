// The passes' accumulators combined in file order, their recorded sums replayed, and both written
// as bytes (fold.hpp). Combining a later file's partial gives what folding its batch into the
// accumulator directly gives for what does not depend on the order: counts, sums of whole
// numbers, minima, maxima and "the first PE with the most" (docs/drg.md, "The analysis as an MPI
// program"). A partial holds no sums of seconds (they were recorded, and are replayed); write and
// read carry them, for the whole accumulator rank 0 broadcasts.
#include "fold.hpp"

#include "facts.hpp"

namespace scalea::overheads::detail {

namespace {

bool holds_nothing(const Buckets& b) {
  if (!is_zero(b.useful)) return false;
  for (double v : b.cls)
    if (!is_zero(v)) return false;
  for (double v : b.by_rule)
    if (!is_zero(v)) return false;
  return true;
}

// A Buckets as bytes: most rules never apply to a region, so only the rules that hold time.
void write_buckets(Writer& out, const Buckets& b) {
  out.put(b.useful);
  out.put(b.cls);
  uint32_t used = 0;
  for (double v : b.by_rule) used += is_zero(v) ? 0 : 1;
  out.put(used);
  for (size_t i = 0; i < b.by_rule.size(); ++i)
    if (!is_zero(b.by_rule[i])) out.put(uint32_t(i)), out.put(b.by_rule[i]);
}

void read_buckets(Reader& in, Buckets& b) {
  b.useful = in.get<double>();
  b.cls = in.get<decltype(b.cls)>();
  for (uint32_t used = in.get<uint32_t>(); used > 0; --used) {
    uint32_t i = in.get<uint32_t>();
    if (i >= b.by_rule.size()) throw std::runtime_error("a partial accumulator names no rule");
    b.by_rule[i] = in.get<double>();
  }
}

// The nodes a partial holds something for, then what it holds for each (`put(node)`).
template <class Holds, class Put>
void write_nodes(Writer& out, size_t nodes, Holds&& holds, Put&& put) {
  std::vector<uint32_t> list;
  for (uint32_t n = 0; n < nodes; ++n)
    if (holds(n)) list.push_back(n);
  out.put(uint32_t(list.size()));
  for (uint32_t n : list) {
    out.put(n);
    put(n);
  }
}

template <class Get>
void read_nodes(Reader& in, size_t nodes, Get&& get) {
  for (uint32_t count = in.get<uint32_t>(); count > 0; --count) {
    uint32_t n = in.get<uint32_t>();
    if (n >= nodes) throw std::runtime_error("a partial accumulator names a node the tree lacks");
    get(n);
  }
}

}  // namespace

void StatsFold::combine(const StatsFold& later) {
  for (size_t n = 0; n < stats.size(); ++n) {
    MemberStats& s = stats[n];
    const MemberStats& o = later.stats[n];
    if (o.members == 0) continue;
    if (s.members == 0) {
      s = o;
      continue;
    }
    s.members += o.members;
    s.entered += o.entered;
    s.time_max = std::max(s.time_max, o.time_max);
    s.time_min = std::min(s.time_min, o.time_min);
    s.iterations = std::max(s.iterations, o.iterations);
    s.visits += o.visits;
    s.tasks_created += o.tasks_created;
    if (o.has_master_join) s.master_join = o.master_join, s.has_master_join = true;
    // Ties go to the earlier PE, as in one walk over the PEs.
    if (o.max_t > s.max_t) s.max_t = o.max_t, s.most_loaded = o.most_loaded;
    if (o.min_t < s.min_t) s.min_t = o.min_t, s.least_loaded = o.least_loaded;
    if (o.excl_most > s.excl_most) s.excl_most = o.excl_most, s.excl_who = o.excl_who;
    for (size_t level = 0; level < s.misses.size(); ++level) s.misses[level] += o.misses[level];
  }
}

void StatsFold::replay(const Addend& a) {
  MemberStats& s = stats.at(a.node);
  if (a.slot == slot_of(Sum::Time)) s.sum_t += a.value;
  else if (a.slot == slot_of(Sum::Exclusive)) s.excl_sum += a.value;
  else if (a.slot == slot_of(Sum::ForkJoin)) s.fork_join += a.value;
  else throw std::runtime_error("a recorded addition names no sum of pass 1");
}

void StatsFold::write(Writer& out) const {
  write_nodes(
      out, stats.size(), [&](uint32_t n) { return stats[n].members > 0; },
      [&](uint32_t n) { out.put(stats[n]); });
}

void StatsFold::read(Reader& in) {
  read_nodes(in, stats.size(), [&](uint32_t n) { stats[n] = in.get<MemberStats>(); });
}

PeSplit::PeSplit(size_t nodes, bool capped)
    : own(nodes),
      own_useful(nodes, 0),
      useful_min(nodes, 0),
      useful_max(nodes, 0),
      useful_pes(nodes, 0),
      cpu_min(nodes, 0),
      cpu_sum(nodes, 0),
      capped_useful(capped ? nodes : 0, 0) {}

void PeSplit::record(AdditionLog* log) {
  sums.log = log;
  for (uint32_t n = 0; n < own.size(); ++n) own[n].sums.log = log, own[n].node = n;
}

void PeSplit::replay(const Addend& a) {
  if (a.slot < bucket_slots()) own.at(a.node).at(a.slot) += a.value;
  else if (a.slot == slot_of(Sum::OwnUseful)) own_useful.at(a.node) += a.value;
  else if (a.slot == slot_of(Sum::Capped)) capped_useful.at(a.node) += a.value;
  else if (a.slot == slot_of(Sum::UsefulPerPe)) useful_pe_sum += a.value;
  else throw std::runtime_error("a recorded addition names no sum of pass 2");
}

void PeSplit::combine(const PeSplit& later) {
  for (size_t n = 0; n < own.size(); ++n) {
    if (later.useful_pes[n] == 0) continue;
    useful_min[n] =
        useful_pes[n] ? std::min(useful_min[n], later.useful_min[n]) : later.useful_min[n];
    useful_max[n] = std::max(useful_max[n], later.useful_max[n]);
    cpu_min[n] = useful_pes[n] ? std::min(cpu_min[n], later.cpu_min[n]) : later.cpu_min[n];
    cpu_sum[n] += later.cpu_sum[n];
    useful_pes[n] += later.useful_pes[n];
  }
  useful_pe_max = std::max(useful_pe_max, later.useful_pe_max);
  sampled = sampled || later.sampled;
}

void PeSplit::write(Writer& out) const {
  const bool capped = !capped_useful.empty();
  auto holds = [&](uint32_t n) {
    return !holds_nothing(own[n]) || !is_zero(own_useful[n]) || useful_pes[n] > 0 ||
           !is_zero(useful_max[n]) || (capped && !is_zero(capped_useful[n]));
  };
  write_nodes(out, own.size(), holds, [&](uint32_t n) {
    write_buckets(out, own[n]);
    out.put(own_useful[n]);
    out.put(useful_min[n]);
    out.put(useful_max[n]);
    out.put(useful_pes[n]);
    out.put(cpu_min[n]);
    out.put(cpu_sum[n]);
    if (capped) out.put(capped_useful[n]);
  });
  out.put(useful_pe_sum);
  out.put(useful_pe_max);
  out.put(uint8_t(sampled));
}

void PeSplit::read(Reader& in) {
  read_nodes(in, own.size(), [&](uint32_t n) {
    read_buckets(in, own[n]);
    own_useful[n] = in.get<double>();
    useful_min[n] = in.get<double>();
    useful_max[n] = in.get<double>();
    useful_pes[n] = in.get<uint32_t>();
    cpu_min[n] = in.get<double>();
    cpu_sum[n] = in.get<double>();
    if (!capped_useful.empty()) capped_useful[n] = in.get<double>();
  });
  useful_pe_sum = in.get<double>();
  useful_pe_max = in.get<double>();
  sampled = in.get<uint8_t>() != 0;
}

void Totals::record(AdditionLog* log) {
  for (uint32_t n = 0; n < total.size(); ++n) total[n].sums.log = log, total[n].node = n;
}

void Totals::replay(const Addend& a) {
  if (a.slot >= bucket_slots())
    throw std::runtime_error("a recorded addition names no sum of pass 3");
  total.at(a.node).at(a.slot) += a.value;
}

void Totals::combine(const Totals& later) {
  for (size_t n = 0; n < total.size(); ++n) {
    compensated[n] = std::max(compensated[n], later.compensated[n]);
    events_below[n] += later.events_below[n];
  }
}

void Totals::write(Writer& out) const {
  auto holds = [&](uint32_t n) {
    return !holds_nothing(total[n]) || !is_zero(compensated[n]) || !is_zero(events_below[n]);
  };
  write_nodes(out, total.size(), holds, [&](uint32_t n) {
    write_buckets(out, total[n]);
    out.put(compensated[n]);
    out.put(events_below[n]);
  });
}

void Totals::read(Reader& in) {
  read_nodes(in, total.size(), [&](uint32_t n) {
    read_buckets(in, total[n]);
    compensated[n] = in.get<double>();
    events_below[n] = in.get<double>();
  });
}

}  // namespace scalea::overheads::detail
