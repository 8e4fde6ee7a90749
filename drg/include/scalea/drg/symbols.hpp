// Post-run resolution of code addresses recorded by the collector into source locations.
//
// The collector stores a code address as (module path, offset) with
// offset = runtime address - load bias (the dlpi_addr of dl_iterate_phdr), i.e. the address the
// linker assigned. That makes the pair independent of ASLR and resolvable after the process is
// gone, which keeps symbol lookup out of the measured run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

// elfutils handles, kept opaque so users of this header do not need libdw headers.
struct Dwfl;
struct Dwfl_Module;

namespace scalea::drg {

struct SourceLocation {
  std::string function;  // demangled; innermost (possibly inlined) function when DWARF is present
  std::string file;      // as DWARF names it, made absolute with the CU's comp_dir when relative
  uint32_t line = 0;     // 0 when unknown
};

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

 private:
  struct DwflDeleter {
    void operator()(Dwfl* dwfl) const;
  };
  // One Dwfl per module path holding exactly that module; both null when it could not be opened.
  struct Session {
    std::unique_ptr<Dwfl, DwflDeleter> dwfl;
    Dwfl_Module* module = nullptr;  // owned by dwfl
  };

  // Returns the module for module_path, opening it on first use; nullptr if unusable.
  Dwfl_Module* module_for(const std::string& module_path);

  std::unordered_map<std::string, Session> sessions_;
};

}  // namespace scalea::drg
