// JSON text for meta.json (collect/core/writer.cpp, its only writer): strings as JSON literals, and
// the UTF-8 check they need. A leaf: it includes nothing of the tool.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace scalea::collect {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
size_t utf8_sequence(const std::string& s, size_t i);

// `s` as a JSON string literal, quotes included. Bytes that are not UTF-8 (a command argument or
// path in another encoding) become U+FFFD: JSON must be UTF-8, and one such byte would make the
// whole meta.json unreadable.
std::string json_escape(const std::string& s);

// ["a", "b"]: the strings as a JSON array.
std::string json_string_list(const std::vector<std::string>& v);

}  // namespace scalea::collect
