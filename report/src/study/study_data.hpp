// The data of `scalea report STUDYDIR` (study_data.cpp), shared by its text, CSV and JSON
// outputs (study_text.cpp) and its gnuplot plots (study_plots.cpp): per region (the union of the
// runs' call trees) and configuration, the statistics over repetitions.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "findings/findings.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/overheads/classify.hpp"
#include "study.hpp"

namespace scalea::cli::studyrep {

using namespace study;
using overheads::kClassCount;
using overheads::kClassKeys;

// Which regions and findings the study's outputs show (the `report` command's --region, --top and
// --findings).
struct StudyView {
  std::string region;   // only regions whose name, label, location or path contains this
  int top = -1;         // the N regions with the largest overhead (-1: each output's default)
  size_t findings = 5;  // findings of the largest configuration
};

struct Stat {
  double med = 0, min = 0, max = 0;
  size_t n = 0;
};

struct Sample {
  double t_p = 0, t_o = 0;
  std::array<double, kClassCount> cls{};
  bool in_run = true;
};

struct Node {
  uint32_t key = 0;  // call-path key (Data::keys)
  int parent = -1;
  int depth = 0;
  std::string label, location, kind, name, file, function;
  format::RegionKind region_kind = format::RegionKind::Program;
  std::string component;  // this level of the call path (drg::MergedTree::component)
  size_t root = 0;        // the root component of the run that added the node (Data::roots)
  uint32_t line = 0;
  std::vector<int> children;
  std::optional<double> t_s;  // reference time
};

struct Cell {  // one region at one configuration, over repetitions
  std::vector<Sample> samples;
  Stat time;
  std::array<Stat, kClassCount> cls;
  Stat total_rep;  // T_o per repetition
  std::array<double, kClassCount> cls_med{};
  double total = 0;  // sum of the class medians
  std::optional<double> speedup, efficiency;
};

struct ConfigData {
  Config config;
  std::vector<std::string> experiments;  // relative paths of the runs used
  std::vector<double> lb, ce, pe;        // POP metrics per repetition
  // The repetitions whose threads shared CPUs (cpu_sharing()), and among them the one that waited
  // longest for a CPU: its experiment and evidence.
  size_t cpu_shared_reps = 0;
  std::string cpu_shared_experiment;
  CpuSharing cpu_sharing;
};

struct Data {
  std::string dir;
  StudyView view;
  // The processes of an MPI job that classify every run together (each in the same order), or
  // null: alone.
  overheads::Share* share = nullptr;
  Study study;
  std::vector<ConfigData> configs;  // reference first, then by p
  std::vector<Node> nodes;          // preorder not guaranteed: use children
  std::shared_ptr<overheads::CallPathKeys> keys = std::make_shared<overheads::CallPathKeys>();
  std::unordered_map<uint32_t, int> index;  // call-path key -> node
  std::vector<std::string> roots;           // root components of the runs, distinct
  std::vector<std::vector<Cell>> cells;     // [node][config]
  std::string reference_experiment;
  double reference_program_time = 0;
  size_t reference_reps = 0;
  // Per call-path key: the smallest and largest time of the region over the reference's
  // repetitions (their spread is part of the run-to-run noise).
  std::unordered_map<uint32_t, std::pair<double, double>> reference_range;
  size_t runs_ok = 0, runs_failed = 0, runs_pending = 0;
  std::vector<std::string> warnings;
};

Stat stat_of(std::vector<double> v);
// The study's reference: the repetition of the 1 x 1 configuration whose program time is the
// median (the lower median for an even count), among the completed ones that load; `each` sees
// every repetition's merged tree as it is loaded. Throws UserError when there is none.
struct ReferenceRun {
  const Run* run = nullptr;
  double program_time = 0;
  size_t repetitions = 0;
};
// Under mpirun (`share`), the processes read the runs together.
ReferenceRun reference_run(const std::string& dir, const Study& s,
                           std::vector<std::string>& warnings,
                           const std::function<void(const drg::MergedTree&)>& each = nullptr,
                           overheads::Share* share = nullptr);
// Loads every completed run of the study in `dir`, classifies it against the study's reference
// (with the processes of `share`, when given) and gathers the statistics per region and
// configuration, to be shown as `view` says. Throws UserError.
Data gather(const std::string& dir, const StudyView& view, overheads::Share* share = nullptr);
// The call path of a node as the run that added it printed it (drg::call_path).
std::string node_path(const Data& d, int n);
std::vector<int> preorder(const Data& d);
bool matches(const Data& d, int id, const std::string& q);
// Regions to detail (beyond the program): matching --region, else the --top N by overhead.
std::vector<int> detailed(const Data& d, int default_top);
std::string config_label(const Data& d, const Config& c);
// config_label() with "*" when the configuration's runs shared CPUs (a note under the table says
// how: cpu_notes()); "\\*" for markdown.
std::string marked_label(const Data& d, const ConfigData& c, bool markdown = false);
// One line per configuration whose runs shared CPUs: which, in how many repetitions, the threads
// and CPUs, how long the threads waited for a CPU, and that its times include that waiting.
std::string cpu_note(const Data& d, const ConfigData& c, bool markdown = false);
std::string command_text(const Study& s);
std::string node_title(const Node& n);

// The findings of the largest configuration (study_data.cpp).
struct StudyFindings {
  std::string experiment;  // relative path of the repetition the findings come from
  int p = 0;
  bool noise_measured = false;
  std::vector<std::string> cpu_sharing;  // of that repetition (cpu_sharing())
  std::vector<Finding> findings;
  overheads::Analysis analysis;
};
std::optional<StudyFindings> study_findings(const Data& d);

// The outputs (study_text.cpp, study_plots.cpp).
void print_text(const Data& d, bool markdown);
void print_csv(const Data& d);
void print_json(const Data& d);
void make_plots(const Data& d, const std::string& outdir);

}  // namespace scalea::cli::studyrep
