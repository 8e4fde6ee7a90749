// load_dump DIR: a compact summary of a (large) experiment for the load tests (run_load.py):
// thread and node counts, visits per region kind, and per user region name the visits of every
// thread, except for generated names "load.r<i>", which are summarized (count, min, max, sum of
// visits). One JSON document on stdout; a load error is one line on stderr and exit status 1.
#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "scalea/drg/experiment.hpp"

using scalea::format::RegionKind;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: load_dump EXPERIMENT\n";
    return 2;
  }
  try {
    scalea::drg::LoadOptions opts;
    opts.resolve_symbols = false;
    scalea::drg::Experiment e = scalea::drg::load_experiment(argv[1], opts);
    const int visits = e.metric("visits");
    nlohmann::json out;
    out["complete"] = e.complete();
    out["threads"] = e.threads.size();
    out["anomalies"] = e.meta.value("anomalies", nlohmann::json::object());
    out["regions"] = e.regions.size();
    size_t nodes = 0, max_depth = 0;
    std::map<std::string, std::pair<double, size_t>> kinds;  // visits, nodes
    std::map<std::string, std::vector<double>> named;          // name -> visits per thread
    std::map<uint32_t, double> generated;                      // region -> visits (all threads)
    for (size_t ti = 0; ti < e.threads.size(); ++ti) {
      const auto& t = e.threads[ti];
      nodes += t.size();
      std::vector<size_t> depth(t.size(), 0);
      for (uint32_t n = 0; n < t.size(); ++n) {
        if (t.parent[n] != scalea::format::kNoIndex) depth[n] = depth[t.parent[n]] + 1;
        max_depth = std::max(max_depth, depth[n]);
        const auto& r = e.regions[t.region[n]];
        double v = e.value(t, n, visits);
        auto& k = kinds[std::string(scalea::format::region_kind_name(r.kind))];
        k.first += v;
        k.second += 1;
        if (r.kind != RegionKind::User) continue;
        if (r.name.rfind("load.r", 0) == 0) {
          generated[t.region[n]] += v;
        } else {
          auto& per = named[r.name];
          per.resize(e.threads.size(), 0.0);
          per[ti] += v;
        }
      }
    }
    out["nodes"] = nodes;
    out["max_depth"] = max_depth;
    for (const auto& [k, v] : kinds) out["kinds"][k] = {{"visits", v.first}, {"nodes", v.second}};
    for (const auto& [name, per] : named) out["named"][name] = per;
    double lo = generated.empty() ? 0 : 1e300, hi = 0, sum = 0;
    for (const auto& [r, v] : generated) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    out["generated"] = {{"count", generated.size()}, {"min", lo}, {"max", hi}, {"sum", sum}};
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const std::exception& ex) {
    std::cerr << "load_dump: " << ex.what() << "\n";
    return 1;
  }
}
