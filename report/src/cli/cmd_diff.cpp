// scalea diff A B: two experiments compared region by region (what got faster, which overhead
// class moved). Regions are matched by their call-path key (RegionOverheads::key, interned into
// one table for both; the program root matches whatever the binaries are called).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "analysis/meta.hpp"
#include "formats/report_json.hpp"
#include "formats/diff.hpp"
#include "analysis/share.hpp"
#include "study/study_report.hpp"

namespace scalea::cli {

using overheads::kClassCount;
using overheads::kClassKeys;

namespace {

struct DiffOptions {
  std::string a, b, ref_a, ref_b, format = "text";
  bool force = false;
  std::vector<std::string> decomposition;  // --decomposition
  double min_change = 0;
};

DiffSide side_of(const Analyzed& x, const std::string& reference) {
  DiffSide s;
  s.path = x.experiment().path;
  s.p = x.a.p;
  s.reference = reference;
  for (const auto& r : x.a.regions) s.regions.push_back({r.t_p, r.t_o, r.classes, r.p});
  s.region_path = [&x](size_t i) { return region_path(x.tree(), x.a.regions[i]); };
  return s;
}

// Under mpirun (`share`), the processes classify both runs together and rank 0 prints.
void run_diff(const DiffOptions& o, overheads::Share* share) {
  for (const std::string* d : {&o.a, &o.b})
    if (is_study(*d))
      throw UserError(*d +
                      " is a scaling study; diff compares two experiments (give one run of "
                      "each study)");
  auto keys = std::make_shared<overheads::CallPathKeys>();
  AnalysisOptions ao;
  ao.force = o.force;
  ao.decomposition = decomposition_args(o.decomposition);
  ao.keys = keys;
  ao.share = share;
  ao.reference = o.ref_a;
  std::unique_ptr<Analyzed> xa = analyze(o.a, ao);
  ao.reference = o.ref_b;
  std::unique_ptr<Analyzed> xb = analyze(o.b, ao);
  if (share && share->rank() != 0) return;  // rank 0 prints
  // Per call-path key: the experiment's first region with it (-1 where it has none).
  auto by_key = [&](const Analyzed& x) {
    std::vector<long> m(keys->size(), -1);
    for (size_t i = 0; i < x.a.regions.size(); ++i)
      if (m[x.a.regions[i].key] < 0) m[x.a.regions[i].key] = long(i);
    return m;
  };
  std::vector<long> ma = by_key(*xa), mb = by_key(*xb);
  // Regions in the order of their call-path key strings (the tie order of the sorts).
  std::vector<uint32_t> rank = keys->string_order(), in_order(rank.size());
  for (uint32_t k = 0; k < rank.size(); ++k) in_order[rank[k]] = k;
  std::vector<std::pair<long, long>> matched;
  for (uint32_t k : in_order)
    if (ma[k] >= 0 || mb[k] >= 0) matched.emplace_back(ma[k], mb[k]);
  print_diff(side_of(*xa, o.ref_a), side_of(*xb, o.ref_b), matched, o.format, o.min_change);
}

}  // namespace

void add_diff(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  CLI::App* cmd = app.add_subcommand("diff", "Compare two experiments region by region");
  cmd->footer(
      "Examples:\n"
      "  scalea diff md.p1 md.p4                  what changed from 1 to 4 threads\n"
      "  scalea diff old.p4 new.p4 --format json  before/after an optimization, as JSON\n"
      "  scalea diff old.p4 new.p4 --ref-a old.p1 --ref-b new.p1   classes against references\n\n"
      "Regions are matched by call path and source location; rows are sorted by the absolute\n"
      "change of T_p. Regions that exist in one experiment only are listed after the table.");
  cmd->add_option("a", o->a, "Experiment A (before)")->required();
  cmd->add_option("b", o->b, "Experiment B (after)")->required();
  cmd->add_option("--ref-a", o->ref_a, "Reference run (p = 1) for A");
  cmd->add_option("--ref-b", o->ref_b, "Reference run (p = 1) for B");
  cmd->add_flag("--force", o->force,
                "Use a reference even when its program, arguments or p differ (warned)");
  add_decomposition_option(cmd, o->decomposition);
  cmd->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--min-change", o->min_change, "Hide regions whose T_p changed less (s)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([o] {
    std::unique_ptr<overheads::Share> share = analysis_share();
    run_shared(share.get(), "diff", [&] { run_diff(*o, share.get()); });
  });
}

}  // namespace scalea::cli
