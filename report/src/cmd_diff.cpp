// scalea diff A B: two experiments compared region by region (what got faster, which overhead
// class moved). Regions are matched by their call-path key (RegionOverheads::key, interned into
// one table for both; the program root matches whatever the binaries are called).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "export_formats.hpp"
#include "report_json.hpp"
#include "study_report.hpp"

namespace scalea::cli {
namespace {

using overheads::kClassCount;
using overheads::kClassKeys;

struct DiffOptions {
  std::string a, b, ref_a, ref_b, format = "text";
  double min_change = 0;
};

struct Row {
  const overheads::RegionOverheads *a = nullptr, *b = nullptr;
  double change = 0, percent = 0;  // T_p(B) - T_p(A), s and % of T_p(A)
  int moved = -1;                  // class whose value changed most
  double moved_by = 0;
};

// Per call-path key: the experiment's first region with it (nullptr where it has none).
std::vector<const overheads::RegionOverheads*> by_key(const Analyzed& x, size_t keys) {
  std::vector<const overheads::RegionOverheads*> m(keys, nullptr);
  for (const auto& r : x.a.regions)
    if (!m[r.key]) m[r.key] = &r;
  return m;
}

nlohmann::json side(const Analyzed& x, const overheads::RegionOverheads* r) {
  if (!r) return nullptr;
  nlohmann::json ov;
  for (int c = 0; c < kClassCount; ++c) ov[std::string(kClassKeys[size_t(c)])] = r->classes[size_t(c)];
  ov["total"] = r->t_o;
  return {{"path", region_path(x.tree(), *r)}, {"p", r->p}, {"time", r->t_p}, {"overheads", ov}};
}

void run_diff(const DiffOptions& o) {
  for (const std::string* d : {&o.a, &o.b})
    if (is_study(*d))
      throw UserError(*d + " is a scaling study; diff compares two experiments (give one run of "
                           "each study)");
  auto keys = std::make_shared<overheads::CallPathKeys>();
  std::unique_ptr<Analyzed> xa = analyze(o.a, o.ref_a, 0, keys), xb = analyze(o.b, o.ref_b, 0, keys);
  auto ma = by_key(*xa, keys->size()), mb = by_key(*xb, keys->size());
  // Regions in the order of their call-path key strings (the tie order of the sorts below).
  std::vector<uint32_t> rank = keys->string_order(), in_order(rank.size());
  for (uint32_t k = 0; k < rank.size(); ++k) in_order[rank[k]] = k;
  std::vector<Row> rows, only_a, only_b;
  for (uint32_t k : in_order) {
    const overheads::RegionOverheads* ra = ma[k];
    if (!ra) continue;
    if (!mb[k]) {
      only_a.push_back({ra, nullptr});
      continue;
    }
    Row row{ra, mb[k]};
    row.change = row.b->t_p - row.a->t_p;
    // Below 0.1 ms in A a percentage says nothing (the region barely ran): NaN, shown as "new".
    row.percent = row.a->t_p >= 1e-4 ? 100 * row.change / row.a->t_p : std::nan("");
    for (int c = 0; c < kClassCount; ++c) {
      double d = row.b->classes[size_t(c)] - row.a->classes[size_t(c)];
      if (std::abs(d) > std::abs(row.moved_by)) row.moved_by = d, row.moved = c;
    }
    if (std::abs(row.change) >= o.min_change) rows.push_back(row);
  }
  for (uint32_t k : in_order)
    if (mb[k] && !ma[k]) only_b.push_back({nullptr, mb[k]});
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

  if (o.format == "json") {
    nlohmann::json out;
    out["schema"] = "scalea-diff/1";
    out["a"] = {{"path", xa->e.path}, {"p", xa->a.p}, {"reference", o.ref_a.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.ref_a)}};
    out["b"] = {{"path", xb->e.path}, {"p", xb->a.p}, {"reference", o.ref_b.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.ref_b)}};
    // The lists are written one row at a time (dump_streamed): a document tree of 100,000 rows
    // took 2 GB.
    auto regions = [&](const std::function<void(const nlohmann::json&)>& emit) {
      for (const Row& r : rows) {
        nlohmann::json classes;
        for (int c = 0; c < kClassCount; ++c)
          classes[std::string(kClassKeys[size_t(c)])] =
              r.b->classes[size_t(c)] - r.a->classes[size_t(c)];
        emit({{"path", region_path(xa->tree(), *r.a)}, {"a", side(*xa, r.a)}, {"b", side(*xb, r.b)},
              {"change", r.change},
              {"change_percent", std::isnan(r.percent) ? nlohmann::json(nullptr) : nlohmann::json(r.percent)},
              {"class_changes", classes},
              {"moved_most", r.moved < 0 ? nlohmann::json(nullptr)
                                         : nlohmann::json{{"class", kClassKeys[size_t(r.moved)]},
                                                          {"change", r.moved_by}}}});
      }
    };
    auto oa = [&](const std::function<void(const nlohmann::json&)>& emit) {
      for (const Row& r : only_a) emit(side(*xa, r.a));
    };
    auto ob = [&](const std::function<void(const nlohmann::json&)>& emit) {
      for (const Row& r : only_b) emit(side(*xb, r.b));
    };
    dump_streamed<nlohmann::json>(write_to(std::cout), std::move(out),
                                  {{"regions", regions}, {"only_in_a", oa}, {"only_in_b", ob}});
    std::cout << "\n";
    return;
  }
  fmt::print("A  {} (p = {}{})\n", xa->e.path, xa->a.p, o.ref_a.empty() ? "" : ", reference " + o.ref_a);
  fmt::print("B  {} (p = {}{})\n\n", xb->e.path, xb->a.p, o.ref_b.empty() ? "" : ", reference " + o.ref_b);
  fmt::print("{:<50} {:>9} {:>9} {:>9} {:>8}  {}\n", "region (largest change first)", "T_p A s",
             "T_p B s", "change s", "change", "class that moved most (B - A)");
  for (const Row& r : rows) {
    std::string path = region_path(xa->tree(), *r.a);
    if (path.size() > 50) path = "..." + path.substr(path.size() - 47);
    std::string moved = r.moved < 0 ? "-" : fmt::format("{} {:+.4f} s", kClassKeys[size_t(r.moved)], r.moved_by);
    std::string pct = std::isnan(r.percent) ? "new" : fmt::format("{:+.1f}%", r.percent);
    fmt::print("{:<50} {:>9.4f} {:>9.4f} {:>+9.4f} {:>8}  {}\n", path, r.a->t_p, r.b->t_p,
               r.change, pct, moved);
  }
  if (!only_a.empty()) {
    fmt::print("\nregions only in A:\n");
    for (const Row& r : only_a) fmt::print("  {}  T_p {:.4f} s\n", region_path(xa->tree(), *r.a), r.a->t_p);
  }
  if (!only_b.empty()) {
    fmt::print("\nregions only in B:\n");
    for (const Row& r : only_b) fmt::print("  {}  T_p {:.4f} s\n", region_path(xb->tree(), *r.b), r.b->t_p);
  }
  fmt::print("\nchange = T_p(B) - T_p(A); negative is faster. Regions matched by call path and "
             "source location.\n");
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
  cmd->add_flag("--force", reference_forced(),
                "Use a reference even when its program, arguments or p differ (warned)");
  cmd->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--min-change", o->min_change, "Hide regions whose T_p changed less (s)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([o] { run_diff(*o); });
}

}  // namespace scalea::cli
