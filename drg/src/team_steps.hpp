// The loader's steps over a Team (team.cpp; docs/drg.md, "The analysis as an MPI program"): what
// each process sends of its block of files, and rank 0's combinations of the parts, in rank order,
// so file order: each what one process reading every file would have. Used by the loader
// (drg/src) only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "file_access.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/drg/team.hpp"

namespace scalea::drg {

// What a process found in each file of its block when the files are opened together.
enum Opened : uint8_t {
  kParsedFile,      // its threads' identities follow
  kFailedFile,      // its one-line error follows; the process read no further
  kOwnDefinitions,  // it defines regions or metrics of its own: every process opens every file
};

// A text, and the threads' identities (rank, thread, flags, os_tid; no nodes), as bytes.
void put_string(ByteWriter& out, const std::string& text);
std::string get_string(ByteReader& in);
void put_headers(ByteWriter& out, const std::vector<ThreadTree>& threads);
std::vector<ThreadTree> get_headers(ByteReader& in);

// Rank 0: the blocks' openings (parts in rank order, so files in file order) as one process
// opening every file would end: the first failure, or else every file's threads.
std::vector<char> combine_openings(std::vector<std::vector<char>>& parts,
                                   const std::vector<Piece>& pieces, int64_t declared_ranks);

// Rank 0: the notes of every process (in rank order, so file order) as one process taking them
// over every file would have them.
std::vector<char> combine_notes(std::vector<std::vector<char>>& parts);

// One step of `team` over a list of plain values: this process's list in, rank 0's combination
// of every process's list out.
template <class T>
void exchange(const Team& team, std::vector<T>& values, const Team::Combine& combine) {
  ByteWriter out;
  out.put_many(values);
  std::vector<char> all = team.step(out.bytes(), combine);
  ByteReader in(all);
  values = in.get_many<T>();
}

// Rank 0: the values every process met first (in rank order, so file order), each once, in the
// order one process observing every file would meet them.
std::vector<char> combine_firsts(std::vector<std::vector<char>>& parts);

}  // namespace scalea::drg
