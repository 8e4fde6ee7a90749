// Where this scalea's documentation is, and messages that name it there (docs/user-guide.md,
// "Installing": which outputs name the real place and which keep "docs/NAME.md").
#pragma once
#include <string>

namespace scalea::cli {

// The documentation of this scalea: PREFIX/share/doc/scalea beside an installed PREFIX/bin/scalea
// (wherever the prefix was moved), in a build tree the sources' docs/; "" when neither is there.
// SCALEA_DOCS_DIR, when set, is taken as it is (and with_docs_dir names pages there unchecked):
// the man pages are made with it (cmake/man_pages.cmake), so that they name the installed
// documentation, not the build's.
std::string docs_dir();

// `text` with each "docs/NAME.md" that starts a word, ends a sentence or comes before ')' or
// ',', and names a file of docs_dir(), naming that file (unchanged when docs_dir() is ""): for
// what a person reads on a terminal (--help, the command's errors and warnings on stderr). A
// path of the user's ("runs/docs/x.md", "mydocs/x.md", "docs/x.md: no such experiment") is
// left alone.
std::string with_docs_dir(const std::string& text);

}  // namespace scalea::cli
