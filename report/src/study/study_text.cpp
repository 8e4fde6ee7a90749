// The study report as text, markdown, CSV and JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "output/errors.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "analysis/meta.hpp"
#include "formats/findings_out.hpp"
#include "formats/report_json.hpp"
#include "study_data.hpp"
#include "output/text.hpp"

namespace scalea::cli::studyrep {

// ---- text and markdown ----

void print_study_findings(const Data& d) {
  std::optional<StudyFindings> f = study_findings(d);
  if (!f || d.view.findings == 0) return;
  fmt::print("\nFindings at p = {} (its repetition with the median T_o, {}; {})", f->p,
             f->experiment,
             f->noise_measured
                 ? "an overhead within the run-to-run noise of its region, the spread over the "
                   "repetitions, is not a finding"
                 : "one repetition: the run-to-run noise is not measured, --repeat 3 measures it");
  for (const std::string& note : f->cpu_sharing)
    fmt::print("\nfirst, threads shared CPUs: {}", note);
  print_findings(f->findings, f->analysis, f->noise_measured);
}

std::string fit(std::string s, size_t width) {
  if (s.size() > width) s = s.substr(0, width - 3) + "...";
  return s;
}

// A value printed with 4 decimals, without "-0.0000".
double z4(double v) { return std::fabs(v) < 5e-5 ? 0.0 : v; }

std::string num(std::optional<double> v, int prec = 2) {
  return v ? fmt::format("{:.{}f}", *v, prec) : "-";
}

std::string plan_text(const Data& d) {
  const Study& s = d.study;
  std::string threads, ranks;
  for (int t : s.threads) threads += (threads.empty() ? "" : ",") + std::to_string(t);
  for (int r : s.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
  return fmt::format("threads {} x ranks {}, {} repetition(s): {} of {} runs ok{}{}", threads,
                     ranks, s.repeat, d.runs_ok, s.runs.size(),
                     d.runs_failed ? fmt::format(", {} failed", d.runs_failed) : "",
                     d.runs_pending ? fmt::format(", {} pending", d.runs_pending) : "");
}

// One markdown table row.
void md_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + c + " |";
  fmt::print("{}\n", line);
}

// The study's header: command, plan, reference, warnings and failed runs.
void print_study_header(const Data& d, bool markdown) {
  const Study& s = d.study;
  if (markdown) {
    fmt::print("# Scaling study `{}`\n\n", d.dir);
    fmt::print("- command: `{}`\n- plan: {}\n", command_text(s), plan_text(d));
    fmt::print(
        "- reference: 1 thread x 1 rank, median of {} repetition(s): `{}` (program {:.4f} s)\n",
        d.reference_reps, d.reference_experiment, d.reference_program_time);
    if (s.use_launcher) fmt::print("- launcher: `{}`\n", s.launcher);
  } else {
    fmt::print("study       {}\n", d.dir);
    fmt::print("command     {}\n", command_text(s));
    fmt::print("plan        {}\n", plan_text(d));
    if (s.use_launcher) fmt::print("launcher    {}\n", s.launcher);
    fmt::print("reference   1 thread x 1 rank, median of {} repetition(s): {} (program {:.4f} s)\n",
               d.reference_reps, d.reference_experiment, d.reference_program_time);
  }
  for (const auto& w : d.warnings) fmt::print(markdown ? "- warning: {}\n" : "warning     {}\n", w);
  for (const Run& r : s.runs)
    if (r.status == Status::Failed)
      fmt::print(markdown ? "- failed run `{}`: {}\n" : "failed      {}: {}\n", r.id(), r.error);
}

// Under the tables: the configurations whose runs shared CPUs (their "p=4*"), one line each.
void print_cpu_notes(const Data& d, bool markdown) {
  bool first = true;
  for (const ConfigData& c : d.configs) {
    std::string note = cpu_note(d, c, markdown);
    if (note.empty()) continue;
    if (first) fmt::print("\n");
    fmt::print(markdown ? "- {}\n" : "CPUS        {}\n", note);
    first = false;
  }
}

// Speedup per region vs p (the regions --region selects, or all).
void print_speedups(const Data& d, bool markdown) {
  auto row = md_row;
  std::vector<int> tree = preorder(d);
  if (!d.view.region.empty()) {
    std::vector<int> keep{0};
    for (int n : tree)
      if (n != 0 && matches(d, n, d.view.region)) keep.push_back(n);
    tree = keep;
  }
  const size_t W = 44;
  if (markdown) {
    fmt::print(
        "\n## Speedup per region\n\nspeedup = T_s / median T_p; T_s from the reference run.\n\n");
    std::vector<std::string> head{"region", "location", "T_s s"};
    for (const auto& c : d.configs) head.push_back("p=" + marked_label(d, c, true));
    row(head);
    row(std::vector<std::string>(head.size(), "---"));
    for (int n : tree) {
      const Node& nd = d.nodes[size_t(n)];
      // Dots for the depth, up to drg::kPathLevels levels (deeper rows would make the table grow
      // with depth^2).
      std::vector<std::string> cells{
          std::string(std::min<size_t>(size_t(nd.depth), drg::kPathLevels) * 2, '.') + nd.label,
          nd.location, num(nd.t_s, 4)};
      for (size_t c = 0; c < d.configs.size(); ++c)
        cells.push_back(num(d.cells[size_t(n)][c].speedup));
      row(cells);
    }
  } else {
    fmt::print("\nSpeedup per region (T_s / median T_p)\n");
    fmt::print("{:<{}} {:>9}", "region (call tree)", W, "T_s s");
    for (const auto& c : d.configs) fmt::print(" {:>10}", "p=" + marked_label(d, c));
    fmt::print("\n");
    for (int n : tree) {
      const Node& nd = d.nodes[size_t(n)];
      // (indentation past W + 1 characters would be cut anyway)
      fmt::print(
          "{:<{}} {:>9}",
          fit(std::string(std::min<size_t>(size_t(nd.depth) * 2, W + 1), ' ') + node_title(nd), W),
          W, num(nd.t_s, 4));
      for (size_t c = 0; c < d.configs.size(); ++c)
        fmt::print(" {:>10}", num(d.cells[size_t(n)][c].speedup));
      fmt::print("\n");
    }
  }
  print_cpu_notes(d, markdown);
}

// The p column of a configuration: "4", or "4*" when its runs shared CPUs (print_cpu_notes).
std::string p_cell(const ConfigData& c, bool markdown) {
  return std::to_string(c.config.p()) + (c.cpu_shared_reps ? (markdown ? "\\*" : "*") : "");
}

// Table 2 per region: the program, then the detailed regions; `blocks` is their list.
void print_class_tables(const Data& d, bool markdown, const std::vector<int>& blocks) {
  auto row = md_row;
  static const char* short_names[] = {"data", "sync", "control", "addl", "loss", "unident"};
  for (int n : blocks) {
    const Node& nd = d.nodes[size_t(n)];
    std::string path = node_path(d, n);
    std::string title = n == 0 ? "program " + nd.label : path.empty() ? node_title(nd) : path;
    if (n != 0 && !nd.location.empty() && title.find(nd.location) == std::string::npos)
      title += " @" + nd.location;
    if (markdown) {
      fmt::print("\n## {}\n\n", n == 0 ? "Program `" + nd.label + "`" : "Region `" + title + "`");
      fmt::print(
          "{}. Time: median (min-max) over repetitions; classes: medians, in s; "
          "T_o = sum of the class medians.\n\n",
          nd.t_s ? fmt::format("T_s = {:.4f} s", *nd.t_s)
                 : std::string("Not in the reference run"));
      std::vector<std::string> head{"p",         "threads x ranks", "reps",       "time s",
                                    "min-max s", "speedup",         "efficiency", "T_o s"};
      for (int k = 0; k < kClassCount; ++k) head.emplace_back(kClassKeys[size_t(k)]);
      row(head);
      row(std::vector<std::string>(head.size(), "---:"));
      for (size_t c = 0; c < d.configs.size(); ++c) {
        const Cell& cell = d.cells[size_t(n)][c];
        const Config& cf = d.configs[c].config;
        if (cell.samples.empty()) {
          row({p_cell(d.configs[c], true), fmt::format("{} x {}", cf.threads, cf.ranks), "0", "-",
               "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"});
          continue;
        }
        std::vector<std::string> cells{p_cell(d.configs[c], true),
                                       fmt::format("{} x {}", cf.threads, cf.ranks),
                                       std::to_string(cell.samples.size()),
                                       fmt::format("{:.4f}", cell.time.med),
                                       fmt::format("{:.4f}-{:.4f}", cell.time.min, cell.time.max),
                                       num(cell.speedup),
                                       num(cell.efficiency, 3),
                                       fmt::format("{:.4f}", z4(cell.total))};
        for (int k = 0; k < kClassCount; ++k)
          cells.push_back(fmt::format("{:.4f}", z4(cell.cls_med[size_t(k)])));
        row(cells);
      }
      continue;
    }
    fmt::print(
        "\n{}   ({})\n", fit(title, 100),
        nd.t_s ? fmt::format("T_s = {:.4f} s", *nd.t_s) : std::string("not in the reference run"));
    fmt::print("{:>9} {:>8} {:>4} {:>9} {:>17} {:>7} {:>6} {:>9}", "p", "thr x rk", "reps",
               "time s", "(min - max)", "speedup", "effic", "T_o s");
    for (const char* h : short_names) fmt::print(" {:>8}", h);
    fmt::print("\n");
    for (size_t c = 0; c < d.configs.size(); ++c) {
      const Cell& cell = d.cells[size_t(n)][c];
      const Config& cf = d.configs[c].config;
      fmt::print("{:>9} {:>8} {:>4}", p_cell(d.configs[c], false),
                 std::to_string(cf.threads) + " x " + std::to_string(cf.ranks),
                 cell.samples.size());
      if (cell.samples.empty()) {
        fmt::print("   (not run)\n");
        continue;
      }
      fmt::print(" {:>9.4f} {:>17} {:>7} {:>6} {:>9.4f}", cell.time.med,
                 fmt::format("({:.4f} - {:.4f})", cell.time.min, cell.time.max), num(cell.speedup),
                 num(cell.efficiency, 3), z4(cell.total));
      for (int k = 0; k < kClassCount; ++k) fmt::print(" {:>8.4f}", z4(cell.cls_med[size_t(k)]));
      fmt::print("\n");
    }
  }
}

void print_text(const Data& d, bool markdown) {
  std::vector<int> detail = detailed(d, 5);
  print_study_header(d, markdown);
  print_speedups(d, markdown);
  // Table 2 per region: the program, then the detailed regions.
  std::vector<int> blocks{0};
  for (int n : detail)
    if (n != 0) blocks.push_back(n);
  print_class_tables(d, markdown, blocks);
  if (!markdown) {
    fmt::print("\nPOP efficiencies of the program per p (medians): ");
    for (size_t c = 0; c < d.configs.size(); ++c)
      fmt::print("{}p={}: LB {:.3f} CommE {:.3f} PE {:.3f}", c ? "; " : "",
                 marked_label(d, d.configs[c]), stat_of(d.configs[c].lb).med,
                 stat_of(d.configs[c].ce).med, stat_of(d.configs[c].pe).med);
    fmt::print(
        "\ntime: median over repetitions (min - max); speedup = T_s / median time; efficiency = "
        "speedup / p;\nclasses: data movement, synchronization, control of parallelism, additional "
        "computation, loss of\nparallelism, unidentified: medians over repetitions in s of wall "
        "time, T_o = their sum (docs/study.md)\n");
    if (d.view.region.empty() && d.nodes.size() > blocks.size())
      fmt::print("{} more region(s): --top N or --region NAME to show them\n",
                 d.nodes.size() - blocks.size());
    print_study_findings(d);
  }
}

// ---- CSV ----

std::string opt_csv(const std::optional<double>& v) { return v ? fmt::format("{:.9g}", *v) : ""; }

// The regions CSV and JSON list: all, or the program and the --region / --top selection, in
// call-tree order.
std::vector<int> selected_for_lists(const Data& d) {
  std::vector<int> all = preorder(d);
  if (d.view.region.empty() && d.view.top < 0) return all;
  std::vector<char> chosen(d.nodes.size(), 0);
  for (int n : detailed(d, -1)) chosen[size_t(n)] = 1;
  std::vector<int> out;
  for (int n : all)
    if (n == 0 || chosen[size_t(n)]) out.push_back(n);
  return out;
}

// Calls fn(n, node, path, config, cell) for each of `nodes` and each configuration it ran in: one
// row of the CSV and JSON lists. The path is built once per node.
template <class Fn>
void for_each_cell(const Data& d, const std::vector<int>& nodes, Fn fn) {
  for (int n : nodes) {
    const Node& nd = d.nodes[size_t(n)];
    const std::string path = node_path(d, n);
    for (size_t c = 0; c < d.configs.size(); ++c) {
      const Cell& cell = d.cells[size_t(n)][c];
      if (!cell.samples.empty()) fn(n, nd, path, d.configs[c], cell);
    }
  }
}

void print_csv(const Data& d) {
  fmt::print(
      "region_id,parent_id,depth,path,kind,label,location,p,threads,ranks,repetitions,time_median,"
      "time_min,time_max,reference_time,speedup,efficiency");
  for (int k = 0; k < kClassCount; ++k) fmt::print(",{}", kClassKeys[size_t(k)]);
  fmt::print(",total,cpus_shared\n");
  for_each_cell(
      d, selected_for_lists(d),
      [](int n, const Node& nd, const std::string& path, const ConfigData& cd, const Cell& cell) {
        const Config& cf = cd.config;
        fmt::print("{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{},{},{}", n,
                   nd.parent < 0 ? "" : std::to_string(nd.parent), nd.depth, csv_field(path),
                   nd.kind, csv_field(nd.label), csv_field(nd.location), cf.p(), cf.threads,
                   cf.ranks, cell.samples.size(), cell.time.med, cell.time.min, cell.time.max,
                   opt_csv(nd.t_s), opt_csv(cell.speedup), opt_csv(cell.efficiency));
        for (int k = 0; k < kClassCount; ++k) fmt::print(",{:.9g}", cell.cls_med[size_t(k)]);
        fmt::print(",{:.9g},{}\n", cell.total, cd.cpu_shared_reps);
      });
}

// ---- JSON ----

nlohmann::ordered_json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// One region of the JSON document at one configuration.
nlohmann::ordered_json region_json(int n, const Node& nd, const std::string& path, const Config& cf,
                                   const Cell& cell) {
  nlohmann::ordered_json ov, ov_min, ov_max;
  for (int k = 0; k < kClassCount; ++k) {
    std::string key(kClassKeys[size_t(k)]);
    ov[key] = cell.cls_med[size_t(k)];
    ov_min[key] = cell.cls[size_t(k)].min;
    ov_max[key] = cell.cls[size_t(k)].max;
  }
  ov["total"] = cell.total;
  ov_min["total"] = cell.total_rep.min;
  ov_max["total"] = cell.total_rep.max;
  return {
      {"id", n},
      {"parent",
       nd.parent < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(nd.parent)},
      {"path", path},
      {"depth", nd.depth},
      {"kind", nd.kind},
      {"label", nd.label},
      {"name", nd.name},
      {"source", {{"file", nd.file}, {"line", nd.line}, {"function", nd.function}}},
      {"config", cf.id()},
      {"p", cf.p()},
      {"threads", cf.threads},
      {"ranks", cf.ranks},
      {"repetitions", cell.samples.size()},
      {"time", cell.time.med},
      {"time_min", cell.time.min},
      {"time_max", cell.time.max},
      {"reference_time", opt_json(nd.t_s)},
      {"speedup", opt_json(cell.speedup)},
      {"efficiency", opt_json(cell.efficiency)},
      {"overheads", ov},
      {"overheads_min", ov_min},
      {"overheads_max", ov_max},
  };
}

// Whether a configuration's runs shared CPUs: null, or how (print_cpu_notes says it in text).
nlohmann::ordered_json cpu_sharing_json(const ConfigData& c) {
  if (!c.cpu_shared_reps) return nullptr;
  const CpuSharing& e = c.cpu_sharing;
  return {{"repetitions", c.cpu_shared_reps},
          {"experiment", c.cpu_shared_experiment},
          {"threads", e.threads},
          {"cpus", e.cpus},
          {"waited_s", e.waited_s},
          {"ran_s", e.ran_s},
          {"notes", e.notes}};
}

// The study, its reference and configurations: the document's head.
void study_head(const Data& d, nlohmann::ordered_json& out) {
  const Study& s = d.study;
  out["schema"] = "scalea-study-report/1";
  out["study"] = {{"path", d.dir},
                  {"command", s.command},
                  {"threads", s.threads},
                  {"ranks", s.ranks},
                  {"repeat", s.repeat},
                  {"launcher", s.use_launcher ? nlohmann::ordered_json(s.launcher)
                                              : nlohmann::ordered_json(nullptr)},
                  {"runs", s.runs.size()},
                  {"runs_ok", d.runs_ok},
                  {"runs_failed", d.runs_failed},
                  {"runs_pending", d.runs_pending}};
  out["reference"] = {{"config", Config{1, 1}.id()},
                      {"experiment", d.reference_experiment},
                      {"repetitions", d.reference_reps},
                      {"program_time", d.reference_program_time}};
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const auto& c : d.configs)
    configs.push_back({{"config", c.config.id()},
                       {"p", c.config.p()},
                       {"threads", c.config.threads},
                       {"ranks", c.config.ranks},
                       {"experiments", c.experiments},
                       {"program_efficiency",
                        {{"load_balance", stat_of(c.lb).med},
                         {"communication_efficiency", stat_of(c.ce).med},
                         {"parallel_efficiency", stat_of(c.pe).med}}},
                       {"cpu_sharing", cpu_sharing_json(c)}});
  out["configurations"] = configs;
}

void print_json(const Data& d) {
  nlohmann::ordered_json out;
  study_head(d, out);
  // Written one row at a time (dump_streamed): the document tree of 100,000 regions at three
  // configurations took 2.4 GB. The selection is made first: it may fail (--region), and nothing
  // is written then.
  const std::vector<int> selected = selected_for_lists(d);
  auto regions = [&](const Emit<nlohmann::ordered_json>& emit) {
    for_each_cell(d, selected,
                  [&](int n, const Node& nd, const std::string& path, const ConfigData& cd,
                      const Cell& cell) { emit(region_json(n, nd, path, cd.config, cell)); });
  };
  out["regions"] = nullptr;  // streamed
  out["warnings"] = d.warnings;
  if (std::optional<StudyFindings> f = study_findings(d))
    out["findings"] = {{"p", f->p},
                       {"experiment", f->experiment},
                       {"noise_measured", f->noise_measured},
                       {"list", nlohmann::ordered_json::parse(findings_json(f->findings).dump())}};
  else out["findings"] = nullptr;
  dump_streamed<nlohmann::ordered_json>(write_to(std::cout), std::move(out),
                                        {{"regions", regions}});
  std::cout << "\n";
}

}  // namespace scalea::cli::studyrep
