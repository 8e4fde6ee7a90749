#include "scalea/drg/symbols.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

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
// the line table also reports the inlined source position, so function and line agree. The
// functions it was inlined into, innermost first, go to `inlined_into` when given.
std::string dwarf_function_name(Dwarf_Die* cu_die, Dwarf_Addr dwarf_addr,
                                std::vector<std::string>* inlined_into = nullptr) {
  Dwarf_Die* scopes = nullptr;
  const int count = dwarf_getscopes(cu_die, dwarf_addr, &scopes);
  std::string name;
  for (int i = 0; i < count && name.empty(); ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    name = die_function_name(&scopes[i]);
    // An inlined instance: dwarf_getscopes goes on with the scopes of its abstract definition;
    // the functions it was inlined into are the scopes around the instance's own DIE.
    Dwarf_Die* around = nullptr;
    const int n = inlined_into && tag == DW_TAG_inlined_subroutine
                      ? dwarf_getscopes_die(&scopes[i], &around)
                      : 0;
    for (int j = 1; j < n; ++j) {
      const int outer = dwarf_tag(&around[j]);
      if (outer != DW_TAG_subprogram && outer != DW_TAG_inlined_subroutine) continue;
      if (std::string f = die_function_name(&around[j]); !f.empty())
        inlined_into->push_back(std::move(f));
    }
    std::free(around);
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

// The function symbol (.symtab, or .dynsym in a stripped object) covering `addr` (a module
// address): its raw name, the offset of `addr` in it and its size; nullptr when none.
const char* symtab_function(Dwfl_Module* module, Dwarf_Addr addr, uint64_t* offset,
                            uint64_t* size) {
  GElf_Off offset_in_symbol = 0;
  GElf_Sym symbol;
  const char* name =
      dwfl_module_addrinfo(module, addr, &offset_in_symbol, &symbol, nullptr, nullptr, nullptr);
  if (name == nullptr) return nullptr;
  // addrinfo falls back to the nearest preceding symbol of any kind; an address past the end of
  // a sized function, or "covered" only by a data/section symbol, is not inside a known function.
  const int type = GELF_ST_TYPE(symbol.st_info);
  if (type != STT_FUNC && type != STT_GNU_IFUNC) return nullptr;
  if (symbol.st_size != 0 && offset_in_symbol >= symbol.st_size) return nullptr;
  *offset = offset_in_symbol;
  *size = symbol.st_size;
  return name;
}

int32_t rel32(const unsigned char* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// Where the marker of an outlined body begins in `name` (gcc, LLVM 17+, Intel: after the name
// of the function it came from), or npos.
size_t outlined_suffix(std::string_view name) {
  for (std::string_view marker : {"._omp_fn.", "._omp_cpyfn.", ".omp_outlined", ".DIR.OMP."}) {
    size_t at = name.find(marker);
    if (at != std::string_view::npos) return at;
  }
  return std::string_view::npos;
}

}  // namespace

// The module's machine code (executable sections), its PLT sections and the import slot each
// relocation names: enough to read call and jump instructions and name their targets.
struct SymbolResolver::Code {
  struct Range {
    uint64_t start, end;  // file vaddrs
    const unsigned char* bytes;
  };
  bool x86_64 = false;
  std::vector<Range> exec;
  std::vector<std::pair<uint64_t, uint64_t>> plt;   // .plt, .plt.sec, .plt.got
  std::unordered_map<uint64_t, std::string> slots;  // GOT slot vaddr -> imported symbol

  void read(Elf* elf);

  // The n bytes at `addr`, or nullptr when they are not all inside one executable section.
  const unsigned char* at(uint64_t addr, uint64_t n) const {
    for (const Range& r : exec)
      if (addr >= r.start && addr <= r.end && n <= r.end - addr) return r.bytes + (addr - r.start);
    return nullptr;
  }
  bool in_plt(uint64_t addr) const {
    for (const auto& [start, end] : plt)
      if (addr >= start && addr < end) return true;
    return false;
  }
  // The imported function a PLT stub at `addr` jumps to (endbr64 and bnd prefixes allowed before
  // its `jmp *slot(%rip)`), or nullptr.
  const std::string* plt_target(uint64_t addr) const {
    const unsigned char* p = at(addr, 16);
    if (p == nullptr) return nullptr;
    size_t i = 0;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) i = 4;  // endbr64
    if (p[i] == 0xf2) ++i;                                                    // bnd
    if (p[i] != 0xff || p[i + 1] != 0x25) return nullptr;
    return slot_target(addr + i + 6, p + i + 2);
  }
  // The import slot named by a RIP-relative displacement that ends at `next`.
  const std::string* slot_target(uint64_t next, const unsigned char* disp) const {
    int32_t d;
    std::memcpy(&d, disp, 4);
    auto it = slots.find(next + uint64_t(int64_t(d)));
    return it == slots.end() ? nullptr : &it->second;
  }
};

void SymbolResolver::CodeDeleter::operator()(Code* code) const { delete code; }

// Reads the module's executable sections, PLT sections and import relocations.
void SymbolResolver::Code::read(Elf* elf) {
  Code& code = *this;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) return;
  code.x86_64 = ehdr.e_machine == EM_X86_64;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type == SHT_PROGBITS && (shdr.sh_flags & SHF_EXECINSTR) != 0) {
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (data == nullptr || data->d_buf == nullptr) continue;
      code.exec.push_back({shdr.sh_addr,
                           shdr.sh_addr + std::min<uint64_t>(data->d_size, shdr.sh_size),
                           static_cast<const unsigned char*>(data->d_buf)});
      const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
      if (name != nullptr && starts_with(name, ".plt"))
        code.plt.emplace_back(shdr.sh_addr, shdr.sh_addr + shdr.sh_size);
    } else if (shdr.sh_type == SHT_RELA && code.x86_64) {
      Elf_Scn* symscn = elf_getscn(elf, shdr.sh_link);
      GElf_Shdr symshdr;
      Elf_Data* rela = elf_getdata(scn, nullptr);
      Elf_Data* syms = symscn != nullptr ? elf_getdata(symscn, nullptr) : nullptr;
      if (rela == nullptr || syms == nullptr || gelf_getshdr(symscn, &symshdr) == nullptr) continue;
      const size_t count = shdr.sh_entsize != 0 ? shdr.sh_size / shdr.sh_entsize : 0;
      for (size_t i = 0; i < count; ++i) {
        GElf_Rela r;
        if (gelf_getrela(rela, int(i), &r) == nullptr) break;
        const auto type = GELF_R_TYPE(r.r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
        GElf_Sym sym;
        if (gelf_getsym(syms, int(GELF_R_SYM(r.r_info)), &sym) == nullptr) continue;
        const char* name = elf_strptr(elf, symshdr.sh_link, sym.st_name);
        if (name != nullptr && name[0] != '\0') code.slots.emplace(r.r_offset, name);
      }
    }
  }
}

bool is_outlined_function(std::string_view name) {
  return starts_with(name, ".omp") || starts_with(name, "__omp_offloading_") ||
         outlined_suffix(name) != std::string_view::npos;
}

std::string outlined_origin(std::string_view name) {
  size_t at = outlined_suffix(name);
  if (at == std::string_view::npos || at == 0) return {};
  // A demangled C++ clone: "f(int) [clone ._omp_fn.0]".
  size_t clone = name.find(" [clone ");
  return std::string(name.substr(0, clone != std::string_view::npos && clone < at ? clone : at));
}

void SymbolResolver::DwflDeleter::operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }

SymbolResolver::SymbolResolver() = default;
SymbolResolver::~SymbolResolver() = default;
SymbolResolver::SymbolResolver(SymbolResolver&&) noexcept = default;
SymbolResolver& SymbolResolver::operator=(SymbolResolver&&) noexcept = default;

SymbolResolver::Session& SymbolResolver::session_for(const std::string& module_path) {
  auto cached = sessions_.find(module_path);
  if (cached != sessions_.end()) return cached->second;

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
  return sessions_.emplace(module_path, std::move(session)).first->second;
}

const SymbolResolver::Code* SymbolResolver::code_of(Session& session) {
  if (session.module == nullptr) return nullptr;
  if (!session.code) {
    session.code.reset(new Code);
    GElf_Addr bias = 0;
    if (Elf* elf = dwfl_module_getelf(session.module, &bias)) session.code->read(elf);
  }
  return session.code.get();
}

bool SymbolResolver::lookup(Dwfl_Module* module, uint64_t offset, SourceLocation& loc) {
  loc = SourceLocation{};
  // bias = module address - file vaddr, and the stored offset is a file vaddr.
  GElf_Addr bias = 0;
  if (dwfl_module_getelf(module, &bias) == nullptr) return false;
  const Dwarf_Addr addr = bias + offset;

  SourceLocation found;
  found.address = offset;
  Dwarf_Addr cu_bias = 0;
  if (Dwarf_Die* cu_die = cu_die_for(module, addr, &cu_bias)) {
    found.function = dwarf_function_name(cu_die, addr - cu_bias, &found.inlined_into);
    dwarf_source_position(cu_die, addr - cu_bias, found);
  }
  uint64_t size = 0;
  if (const char* symbol = symtab_function(module, addr, &found.symbol_offset, &size)) {
    found.symbol = demangle(symbol);
  }
  if (found.function.empty()) found.function = found.symbol;

  if (found.function.empty() && found.file.empty()) return false;
  loc = std::move(found);
  return true;
}

bool SymbolResolver::resolve(const std::string& module_path, uint64_t offset,
                             bool is_return_address, SourceLocation& loc) {
  loc = SourceLocation{};
  if (is_return_address && offset == 0) return false;  // no call can end before the object
  Dwfl_Module* module = module_for(module_path);
  if (module == nullptr) return false;
  // A return address is looked up inside the call instruction, i.e. on the call's line; its
  // symbol offset stays the return address's.
  const uint64_t inside = is_return_address ? offset - 1 : offset;
  if (!lookup(module, inside, loc)) return false;
  loc.address = offset;
  if (!loc.symbol.empty()) loc.symbol_offset += offset - inside;
  return true;
}

bool SymbolResolver::resolve_call_site(const std::string& module_path, uint64_t offset,
                                       const EntryFilter& entry, SourceLocation& loc) {
  Session& session = session_for(module_path);
  const Code* code = code_of(session);
  if (code != nullptr && code->x86_64 && offset >= 5) {
    // The call that returns to `offset`: `call rel32` to a function of this module (a call
    // through the PLT or an import slot goes to another module: the runtime itself).
    const unsigned char* call = code->at(offset - 5, 5);
    GElf_Addr bias = 0;
    if (call != nullptr && call[0] == 0xe8 &&
        dwfl_module_getelf(session.module, &bias) != nullptr) {
      const uint64_t target = offset + uint64_t(int64_t(rel32(call + 1)));
      uint64_t at = 0, size = 0;
      const char* callee = code->in_plt(target)
                               ? nullptr
                               : symtab_function(session.module, bias + target, &at, &size);
      if (callee != nullptr && at == 0 && !entry(callee) &&
          find_tail_jump(session, target, entry, loc)) {
        return true;
      }
    }
  }
  return resolve(module_path, offset, true, loc);
}

bool SymbolResolver::resolve_tail_jump(const std::string& module_path, uint64_t function_offset,
                                       const EntryFilter& entry, SourceLocation& loc) {
  loc = SourceLocation{};
  Session& session = session_for(module_path);
  return session.module != nullptr && find_tail_jump(session, function_offset, entry, loc);
}

bool SymbolResolver::find_tail_jump(Session& session, uint64_t function_offset,
                                    const EntryFilter& entry, SourceLocation& loc) {
  const Code* code = code_of(session);
  GElf_Addr bias = 0;
  if (code == nullptr || !code->x86_64 || dwfl_module_getelf(session.module, &bias) == nullptr)
    return false;
  // The functions reachable from `function_offset` by tail calls (at most 8 deep, 64 in all):
  // their tail jumps to an entry are the candidates.
  std::vector<uint64_t> jumps;
  std::set<uint64_t> visited{function_offset};
  std::vector<std::pair<uint64_t, int>> todo{{function_offset, 0}};
  while (!todo.empty()) {
    const auto [function, depth] = todo.back();
    todo.pop_back();
    uint64_t at = 0, size = 0;
    if (symtab_function(session.module, bias + function, &at, &size) == nullptr || at != 0)
      continue;
    const unsigned char* bytes = size >= 5 ? code->at(function, size) : nullptr;
    if (bytes == nullptr) continue;
    // Every byte position is tried: a jump whose target is exactly an entry's PLT stub or import
    // slot, or exactly another function's start, does not come out of other instructions' bytes
    // by chance in practice, and no instruction decoder is needed.
    for (uint64_t i = 0; i + 5 <= size; ++i) {
      const std::string* name = nullptr;
      if (bytes[i] == 0xe9) {  // jmp rel32
        const uint64_t target = function + i + 5 + uint64_t(int64_t(rel32(bytes + i + 1)));
        if (code->in_plt(target)) {
          name = code->plt_target(target);
        } else if (target != function) {
          uint64_t t_at = 0, t_size = 0;
          const char* t = symtab_function(session.module, bias + target, &t_at, &t_size);
          if (t != nullptr && t_at == 0) {
            if (entry(t)) jumps.push_back(function + i);  // a runtime linked into the module
            else if (depth + 1 < 8 && visited.size() < 64 && visited.insert(target).second)
              todo.emplace_back(target, depth + 1);  // a tail call: follow it
          }
        }
      } else if (bytes[i] == 0xff && bytes[i + 1] == 0x25 && i + 6 <= size) {  // jmp *slot(%rip)
        name = code->slot_target(function + i + 6, bytes + i + 2);
      }
      if (name != nullptr && entry(*name)) jumps.push_back(function + i);
    }
  }
  if (jumps.empty()) return false;
  // Several jumps (a tail the optimiser duplicated) are one construct when they share their
  // source line; without lines only a single jump is unambiguous.
  SourceLocation first;
  if (!lookup(session.module, jumps[0], first)) return false;
  for (size_t j = 1; j < jumps.size(); ++j) {
    SourceLocation other;
    if (first.file.empty() || !lookup(session.module, jumps[j], other) ||
        other.file != first.file || other.line != first.line || other.function != first.function)
      return false;
  }
  loc = std::move(first);
  loc.tail_call = true;
  return true;
}

}  // namespace scalea::drg
