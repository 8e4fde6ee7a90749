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
#include "export_formats.hpp"
#include "report_json.hpp"
#include "diff.hpp"
#include "parallel.hpp"
#include "study_report.hpp"

namespace scalea::cli {

using overheads::kClassCount;
using overheads::kClassKeys;

namespace {

struct DiffOptions {
  std::string a, b, ref_a, ref_b, format = "text";
  double min_change = 0;
};

struct Row {
  const DiffRegion *a = nullptr, *b = nullptr;
  size_t ia = 0, ib = 0;           // indices into the sides' regions
  double change = 0, percent = 0;  // T_p(B) - T_p(A), s and % of T_p(A)
  int moved = -1;                  // class whose value changed most
  double moved_by = 0;
};

nlohmann::json side(const DiffSide& s, size_t i) {
  const DiffRegion& r = s.regions[i];
  nlohmann::json ov;
  for (int c = 0; c < kClassCount; ++c)
    ov[std::string(kClassKeys[size_t(c)])] = r.classes[size_t(c)];
  ov["total"] = r.t_o;
  return {{"path", s.region_path(i)}, {"p", r.p}, {"time", r.t_p}, {"overheads", ov}};
}

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
  std::unique_ptr<Analyzed> xa = analyze(o.a, o.ref_a, 0, keys, nullptr, share),
                            xb = analyze(o.b, o.ref_b, 0, keys, nullptr, share);
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

void print_diff(const DiffSide& a, const DiffSide& b,
                const std::vector<std::pair<long, long>>& matched, const std::string& format,
                double min_change) {
  std::vector<Row> rows, only_a, only_b;
  for (const auto& [ia, ib] : matched) {
    if (ia < 0) continue;
    if (ib < 0) {
      only_a.push_back({&a.regions[size_t(ia)], nullptr, size_t(ia), 0});
      continue;
    }
    Row row{&a.regions[size_t(ia)], &b.regions[size_t(ib)], size_t(ia), size_t(ib)};
    row.change = row.b->t_p - row.a->t_p;
    // Below 0.1 ms in A a percentage says nothing (the region barely ran): NaN, shown as "new".
    row.percent = row.a->t_p >= 1e-4 ? 100 * row.change / row.a->t_p : std::nan("");
    for (int c = 0; c < kClassCount; ++c) {
      double d = row.b->classes[size_t(c)] - row.a->classes[size_t(c)];
      if (std::abs(d) > std::abs(row.moved_by)) row.moved_by = d, row.moved = c;
    }
    if (std::abs(row.change) >= min_change) rows.push_back(row);
  }
  for (const auto& [ia, ib] : matched)
    if (ib >= 0 && ia < 0) only_b.push_back({nullptr, &b.regions[size_t(ib)], 0, size_t(ib)});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
    return std::abs(x.change) > std::abs(y.change);
  });
  auto by_time = [](bool use_a) {
    return [use_a](const Row& x, const Row& y) {
      return (use_a ? x.a : x.b)->t_p > (use_a ? y.a : y.b)->t_p;
    };
  };
  std::stable_sort(only_a.begin(), only_a.end(), by_time(true));
  std::stable_sort(only_b.begin(), only_b.end(), by_time(false));

  if (format == "json") {
    nlohmann::json out;
    auto header = [](const DiffSide& s) {
      return nlohmann::json{{"path", s.path},
                            {"p", s.p},
                            {"reference", s.reference.empty() ? nlohmann::json(nullptr)
                                                              : nlohmann::json(s.reference)}};
    };
    out["schema"] = "scalea-diff/1";
    out["a"] = header(a);
    out["b"] = header(b);
    // The lists are written one row at a time (dump_streamed): a document tree of 100,000 rows
    // took 2 GB.
    auto regions = [&](const Emit<nlohmann::json>& emit) {
      for (const Row& r : rows) {
        nlohmann::json classes;
        for (int c = 0; c < kClassCount; ++c)
          classes[std::string(kClassKeys[size_t(c)])] =
              r.b->classes[size_t(c)] - r.a->classes[size_t(c)];
        emit({{"path", a.region_path(r.ia)},
              {"a", side(a, r.ia)},
              {"b", side(b, r.ib)},
              {"change", r.change},
              {"change_percent",
               std::isnan(r.percent) ? nlohmann::json(nullptr) : nlohmann::json(r.percent)},
              {"class_changes", classes},
              {"moved_most", r.moved < 0 ? nlohmann::json(nullptr)
                                         : nlohmann::json{{"class", kClassKeys[size_t(r.moved)]},
                                                          {"change", r.moved_by}}}});
      }
    };
    auto oa = [&](const Emit<nlohmann::json>& emit) {
      for (const Row& r : only_a) emit(side(a, r.ia));
    };
    auto ob = [&](const Emit<nlohmann::json>& emit) {
      for (const Row& r : only_b) emit(side(b, r.ib));
    };
    dump_streamed<nlohmann::json>(write_to(std::cout), std::move(out),
                                  {{"regions", regions}, {"only_in_a", oa}, {"only_in_b", ob}});
    std::cout << "\n";
    return;
  }
  fmt::print("A  {} (p = {}{})\n", a.path, a.p,
             a.reference.empty() ? "" : ", reference " + a.reference);
  fmt::print("B  {} (p = {}{})\n\n", b.path, b.p,
             b.reference.empty() ? "" : ", reference " + b.reference);
  fmt::print("{:<50} {:>9} {:>9} {:>9} {:>8}  {}\n", "region (largest change first)", "T_p A s",
             "T_p B s", "change s", "change", "class that moved most (B - A)");
  for (const Row& r : rows) {
    std::string path = a.region_path(r.ia);
    if (path.size() > 50) path = "..." + path.substr(path.size() - 47);
    std::string moved =
        r.moved < 0 ? "-" : fmt::format("{} {:+.4f} s", kClassKeys[size_t(r.moved)], r.moved_by);
    std::string pct = std::isnan(r.percent) ? "new" : fmt::format("{:+.1f}%", r.percent);
    fmt::print("{:<50} {:>9.4f} {:>9.4f} {:>+9.4f} {:>8}  {}\n", path, r.a->t_p, r.b->t_p, r.change,
               pct, moved);
  }
  if (!only_a.empty()) {
    fmt::print("\nregions only in A:\n");
    for (const Row& r : only_a) fmt::print("  {}  T_p {:.4f} s\n", a.region_path(r.ia), r.a->t_p);
  }
  if (!only_b.empty()) {
    fmt::print("\nregions only in B:\n");
    for (const Row& r : only_b) fmt::print("  {}  T_p {:.4f} s\n", b.region_path(r.ib), r.b->t_p);
  }
  fmt::print(
      "\nchange = T_p(B) - T_p(A); negative is faster. Regions matched by call path and "
      "source location.\n");
}

namespace {}  // namespace

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
  cmd->add_flag("--force", reference_forced(),
                "Use a reference even when its program, arguments or p differ (warned)");
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
