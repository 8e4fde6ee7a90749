// The HTML report of a scaling study (`scalea report STUDY --html FILE`): the data the page draws
// (report/assets/report.js), from the same data as the text, CSV and JSON study reports
// (study_data.cpp): per region of the merged call tree and per configuration the median time,
// its spread, speedup, efficiency and the six classes; the findings of the largest p.
#include <fmt/format.h>

#include "formats/findings_out.hpp"
#include "html/html.hpp"
#include "study_report.hpp"
#include "study_data.hpp"
#include "output/text.hpp"

namespace scalea::cli {
namespace {

using namespace studyrep;

std::string list_text(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

void study_facts(const Data& d, nlohmann::json& data) {
  const Study& s = d.study;
  nlohmann::json f = nlohmann::json::array();
  auto add = [&](const std::string& k, const std::string& v) { f.push_back({k, v}); };
  add("study", d.dir);
  add("command", command_text(s));
  add("plan",
      fmt::format("threads {} x ranks {}, {} repetition(s): {} of {} runs ok{}{}",
                  list_text(s.threads), list_text(s.ranks), s.repeat, d.runs_ok, s.runs.size(),
                  d.runs_failed ? fmt::format(", {} failed", d.runs_failed) : "",
                  d.runs_pending ? fmt::format(", {} pending", d.runs_pending) : ""));
  if (s.use_launcher) add("launcher", s.launcher);
  add("host", s.host);
  add("reference",
      fmt::format("1 thread x 1 rank, median of {} repetition(s): {} (program {:.4f} s)",
                  d.reference_reps, d.reference_experiment, d.reference_program_time));
  data["facts"] = std::move(f);
  nlohmann::json w = d.warnings;
  for (const Run& r : s.runs)
    if (r.status == Status::Failed) w.push_back("run " + r.id() + " failed: " + r.error);
  data["warnings"] = std::move(w);
}

nlohmann::json configs_json(const Data& d) {
  nlohmann::json out = nlohmann::json::array();
  for (const ConfigData& c : d.configs)
    out.push_back({{"label", marked_label(d, c)},
                   {"p", c.config.p()},
                   {"threads", c.config.threads},
                   {"ranks", c.config.ranks},
                   {"reps", c.experiments.size()},
                   {"experiments", c.experiments},
                   {"pop", {median(c.lb), median(c.ce), median(c.pe)}},
                   {"cpu_note",
                    c.cpu_shared_reps ? nlohmann::json(cpu_note(d, c)) : nlohmann::json(nullptr)}});
  return out;
}

nlohmann::json cell_json(const Cell& cell) {
  if (cell.samples.empty()) return nullptr;
  nlohmann::json classes = nlohmann::json::array();
  for (double v : cell.cls_med) classes.push_back(v);
  return {{"n", cell.samples.size()},
          {"t", cell.time.med},
          {"tmin", cell.time.min},
          {"tmax", cell.time.max},
          {"speedup", optional_number(cell.speedup)},
          {"eff", optional_number(cell.efficiency)},
          {"to", cell.total},
          {"c", std::move(classes)}};
}

nlohmann::json regions_json(const Data& d, html::Sources& sources) {
  nlohmann::json out = nlohmann::json::array();
  for (int n : preorder(d)) {
    const Node& nd = d.nodes[size_t(n)];
    nlohmann::json cells = nlohmann::json::array();
    for (size_t c = 0; c < d.configs.size(); ++c) cells.push_back(cell_json(d.cells[size_t(n)][c]));
    nlohmann::json j = {
        {"id", n},
        {"parent", nd.parent < 0 ? nlohmann::json(nullptr) : nlohmann::json(nd.parent)},
        {"depth", nd.depth},
        {"label", nd.label},
        {"kind", nd.kind},
        {"loc", nd.location},
        {"file", nd.file},
        {"line", nd.line},
        {"func", nd.function},
        {"pc", n == 0 ? d.roots[nd.root] : nd.component},  // see node_path
        {"ts", optional_number(nd.t_s)},
        {"cells", std::move(cells)}};
    int src = sources.want(nd.file, nd.line);
    if (src >= 0) j["src"] = src;
    out.push_back(std::move(j));
  }
  return out;
}

// The findings of the largest p (as the text report lists them), each pointing at its region of
// the study's tree ("node"), found by its call-path key.
void findings(const Data& d, size_t limit, nlohmann::json& data) {
  data["findings"] = nlohmann::json::array();
  std::optional<StudyFindings> f = limit ? study_findings(d) : std::nullopt;
  if (!f) {
    data["findings_note"] = limit ? "No configuration with p > 1 to take findings from."
                                  : "Findings left out (--findings 0).";
    return;
  }
  nlohmann::json fs = findings_json(f->findings);
  for (auto& j : fs) {
    uint32_t node = j["node"].get<uint32_t>();
    auto id = d.index.find(f->analysis.regions[node].key);
    j["node"] = id == d.index.end() ? nlohmann::json(nullptr) : nlohmann::json(id->second);
  }
  data["findings"] = std::move(fs);
  data["findings_p"] = f->p;
  std::string first;
  for (const std::string& note : f->cpu_sharing)
    first += "First, threads shared CPUs: " + note + ". ";
  data["findings_note"] = fmt::format(
      "{}Findings at p = {}, from its repetition with the median T_o ({}); {}", first, f->p,
      f->experiment,
      f->noise_measured ? "an overhead within the run-to-run noise of its region (the spread over "
                          "the repetitions) is not a finding."
                        : "one repetition: the run-to-run noise is not measured (--repeat 3 "
                          "measures it).");
}

}  // namespace

std::string render_study_html(const Data& d, const HtmlOptions& o) {
  nlohmann::json data;
  data["schema"] = "scalea-html/1";
  data["kind"] = "study";
  data["title"] = d.dir;
  data["classes"] = html::classes_json();
  study_facts(d, data);
  data["configs"] = configs_json(d);
  html::Sources sources(o.source);
  data["regions"] = regions_json(d, sources);
  data["top"] = detailed(d, 5);
  findings(d, o.findings, data);
  if (!o.source)  // --no-source: no line of the program's source in the page
    for (auto& f : data["findings"]) f["source"] = nullptr;
  data["sources"] = sources.json();
  return html::page("scalea study: " + d.dir, data, "");
}

}  // namespace scalea::cli
