// scalea export: one experiment (or several, for Extra-P) in a format another tool reads; the
// HTML report; and the extra options of `scalea report` that use them (--html, --findings).
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "export_formats.hpp"
#include "findings.hpp"
#include "html.hpp"
#include "study_report.hpp"

namespace scalea::cli {
namespace {

struct ExportOptions {
  std::vector<std::string> dirs;
  std::string format, reference, output;
  int p = 0;
  size_t findings = 5;
  bool no_graphviz = false;
};

void run_export(const ExportOptions& o) {
  if (o.format != "extrap" && o.dirs.size() != 1)
    throw UserError(fmt::format("--format {} takes one experiment (got {}); only extrap takes "
                                "several", o.format, o.dirs.size()));
  for (const std::string& d : o.dirs)
    if (is_study(d))
      throw UserError(d + " is a scaling study; export one of its runs (a subdirectory)");
  if (o.format == "extrap") {
    std::vector<std::unique_ptr<Analyzed>> runs;
    std::vector<const Analyzed*> ptrs;
    for (const std::string& d : o.dirs) {
      runs.push_back(analyze(d, o.reference, o.p));
      ptrs.push_back(runs.back().get());
    }
    write_output(o.output, [&](const TextSink& put) { export_extrap(put, ptrs); });
    return;
  }
  std::unique_ptr<Analyzed> x = analyze(o.dirs[0], o.reference, o.p);
  if (o.format == "json") {
    write_output(o.output, [&](const TextSink& put) {
      export_json(put, *x, o.findings);
      put("\n");
    });
    if (!o.output.empty() && o.output != "-")
      std::fprintf(stderr, "scalea export: wrote %s (%s)\n", o.output.c_str(), o.format.c_str());
    return;
  }
  std::string text;
  if (o.format == "csv") text = export_csv(*x);
  else if (o.format == "dot") text = export_dot(*x);
  else if (o.format == "hatchet") text = export_hatchet(*x);
  else if (o.format == "html") text = render_html(*x, {o.findings, !o.no_graphviz});
  write_output(o.output, text);
  if (!o.output.empty() && o.output != "-")
    std::fprintf(stderr, "scalea export: wrote %s (%s)\n", o.output.c_str(), o.format.c_str());
}

}  // namespace

void add_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write an experiment in a format other tools read");
  cmd->footer(
      "Formats:\n"
      "  csv      one row per region and thread: metrics and the six overhead classes\n"
      "  json     the report document (docs/json-schema.md) with the ranked findings\n"
      "  dot      Graphviz call tree, coloured by dominant overhead class (dot -Tsvg)\n"
      "  hatchet  Hatchet literal JSON: hatchet.GraphFrame.from_literal(json.load(f))\n"
      "  extrap   Extra-P JSON Lines, one line per region, metric and run: give runs at\n"
      "           several p to fit scaling models (extrap --json-lines FILE)\n"
      "  html     one self-contained HTML report (same as scalea report --html)\n\n"
      "Examples:\n"
      "  scalea export --format csv -o md.csv md.p4\n"
      "  scalea export --format dot md.p4 | dot -Tsvg -o md.svg\n"
      "  scalea export --format hatchet -r md.p1 -o md.hatchet.json md.p4\n"
      "  scalea export --format extrap -o md.jsonl md.p1 md.p2 md.p4 md.p8\n"
      "  scalea export --format html -r md.p1 -o md.html md.p4\n\n"
      "Details and how each format was checked: docs/exports.md.");
  cmd->add_option("experiments", o->dirs, "Experiment directory (several for extrap)")
      ->required();
  cmd->add_option("-f,--format", o->format, "Output format")
      ->required()
      ->check(CLI::IsMember({"csv", "json", "dot", "hatchet", "extrap", "html"}));
  cmd->add_option("-r,--reference", o->reference, "Reference experiment (same program, p = 1)");
  cmd->add_flag("--force", reference_forced(),
                "Use the reference even when its program, arguments or p differ (warned)");
  cmd->add_option("-o,--output", o->output, "Output file (default: standard output)");
  cmd->add_option("-p,--pes", o->p, "Processing elements of the run (default: its thread count)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--findings", o->findings, "Findings in json and html")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--no-graphviz", o->no_graphviz, "html: show the region graph as a list");
  cmd->callback([o] { run_export(*o); });
}

void add_report_extras(CLI::App& app) {
  CLI::App* report = app.get_subcommand("report");
  report->add_option("--findings", findings_limit(),
                     "Number of ranked findings after the table (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  // Runs while the options are processed, after the experiment, -r and -p options (declared
  // before it); the report itself is printed afterwards as usual.
  report->add_option_function<std::string>(
      "--html",
      [report](const std::string& file) {
        std::string dir = report->get_option("experiment")->as<std::string>();
        std::string ref;
        if (report->get_option("--reference")->count()) ref = report->get_option("--reference")->as<std::string>();
        int p = report->get_option("--pes")->count() ? report->get_option("--pes")->as<int>() : 0;
        if (is_study(dir))
          throw UserError("--html takes one experiment; " + dir +
                          " is a scaling study (give one of its runs)");
        std::unique_ptr<Analyzed> x = analyze(dir, ref, p);
        write_output(file, render_html(*x, {findings_limit(), true}));
        std::fprintf(stderr, "scalea report: wrote %s\n", file.c_str());
      },
      "Also write the self-contained HTML report to this file");
}

}  // namespace scalea::cli
