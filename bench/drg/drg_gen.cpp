// Writes a synthetic MPI+OpenMP experiment in the on-disk format (format.hpp, via drg/encode):
// RANKS rank files of THREADS threads each, every thread with PATHS call-path nodes and all core
// metric columns, plus one shared definitions file. Used by the drg load+merge benchmark. With
// RANKS_PER_NODE, the few-files layout: one container per RANKS_PER_NODE ranks instead of rank files.
// SCALEA_FORMAT_VERSION=1 or 2 in the environment writes an older format (to compare them).
//   drg_gen OUT_DIR RANKS THREADS PATHS [RANKS_PER_NODE]
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "scalea/drg/encode.hpp"
#include "synthetic.hpp"

using namespace scalea;
using namespace scalea::drg;

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: drg_gen OUT_DIR RANKS THREADS PATHS [RANKS_PER_NODE]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int ranks = std::atoi(argv[2]), threads = std::atoi(argv[3]), paths = std::atoi(argv[4]);
  const int per_node = argc == 6 ? std::atoi(argv[5]) : 0;
  const char* v = std::getenv("SCALEA_FORMAT_VERSION");
  const uint32_t version = v && (std::string(v) == "1" || std::string(v) == "2")
                               ? uint32_t(std::atoi(v))
                               : format::kVersion;
  if (ranks < 1 || threads < 1 || paths < 1 || per_node < 0) return 2;
  const int kinds[] = {int(RegionKind::Parallel), int(RegionKind::Loop), int(RegionKind::BarrierImplicit),
                       int(RegionKind::Single), int(RegionKind::Critical), int(RegionKind::Function),
                       int(RegionKind::Mpi)};
  Experiment defs;
  bench::use_core_columns(defs);
  const size_t nm = defs.metrics.size();
  // Regions: the program plus 100 constructs in one module.
  Region prog;
  prog.kind = RegionKind::Program;
  prog.name = "synthetic";
  defs.regions.push_back(prog);
  for (int r = 1; r <= 100; ++r) {
    Region x;
    x.kind = RegionKind(kinds[r % 7]);
    x.name = x.kind == RegionKind::Mpi ? "MPI_Allreduce" : x.kind == RegionKind::Function ? "f" + std::to_string(r) : "";
    x.file = "synthetic.c";
    x.line = uint32_t(10 * r);
    x.module = "/opt/synthetic/bin/app";
    x.address = uint64_t(0x1000 + 16 * r);
    defs.regions.push_back(x);
  }
  // One call tree (4-ary, PATHS nodes); node i runs region (i % 100) + 1.
  std::vector<uint32_t> parent(static_cast<size_t>(paths)), region(static_cast<size_t>(paths));
  parent[0] = format::kNoIndex;
  region[0] = 0;
  for (int i = 1; i < paths; ++i) {
    parent[size_t(i)] = uint32_t((i - 1) / 4);
    region[size_t(i)] = uint32_t(i % 100 + 1);
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::perror(dir.c_str());
    return 1;
  }
  auto write = [&](const std::string& name, const std::vector<char>& b) {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(b.data(), std::streamsize(b.size()));
    if (!out) {
      std::perror(name.c_str());
      std::exit(1);
    }
  };
  write("definitions.sdrg", encode_rank_file(defs, -1, {true, false, version}));
  std::vector<std::string> files;
  std::vector<format::ContainerPart> node;  // the ranks of the next container
  bench::SyntheticValues values;
  for (int r = 0; r < ranks; ++r) {
    Experiment e;
    e.metrics = defs.metrics;
    e.metric_merge = defs.metric_merge;
    e.metric_type = defs.metric_type;
    for (int t = 0; t < threads; ++t) {
      ThreadTree tt;
      tt.rank = r;
      tt.thread = uint32_t(t);
      tt.parent = parent;
      tt.region = region;
      tt.values.resize(size_t(paths) * nm);
      for (int n = 0; n < paths; ++n) values.node(&tt.values[size_t(n) * nm], nm);
      e.threads.push_back(std::move(tt));
    }
    std::vector<char> bytes = encode_rank_file(e, r, {false, true, version});
    if (per_node > 0) {
      node.push_back({r, payload_crc32(bytes.data(), bytes.size()), std::move(bytes)});
      if (node.size() < size_t(per_node) && r + 1 < ranks) continue;
      files.push_back(format::container_file_name(int(files.size())));
      write(files.back(), format::encode_container(node));
      node.clear();
      continue;
    }
    char name[32];
    std::snprintf(name, sizeof name, "rank-%06d.sdrg", r);
    write(name, bytes);
    files.push_back(name);
  }
  defs.meta = {{"command", {"synthetic"}}, {"threads", ranks * threads}, {"max_team_size", threads}, {"complete", true}};
  ThreadTree marker;
  marker.rank = ranks - 1;
  defs.threads.push_back(marker);  // encode_meta takes the rank count from the threads
  std::string meta = encode_meta(defs, files, "definitions.sdrg");
  const std::string written = "\"format_version\": " + std::to_string(format::kVersion);
  if (version != format::kVersion)
    meta.replace(meta.find(written), written.size(), "\"format_version\": " + std::to_string(version));
  write("meta.json", std::vector<char>(meta.begin(), meta.end()));
  std::printf("wrote %s: %d ranks x %d threads x %d call paths, %zu metrics\n", dir.c_str(), ranks, threads, paths, nm);
  return 0;
}
