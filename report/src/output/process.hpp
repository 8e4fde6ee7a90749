// The command's own place and the programs it runs (execvp's search).
#pragma once
#include <string>

namespace scalea::cli {

// A regular file this process may execute.
bool is_executable_file(const std::string& path);

// Where execvp would find a program ("" when nowhere): a path is checked as given, a bare name is
// searched in PATH.
std::string find_program(const std::string& name);

// Directory of the running scalea binary (for finding ../lib/libscalea-*.so).
std::string self_dir();

// Where a library of scalea's own (the tool libraries, the database and MPI-analysis modules) is
// beside a scalea binary in `bin_dir`: ../lib (a build tree, an install with libdir lib), else
// ../`libdir`, the install's libdir (lib/x86_64-linux-gnu in Debian's layout, lib64), else the
// ../lib path (which names the missing file in an error).
std::string own_library_in(const std::string& bin_dir, const std::string& libdir,
                           const std::string& name);
// Beside this binary, with the libdir this build installs to (CMAKE_INSTALL_LIBDIR).
std::string own_library(const std::string& name);

}  // namespace scalea::cli
