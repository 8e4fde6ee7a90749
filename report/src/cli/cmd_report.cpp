// scalea report: the per-region tables of one experiment (the overhead classification, the
// measured times or the MPI calls), of a scaling study, or of a run over time; every option of the
// command is declared here and passed down in one struct.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>

#include "analysis/analyze.hpp"
#include "analysis/meta.hpp"
#include "analysis/share.hpp"
#include "calibrate/calibrate.hpp"
#include "commands.hpp"
#include "formats/report_text.hpp"
#include "html/html.hpp"
#include "online/over_time.hpp"
#include "output/write.hpp"
#include "study/study_report.hpp"

namespace scalea::cli {
namespace {

struct ReportOptions {
  std::string dir, reference;
  bool force = false;
  std::vector<std::string> decomposition;  // --decomposition
  std::string format = "text";
  int p = 0;
  std::string machine;  // --machine FILE (default: the default machine file when present)
  ReportView view;      // what the report of one experiment shows
  std::string html;     // --html FILE
  bool no_source = false;
  std::string plots, region;  // a study's, or over time
  int top = -1;
  bool over_time = false;
  std::string interval;
};

// The command line's checks that need more than one option.
void check_options(const ReportOptions& o, overheads::Share* share) {
  if (share && o.over_time)
    throw UserError("--over-time does not run as an MPI program yet: run it without mpirun");
  if (!is_study(o.dir)) return;
  if (!o.reference.empty())
    throw UserError(
        "--reference does not apply to a study: its reference run (1 thread, 1 rank) is part of "
        "it");
  if (o.view.view != "overheads")
    throw UserError("--view " + o.view.view + " is for one experiment: use scalea report " + o.dir +
                    "/runs/<run id> --view " + o.view.view);
}

// The HTML page of the experiment, from the analysis the report prints.
void write_html(const ReportOptions& o, const Analyzed& x) {
  write_output(o.html, render_html(x, {o.view.findings, true, !o.no_source}));
  std::fprintf(stderr, "scalea report: wrote %s\n", o.html.c_str());
}

void report_experiment(ReportOptions& o, overheads::Share* share) {
  AnalysisOptions ao;
  ao.reference = o.reference;
  ao.force = o.force;
  ao.decomposition = decomposition_args(o.decomposition);
  ao.p = o.p;
  ao.share = share;
  if (!o.html.empty()) ao.pe_own_cells = kExactPeCells;  // the system pane's classes per PE
  // Read one rank file at a time (docs/drg.md, "Streaming").
  std::unique_ptr<Analyzed> x = open_experiment(o.dir, ao);
  o.view.throttled = throttled_nodes(x->experiment(), x->tree());
  std::optional<overheads::MachineModel> machine = find_machine(o.machine, o.view.machine_used);
  if (machine) ao.machine = &*machine;
  if (o.view.compensate && !machine)
    throw UserError(
        "--compensate needs a machine file: run `scalea calibrate` or give --machine FILE");
  classify(*x, ao);
  if (share && share->rank() != 0) return;  // rank 0 prints
  if (!o.html.empty()) write_html(o, *x);
  find_report_format(o.format)->print(*x, o.view);
}

void report(ReportOptions& o, overheads::Share* share) {
  check_options(o, share);
  if (is_study(o.dir)) {
    StudyReportOptions so;
    so.format = o.format;
    so.view = {o.region, o.top, o.view.findings};
    so.plots = o.plots;
    so.html = o.html;
    so.html_source = !o.no_source;
    study_report(o.dir, so, share);
    return;
  }
  if (o.over_time) {  // docs/online.md
    if (!o.html.empty()) {
      AnalysisOptions ao;
      ao.reference = o.reference;
      ao.force = o.force;
      ao.decomposition = decomposition_args(o.decomposition);
      ao.p = o.p;
      ao.pe_own_cells = kExactPeCells;
      write_html(o, *analyze(o.dir, ao));
    }
    over_time_report(o.dir, {o.format, o.interval, o.top, o.plots, o.reference, o.force,
                             decomposition_args(o.decomposition), o.p});
    return;
  }
  report_experiment(o, share);
}

}  // namespace

// Long: every option of the command, one declaration each, in the order --help lists them.
void add_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd =
      app.add_subcommand("report", "Show the per-region overhead table of an experiment");
  cmd->footer(
      "Examples:\n"
      "  scalea report md.p4                      overhead classes per region (T_s estimated)\n"
      "  scalea report md.p4 -r md.p1             against a reference run with 1 thread\n"
      "  scalea report md.p4 --view times         visits, times, waits, fork/join per region\n"
      "  scalea report halo.p4 --view mpi         MPI call sites: bytes, waiting, transfer\n"
      "  scalea report md.p4 --view functions     where the CPU time went: sampled functions, "
      "lines\n"
      "  scalea report md.p4 --min-time 0.01      hide regions shorter than 10 ms\n"
      "  scalea report md.p4 --format json        machine-readable (docs/json-schema.md)\n\n"
      "T_p is a region's wall time (its longest thread), T_o = T_p - T_s/p its total overhead,\n"
      "split into data movement, synchronization, control of parallelism, additional\n"
      "computation, loss of parallelism and unidentified (docs/overhead-model.md)."
      "\n\nScaling studies (scalea study):\n"
      "  scalea report md.study                   speedup and overhead classes per region vs p\n"
      "  scalea report md.study --top 3           the program and the 3 regions with most "
      "overhead\n"
      "  scalea report md.study --region loop     regions whose name or location contains 'loop'\n"
      "  scalea report md.study --format csv      also: json, markdown (docs/study.md)\n"
      "  scalea report md.study --plots plots/    gnuplot SVG and PNG plots"
      "\n\nOver time (runs with SCALEA_SNAPSHOT=1s):\n"
      "  scalea report md.exp --over-time            classes per second of the run\n"
      "  scalea report md.exp --over-time --interval 5s --top 3\n"
      "  scalea report md.exp --over-time --format json   also: csv\n"
      "  scalea report md.exp --over-time --plots plots/  gnuplot SVG and PNG");
  cmd->add_option("experiment", o->dir, "Experiment directory")->required();
  cmd->add_option("-r,--reference", o->reference, "Reference experiment (same program, p = 1)");
  cmd->add_flag("--force", o->force,
                "Use the reference even when its program, arguments or p differ (warned)");
  add_decomposition_option(cmd, o->decomposition);
  std::vector<std::string> formats;
  for (const ReportFormat& f : report_formats()) formats.emplace_back(f.name);
  cmd->add_option("-f,--format", o->format, "Output format")
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  cmd->add_option("--view", o->view.view,
                  "Text table: overhead classes, measured times, the MPI calls (bytes, waiting "
                  "and transfer), the file I/O calls (bytes, time, MB/s), or the sampled "
                  "functions and lines (flat, and per region)")
      ->check(CLI::IsMember({"overheads", "times", "mpi", "io", "functions"}))
      ->capture_default_str();
  cmd->add_option("--min-time", o->view.min_time, "Hide regions whose wall time is below this (s)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--depth", o->view.max_depth, "Show the call tree down to this depth")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-p,--pes", o->p, "Processing elements of the run (default: its thread count)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--machine", o->machine,
                  "Machine file of `scalea calibrate` (default: $SCALEA_MACHINE or "
                  "~/.config/scalea/machine.json when present)");
  cmd->add_flag("--unfold", o->view.unfold,
                "Show every row of recursive regions (by default a region inside itself is shown "
                "once, at its outermost instance)");
  cmd->add_flag("--compensate", o->view.compensate,
                "Show times with the tool's own cost removed (needs a machine file)");
  cmd->add_option("--findings", o->view.findings,
                  "Number of ranked findings after the table (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--no-source", o->no_source,
                "--html: leave the source snippets out (by default the lines around each "
                "region are embedded from the source files readable now)");
  cmd->add_option("--html", o->html,
                  "Also write the self-contained HTML report (experiment or study) to this file");
  cmd->add_option("--plots", o->plots,
                  "Study: draw speedup and stacked overhead plots (SVG, PNG) with gnuplot into "
                  "this directory");
  cmd->add_option("--region", o->region,
                  "Study: only regions whose name, label, source location or path contains this");
  cmd->add_option("--top", o->top,
                  "Study: detail the N regions with the largest overhead (default 5)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--over-time", o->over_time,
                "The overhead classes per window of time, from the snapshots the run "
                "published (SCALEA_SNAPSHOT; docs/online.md)");
  cmd->add_option("--interval", o->interval,
                  "--over-time: the windows' length (e.g. 5s, 500ms; default: the snapshots' "
                  "interval)");
  cmd->callback([o] {
    if (!o->html.empty()) refuse_under_launcher("--html");  // every process would write the file
    // Under mpirun, the processes classify the run together (docs/drg.md, "The analysis as an
    // MPI program") and rank 0 prints.
    std::unique_ptr<overheads::Share> share = analysis_share();
    run_shared(share.get(), "report", [&] { report(*o, share.get()); });
  });
}

}  // namespace scalea::cli
