// scalea export: one experiment (or several, for Extra-P) in a format another tool reads; the
// HTML report; and the extra options of `scalea report` that use them (--html, --findings).
#include <fmt/format.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "export_formats.hpp"
#include "findings.hpp"
#include "html.hpp"
#include "parallel.hpp"
#include "study_data.hpp"
#include "study_report.hpp"

namespace scalea::cli {
namespace {

struct ExportOptions {
  std::vector<std::string> dirs;
  std::string format, reference, output;
  int p = 0;
  size_t findings = 5;
  bool no_graphviz = false, no_source = false;
};

// The HTML report of a scaling study (the one format that takes a study).
void export_study_html(const ExportOptions& o) {
  findings_limit() = o.findings;  // the study's findings are chosen with it
  studyrep::Data d = studyrep::gather(o.dirs[0]);
  write_output(o.output, render_study_html(d, {o.findings, !o.no_graphviz, !o.no_source}));
  if (!o.output.empty() && o.output != "-")
    std::fprintf(stderr, "scalea export: wrote %s (html)\n", o.output.c_str());
}

// Under mpirun (`share`), the processes classify each run together and rank 0 writes.
void run_export(const ExportOptions& o, overheads::Share* share) {
  const ExportFormat* f = find_export_format(o.format);
  if (!f) throw UserError("unknown format " + o.format);  // CLI11 checked it already
  if (!f->many_runs && o.dirs.size() != 1) {
    std::string several;
    for (const ExportFormat& g : export_formats())
      if (g.many_runs) several += (several.empty() ? "" : ", ") + std::string(g.name);
    throw UserError(
        fmt::format("--format {} takes one experiment (got {}); only {} takes "
                    "several",
                    o.format, o.dirs.size(), several));
  }
  if (o.format == "html" && is_study(o.dirs[0])) {
    if (share) refuse_under_launcher("the page of a study");
    return export_study_html(o);
  }
  for (const std::string& d : o.dirs)
    if (is_study(d))
      throw UserError(d + " is a scaling study; export one of its runs (a subdirectory)");
  std::vector<std::unique_ptr<Analyzed>> runs;
  std::vector<const Analyzed*> ptrs;
  for (const std::string& d : o.dirs) {
    runs.push_back(analyze(d, o.reference, o.p, nullptr, nullptr, share));
    ptrs.push_back(runs.back().get());
  }
  if (share && share->rank() != 0) return;  // rank 0 writes
  ExportSettings settings{o.findings, !o.no_graphviz, !o.no_source};
  write_output(o.output, [&](const TextSink& put) { f->write(put, ptrs, settings); });
  if (f->says_written && !o.output.empty() && o.output != "-")
    std::fprintf(stderr, "scalea export: wrote %s (%s)\n", o.output.c_str(), o.format.c_str());
}

}  // namespace

void add_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write an experiment in a format other tools read");
  std::string formats = "Formats:\n";
  std::vector<std::string> names;
  for (const ExportFormat& f : export_formats()) {
    formats += fmt::format("  {:<8} {}\n", f.name, f.help);
    names.emplace_back(f.name);
  }
  cmd->footer(formats +
              "\nExamples:\n"
              "  scalea export --format csv -o md.csv md.p4\n"
              "  scalea export --format dot md.p4 | dot -Tsvg -o md.svg\n"
              "  scalea export --format hatchet -r md.p1 -o md.hatchet.json md.p4\n"
              "  scalea export --format extrap -o md.jsonl md.p1 md.p2 md.p4 md.p8\n"
              "  scalea export --format html -r md.p1 -o md.html md.p4\n"
              "  scalea export --format html -o md-study.html md.study\n\n"
              "Details and how each format was checked: docs/exports.md.");
  cmd->add_option("experiments", o->dirs, "Experiment directory (several for extrap)")->required();
  cmd->add_option("-f,--format", o->format, "Output format")
      ->required()
      ->check(CLI::IsMember(names));
  cmd->add_option("-r,--reference", o->reference, "Reference experiment (same program, p = 1)");
  cmd->add_flag("--force", reference_forced(),
                "Use the reference even when its program, arguments or p differ (warned)");
  cmd->add_option("-o,--output", o->output, "Output file (default: standard output)");
  cmd->add_option("-p,--pes", o->p, "Processing elements of the run (default: its thread count)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--findings", o->findings, "Findings in json and html")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--no-graphviz", o->no_graphviz, "html: leave the region graph out");
  cmd->add_flag("--no-source", o->no_source,
                "html: leave the source snippets out (by default the lines around each region are "
                "embedded from the source files readable now)");
  cmd->add_flag_callback(
      "--list-formats",
      [] {
        for (const ExportFormat& f : export_formats())
          fmt::print("{}\t{}\n", f.name, f.many_runs ? "several experiments" : "one experiment");
        std::exit(0);
      },
      "List the formats (name, and how many experiments each takes) and exit");
  cmd->callback([o] {
    std::unique_ptr<overheads::Share> share = analysis_share();
    run_shared(share.get(), "export", [&] { run_export(*o, share.get()); });
  });
}

void add_report_extras(CLI::App& app) {
  CLI::App* report = app.get_subcommand("report");
  report
      ->add_option("--findings", findings_limit(),
                   "Number of ranked findings after the table (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  report->add_flag("--no-source",
                   "--html: leave the source snippets out (by default the lines around each "
                   "region are embedded from the source files readable now)");
  // Runs while the options are processed, after the experiment, -r, -p and --no-source options
  // (declared before it); the report itself is printed afterwards as usual. A study's page is
  // written by study_report(), from the data its text report is made of.
  report->add_option_function<std::string>(
      "--html",
      [report](const std::string& file) {
        refuse_under_launcher("--html");  // every process would write the file
        std::string dir = report->get_option("experiment")->as<std::string>();
        bool no_source = report->get_option("--no-source")->count() > 0;
        if (is_study(dir)) {
          studyrep::g_opts->html = file;
          studyrep::g_opts->html_source = !no_source;
          return;
        }
        std::string ref;
        if (report->get_option("--reference")->count())
          ref = report->get_option("--reference")->as<std::string>();
        int p = report->get_option("--pes")->count() ? report->get_option("--pes")->as<int>() : 0;
        std::unique_ptr<Analyzed> x = analyze(dir, ref, p);
        write_output(file, render_html(*x, {findings_limit(), true, !no_source}));
        std::fprintf(stderr, "scalea report: wrote %s\n", file.c_str());
      },
      "Also write the self-contained HTML report (experiment or study) to this file");
}

}  // namespace scalea::cli
