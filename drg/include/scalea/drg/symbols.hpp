// Post-run resolution of code addresses recorded by the collector into source locations.
//
// The collector stores a code address as (module path, offset) with
// offset = runtime address - load bias (the dlpi_addr of dl_iterate_phdr), i.e. the address the
// linker assigned. That makes the pair independent of ASLR and resolvable after the process is
// gone, which keeps symbol lookup out of the measured run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

// elfutils handles, kept opaque so users of this header do not need libdw headers.
struct Dwfl;
struct Dwfl_Module;

namespace scalea::drg {

struct SourceLocation {
  std::string function;  // demangled; innermost (possibly inlined) function when DWARF is present
  // The functions `function` was inlined into, innermost first, the one the code is physically in
  // last (DWARF's inlined-subroutine scopes); empty when the code is not inlined.
  std::vector<std::string> inlined_into;
  std::string file;   // as DWARF names it, made absolute with the CU's comp_dir when relative
  uint32_t line = 0;  // 0 when unknown
  // The ELF symbol (.symtab, else .dynsym) holding the code, demangled, and the code's offset in
  // it; "" when no function symbol covers the address. Present with or without DWARF.
  std::string symbol;
  uint64_t symbol_offset = 0;
  // The module offset this location describes: the looked-up offset, or the tail jump that
  // resolve_call_site followed (then `tail_call` is set).
  uint64_t address = 0;
  bool tail_call = false;
};

// Whether a function name is a body the compiler outlined for an OpenMP construct: clang's
// ".omp_outlined.", ".omp_outlined..N", ".omp_outlined._debug__[.N]", ".omp_task_entry.[.N]",
// ".omp.reduction.reduction_func", LLVM 17+'s "f.omp_outlined[.N]", gcc's "f._omp_fn.N" and
// "f._omp_cpyfn.N", offloading entries "__omp_offloading_...".
bool is_outlined_function(std::string_view name);
// The function an outlined body was outlined from when its name says so ("main" for
// "main._omp_fn.0" and "main.omp_outlined.1"), else "".
std::string outlined_origin(std::string_view name);

// Names of the runtime entry points that implement one construct (e.g. "__kmpc_omp_task").
using EntryFilter = std::function<bool(std::string_view symbol)>;

// Caches one Dwfl session per module path (including failed opens, so a missing module is only
// tried once). Not thread-safe; movable, not copyable.
class SymbolResolver {
 public:
  SymbolResolver();
  ~SymbolResolver();
  SymbolResolver(SymbolResolver&&) noexcept;
  SymbolResolver& operator=(SymbolResolver&&) noexcept;
  SymbolResolver(const SymbolResolver&) = delete;
  SymbolResolver& operator=(const SymbolResolver&) = delete;

  // Resolves `offset` within the ELF object at `module_path`. When `is_return_address` is set
  // (OMPT codeptr_ra, __builtin_return_address) the call site is looked up at offset - 1, since
  // the return address may already belong to the next source line or even the next function.
  // Returns false and leaves `loc` empty when the module cannot be opened or neither a symbol
  // nor a line covers the address. With only an ELF symbol table (no DWARF) it returns true with
  // the function name set and an empty file / zero line.
  bool resolve(const std::string& module_path, uint64_t offset, bool is_return_address,
               SourceLocation& loc);

  // Resolves the return address of a call into a runtime entry point (`offset`, as OMPT's
  // codeptr_ra or an MPI wrapper's caller) to the construct that made the call. When the
  // instruction before `offset` calls a function of the same module that is not itself an
  // `entry`, the entry was reached by a tail jump (sibling-call optimisation: a construct that
  // ends a function) and the return address belongs to the caller's call line: then the location
  // is that of the jump to an `entry` in the callee (following tail calls through at most 8
  // functions), with `tail_call` set. Otherwise, or when the jump cannot be found unambiguously,
  // it is resolve(module_path, offset, true, loc). x86-64 code only; other machines get resolve().
  bool resolve_call_site(const std::string& module_path, uint64_t offset, const EntryFilter& entry,
                         SourceLocation& loc);

  // The tail jump to an `entry` inside the function that starts at `function_offset` (or its
  // tail-called functions), e.g. an outlined body that ends with a barrier and returns straight
  // into the runtime. Returns false when there is none or it is ambiguous.
  bool resolve_tail_jump(const std::string& module_path, uint64_t function_offset,
                         const EntryFilter& entry, SourceLocation& loc);

 private:
  struct DwflDeleter {
    void operator()(Dwfl* dwfl) const;
  };
  // One Dwfl per module path holding exactly that module; both null when it could not be opened.
  struct Code;  // the module's machine code and import slots, read on first use (symbols.cpp)
  struct CodeDeleter {
    void operator()(Code* code) const;
  };
  struct Session {
    std::unique_ptr<Dwfl, DwflDeleter> dwfl;
    Dwfl_Module* module = nullptr;  // owned by dwfl
    std::unique_ptr<Code, CodeDeleter> code;
  };

  // Returns the session for module_path, opening it on first use; its module is nullptr if the
  // module is unusable.
  Session& session_for(const std::string& module_path);
  Dwfl_Module* module_for(const std::string& module_path) {
    return session_for(module_path).module;
  }
  const Code* code_of(Session& session);
  // Looks up a module offset (no return-address adjustment) into `loc`.
  bool lookup(Dwfl_Module* module, uint64_t offset, SourceLocation& loc);
  // The tail jump to an `entry` inside the function at `function_offset`, following tail calls.
  bool find_tail_jump(Session& session, uint64_t function_offset, const EntryFilter& entry,
                      SourceLocation& loc);

  std::unordered_map<std::string, Session> sessions_;
};

}  // namespace scalea::drg
