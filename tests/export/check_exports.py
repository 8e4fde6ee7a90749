#!/usr/bin/env python3
"""Integration checks of scalea export / report --html / diff / findings (tests/export/).

  check_exports.py --scalea BIN --tool LIB --app APP [--runs RUNS] --workdir DIR CHECK

CHECK `runs` produces the experiments (export_app at p = 1, 2, 4 under the real OMPT tool) in
RUNS (default: DIR); every other check writes into DIR, its own directory (emptied first unless
it is RUNS), and reads them back with the format's real consumer where one is installed (python csv and
json, jq, Graphviz dot, headless Chromium, Hatchet or Extra-P when importable) and else checks the
documented structure. Exit 0 = pass, 1 = fail, 77 = skipped (consumer not installed).
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
    check(len(rows) == len(rep["regions"]), "hatchet node count != region count")
    try:
        import hatchet  # noqa: F401  (PyPI only; used when present)
    except ImportError:
        print(f"hatchet: {len(rows)} nodes match Hatchet's literal format (hatchet not installed: "
              "structure checked against hatchet/readers/literal_reader.py)")
        return 0
    gf = hatchet.GraphFrame.from_literal(roots)
    check(len(gf.dataframe) == len(rows), "Hatchet read a different node count")
    print(f"hatchet: GraphFrame.from_literal read {len(gf.dataframe)} nodes")


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
        check(callable(globals().get("do_" + name)), f"format {name} has no check in check_exports.py")
        check(name in run_checks, f"format {name} is not run by tests/export/tests.cmake")
    help_text = c.scalea_run("export", "--help").stdout
    for name in names:
        check(f"  {name} " in help_text, f"format {name} is not in scalea export --help")
    print("formats: " + ", ".join(names))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scalea", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--runs", help="the experiments of the check `runs` (default: --workdir)")
    ap.add_argument("--workdir", required=True, help="this check's own directory")
    ap.add_argument("check")
    a = ap.parse_args()
    c = Ctx(a)
    fn = globals().get("do_" + a.check)
    if not fn:
        print(f"unknown check {a.check}")
        return 1
    if testdir.fresh_for_check(a.workdir, a.runs, a.check, "p4"):
        c.use_runs(a.workdir)  # run without the fixture: the experiments made here, in its own directory
        do_runs(c)
    try:
        return fn(c) or 0
    except Fail as e:
        print(f"FAIL ({a.check}): {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
