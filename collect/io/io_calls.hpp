// POSIX and C stdio I/O calls as regions (docs/architecture.md, "collect/io"; docs/user-guide.md,
// "File I/O"). libscalea-omp.so defines open, read, write, fwrite, ... itself: preloaded (`scalea
// run`) or linked ahead of the C library, the program's calls reach these wrappers, which call the
// C library's functions (dlsym(RTLD_NEXT)) and record each call site as a region of kind `io`
// below the thread's current region: visits, time, bytes read (bytes_recv) and written
// (bytes_sent). Everything the tool reads and writes itself goes straight through (tl_tool_io).
#pragma once
#include <cstdint>

namespace scalea::io {

// The wrapped functions: id, the C library's function the wrapper calls (the variadic fprintf
// calls vfprintf), the region's name (the function a program calls: the fortified __read_chk is
// "read") and what it does to a file (format::IoOp).
// clang-format off
#define SCALEA_IO_CALLS(X)                                \
  X(Open,       "open",           "open",      Open)      \
  X(Open64,     "open64",         "open",      Open)      \
  X(Open2,      "__open_2",       "open",      Open)      \
  X(Open64_2,   "__open64_2",     "open",      Open)      \
  X(Openat,     "openat",         "openat",    Open)      \
  X(Openat64,   "openat64",       "openat",    Open)      \
  X(Openat2,    "__openat_2",     "openat",    Open)      \
  X(Creat,      "creat",          "creat",     Open)      \
  X(Creat64,    "creat64",        "creat",     Open)      \
  X(Fopen,      "fopen",          "fopen",     Open)      \
  X(Fopen64,    "fopen64",        "fopen",     Open)      \
  X(Close,      "close",          "close",     Close)     \
  X(Fclose,     "fclose",         "fclose",    Close)     \
  X(Read,       "read",           "read",      Read)      \
  X(ReadChk,    "__read_chk",     "read",      Read)      \
  X(Pread,      "pread",          "pread",     Read)      \
  X(Pread64,    "pread64",        "pread",     Read)      \
  X(PreadChk,   "__pread_chk",    "pread",     Read)      \
  X(Pread64Chk, "__pread64_chk",  "pread",     Read)      \
  X(Readv,      "readv",          "readv",     Read)      \
  X(Preadv,     "preadv",         "preadv",    Read)      \
  X(Preadv64,   "preadv64",       "preadv",    Read)      \
  X(Fread,      "fread",          "fread",     Read)      \
  X(FreadChk,   "__fread_chk",    "fread",     Read)      \
  X(Write,      "write",          "write",     Write)     \
  X(Pwrite,     "pwrite",         "pwrite",    Write)     \
  X(Pwrite64,   "pwrite64",       "pwrite",    Write)     \
  X(Writev,     "writev",         "writev",    Write)     \
  X(Pwritev,    "pwritev",        "pwritev",   Write)     \
  X(Pwritev64,  "pwritev64",      "pwritev",   Write)     \
  X(Fwrite,     "fwrite",         "fwrite",    Write)     \
  X(Fputs,      "fputs",          "fputs",     Write)     \
  X(Fprintf,    "vfprintf",       "fprintf",   Write)     \
  X(FprintfChk, "__vfprintf_chk", "fprintf",   Write)     \
  X(Fsync,      "fsync",          "fsync",     Sync)      \
  X(Fdatasync,  "fdatasync",      "fdatasync", Sync)      \
  X(Fflush,     "fflush",         "fflush",    Sync)
// clang-format on

enum Fn : uint32_t {
#define SCALEA_X(id, symbol, name, op) k##id,
  SCALEA_IO_CALLS(SCALEA_X)
#undef SCALEA_X
      kFnCount
};

}  // namespace scalea::io
