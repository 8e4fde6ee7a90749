// The study directory: plan, launcher templates, study.json (docs/study.md).
#include "study.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "output/errors.hpp"

namespace scalea::cli::study {

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Failed: return "failed";
    case Status::Pending: break;
  }
  return "pending";
}

std::string Config::id() const {
  return "t" + std::to_string(threads) + "-r" + std::to_string(ranks);
}

std::string Run::id() const { return config.id() + "-rep" + std::to_string(repetition); }

std::vector<Config> Study::configs() const {
  std::vector<Config> out{{1, 1}};
  for (const Run& r : runs)
    if (std::find(out.begin(), out.end(), r.config) == out.end()) out.push_back(r.config);
  std::sort(out.begin() + 1, out.end());
  return out;
}

Run* Study::find(const Config& c, int repetition) {
  for (Run& r : runs)
    if (r.config == c && r.repetition == repetition) return &r;
  return nullptr;
}

std::vector<int> parse_list(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  size_t start = 0;
  if (text.empty())
    throw UserError(flag + " needs a comma-separated list of positive integers, e.g. 1,2,4,8");
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    bool digits =
        !item.empty() && item.size() <= 6 &&
        std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    int v = digits ? std::atoi(item.c_str()) : 0;
    if (v <= 0)
      throw UserError(flag + " '" + text + "': '" + item +
                      "' is not a positive integer (expected a list like 1,2,4,8)");
    out.push_back(v);
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Run> plan_runs(const std::vector<int>& threads, const std::vector<int>& ranks,
                           int repeat) {
  std::vector<Config> configs{{1, 1}};
  for (int r : ranks)
    for (int t : threads)
      if (!(t == 1 && r == 1)) configs.push_back({t, r});
  std::sort(configs.begin() + 1, configs.end());
  std::vector<Run> runs;
  for (int rep = 1; rep <= repeat; ++rep)
    for (const Config& c : configs) {
      Run r;
      r.config = c;
      r.repetition = rep;
      runs.push_back(r);
    }
  return runs;
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? int(online) : 1;
}

std::string oversubscription_note(const std::vector<Config>& configs, int cpus, bool launcher) {
  std::set<Config> over;
  for (const Config& c : configs)
    if (c.p() > cpus) over.insert(c);
  if (over.empty()) return {};
  std::string which;
  size_t k = 0;
  for (const Config& c : over) {
    if (k > 0) which += k + 1 == over.size() ? " and " : ", ";
    ++k;
    which += "p = " + std::to_string(c.p());
    if (launcher)
      which += " (" + std::to_string(c.threads) + " thread(s) x " + std::to_string(c.ranks) +
               " rank(s))";
  }
  bool one = over.size() == 1;
  std::string text =
      "scalea study: " + which + (one ? " has" : " have") + " more threads than the " +
      std::to_string(cpus) + " CPU(s) this study may use: " + (one ? "its" : "their") +
      " threads will share CPUs and " + (one ? "its" : "their") +
      " times will include waiting for a CPU (scalea report marks " + (one ? "it" : "them") +
      " with *); the largest p that fits is " + std::to_string(cpus);
  if (launcher) text += " (if the launcher places ranks on other hosts, this does not apply)";
  return text;
}

namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (quote) {
      if (ch == quote) quote = 0;
      else if (ch == '\\' && quote == '"' && i + 1 < s.size()) cur += s[++i];
      else cur += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      in_word = true;
    } else if (ch == '\\') {
      if (i + 1 >= s.size()) throw UserError("launcher template '" + s + "' ends with a backslash");
      cur += s[++i];
      in_word = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += ch;
      in_word = true;
    }
  }
  if (quote) throw UserError("launcher template '" + s + "' has an unterminated quote");
  if (in_word) words.push_back(cur);
  return words;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
}

std::string basename_of(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

}  // namespace

std::vector<std::string> expand_launcher(const std::string& tmpl, const Config& c) {
  std::vector<std::string> words = split_words(tmpl);
  if (words.empty())
    throw UserError("launcher template is empty (expected e.g. 'mpirun -np {ranks}')");
  for (std::string& w : words) {
    replace_all(w, "{ranks}", std::to_string(c.ranks));
    replace_all(w, "{threads}", std::to_string(c.threads));
    replace_all(w, "{p}", std::to_string(c.p()));
    size_t open = w.find('{');
    if (open != std::string::npos && w.find('}', open) != std::string::npos)
      throw UserError("launcher template '" + tmpl + "': unknown placeholder in '" + w +
                      "' (known: {ranks}, {threads}, {p})");
  }
  return words;
}

std::vector<std::string> launcher_argv(const std::string& tmpl, const Config& c, bool as_root) {
  std::vector<std::string> argv = expand_launcher(tmpl, c);
  std::string prog = basename_of(argv[0]);
  if (as_root && (prog == "mpirun" || prog == "mpiexec" || prog == "orterun")) {
    size_t at = 1;
    for (const char* flag : {"--allow-run-as-root", "--oversubscribe"})
      if (std::find(argv.begin(), argv.end(), flag) == argv.end())
        argv.insert(argv.begin() + long(at++), flag);
  }
  return argv;
}

nlohmann::ordered_json to_json(const Study& s) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["tool_version"] = s.tool_version;
  j["created"] = s.created;
  j["updated"] = s.updated;
  j["host"] = s.host;
  j["command"] = s.command;
  j["cwd"] = s.cwd;
  j["threads"] = s.threads;
  j["ranks"] = s.ranks;
  j["repeat"] = s.repeat;
  j["launcher"] =
      s.use_launcher ? nlohmann::ordered_json(s.launcher) : nlohmann::ordered_json(nullptr);
  j["timeout_s"] =
      s.timeout_s > 0 ? nlohmann::ordered_json(s.timeout_s) : nlohmann::ordered_json(nullptr);
  j["reference"] = Config{1, 1}.id();
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const Run& r : s.runs) {
    nlohmann::ordered_json e;
    e["id"] = r.id();
    e["config"] = r.config.id();
    e["threads"] = r.config.threads;
    e["ranks"] = r.config.ranks;
    e["p"] = r.config.p();
    e["repetition"] = r.repetition;
    e["reference"] = r.reference();
    e["status"] = status_name(r.status);
    e["exit_code"] =
        r.exit_code ? nlohmann::ordered_json(*r.exit_code) : nlohmann::ordered_json(nullptr);
    e["duration_s"] = r.duration_s;
    e["started"] =
        r.started.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.started);
    e["experiment"] = r.experiment();
    e["stdout"] = r.stdout_log();
    e["stderr"] = r.stderr_log();
    e["argv"] = r.argv;
    if (!r.error.empty()) e["error"] = r.error;
    if (!r.stderr_tail.empty()) e["stderr_tail"] = r.stderr_tail;
    runs.push_back(e);
  }
  j["runs"] = runs;
  return j;
}

namespace {

template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw UserError(where + ": missing field '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw UserError(where + ": field '" + key + "' has the wrong type");
  }
}

}  // namespace

Study from_json(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    throw UserError(name + " is not a scalea study (format is not '" + kFormat + "')");
  int version = field<int>(j, "version", name);
  if (version != kVersion)
    throw UserError(name + " has study format version " + std::to_string(version) +
                    "; this scalea reads version " + std::to_string(kVersion));
  Study s;
  s.command = field<std::vector<std::string>>(j, "command", name);
  if (s.command.empty()) throw UserError(name + ": the command is empty");
  s.cwd = j.value("cwd", "");
  s.threads = field<std::vector<int>>(j, "threads", name);
  s.ranks = field<std::vector<int>>(j, "ranks", name);
  s.repeat = field<int>(j, "repeat", name);
  if (j.contains("launcher") && j["launcher"].is_string()) {
    s.use_launcher = true;
    s.launcher = j["launcher"].get<std::string>();
  }
  if (j.contains("timeout_s") && j["timeout_s"].is_number())
    s.timeout_s = j["timeout_s"].get<double>();
  s.created = j.value("created", "");
  s.updated = j.value("updated", "");
  s.host = j.value("host", "");
  s.tool_version = j.value("tool_version", "");
  if (!j.contains("runs") || !j["runs"].is_array()) throw UserError(name + ": missing list 'runs'");
  for (const auto& e : j["runs"]) {
    std::string where = name + ": run " + std::to_string(s.runs.size() + 1);
    if (!e.is_object()) throw UserError(where + " is not an object");
    Run r;
    r.config.threads = field<int>(e, "threads", where);
    r.config.ranks = field<int>(e, "ranks", where);
    r.repetition = field<int>(e, "repetition", where);
    if (r.config.threads <= 0 || r.config.ranks <= 0 || r.repetition <= 0)
      throw UserError(where + ": threads, ranks and repetition must be positive");
    std::string st = field<std::string>(e, "status", where);
    r.status = st == "ok" ? Status::Ok : st == "failed" ? Status::Failed : Status::Pending;
    if (e.contains("exit_code") && e["exit_code"].is_number_integer())
      r.exit_code = e["exit_code"].get<int>();
    r.duration_s = e.value("duration_s", 0.0);
    if (e.contains("started") && e["started"].is_string())
      r.started = e["started"].get<std::string>();
    r.error = e.value("error", "");
    if (e.contains("stderr_tail") && e["stderr_tail"].is_array())
      for (const auto& l : e["stderr_tail"])
        if (l.is_string()) r.stderr_tail.push_back(l.get<std::string>());
    if (e.contains("argv") && e["argv"].is_array())
      for (const auto& a : e["argv"])
        if (a.is_string()) r.argv.push_back(a.get<std::string>());
    s.runs.push_back(std::move(r));
  }
  return s;
}

bool is_study(const std::string& dir) {
  struct stat st;
  return stat((dir + "/study.json").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Study load_study(const std::string& dir) {
  std::string name = dir + "/study.json";
  std::ifstream in(name);
  if (!in) throw UserError("cannot read " + name + ": " + std::strerror(errno));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(name + " is not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
  return from_json(j, name);
}

void save_study(const std::string& dir, const Study& s) {
  std::string name = dir + "/study.json";
  std::string tmp = dir + "/.study.json.tmp";
  // The command may hold bytes that are not UTF-8: they become U+FFFD rather than an exception.
  std::string text =
      to_json(s).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UserError("cannot write " + tmp + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      throw UserError("cannot write " + tmp + ": " + std::strerror(err));
    }
    off += size_t(n);
  }
  fsync(fd);
  close(fd);
  if (rename(tmp.c_str(), name.c_str()) != 0)
    throw UserError("cannot replace " + name + ": " + std::strerror(errno));
}

std::string now_iso8601() {
  time_t t = time(nullptr);
  struct tm tm;
  localtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return buf;
}

}  // namespace scalea::cli::study
