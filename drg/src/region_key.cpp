#include "scalea/drg/region_key.hpp"

#include "scalea/drg/experiment.hpp"

namespace scalea::drg {

namespace {

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `field` with a '\' before each of `special` and before each '\'.
void append_escaped(std::string& out, const std::string& field, char special) {
  for (char c : field) {
    if (c == special || c == '\\') out += '\\';
    out += c;
  }
}

}  // namespace

ExactKey exact_key(const Region& r) {
  return {uint16_t(r.kind), r.subkind, r.name, r.module, r.address};
}

std::string SourceKey::text() const {
  std::string k = std::to_string(kind) + ':' + std::to_string(subkind) + ':';
  append_escaped(k, name, '@');
  if (place == Place::Unknown) return k;
  k += '@';
  append_escaped(k, path, ':');
  if (place == Place::Source) {
    k += ':' + std::to_string(line) + ':' + function;
  } else {
    k += '+' + std::to_string(offset);
  }
  return k;
}

SourceKey source_key(const Region& r, Paths paths) {
  SourceKey k;
  k.kind = uint16_t(r.kind);
  k.subkind = r.subkind;
  // A sampled line inlined into several functions is one line of each: the function the code is
  // physically in (its ELF symbol) tells them apart.
  k.name = r.kind == RegionKind::Sampled ? r.symbol : r.name;
  auto path = [paths](const std::string& p) { return paths == Paths::Base ? base_name(p) : p; };
  if (!r.file.empty()) {
    k.place = SourceKey::Place::Source;
    k.path = path(r.file);
    k.line = r.line;
    k.function = r.function;
  } else if (!r.module.empty()) {
    // The construct's own code (the loader resolves it, docs/symbols.md), or the recorded
    // address when it could not.
    k.place = SourceKey::Place::Code;
    k.path = path(r.module);
    k.offset = r.code ? r.code : r.address;
  }
  return k;
}

std::string region_key(const Region& r) { return source_key(r, Paths::Base).text(); }

}  // namespace scalea::drg
