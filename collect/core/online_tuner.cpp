#include "online_tuner.hpp"

#include <algorithm>
#include <cstdio>

#include "json_text.hpp"

namespace scalea::collect::tune {

namespace {
const char* kind_name(int kind) {
  switch (kind) {
    case 1: return "static";
    case 2: return "dynamic";
    case 3: return "guided";
    case 4: return "auto";
    default: return "other";
  }
}

template <class F>
double median_of(const std::vector<Execution>& runs, F value) {
  if (runs.empty()) return 0;
  std::vector<double> v;
  v.reserve(runs.size());
  for (const Execution& e : runs) v.push_back(value(e));
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The ompt_work_t a loop following `kind` reports (kWorkLoop: none to expect).
int work_type_of(int kind) {
  switch (kind) {
    case 1: return kWorkLoopStatic;
    case 2: return kWorkLoopDynamic;
    case 3: return kWorkLoopGuided;
    default: return kWorkLoop;
  }
}

bool schedule_known(int type) { return type >= kWorkLoopStatic && type <= kWorkLoopGuided; }

std::string num(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::WarmUp: return "warm-up";
    case Phase::Trying: return "trying";
    case Phase::Fixed: return "fixed";
    default: return "stopped";
  }
}

const char* loops_name(RuntimeLoops l) {
  switch (l) {
    case RuntimeLoops::Proven: return "proven";
    case RuntimeLoops::None: return "none";
    default: return "unknown";
  }
}
}  // namespace

std::string schedule_text(Schedule s) {
  std::string t = kind_name(s.kind);
  if (s.chunk > 0) t += "," + std::to_string(s.chunk);
  return t;
}

double Trial::median_seconds() const {
  return median_of(runs, [](const Execution& e) { return e.seconds; });
}
double Trial::median_imbalance() const {
  return median_of(runs, [](const Execution& e) { return e.imbalance; });
}
double Trial::median_busy() const {
  return median_of(runs, [](const Execution& e) { return e.busy; });
}
double Trial::min_seconds() const {
  double m = runs.empty() ? 0 : runs[0].seconds;
  for (const Execution& e : runs) m = std::min(m, e.seconds);
  return m;
}
double Trial::max_seconds() const {
  double m = 0;
  for (const Execution& e : runs) m = std::max(m, e.seconds);
  return m;
}

std::vector<Trial> candidates(Schedule program, uint64_t iterations, unsigned threads) {
  uint64_t per = uint64_t(std::max(1u, threads)) * 8;
  int chunk = int(std::max<uint64_t>(1, std::min<uint64_t>(iterations / per, 1u << 20)));
  std::vector<Schedule> list = {{1, 0}, {1, 1}, {2, 1}, {2, chunk}, {3, 1}};
  std::vector<Trial> out;
  out.push_back(Trial{program, true, {}});
  for (Schedule s : list) {
    bool dup = false;
    for (const Trial& t : out) dup = dup || t.schedule == s;
    if (!dup) out.push_back(Trial{s, false, {}});
  }
  return out;
}

bool beats(const Trial& c, const Trial& best, const Settings& s) {
  if (c.runs.empty() || best.runs.empty()) return false;
  return c.median_seconds() <= (1 - s.min_gain) * best.median_seconds() &&
         c.max_seconds() < best.min_seconds();
}

bool RegionTuner::before(Schedule program, Schedule& set) {
  if (executions_ == 0) program_ = program;
  else if (program != program_ && phase_ != Phase::Stopped)
    stop("the program set its own schedule (" + schedule_text(program) + ", was " +
         schedule_text(program_) + ")");
  switch (phase_) {
    case Phase::Trying: set = trials_[current_].schedule; return !trials_[current_].program;
    case Phase::Fixed: set = trials_[chosen_].schedule; return chosen_ != 0;
    default: return false;
  }
}

void RegionTuner::after(const Execution& e) {
  ++executions_;
  if (phase_ == Phase::WarmUp) return learn(e);
  if (phase_ != Phase::Trying) return;
  Trial& t = trials_[current_];
  t.runs.push_back(e);
  if (!t.program) check_loops(e);
  if (phase_ != Phase::Trying) return;
  if (int(t.runs.size()) < settings_.repeat) return;
  if (++current_ == trials_.size()) choose();
}

void RegionTuner::learn(const Execution& e) {
  if (e.loops.empty()) return stop("no worksharing loop ran in it");
  base_loops_ = e.loops;
  for (const LoopSeen& l : e.loops) iterations_ = std::max(iterations_, l.iterations);
  threads_ = e.threads;
  if (threads_ < 2) return stop("one thread: no schedule can balance it");
  trials_ = candidates(program_, iterations_, threads_);
  current_ = 0;
  phase_ = Phase::Trying;
}

// A loop whose reported schedule changed with the run-sched-var set proves a schedule(runtime)
// loop; when the runtime reports schedules and none changed under a schedule of another kind
// than the program's, the region has none, and nothing the tuner sets can matter.
void RegionTuner::check_loops(const Execution& e) {
  if (loops_decided_) return;
  const Schedule set = trials_[current_].schedule;
  bool known = false;
  for (const LoopSeen& l : e.loops) {
    if (!schedule_known(l.type)) continue;
    known = true;
    for (const LoopSeen& b : base_loops_)
      if (b.code == l.code && schedule_known(b.type) && b.type != l.type &&
          l.type == work_type_of(set.kind)) {
        loops_ = RuntimeLoops::Proven;
        loops_decided_ = true;
        return;
      }
  }
  if (!known || set.kind == program_.kind) return;
  loops_ = RuntimeLoops::None;
  loops_decided_ = true;
  stop(
      "no loop of it follows the schedule set (the runtime reports each loop's schedule): none "
      "is schedule(runtime)");
}

void RegionTuner::choose() {
  chosen_ = 0;
  for (size_t i = 1; i < trials_.size(); ++i)
    if (beats(trials_[i], trials_[chosen_], settings_)) chosen_ = i;
  phase_ = Phase::Fixed;
  fixed_from_ = executions_ + 1;
  reason_ = chosen_ ? "faster beyond the noise than every schedule before it"
                    : "no schedule faster than the program's own beyond the noise";
}

void RegionTuner::stop(std::string why) {
  phase_ = Phase::Stopped;
  reason_ = std::move(why);
  fixed_from_ = executions_ + 1;
}

double RegionTuner::gain() const {
  if (phase_ != Phase::Fixed || chosen_ == 0) return 0;
  double base = trials_[0].median_seconds();
  return base > 0 ? 1 - trials_[chosen_].median_seconds() / base : 0;
}

std::string region_json(const RegionTuner& r, const void* code, uint32_t region) {
  std::string j = "{\"code\": " + std::to_string(reinterpret_cast<uintptr_t>(code)) +
                  ", \"region\": " + std::to_string(region) + ", \"state\": \"" +
                  phase_name(r.phase()) + "\", \"reason\": " + json_escape(r.reason()) +
                  ", \"runtime_loops\": \"" + loops_name(r.runtime_loops()) +
                  "\", \"program_schedule\": " + json_escape(schedule_text(r.program())) +
                  ", \"executions\": " + std::to_string(r.executions()) +
                  ", \"fixed_from\": " + std::to_string(r.fixed_from()) +
                  ", \"iterations\": " + std::to_string(r.iterations()) +
                  ", \"threads\": " + std::to_string(r.threads());
  bool fixed = r.phase() == Phase::Fixed;
  j += ", \"chosen\": " +
       (fixed ? json_escape(schedule_text(r.trials()[r.chosen()].schedule)) : std::string("null"));
  j += ", \"gain\": " + num("%.4f", r.gain()) + ", \"trials\": [";
  for (size_t i = 0; i < r.trials().size(); ++i) {
    const Trial& t = r.trials()[i];
    j += std::string(i ? ", " : "") + "{\"schedule\": " + json_escape(schedule_text(t.schedule)) +
         ", \"program\": " + (t.program ? "true" : "false") +
         ", \"runs\": " + std::to_string(t.runs.size()) +
         ", \"median_s\": " + num("%.6f", t.median_seconds()) +
         ", \"min_s\": " + num("%.6f", t.min_seconds()) +
         ", \"max_s\": " + num("%.6f", t.max_seconds()) +
         ", \"imbalance_s\": " + num("%.6f", t.median_imbalance()) +
         ", \"busy_s\": " + num("%.6f", t.median_busy()) + "}";
  }
  return j + "]}";
}

}  // namespace scalea::collect::tune
