/* Shared-library part of the symbols fixture; see symfixture.h. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "symfixture.h"

struct object_lookup {
  uintptr_t addr;
  const char* path;
  uintptr_t load_base;
  int found;
};

static int find_object(struct dl_phdr_info* info, size_t size, void* data) {
  struct object_lookup* lookup = data;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* segment = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + segment->p_vaddr;
    if (segment->p_type == PT_LOAD && lookup->addr >= start &&
        lookup->addr < start + segment->p_memsz) {
      lookup->path = info->dlpi_name;
      lookup->load_base = info->dlpi_addr;
      lookup->found = 1;
      return 1;
    }
  }
  return 0;
}

void symfix_report(const char* kind, const char* marker, const void* addr) {
  struct object_lookup lookup = {(uintptr_t)addr, NULL, 0, 0};
  char exe_path[4096];
  if (!dl_iterate_phdr(find_object, &lookup) || !lookup.found) {
    printf("%s %s ? ?\n", kind, marker);
    return;
  }
  /* The main executable has an empty dlpi_name. */
  if (lookup.path == NULL || lookup.path[0] == '\0') {
    ssize_t length = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[length < 0 ? 0 : length] = '\0';
    lookup.path = exe_path;
  }
  printf("%s %s %lx %s\n", kind, marker, (unsigned long)(lookup.addr - lookup.load_base),
         lookup.path);
}

static void* g_lib_return_address;
static void* g_inlined_return_address;

__attribute__((noinline)) static void lib_record_return_address(void) {
  g_lib_return_address = __builtin_return_address(0);
}

__attribute__((noinline)) static void lib_record_inlined_return_address(void) {
  g_inlined_return_address = __builtin_return_address(0);
}

/* Forced inline even at -O0: its call site lands inside DW_TAG_inlined_subroutine scopes. */
__attribute__((always_inline)) static inline int lib_inlined_helper(int x) {
  lib_record_inlined_return_address(); /* SYMFIX_LINE lib_inlined_call_site */
  return x - 1;
}

__attribute__((noinline)) static int lib_static_function(int x) { /* SYMFIX_LINE lib_static */
  return x * 3;
}

__attribute__((noinline)) int symfix_lib_exported(int x) { /* SYMFIX_LINE lib_exported */
  lib_record_return_address();                             /* SYMFIX_LINE lib_call_site */
  x = lib_inlined_helper(x);
  return lib_static_function(x) + 1;
}

/* A stand-in for a runtime entry point (__kmpc_omp_task, MPI_Send): it records its return
   address, as OMPT's codeptr_ra does. */
static void* g_entry_return_address;
__attribute__((noinline)) void symfix_entry(void) {
  g_entry_return_address = __builtin_return_address(0);
}
const void* symfix_entry_return_address(void) { return g_entry_return_address; }

void symfix_report_lib(void) {
  symfix_lib_exported(1);
  symfix_report("FN", "lib_static", (const void*)&lib_static_function);
  symfix_report("FN", "lib_exported", (const void*)&symfix_lib_exported);
  symfix_report("RA", "lib_call_site", g_lib_return_address);
  symfix_report("RA", "lib_inlined_call_site", g_inlined_return_address);
}
