// The I/O wrappers of libscalea-omp.so (io_calls.hpp). Each one:
//  - goes straight to the C library's function when the tool is not recording (before it starts,
//    after the experiment is written), when SCALEA_IO=off, on threads the tool has not registered,
//    when the caller is the tool's own code or the OpenMP runtime's, and when the I/O happens
//    inside a call already being recorded or an MPI call (tl_tool_io: the re-entry guard) or
//    inside an event of another adapter (the thread's in_callback);
//  - otherwise opens a region for its call site (kind io, subkind format::IoOp, name the function
//    called, address the return address into the caller), found through the thread's construct
//    cache (construct_child, keyed by the function and the call site), calls the real function
//    outside the tool (ToolScope only around the recorder's work, so a thread blocked in a read
//    never delays the writer) and closes the region with the bytes the call moved;
//  - leaves errno as the real function left it, and returns what it returned.
#undef _FORTIFY_SOURCE
#include "io_calls.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cerrno>
#include <mutex>

#include "../core/log.hpp"
#include "../core/recorder.hpp"

#define SCALEA_EXPORT extern "C" __attribute__((visibility("default")))
// The call site: the return address into the caller's code (used in the exported functions).
#define RA __builtin_return_address(0)

namespace scalea::io {

using namespace scalea::collect;
using format::IoOp;

namespace {

struct FnInfo {
  const char* symbol;
  const char* name;
  IoOp op;
};
constexpr FnInfo kFns[] = {
#define SCALEA_X(id, symbol, name, op) {symbol, name, IoOp::op},
    SCALEA_IO_CALLS(SCALEA_X)
#undef SCALEA_X
};
static_assert(sizeof kFns / sizeof *kFns == kFnCount);

// The C library's functions (or the next interposer's), resolved on the first call of any of them.
std::atomic<void*> g_real[kFnCount];
std::atomic<bool> g_resolved{false};
// Set while this thread resolves them: a call made meanwhile (by dlsym, or an allocator it calls)
// cannot reach the real function yet and takes the fallback (the system call where there is one).
__thread int tl_resolving __attribute__((tls_model("initial-exec"))) = 0;

void resolve_all() {
  if (tl_resolving) return;
  tl_resolving = 1;
  int saved = errno;
  for (uint32_t f = 0; f < kFnCount; ++f)
    if (!g_real[f].load(std::memory_order_relaxed))
      g_real[f].store(dlsym(RTLD_NEXT, kFns[f].symbol), std::memory_order_relaxed);
  g_resolved.store(true, std::memory_order_release);
  errno = saved;
  tl_resolving = 0;
}

template <class F>
F real(Fn f) {
  void* p = g_real[f].load(std::memory_order_relaxed);
  if (__builtin_expect(p == nullptr, 0) && !g_resolved.load(std::memory_order_acquire)) {
    resolve_all();
    p = g_real[f].load(std::memory_order_relaxed);
  }
  return reinterpret_cast<F>(p);
}

// Code whose I/O is not the program's: the tool's own libraries (the experiment, its messages,
// its signal handler's pipe) and the OpenMP runtime (its start-up reads /proc and /sys: that time
// is the runtime's start, docs/overhead-model.md program.runtime_startup). Their loaded segments,
// found once, at the first call made while recording.
struct CodeRange {
  uintptr_t lo, hi;
};
constexpr int kMaxSkipped = 8;
CodeRange g_skipped[kMaxSkipped];
std::atomic<int> g_skipped_count{0};

bool not_the_programs(const char* path, uintptr_t base, uintptr_t self) {
  if (base == self) return true;
  const char* name = path ? strrchr(path, '/') : nullptr;
  name = name ? name + 1 : path ? path : "";
  for (const char* prefix : {"libscalea-", "libomp.", "libgomp.", "libiomp5."})
    if (strncmp(name, prefix, strlen(prefix)) == 0) return true;
  return false;
}
int add_skipped(dl_phdr_info* info, size_t, void* self) {
  if (!not_the_programs(info->dlpi_name, info->dlpi_addr, reinterpret_cast<uintptr_t>(self)))
    return 0;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  int n = g_skipped_count.load(std::memory_order_relaxed);
  if (lo < hi && n < kMaxSkipped) {
    g_skipped[n] = CodeRange{lo, hi};
    g_skipped_count.store(n + 1, std::memory_order_release);
  }
  return 0;
}
void find_skipped_code() {
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&add_skipped), &self))
    dl_iterate_phdr(add_skipped, self.dli_fbase);
}
bool skipped_code(const void* site) {
  uintptr_t a = reinterpret_cast<uintptr_t>(site);
  for (int i = 0, n = g_skipped_count.load(std::memory_order_acquire); i < n; ++i)
    if (a >= g_skipped[i].lo && a < g_skipped[i].hi) return true;
  return false;
}

// Says when another library's wrappers of these functions come first (another tool's): the calls
// then reach the tool from that library, whose code is the call site. A sanitizer's interceptors
// are not named: a sanitized program has them always (docs/user-guide.md says what it means),
// and a line in every run of it would be noise.
void say_if_interposed() {
  void* first = dlsym(RTLD_DEFAULT, "write");
  Dl_info info, self;
  if (!first || !dladdr(first, &info) || !dladdr(reinterpret_cast<void*>(&resolve_all), &self) ||
      info.dli_fbase == self.dli_fbase)
    return;
  const char* name = info.dli_fname ? std::strrchr(info.dli_fname, '/') : nullptr;
  name = name ? name + 1 : info.dli_fname ? info.dli_fname : "";
  for (const char* sanitizer : {"libclang_rt.", "libasan", "libtsan", "libubsan", "liblsan"})
    if (std::strncmp(name, sanitizer, std::strlen(sanitizer)) == 0) return;
  // ThreadSanitizer's runtime is linked into the program itself.
  if (dlsym(RTLD_DEFAULT, "__tsan_init") || dlsym(RTLD_DEFAULT, "__asan_init")) return;
  log_message(
      "I/O calls reach the tool through %s's own wrappers (a sanitizer's?): they are recorded "
      "below the right regions, but their call sites are that library's code",
      info.dli_fname ? info.dli_fname : "another library");
}

// Whether calls are recorded (SCALEA_IO), decided at the first call made while recording, which
// also finds the code whose calls are not the program's and says once what comes first.
std::atomic<int> g_mode{0};  // 0 not decided yet, 1 recorded, 2 off
__attribute__((noinline)) bool decide() {
  bool on = Recorder::get().config().io;
  static std::once_flag once;
  if (on)
    std::call_once(once, [] {
      find_skipped_code();
      say_if_interposed();
    });
  int expected = 0;
  g_mode.compare_exchange_strong(expected, on ? 1 : 2);
  return on;
}
inline bool io_on() {
  int m = g_mode.load(std::memory_order_relaxed);
  return __builtin_expect(m == 1, 1) || (m == 0 && decide());
}

// The region of a call site, for the construct cache's misses (captures nothing).
uint32_t site_region(ThreadState&, uint64_t key, const void* code) {
  const FnInfo& f = kFns[frame_id(key)];
  return Recorder::get().site_region(RegionKind::Io, uint16_t(f.op), f.name, code);
}

// One wrapped call, made from `site`. Records nothing when the call goes straight through (see the
// top of the file).
class Call {
 public:
  __attribute__((always_inline)) Call(Fn fn, const void* site) : key_(frame_key(FrameTag::Io, fn)) {
    if (tl_tool_io || !active()) return;
    tl_tool_io = 1;  // from here on, this thread's I/O is not recorded again
    guarded_ = true;
    open(site);
  }
  ~Call() {
    if (guarded_) tl_tool_io = 0;
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  // Closes the region with the bytes the call read and wrote.
  void done(uint64_t read, uint64_t written) {
    if (t_) close(read, written);
  }

 private:
  __attribute__((noinline)) void open(const void* site) {
    int saved = errno;
    // Only threads the tool already knows (the initial thread, OpenMP threads, threads that called
    // MPI or the region API): registering others here would count the MPI library's and other
    // libraries' helper threads among the program's PEs.
    ThreadState* t = Recorder::registered_thread();
    if (t && !t->in_callback.load(std::memory_order_relaxed) && io_on() && !skipped_code(site)) {
      ToolScope scope(t);
      if (scope) {
        enter_construct(*t, key_, site, now(), site_region);
        t_ = t;
      }
    }
    errno = saved;
  }
  __attribute__((noinline)) void close(uint64_t read, uint64_t written) {
    Ticks end = now();
    int saved = errno;
    {
      ToolScope scope(t_);
      if (scope) {  // else the writer closed the frame meanwhile (the run ended)
        ThreadState& t = *t_;
        if (Frame* f = innermost_frame(t, FrameType::Region, key_); f && f->node) {
          f->node->s.bytes_recv += read;
          f->node->s.bytes_sent += written;
        }
        leave(t, FrameType::Region, end, key_);
      }
    }
    errno = saved;
  }
  ThreadState* t_ = nullptr;
  uint64_t key_;
  bool guarded_ = false;
};

inline uint64_t got(ssize_t n) { return n > 0 ? uint64_t(n) : 0; }
inline uint64_t items(size_t n, size_t size) { return uint64_t(n) * uint64_t(size); }
// open()'s mode argument is there only when the flags create a file.
inline bool needs_mode(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}
// What a call returns when its real function could not be resolved (a call during the
// resolution itself, or a C library without it).
template <class R>
R unavailable(R failure) {
  errno = ENOSYS;
  return failure;
}

}  // namespace

}  // namespace scalea::io

using scalea::io::Call;
using scalea::io::got;
using scalea::io::real;
namespace io = scalea::io;

// ---- open, close -------------------------------------------------------------------------------

namespace {
int open_any(io::Fn fn, int dirfd, const char* path, int flags, mode_t mode, const void* site) {
  int fd;
  if (fn == io::kOpenat || fn == io::kOpenat64 || fn == io::kOpenat2) {
    auto r = real<int (*)(int, const char*, int, ...)>(fn);
    if (!r) return int(syscall(SYS_openat, dirfd, path, flags, mode));
    Call c(fn, site);
    fd = fn == io::kOpenat2
             ? reinterpret_cast<int (*)(int, const char*, int)>(r)(dirfd, path, flags)
             : r(dirfd, path, flags, mode);
    c.done(0, 0);
    return fd;
  }
  auto r = real<int (*)(const char*, int, ...)>(fn);
  if (!r) return int(syscall(SYS_openat, AT_FDCWD, path, flags, mode));
  Call c(fn, site);
  fd = fn == io::kOpen2 || fn == io::kOpen64_2
           ? reinterpret_cast<int (*)(const char*, int)>(r)(path, flags)
           : r(path, flags, mode);
  c.done(0, 0);
  return fd;
}
}  // namespace

// `mode`: open()'s third argument, passed only when the flags create a file.
#define SCALEA_MODE_ARG(flags)      \
  mode_t mode = 0;                  \
  if (io::needs_mode(flags)) {      \
    va_list ap;                     \
    va_start(ap, flags);            \
    mode = mode_t(va_arg(ap, int)); \
    va_end(ap);                     \
  }

SCALEA_EXPORT int open(const char* path, int flags, ...) {
  SCALEA_MODE_ARG(flags);
  return open_any(io::kOpen, AT_FDCWD, path, flags, mode, RA);
}
SCALEA_EXPORT int open64(const char* path, int flags, ...) {
  SCALEA_MODE_ARG(flags);
  return open_any(io::kOpen64, AT_FDCWD, path, flags, mode, RA);
}
SCALEA_EXPORT int __open_2(const char* path, int flags) {
  return open_any(io::kOpen2, AT_FDCWD, path, flags, 0, RA);
}
SCALEA_EXPORT int __open64_2(const char* path, int flags) {
  return open_any(io::kOpen64_2, AT_FDCWD, path, flags, 0, RA);
}
SCALEA_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  SCALEA_MODE_ARG(flags);
  return open_any(io::kOpenat, dirfd, path, flags, mode, RA);
}
SCALEA_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  SCALEA_MODE_ARG(flags);
  return open_any(io::kOpenat64, dirfd, path, flags, mode, RA);
}
SCALEA_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return open_any(io::kOpenat2, dirfd, path, flags, 0, RA);
}
SCALEA_EXPORT int creat(const char* path, mode_t mode) {
  return open_any(io::kCreat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, RA);
}
SCALEA_EXPORT int creat64(const char* path, mode_t mode) {
  return open_any(io::kCreat64, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, RA);
}

SCALEA_EXPORT int close(int fd) {
  auto r = real<int (*)(int)>(io::kClose);
  if (!r) return int(syscall(SYS_close, fd));
  Call c(io::kClose, RA);
  int rc = r(fd);
  c.done(0, 0);
  return rc;
}

// ---- read, write and their p- and v- forms -----------------------------------------------------

namespace {
template <class Buf, class... Rest>
ssize_t rw(io::Fn fn, bool reads, long sys, const void* site, int fd, Buf buf, Rest... rest) {
  auto r = real<ssize_t (*)(int, Buf, Rest...)>(fn);
  if (!r) return syscall(sys, fd, buf, rest...);
  Call c(fn, site);
  ssize_t n = r(fd, buf, rest...);
  c.done(reads ? got(n) : 0, reads ? 0 : got(n));
  return n;
}
}  // namespace

SCALEA_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  return rw(io::kRead, true, SYS_read, RA, fd, buf, n);
}
SCALEA_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  return rw(io::kReadChk, true, SYS_read, RA, fd, buf, n, buflen);
}
SCALEA_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  return rw(io::kWrite, false, SYS_write, RA, fd, buf, n);
}
SCALEA_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  return rw(io::kPread, true, SYS_pread64, RA, fd, buf, n, off);
}
SCALEA_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  return rw(io::kPread64, true, SYS_pread64, RA, fd, buf, n, off);
}
SCALEA_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  return rw(io::kPreadChk, true, SYS_pread64, RA, fd, buf, n, off, buflen);
}
SCALEA_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off, size_t buflen) {
  return rw(io::kPread64Chk, true, SYS_pread64, RA, fd, buf, n, off, buflen);
}
SCALEA_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  return rw(io::kPwrite, false, SYS_pwrite64, RA, fd, buf, n, off);
}
SCALEA_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  return rw(io::kPwrite64, false, SYS_pwrite64, RA, fd, buf, n, off);
}
SCALEA_EXPORT ssize_t readv(int fd, const struct iovec* iov, int cnt) {
  return rw(io::kReadv, true, SYS_readv, RA, fd, iov, cnt);
}
SCALEA_EXPORT ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  return rw(io::kWritev, false, SYS_writev, RA, fd, iov, cnt);
}
// The system calls take the offset in two halves; the fallback passes the low one (x86-64: all).
SCALEA_EXPORT ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t off) {
  return rw(io::kPreadv, true, SYS_preadv, RA, fd, iov, cnt, off);
}
SCALEA_EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int cnt, off64_t off) {
  return rw(io::kPreadv64, true, SYS_preadv, RA, fd, iov, cnt, off);
}
SCALEA_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  return rw(io::kPwritev, false, SYS_pwritev, RA, fd, iov, cnt, off);
}
SCALEA_EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int cnt, off64_t off) {
  return rw(io::kPwritev64, false, SYS_pwritev, RA, fd, iov, cnt, off);
}

namespace {
int sync_fd(io::Fn fn, long sys, int fd, const void* site) {
  auto r = real<int (*)(int)>(fn);
  if (!r) return int(syscall(sys, fd));
  Call c(fn, site);
  int rc = r(fd);
  c.done(0, 0);
  return rc;
}
}  // namespace

SCALEA_EXPORT int fsync(int fd) { return sync_fd(io::kFsync, SYS_fsync, fd, RA); }
SCALEA_EXPORT int fdatasync(int fd) { return sync_fd(io::kFdatasync, SYS_fdatasync, fd, RA); }

// ---- C stdio ----------------------------------------------------------------------------------
// No system call stands in for these while the real functions are being resolved: such a call
// fails with ENOSYS (only an allocator that opens files inside dlsym could make one).

namespace {
struct Moved {
  uint64_t read = 0, written = 0;
};
// Calls `fn`'s real function with `args`; `moved(result)` says what the call read and wrote.
template <class R, class MovedBy, class... A>
R stdio_call(io::Fn fn, const void* site, R failure, MovedBy moved, A... args) {
  auto r = real<R (*)(A...)>(fn);
  if (!r) return io::unavailable(failure);
  Call c(fn, site);
  R result = r(args...);
  Moved m = moved(result);
  c.done(m.read, m.written);
  return result;
}
template <class R>
Moved nothing(R) {
  return {};
}
}  // namespace

SCALEA_EXPORT FILE* fopen(const char* path, const char* mode) {
  return stdio_call(io::kFopen, RA, static_cast<FILE*>(nullptr), nothing<FILE*>, path, mode);
}
SCALEA_EXPORT FILE* fopen64(const char* path, const char* mode) {
  return stdio_call(io::kFopen64, RA, static_cast<FILE*>(nullptr), nothing<FILE*>, path, mode);
}
SCALEA_EXPORT int fclose(FILE* f) { return stdio_call(io::kFclose, RA, EOF, nothing<int>, f); }
SCALEA_EXPORT int fflush(FILE* f) { return stdio_call(io::kFflush, RA, EOF, nothing<int>, f); }
SCALEA_EXPORT size_t fread(void* buf, size_t size, size_t n, FILE* f) {
  auto moved = [size](size_t k) { return Moved{io::items(k, size), 0}; };
  return stdio_call(io::kFread, RA, size_t(0), moved, buf, size, n, f);
}
SCALEA_EXPORT size_t __fread_chk(void* buf, size_t buflen, size_t size, size_t n, FILE* f) {
  auto moved = [size](size_t k) { return Moved{io::items(k, size), 0}; };
  return stdio_call(io::kFreadChk, RA, size_t(0), moved, buf, buflen, size, n, f);
}
SCALEA_EXPORT size_t fwrite(const void* buf, size_t size, size_t n, FILE* f) {
  auto moved = [size](size_t k) { return Moved{0, io::items(k, size)}; };
  return stdio_call(io::kFwrite, RA, size_t(0), moved, buf, size, n, f);
}
SCALEA_EXPORT int fputs(const char* s, FILE* f) {
  auto moved = [s](int rc) { return Moved{0, rc >= 0 ? strlen(s) : 0}; };
  return stdio_call(io::kFputs, RA, EOF, moved, s, f);
}
SCALEA_EXPORT int fprintf(FILE* f, const char* format, ...) {
  auto r = real<int (*)(FILE*, const char*, va_list)>(io::kFprintf);
  if (!r) return io::unavailable(-1);
  va_list ap;
  va_start(ap, format);
  Call c(io::kFprintf, RA);
  int n = r(f, format, ap);
  c.done(0, got(n));
  va_end(ap);
  return n;
}
SCALEA_EXPORT int __fprintf_chk(FILE* f, int flag, const char* format, ...) {
  auto r = real<int (*)(FILE*, int, const char*, va_list)>(io::kFprintfChk);
  if (!r) return io::unavailable(-1);
  va_list ap;
  va_start(ap, format);
  Call c(io::kFprintfChk, RA);
  int n = r(f, flag, format, ap);
  c.done(0, got(n));
  va_end(ap);
  return n;
}
