// ompt_replay -- feeds a trace written by ompt_trace.c (a real run's OMPT event order) into
// scalea's OMPT adapter, one simulated thread per traced thread, in the trace's time order, with
// the trace's times on the fake clock. Every event after which the adapter counts an anomaly is
// printed with the thread's frame stack, so a runtime order the adapter mishandles can be found
// and turned into a unit test.
//
//   ompt_replay TRACE|- [--quiet]    exit status 0: no anomaly, 1: anomalies, 2: bad input
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "../temp_dir.hpp"
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
    case FrameType::Throttled: return "Thr";
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

// One trace line, parsed before it is replayed (a malformed line stops the replay with a message).
struct Event {
  uint64_t when = 0;
  std::string thread, name;
  bool begin = false;
  uint64_t a = 0, b = 0, c = 0, d = 0;  // per event: see parse()
  const void* code = nullptr;
  int flags = -1;  // the runtime's flags, when the trace has them
};

// The value after the word `key` at fields[at], if the line has it (the flags of newer traces).
int flags_at(const std::vector<std::string>& f, size_t at) {
  return f.size() > at + 1 && f[at] == "flags" ? int(std::stoul(f[at + 1], nullptr, 16)) : -1;
}

uint64_t id_of(const std::string& tok) {  // "P12" / "T7" -> 12 / 7
  if (tok.size() < 2) throw std::invalid_argument(tok);
  return std::stoull(tok.substr(1));
}

// Field layouts (ompt_trace.c): "time tN thread_begin P<type>", "... parallel_begin Pk in Pj
// requested R code C [flags F]", "... parallel_end Pk [flags F]", "... implicit_task begin|end Pk
// Tn actual A index I [flags F]", "... sync_region|sync_wait begin|end kind K Pk task-of Pj code
// C", "... work begin|end type W count N code C". Traces without flags are of implicit tasks.
bool parse(const std::string& line, Event& e) {
  std::istringstream ss(line);
  std::vector<std::string> f;
  for (std::string tok; ss >> tok;) f.push_back(tok);
  if (f.size() < 4) return false;
  try {
    e.when = std::stoull(f[0]) + 1;
    e.thread = f[1];
    e.name = f[2];
    e.begin = f[3] == "begin";
    if (e.name == "thread_begin") {
      e.a = id_of(f[3]);
    } else if (e.name == "parallel_begin" && f.size() >= 10) {
      e.a = id_of(f[3]), e.c = std::stoul(f[7]);
      e.code = reinterpret_cast<const void*>(std::stoull(f[9], nullptr, 16));
      e.flags = flags_at(f, 10);
    } else if (e.name == "parallel_end") {
      e.a = id_of(f[3]);
      e.flags = flags_at(f, 4);
    } else if (e.name == "implicit_task" && f.size() >= 10) {
      e.a = id_of(f[4]), e.b = id_of(f[5]), e.c = std::stoul(f[7]), e.d = std::stoul(f[9]);
      e.flags = flags_at(f, 10);
    } else if (e.name == "work" && f.size() >= 10) {
      e.c = std::stoul(f[5]), e.d = std::stoull(f[7]);
      e.code = reinterpret_cast<const void*>(std::stoull(f[9], nullptr, 16));
    } else if ((e.name == "sync_region" || e.name == "sync_wait") && f.size() >= 11) {
      e.c = std::stoul(f[5]), e.a = id_of(f[6]);
      e.code = reinterpret_cast<const void*>(std::stoull(f[10], nullptr, 16));
    } else {
      return false;
    }
  } catch (const std::exception&) {
    return false;
  }
  return true;
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
  // The experiment the recorder writes at exit goes with the directory after it (a static made
  // before the recorder starts, ../temp_dir.hpp); nothing reads it.
  static const scalea::test::TempDir dir("scalea-replay");
  setenv("SCALEA_OUTPUT", (dir.path() + "/exp").c_str(), 1);
  setenv("SCALEA_QUIET", "1", 1);
  if (!Recorder::get().start("replay")) return 2;

  std::map<std::string, std::unique_ptr<Worker>> threads;
  std::unordered_map<uint64_t, ompt_data_t> parallel, tasks;
  std::unordered_map<const void*, uint64_t> record_ids;  // ParallelRecord* -> trace P id
  uint64_t anomalies = 0, events = 0;
  std::string line;
  for (size_t ln = 1; std::getline(in, line); ++ln) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Event e;
    if (!parse(line, e)) {
      fprintf(stderr, "ompt_replay: line %zu is not an ompt_trace line: %s\n", ln, line.c_str());
      return 2;
    }
    auto& w = threads[e.thread];
    if (!w) w = std::make_unique<Worker>();
    w->run([&] {
      ThreadState* t = w->state();
      Anomalies before = t->anomalies;
      g_fake_now.store(e.when);
      auto ep = e.begin ? ompt_scope_begin : ompt_scope_end;
      if (e.name == "thread_begin") {
        on_thread_begin(ompt_thread_t(e.a), nullptr);
      } else if (e.name == "parallel_begin") {
        ompt_data_t& p = parallel[e.a];
        on_parallel_begin(nullptr, nullptr, &p, unsigned(e.c), std::max(e.flags, 0), e.code);
        record_ids[p.ptr] = e.a;
      } else if (e.name == "parallel_end") {
        on_parallel_end(&parallel[e.a], nullptr, std::max(e.flags, 0), nullptr);
      } else if (e.name == "implicit_task") {
        on_implicit_task(ep, e.begin ? &parallel[e.a] : nullptr, &tasks[e.b], unsigned(e.c),
                         unsigned(e.d), e.flags < 0 ? int(ompt_task_implicit) : e.flags);
      } else if (e.name == "work") {
        on_work(ompt_work_t(e.c), ep, nullptr, nullptr, e.d, e.code);
      } else {  // sync_region, sync_wait
        ompt_data_t* pd = e.a ? &parallel[e.a] : nullptr;
        (e.name == "sync_region" ? on_sync_region : on_sync_region_wait)(
            ompt_sync_region_t(e.c), ep, pd, nullptr, e.code);
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
