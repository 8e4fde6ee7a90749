// Short function names for labels (drg/src/names.cpp, docs/symbols.md "Labels"): literal names
// as __cxa_demangle writes them.
#include <gtest/gtest.h>

#include "scalea/drg/names.hpp"

namespace scalea::drg {
namespace {

// The name clang 14 gives a member function template of a class template over a std::map.
const char* kBoxApply =
    "void Box<std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >, std::vector<double, std::allocator<double> >, "
    "std::less<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
    ">, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> > const, std::vector<double, std::allocator<double> > > > > "
    ">::apply<main::$_0>(main::$_0) const";

TEST(ShortFunctionName, CNamesStayAsTheyAre) {
  for (const char* name : {"main", "conj_grad", "main._omp_fn.0", ".omp_outlined..26",
                           ".omp_outlined._debug__.48", "left, right", ""})
    EXPECT_EQ(short_function_name(name), name);
}

TEST(ShortFunctionName, TemplateArgumentsParametersAndReturnTypeGo) {
  EXPECT_EQ(short_function_name(kBoxApply), "Box<...>::apply<...>");
  EXPECT_EQ(short_function_name("Grid<double>::update(int, double const&)"), "Grid<...>::update");
  EXPECT_EQ(short_function_name("std::vector<int, std::allocator<int> >::size() const"),
            "std::vector<...>::size");
  EXPECT_EQ(short_function_name("unsigned long ns::count<Grid<Cell<float> > >(Grid<Cell<float> > "
                                "const&) &&"),
            "ns::count<...>");
  EXPECT_EQ(short_function_name("f(int (*)(double))"), "f");
  EXPECT_EQ(short_function_name("std::__cxx11::basic_string<char>::c_str[abi:cxx11]() const"),
            "std::__cxx11::basic_string<...>::c_str");
}

TEST(ShortFunctionName, OperatorsKeepTheirSymbols) {
  EXPECT_EQ(short_function_name("(anonymous namespace)::Anon::operator<((anonymous "
                                "namespace)::Anon const&) const"),
            "(anonymous namespace)::Anon::operator<");
  EXPECT_EQ(short_function_name("bool operator< <int>(Box<int> const&, Box<int> const&)"),
            "operator< <...>");
  EXPECT_EQ(short_function_name("std::ostream& operator<<(std::ostream&, Grid<int> const&)"),
            "operator<<");
  EXPECT_EQ(short_function_name("Box<int>::operator()(int) const"), "Box<...>::operator()");
  EXPECT_EQ(short_function_name("Box<int>::operator->() const"), "Box<...>::operator->");
  EXPECT_EQ(short_function_name("Box<int>::operator[](unsigned long)"), "Box<...>::operator[]");
  EXPECT_EQ(short_function_name("Box<int>::operator int() const"), "Box<...>::operator int");
  EXPECT_EQ(short_function_name("operator new(unsigned long)"), "operator new");
}

TEST(ShortFunctionName, LambdasKeepTheirNumber) {
  EXPECT_EQ(short_function_name("main::$_1::operator()(double) const"), "main::$_1::operator()");
  EXPECT_EQ(short_function_name("Grid<double>::update(int)::{lambda(double)#1}::operator()(double) "
                                "const"),
            "Grid<...>::update::{lambda#1}::operator()");
}

TEST(ShortFunctionName, OutlinedBodiesAndClones) {
  EXPECT_EQ(short_function_name(std::string(kBoxApply) + " (.omp_outlined..122)"),
            "Box<...>::apply<...>");
  EXPECT_EQ(short_function_name("main (.omp_outlined..26)"), "main");
  EXPECT_EQ(short_function_name("Grid<int>::update(int) [clone ._omp_fn.0]"),
            "Grid<...>::update [clone ._omp_fn.0]");
}

TEST(ShortFunctionName, ListsAreShortenedNameByName) {
  EXPECT_EQ(short_function_name("Grid<int>::left(int), Grid<int>::right(int)"),
            "Grid<...>::left, Grid<...>::right");
  EXPECT_EQ(short_function_name(std::string(kBoxApply) + ", main"), "Box<...>::apply<...>, main");
}

TEST(ShortFunctionName, LongNamesLoseTheirMiddle) {
  std::string name = "ns";
  for (int i = 0; i < 40; ++i) name += "::level" + std::to_string(i);
  std::string s = short_function_name(name + "(int)");
  EXPECT_EQ(s.size(), kMaxNameLength);
  EXPECT_EQ(s.rfind("ns::level0::", 0), 0u) << s;
  EXPECT_NE(s.find("..."), std::string::npos) << s;
  EXPECT_EQ(s.substr(s.size() - 9), "::level39") << s;
  EXPECT_EQ(short_function_name(name, 20).size(), 20u);
  EXPECT_EQ(elide_middle("abcdefghij", 7), "ab...ij");
  EXPECT_EQ(elide_middle("abc", 7), "abc");
  EXPECT_EQ(elide_middle("abcdefghij", 2), "ab");
}

}  // namespace
}  // namespace scalea::drg
