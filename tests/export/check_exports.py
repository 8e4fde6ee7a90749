#!/usr/bin/env python3
"""Integration checks of scalea export / report --html / diff / findings (tests/export/).

  check_exports.py --scalea BIN --tool LIB --app APP [--sampled-app APP] [--runs RUNS]
                   --workdir DIR CHECK

CHECK `runs` produces the experiments (export_app at p = 1, 2, 4 under the real OMPT tool) in
RUNS (default: DIR); every other check writes into DIR, its own directory (emptied first unless
it is RUNS), and reads them back with the format's real consumer where one is installed (python csv and
json, jq, Graphviz dot, headless Chromium, Hatchet or Extra-P when importable) and else checks the
documented structure. The checks of call-path samples (csv-sampled, hatchet_sampled) run
apps/omp/sampled (--sampled-app), whose functions use known CPU time, themselves.
Exit 0 = pass, 1 = fail, 77 = skipped (consumer not installed).
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testdir  # noqa: E402  (tests/testdir.py)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extrap_reader  # noqa: E402  (Extra-P's --json reader, followed)

X_MS = "40"  # planted unit of export_app (ms)
CLASSES = ["data_movement", "synchronization", "control_of_parallelism",
           "additional_computation", "loss_of_parallelism", "unidentified"]
SKIP = 77


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def run(args, ok=(0,), **kw):
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    if p.returncode not in ok:
        raise Fail(f"{' '.join(map(str, args))} exited {p.returncode}\nstdout: {p.stdout[-2000:]}\n"
                   f"stderr: {p.stderr[-2000:]}")
    return p


class Ctx:
    def __init__(self, a):
        self.scalea, self.tool, self.app, self.work = a.scalea, a.tool, a.app, a.workdir
        self.sampled_app = a.sampled_app
        self.use_runs(a.runs or a.workdir)

    def use_runs(self, runs):
        self.runs = runs
        self.exp = {p: os.path.join(runs, f"p{p}") for p in (1, 2, 4)}

    def scalea_run(self, *args, ok=(0,)):
        return run([self.scalea, *map(str, args)], ok=ok)

    def out(self, name):
        return os.path.join(self.work, name)


def app_line(pattern):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_app.c")
    with open(src) as f:
        for i, line in enumerate(f, 1):
            if pattern in line:
                return i
    raise Fail(f"no '{pattern}' in export_app.c")


# --- the experiments -------------------------------------------------------------------------

def do_runs(c):
    os.makedirs(c.runs, exist_ok=True)
    for p, d in c.exp.items():
        shutil.rmtree(d, ignore_errors=True)
        env = dict(os.environ, OMP_NUM_THREADS=str(p), OMP_TOOL_LIBRARIES=c.tool, SCALEA_OUTPUT=d)
        run([c.app, X_MS], env=env)
        check(os.path.isfile(os.path.join(d, "meta.json")), f"no experiment written at {d}")
    print("experiments:", ", ".join(c.exp.values()))


# --- csv -------------------------------------------------------------------------------------

def do_csv(c):
    f = c.out("p4.csv")
    c.scalea_run("export", "--format", "csv", "-r", c.exp[1], "-o", f, c.exp[4])
    with open(f, newline="") as fh:
        rows = list(csv.DictReader(fh))
    check(rows, "csv has no rows")
    for col in ["path", "kind", "source", "rank", "thread", "time", "T_p", "T_s", "T_o", *CLASSES]:
        check(col in rows[0], f"csv lacks column {col}")
    for r in rows:
        # A value that rounds to 0 is written 0, never -0.000000000 (output/text.hpp, fixed).
        check(not any(re.fullmatch(r"-0\.0+", v or "") for v in r.values()),
              f"a negative zero in {r}")
        total = sum(float(r[k]) for k in CLASSES)
        check(abs(total - float(r["T_o"])) < 1e-6, f"classes do not sum to T_o in {r['path']}")
        check(float(r["time"]) <= float(r["T_p"]) + 1e-6, f"thread time > T_p in {r['path']}")
    loop = [r for r in rows if r["kind"] == "loop"]
    check(sorted(int(r["thread"]) for r in loop) == [0, 1, 2, 3],
          f"loop rows should be one per thread 0..3, got {[r['thread'] for r in loop]}")
    print(f"csv: {len(rows)} rows (region x thread), classes sum to T_o on every row")
    check_output_file(c, f)


def check_output_file(c, f):
    """-o FILE again: the file (written through a temporary file renamed over it) keeps its
    permissions; a symbolic link is written in place, never replaced (as /dev/null would be: not
    tried here, a mistake would replace the machine's)."""
    with open(f, "rb") as fh:
        first = fh.read()
    os.chmod(f, 0o600)
    args = ["export", "--format", "csv", "-r", c.exp[1], c.exp[4], "-o"]
    c.scalea_run(*args, f)
    check(os.stat(f).st_mode & 0o777 == 0o600, f"-o {f} again: mode {os.stat(f).st_mode:o}")
    link = c.out("p4-link.csv")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(f, link)
    c.scalea_run(*args, link)
    check(os.path.islink(link), f"-o {link}: the symbolic link was replaced")
    with open(f, "rb") as fh:
        check(fh.read() == first, "-o FILE again, or through a link, wrote something else")
    left = [n for n in os.listdir(c.work) if n.startswith("p4.csv.") or n.startswith("p4-link.csv.")]
    check(not left, f"temporary files left beside the output: {left}")


# --- json ------------------------------------------------------------------------------------

def do_json(c):
    f = c.out("p4.json")
    c.scalea_run("export", "--format", "json", "-r", c.exp[1], "-o", f, c.exp[4])
    with open(f) as fh:
        doc = json.load(fh)
    check(doc.get("schema") == "scalea-report/1", "wrong schema")
    rep = json.loads(c.scalea_run("report", c.exp[4], "-r", c.exp[1], "--format", "json").stdout)
    check(set(doc) == set(rep), f"export keys {sorted(doc)} != report keys {sorted(rep)}")
    check([r["path"] for r in doc["regions"]] == [r["path"] for r in rep["regions"]],
          "export and report list different regions")
    for a, b in zip(doc["regions"], rep["regions"]):
        check(set(a) == set(b), f"region keys differ: {sorted(set(a) ^ set(b))}")
        check(abs(a["time"] - b["time"]) < 1e-12, f"time differs in {a['path']}")
        ov = a["overheads"]
        check(abs(sum(ov[k] for k in CLASSES) - ov["total"]) < 1e-9, "classes != total")
    check(isinstance(doc["findings"], list) and doc["findings"], "no findings in the json export")
    if shutil.which("jq"):
        n = run(["jq", "-e", ".regions | length", f]).stdout.strip()
        check(int(n) == len(doc["regions"]), "jq sees a different region count")
        print(f"json: jq reads {n} regions")
    print(f"json: {len(doc['regions'])} regions, same keys and values as scalea report --format json")


# --- dot -------------------------------------------------------------------------------------

def do_dot(c):
    f = c.out("p4.dot")
    c.scalea_run("export", "--format", "dot", "-r", c.exp[1], "-o", f, c.exp[4])
    text = open(f).read()
    check(text.startswith("digraph"), "not a digraph")
    nodes = re.findall(r"^  n(\d+) \[", text, re.M)
    rep = json.loads(c.scalea_run("report", c.exp[4], "--format", "json").stdout)
    check(len(nodes) == len(rep["regions"]), f"{len(nodes)} dot nodes, {len(rep['regions'])} regions")
    check("fillcolor=\"#fc9272\"" in text, "no node coloured as synchronization")
    if not shutil.which("dot"):
        print("SKIP: Graphviz dot not installed; structure checked only")
        return SKIP
    svg = run(["dot", "-Tsvg", f]).stdout
    drawn = svg.count('class="node"')
    check("<svg" in svg and drawn >= len(nodes), "dot -Tsvg drew too few nodes")
    print(f"dot: {len(nodes)} nodes, dot -Tsvg renders {drawn} node groups")


# --- hatchet ---------------------------------------------------------------------------------

def read_literal(roots):
    """What hatchet.readers.literal_reader.LiteralReader requires: a list of root dicts, each with
    'frame' (dict with 'name' and 'type'), 'metrics' (dict of numbers, '(inc)' in the name marks
    inclusive ones; the metric columns are taken from one node, so every node must have the same
    keys) and optional 'children' (list of such dicts). Returns the node rows."""
    check(isinstance(roots, list) and roots, "hatchet literal must be a non-empty list of roots")
    rows, keys = [], None

    def visit(node, depth):
        nonlocal keys
        check(isinstance(node, dict), "node is not an object")
        fr, m = node.get("frame"), node.get("metrics")
        check(isinstance(fr, dict) and isinstance(fr.get("name"), str) and fr["name"],
              "node without frame.name")
        check(isinstance(fr.get("type"), str), "node without frame.type")
        check(isinstance(m, dict) and "time (inc)" in m and "time" in m, "node without time metrics")
        check(all(isinstance(v, (int, float)) for v in m.values()), "non-numeric metric")
        keys = keys or set(m)
        check(set(m) == keys, "nodes have different metric keys")
        check(m["time (inc)"] + 1e-9 >= m["time"], "inclusive time below exclusive time")
        rows.append((depth, fr["name"], m))
        kids = node.get("children", [])
        check(isinstance(kids, list), "children is not a list")
        check(sum(k["metrics"]["time"] for k in kids) <= m["time (inc)"] * 4 + 1e-6,
              "children far exceed parent")
        for k in kids:
            visit(k, depth + 1)

    for r in roots:
        visit(r, 0)
    return rows


def do_hatchet(c):
    f = c.out("p4.hatchet.json")
    c.scalea_run("export", "--format", "hatchet", "-r", c.exp[1], "-o", f, c.exp[4])
    with open(f) as fh:
        roots = json.load(fh)
    rows = read_literal(roots)
    rep = json.loads(c.scalea_run("report", c.exp[4], "--format", "json").stdout)
    regions = [r for r in rows if not r[2].get("sampled")]
    check(len(regions) == len(rep["regions"]), "hatchet region node count != region count")
    try:
        import hatchet  # noqa: F401  (PyPI only; used when present)
    except ImportError:
        print(f"hatchet: {len(rows)} nodes match Hatchet's literal format (hatchet not installed: "
              "structure checked against hatchet/readers/literal_reader.py)")
        return 0
    gf = hatchet.GraphFrame.from_literal(roots)
    check(len(gf.dataframe) == len(rows), "Hatchet read a different node count")
    print(f"hatchet: GraphFrame.from_literal read {len(gf.dataframe)} nodes")


# --- call-path samples: csv-sampled and hatchet (apps/omp/sampled.c) ---------------------------

SAMPLED_MS = "200"  # apps/omp/sampled's unit: serial_work and work_a run 200 ms of CPU, the others 100
SAMPLED_CSV = ["path", "kind", "label", "source", "sampled", "function", "module", "location", "samples", "own",
               "own_error", "self", "on_stack", "region_cpu", "share"]


def sampled_line(marker):
    """sampled.c:N of the line of apps/omp/sampled.c marked /* MARKER */."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "apps", "omp", "sampled.c")
    with open(src) as f:
        return next(f"sampled.c:{i}" for i, line in enumerate(f, 1) if f"/* {marker} */" in line)


class Sampled:
    """apps/omp/sampled run under the tool (sampling is on by default): its experiment, the CPU
    time each planted function used as its thread measured it (truth), and the period."""

    def __init__(self, c):
        check(c.sampled_app, "--sampled-app is not given")
        self.exp = c.out("sampled")
        shutil.rmtree(self.exp, ignore_errors=True)
        out = c.scalea_run("run", "-q", "-o", self.exp, "--", c.sampled_app, SAMPLED_MS).stdout
        self.truth = {m[1]: float(m[2]) for m in re.finditer(r"^truth (\w+) ([0-9.]+)$", out, re.M)}
        check(len(self.truth) == 4, f"the program printed no truth: {out[-500:]}")
        with open(os.path.join(self.exp, "meta.json")) as f:
            self.period = json.load(f)["sampling"]["period_ns"] * 1e-9
        check(self.period > 0, "sampling was off")

    def near(self, got, key, what):
        """Within 10% of the truth, or two periods when that is more (tests/groundtruth's
        tolerance for sampled CPU time)."""
        want = self.truth[key]
        check(abs(got - want) <= max(0.1 * want, 2 * self.period),
              f"{what}: sampled {got:.4f} s of CPU time, the program measured {want:.4f} s")


def do_csv_sampled(c):
    """scalea export -f csv-sampled: each region's sampled functions and lines, the planted
    functions' own CPU time within the tolerance, the regions' CSV untouched."""
    s = Sampled(c)
    f = c.out("sampled.csv")
    c.scalea_run("export", "--format", "csv-sampled", "-o", f, s.exp)
    with open(f, newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    check(reader.fieldnames == SAMPLED_CSV, f"columns {reader.fieldnames}")
    for r in rows:
        check(r["sampled"] in ("function", "line"), f"sampled is {r['sampled']!r}")
        own, n = float(r["own"]), float(r["samples"])
        check(own > 0 and n > 0 and abs(float(r["own_error"]) - own / n ** 0.5) < 1e-6, f"own, samples, error: {r}")
        close_enough(float(r["share"]), own / float(r["region_cpu"]), 1e-5, f"share of {r}")
        check((r["self"] == "") == (r["sampled"] == "line"), f"self is for functions only: {r}")
    places = [(r["path"], r["function"], r["module"], r["location"]) for r in rows if r["sampled"] == "line"]
    check(len(set(places)) == len(places), "a function has two line rows at one location")
    fn = {(r["kind"], r["function"]): r for r in rows if r["sampled"] == "function"}
    at = {(r["kind"], r["location"]): r for r in rows if r["sampled"] == "line"}
    # The serial code in the program's row; each thread's function in the parallel region's. The
    # program measured each function with what it calls (its clock reads, in a function of their
    # own): its time on the stack.
    s.near(float(fn[("program", "serial_work")]["on_stack"]), "cpu_serial", "serial_work in main")
    s.near(float(fn[("program", "inlined_work")]["on_stack"]), "cpu_inlined", "inlined_work in main")
    s.near(float(fn[("parallel", "work_a")]["on_stack"]), "cpu_a", "work_a in the parallel region")
    s.near(float(fn[("parallel", "work_b")]["on_stack"]), "cpu_b", "work_b in the parallel region")
    check(("program", "work_a") not in fn, "the parallel region's work_a is in the program's row")
    check(fn[("program", "inlined_work")]["location"] == sampled_line("INLINED_LOOP"),
          f"inlined_work's hottest line: {fn[('program', 'inlined_work')]['location']}")
    line = at.get(("program", sampled_line("SERIAL_LOOP")))
    check(line and line["function"] == "serial_work", f"no line row {sampled_line('SERIAL_LOOP')} of serial_work")
    check(line["own"] == fn[("program", "serial_work")]["own"], "serial_work's own time is not all at its line")
    # The planted shares: work_a ran twice as long as work_b (10% of each, as above).
    a, b = (float(fn[("parallel", f)]["on_stack"]) for f in ("work_a", "work_b"))
    want = s.truth["cpu_a"] / s.truth["cpu_b"]
    check(abs(a / b - want) <= 0.2 * want, f"work_a / work_b {a / b:.2f}, the program's {want:.2f}")
    # A region's functions add up to its sampled CPU, a function's lines to the function; the
    # region's figure is the JSON report's.
    rep = json.loads(c.scalea_run("report", s.exp, "--format", "json").stdout)
    cpu = {r["path"]: r["cpu_s"] for r in rep["sampled"]["regions"]}
    for path in {r["path"] for r in rows}:
        mine = [r for r in rows if r["path"] == path]
        close_enough(sum(float(r["own"]) for r in mine if r["sampled"] == "function"), float(mine[0]["region_cpu"]),
                     1e-6, f"the functions of {path}")
        close_enough(float(mine[0]["region_cpu"]), cpu.get(path, -1), 1e-6, f"{path}'s sampled CPU (JSON report)")
        for r in mine:
            if r["sampled"] == "function":
                lines = [x for x in mine if x["sampled"] == "line" and x["function"] == r["function"]
                         and x["module"] == r["module"]]
                close_enough(sum(float(x["own"]) for x in lines), float(r["own"]), 1e-6, f"lines of {r['function']}")
    # The regions' CSV is as before: no sampled row, and its paths are the join key.
    regions = c.out("sampled.regions.csv")
    c.scalea_run("export", "--format", "csv", "-o", regions, s.exp)
    with open(regions, newline="") as fh:
        reg = list(csv.DictReader(fh))
    check(not {r["function"] for r in rows if r["sampled"] == "function"} & {r["label"] for r in reg},
          "a sampled function is a row of the regions' CSV")
    check({r["path"] for r in rows} <= {r["path"] for r in reg}, "a sampled row's path is no region's path")
    print(f"csv-sampled: {len(rows)} rows in {len(cpu)} regions; serial_work "
          f"{float(fn[('program', 'serial_work')]['on_stack']):.3f} s (measured {s.truth['cpu_serial']:.3f}), "
          f"work_a {a:.3f} s (measured {s.truth['cpu_a']:.3f})")


def close_enough(a, b, tol, what):
    check(abs(a - b) <= tol, f"{what}: {a} vs {b}")


def do_hatchet_sampled(c):
    """Hatchet: each region's sampled functions are children of its node (type `sampled
    function`, metric `sampled` 1), their lines below them; the planted functions' CPU time
    within the tolerance; the regions' metrics and T_o = sum of the classes untouched."""
    s = Sampled(c)
    f = c.out("sampled.hatchet.json")
    c.scalea_run("export", "--format", "hatchet", "-o", f, s.exp)
    with open(f) as fh:
        roots = json.load(fh)
    read_literal(roots)
    check("sampled" in roots[0]["metrics"], "the nodes have no `sampled` metric: no samples exported")
    rep = json.loads(c.scalea_run("report", s.exp, "--format", "json").stdout)
    nodes, regions = [], []

    def visit(node, parent):
        m, fr = node["metrics"], node["frame"]
        nodes.append((node, parent))
        kids = node["children"]
        if m["sampled"]:
            check(fr["type"] in ("sampled function", "sampled line"), f"a sampled node of type {fr['type']}")
            check(all(m[k] == 0 for k in ["time (inc)", "time", "visits", "T_o (inc)"] + [k + " (inc)" for k in CLASSES]),
                  f"a sampled node with a region's metrics: {fr}")
            above = parent["frame"]["type"] if parent else None
            check(above == "sampled function" if fr["type"] == "sampled line" else
                  (parent is not None and not parent["metrics"]["sampled"]), f"{fr} below {above}")
            check(all(k["frame"]["type"] == "sampled line" for k in kids), f"{fr}: its children")
        else:
            regions.append(node)
            check(abs(sum(m[k + " (inc)"] for k in CLASSES) - m["T_o (inc)"]) < 1e-9, f"{fr}: classes != T_o")
            check(abs(m["cpu"] + sum(k["metrics"]["cpu (inc)"] for k in kids) - m["cpu (inc)"]) < 1e-9,
                  f"{fr['name']}: cpu (inc) is not cpu + the children's")
        for k in kids:
            visit(k, node)

    for r in roots:
        visit(r, None)
    check(len(regions) == len(rep["regions"]), f"{len(regions)} region nodes, {len(rep['regions'])} regions")
    for got, want in zip(sorted(n["metrics"]["T_o (inc)"] for n in regions),
                         sorted(r["overheads"]["total"] for r in rep["regions"])):
        close_enough(got, want, 1e-9, "the regions' T_o (the JSON report's)")

    def sampled_below(kind, name):
        return next((n for n, p in nodes if n["frame"]["name"] == name and p is not None
                     and p["frame"]["type"] == kind and n["metrics"]["sampled"]), None)
    for kind, name, key in [("program", "serial_work", "cpu_serial"), ("program", "inlined_work", "cpu_inlined"),
                            ("parallel", "work_a", "cpu_a"), ("parallel", "work_b", "cpu_b")]:
        n = sampled_below(kind, name)
        check(n is not None and n["frame"]["type"] == "sampled function", f"no sampled function {name} below the {kind}")
        m = n["metrics"]
        s.near(m["cpu on stack"], key, f"{name} below the {kind}")
        check(0 < m["cpu (inc)"] <= m["cpu on stack"] + 1e-9, f"{name}: own time {m}")
        check(m["samples (inc)"] > 0 and abs(m["cpu error (inc)"] - m["cpu (inc)"] / m["samples (inc)"] ** 0.5) < 1e-9,
              f"{name}: samples and error {m}")
        check(m["cpu on stack"] + 1e-9 >= m["cpu self"] and m["cpu on stack"] > 0, f"{name}: self and on stack {m}")
    check(sampled_below("program", "work_a") is None, "work_a is below the program, not its parallel region")
    serial = sampled_below("program", "serial_work")
    line = next((k for k in serial["children"] if k["frame"]["name"] == sampled_line("SERIAL_LOOP")), None)
    check(line is not None and line["frame"]["type"] == "sampled line", f"serial_work's line: {serial['children']}")
    close_enough(line["metrics"]["cpu (inc)"], serial["metrics"]["cpu (inc)"], 1e-9, "serial_work's line")
    try:
        import hatchet  # noqa: F401  (PyPI only; used when present)
    except ImportError:
        print(f"hatchet_sampled: {len(regions)} regions and {len(nodes) - len(regions)} sampled nodes; serial_work "
              f"{serial['metrics']['cpu on stack']:.3f} s (measured {s.truth['cpu_serial']:.3f}); structure checked "
              "against hatchet/readers/literal_reader.py (hatchet not installed)")
        return 0
    gf = hatchet.GraphFrame.from_literal(roots)
    df = gf.dataframe
    check(len(df) == len(nodes) and int(df["sampled"].sum()) == len(nodes) - len(regions),
          "Hatchet read other nodes or sampled markers")
    print(f"hatchet_sampled: GraphFrame.from_literal read {len(df)} nodes, {int(df['sampled'].sum())} sampled")


# --- extrap ----------------------------------------------------------------------------------

def read_extrap(f, ps):
    """The file read as `extrap --json FILE` reads it (extrap_reader.py follows Extra-P 4.2.5's
    reader; Extra-P itself reads it too when importable), with parameter p at the values `ps` and
    every callpath and metric measured at each."""
    try:
        exp = extrap_reader.read(f)
    except extrap_reader.FormatError as e:
        raise Fail(f"Extra-P's reader rejects {f}: {e}")
    check(exp.parameters == ["p"], f"parameters {exp.parameters}, want ['p']")
    check(sorted(c[0] for c in exp.coordinates) == sorted(ps),
          f"points at p = {sorted(exp.coordinates)}, want {ps}")
    check("time" in exp.metrics and all(k in exp.metrics for k in CLASSES), f"metrics {exp.metrics}")
    try:
        from extrap.fileio.file_reader.json_file_reader import JsonFileReader
    except ImportError:
        return exp
    real = JsonFileReader().read_experiment(f)
    check(len(real.callpaths) == len(exp.callpaths), "Extra-P read a different callpath count")
    print(f"extrap: Extra-P itself read {len(real.callpaths)} callpaths")
    return exp


def do_extrap(c):
    f = c.out("omp.jsonl")
    c.scalea_run("export", "--format", "extrap", "-o", f, c.exp[1], c.exp[2], c.exp[4])
    order = []
    with open(f) as fh:
        for ln, line in enumerate(fh):
            d = json.loads(line)  # one JSON object per line, nothing else
            check(set(d) == {"params", "callpath", "metric", "value"}, f"line {ln}: keys {sorted(d)}")
            if d["callpath"] not in order:
                order.append(d["callpath"])
    # Parents first, as a reader of the tree expects (Extra-P builds it level by level).
    for i, cp in enumerate(order):
        parts = cp.split("->")
        if len(parts) > 1:
            check("->".join(parts[:-1]) in order[:i], f"parent of {cp} is not listed before it")
    exp = read_extrap(f, [1, 2, 4])
    print(f"extrap: {len(exp.callpaths)} callpaths x {len(exp.metrics)} metrics at p = 1, 2, 4 "
          "read as Extra-P's --json reader reads them")


def do_extrap_study(c):
    """A study exported in one command: its completed runs, repetitions as Extra-P's
    repetitions, against the study's reference; the same lines as its runs named one by one."""
    study = c.out("study")
    c.scalea_run("study", "-o", study, "--threads", "1,2,4", "--repeat", "2", "--", c.app, "10")
    f = c.out("study.jsonl")
    c.scalea_run("export", "--format", "extrap", "-o", f, study)
    exp = read_extrap(f, [1, 2, 4])
    for key, points in exp.measurements.items():
        check(all(len(v) == 2 for v in points.values()), f"{key}: repetitions {points}")
    program = exp.callpaths[0]
    check("->" not in program, f"first callpath {program} is not the program")
    # The study's reference is one of the two p = 1 runs: its program has no overhead.
    check(0.0 in exp.measurements[(program, "overhead")][(1,)],
          f"p = 1 overheads {exp.measurements[(program, 'overhead')][(1,)]}: no run is the reference")
    runs = [os.path.join(study, "runs", f"t{p}-r1-rep{r}") for p in (1, 2, 4) for r in (1, 2)]
    ref = c.out("ref.jsonl")
    c.scalea_run("export", "--format", "extrap", "-o", ref, "-r", runs[0], *runs)
    again = c.out("study-ref.jsonl")
    c.scalea_run("export", "--format", "extrap", "-o", again, "-r", runs[0], study)
    with open(ref) as a, open(again) as b:
        check(a.read() == b.read(), "the study exported with -r differs from its runs one by one")
    helptext = c.scalea_run("export", "--help").stdout
    check("extrap --json " in helptext and "--json-lines" not in helptext,
          "export --help does not show Extra-P's invocation (extrap --json FILE)")
    for args, says in ((["-f", "csv", study], "extrap or html"),
                       (["-f", "extrap", study, runs[0]], "give it alone"),
                       (["-f", "extrap", "-p", "4", study], "-p does not apply")):
        p = c.scalea_run("export", *args, ok=(2,))
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and says in lines[0], f"export {args}: stderr {p.stderr!r}")
    print(f"extrap: study of 6 runs exported in one command, {len(exp.callpaths)} callpaths, "
          "2 repetitions at p = 1, 2, 4")


# --- html ------------------------------------------------------------------------------------

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def chrome(binary, *args):
    with tempfile.TemporaryDirectory() as prof:
        return run([binary, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--no-first-run", f"--user-data-dir={prof}", *args], timeout=90)


def do_html(c):
    """The page's structure and its draw in Chromium (--dump-dom); tests/html drives the panes."""
    f = c.out("p4.html")
    c.scalea_run("export", "--format", "html", "-r", c.exp[1], "-o", f, c.exp[4])
    f2 = c.out("p4.report.html")
    p = c.scalea_run("report", c.exp[4], "-r", c.exp[1], "--html", f2)
    check(os.path.getsize(f2) > 1000 and "findings" in p.stdout, "report --html wrote nothing")
    html = open(f).read()
    # Self-contained: no external scripts, styles, images or fonts.
    ext = re.findall(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", html) + \
        re.findall(r"@import|url\(\s*['\"]?https?:", html)
    check(not ext, f"external references: {ext[:3]}")
    data = json.loads(re.search(r'<script type="application/json" id="scalea-data">(.*?)</script>',
                                html, re.S).group(1))
    rep = json.loads(c.scalea_run("export", "--format", "json", "-r", c.exp[1], c.exp[4]).stdout)
    n_regions = len(rep["regions"])
    check([(r["id"], r["label"], r["to"]) for r in data["regions"]] ==
          [(r["id"], r["label"], r["overheads"]["total"]) for r in rep["regions"]],
          "the page's regions are not the JSON report's")
    check([x["text"] for x in data["findings"]] == [x["text"] for x in rep["findings"]],
          "the page's findings are not the JSON report's")
    b = chromium()
    if not b:
        print("SKIP: chromium is not installed (apt-get install chromium); static checks passed")
        return SKIP
    dom = chrome(b, "--dump-dom", "file://" + os.path.abspath(f)).stdout
    check('data-ready="1"' in dom, "the page's script did not finish in Chromium")
    cells = re.findall(r'<div class="fl[^"]*" data-id="(\d+)"', dom)
    check(len(cells) == n_regions, f"Chromium draws {len(cells)} icicle cells, want {n_regions}")
    flat = re.findall(r'<tr data-row="\d+" data-id="(\d+)"', dom)
    check(len(flat) >= 1, "the flat profile is empty")
    check(re.search(r'<span class="seg synchronization"', dom), "no synchronization class bars")
    graphviz = 'id="region-graph"' in dom
    check(graphviz == bool(shutil.which("dot")), "region graph SVG iff Graphviz is installed")
    check(len(re.findall(r'<li class="finding"', dom)) >= 1, "no findings rendered")
    for label in [r["label"] for r in rep["regions"]]:
        check(label.replace("&", "&amp;") in dom, f"region {label} missing in the DOM")
    shot = c.out("p4.png")
    chrome(b, "--window-size=1400,1000", f"--screenshot={shot}", "file://" + os.path.abspath(f))
    check(os.path.getsize(shot) > 10000, "screenshot is empty")
    print(f"html: Chromium draws {len(cells)} icicle cells, the flat profile, the class bars, "
          f"{'the Graphviz region graph' if graphviz else 'no region graph (no Graphviz)'}; screenshot {shot}")


# --- diff ------------------------------------------------------------------------------------

def do_diff(c):
    doc = json.loads(c.scalea_run("diff", c.exp[1], c.exp[4], "--format", "json").stdout)
    check(doc["schema"] == "scalea-diff/1", "wrong diff schema")
    regs = doc["regions"]
    check(len(regs) >= 4, f"only {len(regs)} matched regions")
    changes = [abs(r["change"]) for r in regs]
    check(changes == sorted(changes, reverse=True), "diff not sorted by absolute change")
    for r in regs:
        check(abs(r["b"]["time"] - r["a"]["time"] - r["change"]) < 1e-9, "change != B - A")
    loop = [r for r in regs if "/loop" in r["path"]]
    check(loop, "the loop is not matched between p = 1 and p = 4")
    # At p = 4 the loop waits for its slowest iteration: synchronization moved most.
    par = [r for r in regs if r["path"].endswith(f"parallel@export_app.c:{app_line('omp parallel')}")]
    check(par and par[0]["moved_most"]["class"] == "synchronization",
          f"parallel region: class moved most {par[0]['moved_most'] if par else None}")
    check("only_in_a" in doc and "only_in_b" in doc, "only-in lists missing")
    text = c.scalea_run("diff", c.exp[1], c.exp[4]).stdout
    check("largest change first" in text and "synchronization" in text, "text diff incomplete")
    print(f"diff: {len(regs)} matched regions, sorted by |change|; "
          f"{len(doc['only_in_a'])} only in A, {len(doc['only_in_b'])} only in B")
    print("\n".join(text.splitlines()[:8]))


# --- findings --------------------------------------------------------------------------------

def do_findings(c):
    doc = json.loads(c.scalea_run("report", c.exp[4], "-r", c.exp[1], "--format", "json").stdout)
    fs = doc["findings"]
    # At most the default 5: findings below the floor (1 ms, 1% of the program) are not made.
    check(3 <= len(fs) <= 5, f"{len(fs)} findings, want the 3 planted and at most the default 5")
    secs = [f["seconds"] for f in fs]
    check(secs == sorted(secs, reverse=True), "findings not ranked")
    for f in fs:
        for k in ("path", "class", "subclass", "seconds", "percent", "location", "hint", "text"):
            check(k in f, f"finding lacks {k}")
        check(f["class"] in CLASSES, f"unknown class {f['class']}")
    x = float(X_MS) / 1000
    loop_line = app_line("omp for")
    barrier = [f for f in fs if f["class"] == "synchronization" and f["subclass"] == "barrier"]
    check(barrier, "the planted barrier wait is not among the findings")
    b = barrier[0]
    # Thread i sleeps (i+1)X/2: barrier waits sum to 3X over 4 PEs = 0.75 X of wall time.
    check(0.5 * x < b["seconds"] < 1.2 * x, f"barrier finding {b['seconds']:.4f} s, planted {0.75 * x}")
    # The loop has 4 iterations of unequal sleeps for 4 threads: no schedule balances them; the
    # advice names the loop's directive and splitting the work, never a schedule.
    check(f"the loop (export_app.c:{loop_line}) has only 4 iterations for 4 threads" in b["hint"] and
          "try schedule(" not in b["hint"], f"barrier hint: {b['hint']}")
    check(f"export_app.c:{loop_line}" in b["text"], f"barrier finding does not name the loop: {b['text']}")
    # The waits at the end of the region come from the critical section before it (threads leave
    # it one after another), not from uneven work: the hint says so when that barrier is listed.
    for f in barrier[1:]:
        if "join" in f["path"]:
            check("queued at the critical" in f["hint"] and "dynamic" not in f["hint"],
                  f"join barrier hint: {f['hint']}")
    serial = [f for f in fs if f["subclass"] == "unparallelized"]
    check(serial and "parallelize" in serial[0]["hint"], "serial section not found")
    crit = [f for f in fs if f["subclass"] == "critical"]
    check(crit and "atomic" in crit[0]["hint"], "critical contention not found")
    two = json.loads(c.scalea_run("report", c.exp[4], "--format", "json", "--findings", "2").stdout)
    check(len(two["findings"]) == 2, "--findings 2 did not give 2")
    text = c.scalea_run("report", c.exp[4], "-r", c.exp[1]).stdout
    check("findings (largest overheads first):" in text, "text report has no findings")
    print("\n".join(text[text.index("findings (largest"):].splitlines()[:11]))


# --- errors ----------------------------------------------------------------------------------

def do_errors(c):
    missing = c.out("no-such-experiment")
    cases = [
        (["export", "--format", "csv", missing], "missing experiment"),
        (["export", "--format", "yaml", c.exp[4]], "unknown format"),
        (["export", "--format", "csv", "-o", "/nonexistent-dir/x.csv", c.exp[4]], "unwritable -o"),
        (["export", "--format", "csv", c.exp[1], c.exp[4]], "two experiments for csv"),
        (["export", "--format", "html", "-o", "/proc/version", c.exp[4]], "unwritable html"),
        (["report", c.exp[4], "--html", "/nonexistent-dir/r.html"], "report --html unwritable"),
        (["diff", c.exp[1], missing], "diff with a missing experiment"),
        (["diff", c.exp[1], c.exp[4], "--format", "xml"], "diff unknown format"),
    ]
    for args, what in cases:
        p = c.scalea_run(*args, ok=(2,))
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and lines[0].startswith("scalea "), f"{what}: stderr {p.stderr!r}")
        print(f"{what}: exit 2, {lines[0]}")


# --- formats: every format of `scalea export` has its check here ------------------------------

def do_formats(c):
    listed = c.scalea_run("export", "--list-formats").stdout.split("\n")
    names = [line.split("\t")[0] for line in listed if line.strip()]
    check(names, "scalea export --list-formats listed nothing")
    cmake = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests.cmake")).read()
    run_checks = re.search(r"foreach\(check ([^)]*)\)", cmake).group(1).split()
    for name in names:
        check(callable(globals().get("do_" + name.replace("-", "_"))), f"format {name} has no check in check_exports.py")
        check(name in run_checks, f"format {name} is not run by tests/export/tests.cmake")
    help_text = c.scalea_run("export", "--help").stdout
    for name in names:
        check(f"  {name} " in help_text, f"format {name} is not in scalea export --help")
    print("formats: " + ", ".join(names))


SELF_RUN = ("csv-sampled", "hatchet_sampled")  # checks that run their own program


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scalea", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--sampled-app", help="apps/omp/sampled, for the checks of call-path samples")
    ap.add_argument("--runs", help="the experiments of the check `runs` (default: --workdir)")
    ap.add_argument("--workdir", required=True, help="this check's own directory")
    ap.add_argument("check")
    a = ap.parse_args()
    c = Ctx(a)
    fn = globals().get("do_" + a.check.replace("-", "_"))
    if not fn:
        print(f"unknown check {a.check}")
        return 1
    if testdir.fresh_for_check(a.workdir, a.runs, a.check, "p4") and a.check not in SELF_RUN:
        c.use_runs(a.workdir)  # run without the fixture: the experiments made here, in its own directory
        do_runs(c)
    try:
        return fn(c) or 0
    except Fail as e:
        print(f"FAIL ({a.check}): {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
