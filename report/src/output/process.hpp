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

}  // namespace scalea::cli
