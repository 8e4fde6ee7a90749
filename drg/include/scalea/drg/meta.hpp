// meta.json, typed: what the analyses and reports read of what the collector writes there
// (collect/core/writer.cpp, encode_meta; docs/experiment-format.md). The one reader: nothing
// outside drg/ looks into Experiment::meta for a fact, only to show a part of it as it is (the
// JSON report). A key that is absent or of another type reads as the field's default, as the
// loader already checked the keys it needs (parse_meta).
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalea/format.hpp"

namespace scalea::drg {

// The OpenMP runtime ("openmp"); times in s since the program started.
struct OpenmpMeta {
  std::string runtime, runtime_path;
  std::optional<double> runtime_init_s;   // when the runtime began initializing
  std::optional<double> runtime_ready_s;  // when it was ready
  bool init_by_fork = false;              // the first parallel region started it
  bool light = false;                     // light mode ("events": "light"): only some events
};

// One thread of a process ("affinity" "threads").
struct ThreadAffinity {
  std::optional<uint32_t> index;     // the thread's number in its process (ThreadTree::thread)
  std::optional<std::string> cpus;   // the CPUs it may run on, a Linux cpulist ("0-3,8")
  std::optional<double> created_s;   // when it was created, s since the program started
  std::optional<double> cpu_s;       // its time on a CPU (schedstat)
  std::optional<double> runqueue_s;  // its time runnable, waiting for a CPU (schedstat)
};

// One process's affinity: the run's own, or one rank's under MPI.
struct ProcessAffinity {
  int rank = -1;     // -1: the process of a run without ranks
  std::string host;  // the experiment's host unless the rank's entry names one
  int cpus_online = 0;
  std::vector<ThreadAffinity> threads;
};

// The hardware and software counters ("counters").
struct CounterMeta {
  std::vector<std::string> measured;  // the counters read (their names), empty when none
  double cost_per_read_ns = 0;        // one read, measured when the tool started
  std::set<std::string, std::less<>> region_kinds;  // names of the kinds whose regions read them

  bool read_in(format::RegionKind kind) const {
    return !measured.empty() && region_kinds.count(format::region_kind_name(kind)) > 0;
  }
};

// A call path the tool stopped recording (SCALEA_THROTTLE): its node in a thread's data file.
struct ThrottledPath {
  int64_t rank = -1, thread = 0, node = 0;
};

// A region a thread had not left when the run ended ("open_at_end"): its node in the thread's
// data file, and how long the thread had been inside.
struct OpenAtEnd {
  int64_t rank = -1, thread = 0, node = 0;
  double open_s = 0;
};

// The MPI layer's message model ("mpi" "model"): a message's transfer time.
struct MessageModel {
  double latency_ns = 0, ns_per_byte = 0;
  std::string source = "?";
};

// meta.json "sampling" (docs/sampling.md): call-path sampling in the process that wrote it.
struct SamplingMeta {
  bool on = false;
  std::string off_reason;  // why it was off although asked for, "" otherwise
  double period_s = 0;     // CPU time per sample period
  int64_t samples = 0, in_tool = 0, dropped = 0, truncated = 0, threads = 0;
};

// meta.json "online_tuning" (docs/tuning.md, "On-line tuning"): what the on-line tuner
// (SCALEA_TUNE=on) measured and chose, per parallel region.
struct TunedTrial {
  std::string schedule;  // "static", "dynamic,4" (OMP_SCHEDULE's form)
  bool program = false;  // the program's own schedule (the baseline)
  int64_t runs = 0;
  double median_s = 0, min_s = 0, max_s = 0, imbalance_s = 0, busy_s = 0;
};
struct TunedRegion {
  uint64_t code = 0;          // the parallel construct's code address in the process
  std::string module;         // the object file holding it ("" when not known)
  uint64_t offset = 0;        // code - the module's load base, as the region table's addresses
  int64_t region = -1;        // its id in the process's region table, -1 when not recorded
  std::string state;          // "fixed", "stopped", "trying", "warm-up"
  std::string reason;         // why fixed or stopped
  std::string runtime_loops;  // "proven", "unknown", "none" (a loop followed the schedule set)
  std::string program_schedule;
  std::string chosen;  // "" unless fixed
  int64_t executions = 0, fixed_from = 0, iterations = 0, threads = 0;
  double gain = 0;  // the chosen schedule's median below the program's own, as a fraction
  std::vector<TunedTrial> trials;
};
struct OnlineTuning {
  bool on = false;
  std::string off_reason;
  int64_t repeat = 0;
  double min_gain = 0;
  std::vector<TunedRegion> regions;
};

struct Meta {
  std::vector<std::string> command;  // the program's argv
  std::string cwd;                   // the directory the program ran in
  std::string host, start_time, tool_version;
  int64_t pid = 0;
  std::optional<int64_t> ranks;    // the MPI job's size, absent without MPI
  std::optional<int64_t> threads;  // the threads the process (each rank) recorded
  bool mpi = false;                // an "mpi" section: the MPI layer ran
  std::string clock_source = "?";
  // The run's wall time; has_duration tells an absent value from 0 (a flag, not an optional: the
  // reports show duration_s as a number either way).
  double duration_s = 0;
  bool has_duration = false;
  // The tool started late and added the process's age to the program's time by this much.
  bool program_start_estimated = false;
  double program_start_estimated_s = 0;
  OpenmpMeta openmp;
  // One entry per process: the ranks' under MPI when the unification gathered them, else the
  // process's own (rank -1).
  std::vector<ProcessAffinity> affinity;
  bool affinity_per_rank = false;
  CounterMeta counters;
  int64_t throttled_count = 0;           // call paths throttled (SCALEA_THROTTLE)
  int64_t throttle_calls = 0;            // every this many visits a path's mean time is checked
  std::vector<ThrottledPath> throttled;  // those listed (a bounded number)
  // How the run ended: "exit", "signal 15", ... ("finished_by"); the regions threads had not left
  // then (a bounded number listed) and how many there were.
  std::string finished_by;
  std::vector<OpenAtEnd> open_at_end;
  int64_t open_at_end_count = 0;
  std::optional<MessageModel> message_model;
  double snapshot_interval_s = 0;        // a snapshot's: the publisher's tick
  std::optional<SamplingMeta> sampling;  // absent: the experiment predates sampling
  std::optional<OnlineTuning> tuning;    // absent: SCALEA_TUNE was not on

  // The command line, its words joined by spaces.
  std::string command_line() const;
};

// Reads a parsed meta.json (Experiment::meta, SnapshotPart::meta); never throws.
Meta read_meta(const nlohmann::json& meta);

}  // namespace scalea::drg
