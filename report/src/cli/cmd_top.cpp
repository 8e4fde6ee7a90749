// scalea top: the live view of a run's snapshots (SCALEA_SNAPSHOT, docs/online.md). Full screen
// on a terminal, redrawn in place as snapshots arrive, q quits (like top); frames one after the
// other otherwise, or with -b (like top -b). It only reads files: quitting, or the viewer dying,
// never affects the program.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "analysis/analyze.hpp"
#include "formats/exports.hpp"
#include "online/online.hpp"
#include "online/over_time.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/format.hpp"
#include "formats/classes.hpp"
#include "output/text.hpp"

namespace scalea::cli {
namespace {

using overheads::kClassCount;
using overheads::RegionOverheads;

struct TopOptions {
  std::string dir, reference, delay = "0.25", wait = "10";
  int p = 0, iterations = 0, rows = 0;
  bool batch = false, force = false;
  std::vector<std::string> decomposition;  // --decomposition
};

volatile sig_atomic_t g_quit = 0, g_resized = 0;

// The terminal: full screen (alternate screen, no echo, keys without Enter) on a tty, plain lines
// otherwise. Restored when the view ends, however it ends.
class Screen {
 public:
  explicit Screen(bool full) : full_(full) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = [](int sig) {
      if (sig == SIGWINCH) g_resized = 1;
      else g_quit = 1;
    };
    sigemptyset(&sa.sa_mask);  // no SA_RESTART: poll() returns at once
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
    if (!full_) return;
    sigaction(SIGWINCH, &sa, nullptr);
    keys_ = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_) == 0;
    if (keys_) {
      termios raw = saved_;
      raw.c_lflag &= tcflag_t(~(ICANON | ECHO));
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
    std::fputs("\x1b[?1049h\x1b[?25l", stdout);  // alternate screen, cursor hidden
    std::fflush(stdout);
  }
  ~Screen() {
    if (!full_) return;
    std::fputs("\x1b[?25h\x1b[?1049l", stdout);
    std::fflush(stdout);
    if (keys_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  bool full() const { return full_; }
  int columns() const {
    winsize ws{};
    if (full_ && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    const char* c = std::getenv("COLUMNS");
    return c && std::atoi(c) > 40 ? std::atoi(c) : 120;
  }
  int rows() const {
    winsize ws{};
    if (full_ && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
    return 0;  // no limit
  }
  void draw(const std::vector<std::string>& lines) {
    if (!full_) {
      for (const std::string& l : lines) std::printf("%s\n", l.c_str());
      std::printf("\n");
      std::fflush(stdout);
      return;
    }
    std::string out = "\x1b[H";
    size_t width = size_t(columns()), height = size_t(std::max(1, rows()));
    for (size_t i = 0; i < lines.size() && i < height; ++i) {
      out += lines[i].substr(0, width);
      out += "\x1b[K";
      if (i + 1 < std::min(lines.size(), height)) out += "\r\n";
    }
    out += "\x1b[J";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  // Waits up to `ms` for a key; returns it, or -1.
  int key(int ms) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (!keys_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return -1;
    }
    if (poll(&p, 1, ms) <= 0) return -1;
    unsigned char c = 0;
    return read(STDIN_FILENO, &c, 1) == 1 ? c : -1;
  }

 private:
  bool full_, keys_ = false;
  termios saved_{};
};

// The program's state as the files show it.
struct Program {
  std::string source;  // the directory read
  bool live = false, finished = false, dead = false;
  double stale_s = 0;  // s since the newest point, when live
  int ranks_declared = 1, ranks_present = 0;
  std::string pid_host, command;
  int threads = 0;
  double interval = 0;
};

struct View {
  Program prog;
  std::unique_ptr<online::Window> last, since;
  double at = 0;  // s since the start of the newest point
  std::string reference;
  std::string error;  // a snapshot that could not be read
};

std::string thousands(double v) {
  std::string s = fmt::format("{:.0f}", v);
  for (int i = int(s.size()) - 3; i > 0 && s[size_t(i) - 1] != '-'; i -= 3)
    s.insert(size_t(i), ",");
  return s;
}

std::string cut(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  return n > 3 ? s.substr(0, n - 3) + "..." : s.substr(0, n);
}

std::string classes_row(const std::string& title, const RegionOverheads& r, size_t title_width) {
  std::string l = fmt::format("{:<{}} {:>9.3f} {:>9.3f} {:>6}", title, title_width, r.t_p, r.t_o,
                              r.t_p > 0 ? fmt::format("{:.1f}%", 100 * r.t_o / r.t_p) : "-");
  for (double v : r.classes) l += fmt::format(" {:>8.3f}", std::fabs(v) < 5e-4 ? 0.0 : v);
  return l;
}

std::string classes_head(const std::string& title, size_t title_width) {
  std::string l =
      fmt::format("{:<{}} {:>9} {:>9} {:>6}", title, title_width, "T_p s", "T_o s", "T_o%");
  for (auto c : kClassShort) l += fmt::format(" {:>8}", c);
  return l;
}

// One line: the busy share of each PE (or rank) in the window, and their imbalance.
std::string busy_line(const std::string& title, const std::vector<online::PeLoad>& loads,
                      bool by_rank, bool rank_names, size_t width) {
  std::string l = title;
  std::vector<double> busy;
  for (const online::PeLoad& pe : loads) busy.push_back(pe.busy);
  std::string tail = fmt::format("   imbalance {:.2f} (max/mean busy over {} {})",
                                 online::imbalance(busy), loads.size(), by_rank ? "ranks" : "PEs");
  for (const online::PeLoad& pe : loads) {
    std::string name = by_rank      ? fmt::format("r{}", pe.rank)
                       : rank_names ? fmt::format("r{}.t{}", pe.rank, pe.thread)
                                    : fmt::format("t{}", pe.thread);
    std::string item =
        fmt::format(" {} {:.0f}%", name, pe.time > 0 ? 100 * pe.busy / pe.time : 0.0);
    if (l.size() + item.size() + tail.size() > width) {
      l += " ...";
      break;
    }
    l += item;
  }
  return l + tail;
}

// The busy share of each PE (and of each rank) in the window, and their imbalance.
void loads(std::vector<std::string>& out, const online::Window& w, size_t width) {
  std::vector<online::PeLoad> pes = online::pe_loads(w.e);
  if (pes.empty()) return;
  out.push_back(busy_line("busy, last window:", pes, false, w.ranks > 1, width));
  std::vector<online::PeLoad> ranks = online::rank_loads(pes);
  if (ranks.size() > 1) out.push_back(busy_line("ranks, last window:", ranks, true, true, width));
}

void region_list(std::vector<std::string>& out, const std::string& title, const online::Window& w,
                 size_t rows, size_t width) {
  std::vector<uint32_t> top = online::top_regions(w.a, rows);
  size_t label_width = width >= 120 ? width - 84 : std::max<size_t>(20, width - 48);
  bool wide = width >= 120;
  if (wide) out.push_back(classes_head(title, label_width) + fmt::format(" {:>6}", "imb"));
  else
    out.push_back(fmt::format("{:<{}} {:>9} {:>9} {:>6} {:>8} {:>6}", title, label_width, "T_p s",
                              "T_o s", "T_o%", "main", "imb"));
  if (top.empty()) out.push_back("  (no region with overhead)");
  for (uint32_t n : top) {
    const RegionOverheads& r = w.a.regions[n];
    std::string label = "  " + cut(node_label(*w.t, n), label_width - 2);
    if (wide) {
      out.push_back(classes_row(label, r, label_width) + fmt::format(" {:>6.2f}", r.imbalance));
    } else {
      int d = dominant_class(r);
      out.push_back(fmt::format("{:<{}} {:>9.3f} {:>9.3f} {:>6} {:>8} {:>6.2f}", label, label_width,
                                r.t_p, r.t_o,
                                r.t_p > 0 ? fmt::format("{:.1f}%", 100 * r.t_o / r.t_p) : "-",
                                d < 0 ? "-" : std::string(kClassShort[size_t(d)]), r.imbalance));
    }
  }
}

std::vector<std::string> frame(const View& v, const TopOptions& o, size_t width, int height) {
  std::vector<std::string> out;
  const Program& p = v.prog;
  std::string state = p.finished ? "finished"
                      : p.dead ? "ended without its last snapshot (killed?): its last one is shown"
                      : p.live && p.stale_s > 3 * std::max(1.0, p.interval)
                          ? fmt::format("running, no snapshot for {:.0f} s", p.stale_s)
                          : "running";
  out.push_back(cut(fmt::format("scalea top  {}  {}{}", o.dir, state,
                                p.pid_host.empty() ? "" : "  (" + p.pid_host + ")"),
                    width - 10) +
                "  q: quit");
  if (!v.since) {
    out.push_back(v.error.empty()
                      ? fmt::format("waiting for snapshots in {}.live (run the program with "
                                    "SCALEA_SNAPSHOT=1s or scalea run --snapshot 1s)",
                                    o.dir)
                      : v.error);
    return out;
  }
  const online::Window& last = *v.last;
  const online::Window& since = *v.since;
  const RegionOverheads& root = since.a.regions[0];
  double dt = last.t1 - last.t0;
  out.push_back(cut(fmt::format("{}  |  {} rank(s), {} thread(s), p = {}, snapshots every {:g} s{}",
                                p.command, p.ranks_present, p.threads, since.a.p, p.interval,
                                p.ranks_present < p.ranks_declared
                                    ? fmt::format(" (waiting for {} more rank(s))",
                                                  p.ranks_declared - p.ranks_present)
                                    : ""),
                    width));
  out.push_back(
      fmt::format("at {:.2f} s: {} regions entered/s in the last {:.2f} s ({} since the "
                  "start); speedup estimate {:.2f} (last window {:.2f})",
                  v.at, thousands(dt > 0 ? double(last.entered) / dt : 0), dt,
                  thousands(double(since.entered)), root.speedup, last.a.regions[0].speedup));
  out.push_back(v.reference.empty()
                    ? "T_s estimated as the useful work (no reference: additional computation is 0)"
                    : "T_s: " + v.reference + " scaled to each window's visits");
  if (!v.error.empty()) out.push_back(v.error);
  out.push_back("");
  out.push_back(classes_head("program", 22));
  out.push_back(classes_row(fmt::format("last {:.1f} s", dt), last.a.regions[0], 22));
  out.push_back(classes_row(fmt::format("since start ({:.1f} s)", since.t1), root, 22));
  loads(out, last, width);
  out.push_back("");
  // The rest of the screen for the two lists.
  size_t rows = o.rows > 0 ? size_t(o.rows) : 5;
  if (height > 0) {
    int left = height - int(out.size()) - 4;
    rows = size_t(std::max(1, left / 2));
    if (o.rows > 0) rows = std::min(rows, size_t(o.rows));
  }
  region_list(out, fmt::format("top regions by T_o, last {:.1f} s", dt), last, rows, width);
  out.push_back("");
  region_list(out, "top regions by T_o, since the start", since, rows, width);
  return out;
}

// Where the snapshots are now: the running program's live directory first, else the finished
// experiment's.
std::optional<drg::SnapshotDir> source(const std::string& dir) {
  std::string live = dir;
  while (live.size() > 1 && live.back() == '/') live.pop_back();
  if (std::filesystem::is_directory(live + ".live")) return drg::find_snapshots(live + ".live");
  return drg::find_snapshots(dir);
}

bool process_gone(const drg::SnapshotPart& part) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const drg::Meta m = drg::read_meta(part.meta);
  if (m.host != host) return false;  // cannot tell
  return m.pid > 0 && kill(pid_t(m.pid), 0) != 0 && errno == ESRCH;
}

class Top {
 public:
  explicit Top(const TopOptions& o) : o_(o) {
    c_.p = o.p;
    if (!o.reference.empty()) {
      // Whole: scaled to each window in memory; a reference (p = 1) is one thread in one file.
      ref_ = drg::load_experiment(o.reference);
      ref_t_.emplace(*ref_);
      c_.reference = &*ref_t_;
      view_.reference = o.reference;
    }
  }

  // Reads what is new. True when the view changed.
  bool update() {
    std::optional<drg::SnapshotDir> s = source(o_.dir);
    if (!s) return false;
    std::vector<online::Point> pts = online::complete_points(*s);
    Program& p = view_.prog;
    bool changed = p.source != s->path || p.live != s->live;
    p.source = s->path;
    p.live = s->live;
    p.ranks_present = int(s->ranks.size());
    if (pts.empty()) return changed;
    std::string key = pts.back().files.begin()->second;  // the newest file
    if (key != shown_) {
      try {
        double start = online::job_start(parts_, pts.front());
        // The last window as the over-time report would end it (the ranks' snapshots taken at
        // about the same moment, the end joined to the window before when it comes soon after).
        shown_ = key;
        newest_wall_ = parts_.times(key).wall_s;
        std::vector<const online::Point*> ends =
            online::window_ends(parts_, pts, start, parts_.times(key).interval_s);
        if (ends.empty()) return changed;
        const online::Point& newest = *ends.back();
        const online::Point* prev = ends.size() > 1 ? ends[ends.size() - 2] : nullptr;
        if (c_.reference && !checked_) {
          check_reference(online::window(parts_, nullptr, newest, start, {})->e, *ref_, o_.force,
                          decomposition_args(o_.decomposition));
          checked_ = true;
        }
        view_.last = online::window(parts_, prev, newest, start, c_);
        view_.since = online::window(parts_, nullptr, newest, start, c_);
        view_.at = view_.since->t1;
        const drg::SnapshotPart& part = parts_.get(newest.files.begin()->second);
        const drg::Meta m = drg::read_meta(part.meta);
        p.ranks_declared = int(m.ranks.value_or(1));
        p.interval = m.snapshot_interval_s;
        p.pid_host = fmt::format("pid {} on {}", m.pid, m.host);
        p.command = m.command_line();
        p.threads = int(view_.since->e.threads.size());
        std::set<std::string> keep;
        for (const online::Point* q :
             {prev, &newest, static_cast<const online::Point*>(&pts.front())})
          if (q)
            for (const auto& f : q->files) keep.insert(f.second);
        parts_.keep_only(keep);
        view_.error.clear();
        changed = true;
      } catch (const drg::LoadError& e) {
        // A snapshot the viewer cannot read (the disk, a foreign file): said, the last view kept.
        view_.error = std::string("cannot read a snapshot: ") + e.what();
        shown_ = key;
        changed = true;
      }
    }
    bool finished = pts.back().final;
    bool dead = false;
    if (!finished && s->live && !shown_.empty()) {
      double now =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      p.stale_s = now - newest_wall_;
      // Quiet for long: has the program gone?
      if (p.stale_s > 2 * std::max(0.5, p.interval)) {
        try {
          dead = process_gone(parts_.get(key));
        } catch (const drg::LoadError&) {}
      }
    }
    changed = changed || finished != p.finished || dead != p.dead;
    p.finished = finished;
    p.dead = dead;
    return changed;
  }

  const View& view() const { return view_; }
  bool over() const { return view_.prog.finished || view_.prog.dead; }

 private:
  const TopOptions& o_;
  online::Classifier c_;
  online::Parts parts_;
  std::optional<drg::Experiment> ref_;
  std::optional<drg::MergedTree> ref_t_;
  bool checked_ = false;
  View view_;
  std::string shown_;
  double newest_wall_ = 0;
};

namespace fs = std::filesystem;

// How long the view waits at least for a program seen starting to write its first snapshots
// (an MPI job's ranks may take many seconds to start).
constexpr double kStartingWaitS = 60;

// The word `w` of a process's command line or environment names `want` (an absolute path),
// relative to the process's working directory `cwd`.
bool names_dir(const std::string& w, const fs::path& cwd, const fs::path& want) {
  if (w.empty()) return false;
  std::error_code ec;
  fs::path p = fs::path(w).is_absolute() ? fs::path(w) : cwd / w;
  return fs::weakly_canonical(p, ec) == want;
}

// NUL-separated words of a /proc file.
std::vector<std::string> proc_words(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path, std::ios::binary);
  for (std::string w; std::getline(in, w, '\0');) out.push_back(w);
  return out;
}

// A process of this machine that will write `dir`: a program whose SCALEA_OUTPUT names it (scalea
// run sets it), or a command line with scalea that gives it as -o DIR (scalea run, or a launcher
// that starts scalea run). Its pid and command, or 0.
std::pair<long, std::string> writer_of(const std::string& dir) {
  std::error_code ec;
  fs::path want = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || std::stol(pid) == getpid())
      continue;
    fs::path cwd = fs::read_symlink(e.path() / "cwd", ec);
    if (ec) continue;
    std::vector<std::string> argv = proc_words(e.path() / "cmdline");
    bool scalea = false;
    for (const std::string& w : argv) scalea = scalea || fs::path(w).filename() == "scalea";
    for (size_t i = 1; scalea && i < argv.size(); ++i) {
      bool after_o = argv[i - 1] == "-o" || argv[i - 1] == "--output";
      if ((after_o && names_dir(argv[i], cwd, want)) ||
          (argv[i].rfind("--output=", 0) == 0 && names_dir(argv[i].substr(9), cwd, want)))
        return {std::stol(pid), argv[0]};
    }
    for (const std::string& v : proc_words(e.path() / "environ"))
      if (v.rfind("SCALEA_OUTPUT=", 0) == 0 && names_dir(v.substr(14), cwd, want))
        return {std::stol(pid), argv.empty() ? "" : argv[0]};
  }
  return {0, ""};
}

// A name beside `dir` that is an experiment or a running program's snapshots, and near its name
// (a typo): "md.p4" for "md.p5".
std::string near_experiment(const std::string& dir) {
  fs::path p(dir);
  fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    std::string n = e.path().filename().string();
    if (fs::exists(e.path() / format::kMetaFile, ec)) names.push_back(n);
    else if (n.size() > 5 && n.compare(n.size() - 5, 5, ".live") == 0)
      names.push_back(n.substr(0, n.size() - 5));
  }
  std::string near = closest_word(p.filename().string(), names);
  return near.empty() ? "" : (p.parent_path() / near).string();
}

// What there is to show at `dir`, said at once when it is nothing the view can follow: a
// finished experiment without snapshots, a directory that is no experiment, a name where nothing
// is but a near one is (a typo). The view may start before the program (`scalea top DIR & scalea
// run --snapshot 1s -o DIR ...`): where nothing is yet, it waits up to `wait_s` for DIR.live, and
// at least a minute for a program seen starting (a scalea run -o DIR on this machine), saying so.
void check_source(const std::string& given, double wait_s) {
  std::string dir = given;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::string live = dir + ".live";
  const std::string watch = "to watch a run, start it with scalea run --snapshot 1s -o " + dir;
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto seen = [&] { return fs::exists(live) || fs::exists(dir); };
  auto after = [&](double s) { return now() + std::chrono::milliseconds(long(s * 1000)); };
  if (!seen()) {
    std::string near = near_experiment(dir);
    if (!near.empty()) throw UserError("no experiment " + dir + " (did you mean " + near + "?)");
  }
  auto until = after(wait_s);
  std::pair<long, std::string> writer{0, ""};
  bool said = false;
  while (!seen()) {
    if (!writer.first && (writer = writer_of(dir)).first) {
      wait_s = std::max(wait_s, kStartingWaitS);
      until = after(wait_s);
      std::fprintf(stderr,
                   "scalea top: waiting for snapshots in %s: up to %g s for %s (pid %ld), which "
                   "is starting, to write them\n",
                   live.c_str(), wait_s, writer.second.c_str(), writer.first);
      said = true;
    } else if (!said && wait_s > 0) {
      std::fprintf(stderr,
                   "scalea top: waiting for snapshots in %s: nothing is at %s yet; up to %g s for "
                   "a program to start (%s)\n",
                   live.c_str(), dir.c_str(), wait_s, watch.c_str());
      said = true;
    }
    bool gone = writer.first && kill(pid_t(writer.first), 0) != 0;
    if (now() >= until || gone) {
      if (seen()) break;
      if (writer.first)
        throw UserError("no experiment " + dir + ": " + writer.second + " (pid " +
                        std::to_string(writer.first) + ") " +
                        (gone ? "ended" : fmt::format("ran {:g} s", wait_s)) + " without writing " +
                        live + " (" + watch + ")");
      throw UserError("no experiment " + dir + ", and no program started writing it" +
                      (wait_s > 0 ? fmt::format(" within {:g} s", wait_s) : std::string()) + " (" +
                      watch + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (fs::is_directory(live) || drg::find_snapshots(dir)) return;
  if (!fs::is_directory(dir)) throw UserError(dir + " is not an experiment directory");
  if (!fs::exists(fs::path(dir) / format::kMetaFile))
    throw UserError(dir + " is not an experiment (no meta.json, no snapshots)");
  throw UserError(dir + " is a finished experiment without snapshots: nothing to watch; read it " +
                  "with scalea report " + dir + " (" + watch + ")");
}

void run_top(const TopOptions& o) {
  double delay = 0, wait = 0;
  if (!parse_duration(o.delay, delay)) throw UserError("--delay " + o.delay + ": not a duration");
  if (o.wait != "0" && !parse_duration(o.wait, wait))
    throw UserError("--wait " + o.wait + ": not a duration (0: do not wait)");
  check_source(o.dir, wait);
  Top top(o);
  Screen screen(!o.batch && isatty(STDOUT_FILENO));
  int frames = 0;
  bool dirty = true;
  for (;;) {
    if (g_quit) break;
    bool changed = top.update();
    if (changed || dirty || g_resized) {
      g_resized = 0;
      dirty = false;
      // Plain output shows a frame per snapshot, not a waiting line per poll.
      if (screen.full() || top.view().since || changed || frames == 0) {
        screen.draw(frame(top.view(), o, size_t(screen.columns()), screen.rows()));
        ++frames;
      }
      if (o.iterations > 0 && frames >= o.iterations) break;
      if (!screen.full() && top.over()) break;  // batch: the run has ended
    }
    int k = screen.key(int(delay * 1000));
    if (k == 'q' || k == 'Q') break;
    if (k >= 0) dirty = true;  // any other key redraws
  }
  // A run that ended with nothing the viewer could read: said as an error, like any bad input.
  if (top.over() && !top.view().since && !top.view().error.empty())
    throw UserError(top.view().error);
}

}  // namespace

void add_top(CLI::App& app) {
  auto o = std::make_shared<TopOptions>();
  CLI::App* cmd = app.add_subcommand(
      "top", "Live view of a run's snapshots: overhead classes, top regions, imbalance, progress");
  cmd->footer(
      "Examples:\n"
      "  SCALEA_SNAPSHOT=1s scalea run -o md.exp -- ./md &\n"
      "  scalea top md.exp                         refreshed as snapshots arrive; q quits\n"
      "  mpirun -np 4 scalea run --snapshot 1s -o halo.exp -- ./halo & scalea top halo.exp\n"
      "  scalea top md.exp -r md.p1                T_s from a reference run (1 thread)\n"
      "  scalea top md.exp -b -n 3                 three frames as plain text\n\n"
      "The view reads the files the run writes (DIR.live, then DIR/snapshots): quitting it never\n"
      "affects the program. It can be started before the program, and on a finished experiment\n"
      "(docs/online.md).");
  cmd->add_option("experiment", o->dir, "Experiment directory the run writes (scalea run -o DIR)")
      ->required();
  cmd->add_option("-r,--reference", o->reference,
                  "Reference experiment (same program, p = 1): T_s of a window is its time scaled "
                  "to the window's visits");
  cmd->add_flag("--force", o->force,
                "Use the reference even when its program, arguments or p differ (warned)");
  add_decomposition_option(cmd, o->decomposition);
  cmd->add_option("-p,--pes", o->p, "Processing elements of the run (default: its thread count)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-d,--delay", o->delay, "How often to look for new snapshots (default 0.25 s)")
      ->capture_default_str();
  cmd->add_option("--wait", o->wait,
                  "Where nothing is yet: how long to wait for a program to start writing DIR.live "
                  "(at least 60 s for one seen starting, a scalea run -o DIR; 0: answer at once)")
      ->capture_default_str();
  cmd->add_option("-n,--iterations", o->iterations, "Stop after this many frames")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("-b,--batch", o->batch,
                "Plain text, a frame per snapshot, until the run ends (as when not on a terminal)");
  cmd->add_option("--rows", o->rows,
                  "Regions per list (default: as many as the screen holds, 5 in "
                  "plain text)")
      ->check(CLI::PositiveNumber);
  cmd->callback([o] { run_top(*o); });
}

}  // namespace scalea::cli
