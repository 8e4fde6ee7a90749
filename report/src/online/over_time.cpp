#include "over_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "output/errors.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "online.hpp"
#include "output/gnuplot.hpp"
#include "output/write.hpp"
#include "output/text.hpp"
#include "scalea/drg/meta.hpp"
#include "formats/classes.hpp"
#include "output/process.hpp"

namespace scalea::cli {
namespace {

using overheads::kClassCount;
using overheads::kClassKeys;
using overheads::RegionOverheads;

// One region followed through the windows: the program, then the top regions of the whole run.
struct Tracked {
  uint32_t key = 0;
  std::string label, path, kind, source;
};

struct WindowRow {
  double t0 = 0, t1 = 0;
  uint64_t entered = 0;
  std::vector<online::PeLoad> pes;                      // busy time of each PE in the window
  std::vector<std::optional<RegionOverheads>> regions;  // per tracked region, absent when not run
};

struct Series {
  std::string dir, snapshot_dir, reference;
  double snapshot_interval = 0, window = 0;
  double job_start = 0;  // s since the epoch: the times are relative to it
  int ranks = 1, points = 0, p = 1;
  bool final = false, estimated = true;
  std::vector<Tracked> tracked;
  std::vector<WindowRow> rows;
};

double per_s(uint64_t n, double dt) { return dt > 0 ? double(n) / dt : 0; }

std::string dominant(const RegionOverheads& r) {
  int d = dominant_class(r);
  return d < 0 ? "-" : std::string(kClassShort[size_t(d)]);
}

Series build(const std::string& dir, const OverTimeOptions& o) {
  std::optional<drg::SnapshotDir> s = drg::find_snapshots(dir);
  if (!s)
    throw UserError(dir +
                    ": no snapshots (run the program with SCALEA_SNAPSHOT=1s, or scalea run "
                    "--snapshot 1s; docs/online.md)");
  std::vector<online::Point> all = online::complete_points(*s);
  if (all.empty()) throw UserError(s->path + ": no snapshot that every rank has published yet");
  online::Parts parts;
  double start = online::job_start(parts, all.front());
  Series out;
  out.job_start = start;
  out.dir = dir;
  out.snapshot_dir = s->path;
  out.ranks = int(s->ranks.size());
  out.points = int(all.size());
  out.final = all.back().final;
  out.snapshot_interval =
      drg::read_meta(parts.get(all.front().files.begin()->second).meta).snapshot_interval_s;
  out.window = out.snapshot_interval;
  if (!o.interval.empty()) {
    double w = 0;
    if (!parse_duration(o.interval, w))
      throw UserError("--interval " + o.interval + ": not a duration (e.g. 2s, 500ms)");
    if (w < out.snapshot_interval * 0.999)
      throw UserError(fmt::format("--interval {}: shorter than the snapshots' interval ({:g} s)",
                                  o.interval, out.snapshot_interval));
    out.window = w;
  }
  std::vector<const online::Point*> ends = online::window_ends(parts, all, start, out.window);
  online::settle(parts, ends);
  online::Classifier c;
  c.p = o.p;
  std::optional<drg::Experiment> ref;
  std::optional<drg::MergedTree> ref_t;
  out.reference = o.reference;
  // The whole run (to its last point): it chooses the regions to follow.
  std::unique_ptr<online::Window> whole = online::window(parts, nullptr, *ends.back(), start, c);
  if (!out.reference.empty()) {
    // Whole: scaled to each window in memory; a reference (p = 1) is one thread in one file.
    ref = drg::load_experiment(out.reference);
    check_reference(whole->e, *ref, o.force, o.decomposition);
    ref_t.emplace(*ref);
    c.reference = &*ref_t;
    whole = online::window(parts, nullptr, *ends.back(), start, c);
    out.estimated = false;
  }
  out.p = whole->a.p;
  std::vector<uint32_t> nodes{0};
  for (uint32_t n : online::top_regions(whole->a, size_t(std::max(0, o.top < 0 ? 5 : o.top))))
    nodes.push_back(n);
  for (uint32_t n : nodes) {
    const drg::Region& r = whole->t->region_of(n);
    out.tracked.push_back(Tracked{whole->a.regions[n].key, node_label(*whole->t, n),
                                  whole->t->path(n), std::string(format::region_kind_name(r.kind)),
                                  r.location()});
  }
  const online::Point* prev = nullptr;
  for (const online::Point* end : ends) {
    std::unique_ptr<online::Window> w = online::window(parts, prev, *end, start, c);
    WindowRow row;
    row.t0 = w->t0;
    row.t1 = w->t1;
    row.entered = w->entered;
    row.pes = online::pe_loads(w->e);
    std::map<uint32_t, uint32_t> by_key;
    for (uint32_t n = 0; n < w->a.regions.size(); ++n) by_key.emplace(w->a.regions[n].key, n);
    for (const Tracked& t : out.tracked) {
      auto it = by_key.find(t.key);
      if (it == by_key.end()) row.regions.emplace_back();
      else row.regions.emplace_back(w->a.regions[it->second]);
    }
    out.rows.push_back(std::move(row));
    prev = end;
  }
  return out;
}

// Per window, the share of its time each rank (each thread, with one rank) was busy, and their
// imbalance: where a phase's imbalance sits.
std::vector<online::PeLoad> busy_columns(const Series& s, const WindowRow& row) {
  return s.ranks > 1 ? online::rank_loads(row.pes) : row.pes;
}

void print_busy(const Series& s) {
  if (s.rows.empty()) return;
  bool by_rank = s.ranks > 1;
  std::vector<online::PeLoad> head = busy_columns(s, s.rows.back());
  fmt::print(
      "\nbusy share of each {} per window (not waiting in OpenMP synchronization, not in MPI, "
      "not idle):\n",
      by_rank ? "rank" : "thread");
  fmt::print("  {:<15}", "window s");
  for (const online::PeLoad& pe : head)
    fmt::print(" {:>6}", by_rank ? fmt::format("r{}", pe.rank) : fmt::format("t{}", pe.thread));
  fmt::print(" {:>9}\n", "imbalance");
  for (const WindowRow& row : s.rows) {
    std::vector<online::PeLoad> cols = busy_columns(s, row);
    std::vector<double> busy;
    fmt::print("  {:<15}", fmt::format("{:.2f}-{:.2f}", row.t0, row.t1));
    for (const online::PeLoad& pe : cols) {
      busy.push_back(pe.busy);
      fmt::print(" {:>6}", pe.time > 0 ? fmt::format("{:.0f}%", 100 * pe.busy / pe.time) : "-");
    }
    fmt::print(" {:>9.2f}\n", online::imbalance(busy));
  }
}

void print_text(const Series& s) {
  fmt::print("experiment  {}\n", s.dir);
  fmt::print("snapshots   {}: {} rank(s), {} point(s) every {:g} s{}; windows of {:g} s ({})\n",
             s.snapshot_dir, s.ranks, s.points, s.snapshot_interval,
             s.final ? " and the end" : " (the run has not ended, or ended without its last one)",
             s.window, s.rows.size());
  if (s.estimated)
    fmt::print(
        "reference   none: T_s is estimated as the useful work, so additional computation is 0\n");
  else
    fmt::print(
        "reference   {}: T_s of a window is the reference's, scaled to the window's visits\n",
        s.reference);
  for (size_t k = 0; k < s.tracked.size(); ++k) {
    const Tracked& t = s.tracked[k];
    if (k == 0) fmt::print("\nprogram {}: p = {}\n", t.label, s.p);
    else if (k == 1) fmt::print("\ntop {} region(s) by T_o over the run:\n", s.tracked.size() - 1);
    if (k > 0) fmt::print("\n[{}] {}\n    {}\n", k, t.label, t.path);
    fmt::print("  {:<15} {:>9} {:>9} {:>6}", "window s", "T_p s", "T_o s", "T_o%");
    for (auto c : kClassShort) fmt::print(" {:>8}", c);
    fmt::print(" {:>8} {}\n", "main", k == 0 ? "  speedup  entered/s" : " imbalance");
    for (const WindowRow& row : s.rows) {
      std::string when = fmt::format("{:.2f}-{:.2f}", row.t0, row.t1);
      if (!row.regions[k]) {
        fmt::print("  {:<15} {:>9}\n", when, "-");
        continue;
      }
      const RegionOverheads& r = *row.regions[k];
      auto z = [](double v) { return std::fabs(v) < 5e-5 ? 0.0 : v; };
      std::string pct = r.t_p >= 1e-6 ? fmt::format("{:>5.1f}%", 100 * r.t_o / r.t_p) : "     -";
      fmt::print("  {:<15} {:>9.4f} {:>9.4f} {}", when, r.t_p, z(r.t_o), pct);
      for (double v : r.classes) fmt::print(" {:>8.4f}", z(v));
      fmt::print(" {:>8}", dominant(r));
      if (k == 0)
        fmt::print(" {:>8.2f} {:>10.0f}\n", r.speedup, per_s(row.entered, row.t1 - row.t0));
      else fmt::print(" {:>9.2f}\n", r.imbalance);
    }
  }
  print_busy(s);
  fmt::print(
      "\nclasses in seconds of wall time per window; they sum to T_o = T_p - T_s/p; main: the "
      "largest class; entered/s: regions entered per second (docs/online.md)\n");
}

void print_csv(const Series& s) {
  fmt::print("t0,t1,region,path,kind,source,T_p,T_s,T_o");
  for (auto k : kClassKeys) fmt::print(",{}", k);
  fmt::print(",speedup,imbalance,entered_per_s\n");
  for (const WindowRow& row : s.rows)
    for (size_t k = 0; k < s.tracked.size(); ++k) {
      if (!row.regions[k]) continue;
      const RegionOverheads& r = *row.regions[k];
      const Tracked& t = s.tracked[k];
      fmt::print("{:.6f},{:.6f},{},{},{},{},{},{},{}", row.t0, row.t1, k, csv_field(t.path, true),
                 t.kind, csv_field(t.source, true), fixed(r.t_p, 9), fixed(r.t_s, 9),
                 fixed(r.t_o, 9));
      for (double v : r.classes) fmt::print(",{}", fixed(v, 9));
      fmt::print(",{:.6f},{:.6f},{:.3f}\n", r.speedup, r.imbalance,
                 per_s(row.entered, row.t1 - row.t0));
    }
}

void print_json(const Series& s) {
  nlohmann::ordered_json doc;
  doc["schema"] = "scalea-over-time/1";
  doc["experiment"] = s.dir;
  doc["snapshots"] = s.snapshot_dir;
  doc["snapshot_interval_s"] = s.snapshot_interval;
  doc["start_epoch_s"] = s.job_start;
  doc["window_s"] = s.window;
  doc["ranks"] = s.ranks;
  doc["p"] = s.p;
  doc["complete"] = s.final;
  doc["t_s_estimated"] = s.estimated;
  doc["reference"] =
      s.reference.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.reference);
  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
  for (size_t k = 0; k < s.tracked.size(); ++k)
    regions.push_back({{"id", k},
                       {"label", s.tracked[k].label},
                       {"path", s.tracked[k].path},
                       {"kind", s.tracked[k].kind},
                       {"source", s.tracked[k].source}});
  doc["regions"] = regions;
  nlohmann::ordered_json windows = nlohmann::ordered_json::array();
  for (const WindowRow& row : s.rows) {
    nlohmann::ordered_json w;
    w["t0"] = row.t0;
    w["t1"] = row.t1;
    w["entered"] = row.entered;
    w["entered_per_s"] = per_s(row.entered, row.t1 - row.t0);
    nlohmann::ordered_json pes = nlohmann::ordered_json::array();
    std::vector<double> busy;
    for (const online::PeLoad& pe : row.pes) {
      pes.push_back(
          {{"rank", pe.rank}, {"thread", pe.thread}, {"time", pe.time}, {"busy", pe.busy}});
      busy.push_back(pe.busy);
    }
    w["pes"] = pes;
    w["pe_imbalance"] = online::imbalance(busy);
    if (s.ranks > 1) {
      nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
      busy.clear();
      for (const online::PeLoad& r : online::rank_loads(row.pes)) {
        ranks.push_back({{"rank", r.rank}, {"time", r.time}, {"busy", r.busy}});
        busy.push_back(r.busy);
      }
      w["ranks"] = ranks;
      w["rank_imbalance"] = online::imbalance(busy);
    }
    nlohmann::ordered_json rs = nlohmann::ordered_json::array();
    for (size_t k = 0; k < s.tracked.size(); ++k) {
      if (!row.regions[k]) continue;
      const RegionOverheads& r = *row.regions[k];
      nlohmann::ordered_json o;
      for (int c = 0; c < kClassCount; ++c)
        o[std::string(kClassKeys[size_t(c)])] = r.classes[size_t(c)];
      o["total"] = r.t_o;
      rs.push_back({{"id", k},
                    {"t_p", r.t_p},
                    {"t_s", r.t_s},
                    {"t_o", r.t_o},
                    {"overheads", o},
                    {"speedup", r.speedup},
                    {"imbalance", r.imbalance}});
    }
    w["regions"] = rs;
    windows.push_back(w);
  }
  doc["windows"] = windows;
  std::cout << json_text(doc, 2) << "\n";
}

// over-time.svg and .png in `outdir`: the program's classes (top) and the top regions' T_o
// (bottom) per window, in % of the window's wall time.
void make_plot(const Series& s, const std::string& outdir) {
  std::error_code ec;
  std::filesystem::create_directories(outdir, ec);
  if (ec) throw UserError("cannot create plot directory " + outdir + ": " + ec.message());
  std::string dat = "# scalea over-time: t_mid t0 t1, then per class and T_o: % of the window\n";
  std::string regions = "# scalea over-time: t_mid, then T_o of each top region: % of the window\n";
  for (const WindowRow& row : s.rows) {
    double dt = std::max(1e-12, row.t1 - row.t0), mid = (row.t0 + row.t1) / 2;
    dat += fmt::format("{:.6f} {:.6f} {:.6f}", mid, row.t0, row.t1);
    const auto& prog = row.regions[0];
    for (int c = 0; c < kClassCount; ++c)
      dat += prog ? fmt::format(" {:.6g}", 100 * prog->classes[size_t(c)] / dt) : " ?";
    dat += prog ? fmt::format(" {:.6g}\n", 100 * prog->t_o / dt) : " ?\n";
    regions += fmt::format("{:.6f}", mid);
    for (size_t k = 1; k < s.tracked.size(); ++k)
      regions += row.regions[k] ? fmt::format(" {:.6g}", 100 * row.regions[k]->t_o / dt) : " ?";
    regions += "\n";
  }
  write_output(outdir + "/over-time.dat", dat);
  write_output(outdir + "/over-time-regions.dat", regions);
  static const char* titles[] = {"data movement",          "synchronization",
                                 "control of parallelism", "additional computation",
                                 "loss of parallelism",    "unidentified"};
  std::string gp =
      "# Generated by scalea report --over-time --plots: run `gnuplot over-time.gp` here.\n"
      "set datafile missing '?'\nset encoding utf8\n"
      "png_cairo = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0\n"
      "set grid ytics\nset border 3\nset tics nomirror\nset style data linespoints\n";
  for (const std::string ext : {"svg", "png"}) {
    if (ext == "svg")
      gp +=
          "set terminal svg size 960,720 dynamic noenhanced font 'sans,12' background '#ffffff'\n";
    else
      gp +=
          "if (png_cairo) { set terminal pngcairo size 960,720 noenhanced font 'sans,10' "
          "background '#ffffff' } else { set terminal png size 960,720 }\n";
    gp += "set output 'over-time." + ext + "'\nset multiplot layout 2,1\n";
    gp += "set title " + gp_string("Overhead classes of the program per window: " + s.dir) + "\n";
    gp +=
        "set xlabel 'time since the start (s)'\nset ylabel '% of the window'\n"
        "set key outside right top\n";
    gp += "plot 'over-time.dat' using 1:" + std::to_string(4 + kClassCount) +
          " title 'T_o' lw 2.5 pt 7 ps 0.6 linecolor rgb '#000000'";
    for (int c = 0; c < kClassCount; ++c)
      gp += fmt::format(", '' using 1:{} title '{}' lw 1.5 pt 7 ps 0.5 linecolor rgb '{}'", 4 + c,
                        titles[c], kClassColors[size_t(c)]);
    gp += "\nset title 'T_o of the top regions per window'\n";
    if (s.tracked.size() > 1) {
      gp += "plot 'over-time-regions.dat'";
      for (size_t k = 1; k < s.tracked.size(); ++k)
        gp += fmt::format("{} using 1:{} title {} lw 1.5 pt 7 ps 0.5", k > 1 ? ", ''" : "", k + 1,
                          gp_string(fmt::format("[{}] {}", k, s.tracked[k].label)));
      gp += "\n";
    }
    gp += "unset multiplot\nset output\n";
  }
  write_output(outdir + "/over-time.gp", gp);
  if (find_program("gnuplot").empty()) {
    std::fprintf(stderr,
                 "scalea report: gnuplot not found: wrote the data and %s/over-time.gp, no "
                 "plot (install gnuplot-nox, then run gnuplot over-time.gp there)\n",
                 outdir.c_str());
    return;
  }
  run_gnuplot(outdir, "over-time.gp");
  std::fprintf(stderr,
               "scalea report: wrote %s/over-time.svg and over-time.png (script over-time.gp)\n",
               outdir.c_str());
}

}  // namespace

void over_time_report(const std::string& dir, const OverTimeOptions& o) {
  const std::string& format = o.format;
  if (format == "markdown")
    throw UserError("--over-time: --format markdown is not offered (text, csv, json)");
  Series s = build(dir, o);
  if (format == "json") print_json(s);
  else if (format == "csv") print_csv(s);
  else print_text(s);
  if (!o.plots.empty()) make_plot(s, o.plots);
}

}  // namespace scalea::cli
