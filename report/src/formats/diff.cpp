// The table of `scalea diff` and `scalea db compare` (diff.hpp).
#include "diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "output/json_stream.hpp"

namespace scalea::cli {
namespace {

using overheads::kClassCount;
using overheads::kClassKeys;

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

// The rows of the table: the regions both sides ran, by their change (largest first), and
// those of one side only, by their time.
struct Rows {
  std::vector<Row> both, only_a, only_b;
};

Rows diff_rows(const DiffSide& a, const DiffSide& b,
               const std::vector<std::pair<long, long>>& matched, double min_change) {
  Rows out;
  std::vector<Row>&rows = out.both, &only_a = out.only_a, &only_b = out.only_b;
  for (const auto& [ia, ib] : matched) {
    if (ia < 0) continue;
    if (ib < 0) {
      only_a.push_back({&a.regions[size_t(ia)], nullptr, size_t(ia), 0});
      continue;
    }
    Row row{&a.regions[size_t(ia)], &b.regions[size_t(ib)], size_t(ia), size_t(ib)};
    row.change = row.b->t_p - row.a->t_p;
    // Below 0.1 ms in A a percentage says nothing (the region barely ran): NaN, shown as "-"
    // (the region is in both runs: "new" is for regions only in B, listed after the table).
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
  return out;
}

void print_json(const DiffSide& a, const DiffSide& b, const Rows& t) {
  const std::vector<Row>&rows = t.both, &only_a = t.only_a, &only_b = t.only_b;
  nlohmann::json out;
  auto header = [](const DiffSide& s) {
    return nlohmann::json{
        {"path", s.path},
        {"p", s.p},
        {"reference", s.reference.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.reference)}};
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
}

void print_text(const DiffSide& a, const DiffSide& b, const Rows& t) {
  const std::vector<Row>&rows = t.both, &only_a = t.only_a, &only_b = t.only_b;
  fmt::print("A  {} (p = {}{})\n", a.path, a.p,
             a.reference.empty() ? "" : ", reference " + a.reference);
  fmt::print("B  {} (p = {}{})\n\n", b.path, b.p,
             b.reference.empty() ? "" : ", reference " + b.reference);
  fmt::print("{:<50} {:>9} {:>9} {:>9} {:>8}  {}\n", "region (largest change first)", "T_p A s",
             "T_p B s", "change s", "change", "class that moved most (B - A)");
  bool tiny = false;
  for (const Row& r : rows) {
    std::string path = a.region_path(r.ia);
    if (path.size() > 50) path = "..." + path.substr(path.size() - 47);
    std::string moved =
        r.moved < 0 ? "-" : fmt::format("{} {:+.4f} s", kClassKeys[size_t(r.moved)], r.moved_by);
    tiny = tiny || std::isnan(r.percent);
    std::string pct = std::isnan(r.percent) ? "-" : fmt::format("{:+.1f}%", r.percent);
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
  if (tiny)
    fmt::print(
        "change -: the region ran in both, for less than 0.1 ms in A, where a percentage of "
        "T_p(A) says nothing.\n");
}

}  // namespace

void print_diff(const DiffSide& a, const DiffSide& b,
                const std::vector<std::pair<long, long>>& matched, const std::string& format,
                double min_change) {
  Rows rows = diff_rows(a, b, matched, min_change);
  if (format == "json") print_json(a, b, rows);
  else print_text(a, b, rows);
}

}  // namespace scalea::cli
