// The study report's gnuplot plots: speedup per region and stacked overhead classes per p.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "output/errors.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "analysis/meta.hpp"
#include "formats/report_json.hpp"
#include "study_data.hpp"
#include "output/text.hpp"
#include "output/gnuplot.hpp"
#include "output/process.hpp"
#include "output/write.hpp"

extern char** environ;

namespace scalea::cli::studyrep {

// ---- plots (gnuplot) ----

std::string slug(const std::string& s) {
  std::string out;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (ok) out += ch;
    else if (!out.empty() && out.back() != '-') out += '-';
    if (out.size() >= 32) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

namespace {

// speedup.dat: x, label, ideal, one column per region.
std::string speedup_data(const Data& d, const std::vector<int>& with_speedup) {
  std::string dat = "# scalea study speedup: x label ideal";
  for (int n : with_speedup) dat += " \"" + node_title(d.nodes[size_t(n)]) + "\"";
  dat += "\n";
  for (size_t c = 0; c < d.configs.size(); ++c) {
    dat += fmt::format("{} \"{}\" {}", c, config_label(d, d.configs[c].config),
                       d.configs[c].config.p());
    for (int n : with_speedup)
      dat += " " + (d.cells[size_t(n)][c].speedup
                        ? fmt::format("{:.6g}", *d.cells[size_t(n)][c].speedup)
                        : "?");
    dat += "\n";
  }
  return dat;
}

// overheads-NAME.dat: one row per configuration, the classes' medians and their total.
std::string overheads_data(const Data& d, int n) {
  std::string data = "# scalea study overheads (medians, s): label";
  for (int k = 0; k < kClassCount; ++k) data += " " + std::string(kClassKeys[size_t(k)]);
  data += " total\n";
  for (size_t c = 0; c < d.configs.size(); ++c) {
    const Cell& cell = d.cells[size_t(n)][c];
    data += "\"" + config_label(d, d.configs[c].config) + "\"";
    for (int k = 0; k < kClassCount; ++k)
      data += cell.samples.empty() ? " 0" : fmt::format(" {:.6g}", cell.cls_med[size_t(k)]);
    data += cell.samples.empty() ? " ?" : fmt::format(" {:.6g}", cell.total);
    data += "\n";
  }
  return data;
}

// The terminal of one plot: SVG, or PNG with cairo where gnuplot has it.
std::string terminal(const std::string& ext, const std::string& size) {
  if (ext == "svg")
    return "  set terminal svg size " + size +
           " dynamic noenhanced font 'sans,12' background '#ffffff'\n";
  return "  if (png_cairo) { set terminal pngcairo size " + size +
         " noenhanced font 'sans,10' background '#ffffff' } else { set terminal png size " + size +
         " }\n";
}

// The script's part for the speedup per region vs p (speedup.dat); its outputs go to `outputs`.
std::string speedup_plot(const Data& d, const std::vector<int>& with_speedup,
                         std::vector<std::string>& outputs) {
  std::string title_cmd = command_text(d.study);
  std::string gp = "\n# Speedup per region vs p\n";
  for (const std::string ext : {"svg", "png"}) {
    gp += terminal(ext, "900,560");
    gp += "  set output 'speedup." + ext + "'\n";
    gp += "  set title " + gp_string("Speedup per region: " + title_cmd) + "\n";
    gp +=
        "  set xlabel 'p (processing elements" +
        std::string(d.study.use_launcher ? ": threads x ranks" : "") +
        ")'\n  set ylabel 'speedup  T_s / T_p'\n  set key left top box opaque\n  set yrange [0:*]\n"
        "  set style data linespoints\n";
    gp +=
        "  plot 'speedup.dat' using 1:3:xtic(2) title 'ideal' dashtype 2 linecolor rgb '#999999' "
        "lw 1.5 pt -1";
    for (size_t i = 0; i < with_speedup.size(); ++i)
      gp += fmt::format(
          ", '' using 1:{} title {} lw {} pt 7 ps 0.8", 4 + i,
          gp_string(with_speedup[i] == 0 ? "program"
                                         : node_title(d.nodes[size_t(with_speedup[i])])),
          with_speedup[i] == 0 ? 2.5 : 1.5);
    gp += "\n  set output\n  unset yrange\n";
    outputs.push_back("speedup." + ext);
  }
  return gp;
}

// The script's part for the stacked overhead classes per p of region `n` (its data written to
// `outdir`); its outputs go to `outputs`.
std::string overheads_plot(const Data& d, int n, const std::string& outdir,
                           std::vector<std::string>& outputs) {
  static const char* class_titles[] = {"data movement",          "synchronization",
                                       "control of parallelism", "additional computation",
                                       "loss of parallelism",    "unidentified"};
  static const char* class_colors[] = {"#1f77b4", "#d62728", "#ff7f0e",
                                       "#2ca02c", "#9467bd", "#7f7f7f"};
  const Node& nd = d.nodes[size_t(n)];
  std::string name = n == 0 ? "program" : "r" + std::to_string(n) + "-" + slug(nd.label);
  write_output(outdir + "/overheads-" + name + ".dat", overheads_data(d, n));
  std::string title =
      n == 0 ? "Overheads of the program (" + nd.label + ")" : "Overheads of " + node_title(nd);
  std::string gp = "\n# Overhead classes per p: " + node_title(nd) + "\n";
  for (const std::string ext : {"svg", "png"}) {
    gp += terminal(ext, "900,560");
    gp += "  set output 'overheads-" + name + "." + ext + "'\n";
    gp += "  set title " + gp_string(title) + "\n";
    gp +=
        "  set xlabel 'p'\n  set ylabel 'overhead, s of wall time (median)'\n"
        "  set style data histograms\n  set style histogram rowstacked\n"
        "  set style fill solid 0.85 border rgb '#333333'\n  set boxwidth 0.6\n"
        "  set key outside right top noopaque nobox\n  set xzeroaxis lt -1\n";
    gp += "  plot 'overheads-" + name + ".dat'";
    for (int k = 0; k < kClassCount; ++k)
      gp += fmt::format("{} using {}{} title '{}' linecolor rgb '{}'", k ? ", ''" : "", k + 2,
                        k == 0 ? ":xtic(1)" : "", class_titles[k], class_colors[k]);
    gp +=
        ", '' using 0:8 with points pointtype 7 pointsize 1.2 linecolor rgb '#000000' title 'T_o "
        "(net: sum of the classes)'";
    gp += "\n  set output\n  unset style\n  set style data linespoints\n  unset xzeroaxis\n";
    outputs.push_back("overheads-" + name + "." + ext);
  }
  return gp;
}

}  // namespace

void make_plots(const Data& d, const std::string& outdir) {
  std::error_code ec;
  std::filesystem::create_directories(outdir, ec);
  if (ec) throw UserError("cannot create plot directory " + outdir + ": " + ec.message());
  std::vector<int> regions{0};
  for (int n : detailed(d, 5))
    if (n != 0 && regions.size() < 7) regions.push_back(n);
  // The speedup plot shows the regions the reference ran (the others have no speedup).
  std::vector<int> with_speedup;
  for (int n : regions)
    if (d.nodes[size_t(n)].t_s) with_speedup.push_back(n);

  write_output(outdir + "/speedup.dat", speedup_data(d, with_speedup));

  std::string gp =
      "# Generated by scalea report --plots: run `gnuplot study.gp` in this directory.\n"
      "set datafile missing '?'\n"
      "set encoding utf8\n"
      "png_cairo = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0\n"
      "set grid ytics\n"
      "set border 3\n"
      "set tics nomirror\n"
      "colors = '#1f77b4 #d62728 #ff7f0e #9467bd #8c564b #7f7f7f'\n";
  std::vector<std::string> outputs;
  gp += speedup_plot(d, with_speedup, outputs);
  // Stacked overhead classes per p, for the program and the top regions.
  for (int n : regions) gp += overheads_plot(d, n, outdir, outputs);
  write_output(outdir + "/study.gp", gp);

  if (find_program("gnuplot").empty()) {
    std::fprintf(stderr,
                 "scalea report: gnuplot not found: wrote the data and %s/study.gp, no plots "
                 "(install gnuplot-nox, then run gnuplot study.gp there)\n",
                 outdir.c_str());
    return;
  }
  run_gnuplot(outdir, "study.gp");
  std::fprintf(stderr,
               "scalea report: wrote %zu plots to %s/ (speedup.svg, overheads-*.svg, and .png; "
               "script study.gp)\n",
               outputs.size(), outdir.c_str());
}

}  // namespace scalea::cli::studyrep
