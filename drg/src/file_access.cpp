#include "file_access.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>

#include "container.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

void read_file_into(const std::string& path, std::vector<char>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) throw LoadError(path + ": cannot read");
  in.seekg(0);
  bytes.resize(static_cast<size_t>(size));
  if (size > 0 && !in.read(bytes.data(), size)) throw LoadError(path + ": cannot read");
}

// Bytes [offset, offset + length) of a file into `bytes` (fewer at the file's end).
void read_part_into(const std::string& path, uint64_t offset, uint64_t length,
                    std::vector<char>& bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  bytes.resize(size_t(length));
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd, bytes.data() + got, size_t(length - got), off_t(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      throw LoadError(path + ": cannot read (" + std::strerror(err) + ")");
    }
    if (n == 0) break;
    got += size_t(n);
  }
  close(fd);
  bytes.resize(got);
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw LoadError(path + ": cannot open (" + std::strerror(errno) + ")");
  return uint64_t(st.st_size);
}

std::vector<std::string> directory_names(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) names.emplace_back(e->d_name);
    closedir(d);
  }
  return names;
}

FileAccess reader_access(const FileReader& read) {
  struct Container {
    std::mutex lock;
    std::string path;
    std::vector<char> bytes;
  };
  auto container = std::make_shared<Container>();
  auto with_container = [container, read](
                            const std::string& path,
                            const std::function<void(const std::vector<char>&)>& use) {
    std::lock_guard<std::mutex> hold(container->lock);
    if (container->path != path) {
      container->bytes = read(path);
      container->path = path;
    }
    use(container->bytes);
  };
  FileAccess access;
  access.whole = [read](const std::string& path, std::vector<char>& bytes) { bytes = read(path); };
  access.part = [with_container](const std::string& path, uint64_t offset, uint64_t length,
                                 std::vector<char>& bytes) {
    with_container(path, [&](const std::vector<char>& all) {
      uint64_t from = std::min<uint64_t>(offset, all.size()),
               to = std::min<uint64_t>(offset + length, all.size());
      bytes.assign(all.begin() + std::ptrdiff_t(from), all.begin() + std::ptrdiff_t(to));
    });
  };
  access.size = [with_container](const std::string& path) {
    uint64_t size = 0;
    with_container(path, [&](const std::vector<char>& all) { size = all.size(); });
    return size;
  };
  return access;
}

void read_piece(const FileAccess& access, const Piece& piece, std::vector<char>& bytes,
                bool verify_crc) {
  if (!piece.in_container) return access.whole(piece.path, bytes);
  const fmt::ContainerEntry& e = *piece.in_container;
  access.part(piece.path, e.offset, e.length, bytes);
  check_contained(piece.name, e, {bytes.data(), bytes.size()}, verify_crc);
}

std::string_view piece_bytes(const FileAccess& access, const Piece& piece, bool verify_crc,
                             std::vector<char>& buffer, Mapping& map) {
  if (access.on_disk && !(piece.in_container && piece.in_container->length < kMapFrom)) {
    const std::optional<fmt::ContainerEntry>& e = piece.in_container;
    map = Mapping(piece.path, e ? e->offset : 0,
                  e ? std::optional<uint64_t>(e->length) : std::nullopt);
    if (std::string_view b = map.bytes(); b.data()) {
      if (e) check_contained(piece.name, *e, b, verify_crc);
      return b;
    }
  }
  read_piece(access, piece, buffer, verify_crc);
  return {buffer.data(), buffer.size()};
}

}  // namespace scalea::drg
