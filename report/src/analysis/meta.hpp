// What the commands read from an experiment's meta.json beyond drg::Meta.
#pragma once
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scalea/drg/cct.hpp"

namespace scalea::cli {

// A key of an experiment's meta.json, or null when absent (meta.json from other writers, or
// older ones, may lack any key; const json::operator[] must not see a missing key).
const nlohmann::json& meta_at(const nlohmann::json& meta, const char* key);

// Merged nodes on a call path some thread throttled (SCALEA_THROTTLE), from meta.json's
// "throttle" list (rank, thread and node of the data files).
std::set<uint32_t> throttled_nodes(const drg::Experiment& e, const drg::MergedTree& t);

// How the reports name a PE: "rank 1 thread 0" under MPI (rank >= 0), else "thread 0".
std::string pe_label(int64_t rank, int64_t thread);

// A PE that had not left a region when the run ended, and how long it had been inside.
struct OpenPe {
  int64_t rank = -1, thread = 0;
  double open_s = 0;
  bool innermost = false;  // no region inside it was open on that PE
};
// Merged nodes some PE had not left when the run ended (meta.json's "open_at_end": a signal, or
// exit() while other threads were inside), with those PEs.
std::map<uint32_t, std::vector<OpenPe>> open_nodes(const drg::Experiment& e,
                                                   const drg::MergedTree& t);
// The recorder's anomalies (meta.json "anomalies") beyond the regions open at the end, for the
// report's header: "" when there were none.
std::string anomalies_note(const drg::Experiment& e);
// How the run ended, for the report's header: "" when it ended normally with every region left;
// else one sentence, e.g. "by signal 15 (SIGTERM) while thread 1 was inside sections @a.c:12
// (open 5.99 s)".
std::string run_end_note(const drg::Experiment& e, const drg::MergedTree& t,
                         const std::map<uint32_t, std::vector<OpenPe>>& open);

}  // namespace scalea::cli
