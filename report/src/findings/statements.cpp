// Whether an explicit barrier directly follows the end of a worksharing construct whose own
// barrier already holds the threads there (directive.hpp, construct_ending_before). C and C++: the
// construct's statement is followed to its end (braces, loop and if headers, a statement to its
// `;`), skipping comments, strings and preprocessor lines; Fortran: the line before the barrier is
// the construct's `end` directive. Anything the scan cannot follow says nothing.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "directive.hpp"

namespace scalea::cli {
namespace {

constexpr size_t kNone = std::string::npos;
constexpr uint32_t kLinesAbove = 200;  // how far above the barrier a construct may start
constexpr int kMaxNesting = 64;        // statements nested deeper than this: unsure

std::string lower_words(const std::string& s) {
  std::string out;
  for (char c : s) out += char(std::tolower((unsigned char)c));
  return out;
}

// The words of a directive's text before its first clause argument ("omp for nowait").
bool starts_with_words(const std::string& text, const std::vector<std::string>& words) {
  size_t at = 0;
  const std::string l = lower_words(text);
  for (const std::string& w : words) {
    at = l.find_first_not_of(" \t", at);
    if (at == kNone || l.compare(at, w.size(), w) != 0) return false;
    at += w.size();
    if (at < l.size() && (std::isalnum((unsigned char)l[at]) || l[at] == '_')) return false;
  }
  return true;
}

// A worksharing construct with a barrier at its end (unless nowait), not combined with parallel.
bool worksharing(const Directive& d) {
  for (const char* w : {"for", "do", "sections", "single", "workshare"})
    if (starts_with_words(d.text, {"omp", w})) return true;
  return false;
}

// C or C++ text: where comments, strings and statements end.
class CScan {
 public:
  explicit CScan(const std::string& s) : s_(s) {}

  // Past blanks and comments, and preprocessor lines when `directives`.
  size_t skip(size_t i, bool directives) const {
    while (i < s_.size()) {
      char c = s_[i];
      if (std::isspace((unsigned char)c)) {
        ++i;
      } else if (s_.compare(i, 2, "//") == 0) {
        i = line_end(i);
      } else if (s_.compare(i, 2, "/*") == 0) {
        size_t e = s_.find("*/", i + 2);
        if (e == kNone) return kNone;
        i = e + 2;
      } else if (c == '#' && directives && at_line_start(i)) {
        i = line_end(i);
      } else {
        return i;
      }
    }
    return i;
  }

  // One past the end of the statement that starts at or after i; kNone when unsure.
  size_t statement(size_t i, int depth = 0) const {
    if (depth > kMaxNesting || (i = skip(i, true)) >= s_.size()) return kNone;
    if (s_[i] == '{') return matching(i);
    const std::string w = word(i);
    if (w == "for" || w == "while" || w == "switch")
      return statement(header(i + w.size()), depth + 1);
    if (w == "if") {
      size_t then = statement(header(i + 2), depth + 1);
      size_t k = skip(then, false);
      if (then != kNone && k < s_.size() && word(k) == "else") return statement(k + 4, depth + 1);
      return then;
    }
    if (w == "do") {
      size_t body = statement(i + 2, depth + 1);
      size_t k = skip(body, true);
      if (body == kNone || k >= s_.size() || word(k) != "while") return kNone;
      k = skip(header(k + 5), false);
      return k < s_.size() && s_[k] == ';' ? k + 1 : kNone;
    }
    // An expression or declaration: to its `;` outside brackets.
    while (i < s_.size()) {
      size_t k = skip(i, false);
      if (k >= s_.size()) return kNone;
      char c = s_[k];
      if (c == ';') return k + 1;
      if (c == '(' || c == '[' || c == '{') {
        i = matching(k);
        if (i == kNone) return kNone;
      } else if (c == '"' || c == '\'') {
        i = quoted(k);
        if (i == kNone) return kNone;
      } else if (c == ')' || c == ']' || c == '}') {
        return kNone;
      } else {
        i = k + 1;
      }
    }
    return kNone;
  }

  bool at_line_start(size_t i) const {
    while (i > 0 && (s_[i - 1] == ' ' || s_[i - 1] == '\t')) --i;
    return i == 0 || s_[i - 1] == '\n';
  }
  // The end of the line at i (one past its '\n'), continuation lines ('\' at the end) included.
  size_t line_end(size_t i) const {
    while (i < s_.size()) {
      size_t e = s_.find('\n', i);
      if (e == kNone) return s_.size();
      size_t last = e;
      while (last > i && (s_[last - 1] == '\r' || s_[last - 1] == ' ')) --last;
      if (last > i && s_[last - 1] == '\\') {
        i = e + 1;
        continue;
      }
      return e + 1;
    }
    return s_.size();
  }
  std::string word(size_t i) const {
    size_t e = i;
    while (e < s_.size() && (std::isalnum((unsigned char)s_[e]) || s_[e] == '_')) ++e;
    return s_.substr(i, e - i);
  }
  // `(...)` after a keyword: one past its `)`, kNone when there is none.
  size_t header(size_t i) const {
    i = skip(i, false);
    return i < s_.size() && s_[i] == '(' ? matching(i) : kNone;
  }
  size_t quoted(size_t i) const {
    const char q = s_[i];
    for (size_t k = i + 1; k < s_.size(); ++k) {
      if (s_[k] == '\\') ++k;
      else if (s_[k] == q) return k + 1;
      else if (s_[k] == '\n') return kNone;
    }
    return kNone;
  }
  // At an opening bracket: one past its match.
  size_t matching(size_t i) const {
    if (i == kNone) return kNone;
    std::string open;
    for (size_t k = i; k < s_.size();) {
      size_t at = skip(k, k > i);
      if (at >= s_.size()) return kNone;
      char c = s_[at];
      if (c == '"' || c == '\'') {
        k = quoted(at);
        if (k == kNone) return kNone;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') open += c;
      if (c == ')' || c == ']' || c == '}') {
        const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
        if (open.empty() || open.back() != want) return kNone;
        open.pop_back();
        if (open.empty()) return at + 1;
      }
      k = at + 1;
    }
    return kNone;
  }

 private:
  const std::string& s_;
};

// Whether the directive at `line` starts a statement of its own: the code above it ends one
// (`;`, `{`, `}`, a preprocessor line, a comment). After `if (...)`, `else`, `for (...)` or `do`
// without braces it would be their body, run only when they say so: unsure.
bool starts_a_statement(const std::vector<std::string>& lines, uint32_t line, uint32_t first) {
  for (uint32_t l = line - 1; l >= first && l >= 1; --l) {
    std::string t = lines[l - 1];
    if (size_t c = t.find("//"); c != kNone) t = t.substr(0, c);
    size_t a = t.find_first_not_of(" \t\r"), b = t.find_last_not_of(" \t\r");
    if (a == kNone) continue;
    t = t.substr(a, b - a + 1);
    if (t[0] == '#' || t.back() == ';' || t.back() == '{' || t.back() == '}') return true;
    if (t.size() >= 2 && t.compare(t.size() - 2, 2, "*/") == 0) return true;
    return false;
  }
  return true;
}

bool fortran_comment(const std::string& line) {
  size_t a = line.find_first_not_of(" \t");
  if (a == kNone) return true;  // blank
  return line[a] == '!' && lower_words(line.substr(a, 5)) != "!$omp";
}

Directive fortran_construct_ending_before(const std::vector<std::string>& lines, uint32_t barrier) {
  for (uint32_t at = barrier - 1; at >= 1 && at + kLinesAbove >= barrier; --at) {
    if (fortran_comment(lines[at - 1])) continue;
    Directive d = directive_in(lines, at);
    if (!d.found || d.line != at || d.nowait) return {};
    for (const char* w : {"do", "sections", "single", "workshare"})
      if (starts_with_words(d.text, {"omp", "end", w})) return d;
    return {};
  }
  return {};
}

// The loops a header holds, in order: "for (j...) for (k...)" before a block or a statement.
// Stops at the first thing that is no `for`, `while`, `if` or `else` header.
void header_loops(const CScan& scan, const std::string& text, size_t from, size_t to,
                  const std::vector<size_t>& line_at, std::vector<EnclosingLoop>& out) {
  for (size_t i = scan.skip(from, false); i < to;) {
    const std::string w = scan.word(i);
    if (w == "else") {
      i = scan.skip(i + 4, false);
      continue;
    }
    if (w != "for" && w != "while" && w != "if") return;
    const size_t end = scan.header(i + w.size());
    if (end == kNone || end > to) return;
    if (w != "if") {
      const uint32_t line =
          uint32_t(std::upper_bound(line_at.begin(), line_at.end(), i) - line_at.begin());
      std::string h = text.substr(i, end - i);
      for (char& c : h)
        if (c == '\n' || c == '\t') c = ' ';
      out.push_back({line, h});
    }
    i = scan.skip(end, false);
  }
}

}  // namespace

std::vector<EnclosingLoop> loops_around(const std::string& file, uint32_t line) {
  const std::vector<std::string> lines = read_source_lines(file, line);
  if (lines.size() < line || line == 0) return {};
  std::string text;
  std::vector<size_t> line_at;
  for (uint32_t l = 1; l < line; ++l) {
    line_at.push_back(text.size());
    text += lines[l - 1] + "\n";
  }
  const size_t target = text.size();
  const CScan scan(text);
  // Open blocks: the loops their headers hold, and whether an `omp parallel` opened it.
  struct Block {
    std::vector<EnclosingLoop> loops;
    bool parallel = false;
  };
  std::vector<Block> open;
  size_t statement = 0;   // where the statement being read began
  bool parallel = false;  // an `omp parallel` directive precedes it
  bool shared = false;    // a worksharing or simd directive precedes it: its loop is no serial one
  for (size_t i = 0; i < target;) {
    const size_t k = scan.skip(i, false);
    if (k >= target) break;
    const char c = text[k];
    if (c == '#' && scan.at_line_start(k)) {
      const size_t e = scan.line_end(k);
      const std::string d = lower_words(text.substr(k, e - k));
      const std::string omp = d.find("omp") != kNone ? d.substr(d.find("omp")) : "";
      if (omp.find("parallel") != kNone) parallel = true;
      for (const char* w : {"for", "do", "simd", "taskloop", "distribute", "loop"})
        if (!omp.empty() && starts_with_words(omp, {"omp", w})) shared = true;
      i = statement = e;
    } else if (c == '{') {
      Block b;
      if (!shared) header_loops(scan, text, statement, k, line_at, b.loops);
      b.parallel = parallel;
      open.push_back(std::move(b));
      parallel = shared = false;
      i = statement = k + 1;
    } else if (c == '}') {
      if (open.empty()) return {};  // unbalanced: unsure
      open.pop_back();
      i = statement = k + 1;
      parallel = shared = false;
    } else if (c == ';') {
      i = statement = k + 1;
      parallel = shared = false;
    } else if (c == '(' || c == '[') {
      i = scan.matching(k);
      if (i == kNone || i > target) return {};
    } else if (c == '"' || c == '\'') {
      i = scan.quoted(k);
      if (i == kNone) return {};
    } else {
      i = k + 1;
    }
  }
  // The innermost parallel block bounds them; loops in headers right above the line enclose it
  // too (an unbraced `for (...)` whose body is the construct).
  std::vector<EnclosingLoop> loops;
  size_t from = 0;
  for (size_t b = 0; b < open.size(); ++b)
    if (open[b].parallel) from = b + 1;
  for (size_t b = from; b < open.size(); ++b)
    loops.insert(loops.end(), open[b].loops.begin(), open[b].loops.end());
  if (!parallel && !shared) header_loops(scan, text, statement, target, line_at, loops);
  return loops;
}

Directive construct_ending_before(const std::string& file, uint32_t line) {
  const std::vector<std::string> lines = read_source_lines(file, line + kContinuationLines);
  const Directive bar = directive_in(lines, line);
  if (!bar.found || !starts_with_words(bar.text, {"omp", "barrier"}) || bar.line < 2) return {};
  const std::string ext = lower_words(std::filesystem::path(file).extension().string());
  if (ext.rfind(".f", 0) == 0) return fortran_construct_ending_before(lines, bar.line);
  // The text from the first line a construct may start on, up to the barrier's line.
  const uint32_t first = bar.line > kLinesAbove ? bar.line - kLinesAbove : 1;
  std::string text;
  std::vector<size_t> line_at;  // offset of each line in `text`
  for (uint32_t l = first; l < bar.line; ++l) {
    line_at.push_back(text.size());
    text += lines[l - 1] + "\n";
  }
  const size_t barrier_at = text.size();
  text += lines[bar.line - 1] + "\n";
  const CScan scan(text);
  // The nearest construct whose statement ends right before the barrier decides.
  for (uint32_t l = bar.line - 1; l >= first; --l) {
    const Directive d = directive_in(lines, l);
    if (!d.found || d.line != l || !worksharing(d) || d.last_line >= bar.line) continue;
    const size_t end = scan.statement(line_at[d.line - first]);
    if (end == kNone || scan.skip(end, false) != barrier_at) continue;
    // Under an unbraced `if` or loop the construct runs only when they say so: unsure.
    return d.nowait || !starts_a_statement(lines, d.line, first) ? Directive{} : d;
  }
  return {};
}

}  // namespace scalea::cli
