// What the collector writes for one recorded state, compared byte for byte with checked-in files
// (tests/unit/golden/): the rank file and meta.json of a run driven through the adapters with the
// fake clock. Only what differs between two runs of the same events is masked first: the thread
// ids in the data file (and so its CRC), and in meta.json the process's command, directory, host,
// pid, wall-clock dates and CPU sets. A change of the output format shows up here as a diff.
//
// Its own executable: the recorder is process-wide, and this state must be the only one in it.
// SCALEA_UPDATE_GOLDEN=1 writes the files again instead of comparing (then review the diff).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../temp_dir.hpp"
#include "core/recorder.hpp"
#include "ompt/callbacks.hpp"
#include "scalea/compact.hpp"
#include "scalea/format.hpp"
#include "scalea/scalea.h"
#include "worker.hpp"

extern "C" void __cyg_profile_func_enter(void* fn, void* site);
extern "C" void __cyg_profile_func_exit(void* fn, void* site);
extern char** environ;

namespace scalea::collect {
namespace {

using namespace scalea::collect::ompt;

void at(uint64_t t) { g_fake_now.store(t); }
#define CODE(n) reinterpret_cast<const void*>(uintptr_t(0x1000 * (n)))

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The environment meta.json records (OMP_, KMP_, SCALEA_, ...) made the same on every run.
void set_environment(const std::string& out) {
  std::vector<std::string> drop;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    for (const char* p : {"OMP_", "KMP_", "SCALEA_", "GOMP_", "OMPI_", "PMI_", "PMIX_", "LD_PRELOAD"})
      if (kv.rfind(p, 0) == 0) drop.push_back(kv.substr(0, kv.find('=')));
  }
  for (const std::string& k : drop) unsetenv(k.c_str());
  setenv("OMP_NUM_THREADS", "2", 1);
  setenv("SCALEA_OUTPUT", out.c_str(), 1);
  setenv("SCALEA_QUIET", "1", 1);
  setenv("SCALEA_COUNTERS", "none", 1);
  setenv("SCALEA_THROTTLE", "3:1us", 1);
  setenv("SCALEA_THROTTLE_REGIONS", "all", 1);
}

// Every kind of event the adapters handle, on two threads, with exact times.
void record_events() {
  Recorder& rec = Recorder::get();
  SourceInfo& omp = rec.openmp_info();
  omp.runtime = "synthetic runtime 1.0";
  omp.runtime_path = "/opt/omp/libomp.so";
  omp.callbacks = {{"parallel_begin", "always"}, {"dispatch", "never"}};
  at(1000);
  scalea_region_begin_loc("solve", "golden.c", 10, "main");
  at(1100);
  __cyg_profile_func_enter(const_cast<void*>(CODE(11)), nullptr);  // no module: a raw address
  at(1150);
  __cyg_profile_func_enter(const_cast<void*>(CODE(12)), nullptr);
  at(1170);
  __cyg_profile_func_exit(const_cast<void*>(CODE(12)), nullptr);
  at(1300);
  __cyg_profile_func_exit(const_cast<void*>(CODE(11)), nullptr);
  for (int i = 0; i < 4; ++i) {  // throttled after 3 visits (mean 10 ns < 1 us)
    at(1400 + 20 * i);
    scalea_region_begin_loc("tiny", "golden.c", 20, "main");
    at(1410 + 20 * i);
    scalea_region_end("tiny");
  }
  ompt_data_t par{}, task{}, child{};
  at(2000);
  Worker w;
  w.run([] {});  // the worker has registered (at 2000) once its first step ran
  on_parallel_begin(nullptr, nullptr, &par, 2, 0, CODE(1));
  at(2010);
  on_implicit_task(ompt_scope_begin, &par, &task, 2, 0, ompt_task_implicit);
  w.run([&] {
    ompt_data_t wt{};
    at(2020);
    on_implicit_task(ompt_scope_begin, &par, &wt, 2, 1, ompt_task_implicit);
    at(2030);
    on_work(ompt_work_loop, ompt_scope_begin, &par, &wt, 40, CODE(2));
    on_dispatch(&par, &wt, ompt_dispatch_iteration, ompt_data_t{});
    at(2500);
    on_work(ompt_work_loop, ompt_scope_end, &par, &wt, 0, CODE(3));
    on_mutex_acquire(ompt_mutex_lock, 0, 0, 77, CODE(5));
    at(2600);
    on_mutex_acquired(ompt_mutex_lock, 77, CODE(5));
    at(2650);
    on_mutex_released(ompt_mutex_lock, 77, CODE(5));
    on_sync_region(ompt_sync_region_barrier_implicit_parallel, ompt_scope_begin, &par, &wt, nullptr);
    on_sync_region_wait(ompt_sync_region_barrier_implicit_parallel, ompt_scope_begin, &par, &wt,
                        nullptr);
  });
  at(2040);
  on_work(ompt_work_loop, ompt_scope_begin, &par, &task, 60, CODE(2));
  at(2300);
  on_work(ompt_work_loop, ompt_scope_end, &par, &task, 0, CODE(3));
  on_work(ompt_work_single_executor, ompt_scope_begin, &par, &task, 1, CODE(6));
  on_task_create(&task, nullptr, &child, ompt_task_explicit, 0, CODE(7));
  at(2350);
  on_task_schedule(&task, ompt_task_switch, &child);
  at(2450);
  on_task_schedule(&child, ompt_task_complete, &task);
  on_flush(nullptr, CODE(8));
  at(2460);
  on_work(ompt_work_single_executor, ompt_scope_end, &par, &task, 1, CODE(6));
  on_masked(ompt_scope_begin, &par, &task, CODE(9));
  at(2470);
  on_masked(ompt_scope_end, &par, &task, CODE(9));
  on_sync_region(ompt_sync_region_barrier_implicit_parallel, ompt_scope_begin, &par, &task, CODE(1));
  on_sync_region_wait(ompt_sync_region_barrier_implicit_parallel, ompt_scope_begin, &par, &task,
                      CODE(1));
  at(2700);
  on_sync_region_wait(ompt_sync_region_barrier_implicit_parallel, ompt_scope_end, &par, &task,
                      CODE(1));
  on_sync_region(ompt_sync_region_barrier_implicit_parallel, ompt_scope_end, &par, &task, CODE(1));
  on_implicit_task(ompt_scope_end, nullptr, &task, 2, 0, ompt_task_implicit);
  at(2720);
  on_parallel_end(&par, nullptr, 0, CODE(1));
  w.run([&] {
    ompt_data_t wt{};
    at(3000);  // the worker's late join-barrier end: clipped to the master's release
    on_sync_region_wait(ompt_sync_region_barrier_implicit_parallel, ompt_scope_end, nullptr, &wt,
                        nullptr);
    on_sync_region(ompt_sync_region_barrier_implicit_parallel, ompt_scope_end, nullptr, &wt,
                   nullptr);
    on_implicit_task(ompt_scope_end, nullptr, &wt, 0, 1, ompt_task_implicit);
    on_mutex_released(ompt_mutex_lock, 99, CODE(5));  // no acquisition: an anomaly
  });
  // A call-site region as the MPI layer records it: bytes and the wait/transfer split.
  ThreadState& t = *rec.thread();
  uint16_t coll = uint16_t(format::MpiClass::Collective);
  uint32_t site = rec.site_region(RegionKind::Mpi, coll, "MPI_Allreduce", CODE(10));
  at(3100);
  enter(t, site, FrameType::Region, 3100, 42);
  at(3400);
  Node* n = t.stack.back().node;
  leave_at(t, t.stack.size() - 1, 3400);
  n->s.bytes_sent += 64;
  n->s.bytes_recv += 128;
  n->s.wait += 200;
  n->s.transfer += 100;
  at(3500);
  scalea_region_end("solve");
  at(3600);
  scalea_region_begin_loc("left open", "golden.c", 30, "main");
  at(4000);
}

// Moves `p` past a thread's structure and values (format version 3, scalea/compact.hpp): the
// core columns only.
void skip_compact_nodes(const std::string& file, size_t& p, const format::ThreadRecord& tr) {
  const auto* at = reinterpret_cast<const uint8_t*>(file.data()) + p;
  const auto* end = reinterpret_cast<const uint8_t*>(file.data()) + file.size();
  uint64_t v;
  for (uint32_t n = 0; tr.same_shape == format::kNoIndex && n < 2 * tr.node_count; ++n)
    ASSERT_TRUE(format::get_varint(at, end, v));
  for (size_t m = 0; m < format::kCoreMetricCount; ++m) {
    const format::PackedColumn c = format::packed_column(at, end, tr.node_count);
    ASSERT_TRUE(c.ok) << "column " << m;
    at = c.next;
  }
  p = size_t(at - reinterpret_cast<const uint8_t*>(file.data()));
}

// Zeroes the thread ids of a data file (THRD records) and sets its CRC again.
void mask_thread_ids(std::string& file) {
  using namespace format;
  FileHeader h;
  ASSERT_GE(file.size(), sizeof h);
  std::memcpy(&h, file.data(), sizeof h);
  size_t at = sizeof h;
  for (uint32_t s = 0; s < h.section_count; ++s) {
    SectionHeader sh;
    ASSERT_LE(at + sizeof sh, file.size());
    std::memcpy(&sh, file.data() + at, sizeof sh);
    at += sizeof sh;
    if (sh.tag == kTagThreads) {
      size_t p = at;
      for (uint32_t i = 0; i < sh.count; ++i) {
        ThreadRecord tr;
        std::memcpy(&tr, file.data() + p, sizeof tr);
        tr.os_tid = 0;
        std::memcpy(&file[p], &tr, sizeof tr);
        p += sizeof tr;
        skip_compact_nodes(file, p, tr);
      }
    }
    at += sh.size;
  }
  h.payload_crc32 = crc32_update(0, file.data() + sizeof h, file.size() - sizeof h);
  std::memcpy(&file[0], &h, sizeof h);
}

std::string hex_lines(const std::string& bytes) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", unsigned(static_cast<unsigned char>(bytes[i])));
    out += buf;
    out += (i % 32 == 31 || i + 1 == bytes.size()) ? '\n' : ' ';
  }
  return out;
}

// The values of meta.json that differ between two runs of the same events.
std::string mask_meta(const std::string& meta) {
  static const std::regex top(R"re(^  "(command|cwd|host|pid|start_time|end_time)": .*,$)re");
  static const std::regex cpus(R"re("(process_cpus|cpus)": "[^"]*")re");
  static const std::regex numbers(R"re("(cpus_online|os_tid|count)": [0-9]+)re");
  static const std::regex output(R"re("SCALEA_OUTPUT": "[^"]*")re");
  static const std::regex sched(R"re("(cpu_s|runqueue_s)": [0-9.]+)re");  // the real scheduler's
  std::istringstream in(meta);
  std::string line, out;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, top)) {
      line = "  \"" + m[1].str() + "\": \"<masked>\",";
    } else if (line.rfind("  \"affinity\": ", 0) == 0) {
      line = std::regex_replace(line, cpus, "\"$1\": \"<masked>\"");
      line = std::regex_replace(line, numbers, "\"$1\": 0");
      line = std::regex_replace(line, sched, "\"$1\": 0");
    } else if (line.rfind("  \"environment\": ", 0) == 0) {
      line = std::regex_replace(line, output, "\"SCALEA_OUTPUT\": \"<masked>\"");
    }
    out += line + "\n";
  }
  return out;
}

// Compares with the checked-in file; on a difference the actual text goes beside the experiment.
void compare_or_update(const std::string& name, const std::string& actual, const std::string& tmp,
                       bool update) {
  const std::string path = std::string(SCALEA_GOLDEN_DIR) + "/" + name;
  if (update) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing";
  if (expected == actual) return;
  std::string got = tmp + "/" + name;
  std::ofstream(got, std::ios::binary) << actual;
  ADD_FAILURE() << name << " differs from the checked-in file: diff " << path << " " << got;
}

TEST(OutputGolden, SameEventsGiveTheSameFiles) {
  test::TempDir tmp("scalea-unit-golden");
  // Kept when the test fails, for the files its messages name. The recorder's exit handler then
  // finds it too, should an assertion stop the test before rec.finish() below.
  struct KeepOnFailure {
    test::TempDir& dir;
    ~KeepOnFailure() {
      if (::testing::Test::HasFailure()) dir.keep();
    }
  } keep_on_failure{tmp};
  const std::string dir = tmp.path() + "/exp";
  const bool update = getenv("SCALEA_UPDATE_GOLDEN") != nullptr;  // read before it is cleared
  set_environment(dir);
  ASSERT_EQ(g_state.load(), 0) << "the recorder must start in this test";
  at(500);
  ASSERT_TRUE(Recorder::get().start("test"));
  Recorder& rec = Recorder::get();
  rec.pre_start_ns = 0;  // the process's age at start: not part of the events
  rec.start_estimated = false;
  record_events();
  rec.ending_notes.push_back("a note \"quoted\"");
  rec.ending_complete = false;
  rec.finish("golden");

  std::string data = read_file(dir + "/rank-000000.sdrg");
  ASSERT_FALSE(data.empty()) << "no data file in " << dir;
  ASSERT_NO_FATAL_FAILURE(mask_thread_ids(data));
  compare_or_update("rank-000000.sdrg.hex", hex_lines(data), tmp.path(), update);
  compare_or_update("meta.json", mask_meta(read_file(dir + "/meta.json")), tmp.path(), update);
}

}  // namespace
}  // namespace scalea::collect
