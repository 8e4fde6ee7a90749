// The on-disk experiment format, shared by the writer (collect/, inside the user's process) and
// the loader (drg/). Header-only, plain C++17, no dependencies: collect/ must stay light.
// The format is documented in docs/experiment-format.md; change both together and bump kVersion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace scalea::format {

inline constexpr char kMagic[8] = {'S', 'C', 'A', 'L', 'E', 'A', 'D', 'G'};
// Writers write kVersion; readers read every version from kOldestVersion on. Versions 2 and 3
// changed only the THRD section (compact.hpp: 2 the values node by node, 3 column by column);
// snapshot files keep version 1 (kSnapshotVersion), whose fixed-size node records their readers
// subtract in place.
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kOldestVersion = 1;
inline constexpr uint32_t kSnapshotVersion = 1;
inline constexpr const char* kMetaFile = "meta.json";
inline constexpr uint32_t kNoIndex = 0xffffffffu;

// Section tags, four ASCII characters read as a little-endian word.
constexpr uint32_t tag(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
         uint32_t(uint8_t(s[3])) << 24;
}
inline constexpr uint32_t kTagStrings = tag("STRG");
inline constexpr uint32_t kTagModules = tag("MODL");
inline constexpr uint32_t kTagRegions = tag("REGN");
inline constexpr uint32_t kTagMetrics = tag("METR");
inline constexpr uint32_t kTagThreads = tag("THRD");
// A snapshot's description (SCALEA_SNAPSHOT, docs/experiment-format.md "Snapshots"): one record,
// the JSON text of its meta.json. Readers of experiments skip it like any unknown section.
inline constexpr uint32_t kTagSnapshot = tag("SNAP");

#pragma pack(push, 1)
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;   // sizeof(FileHeader), lets a reader skip fields added later
  uint64_t payload_size;  // bytes after the header
  uint32_t section_count;
  uint32_t payload_crc32;  // CRC-32 (IEEE) of the payload
  int32_t rank;            // MPI rank, or -1 without MPI
  uint32_t reserved;
};
struct SectionHeader {
  uint32_t tag;
  uint32_t count;  // number of records
  uint64_t size;   // bytes of the records that follow
};
// STRG records: uint32 length, then that many bytes (UTF-8, no terminator). Index 0 is "".
struct ModuleRecord {  // MODL: one loaded object (executable or shared library)
  uint32_t path;       // string index
  uint32_t reserved;
  uint64_t load_base;  // address the object's file offset 0 / first PT_LOAD is relative to
};
struct RegionRecord {  // REGN: the instrumentation description file (IDF) entry
  uint16_t kind;       // RegionKind
  uint16_t subkind;    // meaning depends on kind (loop schedule, barrier flavour, MPI class)
  uint32_t name;       // string index ("" when unnamed: resolved from the address later)
  uint32_t file;       // string index, "" when unknown
  uint32_t function;   // string index, "" when unknown
  uint32_t line;       // 0 when unknown
  uint32_t module;     // index into MODL, or kNoIndex
  uint64_t address;    // code address relative to the module's load_base (raw when no module)
};
struct MetricRecord {  // METR: one per metric column of the node records
  uint32_t name;       // string index
  uint16_t type;       // MetricType
  uint16_t merge;      // MetricMerge: how two values of the same node combine
};
struct ThreadRecord {  // THRD: header of one thread's sub-DRG, then its nodes
  uint32_t index;      // tool's thread number in this process (0 = initial thread)
  uint32_t flags;      // ThreadFlags
  uint64_t os_tid;
  uint32_t node_count;
  // Version 1: 0. Version 2: the position in this section of an earlier thread whose call-tree
  // structure (parents and regions) this one repeats, or kNoIndex: its structure follows.
  uint32_t same_shape;
};
struct NodeRecord {  // version 1: followed by metric_count 8-byte values (u64 or f64 bits)
  uint32_t parent;   // node index within the thread, kNoIndex for the root; always < own index
  uint32_t region;   // index into REGN
};
#pragma pack(pop)
// The records are the file's layout: a size that changes is a new format version.
static_assert(sizeof(FileHeader) == 40, "FileHeader is 40 bytes on disk");
static_assert(sizeof(SectionHeader) == 16, "SectionHeader is 16 bytes on disk");
static_assert(sizeof(ModuleRecord) == 16, "ModuleRecord is 16 bytes on disk");
static_assert(sizeof(RegionRecord) == 32, "RegionRecord is 32 bytes on disk");
static_assert(sizeof(MetricRecord) == 8, "MetricRecord is 8 bytes on disk");
static_assert(sizeof(ThreadRecord) == 24, "ThreadRecord is 24 bytes on disk");
static_assert(sizeof(NodeRecord) == 8, "NodeRecord is 8 bytes on disk");

// The few-files layout (docs/experiment-format.md, "Containers"): the rank files of one node in
// one file, NAME.sdrc: a ContainerHeader, the index (`count` ContainerEntry records, by rank),
// then the rank files unchanged, each at the offset its entry gives. The index says which ranks
// the file holds, so a reader names the ranks a truncated or damaged container loses.
inline constexpr char kContainerMagic[8] = {'S', 'C', 'A', 'L', 'E', 'A', 'C', 'N'};
inline constexpr uint32_t kContainerVersion = 1;
inline constexpr std::string_view kContainerSuffix = ".sdrc";
#pragma pack(push, 1)
struct ContainerHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;  // sizeof(ContainerHeader)
  uint32_t count;        // index entries
  uint32_t index_crc32;  // CRC-32 (IEEE) of the index
  uint64_t file_size;    // the whole container, header included
};
struct ContainerEntry {
  int32_t rank;
  uint32_t crc32;   // CRC-32 (IEEE) of the rank file's bytes
  uint64_t offset;  // of the rank file, from the start of the container
  uint64_t length;  // of the rank file
};
#pragma pack(pop)
static_assert(sizeof(ContainerHeader) == 32, "ContainerHeader is 32 bytes on disk");
static_assert(sizeof(ContainerEntry) == 24, "ContainerEntry is 24 bytes on disk");

enum ThreadFlags : uint32_t { kThreadInitial = 1, kThreadEnded = 2, kThreadMpiCalls = 4 };

enum class MetricType : uint16_t { U64 = 0, F64 = 1 };
enum class MetricMerge : uint16_t { Sum = 0, Min = 1, Max = 2 };

// The tables below are indexed by their enums' values: row i must hold value i.
template <class Spec, size_t N, class Id>
constexpr bool values_dense(const Spec (&table)[N], Id Spec::*id) {
  for (size_t i = 0; i < N; ++i)
    if (size_t(table[i].*id) != i) return false;
  return true;
}

// What the analyses need to know about a region kind besides its name (KindTraits below).
enum KindTrait : uint16_t {
  kNoTrait = 0,
  kWaits = 1,       // its time may be waiting (a barrier, a lock, a taskwait, an MPI call, ...)
  kBarrier = 2,     // waits for every thread of the team (implicit and explicit barriers)
  kPartial = 4,     // one or a few threads run its body (single, sections, masked)
  kCoarse = 8,      // reads counters by default (SCALEA_COUNTER_REGIONS=coarse, docs/counters.md)
  kUndivided = 16,  // code every PE that enters it runs whole (not divided among them)
  kNamed = 32,      // its regions are called by their name (a user region, a function, an MPI call)
  kGathers = 64,    // the team waits there for all its threads: the idle time of the code before
                    // it shows as its waits (barriers, taskwait, taskgroup, reduction)
  kSpins = 128,     // its time is threads polling until others' work is done (flush)
  kTeam = 256,      // starts threads that run its body (a parallel region's team, a league of
                    // teams): fork and join on the master, a team size, and the time its other
                    // threads spend outside it while the master is inside is fork/join or idle
};

// Every kind of code region, one row each. Values are stored in files: append only, never
// renumber, and they run 0, 1, 2, ... (checked below). `label` is what reports call its regions
// (Region::label; a kNamed kind's regions go by their own name when they have one, a subkind
// may add to it: the loop's schedule, the implicit barrier's origin). `cost` names the kind's
// figure in the machine file of `scalea calibrate` (the tool's own cost per visit,
// docs/overhead-model.md NOISE): barriers of every flavour share the barrier's, critical and
// nest locks the lock's.
// clang-format off
#define SCALEA_REGION_KINDS(X)                                                                                                \
  /* id                    value name                      label                 cost          traits */                      \
  X(Program,               0,    "program",                "program",            "program",    kUndivided | kNamed)           \
  X(Function,              1,    "function",               "",                   "function",   kUndivided | kNamed)           \
  X(User,                  2,    "user",                   "",                   "user",       kUndivided | kCoarse | kNamed) \
  X(Parallel,              3,    "parallel",               "parallel",           "parallel",   kUndivided | kCoarse | kTeam)  \
  X(Loop,                  4,    "loop",                   "loop",               "loop",       kCoarse)                       \
  X(Sections,              5,    "sections",               "sections",           "sections",   kPartial | kCoarse)            \
  X(Single,                6,    "single",                 "single",             "single",     kPartial | kCoarse)            \
  X(Masked,                7,    "masked",                 "masked",             "masked",     kPartial)                      \
  X(Workshare,             8,    "workshare",              "workshare",          "workshare",  kCoarse)                       \
  X(Taskloop,              9,    "taskloop",               "taskloop",           "taskloop",   kCoarse)                       \
  X(Task,                  10,   "task",                   "task",               "task",       kNoTrait)                      \
  X(BarrierImplicit,       11,   "barrier_implicit",       "barrier (implicit)", "barrier",    kWaits | kBarrier | kGathers)  \
  X(BarrierExplicit,       12,   "barrier_explicit",       "barrier",            "barrier",    kWaits | kBarrier | kGathers)  \
  X(BarrierImplementation, 13,   "barrier_implementation", "barrier (runtime)",  "barrier",    kWaits | kGathers)             \
  X(Taskwait,              14,   "taskwait",               "taskwait",           "taskwait",   kWaits | kGathers)             \
  X(Taskgroup,             15,   "taskgroup",              "taskgroup",          "taskgroup",  kWaits | kGathers)             \
  X(Critical,              16,   "critical",               "critical",           "lock",       kWaits)                        \
  X(Lock,                  17,   "lock",                   "lock",               "lock",       kWaits)                        \
  X(NestLock,              18,   "nest_lock",              "nest_lock",          "lock",       kWaits)                        \
  X(Atomic,                19,   "atomic",                 "atomic",             "atomic",     kWaits)                        \
  X(Ordered,               20,   "ordered",                "ordered",            "ordered",    kWaits)                        \
  X(Reduction,             21,   "reduction",              "reduction",          "reduction",  kWaits | kGathers)             \
  X(Flush,                 22,   "flush",                  "flush",              "flush",      kSpins)                        \
  X(Cancel,                23,   "cancel",                 "cancel",             "cancel",     kNoTrait)                      \
  X(Distribute,            24,   "distribute",             "distribute",         "distribute", kCoarse)                       \
  X(Scope,                 25,   "scope",                  "scope",              "scope",      kNoTrait)                      \
  X(Mpi,                   26,   "mpi",                    "",                   "mpi",        kWaits | kCoarse | kNamed)     \
  X(Teams,                 27,   "teams",                  "teams",              "teams",      kUndivided | kCoarse | kTeam)  \
  X(Sampled,               28,   "sampled",                "sampled",            "sampled",    kNoTrait)      \
  X(Io,                    29,   "io",                     "I/O",                "io",         kNamed)
// clang-format on

enum class RegionKind : uint16_t {
#define SCALEA_X(id, value, name, label, cost, traits) id = value,
  SCALEA_REGION_KINDS(SCALEA_X)
#undef SCALEA_X
};

struct RegionKindSpec {
  RegionKind kind;
  const char* name;
  const char* label;
  const char* cost;
  uint16_t traits;  // KindTrait bits
};
inline constexpr RegionKindSpec kRegionKinds[] = {
#define SCALEA_X(id, value, name, label, cost, traits) \
  {RegionKind::id, name, label, cost, uint16_t(traits)},
    SCALEA_REGION_KINDS(SCALEA_X)
#undef SCALEA_X
};
inline constexpr uint16_t kRegionKindCount = uint16_t(sizeof kRegionKinds / sizeof kRegionKinds[0]);

static_assert(values_dense(kRegionKinds, &RegionKindSpec::kind),
              "SCALEA_REGION_KINDS: values must be 0, 1, 2, ... in order");

// Kinds read from a file may be out of range: they are "unknown", with no traits.
inline constexpr bool region_kind_valid(RegionKind k) { return uint16_t(k) < kRegionKindCount; }
inline constexpr std::string_view region_kind_name(RegionKind k) {
  return region_kind_valid(k) ? kRegionKinds[uint16_t(k)].name : "unknown";
}
inline constexpr std::string_view region_kind_label(RegionKind k) {
  return region_kind_valid(k) ? kRegionKinds[uint16_t(k)].label : "unknown";
}
inline constexpr std::string_view region_kind_cost(RegionKind k) {
  return region_kind_valid(k) ? kRegionKinds[uint16_t(k)].cost : "unknown";
}
inline constexpr bool region_kind_has(RegionKind k, KindTrait t) {
  return region_kind_valid(k) && (kRegionKinds[uint16_t(k)].traits & t) != 0;
}

// Subkinds. Loop: the schedule when the runtime says (OpenMP 5.2 work types).
enum class LoopSchedule : uint16_t { Unknown = 0, Static = 1, Dynamic = 2, Guided = 3, Other = 4 };
// Implicit barriers: where they come from, when known.
enum class BarrierFlavour : uint16_t { Unknown = 0, Workshare = 1, Parallel = 2, Teams = 3 };
// Their labels, by value ("": the kind's own label).
inline constexpr const char* kLoopScheduleLabels[] = {"", "loop (static)", "loop (dynamic)",
                                                      "loop (guided)", "loop (other)"};
inline constexpr const char* kBarrierFlavourLabels[] = {
    "", "barrier (implicit, end of worksharing)", "barrier (implicit, join)",
    "barrier (implicit, teams)"};
// POSIX and C stdio I/O calls (collect/io): what the call does to a file; the region's name is
// the function called ("pwrite", "fread").
enum class IoOp : uint16_t { Open = 0, Close = 1, Read = 2, Write = 3, Sync = 4 };
inline constexpr const char* kIoOpLabels[] = {"open", "close", "read", "write", "sync"};
static_assert(std::size(kLoopScheduleLabels) == size_t(LoopSchedule::Other) + 1);
static_assert(std::size(kBarrierFlavourLabels) == size_t(BarrierFlavour::Teams) + 1);
static_assert(std::size(kIoOpLabels) == size_t(IoOp::Sync) + 1);
// A region's label from its kind and subkind alone, "" when the kind's label is the whole of it.
inline constexpr std::string_view subkind_label(RegionKind k, uint16_t subkind) {
  if (k == RegionKind::Loop && subkind < std::size(kLoopScheduleLabels))
    return kLoopScheduleLabels[subkind];
  if (k == RegionKind::BarrierImplicit && subkind < std::size(kBarrierFlavourLabels))
    return kBarrierFlavourLabels[subkind];
  if (k == RegionKind::Io && subkind < std::size(kIoOpLabels)) return kIoOpLabels[subkind];
  return "";
}

// MPI functions: the class that decides where their time is classified (the subkind of their
// regions). `spec` is the class's name in collect/mpi/mpi_spec.txt: gen_wrappers.py reads this
// table, one row per line.
// clang-format off
#define SCALEA_MPI_CLASSES(X)                          \
  /* id        value name          spec */             \
  X(P2P,          0, "p2p",        "p2p")              \
  X(Collective,   1, "collective", "coll")             \
  X(Sync,         2, "sync",       "sync")             \
  X(OneSided,     3, "one-sided",  "rma")              \
  X(Io,           4, "io",         "io")               \
  X(Management,   5, "management", "mgmt")             \
  X(Wait,         6, "wait",       "wait")
// clang-format on

enum class MpiClass : uint16_t {
#define SCALEA_X(id, value, name, spec) id = value,
  SCALEA_MPI_CLASSES(SCALEA_X)
#undef SCALEA_X
};
struct MpiClassSpec {
  MpiClass cls;
  const char* name;
  const char* spec;
};
inline constexpr MpiClassSpec kMpiClasses[] = {
#define SCALEA_X(id, value, name, spec) {MpiClass::id, name, spec},
    SCALEA_MPI_CLASSES(SCALEA_X)
#undef SCALEA_X
};
inline constexpr uint16_t kMpiClassCount = uint16_t(sizeof kMpiClasses / sizeof kMpiClasses[0]);
static_assert(values_dense(kMpiClasses, &MpiClassSpec::cls),
              "SCALEA_MPI_CLASSES: values must be 0, 1, 2, ... in order");
inline constexpr std::string_view mpi_class_name(uint16_t subkind) {
  return subkind < kMpiClassCount ? kMpiClasses[subkind].name : "unknown";
}

// What a metric's values measure.
enum class MetricUnit : uint8_t {
  Count,  // events: visits, iterations, tasks, ... (counter columns too)
  Bytes,
  Ns,   // nanoseconds (the collector converts its clock ticks when it writes)
  Ns2,  // nanoseconds squared (sum of squared times)
};
// How a node's value relates to its subtree's.
enum class MetricScope : uint8_t {
  Own,        // the node's own: its inclusive value is the sum over its subtree
  Inclusive,  // taken across the region, subregions included: exclusive = value - children's
  Visit,      // a statistic of single visits' inclusive times (min, max, sum of squares)
};

// The metric columns the OpenMP, user-region and MPI adapters fill, one row each: the column name,
// its type and merge rule in the file (METR), its unit and scope, and the field of the collector's
// per-node statistics (collect/core/recorder_types.hpp, Stats) it is written from. A file lists its
// columns in METR, so readers look metrics up by name, and files may carry more (PAPI counters).
//   visits          completed entries of the region on this call path
//   time            their wall time, subregions included
//   time_min, _max  the shortest and the longest visit
//   time_sumsq      sum of the visits' squared times
//   wait            waiting inside the region (barrier, lock, taskwait, MPI partner)
//   fork            parallel_begin -> this thread's implicit task
//   join            master: its implicit task end -> parallel_end
//   task_exec       explicit tasks this thread ran while the region was open
//   team_size       parallel: sum of the team sizes over the visits
//   executed        single: visits that ran the body
//   iterations      loop, taskloop: the count ompt_callback_work gives at the start (libomp: the
//                   loop's whole trip count, on every thread of the team)
//   dispatches      chunks or sections dispatched (ompt_callback_dispatch)
//   tasks_created   explicit tasks created here
//   bytes_sent, _recv  MPI: payload bytes the calls sent and received
//   transfer        MPI: time not spent waiting for a partner

// Rows a test build adds (tests/unit/fake_metric.hpp): a metric is one row of the table below.
#ifndef SCALEA_EXTRA_CORE_METRICS
#define SCALEA_EXTRA_CORE_METRICS(X)
#endif
// clang-format off
#define SCALEA_CORE_METRICS(X)                                                    \
  /* id            name             type merge unit   scope      Stats field */  \
  X(Visits,       "visits",        U64, Sum, Count, Own,       visits)           \
  X(TimeSum,      "time",          U64, Sum, Ns,    Inclusive, time)             \
  X(TimeMin,      "time_min",      U64, Min, Ns,    Visit,     time_min)         \
  X(TimeMax,      "time_max",      U64, Max, Ns,    Visit,     time_max)         \
  X(TimeSumSq,    "time_sumsq",    F64, Sum, Ns2,   Visit,     time_sumsq)       \
  X(Wait,         "wait",          U64, Sum, Ns,    Own,       wait)             \
  X(Fork,         "fork",          U64, Sum, Ns,    Own,       fork)             \
  X(Join,         "join",          U64, Sum, Ns,    Own,       join)             \
  X(TaskExec,     "task_exec",     U64, Sum, Ns,    Inclusive, task_exec)        \
  X(TeamSize,     "team_size",     U64, Sum, Count, Own,       team_size)        \
  X(Executed,     "executed",      U64, Sum, Count, Own,       executed)         \
  X(Iterations,   "iterations",    U64, Sum, Count, Own,       iterations)       \
  X(Dispatches,   "dispatches",    U64, Sum, Count, Own,       dispatches)       \
  X(TasksCreated, "tasks_created", U64, Sum, Count, Own,       tasks_created)    \
  X(BytesSent,    "bytes_sent",    U64, Sum, Bytes, Own,       bytes_sent)       \
  X(BytesRecv,    "bytes_recv",    U64, Sum, Bytes, Own,       bytes_recv)       \
  X(Transfer,     "transfer",      U64, Sum, Ns,    Own,       transfer)         \
  SCALEA_EXTRA_CORE_METRICS(X)
// clang-format on

enum class CoreMetric : uint32_t {
#define SCALEA_X(id, name, type, merge, unit, scope, field) id,
  SCALEA_CORE_METRICS(SCALEA_X)
#undef SCALEA_X
      Count
};
inline constexpr uint32_t kCoreMetricCount = uint32_t(CoreMetric::Count);

struct MetricSpec {
  const char* name;
  MetricType type;
  MetricMerge merge;
  MetricUnit unit;
  MetricScope scope;
};
inline constexpr MetricSpec kCoreMetrics[kCoreMetricCount] = {
#define SCALEA_X(id, name, type, merge, unit, scope, field) \
  {name, MetricType::type, MetricMerge::merge, MetricUnit::unit, MetricScope::scope},
    SCALEA_CORE_METRICS(SCALEA_X)
#undef SCALEA_X
};

// The core metric of this column name, or nullptr (a counter column such as "papi:PAPI_L1_DCM").
inline constexpr const MetricSpec* core_metric(std::string_view name) {
  for (const MetricSpec& m : kCoreMetrics)
    if (name == m.name) return &m;
  return nullptr;
}
// Counter columns count events, and are deltas taken at the region's entry and exit (inclusive).
inline constexpr MetricUnit metric_unit(std::string_view name) {
  const MetricSpec* m = core_metric(name);
  return m ? m->unit : MetricUnit::Count;
}
inline constexpr MetricScope metric_scope(std::string_view name) {
  const MetricSpec* m = core_metric(name);
  return m ? m->scope : MetricScope::Inclusive;
}
inline constexpr bool is_time_metric(std::string_view name) {
  return metric_unit(name) == MetricUnit::Ns;
}

// CRC-32 (IEEE 802.3, reflected), table-free bitwise form extended to a small table at first use.
inline uint32_t crc32_update(uint32_t crc, const void* data, size_t len) {
  static const auto table = [] {
    struct T {
      uint32_t v[256];
    } t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t.v[i] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < len; ++i) crc = table.v[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// The container of the node numbered `node` (0, 1, ... in the order of the nodes' first ranks).
inline std::string container_file_name(int node) {
  std::string digits = std::to_string(node);
  return "node-" + std::string(digits.size() < 6 ? 6 - digits.size() : 0, '0') + digits +
         std::string(kContainerSuffix);
}

// One rank file for a container: its rank, bytes and their CRC-32 (crc32_update(0, bytes) or a
// faster equal one; the rank that encoded the file can compute it).
struct ContainerPart {
  int32_t rank = 0;
  uint32_t crc32 = 0;
  std::vector<char> bytes;
};

// A container (the few-files layout) of `parts`, in that order. Each part's bytes are freed once
// copied in, so they and the container are not both whole in memory.
inline std::vector<char> encode_container(std::vector<ContainerPart>& parts) {
  std::vector<ContainerEntry> index(parts.size());
  uint64_t at = sizeof(ContainerHeader) + index.size() * sizeof(ContainerEntry);
  for (size_t i = 0; i < index.size(); ++i) {
    index[i] = ContainerEntry{parts[i].rank, parts[i].crc32, at, parts[i].bytes.size()};
    at += parts[i].bytes.size();
  }
  ContainerHeader h{};
  std::memcpy(h.magic, kContainerMagic, sizeof h.magic);
  h.version = kContainerVersion;
  h.header_size = sizeof h;
  h.count = uint32_t(index.size());
  h.index_crc32 = crc32_update(0, index.data(), index.size() * sizeof(ContainerEntry));
  h.file_size = at;
  std::vector<char> out;
  out.reserve(at);
  const char* head = reinterpret_cast<const char*>(&h);
  out.insert(out.end(), head, head + sizeof h);
  const char* entries = reinterpret_cast<const char*>(index.data());
  out.insert(out.end(), entries, entries + index.size() * sizeof(ContainerEntry));
  for (ContainerPart& part : parts) {
    out.insert(out.end(), part.bytes.begin(), part.bytes.end());
    std::vector<char>().swap(part.bytes);
  }
  return out;
}

}  // namespace scalea::format
