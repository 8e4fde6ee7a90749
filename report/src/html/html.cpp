// The HTML report of one experiment: the data the page draws (report/assets/report.js) from the
// analysis the JSON report writes: regions in call-tree order with their six classes and
// subclasses, each region's time on every PE (aggregated on large runs), the findings chosen as
// in the text report, source snippets and the region graph.
#include "html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "findings/findings.hpp"
#include "analysis/meta.hpp"
#include "formats/report_json.hpp"
#include "formats/sampled.hpp"
#include "analysis/pe_split.hpp"
#include "analysis/thread_values.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/format.hpp"
#include "formats/findings_out.hpp"
#include "output/text.hpp"

namespace scalea::cli {
namespace {

using drg::MergedTree;

// Per-PE times are embedded exactly (4 significant digits) while regions x PEs stays within
// kExactPeCells (html.hpp); beyond it each region's times are quantized to a byte of its largest,
// and more PEs than kMaxColumns are shown as kMaxColumns columns of consecutive PEs (their max and
// mean).
constexpr size_t kMaxColumns = 1024;
// The region graph (Graphviz) is drawn for at most this many shown regions: dot lays out NPB's
// 10-170 regions in 0.1-0.5 s, but BOTS fib's 12,289 did not finish in a minute.
constexpr size_t kMaxGraphRegions = 400;

// A number with 4 significant digits, as JSON writes it (0.04321, not 0.043210000000000001).
double round4(double v) { return v == 0 ? 0.0 : std::stod(fmt::format("{:.4g}", v)); }

std::string base64(const std::vector<uint8_t>& bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = uint32_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint32_t(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= bytes[i + 2];
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? k[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? k[v & 63] : '=';
  }
  return out;
}

std::string pe_name(const drg::Experiment& e, int thread) {
  if (thread < 0 || size_t(thread) >= e.threads.size()) return "";
  const drg::ThreadTree& t = e.threads[size_t(thread)];
  return pe_label(t.rank, t.thread);
}

// The run's facts (label, value) and what could distort the numbers (warnings).
void facts(const Analyzed& x, nlohmann::json& data) {
  const drg::Experiment& e = x.experiment();
  const drg::Meta m = drg::read_meta(e.meta);
  const auto& a = x.a;
  nlohmann::json f = nlohmann::json::array();
  auto add = [&](const std::string& k, const std::string& v) { f.push_back({k, v}); };
  add("experiment", e.path);
  add("command", m.command_line());
  add("run", m.start_time + " on " + m.host);
  add("processing elements",
      fmt::format("p = {} ({} rank(s), {} thread(s))", a.p, e.ranks(), e.threads.size()));
  add("duration", fmt::format("{:.3f} s (clock {})", m.duration_s, m.clock_source));
  const std::string& runtime = m.openmp.runtime;
  if (!runtime.empty()) add("OpenMP runtime", runtime);
  const drg::Experiment* ref = x.reference();
  add("reference", ref ? fmt::format("{} (p = {})", ref->path, ref->threads.size())
                       : "none: T_s is estimated as the useful work (additional computation is 0)");
  const auto& pe = a.program;
  std::string eff = fmt::format(
      "load balance {:.3f}, communication efficiency {:.3f}, parallel "
      "efficiency {:.3f}",
      pe.load_balance, pe.communication_efficiency, pe.parallel_efficiency);
  if (pe.computation_scalability)
    eff += fmt::format(", computation scalability {:.3f}, global efficiency {:.3f}",
                       *pe.computation_scalability, *pe.global_efficiency);
  add("program efficiencies (POP)", eff);
  data["facts"] = std::move(f);
  nlohmann::json w = nlohmann::json::array();
  if (!e.complete()) w.push_back("The experiment is incomplete: some ranks' data is missing.");
  for (const std::string& s : cpu_sharing(e)) w.push_back(s);
  if (std::string light = light_mode_note(m); !light.empty()) w.push_back(light);
  if (m.program_start_estimated)
    w.push_back(
        fmt::format("The program's start was estimated (+{:.3f} s before the tool "
                    "started): run it with scalea run to measure it.",
                    m.program_start_estimated_s));
  if (int64_t thr = m.throttled_count; thr > 0)
    w.push_back(
        fmt::format("{} call path(s) of tiny hot regions were throttled: their later "
                    "visits are not counted (SCALEA_THROTTLE=off records all).",
                    thr));
  data["warnings"] = std::move(w);
}

// Each region's time (and wait, visits) on every PE, PEs in (rank, thread) order: exact on small
// runs, else quantized and in at most kMaxColumns columns. Says in data["distribution"] what was
// done.
class PeTimes {
 public:
  explicit PeTimes(const Analyzed& x) : e_(x.experiment()), t_(x.tree()), split_(x) {
    order_.resize(e_.threads.size());
    std::iota(order_.begin(), order_.end(), 0u);
    std::stable_sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(e_.threads[a].rank, e_.threads[a].thread) <
             std::make_pair(e_.threads[b].rank, e_.threads[b].thread);
    });
    pos_.resize(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) pos_[order_[i]] = uint32_t(i);
    size_t pes = order_.size();
    exact_ = pes * t_.nodes().size() <= kExactPeCells;
    per_column_ = exact_ ? 1 : (pes + kMaxColumns - 1) / kMaxColumns;
    columns_ = (pes + per_column_ - 1) / per_column_;
    time_ = e_.metric(format::CoreMetric::TimeSum);
    wait_ = e_.metric(format::CoreMetric::Wait);
    visits_ = e_.metric(format::CoreMetric::Visits);
  }

  nlohmann::json describe() const {
    nlohmann::json pes = nlohmann::json::array();
    for (uint32_t i : order_) pes.push_back({e_.threads[i].rank, e_.threads[i].thread});
    std::string note;
    if (exact_)
      note = fmt::format("Times of each of the {} PEs, to 4 significant digits.", order_.size());
    else if (per_column_ == 1)
      note = fmt::format(
          "Aggregated: {} regions x {} PEs; each PE's time is shown to 1/255 of "
          "the region's longest PE time (min, mean and max are exact; waits and "
          "visits per PE are left out).",
          t_.nodes().size(), order_.size());
    else
      note = fmt::format(
          "Aggregated: {} regions x {} PEs are shown as {} columns of {} "
          "consecutive PEs each (rank, then thread order): the column's longest "
          "and mean time, to 1/255 of the region's longest PE time (min, mean and "
          "max are exact; waits and visits per PE are left out).",
          t_.nodes().size(), order_.size(), columns_, per_column_);
    nlohmann::json out = {{"mode", exact_ ? "exact" : "quantized"},
                          {"per_column", per_column_},
                          {"columns", columns_},
                          {"pes", std::move(pes)},
                          {"note", note}};
    if (has_split()) {
      nlohmann::json classes = nlohmann::json::array();
      for (int c = 0; c < overheads::kClassCount; ++c)
        if (split_per_pe(overheads::Class(c))) classes.push_back(c);
      out["pe_classes"] = std::move(classes);
    }
    return out;
  }

  // The metrics of()'s holders carry, in this order.
  std::vector<int> metrics() const { return {time_, wait_, visits_}; }

  // {"t": [...], "w": [...], "v": [...]} or {"max": s, "q": base64, "m": base64}, and the exact
  // [min, mean, max] over the PEs that ran the region (its holders) into `stats`.
  nlohmann::json of(const NodeThreads& holders, nlohmann::json& stats) const {
    std::vector<double> time(order_.size(), 0.0), wait, visits;
    if (exact_) {
      wait.assign(order_.size(), 0.0);
      visits.assign(order_.size(), 0.0);
    }
    std::vector<char> ran(order_.size(), 0);
    for (size_t h = 0; h < holders.count; ++h) {
      uint32_t i = pos_[holders.thread[h]];
      time[i] += ns_to_s(holders.value(h, 0));
      double v = holders.value(h, 2);
      ran[i] |= v > 0 || time[i] > 0;
      if (exact_) {
        wait[i] += ns_to_s(holders.value(h, 1));
        visits[i] += v;
      }
    }
    double lo = 0, hi = 0, sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < time.size(); ++i) {
      if (!ran[i]) continue;
      lo = k ? std::min(lo, time[i]) : time[i];
      hi = std::max(hi, time[i]);
      sum += time[i];
      ++k;
    }
    stats = {round4(lo), round4(k ? sum / double(k) : 0.0), round4(hi)};
    if (exact_) {
      for (auto* v : {&time, &wait})
        for (double& x : *v) x = round4(x);
      nlohmann::json out = {{"t", time}, {"w", wait}, {"v", visits}};
      if (has_split()) add_split(holders.node, out);
      return out;
    }
    std::vector<double> col_max(columns_, 0.0), col_mean(columns_, 0.0);
    for (size_t c = 0; c < columns_; ++c) {
      size_t a = c * per_column_, b = std::min(time.size(), a + per_column_);
      for (size_t i = a; i < b; ++i) {
        col_max[c] = std::max(col_max[c], time[i]);
        col_mean[c] += time[i] / double(b - a);
      }
    }
    auto quantize = [&](const std::vector<double>& v) {
      std::vector<uint8_t> q(v.size());
      for (size_t i = 0; i < v.size(); ++i)
        q[i] = hi > 0 ? uint8_t(std::clamp(std::lround(255 * v[i] / hi), v[i] > 0 ? 1L : 0L, 255L))
                      : 0;
      return base64(q);
    };
    nlohmann::json out = {{"max", round4(hi)}, {"q", quantize(col_max)}};
    if (per_column_ > 1) out["m"] = quantize(col_mean);
    return out;
  }

 private:
  bool has_split() const { return exact_ && !split_.empty(); }

  // Each PE's useful time ("u") and its time in each class a PE's time is split into ("k":
  // class index -> per PE; a class no PE spent time in is left out), as the classifier's rules
  // split it (analysis/pe_split.hpp).
  void add_split(uint32_t node, nlohmann::json& out) const {
    std::vector<double> useful(order_.size());
    for (size_t i = 0; i < order_.size(); ++i)
      useful[i] = round4(split_.at(order_[i], node).useful);
    nlohmann::json classes = nlohmann::json::object();
    for (int c = 0; c < overheads::kClassCount; ++c) {
      if (!split_per_pe(overheads::Class(c))) continue;
      std::vector<double> v(order_.size());
      bool any = false;
      for (size_t i = 0; i < order_.size(); ++i) {
        v[i] = round4(split_.at(order_[i], node).classes[size_t(c)]);
        any |= v[i] != 0;
      }
      if (any) classes[std::to_string(c)] = std::move(v);
    }
    out["u"] = std::move(useful);
    out["k"] = std::move(classes);
  }

  const drg::Experiment& e_;
  const MergedTree& t_;
  PeSplitTable split_;
  std::vector<uint32_t> order_, pos_;
  bool exact_ = true;
  size_t per_column_ = 1, columns_ = 0;
  int time_ = -1, wait_ = -1, visits_ = -1;
};

nlohmann::json regions_json(const Analyzed& x, const Folding& fold, html::Sources& sources,
                            const PeTimes& pe) {
  const MergedTree& t = x.tree();
  const drg::Experiment& e = x.experiment();
  const int visits = e.metric(format::CoreMetric::Visits);
  nlohmann::json out = nlohmann::json::array();
  for_each_node_threads(t, t.preorder(), pe.metrics(), [&](const NodeThreads& holders) {
    const uint32_t n = holders.node;
    const auto& r = x.a.regions[n];
    const drg::Region& reg = t.region_of(n);
    const auto& node = t.node(n);
    nlohmann::json classes = nlohmann::json::array();
    for (double v : r.classes) classes.push_back(v);
    nlohmann::json sub = nlohmann::json::object();
    for (const auto& [k, v] : r.subclasses) sub[k] = v;
    nlohmann::json stats;
    nlohmann::json j = {
        {"id", n},
        {"parent",
         node.parent == format::kNoIndex ? nlohmann::json(nullptr) : nlohmann::json(node.parent)},
        {"depth", node.depth},
        {"label", reg.label()},
        {"kind", std::string(format::region_kind_name(reg.kind))},
        {"loc", reg.kind == drg::RegionKind::Program ? "" : reg.location()},
        {"file", reg.file},
        {"line", reg.line},
        {"func", reg.function},
        {"pc", t.component(n)},  // the page builds call paths from these
        {"visits", t.sum(n, visits)},
        {"tp", r.t_p},
        {"ts", r.t_s},
        {"to", r.t_o},
        {"c", std::move(classes)},
        {"sub", std::move(sub)},
        {"dom", dominant_class(r)},
        {"speedup", r.speedup},
        {"eff", r.efficiency},
        {"imb", r.imbalance},
        {"pes", r.pes_ran},
        {"most", pe_name(e, r.most_loaded)},
        {"least", pe_name(e, r.least_loaded)},
        {"pe", pe.of(holders, stats)},
    };
    j["st"] = std::move(stats);
    if (reg.kind == drg::RegionKind::Mpi)  // summed over ranks and threads, as in the JSON report
      j["mpi"] = {t.sum(n, e.metric(format::CoreMetric::BytesSent)),
                  t.sum(n, e.metric(format::CoreMetric::BytesRecv)),
                  ns_to_s(t.sum(n, e.metric(format::CoreMetric::Wait))),
                  ns_to_s(t.sum(n, e.metric(format::CoreMetric::Transfer)))};
    if (fold.hidden[n]) j["folded"] = true;
    int src = sources.want(reg.file, reg.line);
    if (src >= 0) j["src"] = src;
    out.push_back(std::move(j));
  });
  return out;
}

}  // namespace

std::string render_html(const Analyzed& x, const HtmlOptions& o) {
  const MergedTree& t = x.tree();
  nlohmann::json data;
  data["schema"] = "scalea-html/1";
  data["kind"] = "experiment";
  data["title"] = x.experiment().path;
  data["classes"] = html::classes_json();
  data["estimated"] = x.ref.empty();
  data["p"] = x.a.p;
  facts(x, data);
  const Folding fold = fold_recursion(t);
  if (fold.rows > 0)
    data["folding"] = fmt::format(
        "Recursion folded: {} row(s) of {} recursive instance(s) are "
        "not shown; their outermost instance holds their time.",
        fold.rows, fold.instances);
  html::Sources sources(o.source);
  PeTimes pe(x);
  data["distribution"] = pe.describe();
  data["regions"] = regions_json(x, fold, sources, pe);
  nlohmann::json gone = nlohmann::json::array();
  for (const auto& r : x.a.only_in_reference)
    gone.push_back({{"path", r.path}, {"ts", r.t_s}, {"to", r.t_o}});
  data["only_in_reference"] = std::move(gone);
  // The findings as the text report chooses them: against the reference, recursion folded.
  FindingContext context;
  context.reference = x.reference_tree();
  context.hidden = fold.hidden;
  data["findings"] = findings_json(find_findings(t, x.a, o.findings, context));
  if (!o.source)  // --no-source: no line of the program's source in the page
    for (auto& f : data["findings"]) f["source"] = nullptr;
  data["findings_note"] =
      o.findings == 0
          ? std::string("Findings left out (--findings 0).")
          : fmt::format(
                "Nothing below {:.3f} s ({}% of the program's time, at least {:.0f} ms) is a "
                "finding; with "
                "one run the noise is not measured (scalea study --repeat 3 measures it).",
                finding_floor(x.a), kFindingMinProgramShare * 100, kFindingMinSeconds * 1e3);
  data["sampled"] = sampled_json(t);
  data["sources"] = sources.json();
  // The region graph of the rows the call tree shows (recursion folded), and none beyond a size
  // Graphviz lays out in seconds.
  std::string graph_note, svg;
  size_t shown = 0;
  for (char h : fold.hidden) shown += h ? 0 : 1;
  if (fold.hidden.empty()) shown = t.nodes().size();
  if (o.graphviz && shown > kMaxGraphRegions)
    graph_note = fmt::format(
        "The region graph is drawn for at most {} regions; this run has {} "
        "(recursion folded): the call tree holds them all, and scalea export "
        "--format dot writes the whole graph.",
        kMaxGraphRegions, shown);
  else svg = html::region_graph_svg(export_dot(x, &fold.hidden), o.graphviz, graph_note);
  data["graph_note"] = graph_note;
  return html::page("scalea: " + x.experiment().path, data, svg);
}

ExportFormat html_export_format() {
  return {"html",
          "one self-contained HTML report to explore, of an experiment or a scaling\n"
          "           study (same as scalea report --html)",
          false, true,
          [](const TextSink& put, const std::vector<const Analyzed*>& r, const ExportSettings& s) {
            put(render_html(*r[0], {s.findings, s.graphviz, s.source}));
          }};
}

}  // namespace scalea::cli
