#include "tuning_out.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "findings/directive.hpp"
#include "scalea/drg/meta.hpp"

namespace scalea::cli {

namespace {

// The tuned region in the experiment's table: the parallel region at its module and offset; by
// the process's own id only in a one-process experiment (an MPI job's table is unified).
const drg::Region* region_of(const drg::Experiment& e, const drg::TunedRegion& r) {
  namespace fs = std::filesystem;
  if (r.offset && !r.module.empty())
    for (const drg::Region& reg : e.regions)
      if (reg.kind == format::RegionKind::Parallel && reg.address == r.offset &&
          fs::path(reg.module).filename() == fs::path(r.module).filename())
        return &reg;
  if (e.ranks() > 1 || r.region < 0 || size_t(r.region) >= e.regions.size()) return nullptr;
  const drg::Region& reg = e.regions[size_t(r.region)];
  return reg.kind == format::RegionKind::Parallel ? &reg : nullptr;
}

std::string label_of(const drg::Experiment& e, const drg::TunedRegion& r) {
  const drg::Region* reg = region_of(e, r);
  if (!reg) return fmt::format("parallel at 0x{:x}", r.code);
  std::string loc = reg->location();
  return loc.empty() ? reg->label() : reg->label() + " @" + loc;
}

// What the source writes at the region's worksharing loops (its loop regions in the merged tree,
// each directive read where its region is; a combined `parallel for` is its own loop), "" when
// nothing was read.
std::string written_schedule(const drg::MergedTree* t, const drg::TunedRegion& r) {
  const drg::Region* reg = t ? region_of(t->experiment(), r) : nullptr;
  if (!reg) return "";
  const uint32_t id = uint32_t(reg - t->experiment().regions.data());
  std::set<std::pair<std::string, uint32_t>> loops;
  for (const drg::MergedNode& n : t->nodes()) {
    if (n.region != id) continue;
    for (uint32_t c : n.children) {
      const drg::Region& loop = t->region_of(c);
      if (loop.kind == format::RegionKind::Loop && !loop.file.empty() && loop.line)
        loops.emplace(loop.file, loop.line);
    }
  }
  std::string out;
  for (const auto& [file, line] : loops) {
    Directive d = directive_at(file, line);
    if (!d.found) continue;
    std::string where =
        std::filesystem::path(file).filename().string() + ":" + std::to_string(d.line);
    out += (out.empty() ? "" : "; ") + where + " `" + d.text + "`" +
           (d.schedule.empty() ? " (no schedule clause)" : "");
  }
  return out;
}

std::string loops_text(const std::string& loops) {
  if (loops == "proven")
    return "a loop of it followed the schedule set (the runtime reports each loop's schedule): "
           "schedule(runtime)";
  if (loops == "none") return "no loop of it followed the schedule set: none is schedule(runtime)";
  return "the runtime does not report loop schedules (libomp 14): only schedule(runtime) loops "
         "can follow the schedule set, not proven which ran";
}

std::string verdict(const drg::TunedRegion& r) {
  if (r.state == "fixed" && !r.chosen.empty() && r.gain > 0)
    return fmt::format("chosen {} from execution {} on, {:.1f} % faster than the program's {} ({})",
                       r.chosen, r.fixed_from, 100 * r.gain, r.program_schedule, r.reason);
  if (r.state == "fixed")
    return fmt::format("kept the program's {}: {}", r.program_schedule, r.reason);
  if (r.state == "stopped")
    return fmt::format("not tuned (program's {}): {}", r.program_schedule, r.reason);
  return fmt::format("still {} when the run ended ({} executions)", r.state, r.executions);
}

}  // namespace

std::vector<std::string> tuning_text(const drg::Experiment& e, const drg::MergedTree* t) {
  const auto tuning = drg::read_meta(e.meta).tuning;
  std::vector<std::string> out;
  if (!tuning) return out;
  if (!tuning->on) {
    out.push_back("on-line tuning asked for (SCALEA_TUNE=on) but off: " + tuning->off_reason);
    return out;
  }
  out.push_back(fmt::format(
      "on-line tuning (SCALEA_TUNE=on): {} execution(s) per schedule, a schedule kept only when "
      "its median is {:.0f} % below the best so far and its slowest execution faster than that "
      "one's fastest",
      tuning->repeat, 100 * tuning->min_gain));
  if (tuning->regions.empty()) out.push_back("  no parallel region was tuned");
  for (const drg::TunedRegion& r : tuning->regions) {
    out.push_back(fmt::format("  {}: {}", label_of(e, r), verdict(r)));
    out.push_back(fmt::format("    loops: {}; {} iterations, {} threads, {} executions",
                              loops_text(r.runtime_loops), r.iterations, r.threads, r.executions));
    if (std::string src = written_schedule(t, r); !src.empty()) out.push_back("    source: " + src);
    if (r.trials.empty()) continue;
    out.push_back(fmt::format("    {:<20} {:>5} {:>10} {:>21} {:>12} {:>12}", "schedule", "runs",
                              "median s", "range s", "imbalance s", "loop time s"));
    for (const drg::TunedTrial& t : r.trials) {
      if (t.runs == 0) continue;
      std::string name = t.schedule + (t.program ? " (program's)" : "") +
                         (r.state == "fixed" && t.schedule == r.chosen ? " *" : "");
      out.push_back(
          fmt::format("    {:<20} {:>5} {:>10.4f} {:>10.4f}-{:<10.4f} {:>12.4f} {:>12.4f}", name,
                      t.runs, t.median_s, t.min_s, t.max_s, t.imbalance_s, t.busy_s));
    }
  }
  return out;
}

nlohmann::json tuning_json(const drg::Experiment& e, const drg::MergedTree* t) {
  auto it = e.meta.find("online_tuning");
  if (it == e.meta.end() || !it->is_object()) return nullptr;
  nlohmann::json out = *it;
  const auto tuning = drg::read_meta(e.meta).tuning;
  if (out["regions"].is_array() && tuning && tuning->regions.size() == out["regions"].size())
    for (size_t i = 0; i < tuning->regions.size(); ++i) {
      out["regions"][i]["label"] = label_of(e, tuning->regions[i]);
      std::string src = written_schedule(t, tuning->regions[i]);
      out["regions"][i]["source"] = src.empty() ? nlohmann::json(nullptr) : nlohmann::json(src);
    }
  return out;
}

}  // namespace scalea::cli
