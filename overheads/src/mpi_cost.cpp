#include "mpi_cost.hpp"

#include <cstdio>

#include "scalea/drg/meta.hpp"

namespace scalea::overheads {

using format::RegionKind;

namespace {
template <class... Args>
std::string text(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}
}  // namespace

bool distributes_from_root(const drg::Region& r) {
  if (r.kind != RegionKind::Mpi || r.subkind != uint16_t(format::MpiClass::Collective))
    return false;
  return r.name == "MPI_Bcast" || r.name == "MPI_Scatter" || r.name == "MPI_Scatterv";
}

bool waits_for_partner(const drg::Region& r) {
  if (r.kind != RegionKind::Mpi) return false;
  auto cls = format::MpiClass(r.subkind);
  if (cls != format::MpiClass::P2P && cls != format::MpiClass::Collective &&
      cls != format::MpiClass::Sync)
    return false;
  const std::string& name = r.name;
  bool posts = name.rfind("MPI_I", 0) == 0 && name != "MPI_Init" && name != "MPI_Init_thread";
  return !posts && name.rfind("MPI_Start", 0) != 0;
}

ModelCheck check_message_model(const drg::MergedTree& t) {
  ModelCheck m;
  const drg::Experiment& e = t.experiment();
  const std::optional<drg::MessageModel> model = drg::read_meta(e.meta).message_model;
  if (!model) return m;
  m.present = true;
  m.latency_ns = model->latency_ns;
  m.ns_per_byte = model->ns_per_byte;
  const int visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum),
            shortest = e.metric(format::CoreMetric::TimeMin),
            sent = e.metric(format::CoreMetric::BytesSent),
            recv = e.metric(format::CoreMetric::BytesRecv);
  if (visits < 0 || time < 0) return m;
  for (uint32_t n = 0; n < t.nodes().size() && m.usable; ++n) {
    const drg::Region& r = t.region_of(n);
    if (!waits_for_partner(r) || t.sum(n, visits) <= 0) continue;
    std::string where = r.location().empty() ? r.label() : r.label() + " at " + r.location();
    if (shortest >= 0) {
      double fastest_ns = t.min(n, shortest);
      if (fastest_ns > 0 &&
          m.latency_ns > kModelLatencySlack * fastest_ns + kModelLatencyMarginNs) {
        m.usable = false;
        m.doubt = text("its latency, %.1f us, is more than calls of %s took (%.1f us)",
                       m.latency_ns * 1e-3, where.c_str(), fastest_ns * 1e-3);
        break;
      }
    }
    double bytes = (sent >= 0 ? t.sum(n, sent) : 0) + (recv >= 0 ? t.sum(n, recv) : 0);
    double spent_ns = t.sum(n, time);
    if (bytes * m.ns_per_byte > kModelLatencySlack * spent_ns + kModelLatencyMarginNs) {
      m.usable = false;
      m.doubt = text(
          "at %.3f ns per byte, the %.0f bytes of %s would take %.3f s; all its calls took %.3f s",
          m.ns_per_byte, bytes, where.c_str(), bytes * m.ns_per_byte * 1e-9, spent_ns * 1e-9);
    }
  }
  return m;
}

}  // namespace scalea::overheads
