// The report of one experiment: a header and a table per view, or one row per region (csv,
// markdown), or the JSON document.
#include "report_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "analysis/meta.hpp"
#include "findings/findings.hpp"
#include "findings/pattern.hpp"
#include "findings/wait_states.hpp"
#include "findings_out.hpp"
#include "output/text.hpp"
#include "report_json.hpp"
#include "sampled.hpp"
#include "tuning_out.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/format.hpp"

namespace scalea::cli {
namespace {

using drg::MergedTree;
using overheads::Analysis;
using overheads::Class;
using overheads::kClassCount;

struct Columns {
  int visits, time, wait, fork, join;
  explicit Columns(const drg::Experiment& e)
      : visits(e.metric(format::CoreMetric::Visits)),
        time(e.metric(format::CoreMetric::TimeSum)),
        wait(e.metric(format::CoreMetric::Wait)),
        fork(e.metric(format::CoreMetric::Fork)),
        join(e.metric(format::CoreMetric::Join)) {}
};

bool shown(const MergedTree& t, uint32_t n, double t_p, const ReportView& o) {
  if (o.max_depth >= 0 && int(t.node(n).depth) > o.max_depth) return false;
  return n == 0 || t_p >= o.min_time;
}

// Without --min-time, the call-tree tables leave out the file I/O call sites that each hold less
// than this share of the program's wall time: a code's printf and fprintf lines (tens of sites
// of microseconds each) would fill the table. A line under it counts them; --view io lists them.
constexpr double kSmallIoShare = 0.001;
struct SmallIo {
  size_t sites = 0;
  double seconds = 0;
  bool hides(const MergedTree& t, const Analysis& a, uint32_t n, const ReportView& o) {
    if (o.min_time >= 0 || n == 0 || t.region_of(n).kind != drg::RegionKind::Io ||
        !t.node(n).children.empty() || a.regions[n].t_p >= kSmallIoShare * a.regions[0].t_p)
      return false;
    ++sites;
    seconds += a.regions[n].t_p;
    return true;
  }
  void print() const {
    if (sites > 0)
      fmt::print(
          "\n{} file I/O call site(s) of less than {:g}% of the run each are not rows here "
          "({:.4f} s in all): --view io lists them, --min-time 0 shows them\n",
          sites, 100 * kSmallIoShare, seconds);
  }
};

// The region's label indented by its depth, cut to `width` (the indentation is not built past
// the width: it would cost O(depth) per row).
std::string tree_label(const MergedTree& t, uint32_t n, size_t width, const ReportView& o) {
  const drg::Region& reg = t.region_of(n);
  std::string text = reg.label();
  std::string loc = reg.location();
  if (!loc.empty() && reg.kind != drg::RegionKind::Program) text += " @" + loc;
  std::string mark = o.throttled.count(n) ? " [throttled]" : "";
  size_t indent = 2 * size_t(t.node(n).depth);
  if (indent + text.size() + mark.size() <= width) return std::string(indent, ' ') + text + mark;
  size_t keep = width - mark.size() - 3;
  std::string label(std::min(indent, keep), ' ');
  label += text.substr(0, keep - label.size());
  return label + "..." + mark;
}

// Where the data of ranks that did not reach the unification went (the experiment directory
// with a suffix: "DIR.1", "DIR.rank-1"), as " (more data: DIR.1, ...)", or "".
std::string incomplete_hint(const drg::Experiment& e) {
  std::string dir = e.path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::string base = dir.substr(dir.rfind('/') + 1),
              parent = dir.substr(0, dir.size() - base.size());
  if (parent.empty()) parent = ".";
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() > base.size() + 1 && name.compare(0, base.size() + 1, base + ".") == 0 &&
        std::filesystem::exists(entry.path() / format::kMetaFile, ec))
      found.push_back(entry.path().string());
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) return "";
  std::string list;
  for (size_t i = 0; i < found.size() && i < 4; ++i) list += (i ? ", " : "") + found[i];
  if (found.size() > 4) list += fmt::format(" and {} more", found.size() - 4);
  return " (ranks that ended on their own wrote their data beside it: " + list + ")";
}

// Why, as the writer noted it (meta.json "notes": the signal that ended the run, the snapshot
// scalea run kept of a killed one).
std::string incomplete_notes(const drg::Experiment& e) {
  std::string out;
  auto notes = e.meta.find("notes");
  if (notes == e.meta.end() || !notes->is_array()) return out;
  for (const auto& n : *notes)
    if (n.is_string()) out += (out.empty() ? ": " : "; ") + n.get<std::string>();
  return out;
}

// The program's pattern (pattern.hpp): one line per pattern, its first phase's evidence and
// how many phases have it.
void print_patterns(const MergedTree& t) {
  std::vector<Phase> phases = program_phases(t);
  std::vector<Pattern> order;
  for (const Phase& ph : phases)
    if (std::find(order.begin(), order.end(), ph.pattern) == order.end())
      order.push_back(ph.pattern);
  for (Pattern pat : order) {
    const Phase* first = nullptr;
    size_t count = 0;
    for (const Phase& ph : phases)
      if (ph.pattern == pat) first = first ? first : &ph, ++count;
    std::string where = first->node == 0 ? "the ranks" : node_label(t, first->node);
    if (count > 1)
      where += fmt::format(" and {} more parallel region{}", count - 1, count > 2 ? "s" : "");
    fmt::print("pattern     {}: {} ({})\n", pattern_name(pat), where, first->evidence);
  }
}

void print_header(const drg::Experiment& e, const Analysis& a, const drg::Experiment* ref,
                  const ReportView& o, const MergedTree* t = nullptr) {
  const drg::Meta m = drg::read_meta(e.meta);
  fmt::print("experiment  {}\n", e.path);
  fmt::print("command     {}\n", m.command_line());
  fmt::print("run         {} on {}: p = {} ({} rank(s), {} thread(s)), {:.3f} s, clock {}\n",
             m.start_time, m.host, a.p, e.ranks(), e.threads.size(), m.duration_s, m.clock_source);
  if (!m.openmp.runtime.empty())
    fmt::print("openmp      {} ({})\n", m.openmp.runtime, m.openmp.runtime_path);
  if (std::string light = light_mode_note(m); !light.empty()) fmt::print("events      {}\n", light);
  if (ref) fmt::print("reference   {} (p = {})\n", ref->path, ref->threads.size());
  else
    fmt::print(
        "reference   none: T_s is estimated as the useful work, so additional computation is 0\n");
  if (!e.complete())
    fmt::print("WARNING     the experiment is incomplete{}{}\n", incomplete_notes(e),
               incomplete_hint(e));
  if (t)
    if (std::string end = run_end_note(e, *t, open_nodes(e, *t)); !end.empty())
      fmt::print("ENDED       {}\n", end);
  if (std::string odd = anomalies_note(e); !odd.empty()) fmt::print("EVENTS      {}\n", odd);
  for (const std::string& note : cpu_sharing(e)) fmt::print("CPUS        {}\n", note);
  if (t) {
    if (std::string spin = spinning_note(*t); !spin.empty()) fmt::print("CPUS        {}\n", spin);
    print_patterns(*t);
  }
  // The reference's own lost CPU time made its T_s longer: every overhead looks smaller.
  if (ref)
    for (const std::string& note : cpu_sharing(*ref))
      fmt::print(
          "CPUS        in the reference, {}; its T_s is too long and the overheads look "
          "smaller\n",
          note);
  if (m.program_start_estimated) {
    double by = m.program_start_estimated_s;
    fmt::print(
        "start       program start estimated (+{:.3f} s before the tool started, from the "
        "process age in 10 ms ticks): run it with scalea run to measure it\n",
        by);
  }
  for (const std::string& line : tuning_text(e, t)) fmt::print("{}\n", line);
  if (int64_t thr = m.throttled_count; thr > 0)
    fmt::print(
        "throttled   {} call path(s) of tiny hot regions, marked [throttled]: their visits after "
        "the first {} (per thread) are not counted, their time stays in the caller "
        "(SCALEA_THROTTLE=off records all)\n",
        thr, m.throttle_calls);
  if (!a.message_model_doubt.empty())
    fmt::print(
        "MPI         the message model calibrated at MPI_Init is not used: {}; each call "
        "site's shortest call bounds what its calls cost instead (other processes on the CPUs "
        "disturb the calibration)\n",
        a.message_model_doubt);
  if (!o.machine_used.empty())
    fmt::print(
        "machine     {}: NOISE = the tool's own cost inside T_p (events below x calibrated "
        "cost){}\n",
        o.machine_used, a.misses_priced ? "; extra cache misses priced as data movement" : "");
  if (o.compensate)
    fmt::print(
        "COMPENSATED times: T_p* = T_p - NOISE (the tool's own cost removed); T_o and its "
        "classes are as measured\n");
  fmt::print("\n");
}

void print_overheads_text(const MergedTree& t, const Analysis& a, const ReportView& o,
                          const MergedTree* ref_tree) {
  fmt::print("{:<46} {:>9} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "region (call tree)",
             o.compensate ? "T_p* s" : "T_p s", "T_o s", "T_o%", "data", "sync", "control", "addl",
             "loss", "unident");
  if (a.noise_priced) fmt::print(" {:>9}", "NOISE");
  fmt::print("\n");
  Folding fold;
  if (!o.unfold) fold = fold_recursion(t);
  SmallIo small;
  for (uint32_t n : t.preorder()) {
    const auto& r = a.regions[n];
    if (!shown(t, n, r.t_p, o) || (!fold.hidden.empty() && fold.hidden[n])) continue;
    if (small.hides(t, a, n, o)) continue;
    // Compensated: the tool's own cost leaves T_p; T_o and its classes stay as measured (the
    // noise sits in them, mostly in useful work and unidentified).
    double tp = o.compensate ? r.t_p - r.noise : r.t_p;
    // T_o% of a region too short to time says nothing.
    std::string pct = r.t_p >= 1e-6 ? fmt::format("{:>5.1f}%", 100 * r.t_o / r.t_p) : "     -";
    // Values that round to zero print as 0.0000, not -0.0000.
    auto z = [](double v) { return std::fabs(v) < 5e-5 ? 0.0 : v; };
    fmt::print("{:<46} {:>9.4f} {:>9.4f} {}", tree_label(t, n, 46, o), tp, z(r.t_o), pct);
    for (int c = 0; c < kClassCount; ++c) fmt::print(" {:>9.4f}", z(r.classes[size_t(c)]));
    if (a.noise_priced) fmt::print(" {:>9.4f}", r.noise);
    fmt::print("\n");
  }
  small.print();
  if (fold.rows > 0)
    fmt::print(
        "\nrecursion folded: {} row(s) of {} recursive instance(s), down to depth {}, are "
        "not shown: a region inside itself (a recursive function, a task created by a task "
        "of the same pragma) is shown once, its outermost row holding the time of all "
        "(--unfold shows every row)\n",
        fold.rows, fold.instances, fold.deepest);
  if (a.recursion_only_in_reference)
    fmt::print(
        "\nthe reference run's recursion went {} level(s) of regions deeper than this run's: the "
        "same work, at the depths this run reached (not listed below)\n",
        a.recursion_only_in_reference);
  if (!a.only_in_reference.empty()) {
    fmt::print("\nregions only in the reference run (T_o = -T_s/p):\n");
    for (const auto& r : a.only_in_reference) {
      auto removed = r.subclasses.find("additional_computation.removed");
      bool work = removed != r.subclasses.end() && removed->second < -1e-9;
      fmt::print("  {}  T_s {:.4f} s: {}\n", r.path, r.t_s,
                 work ? "its work is not in this run (negative additional computation)"
                      : "not reported in this run (the runtime did not report the construct; "
                        "its time is in the enclosing region)");
    }
  }
  const auto& pe = a.program;
  fmt::print(
      "\nprogram efficiencies (POP): load balance {:.3f}, communication efficiency {:.3f}, "
      "parallel efficiency {:.3f}",
      pe.load_balance, pe.communication_efficiency, pe.parallel_efficiency);
  if (pe.computation_scalability)
    fmt::print(", computation scalability {:.3f}, global efficiency {:.3f}",
               *pe.computation_scalability, *pe.global_efficiency);
  fmt::print(
      "\nclasses in seconds of wall time; per region they sum to T_o = T_p - T_s/p "
      "(docs/overhead-model.md)\n");
  FindingContext context;
  context.reference = ref_tree;
  context.hidden = fold.hidden;
  print_report_findings(t, a, o.findings, context);
}

void print_times_text(const drg::Experiment& e, const MergedTree& t, const Analysis& a,
                      const ReportView& o) {
  Columns c(e);
  fmt::print("{:<52} {:>9} {:>4} {:>11} {:>11} {:>11} {:>10} {:>10}\n", "region (call tree)",
             "visits", "thr", "time max s", "time avg s", "wait avg s", "fork ms", "join ms");
  SmallIo small;
  for (uint32_t n : t.preorder()) {
    if (!shown(t, n, a.regions[n].t_p, o) || small.hides(t, a, n, o)) continue;
    // The threads that ran the region: a worker that only holds its path (a user region around
    // the parallel region it ran in) did not run it and has none of its time.
    size_t k = a.regions[n].pes_ran;
    double kk = k ? double(k) : 1.0;
    fmt::print("{:<52} {:>9} {:>4} {:>11.6f} {:>11.6f} {:>11.6f} {:>10.3f} {:>10.3f}\n",
               tree_label(t, n, 52, o), uint64_t(t.sum(n, c.visits)), k, ns_to_s(t.max(n, c.time)),
               ns_to_s(t.sum(n, c.time)) / kk, ns_to_s(t.sum(n, c.wait)) / kk,
               t.sum(n, c.fork) * 1e-6 / kk, t.sum(n, c.join) * 1e-6);
  }
  small.print();
  fmt::print(
      "\ntime max: longest time of any thread in the region (its wall time); avg: mean over "
      "the threads that ran it; join: master only\n");
}

// The rows of one kind the view shows, in the call tree's order.
std::vector<uint32_t> shown_of_kind(const MergedTree& t, const Analysis& a, const ReportView& o,
                                    drg::RegionKind kind) {
  std::vector<uint32_t> rows;
  for (uint32_t n : t.preorder())
    if (t.region_of(n).kind == kind && shown(t, n, a.regions[n].t_p, o)) rows.push_back(n);
  return rows;
}

// The MPI calls: one row per call site (region), with the bytes they moved, the collector's split
// of their time into waiting and transfer (the message model, docs/mpi.md), and the classes the
// classifier gave them.
void print_mpi_text(const drg::Experiment& e, const MergedTree& t, const Analysis& a,
                    const ReportView& o) {
  const int visits = e.metric(format::CoreMetric::Visits),
            sent = e.metric(format::CoreMetric::BytesSent),
            recv = e.metric(format::CoreMetric::BytesRecv),
            wait = e.metric(format::CoreMetric::Wait),
            transfer = e.metric(format::CoreMetric::Transfer),
            time = e.metric(format::CoreMetric::TimeSum);
  const std::vector<uint32_t> rows = shown_of_kind(t, a, o, drg::RegionKind::Mpi);
  if (rows.empty()) {
    fmt::print("no MPI calls were recorded in this experiment\n");
    return;
  }
  fmt::print("{:<40} {:>9} {:>13} {:>13} {:>10} {:>10} {:>10} {:>9} {:>9}  {}\n", "MPI call site",
             "calls", "bytes sent", "bytes recv", "time s", "wait s", "xfer s", "data s", "sync s",
             "waits for");
  for (uint32_t n : rows) {
    const drg::Region& reg = t.region_of(n);
    std::string label = reg.label();
    if (!reg.location().empty()) label += " @" + reg.location();
    if (label.size() > 40) label = label.substr(0, 37) + "...";
    const auto& r = a.regions[n];
    WaitState ws = wait_state(reg);
    fmt::print("{:<40} {:>9} {:>13} {:>13} {:>10.4f} {:>10.4f} {:>10.4f} {:>9.4f} {:>9.4f}  {}\n",
               label, uint64_t(t.sum(n, visits)), uint64_t(t.sum(n, sent)),
               uint64_t(t.sum(n, recv)), ns_to_s(t.sum(n, time)), ns_to_s(t.sum(n, wait)),
               ns_to_s(t.sum(n, transfer)), r.classes[size_t(Class::DataMovement)],
               r.classes[size_t(Class::Synchronization)], ws.name.empty() ? "-" : ws.name);
  }
  if (const auto model = drg::read_meta(e.meta).message_model)
    fmt::print("\nmessage model: latency {:.2f} us, {:.4f} ns/byte ({}){}\n",
               model->latency_ns * 1e-3, model->ns_per_byte, model->source,
               a.message_model_doubt.empty() ? "" : "; not used: " + a.message_model_doubt);
  fmt::print(
      "calls, bytes, time, wait and transfer: summed over ranks and threads (wait + transfer = "
      "time, the collector's split by the message model; management and start-up calls have "
      "neither); data and sync: the classifier's data movement and synchronization of the "
      "row, s of wall time; waits for: what a call that waits waits for (Scalasca's wait "
      "states: a late sender, a late receiver, the last rank at NxN or at a barrier, the root of "
      "a broadcast, the others at a reduction's root) (docs/mpi.md)\n");
}

// The file I/O calls (collect/io): one row per call site and call path, with the calls, the
// bytes they read and wrote, their time and rate, and the data movement the classifier gave them.
void print_io_text(const drg::Experiment& e, const MergedTree& t, const Analysis& a,
                   const ReportView& o) {
  const int visits = e.metric(format::CoreMetric::Visits),
            written = e.metric(format::CoreMetric::BytesSent),
            read = e.metric(format::CoreMetric::BytesRecv),
            time = e.metric(format::CoreMetric::TimeSum);
  const std::vector<uint32_t> rows = shown_of_kind(t, a, o, drg::RegionKind::Io);
  if (rows.empty()) {
    fmt::print("no file I/O calls were recorded in this experiment\n");
    return;
  }
  fmt::print("{:<40} {:<24} {:>9} {:>13} {:>13} {:>10} {:>9} {:>9}\n", "I/O call site", "in",
             "calls", "bytes read", "bytes written", "time s", "MB/s", "data s");
  for (uint32_t n : rows) {
    const drg::Region& reg = t.region_of(n);
    std::string label = reg.label();
    if (!reg.location().empty()) label += " @" + reg.location();
    if (label.size() > 40) label = label.substr(0, 37) + "...";
    std::string in = t.node(n).parent == format::kNoIndex ? "" : node_label(t, t.node(n).parent);
    if (in.size() > 24) in = in.substr(0, 21) + "...";
    double bytes = t.sum(n, read) + t.sum(n, written), s = ns_to_s(t.sum(n, time));
    std::string rate = bytes > 0 && s > 0 ? fmt::format("{:.1f}", bytes / s * 1e-6) : "-";
    fmt::print("{:<40} {:<24} {:>9} {:>13} {:>13} {:>10.4f} {:>9} {:>9.4f}\n", label, in,
               uint64_t(t.sum(n, visits)), uint64_t(t.sum(n, read)), uint64_t(t.sum(n, written)), s,
               rate, a.regions[n].classes[size_t(Class::DataMovement)]);
  }
  fmt::print(
      "\nin: the region the calls were made in; calls, bytes and time: summed over ranks and "
      "threads; MB/s: bytes read and written per second of the calls' time (10^6 bytes); data: "
      "the classifier's data movement of the row, s of wall time (docs/user-guide.md, \"File "
      "I/O\")\n");
}

// One row per region: for spreadsheets (csv) and documents (markdown).
void print_rows(const MergedTree& t, const Analysis& a, const ReportView& o, bool csv) {
  auto quote = [](const std::string& s) { return csv_field(s, true); };
  std::vector<std::string> head = {"path", "kind", "source", "T_p", "T_s", "T_o"};
  for (auto k : overheads::kClassKeys) head.emplace_back(k);
  if (csv) {
    for (size_t i = 0; i < head.size(); ++i) fmt::print("{}{}", i ? "," : "", head[i]);
    fmt::print("\n");
  } else {
    fmt::print(
        "| region | kind | source | T_p s | T_s s | T_o s | data | sync | control | addl | loss | "
        "unident |\n");
    fmt::print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  for (uint32_t n : t.preorder()) {
    const auto& r = a.regions[n];
    if (!shown(t, n, r.t_p, o)) continue;
    const drg::Region& reg = t.region_of(n);
    std::string kind(format::region_kind_name(reg.kind));
    if (csv) {
      fmt::print("{},{},{},{},{},{}", quote(region_path(t, r)), kind, quote(reg.location()),
                 fixed(r.t_p, 9), fixed(r.t_s, 9), fixed(r.t_o, 9));
      for (double v : r.classes) fmt::print(",{}", fixed(v, 9));
    } else {
      // Indented by depth, up to drg::kPathLevels levels (deeper rows would make the table grow
      // with depth^2).
      std::string indent;
      for (uint32_t d = 0; d < std::min(t.node(n).depth, drg::kPathLevels); ++d) indent += "&emsp;";
      fmt::print("| {}{} | {} | {} | {:.4f} | {:.4f} | {:.4f}", indent, reg.label(), kind,
                 reg.location(), r.t_p, r.t_s, r.t_o);
      for (double v : r.classes) fmt::print(" | {:.4f}", v);
      fmt::print(" |");
    }
    fmt::print("\n");
  }
}

void print_json(const drg::Experiment& e, const MergedTree& t, const Analysis& a,
                const drg::Experiment* ref, const MergedTree* ref_tree, const ReportView& o) {
  ReportJsonOptions jo;
  jo.reference_tree = ref_tree;
  jo.shown = [&](uint32_t n) { return shown(t, n, a.regions[n].t_p, o); };
  jo.machine_used = o.machine_used;
  jo.compensate = o.compensate;
  jo.findings = o.findings;
  report_json(write_to(std::cout), e, t, a, ref, jo);
  std::cout << "\n";
}

constexpr size_t kFunctionRows = 20;  // rows per table of --view functions

void print_text(const Analyzed& x, const ReportView& v) {
  print_header(x.experiment(), x.a, x.reference(), v, &x.tree());
  if (v.view == "times") print_times_text(x.experiment(), x.tree(), x.a, v);
  else if (v.view == "mpi") print_mpi_text(x.experiment(), x.tree(), x.a, v);
  else if (v.view == "io") print_io_text(x.experiment(), x.tree(), x.a, v);
  else if (v.view == "functions") print_functions_text(x.tree(), kFunctionRows);
  else print_overheads_text(x.tree(), x.a, v, x.reference_tree());
}

}  // namespace

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> formats = {
      {"text", print_text},
      {"json",
       [](const Analyzed& x, const ReportView& v) {
         print_json(x.experiment(), x.tree(), x.a, x.reference(), x.reference_tree(), v);
       }},
      {"csv", [](const Analyzed& x, const ReportView& v) { print_rows(x.tree(), x.a, v, true); }},
      {"markdown",
       [](const Analyzed& x, const ReportView& v) { print_rows(x.tree(), x.a, v, false); }},
  };
  return formats;
}

const ReportFormat* find_report_format(std::string_view name) {
  for (const ReportFormat& f : report_formats())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace scalea::cli
