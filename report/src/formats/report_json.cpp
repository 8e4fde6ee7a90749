#include "analysis/meta.hpp"
#include "report_json.hpp"

#include "analysis/analyze.hpp"
#include "exports.hpp"
#include "findings/findings.hpp"
#include "findings/pattern.hpp"
#include "analysis/thread_values.hpp"
#include "scalea/drg/meta.hpp"

#include <tuple>
#include "findings/wait_states.hpp"
#include "findings_out.hpp"
#include "output/text.hpp"
#include "sampled.hpp"
#include "tuning_out.hpp"

namespace scalea::cli {

nlohmann::json overheads_json(const overheads::RegionOverheads& r) {
  nlohmann::json ov;
  for (int c = 0; c < overheads::kClassCount; ++c)
    ov[std::string(overheads::kClassKeys[size_t(c)])] = r.classes[size_t(c)];
  ov["total"] = r.t_o;
  nlohmann::json sub = nlohmann::json::object();
  for (const auto& [k, v] : r.subclasses) sub[k] = v;
  ov["subclasses"] = sub;
  return ov;
}

namespace {

// The pattern of an MPI call's waiting (findings/wait_states.hpp), or null.
nlohmann::json mpi_wait_state(const drg::Region& r) {
  WaitState ws = wait_state(r);
  return ws.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(ws.name));
}

// One region of the document, without its per_thread list.
nlohmann::json region_json(const drg::MergedTree& t, const overheads::Analysis& a, uint32_t n,
                           bool throttled, bool folded) {
  const drg::Experiment& e = t.experiment();
  const int visits = e.metric(format::CoreMetric::Visits),
            wait = e.metric(format::CoreMetric::Wait),
            sent = e.metric(format::CoreMetric::BytesSent),
            recv = e.metric(format::CoreMetric::BytesRecv),
            transfer = e.metric(format::CoreMetric::Transfer);
  const auto& r = a.regions[n];
  const drg::Region& reg = t.region_of(n);
  return {
      {"id", n},
      {"parent", t.node(n).parent == format::kNoIndex ? nlohmann::json(nullptr)
                                                      : nlohmann::json(t.node(n).parent)},
      {"path", region_path(t, r)},
      {"depth", t.node(n).depth},
      {"kind", std::string(format::region_kind_name(reg.kind))},
      {"label", reg.label()},
      {"name", reg.name},
      {"source",
       {{"file", reg.file},
        {"line", reg.line},
        {"function", reg.function},
        {"symbol", reg.symbol},
        {"offset", reg.symbol_offset},
        {"outlined", reg.outlined},
        {"body", reg.body}}},
      {"location", reg.location()},
      {"p", r.p},
      {"visits", t.sum(n, visits)},
      {"time", r.t_p},
      {"reference_time", r.t_s},
      {"reference_estimated", r.t_s_estimated},
      {"speedup", r.speedup},
      {"efficiency", r.efficiency},
      {"imbalance",
       {{"max_over_mean", r.imbalance},
        {"pes", r.pes_ran},
        {"most_loaded", r.most_loaded},
        {"least_loaded", r.least_loaded}}},
      {"wait_total", ns_to_s(t.sum(n, wait))},
      {"noise", a.noise_priced ? nlohmann::json(r.noise) : nlohmann::json(nullptr)},
      {"events_below", r.events_below},
      {"throttled", throttled},
      {"recursion_folded", folded},
      {"time_compensated",
       a.noise_priced ? nlohmann::json(r.t_p - r.noise) : nlohmann::json(nullptr)},
      {"overheads", overheads_json(r)},
      // MPI calls: bytes and the collector's split of their time (message model).
      {"mpi", reg.kind != drg::RegionKind::Mpi
                  ? nlohmann::json(nullptr)
                  : nlohmann::json{{"bytes_sent", t.sum(n, sent)},
                                   {"bytes_recv", t.sum(n, recv)},
                                   {"wait", ns_to_s(t.sum(n, wait))},
                                   {"transfer", ns_to_s(t.sum(n, transfer))},
                                   {"wait_state", mpi_wait_state(reg)}}},
      // File I/O calls (collect/io): bytes read and written, summed over ranks and threads.
      {"io", reg.kind != drg::RegionKind::Io
                 ? nlohmann::json(nullptr)
                 : nlohmann::json{{"operation",
                                   std::string(format::subkind_label(reg.kind, reg.subkind))},
                                  {"bytes_read", t.sum(n, recv)},
                                  {"bytes_written", t.sum(n, sent)}}},
  };
}

// How the run ended, the regions PEs had not left then (path, PE, time inside) and the
// recorder's anomalies, into the "experiment" object.
void add_run_end(nlohmann::json& x, const drg::Experiment& e, const drg::MergedTree& t) {
  const auto open = open_nodes(e, t);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [node, pes] : open)
    for (const OpenPe& pe : pes)
      list.push_back({{"path", t.path(node)},
                      {"rank", pe.rank},
                      {"thread", pe.thread},
                      {"open_s", pe.open_s},
                      {"innermost", pe.innermost}});
  x["finished_by"] = meta_at(e.meta, "finished_by");
  x["open_at_end"] = list;
  x["run_end"] = run_end_note(e, t, open);
  x["anomalies"] = meta_at(e.meta, "anomalies");
}

}  // namespace

namespace {
// A sentence, or null when there is none.
nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

// The program's pattern per phase (pattern.hpp): the ranks' (path "") and each parallel
// region's.
nlohmann::json patterns_json(const drg::MergedTree& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const Phase& ph : program_phases(t))
    out.push_back({{"path", ph.node == 0 ? "" : t.path(ph.node)},
                   {"pattern", pattern_name(ph.pattern)},
                   {"evidence", ph.evidence}});
  return out;
}
}  // namespace

namespace {
// The program's POP efficiencies.
nlohmann::json report_program_json(const overheads::ProgramEfficiency& pe) {
  auto optional = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"load_balance", pe.load_balance},
          {"communication_efficiency", pe.communication_efficiency},
          {"parallel_efficiency", pe.parallel_efficiency},
          {"computation_scalability", optional(pe.computation_scalability)},
          {"global_efficiency", optional(pe.global_efficiency)}};
}
}  // namespace

void report_json(const TextSink& put, const drg::Experiment& e, const drg::MergedTree& t,
                 const overheads::Analysis& a, const drg::Experiment* ref,
                 const ReportJsonOptions& o) {
  const int visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum), wait = e.metric(format::CoreMetric::Wait),
            fork = e.metric(format::CoreMetric::Fork);
  nlohmann::json out;
  out["schema"] = "scalea-report/1";
  out["experiment"] = {{"path", e.path},
                       {"command", meta_at(e.meta, "command")},
                       {"p", a.p},
                       {"ranks", e.ranks()},
                       {"threads", e.threads.size()},
                       {"complete", e.complete()},
                       {"openmp", meta_at(e.meta, "openmp")},
                       {"clock", meta_at(e.meta, "clock")},
                       {"program_start", meta_at(e.meta, "program_start")},
                       {"program_start_estimated_s", meta_at(e.meta, "program_start_estimated_s")},
                       {"cpu_sharing", cpu_sharing(e)}};
  add_run_end(out["experiment"], e, t);
  out["reference"] = ref ? nlohmann::json{{"path", ref->path}, {"p", ref->threads.size()}}
                         : nlohmann::json(nullptr);
  const std::set<uint32_t> throttled = throttled_nodes(e, t);
  // Every region is listed; those the text report folds (recursive instances) are marked, and
  // the findings are chosen as there.
  const Folding fold = fold_recursion(t);
  // Each region with its threads' values, read file by file (for_each_node_threads).
  auto regions = [&](const Emit<nlohmann::json>& emit) {
    std::vector<uint32_t> listed;
    for (uint32_t n : t.preorder())
      if (!o.shown || o.shown(n)) listed.push_back(n);
    for_each_node_threads(t, listed, {visits, time, wait, fork}, [&](const NodeThreads& holders) {
      const uint32_t n = holders.node;
      // The region's threads, written one at a time: the list grows with the PEs.
      auto per_thread = [&](const Emit<nlohmann::json>& emit_thread) {
        for (size_t i = 0; i < holders.count; ++i) {
          const drg::ThreadTree& tt = e.threads[holders.thread[i]];
          emit_thread({{"rank", tt.rank},
                       {"thread", tt.thread},
                       {"visits", holders.value(i, 0)},
                       {"time", ns_to_s(holders.value(i, 1))},
                       {"wait", ns_to_s(holders.value(i, 2))},
                       {"fork", ns_to_s(holders.value(i, 3))}});
        }
      };
      const nlohmann::json region =
          region_json(t, a, n, throttled.count(n) > 0, fold.hidden[n] != 0);
      emit(region, {{"per_thread", per_thread}});
    });
  };
  out["regions"] = nullptr;  // streamed
  out["machine"] =
      o.machine_used.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.machine_used);
  out["compensated"] = o.compensate;
  // Why the MPI message model was not used (the run contradicts it), or null.
  out["message_model_doubt"] = text_or_null(a.message_model_doubt);
  out["counters"] = e.meta.contains("counters") ? e.meta["counters"] : nlohmann::json(nullptr);
  out["sampled"] = sampled_json(t);
  // Regions of the reference's recursion deeper than this run's, not in only_in_reference.
  out["recursion_only_in_reference"] = a.recursion_only_in_reference;
  auto gone = [&](const Emit<nlohmann::json>& emit) {
    for (const auto& r : a.only_in_reference)
      emit({{"path", r.path}, {"reference_time", r.t_s}, {"overheads", overheads_json(r)}});
  };
  out["program"] = report_program_json(a.program);
  FindingContext context;
  context.reference = o.reference_tree;
  context.hidden = fold.hidden;
  out["findings"] = findings_json(find_findings(t, a, o.findings, context));
  out["patterns"] = patterns_json(t);
  out["online_tuning"] = tuning_json(e, &t);
  dump_streamed<nlohmann::json>(put, std::move(out),
                                {{"regions", regions}, {"only_in_reference", gone}});
}

}  // namespace scalea::cli
