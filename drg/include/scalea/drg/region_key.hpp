// Region identity: the two keys the pipeline needs (docs/architecture.md, "Region identity").
//
//   ExactKey   one run: the region as the collector recorded it (kind, subkind, name, module,
//              recorded address). The MPI unification merges the ranks' tables on it, and the
//              loader maps every file's table entry to a region on it first.
//   SourceKey  across copies, ranks and runs: kind, subkind, name, then where the construct is,
//              its source position (file, line, function) when known, else its code (module and
//              code offset). The loader merges the copies of one construct on it (full paths: one
//              build); `scalea drg`, the classifier, `scalea diff` and the database match runs on
//              it with base names, so that builds in other directories still match.
//
// Both are structs compared field by field. SourceKey::text() is the one encoding of a source
// key, for what needs bytes: the analyses' interned call paths, the order of scalea diff's ties
// and the database's hashed key. This header needs only the standard library: the collector uses
// ExactKey too.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>

namespace scalea::drg {

struct Region;

struct ExactKey {
  uint16_t kind = 0, subkind = 0;
  std::string name, module;
  uint64_t address = 0;  // the recorded one, relative to the module

  auto fields() const { return std::tie(kind, subkind, name, module, address); }
  bool operator==(const ExactKey& o) const { return fields() == o.fields(); }
  bool operator!=(const ExactKey& o) const { return fields() != o.fields(); }
  bool operator<(const ExactKey& o) const { return fields() < o.fields(); }
};

ExactKey exact_key(const Region& r);

struct SourceKey {
  // Where the construct is: its source position, its code, or nothing known (the program, user
  // regions without a file).
  enum class Place : uint8_t { Unknown, Source, Code };

  uint16_t kind = 0, subkind = 0;
  std::string name;
  Place place = Place::Unknown;
  std::string path;      // Source: the file; Code: the module
  uint32_t line = 0;     // Source (0: the file without a line, as user regions may give it)
  std::string function;  // Source: the enclosing function
  uint64_t offset = 0;   // Code: the resolved code in the module, else the recorded address

  auto fields() const { return std::tie(kind, subkind, name, place, path, line, function, offset); }
  bool operator==(const SourceKey& o) const { return fields() == o.fields(); }
  bool operator!=(const SourceKey& o) const { return fields() != o.fields(); }
  bool operator<(const SourceKey& o) const { return fields() < o.fields(); }

  // The key as bytes, one to one with the fields:
  //   kind:subkind:name                          Unknown
  //   kind:subkind:name@file:line:function       Source
  //   kind:subkind:name@module+offset            Code
  // (numbers in decimal). In `name` a '@' or '\' is written with a '\' before it, in `file` and
  // `module` a ':' or '\' is: every separator is then found by the first unescaped '@' or ':' (the
  // numbers hold none, the function is last, the offset follows the last '+'). A key whose name,
  // file and module hold none of these characters is written exactly as the keys before the
  // escapes were, so databases that stored those still match (docs/database.md).
  std::string text() const;
};

// Which paths a source key holds: the full ones (one build, where they tell files apart) or their
// base names (across runs, which may be built and run in other directories).
enum class Paths { Full, Base };

// The region's source key: its source position when it has a file, else its code when it has a
// module, else neither.
SourceKey source_key(const Region& r, Paths paths);

// The text of the region's source key with base names: what runs are matched on.
std::string region_key(const Region& r);

}  // namespace scalea::drg
