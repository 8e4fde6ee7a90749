#include "scalea/drg/samples.hpp"

#include "scalea/drg/symbols.hpp"

#include <algorithm>
#include <cmath>

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

uint32_t SampleProfile::function_id(const std::string& name, const std::string& module) {
  auto [it, added] =
      function_ids_.emplace(name + "\x1f" + module, uint32_t(function_names_.size()));
  if (added) {
    function_names_.push_back(name);
    function_modules_.push_back(module);
    outlined_.push_back(is_outlined_function(name));
  }
  return it->second;
}

uint32_t SampleProfile::named_in(uint32_t fn, uint32_t node) {
  if (fn == format::kNoIndex || !outlined_[fn]) return fn;
  // The body the compiler outlined for a construct (.omp_outlined._debug__.50): named after the
  // function the construct is in, which the region the sample was taken in knows.
  auto it = origin_.find(node);
  if (it == origin_.end()) {
    std::string from;
    for (uint32_t n = node; n != format::kNoIndex && from.empty(); n = tree_.node(n).parent) {
      const std::string& f = tree_.region_of(n).function;
      if (!f.empty() && !is_outlined_function(f)) from = f;
    }
    it = origin_.emplace(node, from).first;
  }
  if (it->second.empty()) return fn;
  return function_id(it->second + " (outlined body)", function_modules_[fn]);
}

SampleProfile::SampleProfile(const MergedTree& t) : tree_(t) {
  const Experiment& e = t.experiment();
  function_of_region_.assign(e.regions.size(), format::kNoIndex);
  inlined_into_.assign(e.regions.size(), {});
  program_code_.assign(e.regions.size(), 0);

  for (uint32_t i = 0; i < e.regions.size(); ++i) {
    const Region& r = e.regions[i];
    if (r.kind != RegionKind::Sampled) continue;
    const std::string module = file_name_of(r.module), name = function_name(r);
    function_of_region_[i] = function_id(name, module);
    program_code_[i] = program_module(r.module);
    // Code inlined into another function: the symbol is the function the frame really is.
    for (const std::string& outer : r.inlined_into)
      inlined_into_[i].push_back(function_id(outer, module));
    // Without the inline scopes, the function the code is physically in (its ELF symbol).
    if (r.inlined_into.empty() && !r.symbol.empty() && r.symbol != name)
      inlined_into_[i].push_back(function_id(r.symbol, module));
  }
  t.for_each_batch([&](const ThreadBatch& b) {
    for (uint32_t k = 0; k < b.count; ++k) add_thread(b.threads[k], b.merged[k]);
  });
}

void SampleProfile::add_thread(const ThreadTree& th, const std::vector<uint32_t>& merged) {
  std::vector<uint32_t> seen;  // the functions of one path, each once
  auto up = [&](const SampledFrame* g) {
    return g->parent == format::kNoIndex || g->parent >= th.samples.size() ? nullptr
                                                                           : &th.samples[g->parent];
  };
  for (const SampledFrame& f : th.samples) {
    if (f.self <= 0 || f.node >= merged.size()) continue;
    const uint32_t node = merged[f.node];
    PerNode& pn = nodes_[node];
    pn.here.add(f);
    total_.add(f);
    pn.functions[named_in(function_of_region_[f.region], node)].self += f.cpu_s;
    // Charged to the innermost frame in the program's own code, else to the leaf.
    const SampledFrame* charged = &f;
    for (const SampledFrame* g = &f; g; g = up(g))
      if (program_code_[g->region]) {
        charged = g;
        break;
      }
    PerFunction& own = pn.functions[named_in(function_of_region_[charged->region], node)];
    own.own.add(f);
    own.lines[charged->region].add(f);
    seen.clear();
    auto on_stack = [&](uint32_t fn) {
      if (fn == format::kNoIndex || std::find(seen.begin(), seen.end(), fn) != seen.end()) return;
      seen.push_back(fn);
      pn.functions[fn].inclusive += f.cpu_s;
    };
    for (const SampledFrame* g = &f; g; g = up(g)) {
      on_stack(named_in(function_of_region_[g->region], node));
      for (uint32_t outer : inlined_into_[g->region]) on_stack(named_in(outer, node));
    }
  }
}

double SampleProfile::Amount::error() const {
  return count > 0 ? std::sqrt(count) * cpu / count : 0.0;
}

double SampleProfile::cpu(uint32_t node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0.0 : it->second.here.cpu;
}

double SampleProfile::samples(uint32_t node, bool below) const {
  auto it = nodes_.find(node);
  double n = it == nodes_.end() ? 0.0 : it->second.here.count;
  if (below)
    for (uint32_t c : tree_.node(node).children) n += samples(c, true);
  return n;
}

double SampleProfile::inclusive_cpu(uint32_t node) const {
  double sum = cpu(node);
  for (uint32_t c : tree_.node(node).children) sum += inclusive_cpu(c);
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
      s.own.add(pf.own);
      for (const auto& [r, v] : pf.lines) s.lines[r].add(v);
    }
  std::vector<SampledFunction> out;
  for (const auto& [fn, pf] : sum) {
    SampledFunction f;
    f.name = function_names_[fn];
    f.module = function_modules_[fn];
    f.inclusive = pf.inclusive;
    f.self = pf.self;
    f.own = pf.own.cpu;
    f.own_error = pf.own.error();
    f.own_samples = pf.own.count;
    double hot = 0;
    for (const auto& [r, v] : pf.lines)
      if (v.cpu > hot) hot = v.cpu, f.hot_region = r;
    f.on_every_path = total > 0 && pf.inclusive >= total * (1 - 1e-9);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const SampledFunction& a, const SampledFunction& b) {
    if (a.own != b.own) return a.own > b.own;
    return a.inclusive != b.inclusive ? a.inclusive > b.inclusive : a.name < b.name;
  });
  return out;
}

std::vector<const SampleProfile::PerNode*> SampleProfile::sampled_at(
    const std::vector<uint32_t>& nodes, double& total) const {
  std::vector<const PerNode*> out;
  total = 0;
  for (uint32_t n : nodes) {
    auto it = nodes_.find(n);
    if (it != nodes_.end()) out.push_back(&it->second), total += it->second.here.cpu;
  }
  return out;
}

std::vector<SampledFunction> SampleProfile::functions(uint32_t node, bool below) const {
  std::vector<uint32_t> nodes, todo{node};
  while (!todo.empty()) {
    uint32_t n = todo.back();
    todo.pop_back();
    nodes.push_back(n);
    if (below)
      for (uint32_t c : tree_.node(n).children) todo.push_back(c);
  }
  return functions_at(nodes);
}

std::vector<SampledFunction> SampleProfile::functions_at(const std::vector<uint32_t>& nodes) const {
  double total = 0;
  std::vector<const PerNode*> at = sampled_at(nodes, total);
  return listed(at, total);
}

std::vector<SampledFunction> SampleProfile::flat() const {
  std::vector<const PerNode*> nodes;
  for (const auto& kv : nodes_) nodes.push_back(&kv.second);
  return listed(nodes, total_.cpu);
}

std::vector<SampledLine> SampleProfile::lines() const {
  std::vector<const PerNode*> nodes;
  for (const auto& kv : nodes_) nodes.push_back(&kv.second);
  return lines_of(nodes);
}

std::vector<SampledLine> SampleProfile::lines_at(const std::vector<uint32_t>& nodes) const {
  double total = 0;
  return lines_of(sampled_at(nodes, total));
}

std::vector<SampledLine> SampleProfile::lines_of(const std::vector<const PerNode*>& nodes) const {
  std::map<std::pair<uint32_t, uint32_t>, Amount> by_region;  // (region, function) -> own
  for (const PerNode* pn : nodes)
    for (const auto& [fn, pf] : pn->functions)
      for (const auto& [r, v] : pf.lines) by_region[{r, fn}].add(v);
  std::vector<SampledLine> out;
  for (const auto& [key, v] : by_region)
    out.push_back(SampledLine{key.first, function_names_[key.second], function_modules_[key.second],
                              v.cpu, v.error(), v.count});
  std::sort(out.begin(), out.end(), [](const SampledLine& a, const SampledLine& b) {
    return a.own != b.own ? a.own > b.own : a.region < b.region;
  });
  return out;
}

bool SampleProfile::program_module(const std::string& path) {
  if (path.empty()) return false;
  for (const char* dir : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/local/lib/"})
    if (path.rfind(dir, 0) == 0) return false;
  const std::string file = file_name_of(path);
  for (const char* lib : {"linux-vdso", "ld-linux", "libc.so", "libm.so", "libomp", "libgomp",
                          "libiomp", "libmpi", "libopen-", "libpmix", "libscalea", "libarcher",
                          "libclang_rt", "libasan", "libtsan", "libubsan"})
    if (file.rfind(lib, 0) == 0) return false;
  return true;
}

}  // namespace scalea::drg
