#include "meta.hpp"

#include <fmt/format.h>
#include <string.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "analyze.hpp"
#include "scalea/drg/meta.hpp"

namespace scalea::cli {

const nlohmann::json& meta_at(const nlohmann::json& meta, const char* key) {
  static const nlohmann::json null_value;
  if (!meta.is_object()) return null_value;
  auto it = meta.find(key);
  return it == meta.end() ? null_value : *it;
}

std::set<uint32_t> throttled_nodes(const drg::Experiment& e, const drg::MergedTree& t) {
  std::set<uint32_t> out;
  const std::vector<drg::ThrottledPath> list = drg::read_meta(e.meta).throttled;
  if (list.empty()) return out;
  std::set<std::tuple<int64_t, int64_t, int64_t>> keys;
  for (const drg::ThrottledPath& x : list) keys.emplace(x.rank, x.thread, x.node);
  t.for_each_batch([&](const drg::ThreadBatch& b) {
    for (uint32_t i = 0; i < b.count; ++i)
      for (uint32_t n = 0; n < b.threads[i].size(); ++n)
        if (keys.count({b.threads[i].rank, b.threads[i].thread, n})) out.insert(b.merged[i][n]);
  });
  return out;
}

std::string pe_label(int64_t rank, int64_t thread) {
  return rank >= 0 ? fmt::format("rank {} thread {}", rank, thread)
                   : fmt::format("thread {}", thread);
}

std::map<uint32_t, std::vector<OpenPe>> open_nodes(const drg::Experiment& e,
                                                   const drg::MergedTree& t) {
  std::map<uint32_t, std::vector<OpenPe>> out;
  const drg::Meta m = drg::read_meta(e.meta);
  if (m.open_at_end.empty()) return out;
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> keys;
  for (const drg::OpenAtEnd& x : m.open_at_end) keys[{x.rank, x.thread, x.node}] = x.open_s;
  // The innermost open region of each PE: the entry listed first for it (close_thread lists
  // each thread's open regions from the innermost out).
  std::set<std::pair<int64_t, int64_t>> seen;
  std::set<std::tuple<int64_t, int64_t, int64_t>> innermost;
  for (const drg::OpenAtEnd& x : m.open_at_end)
    if (seen.insert({x.rank, x.thread}).second) innermost.insert({x.rank, x.thread, x.node});
  t.for_each_batch([&](const drg::ThreadBatch& b) {
    for (uint32_t i = 0; i < b.count; ++i) {
      const drg::ThreadTree& th = b.threads[i];
      for (uint32_t n = 0; n < th.size(); ++n) {
        auto it = keys.find({th.rank, th.thread, n});
        if (it == keys.end()) continue;
        bool inner = innermost.count(it->first) > 0;
        out[b.merged[i][n]].push_back({th.rank, th.thread, it->second, inner});
      }
    }
  });
  return out;
}

std::string anomalies_note(const drg::Experiment& e) {
  const nlohmann::json& a = meta_at(e.meta, "anomalies");
  auto count = [&](const char* key) -> int64_t {
    const nlohmann::json& v = meta_at(a, key);
    return v.is_number_integer() ? v.get<int64_t>() : 0;
  };
  // The regions open at the end of the run are said by run_end_note.
  int64_t unmatched = count("unmatched_end"),
          unclosed =
              std::max<int64_t>(0, count("unclosed") - drg::read_meta(e.meta).open_at_end_count);
  if (!unmatched && !unclosed) return "";
  return fmt::format(
      "the runtime's events did not nest as the tool expects: {} end event(s) without a "
      "begin (dropped), {} region(s) still open when their task ended (closed there): the "
      "times of the regions around them may be too short or too long (meta.json "
      "\"anomalies\"; docs/reliability.md)",
      unmatched, unclosed);
}

std::string run_end_note(const drg::Experiment& e, const drg::MergedTree& t,
                         const std::map<uint32_t, std::vector<OpenPe>>& open) {
  const drg::Meta m = drg::read_meta(e.meta);
  std::string how;
  if (m.finished_by.rfind("signal ", 0) == 0) {
    int sig = std::atoi(m.finished_by.c_str() + 7);
    const char* abbrev = sig > 0 ? sigabbrev_np(sig) : nullptr;
    how = abbrev ? fmt::format("by {} (SIG{})", m.finished_by, abbrev) : "by " + m.finished_by;
  }
  std::string inside;
  size_t listed = 0, pes = 0;
  for (const auto& [node, list] : open)
    for (const OpenPe& pe : list) {
      if (!pe.innermost) continue;
      ++pes;
      if (listed++ >= 4) continue;
      inside += fmt::format("{}{} {}inside {} (for {:.3g} s)", inside.empty() ? "" : ", ",
                            pe_label(pe.rank, pe.thread), inside.empty() ? "was " : "",
                            node_label(t, node), pe.open_s);
    }
  if (listed > 4) inside += fmt::format(" and {} more", listed - 4);
  if (how.empty() && inside.empty()) return "";
  if (inside.empty()) return how + ", with every region left";
  const char* them = pes == 1 ? "it" : "them";
  const char* their = pes == 1 ? "its" : "their";
  if (how.empty())
    // The program ended on its own: exit() while other threads were inside a construct, or
    // runtime events the tool could not match (the EVENTS line then counts them).
    return fmt::format(
        "normally ({}) while {}: still inside when the program exited (exit() called while "
        "{} worked, or runtime events the tool could not match); {} times there stop at the "
        "end, and no balance is judged in a region a PE never left",
        m.finished_by.empty() ? "?" : m.finished_by, inside, pes == 1 ? "it" : "they", their);
  return fmt::format(
      "{} while {}; {} never left {} (a deadlock, or a wait or a loop that does not end?): {} "
      "times there stop at the end of the run, and no balance is judged in a region a PE never "
      "left",
      how, inside, pes == 1 ? "that PE" : "those PEs", them, their);
}

}  // namespace scalea::cli
