#include "container.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "scalea/drg/experiment.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw LoadError(path + ": " + problem);
}

// "3, 4, 5": the ranks a damaged container loses, the first kNamed of them.
std::string ranks_text(const std::vector<int32_t>& ranks) {
  constexpr size_t kNamed = 32;
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < kNamed; ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kNamed) s += ", ... (" + std::to_string(ranks.size()) + " in all)";
  return s;
}

fmt::ContainerHeader header_of(const std::string& path, const std::vector<char>& head) {
  fmt::ContainerHeader h;
  if (head.size() < sizeof h)
    fail(path, "truncated container header (" + std::to_string(head.size()) +
                   " bytes): the ranks it held are unknown");
  std::memcpy(&h, head.data(), sizeof h);
  if (std::memcmp(h.magic, fmt::kContainerMagic, sizeof h.magic) != 0)
    fail(path, "not a scalea container (bad magic)");
  if (h.version != fmt::kContainerVersion)
    fail(path, "unsupported container version " + std::to_string(h.version) +
                   ", this scalea reads version " + std::to_string(fmt::kContainerVersion));
  if (h.header_size < sizeof h)
    fail(path, "bad container header size " + std::to_string(h.header_size));
  if (h.count == 0) fail(path, "an empty container");
  if (h.count > uint32_t(kMaxRank) + 1)
    fail(path, "index of " + std::to_string(h.count) + " ranks: too many");
  return h;
}

}  // namespace

bool is_container_name(const std::string& name) {
  const std::string_view suffix = fmt::kContainerSuffix;
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint64_t container_head_size(const std::string& path, const std::vector<char>& head) {
  fmt::ContainerHeader h = header_of(path, head);
  return uint64_t(h.header_size) + uint64_t(h.count) * sizeof(fmt::ContainerEntry);
}

std::vector<fmt::ContainerEntry> read_container_index(const std::string& path,
                                                      const std::vector<char>& head,
                                                      uint64_t file_size) {
  fmt::ContainerHeader h = header_of(path, head);
  const uint64_t index_end =
      uint64_t(h.header_size) + uint64_t(h.count) * sizeof(fmt::ContainerEntry);
  if (head.size() < index_end || file_size < index_end)
    fail(path, "truncated index (" + std::to_string(file_size) + " bytes, the index of " +
                   std::to_string(h.count) + " ranks ends at " + std::to_string(index_end) +
                   "): the ranks it held are unknown");
  std::vector<fmt::ContainerEntry> index(h.count);
  std::memcpy(index.data(), head.data() + h.header_size,
              index.size() * sizeof(fmt::ContainerEntry));
  if (fmt::crc32_update(0, index.data(), index.size() * sizeof(fmt::ContainerEntry)) !=
      h.index_crc32)
    fail(path, "index damaged (CRC mismatch): the ranks it holds are unknown");
  std::unordered_set<int32_t> seen;
  std::vector<int32_t> cut;
  for (const fmt::ContainerEntry& e : index) {
    std::string what = "rank " + std::to_string(e.rank);
    if (e.rank < 0 || e.rank > kMaxRank)
      fail(path, "index holds bad rank " + std::to_string(e.rank));
    if (!seen.insert(e.rank).second) fail(path, what + " appears twice in the index");
    if (e.offset < index_end || e.length > h.file_size || e.offset > h.file_size - e.length)
      fail(path, what + ": bad place in the index (offset " + std::to_string(e.offset) + ", " +
                     std::to_string(e.length) + " bytes)");
    if (e.offset + e.length > file_size) cut.push_back(e.rank);
  }
  if (!cut.empty() || file_size < h.file_size)
    fail(path, "truncated (" + std::to_string(file_size) + " of " + std::to_string(h.file_size) +
                   " bytes)" +
                   (cut.empty() ? std::string() : ": rank(s) " + ranks_text(cut) + " lost"));
  if (file_size > h.file_size)
    fail(path,
         std::to_string(file_size) + " bytes, its header says " + std::to_string(h.file_size));
  return index;
}

void check_contained(const std::string& name, const fmt::ContainerEntry& entry,
                     std::string_view bytes, bool verify_crc) {
  if (bytes.size() != entry.length)
    fail(name, "truncated (" + std::to_string(bytes.size()) + " of " +
                   std::to_string(entry.length) + " bytes)");
  if (verify_crc && payload_crc32(bytes.data(), bytes.size()) != entry.crc32)
    fail(name, "damaged (CRC mismatch with the container's index)");
  fmt::FileHeader fh;
  if (bytes.size() < sizeof fh) return;  // the rank file's own checks say what is wrong
  std::memcpy(&fh, bytes.data(), sizeof fh);
  if (fh.rank != entry.rank)
    fail(name, "holds rank " + std::to_string(fh.rank) + ", the container's index says " +
                   std::to_string(entry.rank));
}

}  // namespace scalea::drg
