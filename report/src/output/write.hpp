// Where a command's output goes: standard output, or a file that is replaced only once the
// text is complete.
#pragma once
#include <functional>
#include <string>

#include "json_stream.hpp"

namespace scalea::cli {

// Writes `text` to `path` ("-" or "": stdout). Throws UserError naming the path when it cannot.
void write_output(const std::string& path, const std::string& text);
// The same for text made piece by piece by write(put), written as it is made: to stdout, or to
// a temporary file beside `path` that replaces it at the end (`path` is not touched when write()
// throws).
void write_output(const std::string& path, const std::function<void(const TextSink&)>& write);

}  // namespace scalea::cli
