// The few-files layout (docs/experiment-format.md, "Containers"): reading a container's index
// and checking the rank files it holds. Used by the loader (file_access.cpp, layout.cpp) only.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scalea/format.hpp"

namespace scalea::drg {

// True for a data file name of the few-files layout (NAME.sdrc).
bool is_container_name(const std::string& name);

// The index of the container `path` of `file_size` bytes, from `head`, the file's first bytes
// (at least the header and the index, or the whole file when it is shorter). Checks the header,
// the index's CRC and that every rank file lies inside the file; throws LoadError naming the
// container and, when the file is cut short, the ranks it lost.
std::vector<format::ContainerEntry> read_container_index(const std::string& path,
                                                         const std::vector<char>& head,
                                                         uint64_t file_size);

// How many first bytes read_container_index needs, from the header alone (`head` holds at least
// sizeof(ContainerHeader) bytes, or the whole file when it is shorter).
uint64_t container_head_size(const std::string& path, const std::vector<char>& head);

// Checks one rank file read from a container against its index entry (its length, the CRC unless
// `verify_crc` is false, the rank in its header); `name` is what messages call it. Throws
// LoadError.
void check_contained(const std::string& name, const format::ContainerEntry& entry,
                     std::string_view bytes, bool verify_crc = true);

}  // namespace scalea::drg
