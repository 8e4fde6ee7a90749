#include "scalea/drg/samples.hpp"

#include <algorithm>
#include <cmath>

#include "scalea/drg/meta.hpp"

namespace scalea::drg {

namespace {
std::string file_name_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The function a sampled code address is in, as a profile names it.
std::string function_name(const Region& r) {
  if (!r.function.empty()) return r.function;
  if (!r.symbol.empty()) return r.symbol;
  return "[" + (r.module.empty() ? std::string("unknown") : file_name_of(r.module)) + "]";
}
}  // namespace

SampleProfile::SampleProfile(const MergedTree& t) : tree_(t) {
  const Experiment& e = t.experiment();
  if (std::optional<SamplingMeta> s = read_meta(e.meta).sampling) period_s_ = s->period_s;
  function_of_region_.assign(e.regions.size(), format::kNoIndex);
  caller_of_region_.assign(e.regions.size(), format::kNoIndex);
  auto id_of = [&](const std::string& name, const std::string& module) {
    auto [it, added] =
        function_ids_.emplace(name + "\x1f" + module, uint32_t(function_names_.size()));
    if (added) {
      function_names_.push_back(name);
      function_modules_.push_back(module);
    }
    return it->second;
  };
  for (uint32_t i = 0; i < e.regions.size(); ++i) {
    const Region& r = e.regions[i];
    if (r.kind != RegionKind::Sampled) continue;
    const std::string module = file_name_of(r.module), name = function_name(r);
    function_of_region_[i] = id_of(name, module);
    // Code inlined into another function: the symbol is the function the frame really is.
    const std::string physical = r.symbol.substr(0, r.symbol.find('('));
    if (!physical.empty() && physical != name && r.symbol != name)
      caller_of_region_[i] = id_of(physical, module);
  }
  std::vector<uint32_t> seen;  // the functions of one path, each once
  t.for_each_batch([&](const ThreadBatch& b) {
    for (uint32_t k = 0; k < b.count; ++k) {
      const ThreadTree& th = b.threads[k];
      const std::vector<uint32_t>& merged = b.merged[k];
      for (const SampledFrame& f : th.samples) {
        if (f.self <= 0 || f.node >= merged.size()) continue;
        PerNode& pn = nodes_[merged[f.node]];
        pn.periods += f.self;
        total_ += f.self;
        const uint32_t leaf_fn = function_of_region_[f.region];
        PerFunction& leaf = pn.functions[leaf_fn];
        leaf.self += f.self;
        leaf.lines[f.region] += f.self;
        seen.clear();
        auto on_stack = [&](uint32_t fn) {
          if (fn == format::kNoIndex || std::find(seen.begin(), seen.end(), fn) != seen.end())
            return;
          seen.push_back(fn);
          pn.functions[fn].inclusive += f.self;
        };
        for (const SampledFrame* g = &f;; g = &th.samples[g->parent]) {
          on_stack(function_of_region_[g->region]);
          on_stack(caller_of_region_[g->region]);
          if (g->parent == format::kNoIndex || g->parent >= th.samples.size()) break;
        }
      }
    }
  });
}

double SampleProfile::periods(uint32_t node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0.0 : it->second.periods;
}

double SampleProfile::inclusive_periods(uint32_t node) const {
  double sum = periods(node);
  for (uint32_t c : tree_.node(node).children) sum += inclusive_periods(c);
  return sum;
}

std::vector<SampledFunction> SampleProfile::listed(const std::vector<const PerNode*>& nodes,
                                                   double total) const {
  std::map<uint32_t, PerFunction> sum;
  for (const PerNode* pn : nodes)
    for (const auto& [fn, pf] : pn->functions) {
      PerFunction& s = sum[fn];
      s.inclusive += pf.inclusive;
      s.self += pf.self;
      for (const auto& [r, v] : pf.lines) s.lines[r] += v;
    }
  std::vector<SampledFunction> out;
  for (const auto& [fn, pf] : sum) {
    SampledFunction f;
    f.name = function_names_[fn];
    f.module = function_modules_[fn];
    f.inclusive = pf.inclusive;
    f.self = pf.self;
    for (const auto& [r, v] : pf.lines)
      if (v > f.hot_self) f.hot_self = v, f.hot_region = r;
    f.on_every_path = total > 0 && pf.inclusive >= total * (1 - 1e-12);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const SampledFunction& a, const SampledFunction& b) {
    return a.inclusive != b.inclusive ? a.inclusive > b.inclusive : a.name < b.name;
  });
  return out;
}

std::vector<SampledFunction> SampleProfile::functions(uint32_t node, bool below) const {
  std::vector<const PerNode*> nodes;
  std::vector<uint32_t> todo{node};
  double total = 0;
  while (!todo.empty()) {
    uint32_t n = todo.back();
    todo.pop_back();
    auto it = nodes_.find(n);
    if (it != nodes_.end()) nodes.push_back(&it->second), total += it->second.periods;
    if (below)
      for (uint32_t c : tree_.node(n).children) todo.push_back(c);
  }
  return listed(nodes, total);
}

std::vector<SampledFunction> SampleProfile::flat() const {
  std::vector<const PerNode*> nodes;
  for (const auto& kv : nodes_) nodes.push_back(&kv.second);
  std::vector<SampledFunction> out = listed(nodes, total_);
  std::stable_sort(out.begin(), out.end(), [](const SampledFunction& a, const SampledFunction& b) {
    return a.self > b.self;
  });
  return out;
}

std::vector<SampledLine> SampleProfile::lines() const {
  std::map<uint32_t, double> by_region;
  for (const auto& kv : nodes_)
    for (const auto& [fn, pf] : kv.second.functions)
      for (const auto& [r, v] : pf.lines) by_region[r] += v;
  std::vector<SampledLine> out;
  for (const auto& [r, v] : by_region)
    out.push_back(SampledLine{r, function_names_[function_of_region_[r]], v});
  std::sort(out.begin(), out.end(), [](const SampledLine& a, const SampledLine& b) {
    return a.self != b.self ? a.self > b.self : a.region < b.region;
  });
  return out;
}

double SampleProfile::error(double periods) { return std::sqrt(std::max(0.0, periods)); }

}  // namespace scalea::drg
