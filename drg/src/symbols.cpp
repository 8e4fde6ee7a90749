#include "scalea/drg/symbols.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdlib>

namespace scalea::drg {
namespace {

// Offline callbacks: modules are files on disk, not mappings of a live process. Separate debug
// info is found the standard way (build-id under /usr/lib/debug, .gnu_debuglink).
char* g_debuginfo_path = nullptr;  // nullptr selects the default search path
const Dwfl_Callbacks kOfflineCallbacks = {
    dwfl_build_id_find_elf,        // find_elf
    dwfl_standard_find_debuginfo,  // find_debuginfo
    dwfl_offline_section_address,  // section_address
    &g_debuginfo_path,             // debuginfo_path
};

std::string demangle(const char* name) {
  // Only Itanium-mangled names are demangled; C names ("main") must stay untouched even though
  // __cxa_demangle would accept some of them as type encodings.
  if (name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status == 0 && demangled != nullptr) {
      std::string result(demangled);
      std::free(demangled);
      return result;
    }
  }
  return name;
}

// Name of a subprogram or inlined-subroutine DIE. The linkage name is preferred because its
// demangled form is qualified (ns::Class::method(int)); DW_AT_name alone is just "method".
// The *_integrate variants follow DW_AT_abstract_origin / DW_AT_specification, which is where
// inlined instances and out-of-line member definitions keep their names.
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int linkage_attr : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (const char* linkage = dwarf_formstring(dwarf_attr_integrate(die, linkage_attr, &attr))) {
      return demangle(linkage);
    }
  }
  const char* name = dwarf_diename(die);
  return name != nullptr ? name : std::string();
}

// CU DIE whose code covers `addr` (a module address), with the CU's bias. libdw finds CUs only
// through .debug_aranges, which clang does not emit by default (and which may cover just some
// CUs of a mixed build), so fall back to scanning every CU's own address ranges.
Dwarf_Die* cu_die_for(Dwfl_Module* module, Dwarf_Addr addr, Dwarf_Addr* cu_bias) {
  if (Dwarf_Die* cu_die = dwfl_module_addrdie(module, addr, cu_bias)) return cu_die;
  Dwarf_Die* cu_die = nullptr;
  while ((cu_die = dwfl_module_nextcu(module, cu_die, cu_bias)) != nullptr) {
    if (dwarf_haspc(cu_die, addr - *cu_bias) > 0) return cu_die;
  }
  return nullptr;
}

// Innermost function (inlined or not) whose code covers `dwarf_addr`. Innermost is used because
// the line table also reports the inlined source position, so function and line agree.
std::string dwarf_function_name(Dwarf_Die* cu_die, Dwarf_Addr dwarf_addr) {
  Dwarf_Die* scopes = nullptr;
  const int count = dwarf_getscopes(cu_die, dwarf_addr, &scopes);
  std::string name;
  for (int i = 0; i < count && name.empty(); ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      name = die_function_name(&scopes[i]);
    }
  }
  std::free(scopes);
  return name;
}

// Fills file and line from the CU's line table; leaves them empty when no row has a position.
void dwarf_source_position(Dwarf_Die* cu_die, Dwarf_Addr dwarf_addr, SourceLocation& loc) {
  Dwarf_Line* line = dwarf_getsrc_die(cu_die, dwarf_addr);
  if (line == nullptr) return;
  int line_number = 0;
  const char* file = dwarf_linesrc(line, nullptr, nullptr);
  // Line 0 marks compiler-generated code with no source position: report nothing then.
  if (file == nullptr || file[0] == '\0' || dwarf_lineno(line, &line_number) != 0 ||
      line_number <= 0) {
    return;
  }
  loc.file = file;
  Dwarf_Attribute attr;
  const char* comp_dir = dwarf_formstring(dwarf_attr(cu_die, DW_AT_comp_dir, &attr));
  if (loc.file[0] != '/' && comp_dir != nullptr && comp_dir[0] != '\0') {
    loc.file = std::string(comp_dir) + "/" + loc.file;
  }
  loc.line = static_cast<uint32_t>(line_number);
}

// Function from the ELF symbol table (.symtab, or .dynsym in a stripped object).
std::string symtab_function_name(Dwfl_Module* module, Dwarf_Addr addr) {
  GElf_Off offset_in_symbol = 0;
  GElf_Sym symbol;
  const char* name =
      dwfl_module_addrinfo(module, addr, &offset_in_symbol, &symbol, nullptr, nullptr, nullptr);
  if (name == nullptr) return {};
  // addrinfo falls back to the nearest preceding symbol of any kind; an address past the end of
  // a sized function, or "covered" only by a data/section symbol, is not inside a known function.
  const int type = GELF_ST_TYPE(symbol.st_info);
  if (type != STT_FUNC && type != STT_GNU_IFUNC) return {};
  if (symbol.st_size != 0 && offset_in_symbol >= symbol.st_size) return {};
  return demangle(name);
}

}  // namespace

void SymbolResolver::DwflDeleter::operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }

SymbolResolver::SymbolResolver() = default;
SymbolResolver::~SymbolResolver() = default;
SymbolResolver::SymbolResolver(SymbolResolver&&) noexcept = default;
SymbolResolver& SymbolResolver::operator=(SymbolResolver&&) noexcept = default;

Dwfl_Module* SymbolResolver::module_for(const std::string& module_path) {
  auto cached = sessions_.find(module_path);
  if (cached != sessions_.end()) return cached->second.module;

  Session session;
  session.dwfl.reset(dwfl_begin(&kOfflineCallbacks));
  if (session.dwfl) {
    dwfl_report_begin(session.dwfl.get());
    // Base 0: an ET_DYN object (PIE, shared library) is placed at its link-time addresses, which
    // is exactly what the stored offsets are; an ET_EXEC ignores the base. resolve() still adds
    // the module bias libdwfl reports, so the lookup stays correct whatever placement it chose.
    session.module =
        dwfl_report_elf(session.dwfl.get(), module_path.c_str(), module_path.c_str(), -1, 0, false);
    dwfl_report_end(session.dwfl.get(), nullptr, nullptr);
    if (session.module == nullptr) session.dwfl.reset();
  }
  // Failures are cached too, so a module missing on this machine is not reopened per address.
  return sessions_.emplace(module_path, std::move(session)).first->second.module;
}

bool SymbolResolver::resolve(const std::string& module_path, uint64_t offset,
                             bool is_return_address, SourceLocation& loc) {
  loc = SourceLocation{};
  if (is_return_address) {
    if (offset == 0) return false;  // no call instruction can end before the object's start
    --offset;                       // inside the call instruction, i.e. on the call's line
  }
  Dwfl_Module* module = module_for(module_path);
  if (module == nullptr) return false;
  // bias = module address - file vaddr, and the stored offset is a file vaddr.
  GElf_Addr bias = 0;
  if (dwfl_module_getelf(module, &bias) == nullptr) return false;
  const Dwarf_Addr addr = bias + offset;

  SourceLocation found;
  Dwarf_Addr cu_bias = 0;
  if (Dwarf_Die* cu_die = cu_die_for(module, addr, &cu_bias)) {
    found.function = dwarf_function_name(cu_die, addr - cu_bias);
    dwarf_source_position(cu_die, addr - cu_bias, found);
  }
  if (found.function.empty()) found.function = symtab_function_name(module, addr);

  if (found.function.empty() && found.file.empty()) return false;
  loc = std::move(found);
  return true;
}

}  // namespace scalea::drg
