// Literal experiments for the drg tests: regions, threads and nodes written out by hand.
#pragma once
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "scalea/drg/experiment.hpp"

namespace scalea::drg::test {

struct Builder {
  Experiment e;
  explicit Builder(std::vector<std::string> metrics = {"visits", "time", "time_min", "time_max", "wait",
                                                       "fork", "join", "team_size"},
                   std::string path = "literal") {
    e.path = std::move(path);
    e.meta = {{"format", "scalea-experiment"}, {"format_version", 1}, {"max_team_size", 2}};
    for (const std::string& m : metrics) {
      format::MetricMerge merge = format::MetricMerge::Sum;
      format::MetricType type = format::MetricType::U64;
      for (const auto& s : format::kCoreMetrics)
        if (m == s.name) merge = s.merge, type = s.type;
      e.metrics.push_back(m);
      e.metric_merge.push_back(merge);
      e.metric_type.push_back(type);
    }
    e.metrics_defined = true;
  }
  uint32_t region(RegionKind kind, std::string name = "", uint16_t subkind = 0, std::string file = "",
                  uint32_t line = 0, uint64_t address = 0) {
    Region r;
    r.kind = kind;
    r.subkind = subkind;
    r.name = std::move(name);
    r.file = std::move(file);
    r.line = line;
    r.address = address;
    e.regions.push_back(r);
    return uint32_t(e.regions.size() - 1);
  }
  // A new thread whose root runs `root_region`; returns its index in e.threads.
  uint32_t thread(int32_t rank, uint32_t tid, uint32_t root_region,
                  std::initializer_list<std::pair<const char*, double>> values = {}) {
    ThreadTree t;
    t.rank = rank;
    t.thread = tid;
    e.threads.push_back(std::move(t));
    uint32_t ti = uint32_t(e.threads.size() - 1);
    node(ti, format::kNoIndex, root_region, values);
    return ti;
  }
  // Appends a node to thread `ti`; returns its index.
  uint32_t node(uint32_t ti, uint32_t parent, uint32_t region,
                std::initializer_list<std::pair<const char*, double>> values = {}) {
    ThreadTree& t = e.threads[ti];
    t.parent.push_back(parent);
    t.region.push_back(region);
    size_t base = t.values.size();
    t.values.resize(base + e.metrics.size(), 0.0);
    for (const auto& [name, v] : values) {
      int m = e.metric(name);
      if (m >= 0) t.values[base + size_t(m)] = v;
    }
    return uint32_t(t.parent.size() - 1);
  }
};

// Load options for a synthetic experiment: its addresses are not in any binary.
inline LoadOptions no_symbols() {
  LoadOptions o;
  o.resolve_symbols = false;
  return o;
}

}  // namespace scalea::drg::test
