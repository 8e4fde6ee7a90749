// One experiment loaded and classified (analyze.hpp).
#include "analyze.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

// The arguments (the command without the program) with the decomposition's values replaced by
// kAny and its flags removed with their values, so that two runs that differ only there compare
// equal (check_reference), also when one of them leaves a flag at its default ("-i 2" against
// nothing). Positions name the command as given, so they are marked before flags are removed.
constexpr const char* kAny = "\x01";
struct Inputs {
  std::vector<std::string> words;
  std::vector<size_t> at;  // each word's index in the arguments
};
Inputs inputs(const std::vector<std::string>& command,
              const std::vector<std::string>& decomposition) {
  std::vector<std::string> out(command.begin() + (command.empty() ? 0 : 1), command.end());
  auto is_flag = [&](const std::string& word, const std::string& name) {
    return word == "-" + name || word == "--" + name;
  };
  std::vector<std::string> flags;
  for (std::string name : decomposition) {
    name.erase(0, name.find_first_not_of('-'));
    if (name.empty()) continue;
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      flags.push_back(name);
      continue;
    }
    size_t at = std::stoul(name);  // a position, 1-based
    if (at >= 1 && at <= out.size()) out[at - 1] = kAny;
  }
  Inputs kept;
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string& w = out[i];
    size_t eq = w.find('=');
    auto named = [&](const std::string& name) {
      return is_flag(w, name) || (eq != std::string::npos && is_flag(w.substr(0, eq), name)) ||
             (name.size() == 1 && w.size() > 2 && w[0] == '-' && w[1] == name[0] &&
              std::isdigit((unsigned char)w[2]));  // -t 4, --grid=2x2, -t4
    };
    auto f = std::find_if(flags.begin(), flags.end(), named);
    if (f == flags.end()) {
      kept.words.push_back(w);
      kept.at.push_back(i);
      continue;
    }
    if (is_flag(w, *f) && i + 1 < out.size()) ++i;  // its value goes with it
  }
  return kept;
}

// The name --decomposition would take for argument i (0-based) of `args`: its flag when it is a
// flag's value ("-t 4", "--grid=2x2", "-t4"), else its position.
std::string decomposition_name(const std::vector<std::string>& args, size_t i) {
  auto flag = [](const std::string& w) {
    return w.size() > 1 && w[0] == '-' && std::isalpha((unsigned char)w[w[1] == '-' ? 2 : 1]);
  };
  auto strip = [](const std::string& f) { return f.substr(f.find_first_not_of('-')); };
  if (i < args.size()) {
    const std::string& w = args[i];
    size_t eq = w.find('=');
    if (flag(w) && eq != std::string::npos) return strip(w.substr(0, eq));
    if (flag(w) && w[1] != '-' && w.size() > 2 && std::isdigit((unsigned char)w[2]))
      return w.substr(1, 1);
    if (i > 0 && flag(args[i - 1]) && args[i - 1].find('=') == std::string::npos)
      return strip(args[i - 1]);
    if (flag(w)) return strip(w);  // a flag the other run does not give
  }
  return std::to_string(i + 1);
}

// "argument 3: 'd' here, 'c' in the reference" for the first argument that differs, with the
// --decomposition that would accept it.
std::string first_difference(const std::vector<std::string>& run,
                             const std::vector<std::string>& ref,
                             const std::vector<std::string>& decomposition) {
  Inputs a = inputs(run, decomposition), b = inputs(ref, decomposition);
  if (a.words == b.words) return {};
  size_t k = 0;
  while (k < a.words.size() && k < b.words.size() && a.words[k] == b.words[k]) ++k;
  std::vector<std::string> ra(run.begin() + 1, run.end()), rb(ref.begin() + 1, ref.end());
  auto word = [](const std::vector<std::string>& v, size_t k) {
    return k < v.size() ? "'" + v[k] + "'" : std::string("none");
  };
  // The first differing word's index in each run's arguments (none: past its end).
  size_t ia = k < a.words.size() ? a.at[k] : ra.size();
  size_t ib = k < b.words.size() ? b.at[k] : rb.size();
  bool here = k < a.words.size();
  size_t i = here ? ia : ib;
  std::string name = decomposition_name(here ? ra : rb, i);
  return fmt::format(
      "argument {}: {} here, {} in the reference ('{}' here; '{}' in the reference): the inputs "
      "differ; if argument {} sets the decomposition, not the input, say so with --decomposition "
      "{} (or SCALEA_DECOMPOSITION_ARGS={})",
      i + 1, word(ra, ia), word(rb, ib), joined(run, 1), joined(ref, 1), i + 1, name, name);
}
}  // namespace

void check_reference(const drg::Experiment& run, const drg::Experiment& ref, bool force,
                     const std::vector<std::string>& decomposition) {
  std::vector<std::string> a = drg::read_meta(run.meta).command,
                           b = drg::read_meta(ref.meta).command;
  std::string problem, differs;
  size_t pes = std::max<size_t>(1, ref.threads.size());
  if (pes != 1)
    problem = fmt::format(
        "reference {} ran with p = {} ({} rank(s), {} thread(s)); the model "
        "compares with a run on one PE",
        ref.path, pes, ref.ranks(), ref.threads.size());
  else if (!a.empty() && !b.empty() && base_name(a[0]) != base_name(b[0]))
    problem = fmt::format("reference {} ran another program ({}; this run: {})", ref.path,
                          base_name(b[0]), base_name(a[0]));
  else if (!a.empty() && !b.empty() && !(differs = first_difference(a, b, decomposition)).empty())
    problem = fmt::format("reference {} ran other arguments: {}", ref.path, differs);
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
    check_reference(x->experiment(), *x->reference(), o.force, o.decomposition);
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
  opts.pe_own_cells = o.pe_own_cells;
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
