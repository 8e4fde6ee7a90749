#include "team_steps.hpp"

#include <algorithm>
#include <unordered_set>

#include "layout.hpp"
#include "settlement.hpp"

namespace scalea::drg {

std::pair<size_t, size_t> file_block(size_t files, int rank, int size) {
  const size_t n = size_t(size), r = size_t(rank);
  const size_t base = files / n, extra = files % n;
  const size_t first = r * base + std::min(r, extra);
  return {first, first + base + (r < extra ? 1 : 0)};
}

std::pair<size_t, size_t> cost_block(const std::vector<uint64_t>& costs, int rank, int size) {
  unsigned __int128 total = 0;
  for (uint64_t c : costs) total += c;
  if (total == 0 || size <= 1) return file_block(costs.size(), rank, size);
  // File i's owner: the process whose share of the total holds its middle byte, a number that
  // does not decrease with i; the blocks are the runs of equal owners.
  auto owner = [&](unsigned __int128 before, uint64_t c) {
    const unsigned __int128 middle2 = 2 * before + c;  // twice the middle's offset
    return std::min<size_t>(size_t(middle2 * unsigned(size) / (2 * total)), size_t(size) - 1);
  };
  size_t first = costs.size(), last = costs.size();
  unsigned __int128 before = 0;
  for (size_t i = 0; i < costs.size(); before += costs[i], ++i) {
    const size_t o = owner(before, costs[i]);
    if (o == size_t(rank) && first == costs.size()) first = i;
    if (o > size_t(rank)) {
      last = i;
      break;
    }
  }
  if (first == costs.size()) first = last = std::min(last, costs.size());
  return {first, std::max(first, last)};
}

void put_string(ByteWriter& out, const std::string& text) {
  out.put_many(std::vector<char>(text.begin(), text.end()));
}

std::string get_string(ByteReader& in) {
  std::vector<char> text = in.get_many<char>();
  return std::string(text.begin(), text.end());
}

void put_headers(ByteWriter& out, const std::vector<ThreadTree>& threads) {
  out.put(uint64_t(threads.size()));
  for (const ThreadTree& t : threads) {
    out.put(t.rank);
    out.put(t.thread);
    out.put(t.flags);
    out.put(t.os_tid);
  }
}

std::vector<ThreadTree> get_headers(ByteReader& in) {
  std::vector<ThreadTree> out(in.get<uint64_t>());
  for (ThreadTree& t : out) {
    t.rank = in.get<int32_t>();
    t.thread = in.get<uint32_t>();
    t.flags = in.get<uint32_t>();
    t.os_tid = in.get<uint64_t>();
  }
  return out;
}

std::vector<char> combine_openings(std::vector<std::vector<char>>& parts,
                                   const std::vector<Piece>& pieces, int64_t declared_ranks) {
  RankCheck check(declared_ranks);
  ByteWriter all;  // every file's threads
  size_t file = 0;
  for (const std::vector<char>& part : parts) {
    ByteReader in(part);
    while (!in.done()) {
      ByteWriter out;
      const auto opened = in.get<Opened>();
      if (opened == kOwnDefinitions) {
        out.put(kOwnDefinitions);
        return std::move(out.bytes());
      }
      std::string failure = opened == kFailedFile ? get_string(in) : "";
      if (failure.empty()) {
        std::vector<ThreadTree> threads = get_headers(in);
        try {
          check(pieces[file].name, threads, 0);
        } catch (const LoadError& e) {
          failure = e.what();
        }
        put_headers(all, threads);
      }
      if (!failure.empty()) {
        out.put(kFailedFile);
        put_string(out, failure);
        return std::move(out.bytes());
      }
      ++file;
    }
  }
  ByteWriter out;
  out.put(kParsedFile);
  std::vector<char>& bytes = out.bytes();
  bytes.insert(bytes.end(), all.bytes().begin(), all.bytes().end());
  return std::move(bytes);
}

std::vector<char> combine_notes(std::vector<std::vector<char>>& parts) {
  std::vector<uint32_t> all;
  for (const std::vector<char>& part : parts) {
    ByteReader in(part);
    std::vector<uint32_t> notes = in.get_many<uint32_t>();
    all.resize(notes.size(), kUnset);
    for (size_t i = 0; i < notes.size(); ++i)
      if (notes[i] != kUnset) note(all[i], notes[i]);
  }
  ByteWriter out;
  out.put_many(all);
  return std::move(out.bytes());
}

std::vector<char> combine_firsts(std::vector<std::vector<char>>& parts) {
  std::vector<uint64_t> all;
  std::unordered_set<uint64_t> met;
  for (const std::vector<char>& part : parts) {
    ByteReader in(part);
    for (const uint64_t v : in.get_many<uint64_t>())
      if (met.insert(v).second) all.push_back(v);
  }
  ByteWriter out;
  out.put_many(all);
  return std::move(out.bytes());
}

}  // namespace scalea::drg
