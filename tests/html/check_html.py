#!/usr/bin/env python3
"""The HTML report in a real headless Chromium (tests/html/).

  check_html.py --scalea BIN --app EXPORT_APP --omp-app CONSTRUCTS --shapes-app SHAPES --gen DRG_GEN
                [--runs RUNS] --workdir DIR [--shots DIR] [--page PAGE] CHECK

CHECK `runs` makes the experiments under `scalea run` (export_app at p = 1 and 4, apps/omp's
constructs at p = 4, apps/omp's shapes pipeline at p = 1 and 2, a scaling study of export_app)
and a synthetic 1,024-rank experiment (bench/drg's drg_gen); `laptop` checks any page (--page) at
1366 x 768 (scripts/report_screenshots.sh, for NPB LU's page); every other check writes a page with `scalea report --html` or
`scalea export --format html` and drives it through the DevTools protocol (cdp.py): the page
loads with no console error and no network request, the panes react to clicks and keys, and
screenshots of each view are not blank. `runs` writes into RUNS (default: DIR); every other
check reads there and writes into DIR, its own directory (emptied first unless it is RUNS).
Screenshots go to --shots (default: the work directory;
scripts/report_screenshots.sh puts them in docs/img/report/ for docs/report.md).
Exit 0 = pass, 1 = fail, 77 = skipped (Chromium not installed).
"""
import argparse
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_here, os.path.join(_here, "..", "export"), os.path.join(_here, "..")]
import cdp  # noqa: E402
import testdir  # noqa: E402  (tests/testdir.py)
from check_exports import Fail, check, chromium, run  # noqa: E402

SKIP = 77
X_MS = "40"  # export_app's planted unit (ms)
# apps/omp/shapes' wavefront, shaped as NPB LU's (stages polling the previous one with flush):
# 4 stages x 4 steps of 20 ms, `schedule(static, 1)`.
PIPE_ARGS = ["pipeline", "4", "4", "20"]
PIPE_STEP_S = 0.020
LAPTOP = (1366, 768)  # a common laptop viewport: the "first screen" of the issue (21)
CLASSES = ["data_movement", "synchronization", "control_of_parallelism",
           "additional_computation", "loss_of_parallelism", "unidentified"]


class Skip(Exception):
    pass


class Ctx:
    def __init__(self, a):
        self.a = a
        self.work = a.workdir
        self.runs = a.runs or a.workdir
        self.shots = a.shots or a.workdir

    def path(self, name):
        """A file this check writes, in its own directory."""
        return os.path.join(self.work, name)

    def exp(self, name):
        """What the check `runs` made (experiments, pages, truths)."""
        return os.path.join(self.runs, name)

    def scalea(self, *args, ok=(0,), env=None):
        return run([self.a.scalea, *map(str, args)], ok=ok, env=env)

    def shot(self, b, name, **kw):
        """A screenshot of the page (or of one element) that must not be blank: enough pixels
        that are not the white background, and more than a handful of colours."""
        path = os.path.join(self.shots, name)
        data = b.screenshot(path, **kw)
        share, colours = cdp.ink(data)
        check(share > 0.02 and colours > 8,
              f"screenshot {name} looks blank: {share:.1%} non-background pixels, {colours} colours")
        return path, share


def page_data(html_text):
    m = re.search(r'<script type="application/json" id="scalea-data">(.*?)</script>', html_text, re.S)
    check(m, "no scalea-data script element in the page")
    return json.loads(m.group(1))


def static_checks(html_text):
    """Self-contained: no external script, style, image, font or frame, and no URL the page would
    load (namespaces of inline SVG are names, not loads)."""
    ext = re.findall(r"""(?:src|href)\s*=\s*["'](?:https?:|//)""", html_text) + \
        re.findall(r"@import|url\(\s*['\"]?(?:https?:|//)", html_text)
    check(not ext, f"external references: {ext[:3]}")
    check("<script src" not in html_text and "<link" not in html_text, "external script or link")


class Page:
    """A page loaded in a fresh headless Chromium with the network off (`with Page(f) as br`);
    raises Skip when Chromium is not installed."""

    def __init__(self, html_file, width=1400, height=900):
        binary = chromium()
        if not binary:
            raise Skip("chromium is not installed (scripts/setup-debian.sh installs it)")
        self.br = cdp.Browser(binary, width, height)
        try:
            # The network is off: the page must not need it.
            self.br.call("Network.emulateNetworkConditions", offline=True, latency=0,
                         downloadThroughput=-1, uploadThroughput=-1)
            self.br.load_s = self.br.navigate("file://" + os.path.abspath(html_file))
            check(self.br.js("document.documentElement.getAttribute('data-ready')") == "1",
                  "the page's script did not finish drawing")
            no_errors(self.br)
        except BaseException:
            self.br.close()
            raise

    def __enter__(self):
        return self.br

    def __exit__(self, *exc):
        self.br.close()


def no_errors(br):
    errs = br.errors()
    check(not errs, f"console errors: {errs[:3]}")
    reqs = [u for u in br.requests() if not u.startswith(("file:", "data:", "blob:", "about:"))]
    check(not reqs, f"the page asked the network for {reqs[:3]}")


# --- the experiments -------------------------------------------------------------------------

def do_runs(c):
    os.makedirs(c.runs, exist_ok=True)
    for p in (1, 4):
        d = c.exp(f"p{p}")
        shutil.rmtree(d, ignore_errors=True)
        run([c.a.scalea, "run", "-q", "-o", d, "--", c.a.app, X_MS],
            env=dict(os.environ, OMP_NUM_THREADS=str(p)))
    d = c.exp("constructs4")
    shutil.rmtree(d, ignore_errors=True)
    run([c.a.scalea, "run", "-q", "-o", d, "--", c.a.omp_app],
        env=dict(os.environ, OMP_NUM_THREADS="4", OMP_CANCELLATION="true"))
    for p in (1, 2):
        d = c.exp(f"pipe{p}")
        shutil.rmtree(d, ignore_errors=True)
        r = run([c.a.scalea, "run", "-q", "-o", d, "--", c.a.shapes_app, *PIPE_ARGS],
                env=dict(os.environ, OMP_NUM_THREADS=str(p)))
        open(c.exp(f"pipe{p}.truth"), "w").write(r.stdout)
    st = c.exp("export.study")
    shutil.rmtree(st, ignore_errors=True)
    c.scalea("study", "-o", st, "--threads", "1,2,4", "--repeat", "2", "--", c.a.app, "20")
    # 1,024 ranks x 2 threads x 500 call paths (drg_gen: the drg benchmark's generator): the
    # page aggregates 2,048 PEs into 1,024 columns.
    big = c.exp("big")
    shutil.rmtree(big, ignore_errors=True)
    run([c.a.gen, big, "1024", "2", "500"])
    c.scalea("export", "--format", "html", "-o", c.exp("big.html"), big)
    shutil.rmtree(big)  # 140 MB: only the page is kept
    print("experiments:", ", ".join(c.exp(x) for x in ("p1", "p4", "constructs4", "pipe1", "pipe2", "export.study")),
          "and big.html (1,024 ranks x 2 threads x 500 paths)")


# --- an experiment against its reference -----------------------------------------------------

def tree_backgrounds(br):
    return br.js("""Array.from(document.querySelectorAll('#tree .trow[data-id] .val')).map(
        function(e){return e.parentNode.getAttribute('data-id')+'='+getComputedStyle(e).backgroundColor+'/'+e.textContent})""")


def selected(br):
    return br.js("window.scalea.state.region")


def region_by(data, label, kind=None):
    for r in data["regions"]:
        if r["label"].startswith(label) and (kind is None or r["kind"] == kind):
            return r
    raise Fail(f"no region {label} in the page data")


def do_experiment(c):
    f = c.path("pair.html")
    c.scalea("report", c.exp("p4"), "-r", c.exp("p1"), "--html", f)
    text = open(f).read()
    static_checks(text)
    data = page_data(text)
    rep = json.loads(c.scalea("export", "--format", "json", "-r", c.exp("p1"), c.exp("p4")).stdout)
    check(len(data["regions"]) == len(rep["regions"]), "page regions != JSON report regions")
    check([x["text"] for x in data["findings"]] == [x["text"] for x in rep["findings"]],
          "the page's findings are not the JSON report's (find_findings, same context)")
    for r, j in zip(data["regions"], rep["regions"]):
        check(r["id"] == j["id"] and r["to"] == j["overheads"]["total"] and r["tp"] == j["time"],
              f"region {j['path']} differs from the JSON report")
        check(abs(sum(r["c"]) - r["to"]) < 1e-9, f"classes do not sum to T_o in {j['path']}")
    with Page(f) as br:
        # The page builds call paths from the regions' components, as scalea prints them.
        paths = br.js("%s.map(function(i){return window.scalea.path(i)})" % json.dumps([r["id"] for r in rep["regions"]]))
        check(paths == [r["path"] for r in rep["regions"]], f"page paths {paths[:3]} != JSON paths")
        # First screen: the most expensive region and its cause, without scrolling.
        check(all(isinstance(x.get("actionable"), bool) for x in data["findings"]), "findings lack 'actionable'")
        first = first_actionable(data)
        hot = br.js("""(function(){var e=document.getElementById('hot');var b=e.getBoundingClientRect();
            return [e.textContent, b.bottom, window.innerHeight, document.getElementById('flame').getBoundingClientRect().top];})()""")
        check(first["region"] in hot[0] and first["class"] in hot[0], f"first screen lacks finding 1: {hot[0][:200]}")
        check(hot[1] <= hot[2] and hot[3] < hot[2], "the summary or the icicle graph is below the first screen")
        c.shot(br, "report-first-screen.png", scale=0.7)
        flame_cells = br.js("document.querySelectorAll('#flame .fl').length")
        check(flame_cells == len(data["regions"]), f"icicle graph has {flame_cells} cells, {len(data['regions'])} regions")

        # 1. Picking a class re-colours the call tree.
        before = tree_backgrounds(br)
        br.click('#metrics .mrow[data-metric="c1"]')
        after = tree_backgrounds(br)
        check(br.js("window.scalea.state.metric") == "c1", "clicking synchronization did not pick it")
        check(br.js("document.querySelector('#metrics .mrow[aria-selected=true]').getAttribute('data-metric')") == "c1",
              "the metric pane does not mark synchronization")
        check(before != after, "picking synchronization did not re-colour the call tree")
        red = br.js("""getComputedStyle(document.querySelector('#tree .trow[data-id="%d"] .val')).backgroundColor""" %
                    region_by(data, "barrier (implicit)", "barrier_implicit")["id"])
        rgb = [int(x) for x in re.findall(r"\d+", red)[:3]]
        check(rgb[0] > rgb[2] + 30, f"the barrier's synchronization cell is not red: {red}")

        # Shares in the call tree are of the program's T_p whatever the metric: under T_o the
        # program's row shows T_o/T_p, not 100% (a T_o near 0 made shares of it read 1,278%).
        br.click('#metrics .mrow[data-metric="to"]')
        prog = data["regions"][0]
        share = br.js("""document.querySelector('#tree .trow[data-id="%d"] .num:not(.val)').textContent""" % prog["id"])
        check(abs(float(share.rstrip("%")) - 100 * prog["to"] / prog["tp"]) < 0.051,
              f"the program's T_o share is {share}, not T_o/T_p = {100 * prog['to'] / prog['tp']:.1f}%")
        br.click('#metrics .mrow[data-metric="c1"]')

        # 2. Picking a region shows its threads: the loop's 4 PEs, imbalanced by construction.
        loop = region_by(data, "loop", "loop")
        br.click(f'#tree .trow[data-id="{loop["id"]}"]')
        check(selected(br) == loop["id"], "clicking the loop's row did not pick it")
        title = br.js("document.querySelector('#region h3').textContent")
        check(title.startswith("loop"), f"region pane shows {title}")
        bars = br.js("""Array.from(document.querySelectorAll('#pe-bars rect.pe:not(.wait)')).map(
            function(e){return parseFloat(e.getAttribute('height'))})""")
        check(len(bars) == 4, f"{len(bars)} PE bars for the loop, want 4")
        check(max(bars) > 1.5 * min(bars), f"the loop's imbalance is not visible in its bars {bars}")
        x, y = br.center('#pe-bars rect.pe[data-pe="3"]')
        br.mouse(x, y, move_only=True)
        tip = br.js("document.getElementById('tip').hidden ? '' : document.getElementById('tip').textContent")
        check("thread 3" in tip, f"hovering PE 3's bar shows {tip!r}")
        c.shot(br, "report-region-pane.png", selector="#region", scale=0.8)
        system_pane(c, br, data, loop)
        c.shot(br, "report-cube.png", selector="#explore", scale=0.6)
        check("#pragma omp for" in br.js("(document.getElementById('source')||{}).textContent||''"),
              "the loop's source snippet is not shown")

        # 3. The icicle graph: hover shows the six classes, click zooms and picks, Esc zooms out.
        crit = region_by(data, "critical", "critical")
        x, y = br.center(f'#flame .fl[data-id="{crit["id"]}"]')
        br.mouse(x, y, move_only=True)
        tip = br.js("document.getElementById('tip').textContent")
        check(all(k in tip for k in CLASSES), f"icicle tooltip lacks the six classes: {tip[:200]}")
        c.shot(br, "report-flame.png", selector="#flame-sec", scale=0.7)
        br.click(f'#flame .fl[data-id="{crit["id"]}"]')  # the screenshot scrolled the page
        check(selected(br) == crit["id"], "clicking the icicle cell did not pick the critical region")
        check(br.js("window.scalea.state.zoom") == crit["id"], "clicking the icicle cell did not zoom")
        check(br.js("document.querySelectorAll('#flame .fl.anc').length") >= 1, "zoomed graph shows no ancestors")
        br.key("Escape")
        check(br.js("window.scalea.state.zoom") == data["regions"][0]["id"], "Esc did not zoom out")

        # 4. The findings link to their regions.
        br.click('ol.findings li.finding:nth-child(2)')
        check(selected(br) == data["findings"][1]["node"], "finding 2 does not lead to its region")
        check(br.js("document.getElementById('tab-tree').getAttribute('aria-selected')") == "true",
              "a finding does not show the call tree")
        br.js("document.querySelector('ol.findings li.finding:nth-child(3)').focus()")  # as Tab would
        br.key("Enter")
        check(selected(br) == data["findings"][2]["node"], "Enter on finding 3 does not lead to its region")

        # 5. Keyboard in the call tree (focused by a click on a row, as a user does): down moves
        # to the next row, left goes to the parent.
        order = br.js("Array.from(document.querySelectorAll('#tree .trow[data-id]')).map(function(e){return +e.getAttribute('data-id')})")
        br.click(f'#tree .trow[data-id="{order[0]}"]')
        check(br.js("document.activeElement.id") == "tree", "a click on a row does not focus the call tree")
        br.key("ArrowDown")
        check(selected(br) == order[1], "ArrowDown did not pick the next row")
        second = f'#tree .trow[data-id="{order[1]}"]'
        state = lambda: br.js(f"document.querySelector('{second}').getAttribute('aria-expanded')")  # noqa: E731
        check(state() == "true", "the parallel region is not unfolded on the first screen")
        br.key("ArrowLeft")  # an open row folds first, as in a file manager's tree
        check(state() == "false" and selected(br) == order[1], "ArrowLeft did not fold the open row")
        br.key("ArrowRight")
        check(state() == "true", "ArrowRight did not unfold the row")
        br.key("ArrowLeft")
        br.key("ArrowLeft")
        parent = {r["id"]: r["parent"] for r in data["regions"]}[order[1]]
        check(selected(br) == parent, "ArrowLeft on a folded row did not go to its parent")

        # 6. The flat profile: sorting changes the order, the filter filters.
        br.key("2", text="2")
        check(br.js("document.getElementById('panel-flat').hidden") is False, "key 2 did not open the flat profile")
        names = lambda: br.js("Array.from(document.querySelectorAll('#flat tbody tr')).map(function(e){return e.cells[0].textContent})")  # noqa: E731
        col = lambda i: br.js("Array.from(document.querySelectorAll('#flat tbody tr')).map(function(e){return e.cells[%d].textContent})" % i)  # noqa: E731
        by_to = names()
        check(len(by_to) >= 5, f"flat profile has {len(by_to)} rows")
        br.click('#flat th[data-sort="c1"] button')
        by_sync = names()
        check(by_sync != by_to, "sorting by synchronization did not change the order")
        sync = [float(v) if v not in ("-",) else 0.0 for v in col(6)]
        check(sync == sorted(sync, reverse=True), f"not sorted by synchronization, largest first: {sync}")
        br.click('#flat th[data-sort="c1"] button')
        sync_up = [float(v) for v in col(6)]
        check(sync_up == sorted(sync_up), "a second click did not reverse the order")
        br.click('#flat th[data-sort="c1"] button')
        br.key("/", text="/")
        check(br.js("document.activeElement.id") == "filter", "/ did not focus the filter")
        br.type_text("barrier")
        rows = names()
        check(rows and len(rows) < len(by_to) and all("barrier" in r for r in rows),
              f"filter 'barrier' left {rows}")
        c.shot(br, "report-flat.png", selector="#explore", scale=0.6)
        br.key("Escape")
        check(len(names()) == len(by_to), "Esc did not clear the filter")
        br.key("Escape")
        check(br.js("document.activeElement.id") != "filter", "a second Esc did not leave the filter")

        callers_view(c, br, data)

        # 7. The region graph (Graphviz when installed): clicking a box picks its region.
        br.key("4", text="4")
        check(br.js("document.getElementById('panel-graph').hidden") is False, "key 4 did not open the region graph")
        boxes = br.js("""Array.from(document.querySelectorAll('#graph-wrap g.node title')).map(
            function(t){return t.textContent}).filter(function(t){return /^n\\d+$/.test(t)})""")
        if shutil.which("dot"):
            check(len(boxes) == len(data["regions"]), f"region graph has {len(boxes)} region boxes")
            br.js("""Array.from(document.querySelectorAll('#graph-wrap g.node')).filter(function(g){
                return g.querySelector('title').textContent==='n%d'})[0].id='box-under-test'""" % crit["id"])
            br.click("#box-under-test")
            check(selected(br) == crit["id"], "clicking a box in the region graph did not pick its region")
            sel = br.js("document.querySelector('#graph-wrap g.node.sel title').textContent")
            check(sel == f"n{crit['id']}", "the picked region's box is not marked")
            c.shot(br, "report-graph.png", selector="#explore", scale=0.5)
        else:
            print("region graph: Graphviz not installed, not drawn (the page says so)")
        br.key("5", text="5")
        about = br.js("document.getElementById('panel-about').textContent")
        check("p1" in about and "Each of the 4 PEs" not in about, "about panel lacks the reference")
        no_errors(br)

        # 8. It prints: every panel, no tabs or inputs, on a few landscape pages.
        br.call("Emulation.setEmulatedMedia", media="print")
        shown = br.js("""['panel-tree','panel-flat','panel-about','region'].map(function(i){
            return document.getElementById(i).offsetHeight>0})""")
        check(all(shown), f"printed page hides a panel: {shown}")
        check(br.js("document.querySelector('nav.tabs button').offsetHeight") == 0, "tabs are printed")
        br.call("Emulation.setEmulatedMedia", media="")
        import base64
        pdf = base64.b64decode(br.call("Page.printToPDF", landscape=True, printBackground=True)["data"])
        pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
        check(pdf[:4] == b"%PDF" and 1 <= pages <= 12, f"print: {pages} pages")
        open(c.path("pair.pdf"), "wb").write(pdf)
        print(f"experiment: loads in {br.load_s:.2f} s with no error or request; class pick re-colours "
              f"the tree; the loop's 4 PE bars {['%.0f' % b for b in bars]}; icicle zoom; findings link; "
              f"keys; flat sort and filter; region graph; prints on {pages} pages; page {os.path.getsize(f)} bytes")
    hot = fixed_cost_first(c, f)
    print(f"fixed cost first: the summary leads with {hot[0]!r}; {hot[2]}")


# --- an LU-shaped program at a laptop's viewport ---------------------

def own(data, metric):
    """Each region's own value of a metric of the page's data ("tp", "to"): its value minus its
    children's (T_p's never below 0), as the page computes it."""
    val = {r["id"]: r[metric] for r in data["regions"]}
    out = dict(val)
    for r in data["regions"]:
        if r["parent"] is not None and not r.get("folded"):
            out[r["parent"]] -= val[r["id"]]
    return {k: max(0.0, v) if metric == "tp" else v for k, v in out.items()}


def pe_classes(br, data, loop):
    """PE 3 picked: its time in each class the rules split a PE's own time into (the analysis's
    split, analysis/pe_split.hpp): the four measured classes, not additional computation or
    unidentified; with its useful time they add up to its time in the loop; the tree shows them."""
    want = [0, 1, 2, 4]  # data movement, synchronization, control, loss (overheads/classes.hpp)
    check(data["distribution"].get("pe_classes") == want,
          f"the page's per-PE classes are {data['distribution'].get('pe_classes')}, want {want}")
    shown = br.js("""Array.from(document.querySelectorAll('#metrics .mrow[data-metric^="pe:c"]')).map(
        function(e){return e.getAttribute('data-metric')})""")
    check(shown == [f"pe:c{i}" for i in want], f"the metric pane under PE 3 lists {shown}")
    def split(r):
        pe = r["pe"]
        return pe["u"][3], {int(k): v[3] for k, v in pe["k"].items()}, pe["t"][3]
    u, k, t = split(loop)
    check(abs(u + sum(k.values()) - t) <= 2e-4 + 2e-3 * t,
          f"PE 3 in the loop: useful {u} + classes {k} != its time {t}")
    check(u > 0, f"PE 3 did no useful work in the loop: {u} of {t}")
    # The region where PE 3 waited longest itself (not in its children): its synchronization
    # there is in the call tree.
    s_of = lambda r: r["pe"]["k"].get("1", [0] * 4)[3]
    own = {r["id"]: s_of(r) for r in data["regions"]}
    for r in data["regions"]:
        if r["parent"] is not None:
            own[r["parent"]] -= s_of(r)
    sync = next(r for r in data["regions"] if r["id"] == max(own, key=own.get))
    s3 = s_of(sync)
    check(s3 > 0, f"PE 3 waits nowhere: its synchronization is {s3} s at most ({sync['label']})")
    u, k, t = split(sync)
    check(abs(u + sum(k.values()) - t) <= 2e-4 + 2e-3 * t,
          f"PE 3 in {sync['label']}: useful {u} + classes {k} != its time {t}")
    br.click('#metrics .mrow[data-metric="pe:c1"]')
    br.click('#expand-all')
    v = br.js("""(function(){var e=document.querySelector('#tree .trow[data-id="%d"] .val');
        return e ? e.textContent : null})()""" % sync["id"])
    check(v is not None and abs(float(v) - s3) <= (6e-5 if s3 >= 1e-4 else 0.06 * s3),
          f"the call tree under 'its synchronization' shows {v} for {sync['label']}, PE 3 waited {s3}")
    print(f"PE 3's classes: in the loop useful {split(loop)[0]} + {split(loop)[1]} of {split(loop)[2]} s; "
          f"waits longest in {sync['kind']} {sync['label']}: {s3} s, the tree shows {v}")


def system_pane(c, br, data, loop):
    """Cube's third pane: the picked region's time on each PE; picking a PE shows its tree."""
    rows = br.js("""Array.from(document.querySelectorAll('#system .mrow[data-pe]')).map(function(e){
        return [e.textContent, parseFloat(e.getAttribute('data-v'))]})""")
    t = loop["pe"]["t"]
    check(len(rows) == len(t) and all(abs(v - w) < 1e-12 for (_, v), w in zip(rows, t)),
          f"the system pane shows {rows} for the loop, its PEs ran {t}")
    check(all(f"thread {i}" in rows[i][0] for i in range(len(t))), f"the system pane's PEs are not named: {rows}")
    br.click('#system .mrow[data-pe="3"]')
    check(br.js("window.scalea.state.pe") == 3 and br.js("window.scalea.state.metric") == "pe:t",
          "picking PE 3 in the system pane did not show its time")
    prog = data["regions"][0]
    tree = br.js("""[document.querySelector('#tree .trow[data-id="%d"] .val').textContent,
        document.querySelector('#tree .trow[data-id="%d"] .val').textContent,
        Array.from(document.querySelectorAll('#metrics .mrow[data-metric^="pe:"]')).map(function(e){return e.getAttribute('data-metric')})]"""
                 % (loop["id"], prog["id"]))
    check(abs(float(tree[0]) - t[3]) < 1e-4 and abs(float(tree[1]) - prog["pe"]["t"][3]) < 1e-4,
          f"the call tree under PE 3 shows loop {tree[0]}, program {tree[1]}; PE 3 ran {t[3]}, {prog['pe']['t'][3]}")
    want = ["pe:t", "pe:w", "pe:x"] + [f"pe:c{i}" for i in data["distribution"].get("pe_classes", [])]
    check(tree[2] == want, f"the metric pane lists PE 3's metrics {tree[2]}, want {want}")
    c.shot(br, "report-system.png", selector="#explore", scale=0.6)
    br.click('#metrics .mrow[data-metric="pe:w"]')
    w = br.js("""document.querySelector('#tree .trow[data-id="%d"] .val').textContent""" % loop["id"])
    check(abs(float(w) - loop["pe"]["w"][3]) < 1e-4 + 1e-3 * loop["pe"]["w"][3],
          f"PE 3's waiting in the loop reads {w}, its data {loop['pe']['w'][3]}")
    pe_classes(br, data, loop)
    br.click("#pe-clear")
    check(br.js("window.scalea.state.pe") is None and br.js("window.scalea.state.metric") == "to",
          "'all PEs' did not go back to the program's metrics")
    br.click('#metrics .mrow[data-metric="c1"]')


def callers_view(c, br, data, shot="report-callers.png"):
    """The callers (bottom-up) view: one row per region, own values summed over its paths; a
    region's callers split its value among them."""
    br.key("1", text="1")
    br.click('#metrics .mrow[data-metric="to"]')
    check(br.js("window.scalea.state.metric") == "to", "clicking T_o did not pick it")
    br.key("3", text="3")
    check(br.js("document.getElementById('panel-callers').hidden") is False, "key 3 did not open the callers view")
    own_to = own(data, "to")
    by_id = {r["id"]: r for r in data["regions"]}
    keys = {}  # the rows the page shows: recursion folded
    for r in (r for r in data["regions"] if not r.get("folded")):
        keys.setdefault((r["kind"], r["label"], r["loc"]), []).append(r["id"])
    top = br.js("""Array.from(document.querySelectorAll('#callers .crow[aria-level="1"]')).map(function(e){
        return [+e.getAttribute('data-id'), parseFloat(e.getAttribute('data-v')), e.getAttribute('data-crow')]})""")
    check(len(top) == len(keys), f"the callers view has {len(top)} top rows, the page {len(keys)} regions")
    vals = [v for _, v, _ in top]
    check(vals == sorted(vals, reverse=True), "the callers view is not ordered largest first")
    # The region held in most call paths: its row sums them, its callers split it.
    many = max((v for v in keys.values() if by_id[v[0]]["parent"] is not None), key=len)
    rep_row = next(x for x in top if x[0] in many)
    want = sum(own_to[i] for i in many)
    check(abs(rep_row[1] - want) < 1e-9, f"callers row of {many}: {rep_row[1]}, own T_o of its paths {want}")
    br.click(f'#callers .crow[data-crow="{rep_row[2]}"] .tog')
    ups = br.js("""Array.from(document.querySelectorAll('#callers .crow[aria-level="2"]')).map(function(e){
        return [+e.getAttribute('data-id'), parseFloat(e.getAttribute('data-v'))]})""")
    want_callers = {}
    for i in many:
        p = by_id[by_id[i]["parent"]]
        want_callers[(p["kind"], p["label"], p["loc"])] = want_callers.get((p["kind"], p["label"], p["loc"]), 0) + own_to[i]
    got_callers = {(by_id[i]["kind"], by_id[i]["label"], by_id[i]["loc"]): v for i, v in ups}
    check(got_callers.keys() == want_callers.keys() and all(abs(got_callers[k] - want_callers[k]) < 1e-9 for k in want_callers),
          f"callers of {by_id[many[0]]['label']}: {got_callers}, want {want_callers}")
    if shot:
        c.shot(br, shot, selector="#explore", scale=0.6)
    print(f"callers: {len(top)} regions; {by_id[many[0]]['label']} in {len(many)} call paths, "
          f"{len(ups)} caller(s) holding {sum(v for _, v in ups):.4f} s of its {want:.4f} s")
    br.key("1", text="1")


def first_actionable(data):
    """The finding the summary leads with: the first one the program's code can change."""
    return next((f for f in data["findings"] if f["actionable"]), data["findings"][0])


def fixed_cost_first(c, src):
    """The summary leads with a finding the user can act on: a page whose largest finding is a
    fixed cost (as MPI_Init's start-up is: "nothing in the code to change") names the next one
    as the most expensive, and the fixed cost under it."""
    text = open(src).read()
    data = page_data(text)
    check(len(data["findings"]) >= 2, "fewer than 2 findings")
    fixed = dict(data["findings"][0], actionable=False, region="MPI_Init", location="", seconds=0.5,
                 hint="a fixed cost of the MPI library; nothing in the code to change")
    data["findings"].insert(0, fixed)
    f = c.path("fixed-cost-first.html")
    blob = json.dumps(data).replace("<", "\\u003c")
    open(f, "w").write(re.sub(r'(<script type="application/json" id="scalea-data">)(.*?)(</script>)',
                              lambda m: m.group(1) + blob + m.group(3), text, count=1, flags=re.S))
    with Page(f) as br:
        hot = br.js("[document.querySelector('#hot .big').textContent, document.querySelector('#hot .k').textContent,"
                    "(document.getElementById('fixed-costs')||{}).textContent||'']")
        check(hot[0].startswith(data["findings"][1]["region"]) and "MPI_Init" not in hot[0],
              f"the summary leads with {hot[0]!r}, not the first finding the code can change")
        check("can change" in hot[1] and "MPI_Init" in hot[2] and "nothing in the code to change" in hot[2],
              f"the fixed cost above it is not named: {hot}")
        no_errors(br)
    return hot


def first_screen(c, br, data, shot):
    """The most expensive region (finding 1) and its cause are on the first screen: in the
    viewport, with no scrolling."""
    first = first_actionable(data)
    hot = br.js("""(function(){var b=document.querySelector('#hot .big'), w=document.querySelector('#hot .why');
        return [b.textContent, w.textContent, Math.max(b.getBoundingClientRect().bottom, w.getBoundingClientRect().bottom),
                window.innerHeight, window.scrollY, window.innerWidth];})()""")
    check(first["region"] in hot[0] and first["class"] in hot[1], f"first screen lacks finding 1: {hot[:2]}")
    check(hot[4] == 0 and hot[2] <= hot[3], f"finding 1 is not on the first screen at {hot[5]}x{hot[3]}: bottom {hot[2]}")
    c.shot(br, shot, scale=0.6)
    return first


def class_to_regions(br, data, metric, region):
    """Picking a class orders every level of the call tree by it, largest first, and shades the
    value cell of `region` (a region that carries it)."""
    br.click(f'#metrics .mrow[data-metric="{metric}"]')
    check(br.js("window.scalea.state.metric") == metric, f"clicking {metric} did not pick it")
    rows = br.js("""Array.from(document.querySelectorAll('#tree .trow[data-id]')).map(function(e){
        return [+e.getAttribute('data-id'), parseFloat(e.querySelector('.val').textContent),
                getComputedStyle(e.querySelector('.val')).backgroundColor]})""")
    parent = {r["id"]: r["parent"] for r in data["regions"]}
    by_parent = {}
    for rid, v, _ in rows:
        by_parent.setdefault(parent[rid], []).append(v)
    check(all(v == sorted(v, reverse=True) for v in by_parent.values()), f"siblings not ordered by {metric}: {by_parent}")
    cell = [bg for rid, _, bg in rows if rid == region]
    check(cell and cell[0] != "rgb(255, 255, 255)", f"the {metric} cell of region {region} is not shaded: {cell}")


def do_pipeline(c):
    """The wavefront of apps/omp/shapes (stages polling the previous stage's flag with flush, as NPB
    LU's blts/buts) at p = 2 against p = 1, in a 1366 x 768 viewport: the most expensive region and
    its cause are on the first screen; a class leads to the regions that carry it, and the picked
    region to the threads that suffer it. Spin-waiting is not timed per PE (the classifier finds it
    from the loop's flushes against the reference), so the threads' bars show it against each PE's
    share of the reference time, T_s/p: the thread that polled stands above that line."""
    f = c.path("pipeline.html")
    c.scalea("report", c.exp("pipe2"), "-r", c.exp("pipe1"), "--html", f)
    data = page_data(open(f).read())
    loop = region_by(data, "loop", "loop")
    spin = loop["sub"].get("synchronization.spin_wait", 0.0)
    check(spin > 0, f"the pipeline's loop has no spin-wait: {loop['sub']}")
    first = data["findings"][0]
    with Page(f, *LAPTOP) as br:
        first_screen(c, br, data, "report-pipeline-first-screen.png")
        class_to_regions(br, data, "c1", loop["id"])

        # 3. The region to the threads that suffer it.
        br.click(f'#tree .trow[data-id="{loop["id"]}"] .loc')  # not its fold toggle: the loop holds its flushes
        check(selected(br) == loop["id"], "clicking the loop's row did not pick it")
        share = loop["ts"] / data["p"]
        t = loop["pe"]["t"]
        excess = [x - share for x in t]
        line = br.js("""(function(){var l=document.querySelector('#pe-bars line.share'); if(!l) return null;
            var b=Array.from(document.querySelectorAll('#pe-bars rect.pe:not(.wait)')).map(function(e){
              return [parseFloat(e.getAttribute('y')), parseFloat(e.getAttribute('height'))]});
            return [parseFloat(l.getAttribute('y1')), b];})()""")
        check(line is not None, "the threads' bars do not show each PE's share of the reference time (T_s/p)")
        y_share, bars = line
        check(len(bars) == 2, f"{len(bars)} PE bars, want 2")
        # The line stands where T_s/p is on the bars' scale: bar i's top is at t_i on that scale.
        base = bars[0][0] + bars[0][1]
        scale = bars[1][1] / t[1]
        check(abs((base - y_share) / scale - share) < 0.02 * share + 1e-4,
              f"T_s/p line at {(base - y_share) / scale:.4f} s, want {share:.4f} s")
        # What stands above it is the PEs' overhead: on average at least the loop's spin-wait
        # (the classifier's wall-time seconds), and the polling thread (thread 1, stages 1 and 3,
        # waits a step for stage 0 to start) above thread 0, which never waits for its stages.
        check(sum(excess) / len(excess) >= 0.8 * spin, f"bars above T_s/p {excess} hold less than the spin-wait {spin:.4f} s")
        check(excess[1] > excess[0] + 0.5 * PIPE_STEP_S, f"thread 1 polled a step for stage 0, yet {excess}")
        x, y = br.center('#pe-bars rect.pe[data-pe="1"]:not(.wait)')
        br.mouse(x, y, move_only=True)
        tip = br.js("document.getElementById('tip').hidden ? '' : document.getElementById('tip').textContent")
        check("thread 1" in tip and "beyond its share of T_s" in tip, f"thread 1's tooltip: {tip!r}")
        note = br.js("document.getElementById('pe-note').textContent")
        check("Spin-waiting" in note and "above the green line" in note, f"the bars do not say where the spin-wait is: {note!r}")
        c.shot(br, "report-pipeline-threads.png", selector="#region", scale=0.7)
        no_errors(br)
        print(f"pipeline at {LAPTOP[0]}x{LAPTOP[1]}: finding 1 ({first['class']}.{first.get('subclass')}, {first['region']}) on "
              f"the first screen; synchronization orders the tree; the loop's threads {['%.4f' % x for x in t]} s "
              f"against T_s/p {share:.4f} s (spin-wait {spin:.4f} s)")


def do_laptop(c):
    """Any page (--page, e.g. NPB LU's, which is not in the tests: scripts/report_screenshots.sh) at
    1366 x 768: finding 1 on the first screen, its class leads to its region, the region to its
    threads. Screenshots report-laptop-first-screen.png and report-laptop-threads.png."""
    check(c.a.page and os.path.isfile(c.a.page), "laptop needs --page FILE")
    data = page_data(open(c.a.page).read())
    with Page(c.a.page, *LAPTOP) as br:
        first = first_screen(c, br, data, "report-laptop-first-screen.png")
        ci = CLASSES.index(first["class"])
        class_to_regions(br, data, f"c{ci}", first["node"])
        br.click(f'#tree .trow[data-id="{first["node"]}"] .loc')
        check(selected(br) == first["node"], "clicking finding 1's row did not pick it")
        check(br.js("document.querySelectorAll('#pe-bars rect.pe').length") > 0, "no bars of the threads")
        c.shot(br, "report-laptop-threads.png", selector="#region", scale=0.7)
        no_errors(br)
        print(f"laptop: {c.a.page}: finding 1 ({first['class']}, {first['region']}) on the first screen, its class and threads")


# --- without a reference, and the source option ---------------------------------------------

def do_single(c):
    f, g = c.path("single.html"), c.path("single-nosource.html")
    c.scalea("export", "--format", "html", "-o", f, c.exp("p4"))
    c.scalea("export", "--format", "html", "--no-source", "-o", g, c.exp("p4"))
    with_src, without = open(f).read(), open(g).read()
    line = "sleep_ms((i + 1) * x / 2)"
    check(line in with_src, "the source snippet is not in the page")
    check(line not in without, "--no-source still embeds source text")
    check("--no-source" in page_data(without)["sources"]["note"], "the page does not say sources were left out")
    r = c.path("report-nosource.html")
    c.scalea("report", c.exp("p4"), "--no-source", "--html", r)
    check(line not in open(r).read(), "report --no-source --html still embeds source text")
    h = c.path("constructs.html")
    c.scalea("report", c.exp("constructs4"), "--html", h)
    data = page_data(open(h).read())
    with Page(f) as br:
        check("estimated" in br.js("document.getElementById('top').textContent"), "header does not say T_s is estimated")
        br.navigate("file://" + os.path.abspath(g))
        no_errors(br)
        check(br.js("document.getElementById('source')") is None, "a source snippet shown with --no-source")
        br.navigate("file://" + os.path.abspath(h))
        no_errors(br)
        # constructs: dozens of tiny rows; the tree groups them instead of listing them first.
        small = br.js("document.querySelectorAll('#tree .trow.small').length")
        check(small >= 1, "tiny regions are not grouped in the call tree")
        rows = br.js("document.querySelectorAll('#tree .trow[data-id]').length")
        br.click('#tree .trow.small')
        check(br.js("document.querySelectorAll('#tree .trow[data-id]').length") > rows, "showing the small regions showed none")
        # Subclasses in the metric pane: unfold synchronization, pick a subclass.
        br.click('#metrics .mrow[data-metric="c1"] .tog')
        subs = br.js("Array.from(document.querySelectorAll('#metrics .mrow[data-metric^=\"s:synchronization.\"]')).map(function(e){return e.getAttribute('data-metric')})")
        check(subs, "synchronization has no subclasses in the metric pane")
        br.click(f'#metrics .mrow[data-metric="{subs[0]}"]')
        check(br.js("window.scalea.state.metric") == subs[0], "picking a subclass failed")
        c.shot(br, "report-constructs.png", scale=0.6)
        no_errors(br)
        print(f"single: no reference (estimated), --no-source leaves the source out; constructs: {small} "
              f"group(s) of tiny rows, subclasses {subs}")


# --- a scaling study -------------------------------------------------------------------------

def do_study(c):
    st, f, g = c.exp("export.study"), c.path("study.html"), c.path("study-export.html")
    plain = c.scalea("report", st)
    with_html = c.scalea("report", st, "--html", f)
    check(plain.stdout == with_html.stdout, "--html changed the study's text report")
    check(with_html.stderr.strip() == f"scalea report: wrote {f}", f"stderr: {with_html.stderr!r}")
    c.scalea("export", "--format", "html", "-o", g, st)
    text = open(f).read()
    static_checks(text)
    data = page_data(text)
    check(data["kind"] == "study" and [x["p"] for x in data["configs"]] == [1, 2, 4], "study configurations")
    js = json.loads(c.scalea("report", st, "--format", "json").stdout)
    top = max((r for r in js["regions"] if r["p"] == 4), key=lambda r: r["overheads"]["total"])
    check(any(r["id"] == top["id"] and r["label"] == top["label"] for r in data["regions"]),
          "study page lacks a region of the JSON")
    with Page(f) as br:
        study_paths = {r["id"]: r["path"] for r in js["regions"]}
        got = br.js("%s.map(function(i){return window.scalea.path(i)})" % json.dumps(list(study_paths)))
        check(got == list(study_paths.values()), f"study page paths {got[:3]} != the JSON's")
        pts = br.js("document.querySelector('#speedup-program polyline.series').getAttribute('points').trim().split(' ').length")
        check(pts == 3, f"program speedup line has {pts} points, want 3 (p = 1, 2, 4)")
        check(br.js("document.querySelectorAll('#summary rect.seg').length") >= 2, "no stacked classes vs p")
        c.shot(br, "study-first-screen.png", scale=0.7)
        loop = region_by(data, "loop", "loop")
        br.click(f'#tree .trow[data-id="{loop["id"]}"]')
        check(br.js(f"!!document.getElementById('classes-{loop['id']}')"), "picking the loop did not draw its classes vs p")
        check(br.js("document.querySelectorAll('#region table.cfgs tbody tr').length") == 3, "per-p table")
        # The legend's keys keep their series' colours (a style for the charts' text must not
        # override them): the loop's line is told from the program's by its key.
        keys = br.js("""(function(){var s=document.getElementById('speedup-region');
            var lines=Array.from(s.querySelectorAll('polyline.series')).map(function(l){return l.getAttribute('stroke')});
            var keys=Array.from(s.querySelectorAll('text[fill]')).filter(function(t){return t.textContent.charAt(0)==='\u25ac'})
              .map(function(t){var c=document.createElement('span');c.style.color=t.getAttribute('fill');document.body.appendChild(c);
                var want=getComputedStyle(c).color;c.remove();return [getComputedStyle(t).fill, want]});
            return [lines, keys];})()""")
        check(len(keys[0]) == 2 and len(keys[1]) == 2, f"the region's speedup chart has lines {keys[0]} and keys {keys[1]}")
        check(all(got == want for got, want in keys[1]) and keys[1][0][0] != keys[1][1][0],
              f"the speedup legend's keys are not in their lines' colours: {keys[1]}")
        c.shot(br, "study-region.png", selector="#region", scale=0.7)
        v4 = br.js(f"document.querySelector('#tree .trow[data-id=\"{loop['id']}\"] .val').textContent")
        br.js("var s=document.getElementById('config'); s.value='1'; s.dispatchEvent(new Event('change',{bubbles:true}))")
        v2 = br.js(f"document.querySelector('#tree .trow[data-id=\"{loop['id']}\"] .val').textContent")
        check(v2 != v4, f"values at p = 2 are those at p = 4 ({v2})")
        br.click('ol.findings li.finding:nth-child(1)')
        check(selected(br) == data["findings"][0]["node"], "study finding does not lead to its region")
        no_errors(br)
        print(f"study: loads in {br.load_s:.2f} s; speedup and classes vs p for the program and the loop; "
              f"the text report is unchanged by --html")


# --- 1,024 ranks ------------------------------------------------------------------------------

def do_large(c):
    f = c.exp("big.html")
    check(os.path.isfile(f), "big.html missing (run the html.runs fixture)")
    size = os.path.getsize(f)
    text = open(f).read()
    static_checks(text)
    data = page_data(text)
    d = data["distribution"]
    check(len(data["regions"]) == 500 and d["mode"] == "quantized" and d["columns"] == 1024 and d["per_column"] == 2,
          f"aggregation: {len(data['regions'])} regions, {d['mode']}, {d['columns']} columns of {d['per_column']}")
    # Beyond 400 regions Graphviz is not asked to lay out the graph (it could take minutes): the
    # page says so instead of drawing it.
    check("at most 400 regions" in data["graph_note"] and 'class="node"' not in text,
          f"region graph of 500 regions: {data['graph_note']}")
    with Page(f) as br:
        draw_ms = br.js("window.scalea.drawMs")
        check("2048 PEs are shown as 1024 columns" in br.js("document.body.textContent"),
              "the page does not say what was aggregated")
        r = data["regions"][3]
        br.click(f'#flame .fl[data-id="{r["id"]}"]')
        check(selected(br) == r["id"], "picking a region of the large experiment failed")
        check(br.js("document.querySelectorAll('#pe-strip').length") == 1, "no heat strip for the picked region")
        # What a pick costs in the page (trees, icicle graph, panes redrawn as needed), 5 picks.
        ids = [x["id"] for x in data["regions"][5:10]]
        pick_ms = br.js("(function(){var t=performance.now(); %s.forEach(function(i){window.scalea.select(i)});"
                        "return (performance.now()-t)/%d})()" % (json.dumps(ids), len(ids)))
        c.shot(br, "report-1024-ranks.png", selector="#region", scale=0.7)
        # The system pane on aggregated PEs: one row per column of 2 PEs; a column's tree.
        cols = br.js("document.querySelectorAll('#system .mrow[data-pe]').length")
        check(cols == 1024, f"the system pane has {cols} rows, the page 1024 columns")
        br.click('#system .mrow[data-pe="0"]')
        got = br.js("""[window.scalea.state.pe, Array.from(document.querySelectorAll('#metrics .mrow[data-metric^="pe:"]')).map(
            function(e){return e.getAttribute('data-metric')})]""")
        check(got == [0, ["pe:t", "pe:x"]], f"picking column 0: {got} (no timed waits per PE when aggregated)")
        br.click("#pe-clear")
        # The callers view where regions are reached by several call paths (5 each here).
        callers_view(c, br, data, shot=None)
        print(f"large: 1,024 ranks x 2 threads x 500 regions: page {size / 1e6:.2f} MB, load event after "
              f"{br.load_s:.2f} s, drawing {draw_ms:.0f} ms, a pick {pick_ms:.0f} ms")


# --- bad input --------------------------------------------------------------------------------

def do_errors(c):
    empty = c.path("empty.study")
    shutil.rmtree(empty, ignore_errors=True)
    os.makedirs(empty)
    study = json.load(open(os.path.join(c.exp("export.study"), "study.json")))
    for r in study["runs"]:
        r["status"] = "pending"
    json.dump(study, open(os.path.join(empty, "study.json"), "w"))
    cases = [
        (["report", c.exp("p4"), "--html", "/nonexistent-dir/r.html"], "report --html unwritable"),
        (["export", "--format", "html", "-o", "/proc/version", c.exp("p4")], "export html unwritable"),
        (["report", c.exp("p4"), "--html", c.work], "report --html to a directory"),
        (["report", c.exp("export.study"), "--html", "/nonexistent-dir/s.html"], "study --html unwritable"),
        (["report", empty, "--html", c.path("never.html")], "study without runs"),
        (["export", "--format", "html", "-o", c.path("never.html"), empty], "export of a study without runs"),
        (["export", "--format", "csv", c.exp("export.study")], "csv of a study"),
    ]
    for args, what in cases:
        p = c.scalea(*args, ok=(2,))
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and lines[0].startswith("scalea "), f"{what}: stderr {p.stderr!r}")
        check(not p.stdout, f"{what}: printed a report before failing")
        print(f"{what}: exit 2, {lines[0]}")
    check(not os.path.exists(c.path("never.html")), "a page was written for a study without runs")


CHECKS = {"runs": do_runs, "experiment": do_experiment, "pipeline": do_pipeline, "single": do_single,
          "study": do_study, "large": do_large, "errors": do_errors, "laptop": do_laptop}


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--scalea", "--app", "--omp-app", "--shapes-app", "--gen", "--workdir"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--runs", help="the experiments of the check `runs` (default: --workdir)")
    ap.add_argument("--shots", help="where the screenshots go (default: the work directory)")
    ap.add_argument("--page", help="laptop: the page to check")
    ap.add_argument("check", choices=sorted(CHECKS))
    a = ap.parse_args()
    c = Ctx(a)
    try:
        if testdir.fresh_for_check(a.workdir, a.runs, a.check, "pipe2") and a.check != "laptop":
            c.runs = a.workdir  # run without the fixture: the experiments made here, in its own directory
            do_runs(c)
        os.makedirs(c.shots, exist_ok=True)
        return CHECKS[a.check](c) or 0
    except Skip as e:
        print(f"SKIP: {e}")
        return SKIP
    except (Fail, cdp.CdpError) as e:
        print(f"FAIL ({a.check}): {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
