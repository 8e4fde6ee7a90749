#include "scalea/drg/names.hpp"

#include <cctype>
#include <vector>

#include "scalea/drg/symbols.hpp"

namespace scalea::drg {

namespace {

constexpr size_t npos = std::string_view::npos;

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// One demangled name with the characters that spell an operator's symbol marked ("<" of
// "operator<", "()" of "operator()"): those are no brackets.
class Name {
 public:
  explicit Name(std::string_view s) : s_(s), op_(s.size(), false) {
    constexpr std::string_view kOperator = "operator";
    for (size_t i = s.find(kOperator); i != npos; i = s.find(kOperator, i + 1)) {
      size_t j = i + kOperator.size();
      if ((i > 0 && ident_char(s[i - 1])) || (j < s.size() && ident_char(s[j]))) continue;
      if (s.compare(j, 2, "()") == 0) {
        op_[j] = op_[j + 1] = true;
        continue;
      }
      while (j < s.size() && std::string_view("<>=!+-*/%^&|~,[]").find(s[j]) != npos)
        op_[j++] = true;
    }
  }

  std::string_view text() const { return s_; }
  size_t size() const { return s_.size(); }
  bool symbol(size_t i) const { return op_[i]; }
  bool open(size_t i) const { return !op_[i] && (s_[i] == '<' || s_[i] == '(' || s_[i] == '{'); }
  bool close(size_t i) const { return !op_[i] && (s_[i] == '>' || s_[i] == ')' || s_[i] == '}'); }
  // The position after the group that opens at `i`, or the end when it is not closed.
  size_t after_group(size_t i) const {
    int depth = 0;
    for (; i < s_.size(); ++i) {
      if (open(i)) ++depth;
      if (close(i) && --depth == 0) return i + 1;
    }
    return s_.size();
  }
  // The opening bracket of the group that closes at `i`, or npos.
  size_t group_start(size_t i) const {
    int depth = 0;
    for (size_t j = i + 1; j-- > 0;) {
      if (close(j)) ++depth;
      if (open(j) && --depth == 0) return j;
    }
    return npos;
  }
  // The names of a list "a, b" (", " outside brackets).
  std::vector<std::string_view> split_list() const {
    std::vector<std::string_view> parts;
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i < s_.size(); ++i) {
      if (open(i)) ++depth;
      if (close(i)) --depth;
      if (depth == 0 && !op_[i] && s_.compare(i, 2, ", ") == 0) {
        parts.push_back(s_.substr(start, i - start));
        start = i + 2;
      }
    }
    parts.push_back(s_.substr(start));
    return parts;
  }

 private:
  std::string_view s_;
  std::vector<bool> op_;
};

// `s` without the qualifiers after a member function's parameter list and without that list.
std::string_view drop_parameters(std::string_view s) {
  for (bool again = true; again;) {
    again = false;
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (ends_with(s, q)) {
        s.remove_suffix(q.size());
        again = true;
      }
    }
  }
  Name n(s);
  if (s.empty() || s.back() != ')' || !n.close(s.size() - 1)) return s;
  size_t open = n.group_start(s.size() - 1);
  if (open == npos || open == 0) return s;
  s = s.substr(0, open);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Where the name starts after a return type ("double ns::f<int>" -> "ns::f<int>").
size_t name_start(const Name& n) {
  std::string_view s = n.text();
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (n.open(i)) ++depth;
    if (n.close(i)) --depth;
    if (depth != 0 || s[i] != ' ' || i == 0) continue;
    bool in_operator = n.symbol(i - 1) || (i >= 8 && s.substr(i - 8, 8) == "operator");
    if (!in_operator) start = i + 1;
  }
  return start;
}

std::string shorten_one(std::string_view s) {
  std::string_view clone;
  size_t c = s.rfind(" [clone ");
  if (c != npos && ends_with(s, "]")) {
    clone = s.substr(c);
    s = s.substr(0, c);
  }
  size_t paren = s.rfind(" (");
  if (paren != npos && ends_with(s, ")") &&
      is_outlined_function(s.substr(paren + 2, s.size() - paren - 3)))
    s = s.substr(0, paren);
  std::string stripped(drop_parameters(s));
  for (size_t abi = stripped.find("[abi:"); abi != npos; abi = stripped.find("[abi:", abi)) {
    size_t end = stripped.find(']', abi);
    stripped.erase(abi, end == npos ? npos : end + 1 - abi);
  }
  Name n(stripped);
  std::string out;
  for (size_t i = name_start(n); i < n.size();) {
    if (n.open(i) && stripped[i] != '{') {  // a lambda's braces stay, its parameters go
      size_t end = n.after_group(i);
      std::string_view group = n.text().substr(i, end - i);
      if (stripped[i] == '<') out += "<...>";
      if (group == "(anonymous namespace)") out += group;
      i = end;
    } else {
      out += stripped[i++];
    }
  }
  out += clone;
  return out;
}

}  // namespace

std::string elide_middle(std::string_view text, size_t max) {
  constexpr std::string_view kDots = "...";
  if (text.size() <= max) return std::string(text);
  if (max <= kDots.size()) return std::string(text.substr(0, max));
  size_t keep = max - kDots.size(), head = (keep + 1) / 2;
  return std::string(text.substr(0, head)) + std::string(kDots) +
         std::string(text.substr(text.size() - (keep - head)));
}

std::string short_function_name(std::string_view name, size_t max) {
  std::string out;
  for (std::string_view part : Name(name).split_list()) {
    if (!out.empty()) out += ", ";
    out += shorten_one(part);
  }
  return elide_middle(out, max);
}

}  // namespace scalea::drg
