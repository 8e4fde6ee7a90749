// The data model every analysis reads: one run's experiment, loaded and validated.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalea/drg/team.hpp"
#include "scalea/format.hpp"

namespace scalea::drg {

using format::RegionKind;

// A load failure: the message is one line, naming the file and the problem.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One entry of the region table (the paper's instrumentation description file).
struct Region {
  RegionKind kind = RegionKind::Program;
  uint16_t subkind = 0;
  std::string name;      // user-given name, or "" for constructs identified by address
  std::string file;      // source file, "" when unknown
  std::string function;  // enclosing program unit, "" when unknown
  uint32_t line = 0;
  std::string module;  // object file holding the code address, "" when none
  // Relative to the module's load base, as the collector recorded it: the lowest recorded one
  // when several became this region (inlined copies; docs/symbols.md).
  uint64_t address = 0;

  // Filled by the loader from the module's ELF symbol table, with or without debug information
  // (docs/symbols.md). `code`: the module offset of the construct's own code: the recorded
  // return address, or the jump by which the code entered the runtime when that was a tail call
  // (the call then returned to the caller, whose call line the recorded address names); 0 when
  // not resolved. `symbol`: the ELF symbol holding it (demangled), "" when unknown;
  // `symbol_offset`: code - the symbol's start. With `body` set the region is identified by the
  // body the compiler outlined for it (its inlined copies are one region): `symbol` is that
  // body, `code` its start, symbol_offset 0.
  uint64_t code = 0;
  std::string symbol;
  uint64_t symbol_offset = 0;
  bool body = false;
  // `function` is the function the code was outlined from (the enclosing construct's), not the
  // outlined body the code lies in (.omp_outlined..N, main._omp_fn.0, ...), which is `symbol`.
  bool outlined = false;
  // A sampled code address in inlined code: the functions `function` was inlined into, innermost
  // first (docs/sampling.md); empty otherwise.
  std::vector<std::string> inlined_into;

  // "parallel", "loop (dynamic)", "barrier (implicit, join)", "user: solve", "MPI_Send", ...
  std::string label() const;
  // Where the region is, "" when nothing is known (the program, user regions without a file):
  //   "md.c:88"                       with line information (file name without directories)
  //   "resid+0x1a2"                   without: ELF symbol and offset
  //   "conj_grad (.omp_outlined..38+0x40)"  code in an outlined body: the function it came from,
  //                                   then symbol and offset
  //   "main (.omp_outlined..26)"      a region identified by its outlined body (`body`)
  //   "libfoo.so+0x1234"              no symbol covers the address
  // A function region without line information has none: its label is its name.
  // C++ names are shortened and the whole is at most kMaxNameLength characters (names.hpp).
  std::string location() const;
};

// A frame of a sampled call path (call-path sampling, docs/sampling.md): kept apart from the
// measured nodes, so that no analysis of regions meets them. A path hangs below the measured node
// that was the thread's current region when the samples were taken.
struct SampledFrame {
  uint32_t parent;  // index in ThreadTree::samples, or format::kNoIndex: the path's outermost frame
  uint32_t node;    // the measured node (ThreadTree index) the path hangs below
  uint32_t region;  // a region of kind `sampled`: a code address, resolved
  double self;      // samples whose innermost frame this was
  double cpu_s;     // their share of the thread's CPU time (s)
};

// One thread's sub-DRG: a calling-context tree stored as parallel arrays, parents first.
struct ThreadTree {
  int32_t rank = -1;
  uint32_t thread = 0;
  uint32_t flags = 0;
  uint64_t os_tid = 0;
  std::vector<uint32_t> parent;       // format::kNoIndex for the root
  std::vector<uint32_t> region;       // index into Experiment::regions
  std::vector<double> values;         // node-major: values[node * metric_count + metric]
  std::vector<SampledFrame> samples;  // parents first; empty without sampling

  size_t size() const { return parent.size(); }
};

struct Experiment {
  std::string path;
  nlohmann::json meta;
  std::vector<Region> regions;
  std::vector<std::string> metrics;  // column names; core metrics first, in format order
  std::vector<ThreadTree> threads;   // every thread of every rank
  // Per column, from METR: how two values of the same node combine (sum, min, max), and the
  // stored type. Same length as `metrics` once a file defined them.
  std::vector<format::MetricMerge> metric_merge;
  std::vector<format::MetricType> metric_type;
  bool metrics_defined = false;  // a METR section has been read (it may define zero columns)

  size_t metric_count() const { return metrics.size(); }
  // Index of a metric column, or -1.
  int metric(const std::string& name) const;
  // Index of a core metric's column (format::kCoreMetrics), or -1 when the file has none: typed,
  // so that a misspelt name does not read as a column of zeros.
  int metric(format::CoreMetric m) const { return metric(format::kCoreMetrics[uint32_t(m)].name); }
  double value(const ThreadTree& t, uint32_t node, int metric) const {
    return metric < 0 ? 0.0 : t.values[size_t(node) * metrics.size() + size_t(metric)];
  }
  int ranks() const;
  bool complete() const;
};

// The metric columns a reader needs. Files of format version 3 hold each thread's values column
// by column, and a reader that names its columns decodes those only (the others read 0); older
// versions decode every column. Default: every column.
class MetricSet {
 public:
  static MetricSet all() { return MetricSet(); }
  static MetricSet none() {
    MetricSet s;
    s.all_ = false;
    return s;
  }
  // Adds column `metric` (a negative index, a column the file lacks, is ignored).
  MetricSet& add(int metric) {
    if (metric < 0 || all_) return *this;
    if (words_.size() <= size_t(metric) / 64) words_.resize(size_t(metric) / 64 + 1, 0);
    words_[size_t(metric) / 64] |= uint64_t(1) << (metric % 64);
    return *this;
  }
  MetricSet& add(const MetricSet& other) {
    if (other.all_) *this = all();
    for (size_t w = 0; w < other.words_.size() && !all_; ++w)
      for (uint64_t b = other.words_[w]; b; b &= b - 1)
        add(int(w * 64 + unsigned(__builtin_ctzll(b))));
    return *this;
  }
  bool has(size_t metric) const {
    return all_ || (metric / 64 < words_.size() && words_[metric / 64] >> (metric % 64) & 1);
  }
  bool every() const { return all_; }
  bool empty() const {
    if (all_) return false;
    for (uint64_t w : words_)
      if (w) return false;
    return true;
  }

 private:
  bool all_ = true;
  std::vector<uint64_t> words_;
};

struct LoadOptions {
  bool resolve_symbols = true;  // fill file/line/function of code addresses with libdw
  // Drop function regions of compiler-outlined bodies (-finstrument-functions records
  // .omp_outlined., main._omp_fn.0, ...): their children attach to their parent (docs/drg.md).
  bool fold_outlined_functions = true;
  // Worker threads for the rank files of an MPI experiment (shared definitions): 0 = one per
  // core, at most 8; 1 = serial. Read by file (RankFiles), the threads of a pass over the files,
  // the caller's included: N reads the files ahead on N - 1 others; 0 = on one per core, at most
  // 4 (none on one core). The FileReader must be thread-safe unless this is 1.
  unsigned threads = 0;
  // Check every file's payload checksum. RankFiles checks each file when it opens the experiment
  // and not again each time it reads the file later.
  bool verify_checksums = true;
};

// Loads and validates an experiment directory. Throws LoadError with a one-line message.
Experiment load_experiment(const std::string& dir, const LoadOptions& options = {});

// The loader's only access to the file system: returns a file's bytes or throws LoadError naming
// the path. The overload below lets tests and the fuzzer serve files from memory.
using FileReader = std::function<std::vector<char>(const std::string& path)>;
Experiment load_experiment(const std::string& dir, const LoadOptions& options,
                           const FileReader& read);

// An experiment read one rank file at a time (docs/drg.md, "Streaming"), for analyses whose
// memory must not grow with the number of ranks: the definitions (meta.json, the regions, the
// metrics) stay in memory, a rank file's threads are parsed when asked for. The threads are
// those load_experiment gives, file by file: settling the regions needs every thread's calling
// contexts, so opening reads every file once, and once more for each step of the settling that
// observes them (docs/drg.md). Throws LoadError as load_experiment does.
//
// Opened by a team of processes (`team` not null, with more than one process), each process checks
// and parses its block of the files only (file_block) and observes its block for the settling;
// rank 0 combines the blocks in file order, so every process ends with the definitions of one
// process that opened every file, and the first error in file order. An experiment whose rank
// files bring definitions of their own (regions unified in file order) is opened whole by every
// process. `team` must outlive the RankFiles.
class RankFiles {
 public:
  explicit RankFiles(const std::string& dir, const LoadOptions& options = {},
                     const Team* team = nullptr);
  RankFiles(const std::string& dir, const LoadOptions& options, const FileReader& read,
            const Team* team = nullptr);
  ~RankFiles();
  RankFiles(RankFiles&&) noexcept;

  // The experiment without the threads' trees: path, meta, settled regions, metrics, and every
  // thread's identity (rank, thread, flags, os_tid) with no nodes, so that what counts threads
  // and ranks sees the experiment's (a few bytes per thread, not per node).
  const Experiment& definitions() const;
  size_t files() const;
  // The threads of rank file i (in meta.json's order), as load_experiment holds them: with the
  // values of `columns` (the others 0; older versions than 3 have every column), or with none
  // when `columns` is empty (values empty in version 3). Safe to call from several threads at
  // once (a pass reads files ahead: readers()).
  std::vector<ThreadTree> threads(size_t i, const MetricSet& columns = MetricSet::all()) const;
  // How many threads a pass over the files should read them ahead with (LoadOptions::threads).
  unsigned readers() const;
  // How many threads rank file i holds, without reading it.
  size_t threads_in(size_t i) const;
  // The team that opened the files, or null when one process did.
  const Team* team() const;
  // The files [first, last) this process opened: all of them without a team.
  std::pair<size_t, size_t> block() const;
  // The files process `rank` of `size` takes in a shared analysis: blocks of about equal bytes
  // (cost_block), the blocks a team opens the files by.
  std::pair<size_t, size_t> block_of(int rank, int size) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses and validates meta.json (`name` is used in messages): a JSON object with the format tag,
// the format version, a non-empty list of plain file names, and the right types for the fields
// readers use (command, clock, threads, ranks, ...). Throws LoadError.
nlohmann::json parse_meta(const std::string& name, const std::vector<char>& bytes);

// The CRC-32 (IEEE) the loader checks payloads with: format.hpp's crc32_update(0, ...), computed
// with carry-less multiplication where the CPU has it, else by zlib when available.
uint32_t payload_crc32(const char* data, size_t size);

// Largest meta.json and data file the loader accepts, and the highest MPI rank number.
inline constexpr size_t kMaxMetaBytes = size_t(64) << 20;
inline constexpr int32_t kMaxRank = (1 << 22) - 1;

// What one file defines, for files that hold threads only (MPI experiments write the unified
// definitions once, in the file meta.json names under "definitions").
struct FileDefinitions {
  bool present = false;
  std::vector<uint32_t> region_map;  // the file's region index -> Experiment::regions index
  std::vector<format::MetricRecord> metrics;
};

// Parses one binary file (exposed for the fuzzer and tests). Regions are added to `into`
// (unified by identity: kind, subkind, name, module, address), threads appended. A file with
// threads but no definitions uses `shared`.
// `columns`: the metric columns decoded (MetricSet); with an empty set the threads of a file of
// version 3 come with their structure only (`values` empty), older versions' with every column.
FileDefinitions parse_rank_file(const std::string& name, const std::vector<char>& bytes,
                                Experiment& into, const LoadOptions& options,
                                const FileDefinitions* shared = nullptr,
                                const MetricSet& columns = MetricSet::all());

}  // namespace scalea::drg
