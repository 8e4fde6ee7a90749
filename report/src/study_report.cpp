// scalea report STUDYDIR: per region and for the program, time, speedup, efficiency and the six
// overhead classes per configuration (the paper's Table 2), plus gnuplot plots (docs/study.md).
// The data: study_data.cpp; the text, CSV and JSON: study_text.cpp; the plots: study_plots.cpp.
#include <CLI/CLI.hpp>

#include "study_report.hpp"

#include <cstdio>
#include <string>

#include "commands.hpp"
#include "export_formats.hpp"
#include "findings.hpp"
#include "html.hpp"
#include "study_data.hpp"

namespace scalea::cli {
namespace {

using studyrep::g_opts;
CLI::App* g_report = nullptr;

std::string option_string(const char* name, const std::string& fallback) {
  CLI::Option* opt = g_report ? g_report->get_option_no_throw(name) : nullptr;
  if (!opt || opt->count() == 0) return fallback;
  return opt->as<std::string>();
}

}  // namespace

void add_study_report_options(CLI::App& app) {
  CLI::App* rep = nullptr;
  try {
    rep = app.get_subcommand("report");
  } catch (const CLI::OptionNotFound&) {
    return;
  }
  g_report = rep;
  if (!rep->get_option_no_throw("--plots"))
    rep->add_option("--plots", g_opts->plots,
                    "Study: draw speedup and stacked overhead plots (SVG, PNG) with gnuplot into "
                    "this directory");
  if (!rep->get_option_no_throw("--region"))
    rep->add_option("--region", g_opts->region,
                    "Study: only regions whose name, label, source location or path contains this");
  if (!rep->get_option_no_throw("--top"))
    rep->add_option("--top", g_opts->top,
                    "Study: detail the N regions with the largest overhead (default 5)")
        ->check(CLI::NonNegativeNumber);
  rep->footer(
      rep->get_footer() +
      "\n\nScaling studies (scalea study):\n"
      "  scalea report md.study                   speedup and overhead classes per region vs p\n"
      "  scalea report md.study --top 3           the program and the 3 regions with most "
      "overhead\n"
      "  scalea report md.study --region loop     regions whose name or location contains 'loop'\n"
      "  scalea report md.study --format csv      also: json, markdown (docs/study.md)\n"
      "  scalea report md.study --plots plots/    gnuplot SVG and PNG plots");
}

void study_report(const std::string& dir, overheads::Share* share) {
  for (const char* name : {"--reference", "-r"}) {
    CLI::Option* o = g_report ? g_report->get_option_no_throw(name) : nullptr;
    if (o && o->count() > 0)
      throw UserError(
          "--reference does not apply to a study: its reference run (1 thread, 1 rank) is part of "
          "it");
  }
  std::string view = option_string("--view", "overheads");
  if (view != "overheads")
    throw UserError("--view " + view + " is for one experiment: use scalea report " + dir +
                    "/runs/<run id> --view " + view);
  std::string format = option_string("--format", "text");
  // --plots, --region, --top may be report's own options (added before add_study ran).
  g_opts->plots = option_string("--plots", g_opts->plots);
  g_opts->region = option_string("--region", g_opts->region);
  std::string top = option_string("--top", "");
  if (!top.empty()) {
    try {
      g_opts->top = std::stoi(top);
    } catch (const std::exception&) {
      throw UserError("--top needs a number, not '" + top + "'");
    }
  }
  if (share && !g_opts->plots.empty())
    throw UserError("--plots does not run as an MPI program yet: run it without mpirun");
  // The other processes make the same report, so that they take part in the same classifications
  // in the same order (the findings classify the largest configuration again), and discard it.
  if (share && share->rank() != 0 && !std::freopen("/dev/null", "w", stdout))
    throw UserError("cannot discard the output of process " + std::to_string(share->rank()));
  studyrep::Data d = studyrep::gather(dir, share);
  if (!g_opts->html.empty()) {
    write_output(g_opts->html, render_study_html(d, {findings_limit(), true, g_opts->html_source}));
    std::fprintf(stderr, "scalea report: wrote %s\n", g_opts->html.c_str());
  }
  if (!g_opts->plots.empty()) studyrep::make_plots(d, g_opts->plots);
  if (format == "json") studyrep::print_json(d);
  else if (format == "csv") studyrep::print_csv(d);
  else if (format == "markdown") studyrep::print_text(d, true);
  else studyrep::print_text(d, false);
}

}  // namespace scalea::cli
