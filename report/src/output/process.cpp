#include "process.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace scalea::cli {

bool is_executable_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

std::string find_program(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(start, colon - start);
    std::string cand = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable_file(cand)) return cand;
    start = colon + 1;
  }
  return "";
}

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

std::string own_library_in(const std::string& bin_dir, const std::string& libdir,
                           const std::string& name) {
  const std::string plain = bin_dir + "/../lib/" + name,
                    installed = bin_dir + "/../" + libdir + "/" + name;
  struct stat st;
  if (stat(plain.c_str(), &st) == 0) return plain;
  if (!libdir.empty() && stat(installed.c_str(), &st) == 0) return installed;
  return plain;
}

std::string own_library(const std::string& name) {
  return own_library_in(self_dir(), SCALEA_INSTALL_LIBDIR, name);
}

}  // namespace scalea::cli
