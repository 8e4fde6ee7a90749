// One experiment loaded and classified (analyze.hpp).
#include "analyze.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "output/errors.hpp"
#include "scalea/drg/meta.hpp"
#include "scalea/format.hpp"
#include "scalea/launcher.hpp"

namespace scalea::cli {

using drg::MergedTree;
using overheads::kClassCount;

namespace {
std::string base_name(const std::string& p) { return p.substr(p.rfind('/') + 1); }
std::string joined(const std::vector<std::string>& v, size_t from) {
  std::string s;
  for (size_t i = from; i < v.size(); ++i) s += (i > from ? " " : "") + v[i];
  return s;
}
}  // namespace

void check_reference(const drg::Experiment& run, const drg::Experiment& ref, bool force) {
  std::vector<std::string> a = drg::read_meta(run.meta).command,
                           b = drg::read_meta(ref.meta).command;
  std::string problem;
  size_t pes = std::max<size_t>(1, ref.threads.size());
  if (pes != 1)
    problem = fmt::format(
        "reference {} ran with p = {} ({} rank(s), {} thread(s)); the model "
        "compares with a run on one PE",
        ref.path, pes, ref.ranks(), ref.threads.size());
  else if (!a.empty() && !b.empty() && base_name(a[0]) != base_name(b[0]))
    problem = fmt::format("reference {} ran another program ({}; this run: {})", ref.path,
                          base_name(b[0]), base_name(a[0]));
  else if (!a.empty() && !b.empty() && joined(a, 1) != joined(b, 1))
    problem = fmt::format(
        "reference {} ran other arguments ('{}'; this run: '{}'): the inputs "
        "differ",
        ref.path, joined(b, 1), joined(a, 1));
  if (problem.empty()) return;
  if (!force) throw UserError(problem + "; use --force to compare them anyway");
  static bool said = launcher_rank().value_or(0) != 0;  // under mpirun, rank 0 warns for the job
  if (!said)
    std::fprintf(stderr, "scalea: warning: %s (compared anyway: --force)\n", problem.c_str());
  said = true;
}

std::unique_ptr<Analyzed> open_experiment(const std::string& dir, const AnalysisOptions& o) {
  auto x = std::make_unique<Analyzed>();
  x->run = Source(dir, o.share);
  if (!o.reference.empty()) {
    x->ref = Source(o.reference, o.share);
    check_reference(x->experiment(), *x->reference(), o.force);
  }
  return x;
}

void classify(Analyzed& x, const AnalysisOptions& o) {
  overheads::Options opts;
  opts.p = o.p;
  opts.keys = o.keys;
  opts.paths = false;
  opts.machine = o.machine;
  opts.share = o.share;
  x.a = overheads::classify(x.tree(), x.reference_tree(), opts);
}

std::unique_ptr<Analyzed> analyze(const std::string& dir, const AnalysisOptions& o) {
  std::unique_ptr<Analyzed> x = open_experiment(dir, o);
  classify(*x, o);
  return x;
}

std::string region_path(const MergedTree& run, const overheads::RegionOverheads& r) {
  if (!r.path.empty() || r.node == format::kNoIndex) return r.path;
  return run.path(r.node);
}

int dominant_class(const overheads::RegionOverheads& r) {
  int best = -1;
  double v = std::max(1e-9, 0.005 * r.t_p);
  for (int c = 0; c < kClassCount; ++c)
    if (r.classes[size_t(c)] > v) v = r.classes[size_t(c)], best = c;
  return best;
}

Folding fold_recursion(const MergedTree& t) {
  Folding f;
  f.hidden.assign(t.nodes().size(), 0);
  // Regions on the path from the root to the current node, as counts (a preorder walk).
  std::vector<uint32_t> on_path(t.experiment().regions.size(), 0);
  struct Frame {
    uint32_t node, next;
  };
  std::vector<Frame> stack{{0, 0}};
  ++on_path[t.node(0).region];
  while (!stack.empty()) {
    Frame& fr = stack.back();
    const drg::MergedNode& mn = t.node(fr.node);
    if (fr.next == mn.children.size()) {
      --on_path[mn.region];
      stack.pop_back();
      continue;
    }
    uint32_t c = mn.children[fr.next++];
    const drg::MergedNode& cn = t.node(c);
    if (f.hidden[fr.node] || on_path[cn.region] > 0) {
      if (!f.hidden[fr.node]) ++f.instances;
      f.hidden[c] = 1;
      ++f.rows;
      f.deepest = std::max(f.deepest, cn.depth);
    }
    ++on_path[cn.region];
    stack.push_back({c, 0});  // fr is not used after this
  }
  return f;
}

std::string node_label(const MergedTree& t, uint32_t n) {
  const drg::Region& reg = t.region_of(n);
  std::string loc = reg.location();
  return loc.empty() ? reg.label() : reg.label() + " @" + loc;
}

}  // namespace scalea::cli
