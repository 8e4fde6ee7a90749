// The on-disk experiment format, shared by the writer (collect/, inside the user's process) and
// the loader (drg/). Header-only, plain C++17, no dependencies: collect/ must stay light.
// The format is documented in docs/experiment-format.md; change both together and bump kVersion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scalea::format {

inline constexpr char kMagic[8] = {'S', 'C', 'A', 'L', 'E', 'A', 'D', 'G'};
inline constexpr uint32_t kVersion = 1;
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
struct ThreadRecord {  // THRD: header of one thread's sub-DRG, then node_count NodeRecords
  uint32_t index;      // tool's thread number in this process (0 = initial thread)
  uint32_t flags;      // ThreadFlags
  uint64_t os_tid;
  uint32_t node_count;
  uint32_t reserved;
};
struct NodeRecord {    // followed by metric_count 8-byte values (u64 or f64 bits)
  uint32_t parent;     // node index within the thread, kNoIndex for the root; always < own index
  uint32_t region;     // index into REGN
};
#pragma pack(pop)

enum ThreadFlags : uint32_t { kThreadInitial = 1, kThreadEnded = 2, kThreadMpiCalls = 4 };

enum class MetricType : uint16_t { U64 = 0, F64 = 1 };
enum class MetricMerge : uint16_t { Sum = 0, Min = 1, Max = 2 };

// Every kind of code region. Values are stored in files: append only, never renumber.
#define SCALEA_REGION_KINDS(X)                                                      \
  X(Program, 0, "program") X(Function, 1, "function") X(User, 2, "user")           \
  X(Parallel, 3, "parallel") X(Loop, 4, "loop") X(Sections, 5, "sections")         \
  X(Single, 6, "single") X(Masked, 7, "masked") X(Workshare, 8, "workshare")       \
  X(Taskloop, 9, "taskloop") X(Task, 10, "task") X(BarrierImplicit, 11, "barrier_implicit") \
  X(BarrierExplicit, 12, "barrier_explicit") X(BarrierImplementation, 13, "barrier_implementation") \
  X(Taskwait, 14, "taskwait") X(Taskgroup, 15, "taskgroup") X(Critical, 16, "critical")   \
  X(Lock, 17, "lock") X(NestLock, 18, "nest_lock") X(Atomic, 19, "atomic")           \
  X(Ordered, 20, "ordered") X(Reduction, 21, "reduction") X(Flush, 22, "flush")      \
  X(Cancel, 23, "cancel") X(Distribute, 24, "distribute") X(Scope, 25, "scope")      \
  X(Mpi, 26, "mpi")

enum class RegionKind : uint16_t {
#define SCALEA_X(id, value, name) id = value,
  SCALEA_REGION_KINDS(SCALEA_X)
#undef SCALEA_X
};
inline constexpr uint16_t kRegionKindCount = 27;

inline constexpr std::string_view region_kind_name(RegionKind k) {
  switch (k) {
#define SCALEA_X(id, value, name) \
  case RegionKind::id:            \
    return name;
    SCALEA_REGION_KINDS(SCALEA_X)
#undef SCALEA_X
  }
  return "unknown";
}

// Subkinds. Loop: the schedule when the runtime says (OpenMP 5.2 work types).
enum class LoopSchedule : uint16_t { Unknown = 0, Static = 1, Dynamic = 2, Guided = 3, Other = 4 };
// Implicit barriers: where they come from, when known.
enum class BarrierFlavour : uint16_t { Unknown = 0, Workshare = 1, Parallel = 2, Teams = 3 };
// MPI functions: the class that decides where their time is classified.
enum class MpiClass : uint16_t {
  P2P = 0, Collective = 1, Sync = 2, OneSided = 3, Io = 4, Management = 5, Wait = 6
};

// The metric columns the OpenMP and user-region adapters fill. A file lists its columns in METR,
// so readers look metrics up by name and files may carry more (e.g. PAPI counters, MPI bytes).
#define SCALEA_CORE_METRICS(X)                                                            \
  X(Visits, "visits", U64, Sum)        /* completed entries of the region on this path */   \
  X(TimeSum, "time", U64, Sum)         /* inclusive wall time, ns */                         \
  X(TimeMin, "time_min", U64, Min)     /* shortest single visit, ns */                       \
  X(TimeMax, "time_max", U64, Max)     /* longest single visit, ns */                        \
  X(TimeSumSq, "time_sumsq", F64, Sum) /* sum of squared visit times, ns^2 */                \
  X(Wait, "wait", U64, Sum)            /* waiting inside the region (barrier, lock), ns */   \
  X(Fork, "fork", U64, Sum)            /* parallel_begin -> this thread's implicit task, ns */ \
  X(Join, "join", U64, Sum)            /* master: implicit task end -> parallel_end, ns */   \
  X(TaskExec, "task_exec", U64, Sum)   /* explicit tasks this thread ran while open, ns */   \
  X(TeamSize, "team_size", U64, Sum)   /* parallel: sum of team sizes over visits */          \
  X(Executed, "executed", U64, Sum)    /* single: visits that ran the body */                \
  X(Iterations, "iterations", U64, Sum) /* loop/taskloop: iteration count the runtime gave */ \
  X(Dispatches, "dispatches", U64, Sum) /* chunks/sections dispatched (ompt_callback_dispatch) */ \
  X(TasksCreated, "tasks_created", U64, Sum) /* explicit tasks created here */ \
  X(BytesSent, "bytes_sent", U64, Sum) /* MPI: payload bytes this call sent */ \
  X(BytesRecv, "bytes_recv", U64, Sum) /* MPI: payload bytes this call received */ \
  X(Transfer, "transfer", U64, Sum)    /* MPI: time not spent waiting for a partner, ns */

enum class CoreMetric : uint32_t {
#define SCALEA_X(id, name, type, merge) id,
  SCALEA_CORE_METRICS(SCALEA_X)
#undef SCALEA_X
  Count
};
inline constexpr uint32_t kCoreMetricCount = uint32_t(CoreMetric::Count);

struct MetricSpec {
  const char* name;
  MetricType type;
  MetricMerge merge;
};
inline constexpr MetricSpec kCoreMetrics[kCoreMetricCount] = {
#define SCALEA_X(id, name, type, merge) {name, MetricType::type, MetricMerge::merge},
    SCALEA_CORE_METRICS(SCALEA_X)
#undef SCALEA_X
};

// CRC-32 (IEEE 802.3, reflected), table-free bitwise form extended to a small table at first use.
inline uint32_t crc32_update(uint32_t crc, const void* data, size_t len) {
  static const auto table = [] {
    struct T { uint32_t v[256]; } t{};
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

}  // namespace scalea::format
