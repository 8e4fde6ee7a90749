#!/usr/bin/env python3
"""On-line monitoring (docs/online.md) end to end: real programs under the real tool with
SCALEA_SNAPSHOT, the live view (scalea top) on a terminal (tmux, read with capture-pane) and in
batch mode, the time-series report (scalea report --over-time), and the faults the tool and the
viewer must survive. Registered by tests.cmake.

usage: check_online.py --bin DIR --lib DIR --workdir DIR [--mpirun PATH] SCENARIO
scenarios:
  live       apps/omp/phases (balanced, then imbalanced) at 2 threads, snapshots every 200 ms:
             scalea top in tmux, started before the program, shows the change in its last
             window; the over-time report shows it in the window that holds the switch
  unchanged  the experiment is the same with snapshots on and off; the windows add up to the
             whole run; a reference run (-r) classifies every window
  mpi        apps/mpi/mpi_phases at 2 ranks: the change per rank, live (top -b) and over time
  killed     the program is killed between snapshots: the viewer says so and keeps the last one,
             the report reads the live directory
  disk_full  snapshots into a full file system: the program's output and status are unchanged,
             the tool says why once
  files      a viewer on a finished experiment; hidden (half-written) files are never read; a
             corrupt snapshot, a bad setting or option: one line and a non-zero status
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testdir  # noqa: E402  (tests/testdir.py)

FAILURES = []
PHASE_ARGS = ["36", "24", "50"]  # steps, switch, X ms: 1.2 s balanced, then 1.2 s imbalanced
# At 2 PEs the imbalanced steps wait (p-1)/(2p) = 25 % of the wall time; the balanced ones ~0
# (medians over the windows of each phase).
SYNC_AFTER = (0.18, 0.32)
SYNC_BEFORE = 0.05
STEP = 0.1  # an imbalanced step at 2 PEs: 2 X


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


class Env:
    def __init__(self, a):
        self.a = a
        self.scalea = os.path.join(a.bin, "scalea")
        self.work = testdir.fresh(os.path.abspath(a.workdir))  # this test's own directory (tests.cmake)

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, cmd, env=None, timeout=60, check_rc=True, quiet=False):
        e = dict(os.environ)
        e.update(env or {})
        print("$", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout,
                           cwd=self.work)
        if p.stdout.strip() and not quiet:
            print(p.stdout[-4000:])
        if p.stderr.strip():
            print(p.stderr[-2000:], file=sys.stderr)
        if check_rc and p.returncode != 0:
            raise SystemExit(f"FAIL: exit {p.returncode}: {' '.join(cmd)}")
        return p

    def over_time(self, exp, *extra):
        p = self.run([self.scalea, "report", exp, "--over-time", "--format", "json", *extra],
                     quiet=True)
        d = json.loads(p.stdout)
        for w in d["windows"]:
            for r in w["regions"]:
                o = r["overheads"]
                total = sum(o[k] for k in o if k != "total")
                check(abs(total - r["t_o"]) <= 1e-9 + 1e-6 * abs(r["t_o"]),
                      f"window {w['t0']:.2f}-{w['t1']:.2f} region {r['id']}: classes sum to "
                      f"{total}, T_o {r['t_o']}")
        return d


def truth(text, key):
    m = re.search(rf"^truth {key} ([0-9.]+)$", text, re.M)
    if not m:
        raise SystemExit(f"FAIL: the program did not print truth {key}")
    return float(m.group(1))


def sync_share(w):
    prog = w["regions"][0]
    return prog["overheads"]["synchronization"] / max(1e-9, w["t1"] - w["t0"])


def waits_of(text):
    """The program's measured waits: (PE, from, to), wall-clock seconds since the epoch."""
    return [(int(pe), float(a), float(b))
            for pe, a, b in re.findall(r"^truth wait (\d+) ([0-9.]+) ([0-9.]+)$", text, re.M)]


class Truth:
    """What the program measured, per window: the share of the window its PEs spent waiting
    (the synchronization class, with no reference: the waits' sum over p) and each PE's busy
    share."""

    def __init__(self, text, start, pes):
        self.waits, self.start, self.pes = waits_of(text), start, pes
        self.begin = truth(text, "begin_epoch_s") - start
        self.switch = truth(text, "switch_epoch_s") - start
        self.end = truth(text, "end_epoch_s") - start
        check(len(self.waits) >= 30, f"the program printed {len(self.waits)} waits")

    def window(self, t0, t1):
        per = [0.0] * self.pes
        for pe, a, b in self.waits:
            per[pe] += max(0.0, min(b - self.start, t1) - max(a - self.start, t0))
        dt = max(1e-9, t1 - t0)
        return sum(per) / self.pes / dt, [1 - w / dt for w in per]


def check_against_truth(entries, t, what, tol_sync, tol_busy):
    """entries: (label, t0, t1, synchronization share, busy shares) as the tool shows them, for
    windows inside the program's steps. Each agrees with what the program measured in it; the
    measured values show the planted phases (medians: no synchronization before the switch, 25 %
    after it), and so do the tool's."""
    steps = [e for e in entries if e[1] >= t.begin - 0.01 and e[2] <= t.end + 0.01]
    check(len(steps) >= 5, f"{what}: {len(steps)} windows inside the program's steps")
    for label, t0, t1, sync, busy in steps:
        ts, tb = t.window(t0, t1)
        ok = abs(sync - ts) <= tol_sync and all(abs(a - b) <= tol_busy for a, b in zip(busy, tb))
        check(ok and len(busy) == t.pes,
              f"{what}: {label}: synchronization {100 * sync:.1f} % of the window, busy "
              f"{[round(x, 2) for x in busy]}; the program measured {100 * ts:.1f} %, "
              f"{[round(x, 2) for x in tb]}")
    median = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
    before = [e for e in steps if e[2] <= t.switch]
    after = [e for e in steps if e[1] >= t.switch]
    for name, es in (("the program measured", [(e[0], e[1], e[2], *t.window(e[1], e[2])) for e in steps]),
                     ("the tool shows", steps)):
        b = median([e[3] for e in es if e[2] <= t.switch])
        a = median([e[3] for e in es if e[1] >= t.switch])
        a_busy = median([e[4][0] for e in es if e[1] >= t.switch])
        check(len(before) >= 2 and len(after) >= 2 and b < SYNC_BEFORE and
              SYNC_AFTER[0] <= a <= SYNC_AFTER[1] and 0.4 <= a_busy <= 0.6,
              f"{what}: {name} {len(before)} windows before the switch (median synchronization "
              f"{100 * b:.1f} %), {len(after)} after ({100 * a:.1f} %, the first PE busy "
              f"{100 * a_busy:.0f} %); planted 0 %, then 25 % and 50 %")


def check_series(d, t, what, shares):
    """The time-series report against the program's truth; the change shows in the window that
    holds the switch. `shares(w)` gives the busy share of each PE (or rank) in a window."""
    entries = [(f"window {w['t0']:.2f}-{w['t1']:.2f}", w["t0"], w["t1"], sync_share(w), shares(w))
               for w in d["windows"]]
    check_against_truth(entries, t, what, 0.03, 0.06)
    # Where the change shows: the first window from which on every window (to the end of the
    # steps) shows synchronization. It holds the switch, or follows it when the switch came less
    # than one imbalanced step (2 X = 0.1 s) before that window's end (no wait could end there).
    inside = [w for w in d["windows"] if w["t0"] >= t.begin - 0.01 and w["t1"] <= t.end + 0.01]
    k = len(inside)
    while k > 0 and sync_share(inside[k - 1]) > 0.1:
        k -= 1
    first = inside[k] if k < len(inside) else None
    check(first is not None and first["t0"] - 0.02 <= t.switch + STEP <= first["t1"] + STEP + 0.02,
          f"{what}: the change shows from {first and (round(first['t0'], 2), round(first['t1'], 2))}, "
          f"the switch is at {t.switch:.2f} s")


def pe_shares(w):
    return [pe["busy"] / pe["time"] if pe["time"] > 0 else 0 for pe in w["pes"]]


def rank_shares(w):
    return [r["busy"] / r["time"] if r["time"] > 0 else 0 for r in w["ranks"]]


# ---- frames of scalea top ----------------------------------------------------------------------

FRAME_AT = re.compile(r"^at ([0-9.]+) s: .* in the last ([0-9.]+) s", re.M)
FRAME_LAST = re.compile(r"^last [0-9.]+ s +([-0-9.]+) +([-0-9.]+) +\S+ +([-0-9.]+) +([-0-9.]+)", re.M)
FRAME_BUSY = re.compile(r"^(busy|ranks), last window:((?: \S+ \d+%)+)   imbalance ([0-9.]+)", re.M)


def parse_frame(text):
    """at, dt, T_p and synchronization of the last window, busy shares (PEs; ranks)."""
    at, last = FRAME_AT.search(text), FRAME_LAST.search(text)
    if not at or not last:
        return None
    f = {"at": float(at.group(1)), "dt": float(at.group(2)), "t_p": float(last.group(1)),
         "sync": float(last.group(4)), "text": text}
    for kind, items, _ in FRAME_BUSY.findall(text):
        f[kind] = [int(x) / 100 for x in re.findall(r" \S+ (\d+)%", items)]
    return f


def check_frames(frames, t, what, key):
    """Each frame's last window against the program's truth (the frame shows its times to 10 ms
    and its figures to 1 ms and 1 %); frames before the switch show no synchronization, frames
    after it the planted 25 % and the busy shares 50 % / 100 %."""
    parsed = [f for f in map(parse_frame, frames) if f and f["dt"] >= 0.15]
    print(f"{what}: {len(parsed)} frames")
    entries = [(f"frame at {f['at']} s", f["at"] - f["dt"], f["at"], f["sync"] / f["dt"], f[key])
               for f in parsed]
    check_against_truth(entries, t, what, 0.06, 0.1)


class Tmux:
    """A tmux server of our own (its own socket): a terminal for scalea top."""

    def __init__(self, env):
        self.sock = f"scalea-online-{os.getpid()}"
        self.env = env

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True,
                              timeout=10)

    def start(self, name, cmd):
        # The shell stays after the viewer so that its exit status can be read from the pane.
        shell = f"cd {self.env.work} && {cmd}; echo TOP-EXITED $?; sleep 60"
        if self.tmux("has-session", "-t", "main").returncode == 0:
            p = self.tmux("new-window", "-t", "main", "-n", name, shell)
        else:
            p = self.tmux("new-session", "-d", "-s", "main", "-n", name, "-x", "160", "-y", "50",
                          shell)
        if p.returncode != 0:
            raise SystemExit(f"FAIL: tmux: {p.stderr.strip()}")

    def capture(self, name):
        return self.tmux("capture-pane", "-p", "-t", f"main:{name}").stdout

    def keys(self, name, *keys):
        self.tmux("send-keys", "-t", f"main:{name}", *keys)

    def stop(self):
        self.tmux("kill-server")


def batch_viewer(env, exp):
    """scalea top -b on `exp`, started now (before the program): its frames come at the end."""
    return subprocess.Popen([env.scalea, "top", exp, "-b", "-d", "0.1"], cwd=env.work,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def viewer_frames(viewer, timeout, what):
    """The batch viewer's frames, once it ended by itself (within `timeout` s): it must."""
    try:
        out, err = viewer.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        viewer.kill()
        out, err = viewer.communicate()
        check(False, f"scalea top -b did not end: {what}")
    check(viewer.returncode == 0, f"scalea top -b exited {viewer.returncode}: {err}")
    return out.strip().split("\nscalea top ")


def wait_for(what, cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    check(False, f"timed out waiting for {what}")
    return None


# ---- scenarios ---------------------------------------------------------------------------------


def phases_cmd(env, exp, interval="200ms"):
    return [env.scalea, "run", "--snapshot", interval, "-o", exp, "--",
            os.path.join(env.a.bin, "omp", "phases"), *PHASE_ARGS]


def scenario_live(env):
    if not shutil.which("tmux"):
        print("SKIP: tmux is not installed (scripts/setup-debian.sh installs it)")
        return 77
    exp = "live.exp"
    tm = Tmux(env)
    try:
        # The viewer first: it waits for the program.
        tm.start("top", f"{env.scalea} top {exp} -d 0.1")
        tm.start("quit", f"{env.scalea} top {exp} -d 0.1")
        check(wait_for("the waiting line", lambda: "waiting for snapshots" in tm.capture("top"), 10),
              "scalea top started before the program does not say it waits")
        e = dict(os.environ, OMP_NUM_THREADS="2")
        print("$", " ".join(phases_cmd(env, exp)), flush=True)
        prog = subprocess.Popen(phases_cmd(env, exp), cwd=env.work, env=e, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        frames, quit_sent = [], False
        t0 = time.time()
        while prog.poll() is None:
            screen = tm.capture("top")
            if not frames or screen != frames[-1]:
                frames.append(screen)
            if not quit_sent and time.time() - t0 > 0.8:
                tm.keys("quit", "q")  # a viewer that quits while the program runs
                quit_sent = True
            time.sleep(0.1)
        out, err = prog.communicate()
        print(out, err, sep="\n")
        check(prog.returncode == 0, f"the program exited {prog.returncode}")
        check("truth end_epoch_s" in out, "the program's output is incomplete")
        check("TOP-EXITED 0" in tm.capture("quit"), "scalea top did not quit on q: "
              + tm.capture("quit")[-300:])
        final = wait_for("the finished frame",
                         lambda: (lambda s: s if "finished" in s else None)(tm.capture("top")), 10)
        if final:
            frames.append(final)
            print("last frame:\n" + final)
        d = env.over_time(exp)
        t = Truth(out, d["start_epoch_s"], 2)
        check_frames(frames, t, "live view", "busy")
        tm.keys("top", "q")
        check(wait_for("the viewer to quit", lambda: "TOP-EXITED 0" in tm.capture("top"), 10),
              "scalea top did not quit on q at the end")
    finally:
        tm.stop()
    check(d["complete"] and d["ranks"] == 1 and d["p"] == 2, f"over-time header: {d}")
    check_series(d, t, "over-time report", pe_shares)
    # The text and CSV forms and the plot carry the same series.
    text = env.run([env.scalea, "report", exp, "--over-time"]).stdout
    check("busy share of each thread per window" in text and "barrier (implicit)" in text,
          "the text report lacks the busy table or the barrier")
    csv = env.run([env.scalea, "report", exp, "--over-time", "--format", "csv"]).stdout.splitlines()
    check(csv[0].startswith("t0,t1,region,path") and
          len([l for l in csv[1:] if l.split(",")[2] == "0"]) == len(d["windows"]),
          f"CSV: one program row per window expected, header {csv[0]}")
    if shutil.which("gnuplot"):
        env.run([env.scalea, "report", exp, "--over-time", "--plots", "plots"])
        svg = env.path("plots/over-time.svg")
        check(os.path.exists(svg) and os.path.getsize(svg) > 1000, "no over-time.svg")
    # --interval: windows of 0.6 s (3 snapshots each) that still add up to the run.
    d6 = env.over_time(exp, "--interval", "600ms")
    check(len(d6["windows"]) in (3, 4, 5) and all(w["t1"] - w["t0"] >= 0.59 for w in d6["windows"][:-1]),
          f"--interval 600ms: windows {[(w['t0'], w['t1']) for w in d6['windows']]}")
    return 0


def scenario_unchanged(env):
    args = ["12", "6", "20"]
    e = {"OMP_NUM_THREADS": "2"}
    app = os.path.join(env.a.bin, "omp", "phases")
    env.run([env.scalea, "run", "-q", "--snapshot", "50ms", "-o", "on.exp", "--", app, *args], env=e)
    env.run([env.scalea, "run", "-q", "-o", "off.exp", "--", app, *args], env=e)
    env.run([env.scalea, "run", "-q", "-o", "ref.exp", "--", app, *args], env={"OMP_NUM_THREADS": "1"})
    on, off = sorted(os.listdir(env.path("on.exp"))), sorted(os.listdir(env.path("off.exp")))
    check(on == sorted(off + ["snapshots"]), f"files with snapshots {on}, without {off}")
    check(not os.path.exists(env.path("on.exp.live")), "the live directory was left behind")
    meta_on = json.load(open(env.path("on.exp/meta.json")))
    meta_off = json.load(open(env.path("off.exp/meta.json")))
    check(set(meta_on) == set(meta_off), f"meta.json keys differ: {set(meta_on) ^ set(meta_off)}")
    check("snapshot" not in meta_on, "the experiment's meta.json describes a snapshot")
    rep = {}
    for name in ("on", "off"):
        d = json.loads(env.run([env.scalea, "report", f"{name}.exp", "--format", "json"]).stdout)
        rep[name] = d
    paths = {n: {r["path"]: r["visits"] for r in rep[n]["regions"]} for n in rep}
    check(paths["on"] == paths["off"], f"call paths and visits differ: {paths}")
    # The windows add up to the whole run: the last snapshot is the experiment's trees, and the
    # report settles each window's end to the next (drg::settle_to_later: one clock ratio, no
    # region overstated by a copy), so each PE's time in the windows adds up to its time in the
    # run, to the ns. Unsettled, the sum exceeded the run by 0.2-0.9 us (over 10 us under
    # ThreadSanitizer in CI).
    d = env.over_time("on.exp")
    root = next(r for r in rep["on"]["regions"] if r["depth"] == 0)
    run_pe = {(t["rank"], t["thread"]): t["time"] for t in root["per_thread"]}
    win_pe = {}
    for w in d["windows"]:
        for pe in w["pes"]:
            key = (pe["rank"], pe["thread"])
            win_pe[key] = win_pe.get(key, 0.0) + pe["time"]
    check(win_pe.keys() == run_pe.keys() and all(abs(win_pe[k] - run_pe[k]) < 1e-8 for k in run_pe),
          f"each PE's time: windows {win_pe}, run {run_pe}")
    # A region's T_p is its longest PE's time. The sum of each window's longest is at least the
    # longest sum (the run's T_p) and at most the sum over PEs; it exceeds the run's T_p when
    # another thread is the longest in some windows (on a loaded machine, by milliseconds).
    whole = {r["path"]: r for r in rep["on"]["regions"]}
    for k, reg in enumerate(d["regions"]):
        total = sum(r["t_p"] for w in d["windows"] for r in w["regions"] if r["id"] == k)
        run = whole[reg["path"]]
        pes_sum = sum(t["time"] for t in run["per_thread"])
        check(run["time"] - 1e-6 <= total <= pes_sum + 1e-6,
              f"{reg['path']}: the windows' T_p add up to {total:.6f} s, the run's T_p is "
              f"{run['time']:.6f} s, its PEs' times add up to {pes_sum:.6f} s")
    # Against a reference run (p = 1): every window classified, T_s not estimated.
    dr = env.over_time("on.exp", "-r", "ref.exp")
    check(not dr["t_s_estimated"] and dr["reference"] == "ref.exp" and len(dr["windows"]) == len(d["windows"]),
          f"with -r: {({k: v for k, v in dr.items() if k != 'windows'})}")
    top = env.run([env.scalea, "top", "on.exp", "-b", "-r", "ref.exp"]).stdout
    check("T_s: ref.exp scaled to each window's visits" in top and "finished" in top,
          "scalea top -r does not say it uses the reference")
    return 0


def scenario_mpi(env):
    a = env.a
    if not a.mpirun:
        print("SKIP: no mpirun")
        return 77
    exp = "mpi.exp"
    viewer = batch_viewer(env, exp)
    cmd = [a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", env.scalea, "run",
           "--snapshot", "200ms", "-o", exp, "--", os.path.join(a.bin, "mpi_phases"), *PHASE_ARGS]
    p = env.run(cmd, timeout=90)
    frames = viewer_frames(viewer, 20, "the run ended")
    check(not glob.glob(env.path("scalea-*")) and not os.path.exists(env.path(exp + ".live")),
          f"snapshot directories left behind: {os.listdir(env.work)}")
    check(sorted(os.listdir(env.path(exp + "/snapshots"))) == ["rank-000000", "rank-000001"],
          f"snapshots per rank: {os.listdir(env.path(exp + '/snapshots'))}")
    d = env.over_time(exp)
    t = Truth(p.stdout, d["start_epoch_s"], 2)
    check_frames(frames, t, "live view, per rank", "ranks")
    check(d["ranks"] == 2 and d["complete"], f"over-time header: ranks {d['ranks']}")
    check_series(d, t, "over-time report, per rank", rank_shares)
    text = env.run([env.scalea, "report", exp, "--over-time"]).stdout
    check("busy share of each rank per window" in text and "MPI_Barrier" in text,
          "the text report lacks the per-rank table or MPI_Barrier")
    # Without -o every rank's default name holds its own pid: at MPI_Init the ranks move their
    # snapshots beside rank 0's, and they end in the experiment.
    p = env.run([a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", env.scalea, "run",
                 "--snapshot", "50ms", "--", os.path.join(a.bin, "mpi_phases"), "8", "4", "20"],
                timeout=60)
    m = re.search(r"wrote experiment (\S+) ", p.stderr)
    ranks = sorted(os.listdir(env.path(m.group(1) + "/snapshots"))) if m else []
    check(ranks == ["rank-000000", "rank-000001"], f"default name: snapshots of {ranks}")
    check(not glob.glob(env.path("*.live")), f"left behind: {glob.glob(env.path('*.live'))}")
    return 0


def scenario_killed(env):
    exp = env.path("killed.exp")
    viewer = batch_viewer(env, "killed.exp")
    e = dict(os.environ, OMP_NUM_THREADS="2", SCALEA_SNAPSHOT="100ms", SCALEA_OUTPUT=exp,
             OMP_TOOL_LIBRARIES=os.path.join(env.a.lib, "libscalea-omp.so"))
    prog = subprocess.Popen([os.path.join(env.a.bin, "omp", "phases"), "1000", "1000", "20"],
                            env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for("three snapshots",
             lambda: len(glob.glob(exp + ".live/rank-*/snap-*.sdrg")) >= 3, 10)
    time.sleep(0.05)  # between two snapshots
    prog.send_signal(signal.SIGKILL)
    prog.communicate()
    last = viewer_frames(viewer, 15, "the program was killed")[-1]
    print("last frame:\n" + last)
    check("ended without its last snapshot" in last and parse_frame(last) is not None,
          "the viewer does not say the program ended, or does not keep its last snapshot")
    check(not os.path.exists(exp), "an experiment was written by a killed program")
    d = env.over_time("killed.exp")
    check(not d["complete"] and d["snapshots"].endswith(".live") and len(d["windows"]) >= 2,
          f"over-time of a killed run: complete {d['complete']}, {d['snapshots']}, "
          f"{len(d['windows'])} windows")
    return 0


def scenario_disk_full(env):
    full = env.path("full")
    os.makedirs(full)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full],
                      capture_output=True).returncode != 0:
        print("SKIP: cannot mount a tmpfs (needs root)")
        return 77
    try:
        app = [os.path.join(env.a.bin, "omp", "phases"), "30", "15", "10"]
        plain = env.run(app, env={"OMP_NUM_THREADS": "2"})
        with open(os.path.join(full, "fill"), "wb") as f:
            f.write(b"\0" * 40 * 1024)
        e = {"OMP_NUM_THREADS": "2", "SCALEA_SNAPSHOT": "10ms", "SCALEA_OUTPUT": full + "/exp",
             "OMP_TOOL_LIBRARIES": os.path.join(env.a.lib, "libscalea-omp.so")}
        p = env.run(app, env=e, check_rc=False)
        check(p.returncode == 0, f"the program's exit status changed: {p.returncode}")
        strip = lambda s: re.sub(r"^truth .*\n", "", s, flags=re.M)
        check(strip(p.stdout) == strip(plain.stdout), "the program's output changed")
        said = [l for l in p.stderr.splitlines() if "snapshots stopped" in l]
        check(len(said) == 1 and "No space left on device" in said[0],
              f"the tool must say once why snapshots stopped: {p.stderr}")
        check(not [l for l in p.stderr.splitlines() if l and not l.startswith("scalea: ")],
              f"unexpected messages: {p.stderr}")
        left = glob.glob(full + "/**/.*.tmp", recursive=True)
        check(not left, f"half-written snapshots left behind: {left}")
    finally:
        subprocess.run(["umount", full])
    return 0


def scenario_files(env):
    app = os.path.join(env.a.bin, "omp", "phases")
    env.run([env.scalea, "run", "-q", "--snapshot", "50ms", "-o", "done.exp", "--", app, "10", "5", "20"],
            env={"OMP_NUM_THREADS": "2"})
    # A viewer on a finished experiment: one frame, the end, and it ends.
    top = env.run([env.scalea, "top", "done.exp", "-b"], timeout=20).stdout
    check(top.count("scalea top ") == 1 and "finished" in top and parse_frame(top),
          "scalea top on a finished experiment: one frame, finished")
    # Before the program: it waits, bounded (--wait), says so, and then that nothing came.
    wait = env.run([env.scalea, "top", "nothing.exp", "-b", "--wait", "0.2"], timeout=20,
                   check_rc=False)
    check(wait.returncode == 2 and "waiting for snapshots in nothing.exp.live" in wait.stderr
          and "no experiment nothing.exp" in wait.stderr,
          f"no bounded wait: exit {wait.returncode}: {wait.stderr}")
    before = env.run([env.scalea, "report", "done.exp", "--over-time", "--format", "json"],
                     quiet=True).stdout
    rank = env.path("done.exp/snapshots/rank-000000")
    snaps = sorted(glob.glob(rank + "/snap-*.sdrg"))
    check(len(snaps) >= 3, f"snapshots: {snaps}")
    # A half-written snapshot (a hidden file: the writer renames it when complete) is not read.
    tick = int(re.search(r"snap-(\d+)", snaps[-1]).group(1)) + 1
    with open(f"{rank}/.snap-{tick:012d}.sdrg.tmp", "wb") as f:
        f.write(open(snaps[1], "rb").read()[:100])
    after = env.run([env.scalea, "report", "done.exp", "--over-time", "--format", "json"],
                    quiet=True).stdout
    check(before == after, "a hidden (half-written) snapshot changed the report")
    # A corrupt snapshot that is not hidden: one line naming it, a non-zero status.
    data = open(snaps[1], "rb").read()
    with open(snaps[1], "wb") as f:
        f.write(data[:len(data) // 2])
    for cmd in (["report", "done.exp", "--over-time"], ["report", "done.exp", "--over-time", "--format", "json"]):
        p = env.run([env.scalea, *cmd], check_rc=False)
        check(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and
              os.path.basename(snaps[1]) in p.stderr and not p.stdout,
              f"scalea {' '.join(cmd)} on a corrupt snapshot: exit {p.returncode}, {p.stderr!r}")
    final = rank + "/final.sdrg"
    open(final, "wb").write(b"SCALEA\0\0garbage")
    p = env.run([env.scalea, "top", "done.exp", "-b"], check_rc=False, timeout=20)
    check(p.returncode != 0 and "final.sdrg" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"scalea top on a corrupt last snapshot: exit {p.returncode}, {p.stderr!r}")
    # Bad options and settings: one line each, non-zero.
    env.run([env.scalea, "run", "-q", "-o", "plain.exp", "--", app, "4", "2", "5"])
    bad = [
        (["report", "plain.exp", "--over-time"], "no snapshots"),
        (["report", "nowhere.exp", "--over-time"], "no snapshots"),
        (["report", "done.exp", "--over-time", "--interval", "soon"], "soon"),
        (["report", "done.exp", "--over-time", "--interval", "10ms"], None),
        (["report", "done.exp", "--over-time", "--format", "markdown"], "markdown"),
        (["top", "done.exp", "-d", "never"], "--delay"),
        (["top", "done.exp", "-r", "missing.exp"], "missing.exp"),
        (["run", "--snapshot", "5ms", "--", app], "--snapshot"),
        (["run", "--snapshot", "fast", "--", app], "--snapshot"),
    ]
    for args, word in bad:
        p = env.run([env.scalea, *args], check_rc=False, timeout=20)
        lines = p.stderr.strip().splitlines()
        check(p.returncode != 0 and len(lines) == 1 and (word is None or word in lines[0]),
              f"scalea {' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r}")
    # A bad SCALEA_SNAPSHOT: said once, the program runs, the experiment has no snapshots.
    e = {"OMP_NUM_THREADS": "2", "SCALEA_SNAPSHOT": "fast", "SCALEA_OUTPUT": env.path("bad.exp"),
         "OMP_TOOL_LIBRARIES": os.path.join(env.a.lib, "libscalea-omp.so")}
    p = env.run([app, "4", "2", "5"], env=e)
    check(p.stderr.count("SCALEA_SNAPSHOT") == 1, f"a bad SCALEA_SNAPSHOT must be said once: {p.stderr!r}")
    check(os.path.exists(env.path("bad.exp/meta.json")) and
          not os.path.exists(env.path("bad.exp/snapshots")), "with a bad SCALEA_SNAPSHOT: no snapshots")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mpirun")
    ap.add_argument("scenario", choices=["live", "unchanged", "mpi", "killed", "disk_full", "files"])
    a = ap.parse_args()
    env = Env(a)
    rc = globals()["scenario_" + a.scenario](env)
    if rc == 77:
        return 77
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
