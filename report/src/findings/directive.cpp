// The OpenMP directive at a region's source line (directive.hpp).
#include "directive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

namespace scalea::cli {
namespace {

constexpr uintmax_t kMaxSourceBytes = uintmax_t(16) << 20;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The directive text of a line ("omp for schedule(dynamic)"), or "" when the line holds none:
// `#pragma omp` (spaces allowed after `#`) or a Fortran `!$omp` sentinel.
std::string directive_of(const std::string& line) {
  const std::string t = trim(line), l = lower(t);
  if (l.rfind("!$omp", 0) == 0) return "omp" + t.substr(5);
  if (l.empty() || l[0] != '#') return "";
  size_t p = l.find_first_not_of(" \t", 1);
  if (p == std::string::npos || l.compare(p, 6, "pragma") != 0) return "";
  p = l.find_first_not_of(" \t", p + 6);
  if (p == std::string::npos || l.compare(p, 3, "omp") != 0) return "";
  if (p + 3 < l.size() && (std::isalnum((unsigned char)l[p + 3]) || l[p + 3] == '_')) return "";
  return t.substr(p);
}

// Whole words of a directive, clause arguments left out ("omp parallel for schedule nowait").
bool has_word(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    bool left = at == 0 || !std::isalnum((unsigned char)text[at - 1]);
    size_t end = at + word.size();
    bool right =
        end >= text.size() || !(std::isalnum((unsigned char)text[end]) || text[end] == '_');
    if (left && right) return true;
  }
  return false;
}

}  // namespace

Directive parse_directive(const std::string& text) {
  Directive d;
  d.text = trim(text);
  d.found = !d.text.empty();
  const std::string l = lower(d.text);
  d.nowait = has_word(l, "nowait");
  for (size_t at = l.find("schedule"); at != std::string::npos; at = l.find("schedule", at + 1)) {
    if (at > 0 && (std::isalnum((unsigned char)l[at - 1]) || l[at - 1] == '_')) continue;
    size_t open = l.find_first_not_of(" \t", at + 8);
    if (open == std::string::npos || l[open] != '(') continue;
    int depth = 0;
    size_t close = open, comma = std::string::npos;
    for (; close < l.size(); ++close) {
      if (l[close] == '(') ++depth;
      if (l[close] == ')' && --depth == 0) break;
      if (l[close] == ',' && depth == 1 && comma == std::string::npos) comma = close;
    }
    if (close >= l.size()) break;  // unbalanced: say nothing
    std::string kind =
        d.text.substr(open + 1, (comma == std::string::npos ? close : comma) - open - 1);
    if (size_t colon = kind.rfind(':'); colon != std::string::npos) kind = kind.substr(colon + 1);
    d.schedule = lower(trim(kind));
    if (comma != std::string::npos) d.chunk = trim(d.text.substr(comma + 1, close - comma - 1));
    break;
  }
  return d;
}

// The first `count` lines of a readable source file (fewer at its end; none when unreadable).
std::vector<std::string> read_source_lines(const std::string& file, size_t count) {
  std::error_code ec;
  std::vector<std::string> lines;
  if (file.empty() || !std::filesystem::is_regular_file(file, ec) ||
      std::filesystem::file_size(file, ec) > kMaxSourceBytes)
    return lines;
  std::ifstream in(file);
  for (std::string l; lines.size() < count && std::getline(in, l);) lines.push_back(l);
  return lines;
}

namespace {
// Lines read below a critical directive for its body (critical_advice).
constexpr uint32_t kBodyLines = 12;
}  // namespace

Directive directive_in(const std::vector<std::string>& lines, uint32_t line) {
  if (line == 0 || lines.size() < line) return {};
  // The nearest directive at or above the line; then its continuation lines.
  for (uint32_t at = line; at >= 1 && at + kDirectiveLinesAbove >= line; --at) {
    std::string text = directive_of(lines[at - 1]);
    if (text.empty()) continue;
    // A continuation line (Fortran's `!$omp&`, or below a line that ends in `\` or `&`) is not
    // where the directive starts: go on up.
    if (at > 1) {
      std::string above = trim(lines[at - 2]);
      if (!above.empty() && (above.back() == '\\' || above.back() == '&')) continue;
    }
    std::string tail = lines[at - 1];
    uint32_t next = at;
    auto continued = [](std::string s, std::string& joined) {
      s = trim(s);
      if (s.empty() || (s.back() != '\\' && s.back() != '&')) return false;
      joined.pop_back();  // the joined text ends with the same mark
      return true;
    };
    text = trim(text);
    while (continued(tail, text) &&
           next < std::min(lines.size(), size_t(line) + kContinuationLines)) {
      tail = lines[next++];
      std::string more = trim(tail);
      if (lower(more).rfind("!$omp", 0) == 0) more = more.substr(5);
      if (!more.empty() && more[0] == '&') more = more.substr(1);
      text = trim(text) + " " + trim(more);
    }
    Directive d = parse_directive(text);
    d.line = at;
    d.last_line = next;
    return d;
  }
  return {};
}

Directive directive_at(const std::string& file, uint32_t line) {
  return directive_in(read_source_lines(file, line + kContinuationLines), line);
}

uint64_t suggested_chunk(const LoopCost& c) {
  if (!(c.iterations > 0) || !(c.seconds_per_iteration > 0)) return 0;
  const double balance = std::floor(c.iterations / (std::max(1, c.threads) * kChunksPerThread));
  const double paid = std::ceil(kChunkMinSeconds / c.seconds_per_iteration * (1 - 1e-9));
  return uint64_t(std::max(1.0, std::min(balance, paid)));
}

namespace {

// "2.5 ns", "4.2 us", "20 us", "4.2 ms", "1.25 s".
std::string micros(double s) {
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 10e-6) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1e-3) return fmt::format("{:.0f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

// "schedule(dynamic, 16) (16 iterations take about 20 us, ...)", or with the chunk left to the
// user ("schedule(dynamic, C) ... with chunks C large enough ...") when the cost is not measured.
std::string named_chunk(const std::string& kind, const LoopCost& cost) {
  const uint64_t c = suggested_chunk(cost);
  if (c == 0)
    return fmt::format("schedule({}, C) with chunks C large enough that taking one costs little",
                       kind);
  return fmt::format(
      "schedule({}, {}) ({} iteration{} take{} about {} here: taking a chunk costs little beside "
      "that, and each thread gets about {} of them)",
      kind, c, c, c == 1 ? "" : "s", c == 1 ? "s" : "",
      micros(double(c) * cost.seconds_per_iteration),
      std::max<uint64_t>(1, uint64_t(cost.iterations / (double(c) * std::max(1, cost.threads)))));
}

// The schedule kind as written, else as the runtime reported it ("" when neither says).
std::string kind_of(const Directive& d, format::LoopSchedule runtime) {
  if (!d.schedule.empty()) return d.schedule;
  switch (runtime) {
    case format::LoopSchedule::Dynamic: return "dynamic";
    case format::LoopSchedule::Guided: return "guided";
    default: return "";
  }
}

// The chunk as a number: as the directive writes it (1 when it gives none), else as the threads
// took them (an expression's value); 0 when neither is known.
double chunk_of(const Directive& d, const LoopCost& cost) {
  char* end = nullptr;
  double written = d.chunk.empty() ? 1 : std::strtod(d.chunk.c_str(), &end);
  if (d.chunk.empty() || (end && *end == 0 && written >= 1)) return written;
  return cost.chunk >= 1 ? cost.chunk : 0;
}

// The advice for a loop that is dynamic or guided already: about its chunks, never "dynamic".
std::string dynamic_advice(const std::string& kind, const Directive& d, const LoopCost& cost,
                           const std::string& sched, const std::string& at) {
  const std::string head =
      fmt::format("the loop is already {}{}: another schedule is not what is missing; ", sched, at);
  // The chunk as a number, when the directive writes one (1 when it gives none).
  const double written = chunk_of(d, cost);
  const bool known = written > 0;
  const uint64_t better = suggested_chunk(cost);
  if (known && better > 0 && written * cost.seconds_per_iteration < kChunkMinSeconds / 4 &&
      double(better) > written)
    return head + fmt::format(
                      "its chunks of {:.0f} iteration{} take about {} each, too little to pay "
                      "for taking each from the runtime (the threads contend for the next one): "
                      "give larger chunks, {}",
                      written, written == 1 ? "" : "s",
                      micros(written * cost.seconds_per_iteration), named_chunk(kind, cost));
  if (d.chunk.empty())
    return head + fmt::format(
                      "its chunks are single iterations{}, so a few iterations take much longer "
                      "than the others: split the longest ones, or hand them out first (order "
                      "the iterations by their cost)",
                      kind == "guided" ? " at the end" : "");
  const bool smaller = better > 0 && (!known || double(better) < written);
  return head + fmt::format(
                    "give smaller chunks{} (a thread takes {} iterations at a time, and the last "
                    "ones decide when the loop ends), or split the iterations that take longest",
                    smaller ? ", e.g. " + named_chunk(kind, cost) : "", d.chunk);
}

}  // namespace

bool chunks_too_small(const Directive& d, format::LoopSchedule runtime, const LoopCost& cost) {
  const std::string kind = kind_of(d, runtime);
  const double chunk = chunk_of(d, cost);
  return (kind == "dynamic" || kind == "guided") && chunk > 0 && cost.seconds_per_iteration > 0 &&
         chunk * cost.seconds_per_iteration < kChunkMinSeconds / 4;
}

std::string schedule_advice(const Directive& d, format::LoopSchedule runtime,
                            const std::string& where, const LoopCost& cost) {
  const std::string kind = kind_of(d, runtime);
  const std::string at = where.empty() ? "" : " (" + where + ")";
  if (cost.iterations > 0 && cost.iterations < 2 * std::max(1, cost.threads) &&
      (d.found || !kind.empty()))
    // Fewer than two iterations per thread: whichever thread gets the longest one decides.
    return fmt::format(
        "the loop{} has only {:.0f} iteration{} for {} threads: no schedule can balance iterations "
        "of unequal work; split the work into more, smaller iterations (collapse(2) over nested "
        "loops, a finer decomposition)",
        at, cost.iterations, cost.iterations == 1 ? "" : "s", cost.threads);
  const std::string sched = "schedule(" + kind + (d.chunk.empty() ? "" : ", " + d.chunk) + ")";
  if (kind == "dynamic" || kind == "guided") return dynamic_advice(kind, d, cost, sched, at);
  if (kind == "static")
    return fmt::format(
        "the loop is {}{}: each thread gets fixed iterations; try {}, or schedule(guided), or "
        "balance the work per iteration",
        sched, at, named_chunk("dynamic", cost));
  if (kind == "runtime") {
    const uint64_t c = suggested_chunk(cost);
    return fmt::format(
        "the loop is schedule(runtime){}: OMP_SCHEDULE chooses it, no rebuild needed; try "
        "OMP_SCHEDULE=dynamic,{} or guided{} (scalea tune tries them), or balance the work per "
        "iteration",
        at, c ? std::to_string(c) : "C", c ? "," + std::to_string(c) : "");
  }
  if (d.found && kind.empty() && (has_word(lower(d.text), "for") || has_word(lower(d.text), "do")))
    return fmt::format(
        "the loop has no schedule clause{} (libomp then gives each thread fixed iterations, as "
        "static does): try {}, or schedule(guided), or balance the work per iteration",
        at, named_chunk("dynamic", cost));
  return "";
}

std::vector<SourceLine> source_excerpt(const std::string& file, uint32_t line) {
  std::vector<SourceLine> out;
  if (line == 0) return out;
  const std::vector<std::string> lines = read_source_lines(file, line + kContinuationLines + 1);
  if (lines.size() < line) return out;
  const Directive d = directive_in(lines, line);
  uint32_t first = d.found && d.line <= line ? d.line : line;
  // A directive applies to the statement after it (the loop's header, the critical's body).
  uint32_t last =
      d.found ? std::max(line, std::min<uint32_t>(d.last_line + 1, uint32_t(lines.size()))) : line;
  if (last - first + 1 > kExcerptLines) first = last + 1 - uint32_t(kExcerptLines);
  for (uint32_t l = first; l <= last; ++l) {
    std::string text = lines[l - 1];
    std::replace(text.begin(), text.end(), '\t', ' ');
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    if (text.size() > kExcerptWidth) text = text.substr(0, kExcerptWidth - 3) + "...";
    out.push_back({l, text});
  }
  return out;
}

std::string critical_advice(const std::string& file, uint32_t line) {
  const std::vector<std::string> lines =
      read_source_lines(file, line + kContinuationLines + kBodyLines);
  const Directive d = directive_in(lines, line);
  if (!d.found || !has_word(lower(d.text), "critical")) return "";
  // The statement after the directive: one line, or a braced block of a few lines.
  std::string body;
  for (size_t i = d.last_line; i < std::min(lines.size(), size_t(d.last_line) + kBodyLines); ++i) {
    std::string l = trim(lines[i]);
    if (size_t c = l.find("//"); c != std::string::npos) l = trim(l.substr(0, c));
    if (l.empty() && body.empty()) continue;
    body += (body.empty() ? "" : " ") + l;
    if (body[0] != '{' && body.find(';') != std::string::npos) break;
    if (body[0] == '{' && body.find('}') != std::string::npos) break;
  }
  body = trim(body);
  if (!body.empty() && body.front() == '{' && body.back() == '}')
    body = trim(body.substr(1, body.size() - 2));
  if (size_t semi = body.find(';'); semi == std::string::npos || semi + 1 != body.size())
    return "";  // not one statement
  body = trim(body.substr(0, body.size() - 1));
  const std::string where = fmt::format("{}:{}", file.substr(file.rfind('/') + 1), d.line);
  static const std::regex compound(R"(^([A-Za-z_][\w.]*(?:\[[^\]]*\])?)\s*([-+*&|^])=\s*(.+)$)");
  static const std::regex spelled(
      R"(^([A-Za-z_][\w.]*)\s*=\s*([A-Za-z_][\w.]*)\s*([-+*&|^])\s*(.+)$)");
  static const std::regex step(
      R"(^(?:(\+\+|--)\s*([A-Za-z_][\w.]*)|([A-Za-z_][\w.]*)\s*(\+\+|--))$)");
  static const std::regex extreme(
      R"(^if\s*\(\s*(.+?)\s*([<>])=?\s*([A-Za-z_][\w.]*)\s*\)\s*([A-Za-z_][\w.]*)\s*=\s*(.+)$)");
  std::smatch m;
  std::string var, op;
  if (std::regex_match(body, m, compound)) {
    var = m[1], op = m[2];
  } else if (std::regex_match(body, m, spelled) && m[1] == m[2]) {
    var = m[1], op = m[3];
  } else if (std::regex_match(body, m, step)) {
    var = m[2].matched ? m[2].str() : m[3].str();
    op = (m[1].matched ? m[1].str() : m[4].str()) == "++" ? "+" : "-";
  } else if (std::regex_match(body, m, extreme) && m[3] == m[4] && trim(m[5]) == trim(m[1])) {
    const std::string kind = m[2] == ">" ? "max" : "min";
    return fmt::format(
        "the critical section ({}) guards one {}imum, `{}`: give the enclosing loop or region "
        "reduction({}: {}) (OpenMP 3.1), so that each thread keeps its own and they are combined "
        "once at the end, instead of taking the lock every time",
        where, kind, body, kind, m[3].str());
  } else {
    return "";
  }
  const bool plain = var.find_first_of(".[") == std::string::npos;
  return fmt::format(
      "the critical section ({}) guards one update, `{}`: make it `#pragma omp atomic`, which "
      "updates without a lock{}",
      where, body,
      plain && op != "-" ? fmt::format(", or better give the enclosing loop reduction({}: {}), so "
                                       "that each thread adds to its own copy and they are "
                                       "combined once at the end",
                                       op, var)
                         : "");
}

}  // namespace scalea::cli
