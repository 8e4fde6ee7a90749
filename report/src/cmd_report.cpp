// scalea report: the per-region tables of one experiment: the overhead classification (default)
// or the measured times.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "findings.hpp"
#include "study_report.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/overheads/classify.hpp"

namespace scalea::cli {
namespace {

using drg::MergedTree;
using overheads::Analysis;
using overheads::Class;
using overheads::kClassCount;

struct ReportOptions {
  std::string dir, reference;
  std::string format = "text";
  std::string view = "overheads";
  double min_time = 0;
  int max_depth = -1;
  int p = 0;
};

struct Columns {
  int visits, time, wait, fork, join;
  explicit Columns(const drg::Experiment& e)
      : visits(e.metric("visits")), time(e.metric("time")), wait(e.metric("wait")),
        fork(e.metric("fork")), join(e.metric("join")) {}
};

bool shown(const MergedTree& t, uint32_t n, double t_p, const ReportOptions& o) {
  if (o.max_depth >= 0 && int(t.node(n).depth) > o.max_depth) return false;
  return n == 0 || t_p >= o.min_time;
}

std::string tree_label(const MergedTree& t, uint32_t n, size_t width) {
  const drg::Region& reg = t.region_of(n);
  std::string label = std::string(2 * t.node(n).depth, ' ') + reg.label();
  std::string loc = reg.location();
  if (!loc.empty() && reg.kind != drg::RegionKind::Program) label += " @" + loc;
  if (label.size() > width) label = label.substr(0, width - 3) + "...";
  return label;
}

std::string command_line(const drg::Experiment& e) {
  std::string cmd;
  if (e.meta["command"].is_array())
    for (const auto& a : e.meta["command"])
      if (a.is_string()) cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
  return cmd;
}

void print_header(const drg::Experiment& e, const Analysis& a, const drg::Experiment* ref) {
  const auto& m = e.meta;
  fmt::print("experiment  {}\n", e.path);
  fmt::print("command     {}\n", command_line(e));
  fmt::print("run         {} on {}: p = {} ({} rank(s), {} thread(s)), {:.3f} s, clock {}\n",
             m.value("start_time", ""), m.value("host", ""), a.p, e.ranks(), e.threads.size(),
             m["clock"].value("duration_s", 0.0), m["clock"].value("source", ""));
  if (m.contains("openmp") && !m["openmp"].value("runtime", "").empty())
    fmt::print("openmp      {} ({})\n", m["openmp"].value("runtime", ""),
               m["openmp"].value("runtime_path", ""));
  if (ref)
    fmt::print("reference   {} (p = {})\n", ref->path, ref->threads.size());
  else
    fmt::print("reference   none: T_s is estimated as the useful work, so additional computation is 0\n");
  if (!e.complete()) fmt::print("WARNING     the experiment is incomplete\n");
  fmt::print("\n");
}

void print_overheads_text(const MergedTree& t, const Analysis& a, const ReportOptions& o) {
  fmt::print("{:<46} {:>9} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "region (call tree)",
             "T_p s", "T_o s", "T_o%", "data", "sync", "control", "addl", "loss", "unident");
  for (uint32_t n : t.preorder()) {
    const auto& r = a.regions[n];
    if (!shown(t, n, r.t_p, o)) continue;
    fmt::print("{:<46} {:>9.4f} {:>9.4f} {:>5.1f}%", tree_label(t, n, 46), r.t_p, r.t_o,
               r.t_p > 0 ? 100 * r.t_o / r.t_p : 0.0);
    for (int c = 0; c < kClassCount; ++c) fmt::print(" {:>9.4f}", r.classes[size_t(c)]);
    fmt::print("\n");
  }
  if (!a.only_in_reference.empty()) {
    fmt::print("\nregions only in the reference run (their work is gone: negative additional computation):\n");
    for (const auto& r : a.only_in_reference) fmt::print("  {}  T_s {:.4f} s\n", r.path, r.t_s);
  }
  const auto& pe = a.program;
  fmt::print("\nprogram efficiencies (POP): load balance {:.3f}, communication efficiency {:.3f}, "
             "parallel efficiency {:.3f}",
             pe.load_balance, pe.communication_efficiency, pe.parallel_efficiency);
  if (pe.computation_scalability)
    fmt::print(", computation scalability {:.3f}, global efficiency {:.3f}",
               *pe.computation_scalability, *pe.global_efficiency);
  fmt::print("\nclasses in seconds of wall time; per region they sum to T_o = T_p - T_s/p "
             "(docs/overhead-model.md)\n");
  print_report_findings(t, a);
}

void print_times_text(const drg::Experiment& e, const MergedTree& t, const Analysis& a,
                      const ReportOptions& o) {
  Columns c(e);
  fmt::print("{:<52} {:>9} {:>4} {:>11} {:>11} {:>11} {:>10} {:>10}\n", "region (call tree)",
             "visits", "thr", "time max s", "time avg s", "wait avg s", "fork ms", "join ms");
  for (uint32_t n : t.preorder()) {
    if (!shown(t, n, a.regions[n].t_p, o)) continue;
    size_t k = t.node(n).members.size();
    double kk = k ? double(k) : 1.0;
    fmt::print("{:<52} {:>9} {:>4} {:>11.6f} {:>11.6f} {:>11.6f} {:>10.3f} {:>10.3f}\n",
               tree_label(t, n, 52), uint64_t(t.sum(n, c.visits)), k, t.max(n, c.time) * 1e-9,
               t.sum(n, c.time) * 1e-9 / kk, t.sum(n, c.wait) * 1e-9 / kk,
               t.sum(n, c.fork) * 1e-6 / kk, t.sum(n, c.join) * 1e-6);
  }
  fmt::print("\ntime max: longest time of any thread in the region (its wall time); avg: mean over "
             "the threads that ran it; join: master only\n");
}

// One row per region: for spreadsheets (csv) and documents (markdown).
void print_rows(const MergedTree& t, const Analysis& a, const ReportOptions& o, bool csv) {
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  std::vector<std::string> head = {"path", "kind", "source", "T_p", "T_s", "T_o"};
  for (auto k : overheads::kClassKeys) head.emplace_back(k);
  if (csv) {
    for (size_t i = 0; i < head.size(); ++i) fmt::print("{}{}", i ? "," : "", head[i]);
    fmt::print("\n");
  } else {
    fmt::print("| region | kind | source | T_p s | T_s s | T_o s | data | sync | control | addl | loss | unident |\n");
    fmt::print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  for (uint32_t n : t.preorder()) {
    const auto& r = a.regions[n];
    if (!shown(t, n, r.t_p, o)) continue;
    const drg::Region& reg = t.region_of(n);
    std::string kind(format::region_kind_name(reg.kind));
    if (csv) {
      fmt::print("{},{},{},{:.9f},{:.9f},{:.9f}", quote(r.path), kind, quote(reg.location()), r.t_p,
                 r.t_s, r.t_o);
      for (double v : r.classes) fmt::print(",{:.9f}", v);
    } else {
      std::string indent;
      for (uint32_t d = 0; d < t.node(n).depth; ++d) indent += "&emsp;";
      fmt::print("| {}{} | {} | {} | {:.4f} | {:.4f} | {:.4f}", indent, reg.label(), kind,
                 reg.location(), r.t_p, r.t_s, r.t_o);
      for (double v : r.classes) fmt::print(" | {:.4f}", v);
      fmt::print(" |");
    }
    fmt::print("\n");
  }
}

nlohmann::json overheads_json(const overheads::RegionOverheads& r) {
  nlohmann::json ov;
  for (int c = 0; c < kClassCount; ++c) ov[std::string(overheads::kClassKeys[size_t(c)])] = r.classes[size_t(c)];
  ov["total"] = r.t_o;
  nlohmann::json sub = nlohmann::json::object();
  for (const auto& [k, v] : r.subclasses) sub[k] = v;
  ov["subclasses"] = sub;
  return ov;
}

void print_json(const drg::Experiment& e, const MergedTree& t, const Analysis& a,
                const drg::Experiment* ref, const ReportOptions& o) {
  Columns c(e);
  nlohmann::json out;
  out["schema"] = "scalea-report/1";
  out["experiment"] = {{"path", e.path}, {"command", e.meta["command"]}, {"p", a.p},
                       {"ranks", e.ranks()}, {"threads", e.threads.size()},
                       {"complete", e.complete()}, {"openmp", e.meta["openmp"]},
                       {"clock", e.meta["clock"]}};
  out["reference"] = ref ? nlohmann::json{{"path", ref->path}, {"p", ref->threads.size()}}
                         : nlohmann::json(nullptr);
  nlohmann::json regions = nlohmann::json::array();
  for (uint32_t n : t.preorder()) {
    const auto& r = a.regions[n];
    if (!shown(t, n, r.t_p, o)) continue;
    const drg::Region& reg = t.region_of(n);
    nlohmann::json per_thread = nlohmann::json::array();
    for (const drg::Member& m : t.node(n).members) {
      const drg::ThreadTree& tt = e.threads[m.thread];
      per_thread.push_back({{"rank", tt.rank}, {"thread", tt.thread},
                            {"visits", e.value(tt, m.node, c.visits)},
                            {"time", e.value(tt, m.node, c.time) * 1e-9},
                            {"wait", e.value(tt, m.node, c.wait) * 1e-9},
                            {"fork", e.value(tt, m.node, c.fork) * 1e-9}});
    }
    regions.push_back({
        {"id", n},
        {"parent", t.node(n).parent == format::kNoIndex ? nlohmann::json(nullptr)
                                                         : nlohmann::json(t.node(n).parent)},
        {"path", r.path},
        {"depth", t.node(n).depth},
        {"kind", std::string(format::region_kind_name(reg.kind))},
        {"label", reg.label()},
        {"name", reg.name},
        {"source", {{"file", reg.file}, {"line", reg.line}, {"function", reg.function}}},
        {"p", r.p},
        {"visits", t.sum(n, c.visits)},
        {"time", r.t_p},
        {"reference_time", r.t_s},
        {"reference_estimated", r.t_s_estimated},
        {"speedup", r.speedup},
        {"efficiency", r.efficiency},
        {"imbalance", {{"max_over_mean", r.imbalance}, {"pes", r.pes_ran},
                       {"most_loaded", r.most_loaded}, {"least_loaded", r.least_loaded}}},
        {"wait_total", t.sum(n, c.wait) * 1e-9},
        {"overheads", overheads_json(r)},
        {"per_thread", per_thread},
    });
  }
  out["regions"] = regions;
  nlohmann::json gone = nlohmann::json::array();
  for (const auto& r : a.only_in_reference)
    gone.push_back({{"path", r.path}, {"reference_time", r.t_s}, {"overheads", overheads_json(r)}});
  out["only_in_reference"] = gone;
  const auto& pe = a.program;
  out["program"] = {{"load_balance", pe.load_balance},
                    {"communication_efficiency", pe.communication_efficiency},
                    {"parallel_efficiency", pe.parallel_efficiency},
                    {"computation_scalability", pe.computation_scalability
                                                    ? nlohmann::json(*pe.computation_scalability)
                                                    : nlohmann::json(nullptr)},
                    {"global_efficiency", pe.global_efficiency ? nlohmann::json(*pe.global_efficiency)
                                                               : nlohmann::json(nullptr)}};
  out["findings"] = findings_json(find_findings(t, a, findings_limit()));
  std::cout << out.dump(2) << "\n";
}

}  // namespace

void add_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Show the per-region overhead table of an experiment");
  cmd->footer(
      "Examples:\n"
      "  scalea report md.p4                      overhead classes per region (T_s estimated)\n"
      "  scalea report md.p4 -r md.p1             against a reference run with 1 thread\n"
      "  scalea report md.p4 --view times         visits, times, waits, fork/join per region\n"
      "  scalea report md.p4 --min-time 0.01      hide regions shorter than 10 ms\n"
      "  scalea report md.p4 --format json        machine-readable (docs/json-schema.md)\n\n"
      "T_p is a region's wall time (its longest thread), T_o = T_p - T_s/p its total overhead,\n"
      "split into data movement, synchronization, control of parallelism, additional\n"
      "computation, loss of parallelism and unidentified (docs/overhead-model.md).");
  cmd->add_option("experiment", o->dir, "Experiment directory")->required();
  cmd->add_option("-r,--reference", o->reference, "Reference experiment (same program, p = 1)");
  cmd->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "csv", "markdown"}))
      ->capture_default_str();
  cmd->add_option("--view", o->view, "Text table: overhead classes or measured times")
      ->check(CLI::IsMember({"overheads", "times"}))
      ->capture_default_str();
  cmd->add_option("--min-time", o->min_time, "Hide regions whose wall time is below this (s)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--depth", o->max_depth, "Show the call tree down to this depth")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-p,--pes", o->p, "Processing elements of the run (default: its thread count)")
      ->check(CLI::PositiveNumber);
  cmd->callback([o] {
    if (is_study(o->dir)) { study_report(o->dir); return; }
    drg::Experiment e = drg::load_experiment(o->dir);
    MergedTree t(e);
    std::optional<drg::Experiment> ref;
    std::optional<MergedTree> ref_tree;
    if (!o->reference.empty()) {
      ref = drg::load_experiment(o->reference);
      ref_tree.emplace(*ref);
    }
    overheads::Options opts;
    opts.p = o->p;
    Analysis a = overheads::classify(t, ref_tree ? &*ref_tree : nullptr, opts);
    const drg::Experiment* refp = ref ? &*ref : nullptr;
    if (o->format == "json") {
      print_json(e, t, a, refp, *o);
      return;
    }
    if (o->format == "csv" || o->format == "markdown") {
      print_rows(t, a, *o, o->format == "csv");
      return;
    }
    print_header(e, a, refp);
    if (o->view == "times") print_times_text(e, t, a, *o);
    else print_overheads_text(t, a, *o);
  });
}

}  // namespace scalea::cli
