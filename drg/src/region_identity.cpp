#include "region_identity.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace scalea::drg {

namespace fmt = scalea::format;

void fold_duplicate_paths(ThreadTree& t, const std::vector<fmt::MetricMerge>& merge,
                          FlatMap64& first, const std::vector<uint32_t>* remap,
                          const std::vector<char>* drop) {
  const size_t nm = t.values.empty() ? 0 : merge.size();  // a thread read without its values
  first.clear();                                          // (new parent, region) -> new index
  bool any = remap != nullptr || drop != nullptr;
  for (uint32_t n = 1; n < t.size() && !any; ++n) {
    uint64_t key = uint64_t(t.parent[n]) << 32 | t.region[n];
    any = !first.emplace(key, n).second;
  }
  if (!any) return;
  first.clear();
  std::vector<uint32_t> to(t.size());
  ThreadTree out;
  out.rank = t.rank;
  out.thread = t.thread;
  out.flags = t.flags;
  out.os_tid = t.os_tid;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (n != 0 && drop != nullptr && (*drop)[t.region[n]]) {
      to[n] = to[t.parent[n]];
      continue;
    }
    uint32_t parent = n == 0 ? fmt::kNoIndex : to[t.parent[n]];
    uint32_t region = remap != nullptr ? (*remap)[t.region[n]] : t.region[n];
    uint64_t key = uint64_t(parent) << 32 | region;
    const uint32_t* found = n == 0 ? nullptr : first.find(key);
    const double* v = t.values.data() + size_t(n) * nm;
    if (!found) {
      to[n] = uint32_t(out.parent.size());
      if (n) first.emplace(key, to[n]);
      out.parent.push_back(parent);
      out.region.push_back(region);
      out.values.insert(out.values.end(), v, v + nm);
      continue;
    }
    to[n] = *found;
    double* into = out.values.data() + size_t(*found) * nm;
    for (size_t m = 0; m < nm; ++m) {
      switch (merge[m]) {
        case fmt::MetricMerge::Min:
          // A node without a completed visit stores 0, which is no minimum.
          if (v[m] != 0 && (into[m] == 0 || v[m] < into[m])) into[m] = v[m];
          break;
        case fmt::MetricMerge::Max: into[m] = std::max(into[m], v[m]); break;
        default: into[m] += v[m];
      }
    }
  }
  t = std::move(out);
}

EntryFilter runtime_entry(const Region& r) {
  static const std::vector<std::string_view> parallel = {"__kmpc_fork_call*", "GOMP_parallel*"};
  static const std::vector<std::string_view> teams = {"__kmpc_fork_teams", "GOMP_teams*"};
  static const std::vector<std::string_view> barrier = {
      "__kmpc_barrier", "__kmpc_reduce*",     "__kmpc_end_reduce*", "GOMP_barrier*",
      "GOMP_loop_end*", "GOMP_sections_end*", "GOMP_single*"};
  static const std::vector<std::string_view> any_openmp = {"__kmpc_*", "GOMP_*", "omp_*"};
  static const std::vector<std::pair<RegionKind, std::vector<std::string_view>>> by_kind = {
      {RegionKind::Parallel, parallel},
      {RegionKind::Teams, teams},
      {RegionKind::Task, {"__kmpc_omp_task", "__kmpc_omp_task_with_deps", "GOMP_task"}},
      {RegionKind::Taskloop, {"__kmpc_taskloop*", "GOMP_taskloop*"}},
      {RegionKind::Taskwait, {"__kmpc_omp_taskwait*", "GOMP_taskwait*"}},
      {RegionKind::Taskgroup, {"__kmpc_taskgroup", "__kmpc_end_taskgroup", "GOMP_taskgroup*"}},
      {RegionKind::BarrierExplicit, barrier},
      {RegionKind::BarrierImplementation, barrier},
      {RegionKind::Reduction, {"__kmpc_reduce*", "__kmpc_end_reduce*", "GOMP_*"}},
      {RegionKind::Loop,
       {"__kmpc_for_static*", "__kmpc_dispatch_*", "__kmpc_dist_*", "GOMP_loop_*"}},
      {RegionKind::Sections,
       {"__kmpc_sections_init", "__kmpc_end_sections", "__kmpc_for_static*", "__kmpc_dispatch_*",
        "GOMP_sections*"}},
      {RegionKind::Single, {"__kmpc_single", "__kmpc_end_single", "GOMP_single*"}},
      {RegionKind::Masked,
       {"__kmpc_master", "__kmpc_end_master", "__kmpc_masked", "__kmpc_end_masked"}},
      {RegionKind::Critical, {"__kmpc_critical*", "__kmpc_end_critical", "GOMP_critical*"}},
      {RegionKind::Lock, {"omp_*"}},
      {RegionKind::NestLock, {"omp_*"}},
      {RegionKind::Atomic, {"__kmpc_atomic*", "GOMP_atomic*"}},
      {RegionKind::Ordered,
       {"__kmpc_ordered", "__kmpc_end_ordered", "__kmpc_doacross*", "GOMP_ordered*",
        "GOMP_doacross*"}},
      {RegionKind::Cancel, {"__kmpc_cancel*", "GOMP_cancel*"}},
  };
  if (r.kind == RegionKind::Mpi) {
    // An MPI call site calls MPI_X or, through a profiling library, PMPI_X.
    return [name = r.name](std::string_view symbol) {
      return symbol == name ||
             (symbol.size() == name.size() + 1 && symbol[0] == 'P' && symbol.substr(1) == name);
    };
  }
  if (r.kind == RegionKind::Io) {
    // An I/O call site calls the function or a variant of it (open64, __read_chk, __fprintf_chk).
    return [name = r.name](std::string_view symbol) {
      return symbol.find(name) != std::string_view::npos;
    };
  }
  const std::vector<std::string_view>* names = &any_openmp;
  if (r.kind == RegionKind::BarrierImplicit) {
    // The join barrier reports the parallel construct's address, the teams barrier the teams'.
    names = r.subkind == uint16_t(fmt::BarrierFlavour::Parallel) ? &parallel
            : r.subkind == uint16_t(fmt::BarrierFlavour::Teams)  ? &teams
                                                                 : &barrier;
  } else {
    for (const auto& [kind, list] : by_kind)
      if (kind == r.kind) names = &list;
  }
  return [names](std::string_view symbol) {
    for (std::string_view n : *names) {
      bool prefix = n.back() == '*';
      if (prefix ? symbol.substr(0, n.size() - 1) == n.substr(0, n.size() - 1) : symbol == n)
        return true;
    }
    return false;
  };
}

bool has_source(const Region& r) { return !r.file.empty() && r.line; }

std::optional<SourceKey> placed_key(const Region& r) {
  if (!has_source(r) && r.code == 0) return std::nullopt;
  return source_key(r, Paths::Full);
}

void keep_lowest_address(Region& kept, const Region& other) {
  if (other.module == kept.module && other.address < kept.address) kept.address = other.address;
}

void set_code(Region& r, const SourceLocation& loc) {
  r.code = loc.address;
  r.symbol = loc.symbol;
  r.symbol_offset = loc.symbol_offset;
}

bool same_region(const Region& a, const Region& b) {
  // The cheap fields first: this runs against every region.
  if (a.kind != b.kind || a.subkind != b.subkind || has_source(a) != has_source(b)) return false;
  if (!has_source(a) && (a.code == 0 || b.code == 0 || a.body != b.body)) return false;
  return source_key(a, Paths::Full) == source_key(b, Paths::Full);
}

}  // namespace scalea::drg
