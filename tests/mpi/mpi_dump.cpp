// mpi_dump DIR [--symbols]: prints an experiment as one JSON document for the MPI integration
// tests (check_mpi.py): the meta data, and every call-path node of every thread with its region
// (id in the unified table, name, and file:line when the table or, with --symbols, the symbol
// resolution gives one) and metrics, its path given as region labels
// ("program/user: ring/MPI_Sendrecv"). Without --symbols the region table is the one the
// collector wrote: one region per code address (e.g. per MPI call site).
#include <iostream>
#include <string>
#include <nlohmann/json.hpp>

#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/overheads/classify.hpp"

int main(int argc, char** argv) {
  bool symbols = argc == 3 && std::string(argv[2]) == "--symbols";
  if (argc != 2 && !symbols) {
    std::cerr << "usage: mpi_dump EXPERIMENT [--symbols]\n";
    return 2;
  }
  try {
    scalea::drg::LoadOptions opts;
    opts.resolve_symbols = symbols;
    scalea::drg::Experiment e = scalea::drg::load_experiment(argv[1], opts);
    nlohmann::json out;
    out["meta"] = e.meta;
    out["ranks"] = e.ranks();
    out["complete"] = e.complete();
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& t : e.threads) {
      std::vector<std::string> paths(t.size());
      for (uint32_t n = 0; n < t.size(); ++n) {
        const auto& r = e.regions[t.region[n]];
        std::string label = r.kind == scalea::format::RegionKind::Program ? "program" : r.label();
        paths[n] = t.parent[n] == scalea::format::kNoIndex ? label : paths[t.parent[n]] + "/" + label;
        nlohmann::json m;
        for (size_t k = 0; k < e.metrics.size(); ++k) m[e.metrics[k]] = e.value(t, n, int(k));
        nodes.push_back({{"rank", t.rank}, {"thread", t.thread}, {"index", n}, {"path", paths[n]},
                         {"kind", std::string(scalea::format::region_kind_name(r.kind))},
                         {"subkind", r.subkind}, {"name", r.name}, {"region", t.region[n]},
                         {"file", r.file}, {"line", r.line}, {"function", r.function},
                         {"metrics", m}});
      }
    }
    out["nodes"] = nodes;
    // The six overhead classes of every region must sum to its T_o (docs/overhead-model.md).
    scalea::drg::MergedTree tree(e);
    out["identity_violations"] =
        scalea::overheads::identity_violations(scalea::overheads::classify(tree, nullptr));
    std::cout << out.dump(1) << "\n";
  } catch (const std::exception& ex) {
    std::cerr << "mpi_dump: " << ex.what() << "\n";
    return 1;
  }
  return 0;
}
