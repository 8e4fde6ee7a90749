// How the loader gets a file's bytes (file_access.cpp): from the disk into a reused buffer, mapped
// read-only, or from a FileReader; and the rank files it parses, whole files or the parts of a
// container. Used by the loader (drg/src) only.
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scalea/drg/experiment.hpp"
#include "scalea/format.hpp"

namespace scalea::drg {

// Reads a whole file into `bytes`, reusing its storage: a worker that reads file after file of
// about the same size neither allocates nor clears memory for each.
void read_file_into(const std::string& path, std::vector<char>& bytes);

// Bytes [offset, offset + length) of a file into `bytes` (fewer at the file's end).
void read_part_into(const std::string& path, uint64_t offset, uint64_t length,
                    std::vector<char>& bytes);

// Bytes [offset, offset + length) of a file mapped read-only: the page cache's own pages, where
// reading copies them (a third of the CPU of an analysis that reads every file six times). Empty
// (`data()` null) when the range is not all in the file or cannot be mapped: the caller reads it
// instead, and reading says what is wrong. A file truncated by another process while it is mapped
// would fault; experiments are written once, by their own rename, so that is left to the reader.
class Mapping {
 public:
  Mapping() = default;
  // The whole file without `length`.
  Mapping(const std::string& path, uint64_t offset, std::optional<uint64_t> want) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE)), start = offset / page * page;
    const bool sized = fstat(fd, &st) == 0 && uint64_t(st.st_size) >= offset;
    const uint64_t length = want ? *want : sized ? uint64_t(st.st_size) - offset : 0;
    if (sized && length > 0 && offset + length <= uint64_t(st.st_size) &&
        offset + length >= offset) {
      size_ = size_t(offset - start + length);
      void* at = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(start));
      if (at != MAP_FAILED) base_ = static_cast<char*>(at), skip_ = size_t(offset - start);
    }
    close(fd);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  Mapping& operator=(Mapping&& o) noexcept {
    std::swap(base_, o.base_), std::swap(size_, o.size_), std::swap(skip_, o.skip_);
    return *this;
  }
  ~Mapping() {
    if (base_) munmap(base_, size_);
  }
  std::string_view bytes() const {
    return base_ ? std::string_view(base_ + skip_, size_ - skip_) : std::string_view();
  }

 private:
  char* base_ = nullptr;
  size_t size_ = 0, skip_ = 0;
};

// A file's size; throws LoadError naming the path when it cannot be read.
uint64_t file_size(const std::string& path);

// The names in a directory (none when it cannot be read).
std::vector<std::string> directory_names(const std::string& dir);

// How the loader gets bytes: from the disk, reusing the caller's buffer, or from a FileReader.
struct FileAccess {
  std::function<void(const std::string& path, std::vector<char>& bytes)> whole;
  // A part of a file (a rank file in a container): as read_part_into.
  std::function<void(const std::string& path, uint64_t offset, uint64_t length,
                     std::vector<char>& bytes)>
      part;
  std::function<uint64_t(const std::string& path)> size;
  // The names in a directory; unset when files come from memory.
  std::function<std::vector<std::string>(const std::string& dir)> list;
  bool on_disk = false;  // the paths are files: a reader may map them (Mapping) instead
};

// Files from a FileReader. A container is asked for its size and then part by part: the reader
// gives it once, and the parts come from that copy (readers may serve files in request order, as
// the fuzzer's does).
FileAccess reader_access(const FileReader& read);

// One rank file to parse: a file of its own, or a part of a container (`in_container`).
struct Piece {
  std::string name;  // for messages: the path, and "[rank N]" in a container
  std::string path;
  std::optional<format::ContainerEntry> in_container;
};

// Reads a piece's bytes into `bytes`; a contained piece is checked against its container's index
// (its CRC only when `verify_crc`).
void read_piece(const FileAccess& access, const Piece& piece, std::vector<char>& bytes,
                bool verify_crc = true);

// A piece's bytes for one parse: mapped when its file is on disk (`map` keeps the mapping until
// it is reused), read into `buffer` otherwise and for a contained piece below kMapFrom bytes (a
// mapping's set-up and its unmapping, which interrupts every other CPU to flush its TLB, cost
// more than copying a rank's few hundred KB: 14 % of the CPU of a report at 4,096 ranks).
// `verify_crc`: check a contained piece against its container's CRC (the first reading; later
// ones read what was checked).
inline constexpr uint64_t kMapFrom = uint64_t(8) << 20;
std::string_view piece_bytes(const FileAccess& access, const Piece& piece, bool verify_crc,
                             std::vector<char>& buffer, Mapping& map);

}  // namespace scalea::drg
