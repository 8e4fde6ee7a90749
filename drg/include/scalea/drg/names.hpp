// Readable names for labels: C++ functions as reports show them (docs/symbols.md, "Labels").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace scalea::drg {

// The longest name short_function_name returns by default.
inline constexpr size_t kMaxNameLength = 80;

// A demangled function name shortened for a label; names of C functions come back unchanged:
//   "double ns::Grid<std::map<...>, int>::update<main::$_0>(main::$_0, int) const"
//                                            -> "ns::Grid<...>::update<...>"
// the return type, the parameter list and the qualifiers after it are dropped, every template
// argument list becomes "<...>", a lambda's parameters go ("{lambda(int)#1}" -> "{lambda#1}"),
// an outlined body's name in parentheses at the end goes ("main (.omp_outlined..12)" -> "main"),
// a clone suffix stays ("f(int) [clone ._omp_fn.0]" -> "f [clone ._omp_fn.0]"); a list of
// functions ("left, right") is shortened name by name. Operators keep their symbols
// ("operator<", "operator()"), "(anonymous namespace)" stays. A result longer than `max` keeps
// its beginning and end with "..." between them.
std::string short_function_name(std::string_view name, size_t max = kMaxNameLength);

// `text` cut to at most `max` characters by replacing its middle with "...".
std::string elide_middle(std::string_view text, size_t max);

}  // namespace scalea::drg
