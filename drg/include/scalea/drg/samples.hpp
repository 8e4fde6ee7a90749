// What call-path sampling saw (docs/sampling.md), per node of the merged tree: the functions and
// source lines that ran on a CPU while the node was a thread's current region. Sampled frames are
// not regions: they never enter the classification, so T_o = sum of the classes is untouched;
// they say where inside a region its time went.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "scalea/drg/cct.hpp"

namespace scalea::drg {

// A function below a node: CPU time (s, summed over threads) with it on the stack (inclusive),
// in it (self), and charged to it as the program's code (own): a sample is charged to its
// innermost frame in the program's own code (not in a system library, the OpenMP or MPI runtime,
// the tool), so that a memcpy or an MPI progress loop counts for the function that called it; a
// sample with no such frame is charged to its innermost one. Its hottest line is the one with the
// most own time (a call site when the time was in a library call).
struct SampledFunction {
  std::string name;    // the function (innermost, inlined ones included), else its ELF symbol
  std::string module;  // the object file, without directories
  double inclusive = 0, self = 0, own = 0;
  double own_error = 0;                    // one standard deviation of `own` (its sample count's)
  double own_samples = 0;                  // the samples `own` comes from
  uint32_t hot_region = format::kNoIndex;  // its line with the most own time
  // On every sampled path below the node (the node's context: main, the outlined body, ...).
  bool on_every_path = false;
};

// A source line (or a code address without line information) and its own time.
struct SampledLine {
  uint32_t region = format::kNoIndex;
  std::string function, module;  // the function it is charged to, as SampledFunction names it
  double own = 0, own_error = 0;
  double samples = 0;  // the samples `own` comes from
};

// Each sample stands for a share of its thread's CPU time (the thread's CPU time while it was
// sampled over its samples, docs/sampling.md): times are seconds of CPU time.
class SampleProfile {
 public:
  // One pass over the tree's threads (for_each_batch: in memory or read by file).
  explicit SampleProfile(const MergedTree& t);

  bool present() const { return total_.count > 0; }
  double total_cpu() const { return total_.cpu; }
  double total_samples() const { return total_.count; }
  // CPU time sampled while the node was a thread's current region (its measured children's not
  // included), over all threads.
  double cpu(uint32_t node) const;
  // The same, over the node and every measured node below it.
  double inclusive_cpu(uint32_t node) const;
  // The number of samples cpu(node) (with `below`, inclusive_cpu(node)) comes from.
  double samples(uint32_t node, bool below = false) const;
  // The functions sampled at the node (with `below`, also at its measured descendants), by own
  // time, then inclusive time, largest first.
  std::vector<SampledFunction> functions(uint32_t node, bool below = false) const;
  // The functions sampled at any of `nodes` (each node alone, not below it), added up; ordered
  // as functions().
  std::vector<SampledFunction> functions_at(const std::vector<uint32_t>& nodes) const;
  // The whole run's flat profile (every node), by own time, largest first.
  std::vector<SampledFunction> flat() const;
  // Lines by own time (program code, or the innermost frame when a sample had none).
  std::vector<SampledLine> lines() const;
  // The lines sampled at any of `nodes` (each node alone), added up; ordered as lines().
  std::vector<SampledLine> lines_at(const std::vector<uint32_t>& nodes) const;
  // Whether a module is the program's own code: not a system library (/lib, /usr/lib), the
  // vDSO, the OpenMP or MPI runtime, or the tool.
  static bool program_module(const std::string& path);

 private:
  // CPU time and the number of samples it came from.
  struct Amount {
    double cpu = 0, count = 0;
    void add(const SampledFrame& f) { cpu += f.cpu_s, count += f.self; }
    void add(const Amount& a) { cpu += a.cpu, count += a.count; }
    double error() const;  // one standard deviation of cpu
  };
  struct PerFunction {
    double inclusive = 0, self = 0;
    Amount own;
    std::map<uint32_t, Amount> lines;  // sampled region -> own
  };
  struct PerNode {
    Amount here;
    std::unordered_map<uint32_t, PerFunction> functions;  // function id -> figures
  };
  void add_thread(const ThreadTree& th, const std::vector<uint32_t>& merged);
  uint32_t function_id(const std::string& name, const std::string& module);
  // The function as the profile names it at a merged node: an outlined body by its origin.
  uint32_t named_in(uint32_t fn, uint32_t node);
  std::vector<SampledFunction> listed(const std::vector<const PerNode*>& nodes, double total) const;
  std::vector<SampledLine> lines_of(const std::vector<const PerNode*>& nodes) const;
  std::vector<const PerNode*> sampled_at(const std::vector<uint32_t>& nodes, double& total) const;

  const MergedTree& tree_;
  Amount total_;
  std::vector<std::string> function_names_, function_modules_;
  std::vector<char> outlined_;              // function id -> a compiler-outlined body
  std::map<uint32_t, std::string> origin_;  // merged node -> the function it is in
  std::unordered_map<std::string, uint32_t> function_ids_;
  std::vector<uint32_t> function_of_region_;  // sampled region -> function id
  // Sampled region -> the functions its code was inlined into (DWARF's scopes, else the ELF
  // symbol when it is not the function): they are on the stack too.
  std::vector<std::vector<uint32_t>> inlined_into_;
  std::vector<char> program_code_;     // sampled region -> in the program's own code
  std::map<uint32_t, PerNode> nodes_;  // merged node -> what was sampled there
};

}  // namespace scalea::drg
