// scalea export: one experiment (or several, for Extra-P) in a format another tool reads, or the
// HTML report.
#include <fmt/format.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "analysis/analyze.hpp"
#include "analysis/share.hpp"
#include "commands.hpp"
#include "formats/exports.hpp"
#include "html/html.hpp"
#include "output/docs.hpp"
#include "output/write.hpp"
#include "study/study_report.hpp"

namespace scalea::cli {
namespace {

struct ExportOptions {
  std::vector<std::string> dirs;
  std::string format, reference, output;
  bool force = false;
  std::vector<std::string> decomposition;  // --decomposition
  int p = 0;
  size_t findings = 5;
  bool no_graphviz = false, no_source = false;
};

// The formats of `scalea export`, one row each (formats/exports.hpp): the files' and the page's.
const std::vector<ExportFormat>& export_formats() {
  static const std::vector<ExportFormat> all = [] {
    std::vector<ExportFormat> v = file_formats();
    v.push_back(html_export_format());
    return v;
  }();
  return all;
}

const ExportFormat* find_export_format(std::string_view name) {
  for (const ExportFormat& f : export_formats())
    if (f.name == name) return &f;
  return nullptr;
}

// The HTML report of a scaling study (the one format that takes a study).
void export_study_html(const ExportOptions& o) {
  studyrep::Data d = studyrep::gather(o.dirs[0], {"", -1, o.findings});
  write_output(o.output, render_study_html(d, {o.findings, !o.no_graphviz, !o.no_source}));
  if (!o.output.empty() && o.output != "-")
    std::fprintf(stderr, "scalea export: wrote %s (html)\n", o.output.c_str());
}

// One experiment to export: its directory, PEs (0: its thread count) and reference ("": none).
struct ExportRun {
  std::string dir;
  int p = 0;
  std::string reference;
  std::string study_run;  // the run's id when it comes from a study ("" otherwise)
};

// The completed runs of the study in `dir`, in plan order (the reference configuration first,
// then by p; repetitions are Extra-P's repetitions), each at its configuration's p against the
// study's reference (the median 1 x 1 run, as `scalea report STUDY` takes) unless -r names one.
std::vector<ExportRun> study_runs(const std::string& dir, const ExportOptions& o,
                                  overheads::Share* share) {
  if (o.dirs.size() != 1)
    throw UserError(dir + " is a scaling study: give it alone (it stands for all its runs)");
  if (o.p != 0)
    throw UserError("-p does not apply to a study: each run's p is its configuration's");
  study::Study s = study::load_study(dir);
  std::vector<std::string> warnings;
  studyrep::ReferenceRun chosen = studyrep::reference_run(dir, s, warnings, nullptr, share);
  for (const std::string& w : warnings) std::fprintf(stderr, "scalea export: %s\n", w.c_str());
  std::string reference = o.reference.empty() ? dir + "/" + chosen.run->experiment() : o.reference;
  std::vector<ExportRun> runs;
  size_t not_completed = 0;
  for (const study::Config& c : s.configs())
    for (const study::Run& r : s.runs) {
      if (!(r.config == c)) continue;
      if (r.status == study::Status::Ok)
        runs.push_back({dir + "/" + r.experiment(), c.p(), reference, r.id()});
      else ++not_completed;
    }
  if (not_completed)
    std::fprintf(stderr, "scalea export: %zu run(s) of %s did not complete and are left out\n",
                 not_completed, dir.c_str());
  return runs;
}

// The experiments `o` names: a study (extrap) stands for its completed runs.
std::vector<ExportRun> runs_to_export(const ExportOptions& o, const ExportFormat& f,
                                      overheads::Share* share) {
  std::vector<ExportRun> runs;
  for (const std::string& d : o.dirs) {
    if (!is_study(d)) {
      runs.push_back({d, o.p, o.reference, ""});
      continue;
    }
    if (!f.many_runs)
      throw UserError(d +
                      " is a scaling study; export one of its runs (a subdirectory), or the "
                      "study with --format extrap or html");
    return study_runs(d, o, share);
  }
  return runs;
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
  std::vector<std::unique_ptr<Analyzed>> runs;
  std::vector<const Analyzed*> ptrs;
  for (const ExportRun& r : runs_to_export(o, *f, share)) {
    AnalysisOptions ao;
    ao.reference = r.reference;
    ao.force = o.force;
    ao.decomposition = decomposition_args(o.decomposition);
    ao.p = r.p;
    ao.share = share;
    if (o.format == "html") ao.pe_own_cells = kExactPeCells;  // the system pane's classes per PE
    try {
      runs.push_back(analyze(r.dir, ao));
    } catch (const drg::LoadError& e) {
      if (r.study_run.empty()) throw;
      // As `scalea report STUDY` does: a run that does not load is left out, said once.
      std::fprintf(stderr, "scalea export: run %s left out: %s\n", r.study_run.c_str(),
                   with_docs_dir(e.what()).c_str());
      continue;
    }
    ptrs.push_back(runs.back().get());
  }
  if (ptrs.empty()) throw UserError("nothing to export: no run of " + o.dirs[0] + " loads");
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
              "  scalea export --format extrap -o md.jsonl md.study   # extrap --json md.jsonl\n"
              "  scalea export --format extrap -o md.jsonl md.p1 md.p2 md.p4 md.p8\n"
              "  scalea export --format html -r md.p1 -o md.html md.p4\n"
              "  scalea export --format html -o md-study.html md.study\n\n"
              "Details and how each format was checked: docs/exports.md.");
  cmd->add_option("experiments", o->dirs,
                  "Experiment directory (several for extrap), or a study (extrap, html)")
      ->required();
  cmd->add_option("-f,--format", o->format, "Output format")
      ->required()
      ->check(CLI::IsMember(names));
  cmd->add_option("-r,--reference", o->reference, "Reference experiment (same program, p = 1)");
  cmd->add_flag("--force", o->force,
                "Use the reference even when its program, arguments or p differ (warned)");
  add_decomposition_option(cmd, o->decomposition);
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

}  // namespace scalea::cli
