// The tuner's knowledge base and its verdict (tune.hpp).
#include "tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "findings/directive.hpp"
#include "findings/findings.hpp"
#include "findings/pattern.hpp"
#include "output/errors.hpp"

namespace scalea::cli::tune {
namespace {

using format::RegionKind;
using overheads::Class;

double class_of(const overheads::RegionOverheads& r, Class c) { return r.classes[size_t(c)]; }

// The threads of the busiest process (rank) of the run.
size_t threads_per_process(const drg::Experiment& e) {
  std::map<int32_t, size_t> per_rank;
  for (const drg::ThreadTree& th : e.threads) ++per_rank[th.rank];
  size_t most = 0;
  for (const auto& [rank, n] : per_rank) most = std::max(most, n);
  return most;
}

bool has_parallel_region(const drg::Experiment& e) {
  return std::any_of(e.regions.begin(), e.regions.end(),
                     [](const drg::Region& r) { return r.kind == RegionKind::Parallel; });
}

std::string short_file(const std::string& f) { return f.substr(f.rfind('/') + 1); }

// The rule `schedule`: OMP_SCHEDULE variants for the runtime-scheduled loops that lose time.
void schedule_rule(const Analyzed& x, const Environment& env, Choice& c) {
  const std::vector<RuntimeLoop> loops = runtime_loops(x);
  if (loops.empty()) {
    c.left.push_back(
        "OMP_SCHEDULE: no loop is schedule(runtime) (its source read at the loop's line), so "
        "OMP_SCHEDULE changes none; the advice in `scalea report` names the clause to write");
    return;
  }
  const double floor = finding_floor(x.a);
  const RuntimeLoop* worst = nullptr;
  for (const RuntimeLoop& l : loops)
    if (l.waited >= floor && (!worst || l.waited > worst->waited)) worst = &l;
  if (!worst) {
    c.left.push_back(fmt::format(
        "OMP_SCHEDULE: the schedule(runtime) loop at {} waits less than {:.3f} s, the floor of a "
        "finding: its schedule is not what costs time",
        loops.front().where, floor));
    return;
  }
  const std::string why =
      fmt::format("the schedule(runtime) loop at {} waits {:.3f} s", worst->where, worst->waited);
  const std::string chunk = worst->chunk ? std::to_string(worst->chunk) : "1";
  auto current = env.find("OMP_SCHEDULE");
  for (const std::string& value :
       {std::string("static,1"), "dynamic," + chunk, "guided," + chunk}) {
    if (current != env.end() && current->second == value) continue;
    c.variants.push_back({{{"OMP_SCHEDULE", value}}, 0, "schedule", why});
  }
  if (current != env.end())
    // The user's own OMP_SCHEDULE is the baseline: the default is a candidate too.
    c.variants.push_back({{{"OMP_SCHEDULE", "static"}}, 0, "schedule", why});
}

// The rule `wait`: let waiting threads sleep when they wait much or share CPUs.
void wait_rule(const Analyzed& x, const Environment& env, int cpus, Choice& c) {
  const drg::Experiment& e = x.experiment();
  const overheads::RegionOverheads& program = x.a.regions.front();
  const double sync = class_of(program, Class::Synchronization);
  const bool shared =
      !cpu_sharing(e).empty() || cpu_wait(e).significant() || threads_per_process(e) > size_t(cpus);
  if (env.count("OMP_WAIT_POLICY") || env.count("KMP_BLOCKTIME")) {
    c.left.push_back("OMP_WAIT_POLICY: set in your environment, kept");
    return;
  }
  if (sync < kRuleMinShare * program.t_p && !shared) {
    c.left.push_back(fmt::format(
        "OMP_WAIT_POLICY: the threads waited {:.3f} s, under {:.0f}% of the run, on CPUs of their "
        "own: how they wait matters little",
        sync, 100 * kRuleMinShare));
    return;
  }
  c.variants.push_back(
      {{{"OMP_WAIT_POLICY", "passive"}},
       0,
       "wait",
       shared ? std::string("the threads shared CPUs: a spinning waiter takes a CPU from a thread "
                            "with work")
              : fmt::format("the threads waited {:.3f} s ({:.0f}% of the run)", sync,
                            100 * sync / std::max(1e-12, program.t_p))});
}

// The rule `bind`: keep threads near their data when they fit the CPUs.
void bind_rule(const Analyzed& x, const Environment& env, int cpus, Choice& c) {
  const drg::Experiment& e = x.experiment();
  const overheads::RegionOverheads& program = x.a.regions.front();
  const size_t threads = threads_per_process(e);
  if (env.count("OMP_PROC_BIND") || env.count("OMP_PLACES")) {
    c.left.push_back("OMP_PROC_BIND: set in your environment, kept");
    return;
  }
  if (threads < 2 || threads > size_t(cpus)) {
    c.left.push_back(fmt::format(
        "OMP_PROC_BIND: {} thread{} per process on {} CPUs: binding {}", threads,
        threads == 1 ? "" : "s", cpus,
        threads < 2
            ? "one thread gains nothing"
            : "more threads than CPUs to one CPU each would make them wait for each other"));
    return;
  }
  double fork_join = 0;
  if (auto it = program.subclasses.find("control_of_parallelism.fork_join");
      it != program.subclasses.end())
    fork_join = it->second;
  const double moving = class_of(program, Class::DataMovement) +
                        std::max(0.0, class_of(program, Class::Unidentified)) + fork_join;
  if (moving < kRuleMinShare * program.t_p) {
    c.left.push_back(fmt::format(
        "OMP_PROC_BIND: data movement, unidentified time and fork/join are {:.3f} s, under {:.0f}% "
        "of the run: where the threads run matters little",
        moving, 100 * kRuleMinShare));
    return;
  }
  const std::string why = fmt::format(
      "data movement, unidentified time and fork/join are {:.3f} s ({:.0f}% of the run)", moving,
      100 * moving / std::max(1e-12, program.t_p));
  for (const char* bind : {"close", "spread"})
    c.variants.push_back({{{"OMP_PROC_BIND", bind}, {"OMP_PLACES", "cores"}}, 0, "bind", why});
}

// The rule `split`: the same PEs as other ranks x threads (a hybrid program's decomposition).
void split_rule(const Analyzed& x, bool launched, Choice& c) {
  const drg::Experiment& e = x.experiment();
  const int ranks = std::max(1, e.ranks()), threads = int(threads_per_process(e));
  if (!launched) {
    c.left.push_back(
        "ranks x threads: not an MPI run started by scalea tune (give --ranks N, and --launcher "
        "for another launcher than mpirun, to try other splits of the same PEs)");
    return;
  }
  if (ranks < 2) {
    c.left.push_back(
        "ranks x threads: one rank, whose program may not divide its work among more (try it "
        "with --try 'ranks=N OMP_NUM_THREADS=T')");
    return;
  }
  const int total = ranks * threads;
  for (int r = 1; r <= total; ++r) {
    if (total % r != 0 || r == ranks) continue;
    c.variants.push_back({{{"OMP_NUM_THREADS", std::to_string(total / r)}},
                          r,
                          "split",
                          fmt::format("{} ranks x {} threads: the same {} PEs split otherwise",
                                      ranks, threads, total)});
  }
}

// The rule `place`: free the threads of ranks that mpirun bound to fewer CPUs than they are.
// Open MPI's options (mpirun, mpiexec, orterun); a launcher that already says where ranks run is
// the user's choice, kept.
void place_rule(const Analyzed& x, const std::vector<std::string>& words, int cpus, Choice& c) {
  const drg::Experiment& e = x.experiment();
  const std::string prog = words.empty() ? "" : words[0].substr(words[0].rfind('/') + 1);
  if (prog != "mpirun" && prog != "mpiexec" && prog != "orterun") {
    c.left.push_back("mpirun's binding: " +
                     std::string(words.empty() ? "not an MPI run started by scalea tune (--ranks N)"
                                               : "the launcher is not Open MPI's mpirun"));
    return;
  }
  for (const std::string& w : words)
    if (w.rfind("--bind-to", 0) == 0 || w.rfind("--map-by", 0) == 0 || w == "-bind-to" ||
        w == "-map-by" || w.rfind("--cpus-per", 0) == 0) {
      c.left.push_back("mpirun's binding: set in your launcher (" + w + "), kept");
      return;
    }
  const CpuSharing sharing = cpu_sharing_evidence(e);
  const int threads = int(threads_per_process(e)), ranks = std::max(1, e.ranks());
  if (threads < 2 || sharing.narrow_processes == 0) {
    c.left.push_back(threads < 2 ? "mpirun's binding: one thread per rank, which its core holds"
                                 : "mpirun's binding: every rank's threads had CPUs of their own");
    return;
  }
  const std::string why = fmt::format(
      "{} of {} ranks had their {} threads bound to fewer CPUs than that (mpirun binds a rank to "
      "one core by default)",
      sharing.narrow_processes, ranks, threads);
  c.variants.push_back({{}, 0, "place", why, {"--bind-to", "none"}});
  if (ranks * threads <= cpus)  // a core for every thread of every rank
    c.variants.push_back({{}, 0, "place", why, {"--map-by", "slot:PE=" + std::to_string(threads)}});
}

}  // namespace

std::string Variant::name() const {
  if (settings.empty() && ranks == 0 && launcher_options.empty()) return "baseline";
  std::string s = ranks > 0 ? "ranks=" + std::to_string(ranks) : "";
  if (!launcher_options.empty()) {
    s += s.empty() ? "mpirun" : " mpirun";
    for (const std::string& w : launcher_options) s += " " + w;
  }
  for (const Setting& x : settings) s += (s.empty() ? "" : " ") + x.name + "=" + x.value;
  return s;
}

Variant parse_try(const std::string& text) {
  Variant v;
  v.rule = "try";
  v.why = "given with --try";
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    size_t eq = word.find('=');
    bool name_ok =
        eq != std::string::npos && eq > 0 &&
        std::all_of(word.begin(), word.begin() + long(eq),
                    [](char ch) { return std::isalnum((unsigned char)ch) || ch == '_'; }) &&
        !std::isdigit((unsigned char)word[0]);
    if (!name_ok)
      throw UserError("--try '" + text + "': '" + word +
                      "' is not NAME=VALUE (an environment setting, e.g. --try "
                      "'OMP_SCHEDULE=dynamic,4 OMP_PROC_BIND=close')");
    if (word.compare(0, eq, "ranks") == 0) {  // ranks=N: through the launcher (--ranks)
      char* end = nullptr;
      long r = std::strtol(word.c_str() + eq + 1, &end, 10);
      if (!end || *end != 0 || r < 1 || r > 1000000)
        throw UserError("--try '" + text + "': ranks=" + word.substr(eq + 1) +
                        " is not a number of ranks");
      v.ranks = int(r);
      continue;
    }
    v.settings.push_back({word.substr(0, eq), word.substr(eq + 1)});
  }
  if (v.settings.empty() && v.ranks == 0)
    throw UserError("--try '" + text + "' sets nothing: give NAME=VALUE, e.g. OMP_SCHEDULE=guided");
  return v;
}

Environment tuning_environment(char** environ_) {
  Environment env;
  for (char** e = environ_; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string name(*e, size_t(eq - *e));
    if (name.rfind("OMP_", 0) == 0 || name.rfind("KMP_", 0) == 0) env[name] = eq + 1;
  }
  return env;
}

std::vector<RuntimeLoop> runtime_loops(const Analyzed& x) {
  const drg::MergedTree& t = x.tree();
  std::vector<RuntimeLoop> out;
  std::map<std::pair<std::string, uint32_t>, Directive> read;  // per source line, read once
  const size_t n_nodes = std::min(t.nodes().size(), x.a.regions.size());
  for (uint32_t n = 0; n < n_nodes; ++n) {
    const drg::Region& r = t.region_of(n);
    if (r.kind != RegionKind::Loop || r.file.empty() || r.line == 0) continue;
    auto [it, fresh] = read.try_emplace({r.file, r.line});
    if (fresh) it->second = directive_at(r.file, r.line);
    if (it->second.schedule != "runtime") continue;
    // A pipeline's threads own fixed iterations (pattern.hpp): its schedule is not a knob.
    if (pipeline_loop(t, n) != format::kNoIndex) continue;
    RuntimeLoop l;
    l.node = n;
    l.where = fmt::format("{}:{}", short_file(r.file), it->second.line);
    auto lost = [&](uint32_t m) {
      return class_of(x.a.regions[m], Class::Synchronization) +
             class_of(x.a.regions[m], Class::ControlOfParallelism);
    };
    l.waited = lost(n);
    // The loop's implicit barrier: the next sibling at the same line.
    const uint32_t parent = t.node(n).parent;
    if (parent != format::kNoIndex)
      for (uint32_t s : t.node(parent).children)
        if (s != n && s < n_nodes && t.region_of(s).file == r.file &&
            t.region_of(s).line == r.line &&
            format::region_kind_has(t.region_of(s).kind, format::kBarrier))
          l.waited += lost(s);
    const LoopCost cost = loop_cost(t, n);
    l.chunk = suggested_chunk(cost);
    l.iterations = cost.iterations;
    out.push_back(l);
  }
  return out;
}

Choice choose_variants(const Analyzed& x, const Environment& env, int cpus,
                       const std::vector<std::string>& launcher) {
  Choice c;
  if (x.a.regions.empty()) return c;
  if (!has_parallel_region(x.experiment())) {
    c.left.push_back(
        "OpenMP settings: the run has no parallel region, so none of them changes its time");
    return c;
  }
  schedule_rule(x, env, c);
  wait_rule(x, env, cpus, c);
  bind_rule(x, env, cpus, c);
  split_rule(x, !launcher.empty(), c);
  place_rule(x, launcher, cpus, c);
  return c;
}

double Outcome::median() const {
  if (seconds.empty()) return 0;
  std::vector<double> s = seconds;
  std::sort(s.begin(), s.end());
  const size_t m = s.size() / 2;
  return s.size() % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}
double Outcome::min() const {
  return seconds.empty() ? 0 : *std::min_element(seconds.begin(), seconds.end());
}
double Outcome::max() const {
  return seconds.empty() ? 0 : *std::max_element(seconds.begin(), seconds.end());
}

bool beyond_noise(const Outcome& base, const Outcome& v) {
  return base.seconds.size() > 1 && v.seconds.size() > 1 && v.max() < base.min();
}

size_t choose_best(const std::vector<Outcome>& o) {
  if (o.empty() || !o[0].ok()) return 0;
  size_t best = 0;
  for (size_t i = 1; i < o.size(); ++i) {
    if (!o[i].ok() || o[i].median() >= o[best].median()) continue;
    const bool one_each = o[0].seconds.size() == 1 || o[i].seconds.size() == 1;
    if (one_each || beyond_noise(o[0], o[i])) best = i;
  }
  return best;
}

std::string class_changes(const Outcome& base, const Outcome& v) {
  if (!base.classified || !v.classified) return "";
  std::vector<std::pair<double, size_t>> d;
  for (size_t k = 0; k < overheads::kClassCount; ++k)
    if (double delta = v.classes[k] - base.classes[k]; std::abs(delta) >= 0.001)
      d.push_back({delta, k});
  std::sort(d.begin(), d.end(),
            [](const auto& a, const auto& b) { return std::abs(a.first) > std::abs(b.first); });
  std::string out;
  for (size_t i = 0; i < d.size() && i < 3; ++i) {
    std::string name(overheads::kClassKeys[d[i].second]);
    std::replace(name.begin(), name.end(), '_', ' ');
    out += fmt::format("{}{} {:+.3f} s", out.empty() ? "" : ", ", name, d[i].first);
  }
  return out;
}

nlohmann::json to_json(const Variant& v) {
  nlohmann::json settings = nlohmann::json::object();
  for (const Setting& s : v.settings) settings[s.name] = s.value;
  return {{"name", v.name()},
          {"settings", settings},
          {"ranks", v.ranks > 0 ? nlohmann::json(v.ranks) : nlohmann::json(nullptr)},
          {"launcher_options", v.launcher_options},
          {"rule", v.rule},
          {"why", v.why}};
}

nlohmann::json to_json(const Outcome& o) {
  nlohmann::json j = to_json(o.variant);
  j["seconds"] = o.seconds;
  j["failures"] = o.failures;
  j["ok"] = o.ok();
  j["cpu_wait_share"] = o.cpu_wait_share;
  if (!o.seconds.empty()) {
    j["median_s"] = o.median();
    j["min_s"] = o.min();
    j["max_s"] = o.max();
  }
  if (o.classified) {
    nlohmann::json cls = nlohmann::json::object();
    for (size_t k = 0; k < overheads::kClassCount; ++k)
      cls[std::string(overheads::kClassKeys[k])] = o.classes[k];
    j["classes_s"] = cls;
  }
  return j;
}

}  // namespace scalea::cli::tune
