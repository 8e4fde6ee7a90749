#include "scalea/drg/symbols.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "../temp_dir.hpp"

namespace scalea::drg {
namespace {

// One line of fixture output: a code address as the collector would store it.
struct FixtureAddress {
  bool is_return_address = false;
  uint64_t offset = 0;
  std::string module;
};
using FixtureAddresses = std::map<std::string, FixtureAddress>;  // by marker name

// Runs a fixture executable and parses "<FN|RA> <marker> <hex offset> <module path>" lines.
FixtureAddresses run_fixture(const std::string& exe) {
  FixtureAddresses result;
  FILE* pipe = popen(exe.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[8192];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) {
    std::istringstream line(buffer);
    std::string kind, marker, offset;
    FixtureAddress address;
    line >> kind >> marker >> offset;
    std::getline(line >> std::ws, address.module);
    address.is_return_address = kind == "RA";
    address.offset = std::stoull(offset, nullptr, 16);
    result[marker] = address;
  }
  EXPECT_EQ(pclose(pipe), 0) << exe;
  return result;
}

std::string source_path(const std::string& file) {
  return std::string(SYMFIX_SOURCE_DIR) + "/" + file;
}

// Line number of the "SYMFIX_LINE <marker> */" comment in a fixture source; 0 if absent.
uint32_t marked_line(const std::string& file, const std::string& marker) {
  std::ifstream in(source_path(file));
  const std::string tag = "SYMFIX_LINE " + marker + " */";
  std::string text;
  for (uint32_t number = 1; std::getline(in, text); ++number) {
    if (text.find(tag) != std::string::npos) return number;
  }
  return 0;
}

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string elf_type_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[18] = {};
  in.read(header, sizeof header);
  const int type = static_cast<unsigned char>(header[16]);  // e_type, little endian
  return type == 2 ? "ET_EXEC" : type == 3 ? "ET_DYN" : "other";
}

class SymbolsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pie_ = new FixtureAddresses(run_fixture(SYMFIX_PIE));
    nopie_ = new FixtureAddresses(run_fixture(SYMFIX_NOPIE));
    tail_ = new FixtureAddresses(run_fixture(SYMFIX_TAIL));
  }
  static void TearDownTestSuite() {
    delete pie_;
    delete nopie_;
    delete tail_;
  }

  // Resolves a fixture address and checks function, file and line against the source marker.
  void expect_resolves(const FixtureAddresses& run, const std::string& marker,
                       const std::string& function, const std::string& file) {
    SCOPED_TRACE(marker);
    ASSERT_EQ(run.count(marker), 1u);
    const FixtureAddress& address = run.at(marker);
    SourceLocation loc;
    ASSERT_TRUE(resolver_.resolve(address.module, address.offset, address.is_return_address, loc));
    EXPECT_EQ(loc.function, function);
    EXPECT_EQ(basename_of(loc.file), file);
    EXPECT_EQ(loc.file[0], '/') << loc.file;
    const uint32_t expected_line = marked_line(file, marker);
    ASSERT_NE(expected_line, 0u);
    EXPECT_EQ(loc.line, expected_line);
  }

  static FixtureAddresses* pie_;
  static FixtureAddresses* nopie_;
  static FixtureAddresses* tail_;
  SymbolResolver resolver_;
};

FixtureAddresses* SymbolsTest::pie_ = nullptr;
FixtureAddresses* SymbolsTest::nopie_ = nullptr;
FixtureAddresses* SymbolsTest::tail_ = nullptr;

bool is_entry(std::string_view symbol) { return symbol == "symfix_entry"; }

TEST_F(SymbolsTest, FixturesHaveExpectedElfTypes) {
  EXPECT_EQ(elf_type_of(SYMFIX_PIE), "ET_DYN");
  EXPECT_EQ(elf_type_of(SYMFIX_NOPIE), "ET_EXEC");
  EXPECT_EQ(pie_->at("main_static").module, SYMFIX_PIE);
  EXPECT_EQ(nopie_->at("main_static").module, SYMFIX_NOPIE);
  EXPECT_EQ(pie_->at("lib_static").module, SYMFIX_LIB);
}

TEST_F(SymbolsTest, PieExecutable) {
  expect_resolves(*pie_, "main_static", "main_static_function", "symfixture_main.c");
  expect_resolves(*pie_, "main_call_site", "main", "symfixture_main.c");
}

TEST_F(SymbolsTest, NonPieExecutable) {
  expect_resolves(*nopie_, "main_static", "main_static_function", "symfixture_main.c");
  expect_resolves(*nopie_, "main_call_site", "main", "symfixture_main.c");
}

TEST_F(SymbolsTest, SharedLibrary) {
  for (const FixtureAddresses* run : {pie_, nopie_}) {
    expect_resolves(*run, "lib_static", "lib_static_function", "symfixture_lib.c");
    expect_resolves(*run, "lib_exported", "symfix_lib_exported", "symfixture_lib.c");
    expect_resolves(*run, "lib_call_site", "symfix_lib_exported", "symfixture_lib.c");
  }
}

TEST_F(SymbolsTest, InlinedCallSiteReportsInnermostFunction) {
  expect_resolves(*pie_, "lib_inlined_call_site", "lib_inlined_helper", "symfixture_lib.c");
}

TEST_F(SymbolsTest, CxxNamesAreDemangled) {
  expect_resolves(*pie_, "cpp_method", "symfix::Widget::scaled(int)", "symfixture_cpp.cpp");
}

// The fixture's call sites are followed by a statement on the next line, so looking up the raw
// return address lands there; the adjustment is what brings it back to the call.
TEST_F(SymbolsTest, ReturnAddressAdjustmentSelectsCallLine) {
  const FixtureAddress& address = pie_->at("main_call_site");
  SourceLocation raw;
  ASSERT_TRUE(resolver_.resolve(address.module, address.offset, false, raw));
  EXPECT_NE(raw.line, marked_line("symfixture_main.c", "main_call_site"));
}

TEST_F(SymbolsTest, StrippedLibraryKeepsExportedNamesOnly) {
  const FixtureAddresses& run = *pie_;
  SourceLocation loc;
  ASSERT_TRUE(resolver_.resolve(SYMFIX_STRIPPED_LIB, run.at("lib_exported").offset, false, loc));
  EXPECT_EQ(loc.function, "symfix_lib_exported");  // from .dynsym
  EXPECT_EQ(loc.file, "");
  EXPECT_EQ(loc.line, 0u);

  ASSERT_TRUE(resolver_.resolve(SYMFIX_STRIPPED_LIB, run.at("cpp_method").offset, false, loc));
  EXPECT_EQ(loc.function, "symfix::Widget::scaled(int)");  // demangled from .dynsym

  EXPECT_FALSE(resolver_.resolve(SYMFIX_STRIPPED_LIB, run.at("lib_static").offset, false, loc));
  EXPECT_EQ(loc.function, "");
  EXPECT_EQ(loc.file, "");
  EXPECT_EQ(loc.line, 0u);
}

TEST_F(SymbolsTest, StrippedExecutableHasNoInfoForStaticFunction) {
  SourceLocation loc;
  EXPECT_FALSE(resolver_.resolve(SYMFIX_STRIPPED_PIE, pie_->at("main_static").offset, false, loc));
  EXPECT_EQ(loc.function, "");
  EXPECT_EQ(loc.line, 0u);
}

TEST_F(SymbolsTest, OffsetOutsideModuleFails) {
  SourceLocation loc;
  EXPECT_FALSE(resolver_.resolve(SYMFIX_LIB, 0x7fffffff, false, loc));
  EXPECT_FALSE(resolver_.resolve(SYMFIX_LIB, 0, true, loc));
}

TEST_F(SymbolsTest, MissingFileFailsEveryTime) {
  SourceLocation loc;
  loc.function = "stale";
  EXPECT_FALSE(resolver_.resolve("/nonexistent/libnothing.so", 0x1000, false, loc));
  EXPECT_EQ(loc.function, "");
  EXPECT_FALSE(resolver_.resolve("/nonexistent/libnothing.so", 0x1000, false, loc));  // cached
}

TEST_F(SymbolsTest, NonElfAndTruncatedFilesFail) {
  // A directory of this process: not fixed names in /tmp, which another build's test may write.
  const scalea::test::TempDir tmp("scalea-symbols");
  const std::string& dir = tmp.path();
  const std::string text_file = dir + "/symbols_test_not_elf.txt";
  const std::string empty_file = dir + "/symbols_test_empty";
  const std::string truncated_file = dir + "/symbols_test_truncated.so";
  std::ofstream(text_file) << "this is not an ELF file\n";
  std::ofstream(empty_file).close();
  {
    std::ifstream library(SYMFIX_LIB, std::ios::binary);
    std::string head(256, '\0');
    library.read(&head[0], static_cast<std::streamsize>(head.size()));
    std::ofstream(truncated_file, std::ios::binary) << head;
  }
  SourceLocation loc;
  EXPECT_FALSE(resolver_.resolve(text_file, 0x10, false, loc));
  EXPECT_FALSE(resolver_.resolve(empty_file, 0x10, false, loc));
  EXPECT_FALSE(resolver_.resolve(truncated_file, pie_->at("lib_static").offset, false, loc));
  EXPECT_FALSE(resolver_.resolve(source_path("symfixture_main.c"), 0x10, false, loc));
}

TEST_F(SymbolsTest, MovedResolverKeepsWorking) {
  SourceLocation loc;
  const FixtureAddress& address = pie_->at("main_static");
  ASSERT_TRUE(resolver_.resolve(address.module, address.offset, false, loc));
  SymbolResolver moved(std::move(resolver_));
  SourceLocation again;
  ASSERT_TRUE(moved.resolve(address.module, address.offset, false, again));
  EXPECT_EQ(again.function, loc.function);
  EXPECT_EQ(again.line, loc.line);
}

// Every resolved address names its ELF symbol and the offset in it, with or without DWARF.
TEST_F(SymbolsTest, SymbolAndOffsetWithAndWithoutDebugInfo) {
  const FixtureAddress& call = pie_->at("main_call_site");
  SourceLocation loc;
  ASSERT_TRUE(resolver_.resolve(call.module, call.offset, true, loc));
  EXPECT_EQ(loc.symbol, "main");
  EXPECT_EQ(loc.address, call.offset);
  // The offset is the return address's: main's entry plus it is the recorded address.
  SourceLocation entry;
  ASSERT_TRUE(resolver_.resolve(call.module, call.offset - loc.symbol_offset, false, entry));
  EXPECT_EQ(entry.symbol, "main");
  EXPECT_EQ(entry.symbol_offset, 0u);

  ASSERT_TRUE(resolver_.resolve(SYMFIX_STRIPPED_LIB, pie_->at("lib_exported").offset, false, loc));
  EXPECT_EQ(loc.symbol, "symfix_lib_exported");
  EXPECT_EQ(loc.symbol_offset, 0u);
  EXPECT_EQ(loc.file, "");
}

// The fixture really ends functions with tail jumps: the entry's return address is the caller's.
TEST_F(SymbolsTest, TailJumpLeavesTheCallersReturnAddress) {
  const FixtureAddress& ra = tail_->at("tail_direct");
  SourceLocation loc;
  ASSERT_TRUE(resolver_.resolve(ra.module, ra.offset, true, loc));
  EXPECT_EQ(loc.function, "main");
  EXPECT_EQ(loc.line, marked_line("symfixture_tail.c", "tail_caller"));
}

TEST_F(SymbolsTest, CallSiteFollowsTheTailJumpToTheEntry) {
  for (const char* marker : {"tail_direct", "tail_chain"}) {
    SCOPED_TRACE(marker);
    const FixtureAddress& ra = tail_->at(marker);
    SourceLocation loc;
    ASSERT_TRUE(resolver_.resolve_call_site(ra.module, ra.offset, is_entry, loc));
    EXPECT_TRUE(loc.tail_call);
    EXPECT_EQ(loc.function, "tail_ends_with_entry");
    EXPECT_EQ(loc.symbol, "tail_ends_with_entry");
    EXPECT_EQ(basename_of(loc.file), "symfixture_tail.c");
    EXPECT_EQ(loc.line, marked_line("symfixture_tail.c", "tail_jump"));
    EXPECT_NE(loc.address, ra.offset);
    EXPECT_GT(loc.symbol_offset, 0u);
  }
}

TEST_F(SymbolsTest, CallSiteKeepsADirectCallAndAnUnknownEntry) {
  const FixtureAddress& direct = tail_->at("direct");
  SourceLocation loc;
  ASSERT_TRUE(resolver_.resolve_call_site(direct.module, direct.offset, is_entry, loc));
  EXPECT_FALSE(loc.tail_call);
  EXPECT_EQ(loc.line, marked_line("symfixture_tail.c", "direct_call"));
  EXPECT_EQ(loc.address, direct.offset);

  // The jump found must be to one of the construct's entries: none here, so the caller's line.
  const FixtureAddress& ra = tail_->at("tail_direct");
  ASSERT_TRUE(resolver_.resolve_call_site(ra.module, ra.offset,
                                          [](std::string_view s) { return s == "MPI_Send"; }, loc));
  EXPECT_FALSE(loc.tail_call);
  EXPECT_EQ(loc.line, marked_line("symfixture_tail.c", "tail_caller"));
}

TEST_F(SymbolsTest, TailJumpInsideAFunction) {
  const FixtureAddress& fn = tail_->at("tail_function");
  SourceLocation loc;
  ASSERT_TRUE(resolver_.resolve_tail_jump(fn.module, fn.offset, is_entry, loc));
  EXPECT_EQ(loc.line, marked_line("symfixture_tail.c", "tail_jump"));
  EXPECT_FALSE(resolver_.resolve_tail_jump(fn.module, fn.offset, [](std::string_view) { return false; }, loc));
  EXPECT_FALSE(resolver_.resolve_tail_jump(fn.module, fn.offset + 1, is_entry, loc));  // not a start
  EXPECT_FALSE(resolver_.resolve_tail_jump("/nonexistent/libnothing.so", 0x1000, is_entry, loc));
}

TEST(OutlinedNames, CompilersBodies) {
  for (const char* name : {".omp_outlined.", ".omp_outlined..23", ".omp_outlined._debug__",
                           ".omp_outlined._debug__.48", ".omp_task_entry.", ".omp_task_entry..15",
                           ".omp.reduction.reduction_func", "main._omp_fn.0", "resid._omp_cpyfn.2",
                           "main.omp_outlined", "main.omp_outlined.1", "main.omp_outlined_debug__",
                           "foo() [clone ._omp_fn.1]", "main.DIR.OMP.PARALLEL.2",
                           "__omp_offloading_10303_4d2_main_l12"})
    EXPECT_TRUE(is_outlined_function(name)) << name;
  for (const char* name : {"main", "omp_get_wtime", "__kmpc_fork_call", "resid", "compute_omp_sum",
                           "ns::omp::solve(int)", ""})
    EXPECT_FALSE(is_outlined_function(name)) << name;
  EXPECT_EQ(outlined_origin("main._omp_fn.0"), "main");
  EXPECT_EQ(outlined_origin("conj_grad.omp_outlined.3"), "conj_grad");
  EXPECT_EQ(outlined_origin("foo(int) [clone ._omp_fn.1]"), "foo(int)");
  EXPECT_EQ(outlined_origin(".omp_outlined..23"), "");
  EXPECT_EQ(outlined_origin(".omp_task_entry."), "");
  EXPECT_EQ(outlined_origin("main"), "");
}

}  // namespace
}  // namespace scalea::drg
