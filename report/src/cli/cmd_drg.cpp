// scalea drg: prints the dynamic code-region call graph of one or more experiments, as the merged
// calling-context tree or as the paper's region graph, in text or Graphviz DOT.
#include <fmt/format.h>

#include <boost/graph/graphviz.hpp>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/drg/graph.hpp"
#include "output/text.hpp"

namespace scalea::cli {
namespace {

using drg::Drg;
using drg::RegionGraph;

struct DrgOptions {
  std::vector<std::string> dirs;
  std::string graph = "tree";
  std::string format = "text";
  std::string metric = "time";
  int depth = -1;
};

// Nanosecond metrics are shown in seconds.
bool is_time(const std::string& m) { return format::is_time_metric(m); }

std::string show(double v, const std::string& metric) {
  if (is_time(metric)) return fmt::format("{:.6f}", ns_to_s(v));
  if (v == double(int64_t(v)) && std::abs(v) < 1e15) return fmt::format("{}", int64_t(v));
  return fmt::format("{:.6g}", v);
}

std::string unit(const std::string& metric) { return is_time(metric) ? " s" : ""; }
std::string with_unit(const std::string& metric) {
  return is_time(metric) ? metric + " (s)" : metric;
}

const char* rule_name(format::MetricMerge m) {
  switch (m) {
    case format::MetricMerge::Sum: return "sum";
    case format::MetricMerge::Min: return "min";
    case format::MetricMerge::Max: return "max";
  }
  return "?";
}

std::string vertex_label(const Drg& d, uint32_t v) {
  const drg::Region& r = d.region_of(v);
  std::string label = r.label();
  std::string loc = r.location();
  if (!loc.empty() && r.kind != drg::RegionKind::Program) label += " @" + loc;
  return label;
}

// Graphviz labels are written quoted; escape what would end them.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void header(const Drg& d, int metric, const std::string& name) {
  for (const drg::RunInfo& r : d.runs())
    fmt::print("experiment  {}  (p = {}, {} rank(s))\n", r.label, r.p, r.ranks);
  fmt::print("threads     {} merged ({} calling contexts, {} regions)\n", d.streams().size(),
             d.size(), d.regions().size());
  fmt::print("metric      {} (merged by {} over the threads that ran each node)\n\n",
             with_unit(name), rule_name(d.metrics()[size_t(metric)].merge));
}

void tree_text(const Drg& d, int metric, const std::string& name, int max_depth) {
  header(d, metric, name);
  const int visits = d.metric(format::CoreMetric::Visits);
  std::vector<double> incl = d.inclusive_all(metric);
  fmt::print("{:<56} {:>14} {:>14} {:>10} {:>5} {:>14} {:>14}\n", "calling context", "inclusive",
             "exclusive", "visits", "thr", "min/thread", "max/thread");
  for (uint32_t v : d.preorder()) {
    if (max_depth >= 0 && int(d.depth(v)) > max_depth) continue;
    std::string label = std::string(2 * d.depth(v), ' ') + vertex_label(d, v);
    if (label.size() > 56) label = label.substr(0, 53) + "...";
    fmt::print("{:<56} {:>14} {:>14} {:>10} {:>5} {:>14} {:>14}\n", label, show(incl[v], name),
               show(d.exclusive(v, metric), name), show(d.value(v, visits), "visits"), d.ran(v),
               show(d.min(v, metric), name), show(d.max(v, metric), name));
  }
}

void regions_text(const RegionGraph& rg, int metric, const std::string& name) {
  const Drg& d = rg.drg();
  header(d, metric, name);
  const auto& g = rg.graph();
  fmt::print("{:<5} {:<48} {:>14} {:>14} {:>9}\n", "id", "region", "inclusive", "exclusive",
             "contexts");
  for (uint32_t v = 0; v < boost::num_vertices(g); ++v) {
    const drg::Region& r = d.regions()[g[v].region];
    std::string label = r.label();
    if (!r.location().empty() && r.kind != drg::RegionKind::Program) label += " @" + r.location();
    if (g[v].recursive) label += " (recursive)";
    if (label.size() > 48) label = label.substr(0, 45) + "...";
    fmt::print("{:<5} {:<48} {:>14} {:>14} {:>9}\n", v, label,
               show(g[v].inclusive[size_t(metric)], name),
               show(g[v].exclusive[size_t(metric)], name), g[v].contexts);
  }
  fmt::print("\n{:<12} {:>12} {:>14}  {}\n", "edge", "visits", name, "caller -> callee");
  for (auto [b, e] = boost::edges(g); b != e; ++b) {
    uint32_t s = uint32_t(boost::source(*b, g)), t = uint32_t(boost::target(*b, g));
    fmt::print("{:>4} -> {:<4} {:>12} {:>14}  {} -> {}{}\n", s, t, show(g[*b].visits, "visits"),
               show(g[*b].values[size_t(metric)], name), d.regions()[g[s].region].label(),
               d.regions()[g[t].region].label(), g[*b].back ? "   (back edge: recursion)" : "");
  }
  if (rg.has_cycles())
    fmt::print("\n{} back edge(s): the graph has cycles (recursion)\n", rg.back_edges().size());
}

void tree_dot(const Drg& d, int metric, const std::string& name, int max_depth) {
  const int visits = d.metric(format::CoreMetric::Visits);
  std::vector<double> incl = d.inclusive_all(metric);
  // Only the shown vertices: copy them into a fresh graph when a depth limit applies.
  drg::CctGraph shown;
  std::vector<uint32_t> orig;
  std::vector<uint32_t> map(d.size(), UINT32_MAX);
  for (uint32_t v : d.preorder()) {
    if (max_depth >= 0 && int(d.depth(v)) > max_depth) continue;
    map[v] = uint32_t(boost::add_vertex(d.graph()[v], shown));
    orig.push_back(v);
    if (v != Drg::root()) boost::add_edge(map[d.parent(v)], map[v], shown);
  }
  auto vw = [&](std::ostream& out, uint32_t sv) {
    uint32_t v = orig[sv];
    out << "[shape=box,label="
        << quote(vertex_label(d, v) + "\n" + name + " " + show(incl[v], name) + unit(name) +
                 " (excl " + show(d.exclusive(v, metric), name) + ")\nthreads " +
                 std::to_string(d.ran(v)))
        << "]";
  };
  auto ew = [&](std::ostream& out, const drg::CctGraph::edge_descriptor& e) {
    uint32_t v = orig[boost::target(e, shown)];
    out << "[label=" << quote("visits " + show(d.value(v, visits), "visits")) << "]";
  };
  boost::write_graphviz(std::cout, shown, vw, ew);
}

void regions_dot(const RegionGraph& rg, int metric, const std::string& name) {
  const Drg& d = rg.drg();
  const auto& g = rg.graph();
  auto vw = [&](std::ostream& out, uint32_t v) {
    const drg::Region& r = d.regions()[g[v].region];
    std::string label = r.label();
    if (!r.location().empty() && r.kind != drg::RegionKind::Program) label += "\n@" + r.location();
    label += "\n" + name + " incl " + show(g[v].inclusive[size_t(metric)], name) + unit(name) +
             ", excl " + show(g[v].exclusive[size_t(metric)], name);
    out << "[shape=box,label=" << quote(label) << (g[v].recursive ? ",style=bold" : "") << "]";
  };
  auto ew = [&](std::ostream& out, const drg::RegionGraphT::edge_descriptor& e) {
    out << "[label="
        << quote("visits " + show(g[e].visits, "visits") + "\n" + name + " " +
                 show(g[e].values[size_t(metric)], name))
        << (g[e].back ? ",style=dashed,color=red" : "") << "]";
  };
  boost::write_graphviz(std::cout, g, vw, ew);
}

}  // namespace

void add_drg(CLI::App& app) {
  auto o = std::make_shared<DrgOptions>();
  CLI::App* cmd =
      app.add_subcommand("drg", "Print the dynamic code-region call graph (tree or region graph)");
  cmd->footer(
      "Examples:\n"
      "  scalea drg md.p4                          merged calling-context tree, time per context\n"
      "  scalea drg md.p4 --metric visits --depth 2\n"
      "  scalea drg md.p4 --graph regions          region graph: one vertex per region, edges with "
      "visits\n"
      "  scalea drg md.p4 --format dot | dot -Tsvg -o md.svg\n"
      "  scalea drg md.p1 md.p2 md.p4              several runs merged by call path\n\n"
      "Values are merged over all threads, ranks and runs by the metric's rule (sum, min or max);\n"
      "min/max per thread show imbalance. Recursion appears as cycles (back edges) in the region\n"
      "graph. Times are in seconds. See docs/drg.md.");
  cmd->add_option("experiment", o->dirs, "Experiment directories (several: runs merged)")
      ->required();
  cmd->add_option("-g,--graph", o->graph, "Which graph")
      ->check(CLI::IsMember({"tree", "regions"}))
      ->capture_default_str();
  cmd->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "dot"}))
      ->capture_default_str();
  cmd->add_option("-m,--metric", o->metric,
                  "Metric shown on nodes and edges (visits, time, wait, ...)")
      ->capture_default_str();
  cmd->add_option("--depth", o->depth, "Tree: show contexts down to this depth")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([o] {
    std::vector<drg::Experiment> exps;
    exps.reserve(o->dirs.size());
    // Whole: drg::Drg reads every value from the threads' arrays (docs/drg.md, "Streaming").
    for (const std::string& dir : o->dirs) exps.push_back(drg::load_experiment(dir));
    std::vector<const drg::Experiment*> runs;
    for (const auto& e : exps) runs.push_back(&e);
    Drg d(runs);
    int metric = d.metric(o->metric);
    if (metric < 0) {
      std::string names;
      for (const auto& m : d.metrics()) names += (names.empty() ? "" : ", ") + m.name;
      throw UserError("unknown metric '" + o->metric + "' (the experiment has: " + names + ")");
    }
    if (d.size() == 0) throw UserError("the experiment holds no calling contexts");
    if (o->graph == "tree") {
      if (o->format == "dot") tree_dot(d, metric, o->metric, o->depth);
      else tree_text(d, metric, o->metric, o->depth);
    } else {
      RegionGraph rg(d);
      if (o->format == "dot") regions_dot(rg, metric, o->metric);
      else regions_text(rg, metric, o->metric);
    }
  });
}

}  // namespace scalea::cli
