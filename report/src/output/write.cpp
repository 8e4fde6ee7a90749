#include "write.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "errors.hpp"

namespace scalea::cli {

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  f << text;
  f.close();
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
}

namespace {
// Writes the text of write() to the file `path` as it is made, by way of `name` (the file itself,
// or a temporary file beside it).
void write_file(const std::string& path, const std::string& name,
                const std::function<void(const TextSink&)>& write) {
  std::ofstream f(name, std::ios::binary | std::ios::trunc);
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  write(write_to(f));
  f.close();
  if (!f) throw UserError("cannot write " + path + ": " + std::strerror(errno));
}
}  // namespace

void write_output(const std::string& path, const std::function<void(const TextSink&)>& write) {
  if (path.empty() || path == "-") {
    write(write_to(std::cout));
    std::cout.flush();
    return;
  }
  // A device, a pipe or a symbolic link (-o /dev/null) is written in place: renaming over it
  // would replace it. So is a file in a directory where no file can be created beside it.
  struct stat st;
  const bool exists = lstat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return write_file(path, path, write);
  // A file is written beside itself and renamed over it once complete: the text is never held
  // whole (a CSV export lists every thread of every region), and a write that throws leaves the
  // file as it was.
  std::string tmp = path + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0 && exists) return write_file(path, path, write);
  if (fd < 0) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask);  // the file's mode, or a new file's
  ::close(fd);
  try {
    write_file(path, tmp, write);
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw UserError("cannot write " + path + ": " + std::strerror(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace scalea::cli
