// The user-region API (scalea.h) and the -finstrument-functions hooks: thin adapters over the
// recorder. Recording starts on first use when no OpenMP runtime started it.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "../core/log.hpp"
#include "function_hooks.hpp"
#include "scalea/scalea.h"

namespace scalea::collect {
namespace {

// Whether the program's executable calls `name` from a shared library (an undefined symbol in its
// dynamic symbol table). Reads /proc/self/exe; false when it cannot tell.
bool program_imports(const char* name) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  void* map = fstat(fd, &st) == 0 && size_t(st.st_size) >= sizeof(ElfW(Ehdr))
                  ? mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return false;
  const char* base = static_cast<const char*>(map);
  const size_t size = size_t(st.st_size);
  auto inside = [&](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
  bool found = false;
  const auto* eh = reinterpret_cast<const ElfW(Ehdr)*>(base);
  constexpr unsigned char kClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == kClass &&
      eh->e_shentsize == sizeof(ElfW(Shdr)) &&
      inside(eh->e_shoff, uint64_t(eh->e_shnum) * sizeof(ElfW(Shdr)))) {
    const auto* sh = reinterpret_cast<const ElfW(Shdr)*>(base + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum && !found; ++i) {
      if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
      const ElfW(Shdr)& strs = sh[sh[i].sh_link];
      if (!inside(sh[i].sh_offset, sh[i].sh_size) || !inside(strs.sh_offset, strs.sh_size))
        continue;
      const auto* sym = reinterpret_cast<const ElfW(Sym)*>(base + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(ElfW(Sym)) && !found; ++k)
        found = sym[k].st_shndx == SHN_UNDEF && sym[k].st_name < strs.sh_size &&
                std::strncmp(base + strs.sh_offset + sym[k].st_name, name,
                             strs.sh_size - sym[k].st_name) == 0;
    }
  }
  munmap(map, size);
  return found;
}

}  // namespace

void check_function_hooks(const Config& config) {
  if (config.quiet) return;
  Dl_info mine{}, bound{};
  if (!dladdr(reinterpret_cast<void*>(&program_imports), &mine)) return;
  void* hook = dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
  // Bound to this library, or to libscalea-mpi.so (which defines them too): recorded.
  if (hook && dladdr(hook, &bound) &&
      (bound.dli_fbase == mine.dli_fbase ||
       (bound.dli_fname && std::strstr(bound.dli_fname, "libscalea-"))))
    return;
  if (!program_imports("__cyg_profile_func_enter")) return;
  const char* where = bound.dli_fname ? std::strrchr(bound.dli_fname, '/') : nullptr;
  log_job_message(
      "the program is built with -finstrument-functions, but its calls go to the empty "
      "hooks of %s, not to the tool's (the OpenMP runtime loaded the tool after the "
      "program started): its functions are not recorded; measure it with `scalea run`, "
      "with LD_PRELOAD=%s, or link it with -lscalea-omp",
      where ? where + 1 : "libc", mine.dli_fname ? mine.dli_fname : "libscalea-omp.so");
}

}  // namespace scalea::collect

using namespace scalea::collect;

extern "C" {

__attribute__((visibility("default"), no_instrument_function)) void scalea_region_begin_loc(
    const char* name, const char* file, int line, const char* function) {
  ThreadState* t = recording_thread();
  if (!t || !name) return;
  ToolScope scope(t);
  if (!scope) return;
  uint32_t rid = Recorder::get().named_region(*t, RegionKind::User, name, file, line, function);
  enter_region(*t, rid, frame_key(FrameTag::User, rid), name);
}

__attribute__((visibility("default"), no_instrument_function)) void scalea_region_end(
    const char* name) {
  ThreadState* t = recording_thread();
  if (!t || !name) return;
  ToolScope scope(t);
  if (!scope) return;
  // Names are looked up first (a buffer may be reused for another name), then the clock read,
  // unless the visit is throttled.
  uint32_t rid = Recorder::get().named_region(*t, RegionKind::User, name, nullptr, 0, nullptr);
  if (leave_throttled_top(*t, frame_key(FrameTag::User, rid))) return;
  leave_region(*t, frame_key(FrameTag::User, rid), now(), g_throttle_calls_user);
}

__attribute__((visibility("default"), no_instrument_function)) void scalea_measure_enable(void) {
  recording_thread();
  g_measure_on.store(true);
}

__attribute__((visibility("default"), no_instrument_function)) void scalea_measure_disable(void) {
  recording_thread();
  g_measure_on.store(false);
}

__attribute__((visibility("default"), no_instrument_function)) int scalea_measure_enabled(void) {
  return active() && g_measure_on.load() ? 1 : 0;
}

// The bodies are shared with libscalea-mpi.so (function_hooks.hpp).
__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(
    void* fn, void*) {
  function_enter(fn);
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(
    void* fn, void*) {
  function_exit(fn);
}

}  // extern "C"
