// Writes the hand-made bad inputs of tests/drg/corpus (every one must give a LoadError) and, with
// --seeds DIR, valid inputs in the fuzz harness layout to start a fuzzing campaign from.
//   make_corpus CORPUS_DIR [--seeds SEED_DIR]
#include <cstddef>
#include <cstring>
#include <functional>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "drg_builder.hpp"
#include "scalea/drg/encode.hpp"

using namespace scalea;
using namespace scalea::drg;
namespace fmt = scalea::format;

namespace {

std::string out_dir;

void write(const std::string& name, const std::vector<char>& b) {
  std::ofstream(out_dir + "/" + name, std::ios::binary).write(b.data(), std::streamsize(b.size()));
}
void write(const std::string& name, const std::string& s) { write(name, std::vector<char>(s.begin(), s.end())); }

test::Builder sample(int32_t rank = -1, int threads = 2) {
  test::Builder b({"visits", "time", "time_min", "time_max"});
  uint32_t prog = b.region(RegionKind::Program, "main"), par = b.region(RegionKind::Parallel, "", 0, "s.c", 3, 0x30),
           loop = b.region(RegionKind::Loop, "", 2, "s.c", 5, 0x50),
           bar = b.region(RegionKind::BarrierImplicit, "", 2, "s.c", 3, 0x30);
  for (int th = 0; th < threads; ++th) {
    uint32_t t = b.thread(rank, uint32_t(th), prog, {{"visits", 1}, {"time", 1000}});
    uint32_t p = b.node(t, 0, par, {{"visits", 2}, {"time", 900}, {"time_min", 400}, {"time_max", 500}});
    b.node(t, p, loop, {{"visits", 2}, {"time", 700}});
    b.node(t, p, bar, {{"visits", 2}, {"time", 100}});
  }
  return b;
}

// Offsets in a file from encode_rank_file(sample()): header, then STRG, MODL, REGN, METR, THRD.
struct Layout {
  size_t strg, modl, regn, metr, thrd;
};
Layout layout(const std::vector<char>& b) {
  Layout l{};
  size_t off = sizeof(fmt::FileHeader);
  size_t* slots[] = {&l.strg, &l.modl, &l.regn, &l.metr, &l.thrd};
  for (size_t* s : slots) {
    *s = off;
    fmt::SectionHeader sh;
    std::memcpy(&sh, b.data() + off, sizeof sh);
    off += sizeof sh + sh.size;
  }
  return l;
}

template <class T>
void poke(std::vector<char>& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}

// Offset of node n of the first thread, and the node record size.
size_t node_off(const std::vector<char>& b, uint32_t n, size_t nm = 4) {
  return layout(b).thrd + sizeof(fmt::SectionHeader) + sizeof(fmt::ThreadRecord) + n * (8 + 8 * nm);
}

std::vector<char> sealed(std::vector<char> b) {
  seal_rank_file(b);
  return b;
}

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "\n@@\n" : "") + parts[i];
  return s;
}
std::string str(const std::vector<char>& b) { return std::string(b.begin(), b.end()); }

// Ranks 0 and 1 of an MPI run in the few-files layout: meta.json, the definitions, one container
// of both ranks (as fuzz-harness parts); `patch` may change the container's bytes.
std::string mpi_in_container(const std::function<void(std::string&)>& patch = nullptr,
                             const std::vector<std::string>& files = {"node-000000.sdrc"}) {
  test::Builder r0 = sample(0), r1 = sample(1, 1);
  for (auto& t : r1.e.threads) r0.e.threads.push_back(t);
  std::vector<fmt::ContainerPart> parts;
  for (int32_t rank : {0, 1}) {
    std::vector<char> b = encode_rank_file(r0.e, rank, {false, true});
    parts.push_back({rank, payload_crc32(b.data(), b.size()), std::move(b)});
  }
  std::string container = str(fmt::encode_container(parts));
  if (patch) patch(container);
  return join({encode_meta(r0.e, files, "definitions.sdrg"), str(encode_rank_file(r0.e, -1, {true, false})),
               container});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_corpus CORPUS_DIR [--seeds SEED_DIR]\n";
    return 2;
  }
  // The hand-made bad inputs patch the fixed-size records of version 1 (still read); those of
  // the compact versions 2 and 3 are below ("version 2", "version 3").
  const std::vector<char> good = encode_rank_file(sample().e, -1, {true, true, 1});
  const std::vector<char> good2 = encode_rank_file(sample().e, -1, {true, true, 2});
  const std::vector<char> good3 = encode_rank_file(sample().e, -1, {true, true, 3});
  const std::string meta1 = encode_meta(sample().e, {"rank-000000.sdrg"});
  if (argc == 4 && std::string(argv[2]) == "--seeds") {
    out_dir = argv[3];
    write("seed-file", "\x00" + str(good));
    write("seed-file-sealed", "\x01" + str(good));
    write("seed-file-v2", "\x00" + str(good2));
    write("seed-file-v2-sealed", "\x01" + str(good2));
    write("seed-file-v3", "\x00" + str(good3));
    write("seed-file-v3-sealed", "\x01" + str(good3));
    write("seed-meta", "\x02" + meta1);
    write("seed-experiment", "\x07" + join({meta1, str(good)}));
    test::Builder r0 = sample(0), r1 = sample(1, 1);
    for (auto& t : r1.e.threads) r0.e.threads.push_back(t);
    std::string meta2 = encode_meta(r0.e, {"rank-000000.sdrg", "rank-000001.sdrg"}, "definitions.sdrg");
    write("seed-containers", "\x03" + mpi_in_container());
    write("seed-mpi", "\x07" + join({meta2, str(encode_rank_file(r0.e, -1, {true, false})),
                                     str(encode_rank_file(r0.e, 0, {false, true})),
                                     str(encode_rank_file(r0.e, 1, {false, true}))}));
  }
  out_dir = argv[1];
  Layout L = layout(good);

  // ---- data files (parse_rank_file) ----
  write("empty.sdrg", std::vector<char>{});
  write("truncated-header.sdrg", std::vector<char>(good.begin(), good.begin() + 10));
  write("truncated.sdrg", std::vector<char>(good.begin(), good.begin() + ptrdiff_t(good.size() / 2)));
  {
    auto b = good;
    b[0] = 'X';
    write("wrong-magic.sdrg", b);
  }
  {
    auto b = good;
    poke<uint32_t>(b, offsetof(fmt::FileHeader, version), 3);
    write("wrong-version.sdrg", b);
  }
  {
    auto b = good;
    b[b.size() - 3] ^= 0x40;
    write("bad-crc.sdrg", b);
  }
  {
    auto b = good;
    b.push_back(0);
    write("padded.sdrg", b);
    write("trailing-byte-sealed.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint32_t>(b, offsetof(fmt::FileHeader, header_size), 64);
    write("bad-header-size.sdrg", b);
  }
  {
    auto b = good;
    poke<int32_t>(b, offsetof(fmt::FileHeader, rank), -7);
    write("bad-rank.sdrg", sealed(b));
    poke<int32_t>(b, offsetof(fmt::FileHeader, rank), 0x7fffffff);
    write("huge-rank.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint32_t>(b, offsetof(fmt::FileHeader, section_count), 0xffffffffu);
    write("huge-section-count.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint64_t>(b, L.strg + offsetof(fmt::SectionHeader, size), ~uint64_t(0) - 4);
    write("huge-section-size.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint32_t>(b, L.strg + offsetof(fmt::SectionHeader, count), 0x7fffffffu);
    write("huge-string-count.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, L.strg + sizeof(fmt::SectionHeader), 0xfffffff0u);  // length of string 0
    write("huge-string-length.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint32_t>(b, L.thrd + offsetof(fmt::SectionHeader, count), 0xffffffffu);
    write("huge-thread-count.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint32_t>(b, L.thrd + sizeof(fmt::SectionHeader) + offsetof(fmt::ThreadRecord, node_count), 0xffffffffu);
    write("huge-node-count.sdrg", sealed(b));
    poke<uint32_t>(b, L.thrd + sizeof(fmt::SectionHeader) + offsetof(fmt::ThreadRecord, node_count), 0);
    write("thread-without-root.sdrg", sealed(b));
  }
  {
    auto b = good;  // node 1 -> parent 2, node 2 -> parent 1: a cycle
    poke<uint32_t>(b, node_off(b, 1), 2);
    poke<uint32_t>(b, node_off(b, 2), 1);
    write("parent-cycle.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, node_off(b, 1), 3);
    write("parent-forward-ref.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, node_off(b, 2), 2);
    write("parent-self.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, node_off(b, 0), 0);
    write("root-with-parent.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, node_off(b, 1) + 4, 4);
    write("region-out-of-range.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, node_off(b, 1) + 4, 0xffffffffu);
    write("region-huge.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint16_t>(b, L.regn + sizeof(fmt::SectionHeader), 99);  // kind of region 0
    write("unknown-region-kind.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, L.regn + sizeof(fmt::SectionHeader) + 4, 1000);  // name of region 0
    write("string-index-out-of-range.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, L.regn + sizeof(fmt::SectionHeader) + offsetof(fmt::RegionRecord, module), 5);
    write("module-out-of-range.sdrg", sealed(b));
    b = good;
    poke<uint32_t>(b, L.regn + offsetof(fmt::SectionHeader, count), 3);
    write("region-table-size-mismatch.sdrg", sealed(b));
  }
  {
    auto b = good;
    poke<uint16_t>(b, L.metr + sizeof(fmt::SectionHeader) + 4, 7);  // type of metric 0
    write("bad-metric-type.sdrg", sealed(b));
    b = good;
    poke<uint16_t>(b, L.metr + sizeof(fmt::SectionHeader) + 6, 9);  // merge of metric 0
    write("bad-metric-merge.sdrg", sealed(b));
    b = good;  // metric 1 named like metric 0
    uint32_t n0;
    std::memcpy(&n0, b.data() + L.metr + sizeof(fmt::SectionHeader), 4);
    poke<uint32_t>(b, L.metr + sizeof(fmt::SectionHeader) + 8, n0);
    write("duplicate-metric.sdrg", sealed(b));
  }
  {
    auto b = good;  // REGN tag rewritten as a second STRG
    poke<uint32_t>(b, L.regn, fmt::kTagStrings);
    write("duplicate-section.sdrg", sealed(b));
    b = good;  // REGN becomes unknown: definitions incomplete
    poke<uint32_t>(b, L.regn, fmt::tag("XXXX"));
    write("missing-region-table.sdrg", sealed(b));
  }
  {
    test::Builder s = sample();
    write("threads-without-definitions.sdrg", encode_rank_file(s.e, -1, {false, true}));
    s.e.threads[1].thread = 0;
    write("duplicate-thread.sdrg", encode_rank_file(s.e, -1));
  }
  {
    // A deep chain (4,000 levels) whose last node names a region that does not exist.
    test::Builder d({"time"});
    uint32_t prog = d.region(RegionKind::Program, "main"), f = d.region(RegionKind::Function, "f", 0, "", 0, 1);
    uint32_t t = d.thread(-1, 0, prog);
    uint32_t p = 0;
    for (int i = 0; i < 4000; ++i) p = d.node(t, p, f, {{"time", 1}});
    d.e.threads[0].region.back() = 17;
    write("deep-tree-bad-region.sdrg", encode_rank_file(d.e, -1));
  }

  // ---- version 2: the compact thread section (scalea/compact.hpp) ----
  {
    // sample(): thread 0's record, its structure (parent distance, region: 0 0, 1 1, 1 2, 2 3),
    // then per node a mask byte (4 columns) and the values; thread 1 repeats thread 0's shape.
    const size_t t0 = layout(good2).thrd + sizeof(fmt::SectionHeader);
    const size_t shape = t0 + sizeof(fmt::ThreadRecord);
    const std::vector<char> one = encode_rank_file(sample(-1, 1).e, -1, {true, true, 2});
    fmt::SectionHeader one_thread;  // thread 0 alone: its bytes end where thread 1 starts
    std::memcpy(&one_thread, one.data() + layout(one).thrd, sizeof one_thread);
    const size_t t1 = t0 + one_thread.size;
    auto patched = [&](size_t at, uint8_t v) {
      auto b = good2;
      b[at] = char(v);
      return sealed(b);
    };
    write("v2-root-with-parent.sdrg", patched(shape, 1));
    write("v2-parent-forward-ref.sdrg", patched(shape + 2, 2));
    write("v2-parent-self.sdrg", patched(shape + 4, 0));
    write("v2-region-out-of-range.sdrg", patched(shape + 3, 4));
    write("v2-value-for-no-column.sdrg", patched(shape + 8, 0x1f));
    auto b = good2;
    for (size_t i = 0; i < 11; ++i) b[shape + 3 + i] = char(0xff);
    write("v2-overlong-varint.sdrg", sealed(b));
    b = good2;
    poke<uint32_t>(b, t0 + offsetof(fmt::ThreadRecord, same_shape), 1);
    write("v2-shape-not-preceding.sdrg", sealed(b));
    b = good2;
    poke<uint32_t>(b, t0 + offsetof(fmt::ThreadRecord, node_count), 0xffffffffu);
    write("v2-huge-node-count.sdrg", sealed(b));
    b = good2;
    poke<uint32_t>(b, t1 + offsetof(fmt::ThreadRecord, node_count), 5);
    write("v2-shape-node-count-differs.sdrg", sealed(b));
  }

  // ---- version 3: the values column by column (scalea/compact.hpp, put_columns) ----
  {
    // sample(): thread 0's record, its structure (8 bytes), then per column a code byte (the
    // width in bits, 0x80 for sparse) and the packed values.
    const size_t shape = layout(good3).thrd + sizeof(fmt::SectionHeader) + sizeof(fmt::ThreadRecord);
    auto patched = [&](size_t at, uint8_t v) {
      auto b = good3;
      b[at] = char(v);
      return sealed(b);
    };
    write("v3-column-width-57.sdrg", patched(shape + 8, 57));
    write("v3-sparse-column-without-width.sdrg", patched(shape + 8, 0x80));
    auto b = good3;  // the section, the last of the file, ends inside thread 1's last column
    fmt::SectionHeader sh;
    std::memcpy(&sh, b.data() + layout(b).thrd, sizeof sh);
    sh.size -= 3;
    std::memcpy(b.data() + layout(b).thrd, &sh, sizeof sh);
    b.resize(b.size() - 3);
    write("v3-truncated-values.sdrg", sealed(b));
    b = good3;
    poke<uint32_t>(b, layout(b).thrd + sizeof(fmt::SectionHeader) + offsetof(fmt::ThreadRecord, node_count),
                   0xffffffffu);
    write("v3-huge-node-count.sdrg", sealed(b));
    // One thread of 3 nodes whose time is not 0 at the root only: a sparse column (code, bitmap
    // 0x01, 5 bytes) after the visits' empty one; the bitmap then names a fourth node.
    test::Builder d({"visits", "time"});
    uint32_t prog = d.region(RegionKind::Program, "main"), f = d.region(RegionKind::Function, "f", 0, "", 0, 1);
    uint32_t t = d.thread(-1, 0, prog, {{"time", 1e12}});
    d.node(t, d.node(t, 0, f, {}), f, {});
    b = encode_rank_file(d.e, -1, {true, true, 3});
    const size_t columns = layout(b).thrd + sizeof(fmt::SectionHeader) + sizeof(fmt::ThreadRecord) + 6;
    if (uint8_t(b[columns]) != 0 || uint8_t(b[columns + 1]) != (0x80 | 40) || b[columns + 2] != 1) {
      std::cerr << "make_corpus: the sparse column is not where it was expected\n";
      return 1;
    }
    b[columns + 2] = char(0x09);
    write("v3-node-beyond-bitmap.sdrg", sealed(b));
    // A thread of 20,000 nodes, then 1,000 that repeat its shape with a column of zeros: 25 bytes
    // each, 320 KB each in memory. The parser gives up before 83 MB (1,024 times the section).
    test::Builder z({"time"});
    prog = z.region(RegionKind::Program, "main");
    f = z.region(RegionKind::Function, "f", 0, "", 0, 1);
    t = z.thread(-1, 0, prog, {{"time", 1}});
    for (uint32_t n = 0, p = 0; n < 20000; ++n) p = z.node(t, p, f, {});
    b = encode_rank_file(z.e, -1, {true, true, 3});
    fmt::SectionHeader thrd;
    std::memcpy(&thrd, b.data() + layout(b).thrd, sizeof thrd);
    for (uint32_t i = 1; i <= 1000; ++i) {
      fmt::ThreadRecord tr{i, 0, 0, 20001, 0};
      const char* at = reinterpret_cast<const char*>(&tr);
      b.insert(b.end(), at, at + sizeof tr);
      b.push_back(0);  // the column: 0 at every node
      thrd.count += 1;
      thrd.size += sizeof tr + 1;
    }
    std::memcpy(b.data() + layout(b).thrd, &thrd, sizeof thrd);
    write("v3-repeated-shape-unfolds-too-far.sdrg", sealed(b));
  }

  // ---- meta.json (parse_meta) ----
  write("not-json.json", "{\"format\": \"scalea-experiment\", ");
  write("not-object.json", "[1, 2, 3]");
  write("wrong-format.json", "{\"format\": \"other\", \"format_version\": 1, \"files\": [\"a\"]}");
  write("wrong-version.json", "{\"format\": \"scalea-experiment\", \"format_version\": 9, \"files\": [\"a\"]}");
  write("version-string.json", "{\"format\": \"scalea-experiment\", \"format_version\": \"1\", \"files\": [\"a\"]}");
  write("no-files.json", "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": []}");
  write("file-not-string.json", "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": [3]}");
  write("path-traversal.json",
        "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": [\"../../etc/passwd\"]}");
  write("bad-definitions.json",
        "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": [\"a\"], \"definitions\": \".x\"}");
  write("bad-clock.json", "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": [\"a\"], \"clock\": 5}");
  write("bad-threads.json",
        "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": [\"a\"], \"threads\": \"two\"}");
  write("bad-command.json",
        "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": [\"a\"], \"command\": [1]}");
  {
    std::string deep = "{\"format\": \"scalea-experiment\", \"format_version\": 1, \"files\": [\"a\"], \"notes\": ";
    deep += std::string(20000, '[') + std::string(20000, ']') + "}";
    write("deep-nesting.json", deep);
  }

  // ---- whole experiments (fuzz harness layout, mode 3) ----
  write("missing-rank-file.fuzz", "\x03" + meta1);
  write("meta-missing.fuzz", std::string("\x03"));
  {
    std::string m = encode_meta(sample().e, {"rank-000000.sdrg", "rank-000000.sdrg"});
    write("file-listed-twice.fuzz", "\x03" + join({m, str(good), str(good)}));
    m = encode_meta(sample().e, {"a.sdrg", "b.sdrg"});
    write("rank-in-two-files.fuzz", "\x03" + join({m, str(good), str(good)}));
    test::Builder s = sample(5);
    m = encode_meta(sample(0).e, {"a.sdrg"});  // says 1 rank
    write("rank-beyond-meta.fuzz", "\x03" + join({m, str(encode_rank_file(s.e, 5))}));
    test::Builder other({"visits", "time"});
    other.region(RegionKind::Program, "main");
    other.thread(1, 0, 0);
    m = encode_meta(sample(0).e, {"a.sdrg", "b.sdrg"});
    m.replace(m.find("\"ranks\": 1"), 10, "\"ranks\": 2");
    write("metric-columns-differ.fuzz",
          "\x03" + join({m, str(encode_rank_file(sample(0).e, 0)), str(encode_rank_file(other.e, 1))}));
    m = encode_meta(sample().e, {"a.sdrg"}, "defs.sdrg");
    write("definitions-with-threads.fuzz", "\x03" + join({m, str(good), str(good)}));
    write("threads-only-no-definitions.fuzz",
          "\x03" + join({meta1, str(encode_rank_file(sample().e, -1, {false, true}))}));
  }
  // ---- the few-files layout (mode 3): a container cut, damaged, lying about a rank; two layouts ----
  {
    constexpr size_t kIndex = sizeof(fmt::ContainerHeader);
    write("container-truncated.fuzz", "\x03" + mpi_in_container([](std::string& c) { c.resize(c.size() - 10); }));
    write("container-index-cut.fuzz", "\x03" + mpi_in_container([](std::string& c) { c.resize(kIndex + 8); }));
    write("container-index-damaged.fuzz", "\x03" + mpi_in_container([](std::string& c) { c[kIndex + 9] ^= 1; }));
    write("container-rank-file-damaged.fuzz", "\x03" + mpi_in_container([](std::string& c) { c[c.size() - 9] ^= 1; }));
    write("container-bad-magic.fuzz", "\x03" + mpi_in_container([](std::string& c) { c[0] = 'X'; }));
    write("container-rank-mismatch.fuzz", "\x03" + mpi_in_container([](std::string& c) {
            fmt::ContainerEntry e;
            std::memcpy(&e, &c[kIndex], sizeof e);
            e.rank = 7;  // the index says rank 7, the file holds rank 0
            std::memcpy(&c[kIndex], &e, sizeof e);
            uint32_t crc = fmt::crc32_update(0, &c[kIndex], 2 * sizeof e);
            std::memcpy(&c[offsetof(fmt::ContainerHeader, index_crc32)], &crc, sizeof crc);
          }));
    write("mixed-layouts.fuzz", "\x03" + mpi_in_container(nullptr, {"node-000000.sdrc", "rank-000001.sdrg"}));
  }
  std::cout << "corpus written to " << out_dir << "\n";
  return 0;
}
