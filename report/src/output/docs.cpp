#include "docs.hpp"

#include <sys/stat.h>

#include <cctype>
#include <climits>
#include <cstdlib>

#include "process.hpp"

namespace scalea::cli {
namespace {

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool in_path(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == '/' || c == '~';
}

// The length of "NAME.md" at `at`, a sentence's full stop after it left out; 0 when the word
// there is not one, or is not followed as a pointer to a page is (by the end of the text, a
// line's end, ')', ',' or '.'): a path of the user's in an error is followed by ':' or a space
// ("docs/x.md: no such experiment", "docs/x.md is not an experiment").
size_t doc_name_length(const std::string& text, size_t at) {
  size_t end = at;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                               text[end] == '_' || text[end] == '-' || text[end] == '.'))
    ++end;
  while (end > at && text[end - 1] == '.') --end;
  if (end - at < 4 || text.compare(end - 3, 3, ".md") != 0) return 0;
  const char after = end < text.size() ? text[end] : '\n';
  return after == '\n' || after == ')' || after == ',' || after == '.' ? end - at : 0;
}

const char* forced_docs_dir() {
  const char* forced = std::getenv("SCALEA_DOCS_DIR");
  return forced && *forced ? forced : nullptr;
}

}  // namespace

std::string docs_dir() {
  if (const char* forced = forced_docs_dir()) return forced;
  for (std::string dir :
       {self_dir() + "/" + SCALEA_BINDIR_TO_DOCDIR, std::string(SCALEA_SOURCE_DOCS)}) {
    char real[PATH_MAX];
    if (is_file(dir + "/user-guide.md") && realpath(dir.c_str(), real)) return real;
  }
  return "";
}

std::string with_docs_dir(const std::string& text) {
  if (text.find("docs/") == std::string::npos) return text;  // no look-up for most messages
  const std::string dir = docs_dir();
  if (dir.empty()) return text;
  // The man pages are made before the documentation is installed where SCALEA_DOCS_DIR says.
  const bool check = forced_docs_dir() == nullptr;
  std::string out;
  size_t at = 0;
  for (size_t hit = text.find("docs/"); hit != std::string::npos;
       hit = text.find("docs/", hit + 5)) {
    if (hit > 0 && in_path(text[hit - 1])) continue;
    size_t name = doc_name_length(text, hit + 5);
    if (name == 0 || (check && !is_file(dir + "/" + text.substr(hit + 5, name)))) continue;
    out += text.substr(at, hit - at) + dir + "/";
    at = hit + 5;
  }
  return out + text.substr(at);
}

}  // namespace scalea::cli
