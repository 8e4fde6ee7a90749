// The loader fuzz harness, shared by the libFuzzer target (fuzz_loader.cpp) and the unit test
// that replays the corpus. Input layout: byte 0 selects the mode, the rest is the data.
//   mode & 3 == 0: one data file, parsed as is (parse_rank_file, no shared definitions); when it
//                  loads, also without values and with two columns: alike, or a crash
//   mode & 3 == 1: one data file, sealed first (payload size and CRC fixed) to reach the sections
//   mode & 3 == 2: meta.json (parse_meta)
//   mode & 3 == 3: a whole experiment served from memory: parts separated by "\n@@\n"; the first
//                  part is meta.json, every further file the loader asks for gets the next part
//                  (mode & 4: sealed)
// Returns 0 when the input loaded, 1 when the loader rejected it with LoadError. Anything else
// (another exception, a crash, a sanitizer report) is a bug.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "scalea/drg/encode.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/drg/graph.hpp"

namespace scalea::drg::fuzz {

inline int run_one(const uint8_t* data, size_t size) {
  if (size == 0) return 1;
  const uint8_t mode = data[0];
  std::vector<char> rest(reinterpret_cast<const char*>(data) + 1, reinterpret_cast<const char*>(data) + size);
  LoadOptions opt;
  opt.resolve_symbols = false;  // never open paths named by the input
  opt.threads = 1;               // the reader below serves files in request order
  try {
    switch (mode & 3) {
      case 0:
      case 1: {
        if ((mode & 3) == 1) seal_rank_file(rest);
        Experiment e;
        parse_rank_file("fuzz.sdrg", rest, e, opt);
        // Read without values, or with some columns (version 3 skips the others): the same
        // file must load alike, with the same threads.
        for (const MetricSet& columns : {MetricSet::none(), MetricSet::none().add(1).add(3)}) {
          Experiment part;
          try {
            parse_rank_file("fuzz.sdrg", rest, part, opt, nullptr, columns);
          } catch (const LoadError&) {
            __builtin_trap();  // the whole file loaded
          }
          if (part.threads.size() != e.threads.size()) __builtin_trap();
          for (size_t t = 0; t < e.threads.size(); ++t)
            if (part.threads[t].parent != e.threads[t].parent) __builtin_trap();
        }
        if (!e.threads.empty()) {  // what the readers do next must hold up too
          Drg d(e);
          RegionGraph rg(d);
          (void)rg.has_cycles();
        }
        return 0;
      }
      case 2:
        parse_meta("meta.json", rest);
        return 0;
      default: {
        std::vector<std::vector<char>> parts;
        static const char sep[] = "\n@@\n";
        size_t start = 0;
        for (size_t i = 0; i + 4 <= rest.size();) {
          if (std::memcmp(rest.data() + i, sep, 4) == 0) {
            parts.emplace_back(rest.begin() + ptrdiff_t(start), rest.begin() + ptrdiff_t(i));
            i += 4;
            start = i;
          } else {
            ++i;
          }
        }
        parts.emplace_back(rest.begin() + ptrdiff_t(start), rest.end());
        size_t next = 0;
        FileReader read = [&](const std::string& path) -> std::vector<char> {
          if (next >= parts.size()) throw LoadError(path + ": cannot open (no such file)");
          std::vector<char> b = parts[next++];
          if ((mode & 4) && next > 1) seal_rank_file(b);
          return b;
        };
        Experiment e = load_experiment("fuzz", opt, read);
        Drg d(e);
        RegionGraph rg(d);
        (void)rg.has_cycles();
        return 0;
      }
    }
  } catch (const LoadError&) {
    return 1;
  }
}

}  // namespace scalea::drg::fuzz
