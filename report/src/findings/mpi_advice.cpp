#include "mpi_advice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "directive.hpp"
#include "findings.hpp"
#include "mpi_calls.hpp"
#include "output/text.hpp"
#include "scalea/format.hpp"

namespace scalea::cli {
namespace {

using drg::MergedTree;
using format::RegionKind;

// The calls a group's advice names: "file:line,line,..." (Finding::call_group) and their nodes.
struct Group {
  std::string name;
  std::vector<uint32_t> nodes;
};

// The source of `n`'s file down to the last line of its siblings' calls: read once for a group.
std::vector<std::string> sibling_source(const MergedTree& t, uint32_t n) {
  const drg::Region& reg = t.region_of(n);
  uint32_t last_line = reg.line;
  for (uint32_t m : t.node(t.node(n).parent).children)
    last_line = std::max(last_line, t.region_of(m).line);
  return read_source_lines(reg.file, last_line + kCallLines);
}

// The seconds of overhead `key` in merged node m itself (0 when none).
double own_part(const overheads::Analysis& a, uint32_t m, const std::string& key) {
  if (m >= a.regions.size()) return 0;
  auto it = a.regions[m].subclasses.find(key);
  return it == a.regions[m].subclasses.end() ? 0 : it->second;
}

// MPI calls of small messages cost their latency and the collective's steps, not the bytes they
// move: then the hint says so, with the calls' count, size and time ("" for larger messages).
std::string small_messages_hint(const MergedTree& t, uint32_t n) {
  const drg::Experiment& e = t.experiment();
  const drg::Region& reg = t.region_of(n);
  if (reg.kind == RegionKind::Mpi && reg.subkind == uint16_t(format::MpiClass::Wait))
    // A completion's bytes were counted where its requests were posted.
    return fmt::format(
        "the messages posted before it (MPI_Isend, MPI_Irecv) complete here, {:.1f} ms per call "
        "for the rank that waited least: their transfer; send less, or post them earlier and "
        "compute more before the wait",
        ns_to_s(t.min(n, e.metric(format::CoreMetric::TimeSum))) * 1e3 /
            std::max(1.0, t.sum(n, e.metric(format::CoreMetric::Visits)) /
                              std::max<size_t>(1, t.holders(n))));
  const int visits = e.metric(format::CoreMetric::Visits),
            time = e.metric(format::CoreMetric::TimeSum),
            sent = e.metric(format::CoreMetric::BytesSent),
            recv = e.metric(format::CoreMetric::BytesRecv);
  double calls = visits >= 0 ? t.sum(n, visits) : 0;
  if (calls <= 0 || time < 0) return "";
  double bytes = ((sent >= 0 ? t.sum(n, sent) : 0) + (recv >= 0 ? t.sum(n, recv) : 0)) / calls;
  if (bytes >= kSmallMessageBytes) return "";
  return fmt::format(
      "{:.0f} calls (all ranks) of {:.0f} bytes on average, {:.1f} us each: messages this small "
      "cost their latency and the operation's steps, not their volume; make fewer calls "
      "(combine reductions or messages into one), or overlap them with computation "
      "(non-blocking calls)",
      calls, bytes, ns_to_s(t.sum(n, time)) / calls * 1e6);
}

// Small collectives of one kind side by side: sibling call sites below the same region, called as
// often as each other by the same ranks, whose calls in the source agree on everything but their
// buffers and counts (fusion_key: datatype, operation, root, communicator). Their values can be
// packed into one buffer and reduced or broadcast by one call: one latency instead of several.
// "" when fewer than two such calls are found, or the source does not say so for sure.
std::string fused_collectives_advice(const MergedTree& t, const overheads::Analysis& a, uint32_t n,
                                     Group& named) {
  const drg::Region& reg = t.region_of(n);
  const std::vector<CallKey> key = fusion_key(reg.name);
  const uint32_t parent = t.node(n).parent;
  if (reg.kind != RegionKind::Mpi || key.empty() || parent == format::kNoIndex) return "";
  const drg::Experiment& e = t.experiment();
  const int visits = e.metric(format::CoreMetric::Visits),
            sent = e.metric(format::CoreMetric::BytesSent),
            recv = e.metric(format::CoreMetric::BytesRecv);
  if (visits < 0) return "";
  auto calls_per_holder = [&](uint32_t m) {
    return t.sum(m, visits) / std::max<size_t>(1, t.holders(m));
  };
  auto small = [&](uint32_t m) {
    const double bytes = (sent >= 0 ? t.sum(m, sent) : 0) + (recv >= 0 ? t.sum(m, recv) : 0);
    return t.sum(m, visits) > 0 && bytes / t.sum(m, visits) < kSmallMessageBytes;
  };
  if (!small(n)) return "";
  const std::vector<std::string> source = sibling_source(t, n);
  const MpiCall mine = mpi_call_in(source, reg.line, reg.name);
  if (!mine.found || mine.args.size() <= key.back().arg) return "";
  struct Site {
    uint32_t node, line;
  };
  std::vector<Site> group;
  double cost = 0;
  for (uint32_t m : t.node(parent).children) {
    const drg::Region& r = t.region_of(m);
    if (r.kind != RegionKind::Mpi || r.name != reg.name || r.file != reg.file ||
        t.holders(m) != t.holders(n) || !small(m) ||
        std::fabs(calls_per_holder(m) - calls_per_holder(n)) > 0.01 * calls_per_holder(n))
      continue;
    const MpiCall call = m == n ? mine : mpi_call_in(source, r.line, r.name);
    if (!call.found || call.args.size() != mine.args.size()) continue;
    bool same = true;
    for (const CallKey& k : key) same = same && call.args[k.arg] == mine.args[k.arg];
    if (!same) continue;
    group.push_back({m, call.line});
    cost += own_part(a, m, "data_movement.mpi_collective");
  }
  if (group.size() < 2) return "";
  std::sort(group.begin(), group.end(),
            [](const Site& x, const Site& y) { return x.line < y.line; });
  const std::string file = reg.file.substr(reg.file.rfind('/') + 1);
  std::string lines, agreed;
  for (const Site& g : group) {
    lines += (lines.empty() ? "" : ", ") + std::to_string(g.line);
    named.nodes.push_back(g.node);
  }
  named.name = reg.file + ":" + lines;
  for (const CallKey& k : key)
    agreed += fmt::format("{}{} {}", agreed.empty() ? "" : ", ", k.what, mine.args[k.arg]);
  const size_t k = group.size();
  return fmt::format(
      "the {} calls of {} at {}:{} run as often as each other ({:.0f} times per rank) with the "
      "same {}: pack their values into one buffer and make one call instead of {} (one latency "
      "instead of {}); their own cost in this run is {:.3f} s, of which about {:.3f} s would go",
      k, reg.name, file, lines, calls_per_holder(n), agreed, k, k, cost,
      cost * double(k - 1) / double(k));
}

// What the threads that made call `n` did besides it below `parent`: the time they spent in the
// parent outside its MPI calls (its computation, OpenMP regions included; their mean, in seconds),
// and the parent's children that every one of them made too.
struct Beside {
  double computation = 0;
  std::set<uint32_t> shared;
};

Beside beside(const MergedTree& t, uint32_t parent, uint32_t n) {
  const int time = t.experiment().metric(format::CoreMetric::TimeSum);
  const std::vector<uint32_t>& kids = t.node(parent).children;
  Beside out;
  if (t.holders(parent) == t.holders(n)) {
    // The threads of the parent all made the call (an MPI-only code whose ranks run the same
    // code): a child held by as many threads is held by the same ones, and the sums say the rest.
    double calls = 0;
    for (uint32_t c : kids) {
      if (t.region_of(c).kind == RegionKind::Mpi) calls += t.sum(c, time);
      if (t.holders(c) == t.holders(n)) out.shared.insert(c);
    }
    out.computation = std::max(0.0, ns_to_s(t.sum(parent, time) - calls) / double(t.holders(n)));
    return out;
  }
  // Some threads of the parent did not make the call (the ranks' code differs, or a hybrid
  // code's root is held by every thread and the call by one per rank): one pass over the threads.
  std::vector<size_t> made_too(t.nodes().size(), 0);
  double total = 0;
  size_t threads = 0;
  t.for_each_batch([&](const drg::ThreadBatch& b) {
    for (uint32_t i = 0; i < b.count; ++i) {
      const drg::ThreadTree& tt = b.threads[i];
      const std::vector<uint32_t>& map = b.merged[i];
      if (std::find(map.begin(), map.end(), n) == map.end()) continue;
      double own = 0;
      for (uint32_t k = 0; k < tt.size(); ++k) {
        const uint32_t m = map[k];
        if (m == parent) own += t.experiment().value(tt, k, time);
        if (m < made_too.size() && t.node(m).parent == parent) {
          ++made_too[m];
          if (t.region_of(m).kind == RegionKind::Mpi) own -= t.experiment().value(tt, k, time);
        }
      }
      total += std::max(0.0, own), ++threads;
    }
  });
  for (uint32_t c : kids)
    if (made_too[c] == threads) out.shared.insert(c);
  out.computation = threads ? ns_to_s(total) / double(threads) : 0;
  return out;
}

// "MPI_Send of out to right (line 120)": what a blocking call moves and with whom, as written.
std::string p2p_site(const std::string& function, const P2pRoles& r, const MpiCall& call) {
  std::string s = function;
  if (r.send_buf >= 0)
    s += fmt::format(" of {} to {}", call.args[size_t(r.send_buf)], call.args[size_t(r.dest)]);
  if (r.recv_buf >= 0)
    s +=
        fmt::format(" into {} from {}", call.args[size_t(r.recv_buf)], call.args[size_t(r.source)]);
  return s + fmt::format(" (line {})", call.line);
}

std::string joined(const std::set<std::string>& xs) {
  std::string out;
  for (const std::string& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// The blocking point-to-point calls below `n`'s parent that the same threads made as often as
// `n` (the call read at each site), their buffers, and their transfer time in the analysis.
struct P2pGroup {
  struct Site {
    uint32_t node, line;
    std::string what;  // p2p_site
  };
  std::vector<Site> sites;  // in line order
  std::set<std::string> sent, received;
  double cost = 0;    // s of data_movement.mpi_p2p
  bool mine = false;  // `n` itself was read
};

P2pGroup blocking_group(const MergedTree& t, const overheads::Analysis& a, uint32_t n,
                        const Beside& near) {
  const drg::Region& reg = t.region_of(n);
  const std::vector<uint32_t>& kids = t.node(t.node(n).parent).children;
  const int visits = t.experiment().metric(format::CoreMetric::Visits);
  auto calls_per_holder = [&](uint32_t m) {
    return t.sum(m, visits) / double(std::max<size_t>(1, t.holders(m)));
  };
  const std::vector<std::string> source = sibling_source(t, n);
  P2pGroup g;
  for (uint32_t m : kids) {
    const drg::Region& r = t.region_of(m);
    const P2pRoles roles = p2p_roles(r.name);
    if (r.kind != RegionKind::Mpi || !roles.blocking() || r.file != reg.file ||
        t.holders(m) != t.holders(n) || !near.shared.count(m) ||
        std::fabs(calls_per_holder(m) - calls_per_holder(n)) > 0.01 * calls_per_holder(n))
      continue;
    const MpiCall call = mpi_call_in(source, r.line, r.name);
    if (!call.found || call.args.size() < roles.args_needed()) continue;
    g.mine = g.mine || m == n;
    g.sites.push_back({m, call.line, p2p_site(r.name, roles, call)});
    if (roles.send_buf >= 0) g.sent.insert(call.args[size_t(roles.send_buf)]);
    if (roles.recv_buf >= 0) g.received.insert(call.args[size_t(roles.recv_buf)]);
    g.cost += own_part(a, m, "data_movement.mpi_p2p");
  }
  std::sort(g.sites.begin(), g.sites.end(),
            [](const P2pGroup::Site& x, const P2pGroup::Site& y) { return x.line < y.line; });
  return g;
}

// Blocking point-to-point calls below one region, made by the same ranks as often as each other,
// and what the region computes per rank besides its MPI calls: "post them as MPI_Irecv/MPI_Isend
// before that computation and complete them after it", with the time that could be hidden (at
// most the smaller of the two), or that there is nothing to hide them behind. "" for other calls,
// or when the call cannot be read.
std::string overlap_advice(const MergedTree& t, const overheads::Analysis& a, uint32_t n,
                           Group& named) {
  const drg::Region& reg = t.region_of(n);
  const uint32_t parent = t.node(n).parent;
  if (reg.kind != RegionKind::Mpi || !p2p_roles(reg.name).blocking() ||
      parent == format::kNoIndex || t.experiment().metric(format::CoreMetric::Visits) < 0)
    return "";
  const Beside near = beside(t, parent, n);
  const P2pGroup g = blocking_group(t, a, n, near);
  if (!g.mine || g.cost <= 0) return "";
  std::string sites, lines;
  for (const P2pGroup::Site& s : g.sites) {
    sites += (sites.empty() ? "" : ", ") + s.what;
    lines += (lines.empty() ? "" : ",") + std::to_string(s.line);
    named.nodes.push_back(s.node);
  }
  named.name = reg.file + ":" + lines;
  const drg::Region& around = t.region_of(parent);
  const std::string where =
      around.location().empty() ? around.label() : around.label() + " at " + around.location();
  const bool one = g.sites.size() == 1;
  const std::string calls =
      fmt::format("{} at {}: {}",
                  one ? "the blocking call" : fmt::format("the {} blocking calls", g.sites.size()),
                  reg.file.substr(reg.file.rfind('/') + 1), sites);
  const double compute = near.computation;
  // Overlapping hides at most the computation: below a quarter of the transfer it would hide too
  // little to be worth restructuring the exchange.
  if (compute < 0.25 * g.cost || compute < kFindingMinSeconds)
    return fmt::format(
        "{} {} with nothing to overlap {} with ({} computes {:.3f} s per rank "
        "besides its MPI calls, against {:.3f} s of transfer): non-blocking calls would not hide "
        "it; send fewer, larger messages",
        calls, one ? "moves its data" : "move their data", one ? "it" : "them", where, compute,
        g.cost);
  std::string untouched;
  if (!g.received.empty()) untouched = "reads no receive buffer (" + joined(g.received) + ")";
  if (!g.sent.empty())
    untouched += (untouched.empty() ? "" : " and ") + std::string("writes no send buffer (") +
                 joined(g.sent) + ")";
  return fmt::format(
      "{} {} ({:.3f} s in this run) while {} computes {:.3f} s per rank "
      "besides its MPI calls: post the receives with MPI_Irecv and the sends with MPI_Isend "
      "before the computation that {}, and complete them with one MPI_Waitall after it: up to "
      "{:.3f} s could be hidden",
      calls, one ? "waits for its transfer" : "wait for their transfers", g.cost, where, compute,
      untouched, std::min(g.cost, compute));
}

}  // namespace

TransferHint transfer_hint(const MergedTree& t, const overheads::Analysis& a, uint32_t n,
                           const std::string& key, std::string hint, CallAdvice& said) {
  TransferHint out;
  const std::string small = small_messages_hint(t, n);
  if (!small.empty()) hint = small;
  const bool p2p = key == "data_movement.mpi_p2p";
  if (auto it = said.find(n); it != said.end()) {
    std::tie(out.group, out.advice) = it->second;  // a call of a group advised already
  } else if (p2p || key == "data_movement.mpi_collective") {
    Group named;
    out.advice = p2p ? overlap_advice(t, a, n, named) : fused_collectives_advice(t, a, n, named);
    if (!out.advice.empty()) {
      out.group = named.name;
      for (uint32_t m : named.nodes) said.emplace(m, std::make_pair(out.group, out.advice));
    }
  }
  // The calls' own overlap advice says what overlapping would gain, or that nothing would: it
  // takes the table's general words' place (small messages keep theirs: latency).
  if (p2p && !out.advice.empty() && small.empty()) hint.clear();
  out.hint = out.advice.empty() ? hint : hint.empty() ? out.advice : out.advice + "; " + hint;
  return out;
}

}  // namespace scalea::cli
