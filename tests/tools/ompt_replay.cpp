// ompt_replay -- feeds a trace written by ompt_trace.c (a real run's OMPT event order) into
// scalea's OMPT adapter, one simulated thread per traced thread, in the trace's time order, with
// the trace's times on the fake clock. Every event after which the adapter counts an anomaly is
// printed with the thread's frame stack, so a runtime order the adapter mishandles can be found
// and turned into a unit test.
//
//   ompt_replay TRACE|- [--quiet]    exit status 0: no anomaly, 1: anomalies, 2: bad input
#include <stdio.h>
#include <stdlib.h>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>

#include "core/recorder.hpp"
#include "ompt/callbacks.hpp"
#include "worker.hpp"

using namespace scalea::collect;
using namespace scalea::collect::ompt;

namespace {

const char* frame_name(FrameType t) {
  switch (t) {
    case FrameType::Region: return "R";
    case FrameType::Parallel: return "Par";
    case FrameType::ImplicitTask: return "Imp";
    case FrameType::ExplicitTask: return "Task";
    case FrameType::Mutex: return "Mtx";
  }
  return "?";
}

std::string stack_of(const ThreadState& t, const std::unordered_map<const void*, uint64_t>& ids) {
  std::string s;
  for (const Frame& f : t.stack) {
    s += frame_name(f.type);
    auto it = ids.find(f.rec);
    if (f.rec && it != ids.end()) s += "(P" + std::to_string(it->second) + ")";
    s += ' ';
  }
  return s;
}

uint64_t id_of(const std::string& tok) { return std::stoull(tok.substr(1)); }
const void* code_of(const std::string& tok) {
  return reinterpret_cast<const void*>(std::stoull(tok, nullptr, 16));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ompt_replay TRACE|- [--quiet]\n");
    return 2;
  }
  bool quiet = argc > 2 && std::string(argv[2]) == "--quiet";
  std::ifstream file;
  if (std::string(argv[1]) != "-") file.open(argv[1]);
  std::istream& in = std::string(argv[1]) == "-" ? std::cin : file;
  if (!in) {
    fprintf(stderr, "ompt_replay: cannot read %s\n", argv[1]);
    return 2;
  }
  char dir[] = "/tmp/scalea-replay-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  setenv("SCALEA_OUTPUT", (std::string(dir) + "/exp").c_str(), 1);
  setenv("SCALEA_QUIET", "1", 1);
  if (!Recorder::get().start("replay")) return 2;

  std::map<std::string, std::unique_ptr<Worker>> threads;
  std::unordered_map<uint64_t, ompt_data_t> parallel, tasks;
  std::unordered_map<const void*, uint64_t> record_ids;  // ParallelRecord* -> trace P id
  uint64_t anomalies = 0, events = 0;
  std::string line;
  for (size_t ln = 1; std::getline(in, line); ++ln) {
    std::istringstream ss(line);
    std::vector<std::string> f;
    for (std::string tok; ss >> tok;) f.push_back(tok);
    if (f.size() < 3) continue;
    auto& w = threads[f[1]];
    if (!w) w = std::make_unique<Worker>();
    uint64_t when = std::stoull(f[0]) + 1;
    const std::string& ev = f[2];
    w->run([&] {
      ThreadState* t = w->state();
      Anomalies before = t->anomalies;
      g_fake_now.store(when);
      bool begin = f.size() > 3 && f[3] == "begin";
      auto ep = begin ? ompt_scope_begin : ompt_scope_end;
      if (ev == "thread_begin") {
        on_thread_begin(ompt_thread_t(std::stoul(f[3].substr(1))), nullptr);
      } else if (ev == "parallel_begin") {  // Pk in Pj requested R code C
        ompt_data_t& p = parallel[id_of(f[3])];
        on_parallel_begin(nullptr, nullptr, &p, unsigned(std::stoul(f[7])), 0, code_of(f[9]));
        record_ids[p.ptr] = id_of(f[3]);
      } else if (ev == "parallel_end") {
        on_parallel_end(&parallel[id_of(f[3])], nullptr, 0, nullptr);
      } else if (ev == "implicit_task") {  // begin|end Pk Tn actual A index I
        ompt_data_t& task = tasks[id_of(f[5])];
        on_implicit_task(ep, begin ? &parallel[id_of(f[4])] : nullptr, &task,
                         unsigned(std::stoul(f[7])), unsigned(std::stoul(f[9])), ompt_task_implicit);
      } else if (ev == "sync_region" || ev == "sync_wait") {  // ep kind K Pk task-of Pj code C
        auto kind = ompt_sync_region_t(std::stoul(f[5]));
        uint64_t p = id_of(f[6]);
        ompt_data_t* pd = p ? &parallel[p] : nullptr;
        (ev == "sync_region" ? on_sync_region : on_sync_region_wait)(kind, ep, pd, nullptr,
                                                                     code_of(f[10]));
      }
      ++events;
      uint64_t d = (t->anomalies.unmatched_end - before.unmatched_end) +
                   (t->anomalies.unclosed - before.unclosed);
      if (d) {
        anomalies += d;
        if (!quiet)
          printf("line %zu: %s -> unmatched_end +%llu unclosed +%llu; stack now: %s\n", ln,
                 line.c_str(), (unsigned long long)(t->anomalies.unmatched_end - before.unmatched_end),
                 (unsigned long long)(t->anomalies.unclosed - before.unclosed),
                 stack_of(*t, record_ids).c_str());
      }
    });
  }
  printf("ompt_replay: %llu events on %zu threads, %llu anomalies\n", (unsigned long long)events,
         threads.size(), (unsigned long long)anomalies);
  return anomalies ? 1 : 0;
}
