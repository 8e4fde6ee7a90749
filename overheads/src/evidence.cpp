// The reference's evidence: extra work, spin-waits, replicated code and priced cache misses move
// out of the run's useful time (docs/overhead-model.md, "How the buckets are measured", 4).
#include "facts.hpp"

#include <cmath>

namespace scalea::overheads::detail {

namespace {
// With call-path samples in both runs, replication needs the on-CPU time of the node's k PEs
// to hold the reference's work and k - 1 copies of most of it (the same work, not only the same
// wall time: ranks that share CPUs, or wait for one, take as long for a share of the work). Where
// the reference was mostly off a CPU there (sleeping, in I/O), the wall times decide. Where it
// has fewer than kCpuEvidenceMinSeconds of samples, the counts speak only beyond two standard
// errors: the PEs' most against the reference's least. The samples come every period of a
// thread's CPU time, so a visit's count is off by less than one sample, at random phase: the
// variance of a node's count is at most a quarter per visit, and at most the count itself (many
// visits shorter than a period each give one sample or none).
double count_error(double cpu, double period, double visits) {
  const double samples = cpu / period;
  return 2 * period * std::sqrt(std::min(samples, std::max(1.0, visits) / 4));
}
bool did_the_work(const RunFacts& f, const RunFacts& rf, uint32_t n, uint32_t rn) {
  const double u_ref = rf.own_useful[rn], cpu_ref = rf.cpu_sum[rn];
  if (!f.sampled || !rf.sampled || cpu_ref < kCpuEvidenceShare * u_ref) return true;
  const double copies = double(f.useful_pes[n]) - 1;
  const double need = 1 + kReplicaMinShare * copies;
  if (cpu_ref >= kCpuEvidenceMinSeconds) return f.cpu_sum[n] >= need * cpu_ref;
  if (rf.sample_period <= 0 || f.sample_period <= 0) return true;
  const double least_ref = cpu_ref - count_error(cpu_ref, rf.sample_period, rf.visits[rn]);
  const double most_run = f.cpu_sum[n] + count_error(f.cpu_sum[n], f.sample_period, f.visits[n]);
  if (least_ref <= 0) return true;
  return most_run >= need * least_ref;
}
}  // namespace

// Evidence from the reference run moves work out of the run's useful time: work of regions the
// reference does not have and loop iterations beyond its count (additional computation), busy
// waiting on flush, replicated code, and priced extra cache misses.
void apply_evidence(const MergedTree& run, RunFacts& f, const RunFacts& rf,
                    const std::vector<uint32_t>& ref_index, const MachineModel* machine,
                    bool& misses_priced) {
  const Rule* extra = find_rule(RegionKind::Program, 0, Part::ExtraWork);
  const Rule* replicated = find_rule(RegionKind::Program, 0, Part::Replicated);
  const Rule* spin = find_rule(RegionKind::Program, 0, Part::SpinWait);
  // Levels of a recursion the reference ran at other depths: not extra work (facts.hpp).
  const std::vector<char> recursive = deeper_in_recursion(
      run, [&](uint32_t a) { return ref_index[f.keys[a]] != format::kNoIndex; });
  for (uint32_t n = 0; n < run.nodes().size(); ++n) {
    const drg::Region& r = run.region_of(n);
    const Rule* own_rule = f.plan[n].exclusive;
    double u = f.own_useful[n];
    if (!own_rule || !own_rule->useful || u <= 0) continue;
    uint32_t rn = ref_index[f.keys[n]];
    double moved = 0;
    if (rn == format::kNoIndex) {
      if (r.kind != RegionKind::Program && !recursive[n]) {
        moved = u;
        f.own[n].add(extra, u);
      }
    } else {
      double u_ref = rf.own_useful[rn];
      if ((r.kind == RegionKind::Loop || r.kind == RegionKind::Taskloop) && rf.iterations[rn] > 0 &&
          f.iterations[n] > rf.iterations[rn] * 1.001) {
        moved = u * (1 - rf.iterations[rn] / f.iterations[n]);
        f.own[n].add(extra, moved);
      }
      double flushes = f.flushes[n], flushes_ref = rf.flushes[rn];
      double k = f.useful_pes[n];
      if (flushes >= kSpinMinFlushes + flushes_ref && flushes >= kSpinFactor * flushes_ref) {
        // Busy-waiting on flush: the time beyond the reference's work is waiting.
        double spun = std::max(0.0, u - moved - u_ref);
        f.own[n].add(spin, spun);
        moved += spun;
      } else if (is_undivided(r.kind) && k >= 2 && u_ref > 0 && f.visits[n] >= k * rf.visits[rn] &&
                 f.useful_min[n] >= kReplicaMinShare * u_ref &&
                 f.useful_max[n] <= kReplicaMaxSpread * f.useful_min[n] &&
                 did_the_work(f, rf, n, rn)) {
        // Every PE repeats the reference's visits and does most of its work: one copy is
        // useful, the others are loss; time beyond the reference's per PE is not replication.
        double copies = f.capped_useful[n];
        double lost = std::max(0.0, std::min(copies, u - moved) - u_ref);
        f.own[n].add(replicated, lost);
        moved += lost;
      }
    }
    // Cache misses beyond the reference's, priced by the calibrated penalty per level.
    if (rn != format::kNoIndex && machine && !machine->miss_penalty_ns.empty()) {
      static const char* level_name[3] = {"L1", "L2", "L3"};
      double d = 0;
      for (size_t level = 0; level < 3; ++level) {
        if (!f.has_misses[level] || !rf.has_misses[level]) continue;
        auto pen = machine->miss_penalty_ns.find(level_name[level]);
        if (pen == machine->miss_penalty_ns.end()) continue;
        double more = f.misses[n][level] - rf.misses[rn][level];
        if (more > 0) d += more * std::max(0.0, pen->second) * 1e-9;
      }
      d = std::min(d, std::max(0.0, u - moved));
      if (d > 0) {
        f.own[n].add(find_rule(r.kind, r.subkind, Part::ExtraMisses), d);
        misses_priced = true;
        moved += d;
      }
    }
    f.own[n].useful -= moved;
  }
}

}  // namespace scalea::overheads::detail
