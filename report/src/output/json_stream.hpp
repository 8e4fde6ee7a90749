// JSON and text written piece by piece: sinks, and documents whose large arrays are made one
// element at a time (never held whole), shared by every JSON output of the command.
#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace scalea::cli {

// JSON text of a value: like j.dump(indent), but bytes that are not UTF-8 (a region or file name
// in another encoding, taken from the program as it is) become U+FFFD instead of an exception, so
// that one odd name never costs the whole document (or leaves half of it written).
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Text is handed to a sink piece by piece: appended to a string, or written to a stream.
using TextSink = std::function<void(std::string_view)>;

// Writes to `put` the text doc.dump(2) would give with the top-level arrays `arrays` in it, whose
// elements are made one at a time: write(emit) calls emit(element) for each, in order. A document
// with one element per region is never held whole (for 100,000 regions its tree took 1-2.4 GB).
// An element may have arrays of its own made the same way, emit(element, arrays): a region's
// list of its threads. Json is nlohmann::json or nlohmann::ordered_json; with the latter, the
// arrays' keys must be in `doc` (or the element) already, where they belong.
template <class Json>
struct StreamedArray;
template <class Json>
class Emit {
 public:
  explicit Emit(std::function<void(const Json&, const std::vector<StreamedArray<Json>>&)> f)
      : f_(std::move(f)) {}
  void operator()(const Json& element) const { f_(element, {}); }
  void operator()(const Json& element, const std::vector<StreamedArray<Json>>& arrays) const {
    f_(element, arrays);
  }

 private:
  std::function<void(const Json&, const std::vector<StreamedArray<Json>>&)> f_;
};
template <class Json>
struct StreamedArray {
  std::string key;
  std::function<void(const Emit<Json>& emit)> write;
};
// Appends `text` to `out`, every line after its first indented by `indent` more.
inline void append_indented(std::string& out, const std::string& text, size_t indent) {
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out.append(indent, ' ');
  }
}
// `indent`: the indentation of the line `doc` starts on (0 for a document, 4 for the elements of
// its arrays, ...): every line after its first starts with that much more.
template <class Json>
void dump_streamed(const TextSink& put, Json doc, const std::vector<StreamedArray<Json>>& arrays,
                   size_t indent = 0) {
  // Each array's place in the document is held by a string no other value dumps to.
  std::vector<std::string> marks;
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string mark = "\x01scalea-streamed-array-" + std::to_string(i) + "\x01";
    doc[arrays[i].key] = mark;
    marks.push_back(json_text(Json(mark)));
  }
  std::string skeleton;
  append_indented(skeleton, json_text(doc, 2), indent);
  std::vector<std::pair<size_t, size_t>> at;  // position in the skeleton, array
  for (size_t i = 0; i < arrays.size(); ++i) at.emplace_back(skeleton.find(marks[i]), i);
  std::sort(at.begin(), at.end());
  // A member's value is dumped 2 deeper than its object, the value's elements 4 deeper.
  const std::string open = "[\n" + std::string(indent + 4, ' '),
                    next = ",\n" + std::string(indent + 4, ' '),
                    close = "\n" + std::string(indent + 2, ' ') + "]";
  size_t from = 0;
  std::string piece;
  for (const auto& [pos, i] : at) {
    put(std::string_view(skeleton).substr(from, pos - from));
    from = pos + marks[i].size();
    bool any = false;
    arrays[i].write(
        Emit<Json>([&](const Json& element, const std::vector<StreamedArray<Json>>& nested) {
          piece = any ? next : open;
          any = true;
          if (!nested.empty()) {
            put(piece);
            dump_streamed(put, element, nested, indent + 4);
            return;
          }
          append_indented(piece, json_text(element, 2), indent + 4);
          put(piece);
        }));
    put(any ? close : "[]");
  }
  put(std::string_view(skeleton).substr(from));
}
// Sinks: a string to append to, a stream to write to.
inline TextSink append_to(std::string& s) {
  return [&s](std::string_view text) { s.append(text); };
}
inline TextSink write_to(std::ostream& os) {
  return [&os](std::string_view text) { os.write(text.data(), std::streamsize(text.size())); };
}

}  // namespace scalea::cli
