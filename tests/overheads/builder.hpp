// Small literal experiments for unit tests: threads, their trees and metric values, with times
// given in milliseconds (the experiment stores nanoseconds).
#pragma once
#include <map>
#include <string>

#include "scalea/drg/experiment.hpp"
#include "scalea/format.hpp"

namespace scalea::test {

using Metrics = std::map<std::string, double>;  // name -> value (times in ms)
using format::RegionKind;

class Builder {
 public:
  Builder() {
    for (const auto& m : format::kCoreMetrics) e_.metrics.push_back(m.name);
    region(RegionKind::Program, "prog");
  }
  uint32_t region(RegionKind kind, const std::string& name, uint16_t sub = 0) {
    drg::Region r;
    r.kind = kind;
    r.subkind = sub;
    r.name = name;
    r.file = "app.c";
    r.line = uint32_t(e_.regions.size()) + 1;
    e_.regions.push_back(r);
    return uint32_t(e_.regions.size() - 1);
  }
  // A thread whose root (program) lasted root_ms; returns its index.
  uint32_t thread(bool initial, double root_ms, int rank = -1) {
    drg::ThreadTree t;
    t.rank = rank;
    t.thread = uint32_t(e_.threads.size());
    t.flags = initial ? format::kThreadInitial : 0;
    e_.threads.push_back(t);
    node(t.thread, format::kNoIndex, 0, {{"time", root_ms}, {"visits", 1}});
    return t.thread;
  }
  uint32_t node(uint32_t thread, uint32_t parent, uint32_t region, const Metrics& m) {
    drg::ThreadTree& t = e_.threads[thread];
    t.parent.push_back(parent);
    t.region.push_back(region);
    for (const std::string& name : e_.metrics) {
      auto it = m.find(name);
      double v = it == m.end() ? 0 : it->second;
      t.values.push_back(format::is_time_metric(name) ? v * 1e6 : v);
    }
    return uint32_t(t.parent.size() - 1);
  }
  drg::Experiment& experiment() { return e_; }

 private:
  drg::Experiment e_;
};

}  // namespace scalea::test
