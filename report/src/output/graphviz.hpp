// Graphviz, run as a program: DOT text drawn as SVG.
#pragma once
#include <optional>
#include <string>

namespace scalea::cli {

// Renders DOT text to SVG with Graphviz `dot -Tsvg` (no XML prologue). nullopt when `dot` is not
// installed or fails; `why` then says what happened.
// Graphviz gets at most this long; then it is stopped and the graph is not drawn.
inline constexpr int kDotTimeLimitS = 30;
std::optional<std::string> dot_to_svg(const std::string& dot, std::string* why = nullptr);

}  // namespace scalea::cli
