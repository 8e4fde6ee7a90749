// How every output shows the six overhead classes: their colours and short titles.
#pragma once
#include <array>
#include <string_view>

#include "scalea/overheads/classify.hpp"

namespace scalea::cli {

// Colour of each overhead class (fill colours shared by DOT, HTML and the plots).
extern const std::array<std::string_view, overheads::kClassCount> kClassColors;
// Short column titles of the six classes.
extern const std::array<std::string_view, overheads::kClassCount> kClassShort;

}  // namespace scalea::cli
