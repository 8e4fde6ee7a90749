// The self-contained HTML report (no network: everything inline).
#include "html.hpp"
#include "report_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "findings.hpp"
#include "scalea/format.hpp"

namespace scalea::cli {
namespace {

using drg::MergedTree;
using overheads::kClassCount;
using overheads::kClassKeys;

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:1.5em 2em;color:#222;background:#fff}
h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.6em 0 .5em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;font-size:.85em}
table.facts td{padding:.1em .8em .1em 0;vertical-align:top}table.facts td:first-child{color:#666}
#overheads th,#overheads td{padding:.2em .5em;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
#overheads th{background:#f4f4f4;position:sticky;top:0}
#overheads td.name,#overheads th.name{text-align:left}
#overheads td.src{text-align:left;color:#666}
#overheads tr:hover td{background:#fafae6}
button.tog{border:none;background:none;cursor:pointer;width:1.4em;padding:0;font-size:.9em;color:#555}
span.leaf{display:inline-block;width:1.4em}
.swatch{display:inline-block;width:.8em;height:.8em;border:1px solid #888;margin-right:.3em;vertical-align:middle}
td.dom{text-align:left!important}
ol.findings li{margin:.4em 0}ol.findings .path{color:#666;font-size:.85em;font-family:monospace}
.cls{font-weight:600}
.note{color:#666;font-size:.85em}
.graph svg{max-width:100%;height:auto}
ul.tree{font-size:.85em}
.controls button{font-size:.8em;margin-right:.5em}
)";

const char* kScript = R"(
(function(){
  var rows=Array.prototype.slice.call(document.querySelectorAll('#overheads tbody tr'));
  var kids={};
  rows.forEach(function(r){var p=r.getAttribute('data-parent');if(p!==''){(kids[p]=kids[p]||[]).push(r);}});
  function setVisible(id,show){(kids[id]||[]).forEach(function(c){
    c.style.display=show?'':'none';
    var open=c.getAttribute('data-open')!=='0';
    setVisible(c.getAttribute('data-id'),show&&open);});}
  function toggle(r,open){r.setAttribute('data-open',open?'1':'0');
    var b=r.querySelector('button.tog');if(b){b.textContent=open?'\u25BE':'\u25B8';b.setAttribute('aria-expanded',open?'true':'false');}
    setVisible(r.getAttribute('data-id'),open);}
  rows.forEach(function(r){var b=r.querySelector('button.tog');
    if(b)b.addEventListener('click',function(){toggle(r,r.getAttribute('data-open')==='0');});});
  function all(open){rows.forEach(function(r){if(kids[r.getAttribute('data-id')])toggle(r,open);});}
  var e=document.getElementById('expand-all'),c=document.getElementById('collapse-all');
  if(e)e.addEventListener('click',function(){all(true);});
  if(c)c.addEventListener('click',function(){all(false);});
})();
)";

std::string command_line(const drg::Experiment& e) {
  std::string cmd;
  if (e.meta.contains("command") && e.meta["command"].is_array())
    for (const auto& a : e.meta["command"])
      if (a.is_string()) cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
  return cmd;
}

std::string meta_str(const nlohmann::json& m, const char* key) {
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "";
}

std::string facts(const Analyzed& x) {
  const auto& m = x.e.meta;
  const auto& a = x.a;
  double dur = meta_value(m, "clock", "duration_s", 0.0);
  std::string clock = meta_value<std::string>(m, "clock", "source", "");
  std::string runtime = meta_value<std::string>(m, "openmp", "runtime", "");
  auto row = [](const std::string& k, const std::string& v) {
    return "<tr><td>" + esc(k) + "</td><td>" + esc(v) + "</td></tr>\n";
  };
  std::string s = "<table class=\"facts\" id=\"facts\">\n";
  s += row("experiment", x.e.path);
  s += row("command", command_line(x.e));
  s += row("run", meta_str(m, "start_time") + " on " + meta_str(m, "host"));
  s += row("processing elements", fmt::format("p = {} ({} rank(s), {} thread(s))", a.p,
                                              x.e.ranks(), x.e.threads.size()));
  s += row("duration", fmt::format("{:.3f} s (clock {})", dur, clock));
  if (!runtime.empty()) s += row("OpenMP runtime", runtime);
  s += row("reference", x.ref ? fmt::format("{} (p = {})", x.ref->path, x.ref->threads.size())
                              : "none: T_s is estimated as the useful work (additional "
                                "computation is 0)");
  if (!x.e.complete()) s += row("warning", "the experiment is incomplete");
  const auto& pe = a.program;
  std::string eff = fmt::format("load balance {:.3f}, communication efficiency {:.3f}, parallel "
                                "efficiency {:.3f}",
                                pe.load_balance, pe.communication_efficiency,
                                pe.parallel_efficiency);
  if (pe.computation_scalability)
    eff += fmt::format(", computation scalability {:.3f}, global efficiency {:.3f}",
                       *pe.computation_scalability, *pe.global_efficiency);
  s += row("program efficiencies (POP)", eff);
  return s + "</table>\n";
}

// The findings are chosen as in the text report: against the reference, recursion folded.
FindingContext html_finding_context(const Analyzed& x) {
  FindingContext c;
  c.reference = x.ref_t ? &*x.ref_t : nullptr;
  c.hidden = fold_recursion(x.tree()).hidden;
  return c;
}

std::string findings_html(const std::vector<Finding>& fs) {
  if (fs.empty()) return "<p id=\"findings\">No overhead above the floor (1 ms and 1% of the program's time).</p>\n";
  std::string s = "<ol class=\"findings\" id=\"findings\">\n";
  for (const Finding& f : fs) {
    int c = 0;
    while (c < kClassCount && kClassKeys[size_t(c)] != f.cls) ++c;
    std::string sw = c < kClassCount ? fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>",
                                                   kClassColors[size_t(c)])
                                     : "";
    s += "<li class=\"finding\">" + sw + "<span class=\"cls\">" + esc(f.cls) +
         (f.subclass.empty() ? "" : "." + esc(f.subclass)) + "</span>: " + esc(f.text) +
         "<br><span class=\"path\">" + esc(f.path) + "</span></li>\n";
  }
  return s + "</ol>\n";
}

std::string table_html(const Analyzed& x) {
  const MergedTree& t = x.tree();
  const auto& a = x.a;
  std::string s =
      "<div class=\"controls\"><button id=\"expand-all\">expand all</button>"
      "<button id=\"collapse-all\">collapse all</button></div>\n"
      "<table id=\"overheads\">\n<thead><tr><th class=\"name\">region (call tree)</th>"
      "<th class=\"name\">source</th><th>T_p s</th><th>T_s s</th><th>T_o s</th><th>T_o %</th>";
  for (int c = 0; c < kClassCount; ++c)
    s += fmt::format("<th title=\"{}\"><span class=\"swatch\" style=\"background:{}\"></span>{}</th>",
                     kClassKeys[size_t(c)], kClassColors[size_t(c)], kClassShort[size_t(c)]);
  s += "<th class=\"name\">dominant</th></tr></thead>\n<tbody>\n";
  for (uint32_t n : t.preorder()) {
    const auto& r = a.regions[n];
    const drg::Region& reg = t.region_of(n);
    const auto& node = t.node(n);
    int dom = dominant_class(r);
    std::string parent = node.parent == format::kNoIndex ? "" : std::to_string(node.parent);
    std::string tog = node.children.empty()
                          ? "<span class=\"leaf\"></span>"
                          : "<button class=\"tog\" aria-expanded=\"true\">&#9662;</button>";
    s += fmt::format("<tr class=\"region\" data-id=\"{}\" data-parent=\"{}\" data-depth=\"{}\" "
                     "data-open=\"1\" title=\"{}\"><td class=\"name\" style=\"padding-left:{:.1f}em\">{}{}</td>"
                     "<td class=\"src\">{}</td><td>{:.4f}</td><td>{:.4f}</td><td>{:.4f}</td><td>{:.1f}</td>",
                     n, parent, node.depth, esc(region_path(t, r)), 0.5 + 1.2 * node.depth, tog,
                     esc(reg.label()), esc(reg.location()), r.t_p, r.t_s, r.t_o,
                     r.t_p > 0 ? 100 * r.t_o / r.t_p : 0.0);
    for (double v : r.classes) s += fmt::format("<td>{:.4f}</td>", v);
    s += dom < 0 ? std::string("<td class=\"dom\"></td>")
                 : fmt::format("<td class=\"dom\"><span class=\"swatch\" style=\"background:{}\"></span>{}</td>",
                               kClassColors[size_t(dom)], kClassShort[size_t(dom)]);
    s += "</tr>\n";
  }
  return s + "</tbody>\n</table>\n";
}

// Stacked horizontal bars, one per region (the largest 30 by T_p, in call-tree order): the
// positive values of the six classes in seconds. Hand-written minimal SVG (docs/exports.md).
std::string plot_svg(const Analyzed& x) {
  const MergedTree& t = x.tree();
  const auto& a = x.a;
  std::vector<uint32_t> order = t.preorder();
  std::vector<uint32_t> by_time = order;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](uint32_t p, uint32_t q) { return a.regions[p].t_p > a.regions[q].t_p; });
  if (by_time.size() > 30) by_time.resize(30);
  std::vector<uint32_t> shown;
  for (uint32_t n : order)
    if (std::find(by_time.begin(), by_time.end(), n) != by_time.end()) shown.push_back(n);
  double max_total = 0;
  for (uint32_t n : shown) {
    double s = 0;
    for (double v : a.regions[n].classes) s += std::max(0.0, v);
    max_total = std::max(max_total, s);
  }
  if (max_total <= 0) max_total = 1;
  const int label_w = 330, bar_w = 480, row_h = 18, top = 10, legend_h = 40;
  int height = top + int(shown.size()) * row_h + 30 + legend_h;
  int width = label_w + bar_w + 90;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"plot-classes\" class=\"plot\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"Helvetica,Arial,sans-serif\" "
      "font-size=\"11\" role=\"img\" aria-label=\"overhead classes per region\">\n",
      width, height, width, height);
  int y = top;
  for (uint32_t n : shown) {
    const auto& r = a.regions[n];
    // Indentation past 52 characters would be cut anyway (and cost O(depth)).
    std::string label = std::string(std::min<size_t>(2 * t.node(n).depth, 53), ' ') + node_label(t, n);
    if (label.size() > 52) label = label.substr(0, 49) + "...";
    std::string path = esc(region_path(t, r));
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" xml:space=\"preserve\">{}</text>\n",
                     label_w - 6, y + row_h - 5, esc(label));
    double x0 = label_w, total = 0;
    for (int c = 0; c < kClassCount; ++c) {
      double v = r.classes[size_t(c)];
      if (v <= 0) continue;
      double w = bar_w * v / max_total;
      s += fmt::format("<rect class=\"bar {}\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
                       "fill=\"{}\" stroke=\"#555\" stroke-width=\"0.3\"><title>{}: {} {:.4f} s</title></rect>\n",
                       kClassKeys[size_t(c)], x0, y + 2, w, row_h - 4, kClassColors[size_t(c)],
                       path, kClassKeys[size_t(c)], v);
      x0 += w;
      total += v;
    }
    s += fmt::format("<text x=\"{:.2f}\" y=\"{}\" fill=\"#555\">{:.4f} s</text>\n", x0 + 4,
                     y + row_h - 5, total);
    y += row_h;
  }
  // Axis.
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", label_w, top,
                   label_w, y);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", label_w, y,
                   label_w + bar_w, y);
  for (int i = 0; i <= 4; ++i) {
    double xv = label_w + bar_w * i / 4.0;
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#333\"/>"
                     "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.3g}</text>\n",
                     xv, y, xv, y + 4, xv, y + 16, max_total * i / 4.0);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">overhead, seconds of wall time "
                   "(positive class values)</text>\n",
                   label_w + bar_w / 2, y + 29);
  int lx = 10, ly = y + 38;
  for (int c = 0; c < kClassCount; ++c) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\" stroke=\"#555\" "
                     "stroke-width=\"0.3\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                     lx, ly, kClassColors[size_t(c)], lx + 14, ly + 9, kClassKeys[size_t(c)]);
    lx += 8 + 7 * int(kClassKeys[size_t(c)].size()) + 14;
  }
  return s + "</svg>\n";
}

// The subtree of `n` as nested lists (depth first with an explicit stack: any depth).
std::string tree_list(const MergedTree& t, const overheads::Analysis& a, uint32_t n) {
  std::string s;
  auto open = [&](uint32_t m) {
    const auto& r = a.regions[m];
    s += fmt::format("<li>{} &mdash; T_p {:.4f} s, T_o {:.4f} s", esc(node_label(t, m)), r.t_p,
                     r.t_o);
    if (!t.node(m).children.empty()) s += "<ul>";
  };
  std::vector<std::pair<uint32_t, size_t>> stack;  // node, next child
  open(n);
  stack.emplace_back(n, 0);
  while (!stack.empty()) {
    auto& [m, next] = stack.back();
    const std::vector<uint32_t>& kids = t.node(m).children;
    if (next < kids.size()) {
      uint32_t c = kids[next++];
      open(c);
      stack.emplace_back(c, 0);  // m and next are not used after this
      continue;
    }
    if (!kids.empty()) s += "</ul>";
    s += "</li>\n";
    stack.pop_back();
  }
  return s;
}

}  // namespace

std::string render_html(const Analyzed& x, const HtmlOptions& o) {
  const MergedTree& t = x.tree();
  std::string graph, graph_note;
  if (o.graphviz) {
    std::string why;
    if (auto svg = dot_to_svg(export_dot(x), &why)) {
      graph = "<div class=\"graph\" id=\"region-graph\">" + *svg + "</div>\n";
      graph_note = "Rendered by Graphviz <code>dot</code>; box colour = dominant overhead class, "
                   "edge label = visits.";
    } else {
      graph_note = esc(why) + ": the region graph is shown as a list.";
    }
  } else {
    graph_note = "Graphviz disabled: the region graph is shown as a list.";
  }
  if (graph.empty()) {
    graph = "<ul class=\"tree\" id=\"region-graph\">\n";
    for (uint32_t n : t.preorder())
      if (t.node(n).parent == format::kNoIndex) graph += tree_list(t, x.a, n);
    graph += "</ul>\n";
  }
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<meta name=\"generator\" content=\"scalea\">\n<title>scalea: " +
                  esc(x.e.path) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  s += "<h1>scalea report: " + esc(x.e.path) + "</h1>\n";
  s += "<section><h2>Run</h2>\n" + facts(x) + "</section>\n";
  s += "<section><h2>Findings</h2>\n" +
       findings_html(find_findings(t, x.a, o.findings, html_finding_context(x))) + "</section>\n";
  s += "<section><h2>Overheads per region</h2>\n<p class=\"note\">T_p: wall time of the region "
       "(longest PE); T_o = T_p &minus; T_s/p, split into the six classes (seconds of wall time; "
       "they sum to T_o). Click &#9662; to fold a subtree.</p>\n" +
       table_html(x) + "</section>\n";
  s += "<section><h2>Overhead classes per region</h2>\n" + plot_svg(x) +
       "<p class=\"note\">Stacked positive class values of the 30 longest regions; negative "
       "values (superlinear effects) are left out of the bars.</p></section>\n";
  s += "<section><h2>Region graph</h2>\n<p class=\"note\">" + graph_note + "</p>\n" + graph +
       "</section>\n";
  s += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return s;
}

}  // namespace scalea::cli
