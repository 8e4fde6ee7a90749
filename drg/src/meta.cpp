#include "scalea/drg/meta.hpp"

namespace scalea::drg {

namespace {

using nlohmann::json;

const json& at(const json& o, const char* key) {
  static const json null_value;
  if (!o.is_object()) return null_value;
  auto it = o.find(key);
  return it == o.end() ? null_value : *it;
}

std::optional<double> number(const json& o, const char* key) {
  const json& v = at(o, key);
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

std::optional<int64_t> integer(const json& o, const char* key) {
  const json& v = at(o, key);
  return v.is_number_integer() ? std::optional<int64_t>(v.get<int64_t>()) : std::nullopt;
}

std::optional<std::string> text(const json& o, const char* key) {
  const json& v = at(o, key);
  return v.is_string() ? std::optional<std::string>(v.get<std::string>()) : std::nullopt;
}

bool flag(const json& o, const char* key) {
  const json& v = at(o, key);
  return v.is_boolean() && v.get<bool>();
}

OpenmpMeta openmp(const json& o) {
  OpenmpMeta m;
  m.runtime = text(o, "runtime").value_or("");
  m.runtime_path = text(o, "runtime_path").value_or("");
  m.runtime_init_s = number(o, "runtime_init_s");
  m.runtime_ready_s = number(o, "runtime_ready_s");
  m.init_by_fork = flag(o, "init_by_fork");
  m.light = text(o, "events").value_or("full") == "light";
  return m;
}

ThreadAffinity thread_affinity(const json& t) {
  ThreadAffinity a;
  if (auto i = integer(t, "index"); i && *i >= 0 && *i <= int64_t(UINT32_MAX))
    a.index = uint32_t(*i);
  a.cpus = text(t, "cpus");
  a.created_s = number(t, "created_s");
  a.cpu_s = number(t, "cpu_s");
  a.runqueue_s = number(t, "runqueue_s");
  return a;
}

ProcessAffinity process_affinity(const json& p, int rank, const std::string& host) {
  ProcessAffinity a{
      rank, text(p, "host").value_or(host), int(integer(p, "cpus_online").value_or(0)), {}};
  const json& threads = at(p, "threads");
  if (threads.is_array())
    for (const json& t : threads)
      if (t.is_object()) a.threads.push_back(thread_affinity(t));
  return a;
}

// The ranks' entries when the MPI unification gathered them (each with its rank), else the
// process's own.
void affinity(const json& o, const std::string& host, Meta& m) {
  if (!o.is_object()) return;
  const json& ranks = at(o, "ranks");
  if (ranks.is_array() && !ranks.empty()) {
    m.affinity_per_rank = true;
    for (const json& r : ranks)
      if (auto rank = integer(r, "rank"); rank && *rank >= 0 && *rank <= INT32_MAX)
        m.affinity.push_back(process_affinity(r, int(*rank), host));
  } else {
    m.affinity.push_back(process_affinity(o, -1, host));
  }
}

CounterMeta counters(const json& o) {
  CounterMeta c;
  const json& measured = at(o, "measured");
  if (measured.is_array())
    for (const json& x : measured) c.measured.push_back(text(x, "name").value_or(""));
  c.cost_per_read_ns = number(o, "cost_per_read_ns").value_or(0);
  std::string list = text(o, "regions").value_or("");
  for (size_t i = 0; i <= list.size();) {
    size_t end = std::min(list.find(',', i), list.size());
    c.region_kinds.insert(list.substr(i, end - i));
    i = end + 1;
  }
  return c;
}

std::vector<ThrottledPath> throttled(const json& list) {
  std::vector<ThrottledPath> out;
  if (!list.is_array()) return out;
  for (const json& x : list) {
    auto thread = integer(x, "thread"), node = integer(x, "node");
    if (thread && node) out.push_back({integer(x, "rank").value_or(-1), *thread, *node});
  }
  return out;
}

std::vector<OpenAtEnd> open_at_end(const json& list) {
  std::vector<OpenAtEnd> out;
  if (!list.is_array()) return out;
  for (const json& x : list) {
    auto thread = integer(x, "thread"), node = integer(x, "node");
    if (thread && node)
      out.push_back(
          {integer(x, "rank").value_or(-1), *thread, *node, number(x, "open_s").value_or(0)});
  }
  return out;
}

std::optional<MessageModel> message_model(const json& o) {
  if (!o.is_object()) return std::nullopt;
  return MessageModel{number(o, "latency_ns").value_or(0), number(o, "ns_per_byte").value_or(0),
                      text(o, "source").value_or("?")};
}

std::optional<SamplingMeta> sampling(const json& o) {
  if (!o.is_object()) return std::nullopt;
  SamplingMeta s;
  s.on = at(o, "on").is_boolean() && at(o, "on").get<bool>();
  s.off_reason = text(o, "off_reason").value_or("");
  s.period_s = number(o, "period_ns").value_or(0) * 1e-9;
  s.samples = integer(o, "samples").value_or(0);
  s.in_tool = integer(o, "in_tool").value_or(0);
  s.dropped = integer(o, "dropped").value_or(0);
  s.truncated = integer(o, "truncated").value_or(0);
  s.threads = integer(o, "threads").value_or(0);
  return s;
}

TunedRegion tuned_region(const json& o) {
  TunedRegion r;
  r.code = uint64_t(integer(o, "code").value_or(0));
  r.module = text(o, "module").value_or("");
  r.offset = uint64_t(integer(o, "offset").value_or(0));
  r.region = integer(o, "region").value_or(-1);
  if (r.region > 0xfffffffe) r.region = -1;
  r.state = text(o, "state").value_or("");
  r.reason = text(o, "reason").value_or("");
  r.runtime_loops = text(o, "runtime_loops").value_or("unknown");
  r.program_schedule = text(o, "program_schedule").value_or("");
  r.chosen = text(o, "chosen").value_or("");
  r.executions = integer(o, "executions").value_or(0);
  r.fixed_from = integer(o, "fixed_from").value_or(0);
  r.iterations = integer(o, "iterations").value_or(0);
  r.threads = integer(o, "threads").value_or(0);
  r.gain = number(o, "gain").value_or(0);
  const json& trials = at(o, "trials");
  if (trials.is_array())
    for (const json& t : trials)
      r.trials.push_back(
          TunedTrial{text(t, "schedule").value_or("?"), flag(t, "program"),
                     integer(t, "runs").value_or(0), number(t, "median_s").value_or(0),
                     number(t, "min_s").value_or(0), number(t, "max_s").value_or(0),
                     number(t, "imbalance_s").value_or(0), number(t, "busy_s").value_or(0)});
  return r;
}

std::optional<OnlineTuning> online_tuning(const json& o) {
  if (!o.is_object()) return std::nullopt;
  OnlineTuning t;
  t.on = flag(o, "on");
  t.off_reason = text(o, "off_reason").value_or("");
  t.repeat = integer(o, "repeat").value_or(0);
  t.min_gain = number(o, "min_gain").value_or(0);
  const json& regions = at(o, "regions");
  if (regions.is_array())
    for (const json& r : regions)
      if (r.is_object()) t.regions.push_back(tuned_region(r));
  return t;
}

}  // namespace

std::string Meta::command_line() const {
  std::string out;
  for (const std::string& word : command) out += (out.empty() ? "" : " ") + word;
  return out;
}

Meta read_meta(const json& meta) {
  Meta m;
  const json& command = at(meta, "command");
  if (command.is_array())
    for (const json& word : command)
      if (word.is_string()) m.command.push_back(word.get<std::string>());
  m.cwd = text(meta, "cwd").value_or("");
  m.host = text(meta, "host").value_or("");
  m.start_time = text(meta, "start_time").value_or("");
  m.tool_version = text(meta, "tool_version").value_or("");
  m.pid = integer(meta, "pid").value_or(0);
  m.ranks = integer(meta, "ranks");
  m.threads = integer(meta, "threads");
  m.mpi = at(meta, "mpi").is_object();
  m.clock_source = text(at(meta, "clock"), "source").value_or("?");
  const std::optional<double> duration = number(at(meta, "clock"), "duration_s");
  m.duration_s = duration.value_or(0);
  m.has_duration = duration.has_value();
  m.program_start_estimated = text(meta, "program_start").value_or("") == "estimated";
  m.program_start_estimated_s = number(meta, "program_start_estimated_s").value_or(0);
  m.openmp = openmp(at(meta, "openmp"));
  affinity(at(meta, "affinity"), m.host, m);
  m.counters = counters(at(meta, "counters"));
  m.throttled_count = integer(at(meta, "throttle"), "count").value_or(0);
  m.throttle_calls = integer(at(meta, "throttle"), "calls").value_or(0);
  m.throttled = throttled(at(at(meta, "throttle"), "throttled"));
  m.message_model = message_model(at(at(meta, "mpi"), "model"));
  m.finished_by = text(meta, "finished_by").value_or("");
  m.open_at_end = open_at_end(at(at(meta, "open_at_end"), "open"));
  m.open_at_end_count = integer(at(meta, "open_at_end"), "count").value_or(0);
  m.snapshot_interval_s = number(at(meta, "snapshot"), "interval_s").value_or(0);
  m.sampling = sampling(at(meta, "sampling"));
  m.tuning = online_tuning(at(meta, "online_tuning"));
  return m;
}

}  // namespace scalea::drg
