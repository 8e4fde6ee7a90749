// scalea report: the per-region table of one experiment.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"

namespace scalea::cli {
namespace {

using drg::MergedTree;

struct ReportOptions {
  std::string dir;
  std::string format = "text";
  double min_time = 0;
  int max_depth = -1;
};

struct Columns {
  int visits, time, wait, fork, join, team;
  explicit Columns(const drg::Experiment& e)
      : visits(e.metric("visits")), time(e.metric("time")), wait(e.metric("wait")),
        fork(e.metric("fork")), join(e.metric("join")), team(e.metric("team_size")) {}
};

// Per region: wall time is the longest any thread spent in it (threads run it concurrently);
// the mean over the threads that ran it shows imbalance next to it.
struct Row {
  uint32_t node;
  double visits, time_max, time_mean, wait_mean, fork_mean, join;
  size_t threads;
};

Row make_row(const MergedTree& t, const Columns& c, uint32_t n) {
  size_t k = t.node(n).members.size();
  double kk = k ? double(k) : 1.0;
  return Row{n, t.sum(n, c.visits), t.max(n, c.time) * 1e-9, t.sum(n, c.time) * 1e-9 / kk,
             t.sum(n, c.wait) * 1e-9 / kk, t.sum(n, c.fork) * 1e-9 / kk, t.sum(n, c.join) * 1e-9, k};
}

bool shown(const MergedTree& t, const Row& r, const ReportOptions& o) {
  if (o.max_depth >= 0 && int(t.node(r.node).depth) > o.max_depth) return false;
  return r.node == 0 || r.time_max >= o.min_time;
}

std::string describe(const drg::Experiment& e) {
  const auto& m = e.meta;
  std::string cmd;
  if (m["command"].is_array())
    for (const auto& a : m["command"]) cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
  return cmd;
}

void print_text(const drg::Experiment& e, const MergedTree& t, const ReportOptions& o) {
  const auto& m = e.meta;
  Columns c(e);
  fmt::print("experiment  {}\n", e.path);
  fmt::print("command     {}\n", describe(e));
  fmt::print("run         {} on {}, {} thread(s), max team {}, {:.3f} s, clock {}\n",
             m.value("start_time", ""), m.value("host", ""), m.value("threads", 0),
             m.value("max_team_size", 0), m["clock"].value("duration_s", 0.0),
             m["clock"].value("source", ""));
  if (m.contains("openmp") && !m["openmp"].value("runtime", "").empty())
    fmt::print("openmp      {} ({})\n", m["openmp"].value("runtime", ""), m["openmp"].value("runtime_path", ""));
  if (!e.complete()) fmt::print("WARNING     the experiment is incomplete\n");
  fmt::print("\n");
  fmt::print("{:<52} {:>9} {:>4} {:>11} {:>11} {:>11} {:>10} {:>10}\n", "region (call tree)", "visits",
             "thr", "time max s", "time avg s", "wait avg s", "fork ms", "join ms");
  for (uint32_t n : t.preorder()) {
    Row r = make_row(t, c, n);
    if (!shown(t, r, o)) continue;
    const drg::Region& reg = t.region_of(n);
    std::string label = std::string(2 * t.node(n).depth, ' ') + reg.label();
    std::string loc = reg.location();
    if (!loc.empty() && reg.kind != drg::RegionKind::Program) label += " @" + loc;
    if (label.size() > 52) label = label.substr(0, 49) + "...";
    fmt::print("{:<52} {:>9} {:>4} {:>11.6f} {:>11.6f} {:>11.6f} {:>10.3f} {:>10.3f}\n", label,
               uint64_t(r.visits), r.threads, r.time_max, r.time_mean, r.wait_mean,
               r.fork_mean * 1e3, r.join * 1e3);
  }
}

void print_json(const drg::Experiment& e, const MergedTree& t, const ReportOptions& o) {
  Columns c(e);
  nlohmann::json out;
  out["experiment"] = {{"path", e.path}, {"command", e.meta["command"]},
                       {"threads", e.meta["threads"]}, {"ranks", e.ranks()},
                       {"max_team_size", e.meta["max_team_size"]}, {"complete", e.complete()},
                       {"openmp", e.meta["openmp"]}, {"clock", e.meta["clock"]}};
  nlohmann::json regions = nlohmann::json::array();
  int p = e.meta.value("max_team_size", 1) * e.ranks();
  for (uint32_t n : t.preorder()) {
    Row r = make_row(t, c, n);
    if (!shown(t, r, o)) continue;
    const drg::Region& reg = t.region_of(n);
    nlohmann::json per_thread = nlohmann::json::array();
    for (auto [thread, v] : t.per_thread(n, c.time)) {
      const drg::ThreadTree& tt = e.threads[thread];
      per_thread.push_back({{"rank", tt.rank}, {"thread", tt.thread}, {"time", v * 1e-9},
                            {"wait", e.value(tt, t.node(n).members[0].node, -1)}});
    }
    // Per-thread wait values, aligned with per_thread.
    size_t i = 0;
    for (auto [thread, v] : t.per_thread(n, c.wait)) per_thread[i++]["wait"] = v * 1e-9;
    regions.push_back({{"id", n},
                       {"parent", t.node(n).parent == format::kNoIndex ? nlohmann::json(nullptr)
                                                                        : nlohmann::json(t.node(n).parent)},
                       {"path", t.path(n)},
                       {"depth", t.node(n).depth},
                       {"kind", std::string(format::region_kind_name(reg.kind))},
                       {"label", reg.label()},
                       {"name", reg.name},
                       {"source", {{"file", reg.file}, {"line", reg.line}, {"function", reg.function}}},
                       {"p", p},
                       {"visits", uint64_t(r.visits)},
                       {"threads", r.threads},
                       {"time", r.time_max},
                       {"time_mean", r.time_mean},
                       {"wait_mean", r.wait_mean},
                       {"wait_total", t.sum(n, c.wait) * 1e-9},
                       {"fork_mean", r.fork_mean},
                       {"join", r.join},
                       {"per_thread", per_thread}});
  }
  out["regions"] = regions;
  std::cout << out.dump(2) << "\n";
}

}  // namespace

void add_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Show the per-region table of an experiment");
  cmd->footer(
      "Examples:\n"
      "  scalea report md.p4                      call tree with visits, times, waits\n"
      "  scalea report md.p4 --min-time 0.01      hide regions shorter than 10 ms\n"
      "  scalea report md.p4 --format json        machine-readable (docs/json-schema.md)\n\n"
      "time max: the longest time any thread spent in the region (its wall time);\n"
      "time avg / wait avg: the mean over the threads that ran it; join: master only.");
  cmd->add_option("experiment", o->dir, "Experiment directory")->required();
  cmd->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--min-time", o->min_time, "Hide regions whose time is below this (seconds)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--depth", o->max_depth, "Show the call tree down to this depth")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([o] {
    drg::Experiment e = drg::load_experiment(o->dir);
    MergedTree t(e);
    if (o->format == "json") print_json(e, t, *o);
    else print_text(e, t, *o);
  });
}

}  // namespace scalea::cli
