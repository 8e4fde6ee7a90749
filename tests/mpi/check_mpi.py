#!/usr/bin/env python3
"""MPI integration tests: run a program with the real mpirun under libscalea-mpi.so, load the
experiment (mpi_dump) and assert structure, bytes and planted times. Registered by tests.cmake.

usage: check_mpi.py --bin DIR --lib DIR --mpirun PATH --workdir DIR SCENARIO --np N [--preload]
scenarios: planted unify hybrid multiple fortran fortran_f08 abort nofinalize late throttle sites
           self hooks containers analysis
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testdir  # noqa: E402  (tests/testdir.py)

FAILURES = []
APPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps", "mpi")


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def near(value, expected, lo, hi, what):
    check(expected - lo <= value <= expected + hi,
          f"{what}: {value:.4f} not within [{expected - lo:.4f}, {expected + hi:.4f}]")


def hang_report(root):
    """What each process below `root` (and it) was doing: command, state, kernel wait channel,
    and its threads' stacks when gdb is installed (each attach bounded); then every one of them
    is killed (the ranks of a killed mpirun would run on)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree = [root]
    for pid in tree:
        tree += [c for c, pp in parent.items() if pp == pid]
    lines = [f"--- the processes of the run at the timeout ---"]
    for pid in tree:
        def read(name):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    return f.read().decode(errors="replace")
            except OSError:
                return ""
        state = next((l[6:].strip() for l in read("status").splitlines() if l.startswith("State:")), "")
        lines.append(f"pid {pid} [{state}] wchan {read('wchan')}: {read('cmdline').replace(chr(0), ' ')[:300]}")
        if shutil.which("gdb"):
            try:
                g = subprocess.run(["gdb", "-nx", "-batch", "-p", str(pid), "-ex", "thread apply all bt 25"],
                                   capture_output=True, text=True, timeout=20)
                lines += ["    " + l for l in g.stdout.splitlines() if l.startswith(("#", "Thread "))]
            except subprocess.TimeoutExpired:
                lines.append("    (gdb did not attach within 20 s)")
    for pid in tree:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    return "\n".join(lines)


class Run:
    def __init__(self, args, name):
        self.a = args
        self.dir = os.path.join(args.workdir, f"{name}-np{args.np}")
        for d in os.listdir(args.workdir):
            if d.startswith(os.path.basename(self.dir)):
                shutil.rmtree(os.path.join(args.workdir, d), ignore_errors=True)

    def run(self, program, prog_args=(), env=None, timeout=60, preload=False):
        a = self.a
        e = dict(os.environ)
        e.update(env or {})
        e["SCALEA_OUTPUT"] = self.dir
        cmd = [a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(a.np)]
        for k in sorted((env or {}).keys()) + ["SCALEA_OUTPUT"]:
            cmd += ["-x", k]
        if preload or a.preload:
            e["LD_PRELOAD"] = os.path.join(a.lib, "libscalea-mpi.so")
            cmd += ["-x", "LD_PRELOAD", os.path.join(a.bin, program)]
        else:
            cmd += [os.path.join(a.bin, "scalea"), "run", "--", os.path.join(a.bin, program)]
        cmd += list(prog_args)
        print("$", " ".join(cmd))
        t0 = time.time()
        p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # An mpirun that hangs once in many CI runs: say where every process of it was.
            print(hang_report(p.pid), file=sys.stderr)
            raise SystemExit(f"FAIL: {program} did not end within {timeout} s (stacks above)")
        p = subprocess.CompletedProcess(cmd, p.returncode, out, err)
        self.elapsed = time.time() - t0
        print(p.stdout[-3000:])
        print(p.stderr[-3000:], file=sys.stderr)
        print(f"(exit {p.returncode}, {self.elapsed:.1f} s)")
        self.rc = p.returncode
        self.stderr = p.stderr
        return p

    def load(self, d=None, symbols=False):
        """The experiment as mpi_dump prints it; symbols: with file:line resolved (and regions at
        the same source position merged, as the report does)."""
        d = d or self.dir
        p = subprocess.run([os.path.join(self.a.bin, "mpi_dump"), d] +
                           (["--symbols"] if symbols else []), capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"FAIL: cannot load {d}: {p.stderr.strip()}")
        data = json.loads(p.stdout)
        check(not data["identity_violations"],
              f"{d}: overhead classes do not sum to T_o: {data['identity_violations'][:3]}")
        return data


def nodes(d, rank, suffix, thread=None):
    return [n for n in d["nodes"] if n["rank"] == rank and n["path"].endswith(suffix) and
            (thread is None or n["thread"] == thread)]


def metric(d, rank, suffix, m, thread=0, agg=sum):
    ns = nodes(d, rank, suffix, thread)
    check(ns, f"rank {rank}: no node {suffix}")
    return agg([n["metrics"][m] for n in ns]) if ns else 0


def common(d, np_, complete=True):
    check(d["complete"] == complete, f"complete is {d['complete']}, expected {complete}")
    meta = d["meta"]
    check(meta.get("ranks") == np_, f"meta ranks {meta.get('ranks')} != {np_}")
    check(meta.get("definitions") == "definitions.sdrg", "no shared definitions file")
    ranks = sorted({n["rank"] for n in d["nodes"]})
    if complete:
        check(ranks == list(range(np_)), f"ranks in the data {ranks}")
        check(meta["mpi"]["ranks_written"] == list(range(np_)), "ranks_written")
    # Every MPI node: wait + transfer = time (management: neither); MPI class in the subkind.
    for n in d["nodes"]:
        if n["kind"] != "mpi":
            continue
        m = n["metrics"]
        if n["subkind"] == 5:
            check(m["wait"] == 0 and m["transfer"] == 0, f"{n['path']}: management has wait")
        else:
            check(abs(m["wait"] + m["transfer"] - m["time"]) <= 4 * m["visits"] + 10,
                  f"rank {n['rank']} {n['path']}: wait {m['wait']} + transfer {m['transfer']} "
                  f"!= time {m['time']}")
    for r in ranks:
        check(metric(d, r, "/MPI_Finalize", "visits") == 1, f"rank {r}: MPI_Finalize visits")


def report_json(run, d=None):
    """`scalea report DIR --format json`; its regions (empty when it failed)."""
    p = subprocess.run([os.path.join(run.a.bin, "scalea"), "report", d or run.dir, "--format",
                        "json"], capture_output=True, text=True)
    check(p.returncode == 0, f"scalea report failed: {p.stderr.strip()}")
    return json.loads(p.stdout)["regions"] if p.returncode == 0 else []


def source_line(app, marker):
    """The line of apps/mpi/APP that holds `marker` (a call site the test looks for)."""
    path = os.path.join(APPS, app)
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    raise SystemExit(f"FAIL: no line with '{marker}' in {path}")


def site_rows(regions, name):
    """(file name, line, function, visits) of the report's rows of MPI function `name`."""
    return sorted((os.path.basename(x["source"]["file"]), x["source"]["line"],
                   x["source"]["function"], x["visits"]) for x in regions if x["name"] == name)


# Planted values (apps/mpi/mpi_planted.c).
R, S, L, D = 0.10, 0.15, 0.20, 0.10
MSG, K, RING, RING_REPS, AR, AR_REPS, LA_REPS = 4096 * 8, 5, 262144 * 4, 10, 1000 * 8, 20, 20
MIB = 1 << 20


def planted(a, name="planted", scale=1.0):
    run = Run(a, name)
    run.run("mpi_planted", [str(scale)])
    check(run.rc == 0, f"mpi_planted exit status {run.rc}")
    d = run.load()
    n = a.np
    common(d, n)
    tol_lo, tol_hi = 0.02, 0.08 + 0.02 * n
    for r in range(n):
        check(metric(d, r, "program/MPI_Init", "visits") == 1, f"rank {r}: MPI_Init")
        near(metric(d, r, "program/replicated", "time") * 1e-9, R * scale, 0.005, tol_hi,
             f"rank {r}: replicated time")
        bc = nodes(d, r, "serial/MPI_Bcast", 0)
        check(len(bc) == 1 and bc[0]["subkind"] == 1, f"rank {r}: MPI_Bcast is a collective")
        check(metric(d, r, "serial/MPI_Bcast", "bytes_sent") == (8 if r == 0 else 0),
              f"rank {r}: Bcast bytes sent")
        check(metric(d, r, "serial/MPI_Bcast", "bytes_recv") == (0 if r == 0 else 8),
              f"rank {r}: Bcast bytes received")
        if r != 0:
            near(metric(d, r, "serial/MPI_Bcast", "time") * 1e-9, S * scale, tol_lo, tol_hi,
                 f"rank {r}: Bcast waits for the serial section")
            near(metric(d, r, "serial/MPI_Bcast", "wait") * 1e-9, S * scale, tol_lo, tol_hi,
                 f"rank {r}: Bcast wait")
        bar = nodes(d, r, "late_barrier/MPI_Barrier", 0)
        check(len(bar) == 1 and bar[0]["subkind"] == 2, f"rank {r}: MPI_Barrier is sync")
        bt = metric(d, r, "late_barrier/MPI_Barrier", "time") * 1e-9
        bw = metric(d, r, "late_barrier/MPI_Barrier", "wait") * 1e-9
        if r != n - 1:
            near(bt, L * scale, tol_lo, tol_hi, f"rank {r}: Barrier time (late last rank)")
            near(bw, L * scale, tol_lo, tol_hi, f"rank {r}: Barrier wait")
        else:
            check(bt < 0.05 + 0.02 * n, f"rank {r} (late) Barrier time {bt}")
        if n >= 2 and r == 0:
            check(metric(d, 0, "late_sender/MPI_Send", "visits") == K, "Send visits")
            check(metric(d, 0, "late_sender/MPI_Send", "bytes_sent") == K * MSG, "Send bytes")
        if n >= 2 and r == 1:
            check(metric(d, 1, "late_sender/MPI_Recv", "bytes_recv") == K * MSG, "Recv bytes")
            near(metric(d, 1, "late_sender/MPI_Recv", "time_max") * 1e-9, D * scale, tol_lo,
                 tol_hi, "late sender: longest Recv")
            near(metric(d, 1, "late_sender/MPI_Recv", "wait") * 1e-9, D * scale, tol_lo, tol_hi,
                 "late sender: Recv waiting")
        check(metric(d, r, "ring/MPI_Sendrecv", "visits") == RING_REPS, f"rank {r}: Sendrecv visits")
        check(metric(d, r, "ring/MPI_Sendrecv", "bytes_sent") == RING_REPS * RING,
              f"rank {r}: Sendrecv bytes sent")
        check(metric(d, r, "ring/MPI_Sendrecv", "bytes_recv") == RING_REPS * RING,
              f"rank {r}: Sendrecv bytes received")
        check(metric(d, r, "/allreduce/MPI_Allreduce", "visits") == AR_REPS, f"rank {r}: Allreduce")
        check(metric(d, r, "/allreduce/MPI_Allreduce", "bytes_sent") == AR_REPS * AR,
              f"rank {r}: Allreduce bytes")
        check(metric(d, r, "late_allreduce/MPI_Allreduce", "visits") == LA_REPS,
              f"rank {r}: late Allreduce visits")
    wait_states(run, n)
    return d


# What each MPI call of mpi_planted waits for (Scalasca's wait states), in the report's rows and
# in the finding about the late sender's receive.
WAIT_STATES = {"MPI_Bcast": "late broadcast", "MPI_Barrier": "wait at barrier",
               "MPI_Send": "late receiver", "MPI_Recv": "late sender",
               "MPI_Sendrecv": "late sender or receiver", "MPI_Allreduce": "wait at NxN",
               "MPI_Init": None, "MPI_Finalize": None}


def wait_states(run, n):
    p = subprocess.run([os.path.join(run.a.bin, "scalea"), "report", run.dir, "--format", "json",
                        "--findings", "10"], capture_output=True, text=True)
    check(p.returncode == 0, f"scalea report failed: {p.stderr.strip()}")
    if p.returncode != 0:
        return
    doc = json.loads(p.stdout)
    for x in doc["regions"]:
        if x["kind"] == "mpi" and x["name"] in WAIT_STATES:
            check(x["mpi"]["wait_state"] == WAIT_STATES[x["name"]],
                  f"{x['name']}: wait state {x['mpi']['wait_state']!r}")
    # Start-up and shut-down (MPI_Init, MPI_Finalize) are fixed costs: findings the program's
    # code cannot act on, which the HTML summary does not lead with.
    startup = [f for f in doc["findings"] if f["subclass"] == "startup"]
    check(all(f["actionable"] is (f["subclass"] != "startup") for f in doc["findings"]),
          f"actionable: {[(f['path'], f['subclass'], f['actionable']) for f in doc['findings']]}")
    print(f"findings: {len(doc['findings'])}, of start-up (not actionable): {len(startup)}")
    # At 8 ranks (mpi.unify) the late sender's D/p is one finding among many: 2 and 4 show it.
    if 2 <= n <= 4:
        recv = [f for f in doc["findings"] if "/MPI_Recv@" in f["path"]]
        check(len(recv) == 1 and recv[0]["wait_state"] == "late sender"
              and "late sender" in recv[0]["text"],
              f"the late sender's finding: {[(f['path'], f['wait_state']) for f in recv]}")


def unify(a):
    d = planted(a, "unify", scale=0.2)
    u = d["meta"]["mpi"]["unification"]
    check(u["tree"] == "binomial" and u["regions"] >= 15, f"unification {u}")


def unpack_containers(d):
    """Turns the few-files experiment D into the per-rank layout in place: each rank file of each
    container (its bytes unchanged) becomes rank-NNNNNN.sdrg, and meta.json lists those."""
    meta_path = os.path.join(d, "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    names = []
    for c in meta["files"]:
        with open(os.path.join(d, c), "rb") as f:
            data = f.read()
        count = struct.unpack_from("<I", data, 16)[0]  # ContainerHeader: magic, version, size, count
        for i in range(count):
            rank, _crc, offset, length = struct.unpack_from("<iIQQ", data, 32 + 24 * i)
            names.append(f"rank-{rank:06d}.sdrg")
            with open(os.path.join(d, names[-1]), "wb") as f:
                f.write(data[offset:offset + length])
        os.remove(os.path.join(d, c))
    meta["files"] = sorted(names)
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)


def report_text(run):
    p = subprocess.run([os.path.join(run.a.bin, "scalea"), "report", run.dir], capture_output=True,
                       text=True)
    check(p.returncode == 0, f"scalea report failed: {p.stderr.strip()}")
    return p.stdout


def containers(a):
    """The few-files layout: at most 2 data files per node plus the definitions, read back by
    `scalea report` exactly as the same data in one file per rank."""
    run = Run(a, "containers")
    run.run("mpi_planted", ["0.02"], env={"SCALEA_MPI_LAYOUT": "nodes"}, timeout=240)
    check(run.rc == 0, f"mpi_planted exit status {run.rc}")
    names = sorted(os.listdir(run.dir))
    data = [n for n in names if n not in ("meta.json", "definitions.sdrg")]
    check(data and all(n.endswith(".sdrc") for n in data), f"data files {data[:5]}")
    check(len(data) <= 2, f"{len(data)} data files on one node (at most 2)")
    d = run.load()
    common(d, a.np)
    print(f"unification: {d['meta']['mpi']['unification']}")
    few = report_text(run)
    unpack_containers(run.dir)
    check(all(n.endswith(".sdrg") or n == "meta.json" for n in os.listdir(run.dir)),
          "unpacked: rank files only")
    check(report_text(run) == few, "the report of the rank files differs from the containers'")
    check(len(few.splitlines()) > 10, "a report")


def source_line(app_file, text):
    """The line number of the one line of apps/mpi/APP_FILE that holds `text`."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps", "mpi", app_file)
    lines = [i for i, line in enumerate(open(path), 1) if text in line]
    check(len(lines) == 1, f"{app_file}: {len(lines)} lines hold {text!r}")
    return lines[0]


def report_outputs(a, d, np_, reference, count=None):
    """What `scalea report D` prints in every view the MPI analysis runs (text, times, mpi, csv,
    markdown, and against a reference), as (stdout, exit status) pairs: serial with np_ None,
    else under mpirun -np np_. count: only the first views."""
    views = [[], ["-r", reference], ["--view", "times"], ["--view", "mpi"], ["-f", "csv"],
             ["-f", "markdown"], ["-r", reference, "-f", "csv"]][:count]
    out = []
    for view in views:
        cmd = [os.path.join(a.bin, "scalea"), "report", d] + view
        if np_:
            cmd = [a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(np_)] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        out.append((" ".join(view) or "text", p.returncode, p.stdout))
    return out


def analysis(a):
    """`mpirun -np N scalea report DIR` prints what the serial command prints, byte for byte, in
    every view, from rank files and from containers, with more processes than files too; a file
    that cannot be read is one line from rank 0 and a non-zero exit. The program ends a parallel
    region with a tail jump into the runtime ("tail"): placing that barrier in its body is done
    from each process's block of files, as serially."""
    # The premise: the build ends the region's body by a jump into the runtime. Sanitizer builds
    # (-O1, instrumented frames) call instead; the test then checks the ordinary placement only.
    if shutil.which("objdump"):
        code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", os.path.join(a.bin, "mpi_hybrid")],
                              capture_output=True, text=True).stdout
        check(re.search(r"\bjmp\s+[0-9a-f]+ <__kmpc_barrier@plt>", code) or
              re.search(r"<__[at]san_", code),
              "mpi_hybrid: no tail jump to __kmpc_barrier (built without sibling calls?)")
    # One rank: rank 1's tail region is not in the reference (its arguments must be the same).
    ref_args = argparse.Namespace(**dict(vars(a), np=1))
    ref = Run(ref_args, "analysis-ref")
    ref.run("mpi_hybrid", ["1", "tail"], env={"OMP_NUM_THREADS": "1"})
    check(ref.rc == 0, f"reference exit status {ref.rc}")
    experiments = []
    # The containers as nodes of 3 ranks would write them: several containers, the last one
    # smaller, on one machine.
    node_ranks = 3
    for layout in ("ranks", "nodes"):
        run = Run(a, f"analysis-{layout}")
        run.run("mpi_hybrid", ["1", "tail"], env={"OMP_NUM_THREADS": "2", "SCALEA_MPI_LAYOUT": layout,
                                          "SCALEA_MPI_NODE_RANKS": str(node_ranks)})
        check(run.rc == 0, f"mpi_hybrid ({layout}) exit status {run.rc}")
        data = [n for n in os.listdir(run.dir) if n.endswith((".sdrc", ".sdrg"))
                and n != "definitions.sdrg"]
        want = a.np if layout == "ranks" else -(-a.np // node_ranks)
        check(len(data) == want, f"{layout}: {len(data)} data files, {want} expected: {data}")
        experiments.append(run.dir)
    for d in experiments:
        serial = report_outputs(a, d, None, ref.dir)
        check(all(rc == 0 and len(text.splitlines()) > 5 for _, rc, text in serial),
              f"{d}: serial reports {[(v, rc) for v, rc, _ in serial]}")
        tail = re.search(r"^ +barrier \(implicit\) @mpi_hybrid\.c:(\d+)", serial[0][2], re.M)
        check(tail and source_line("mpi_hybrid.c", "#pragma omp single") == int(tail.group(1)),
              f"{d}: the single's barrier, reported in the runtime, is not placed at its pragma")
        # Every view where the blocks of files are uneven (3) and where processes outnumber the
        # files (np + 1); the text and the reference's views at 2 processes (the views share the
        # partition; each mpirun costs half a second; at 1 process the command runs serially).
        for np_, count in ((2, 2), (3, None), (a.np + 1, None)):
            shared = report_outputs(a, d, np_, ref.dir, count)
            for (view, rc, text), (_, src, stext) in zip(serial, shared):
                check(src == rc and stext == text,
                      f"{os.path.basename(d)} {view}: mpirun -np {np_} differs from serial "
                      f"(exit {src}, {len(stext)} bytes vs {len(text)})")
    bad = experiments[0] + "-truncated"
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(experiments[0], bad)
    with open(os.path.join(bad, "rank-000001.sdrg"), "r+b") as f:
        f.truncate(100)
    p = subprocess.run([a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                        os.path.join(a.bin, "scalea"), "report", bad],
                       capture_output=True, text=True, timeout=120)
    lines = [line for line in p.stderr.splitlines() if line.startswith("scalea")]
    check(p.returncode == 2 and p.stdout == "" and len(lines) == 1 and "rank-000001" in lines[0],
          f"truncated rank file: exit {p.returncode}, stderr {lines}")
    # The other commands made from one classification print what they print serially; the
    # processes share the classification and rank 0 prints.
    for cmd in (["report", experiments[0], "--format", "json"],
                ["report", experiments[0], "--format", "json", "-r", ref.dir],
                ["export", "--format", "csv", experiments[0]],
                ["export", "--format", "json", "-r", ref.dir, experiments[0]],
                ["diff", experiments[0], experiments[1]],
                ["diff", experiments[0], experiments[1], "--format", "json"]):
        serial = subprocess.run([os.path.join(a.bin, "scalea")] + cmd, capture_output=True,
                                text=True, timeout=120)
        check(serial.returncode == 0 and len(serial.stdout) > 100,
              f"scalea {' '.join(cmd[:2])}: exit {serial.returncode}")
        for np_ in (2, a.np + 1):
            p = subprocess.run([a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np",
                                str(np_), os.path.join(a.bin, "scalea")] + cmd,
                               capture_output=True, text=True, timeout=120)
            check(p.returncode == 0 and p.stdout == serial.stdout,
                  f"mpirun -np {np_} scalea {' '.join(cmd)}: exit {p.returncode}, "
                  f"{len(p.stdout)} bytes vs {len(serial.stdout)}")
    # A study's report: the processes classify each run together, rank 0 prints.
    study = os.path.join(os.path.dirname(experiments[0]), "analysis.study")
    shutil.rmtree(study, ignore_errors=True)
    p = subprocess.run([os.path.join(a.bin, "scalea"), "study", "-o", study, "--threads",
                        "1,2", "--", os.path.join(a.bin, "study/study_app"), "3"],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"scalea study: exit {p.returncode}: {p.stderr[-300:]}")
    for view in ([], ["-f", "json"], ["-f", "csv"]):
        cmd = [os.path.join(a.bin, "scalea"), "report", study] + view
        serial = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        check(serial.returncode == 0 and "speedup" in serial.stdout.lower(),
              f"study report {view}: exit {serial.returncode}")
        for np_ in (2, 3):
            p = subprocess.run([a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np",
                                str(np_)] + cmd, capture_output=True, text=True, timeout=120)
            check(p.returncode == 0 and p.stdout == serial.stdout,
                  f"mpirun -np {np_} scalea report STUDY {view}: exit {p.returncode}, "
                  f"{len(p.stdout)} bytes vs {len(serial.stdout)}")
    # What does not run as an MPI program yet says so once, never prints N outputs.
    page = os.path.join(os.path.dirname(experiments[0]), "analysis.html")
    p = subprocess.run([a.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                        os.path.join(a.bin, "scalea"), "report", experiments[0], "--html", page],
                       capture_output=True, text=True, timeout=120)
    lines = [line for line in p.stderr.splitlines() if line.startswith("scalea")]
    check(p.returncode == 2 and p.stdout == "" and len(lines) == 1 and
          "does not run as an MPI program yet" in lines[0] and not os.path.exists(page),
          f"mpirun -np 2 scalea report --html: exit {p.returncode}, stderr {lines}")


def per_thread_by_file(run, d):
    """The outputs that list each thread's values, made one rank file at a time: the JSON report's
    per_thread lists and the CSV export's rows hold every thread of every rank file, in the order
    of the experiment loaded whole (mpi_dump), with its values."""
    regions = report_json(run)
    if not regions:
        return
    roots = [n for n in d["nodes"] if n["index"] == 0]
    listed = regions[0]["per_thread"]
    check([(x["rank"], x["thread"]) for x in listed] == [(n["rank"], n["thread"]) for n in roots],
          f"the program's per_thread list {[(x['rank'], x['thread']) for x in listed]}")
    for x, n in zip(listed, roots):
        near(x["time"], n["metrics"]["time"] * 1e-9, 1e-12, 1e-12,
             f"rank {x['rank']} thread {x['thread']}: the program's time")
    for r in regions:
        check(r["per_thread"] and sum(x["visits"] for x in r["per_thread"]) == r["visits"],
              f"{r['path']}: per_thread visits do not add up to the region's")
    p = subprocess.run([os.path.join(run.a.bin, "scalea"), "export", "--format", "csv", run.dir],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"scalea export --format csv failed: {p.stderr.strip()}")
    rows = [(row["path"], int(row["rank"]), int(row["thread"]), float(row["visits"]))
            for row in csv.DictReader(io.StringIO(p.stdout))]
    want = [(r["path"], x["rank"], x["thread"], x["visits"]) for r in regions
            for x in r["per_thread"]]
    check(rows == want, f"CSV rows ({len(rows)}) are not the JSON report's threads ({len(want)})")


def hybrid(a, multiple=False):
    run = Run(a, "hybrid-multiple" if multiple else "hybrid")
    run.run("mpi_hybrid", ["1"] + (["multiple"] if multiple else []), env={"OMP_NUM_THREADS": "2"})
    check(run.rc == 0, f"mpi_hybrid exit status {run.rc}")
    d = run.load()
    common(d, a.np)
    level = d["meta"]["mpi"]["thread_level"]
    check(level == ("multiple" if multiple else "funneled"), f"thread level {level}")
    if multiple:
        # Every thread's own Sendrecv calls, concurrently: per thread 10 visits, 10 x 1000 bytes.
        for r in range(a.np):
            for t in (0, 1):
                sr = nodes(d, r, "/MPI_Sendrecv", t)
                check(sum(x["metrics"]["visits"] for x in sr) == 10, f"rank {r} thread {t}: visits")
                check(sum(x["metrics"]["bytes_sent"] for x in sr) == 10000, f"rank {r} thread {t}: bytes")
                check(sum(x["metrics"]["bytes_recv"] for x in sr) == 10000, f"rank {r} thread {t}: bytes")
    for r in range(a.np):
        ar = nodes(d, r, "parallel/masked/MPI_Allreduce")
        check(sum(x["metrics"]["visits"] for x in ar) == 3, f"rank {r}: Allreduce in masked x3")
        check(all(x["thread"] == 0 for x in ar), f"rank {r}: Allreduce on the master thread")
        check(sum(x["metrics"]["bytes_sent"] for x in ar) == 3 * 512 * 8, f"rank {r}: bytes")
        check(metric(d, r, "program/MPI_Init_thread", "visits") == 1, f"rank {r}: Init_thread")
        # Thread 0 works 0.02 s, thread 1 0.07 s: thread 0 waits about 0.05 s per step at the
        # first explicit barrier.
        bars = [x for x in nodes(d, r, "parallel/barrier", 0)]
        waited = max((x["metrics"]["wait"] for x in bars), default=0) * 1e-9
        near(waited, 0.05, 0.015, 0.06, f"rank {r}: OpenMP barrier wait (planted imbalance)")
    check(len({n["thread"] for n in d["nodes"]}) >= 2, "OpenMP worker threads recorded")
    per_thread_by_file(run, d)


def fortran(a, program="mpi_fortran"):
    run = Run(a, program[4:])
    run.run(program, ["1"])
    check(run.rc == 0, f"{program} exit status {run.rc}")
    d = run.load()
    common(d, a.np)
    n = a.np
    for r in range(n):
        check(metric(d, r, "program/MPI_Init", "visits") == 1, f"rank {r}: MPI_Init (Fortran)")
        check(metric(d, r, "program/MPI_Barrier", "visits") == 1, f"rank {r}: one Barrier visit")
        check(metric(d, r, "program/MPI_Allreduce", "visits") == 10, f"rank {r}: Allreduce visits")
        check(metric(d, r, "program/MPI_Allreduce", "bytes_sent") == 10 * 800, f"rank {r}: bytes")
        if r != n - 1:
            near(metric(d, r, "program/MPI_Barrier", "time") * 1e-9, 0.2, 0.02, 0.1,
                 f"rank {r}: Barrier waits for the late rank")
    if n >= 2:
        check(metric(d, 0, "program/MPI_Send", "bytes_sent") == 4 * 2048 * 8, "Fortran Send bytes")
        check(metric(d, 1, "program/MPI_Recv", "bytes_recv") == 4 * 2048 * 8, "Fortran Recv bytes")
    # Call sites: the Fortran wrapper's caller is the program's code.
    regions = report_json(run)
    src = "mpi_fortran.F90"
    for name, marker, visits in (("MPI_Allreduce", "call MPI_ALLREDUCE(", 10 * n),
                                 ("MPI_Barrier", "call MPI_BARRIER(", n)):
        rows = site_rows(regions, name)
        want = [(src, source_line(src, marker), "mpi_fortran", visits)]
        check(rows == want, f"{name} call site rows {rows}, expected {want}")


def sites(a):
    # Two call sites of MPI_Allreduce: two regions, each with its file:line, one row per site
    # over all ranks (apps/mpi/mpi_sites.c: site A runs 3 times, site B 5 times, on every rank).
    run = Run(a, "sites")
    run.run("mpi_sites", ["sites"])
    check(run.rc == 0, f"mpi_sites exit status {run.rc}")
    d = run.load()
    common(d, a.np)
    la, lb = source_line("mpi_sites.c", "site A"), source_line("mpi_sites.c", "site B")
    # The collector's unified table (no symbols): every rank's Allreduce nodes have the same
    # regions, although each rank has the executable at another address (PIE, ASLR): regions are
    # unified by module-relative address.
    per_rank = [sorted({x["region"] for x in d["nodes"] if x["rank"] == r and
                        x["name"] == "MPI_Allreduce"}) for r in range(a.np)]
    check(len(per_rank[0]) >= 2, f"rank 0: {len(per_rank[0])} MPI_Allreduce region(s), expected "
          "one per call site")
    check(all(p == per_rank[0] for p in per_rank), f"call-site regions differ by rank: {per_rank}")
    ds = run.load(symbols=True)
    for r in range(a.np):
        by_line = {}
        for x in ds["nodes"]:
            if x["rank"] == r and x["name"] == "MPI_Allreduce":
                check(os.path.basename(x["file"]) == "mpi_sites.c" and x["function"] == "sites",
                      f"rank {r}: MPI_Allreduce at {x['file']}:{x['line']} in {x['function']}")
                by_line[x["line"]] = by_line.get(x["line"], 0) + x["metrics"]["visits"]
        check(by_line == {la: 3, lb: 5}, f"rank {r}: visits by line {by_line}, expected "
              f"{{{la}: 3, {lb}: 5}}")
    rows = site_rows(report_json(run), "MPI_Allreduce")
    want = [("mpi_sites.c", la, "sites", 3 * a.np), ("mpi_sites.c", lb, "sites", 5 * a.np)]
    check(rows == want, f"report rows {rows}, expected {want}")


SELF_REPS, PAIR_REPS = 8, 6  # apps/mpi/mpi_sites.c


def self_partner(a):
    # Calls whose only partner is the rank itself or MPI_PROC_NULL, and nonblocking posts, never
    # wait: all their time is transfer. At 1 rank the model is the uncalibrated default; at more,
    # SCALEA_MPI_CALIBRATE=0,0 makes the model explain nothing, so that any time not taken as
    # transfer would show as waiting (as it does for the ring Sendrecv to real neighbours).
    run = Run(a, "self")
    run.run("mpi_sites", ["self"], env={} if a.np == 1 else {"SCALEA_MPI_CALIBRATE": "0,0"})
    check(run.rc == 0, f"mpi_sites exit status {run.rc}")
    d = run.load(symbols=True)
    common(d, a.np)
    calls = [("self-sendrecv", "MPI_Sendrecv", SELF_REPS), ("self-irecv", "MPI_Irecv", SELF_REPS),
             ("self-isend", "MPI_Isend", SELF_REPS), ("proc-null", "MPI_Send", 1)]
    if a.np >= 2:
        calls += [("pair-irecv", "MPI_Irecv", PAIR_REPS), ("pair-isend", "MPI_Isend", PAIR_REPS)]
    lines = {}
    for r in range(a.np):
        def site(marker):
            line = lines.setdefault(marker, source_line("mpi_sites.c", "site " + marker))
            return [x for x in d["nodes"] if x["rank"] == r and x["kind"] == "mpi" and
                    x["line"] == line and os.path.basename(x["file"]) == "mpi_sites.c"]
        for marker, name, visits in calls:
            ns = site(marker)
            got = {k: sum(x["metrics"][k] for x in ns)
                   for k in ("visits", "time", "wait", "transfer")}
            check(ns and all(x["name"] == name for x in ns) and got["visits"] == visits,
                  f"rank {r}: {marker}: {[x['name'] for x in ns]} {got}, expected {visits} {name}")
            check(got["wait"] == 0 and got["time"] > 0 and got["transfer"] == got["time"],
                  f"rank {r}: {name} ({marker}) waits: {got}")
        if a.np >= 2:
            ring = site("ring-sendrecv")
            w, t = (sum(x["metrics"][k] for x in ring) for k in ("wait", "time"))
            check(ring and t > 0 and w == t, f"rank {r}: ring MPI_Sendrecv (a real partner, "
                  f"model 0): wait {w} of time {t}, expected all")
    regions = report_json(run)
    for marker, name, _ in calls:
        rows = [x for x in regions if x["name"] == name and x["source"]["line"] == lines[marker]]
        check(len(rows) == 1 and rows[0]["wait_total"] == 0,
              f"report: {name} ({marker}) rows {[(x['path'], x['wait_total']) for x in rows]}")
        if a.np == 1 and rows:
            check(rows[0]["overheads"]["synchronization"] == 0,
                  f"report: {name} ({marker}) synchronization {rows[0]['overheads']}")


def hooks(a):
    # An MPI program built with -finstrument-functions -rdynamic (apps/mpi/mpi_hooks.c): its
    # function regions are recorded through libscalea-mpi.so's __cyg_profile_func_* hooks.
    run = Run(a, "hooks")
    run.run("mpi_hooks")
    check(run.rc == 0, f"mpi_hooks exit status {run.rc}")
    d = run.load(symbols=True)
    common(d, a.np)
    for r in range(a.np):
        for path, kind, visits in (("program/main", "function", 1),
                                   ("program/main/compute", "function", 7),
                                   ("program/main/exchange", "function", 4),
                                   ("program/main/exchange/MPI_Allreduce", "mpi", 4)):
            ns = [x for x in nodes(d, r, path, 0) if x["path"] == path]
            check(len(ns) == 1 and ns[0]["kind"] == kind and ns[0]["metrics"]["visits"] == visits,
                  f"rank {r}: {path}: {[(x['kind'], x['metrics']['visits']) for x in ns]}, "
                  f"expected {visits} visit(s) of a {kind} region")
        # compute() sleeps 2 ms, 4 ms, 2 ms, ...: 20 ms in 7 calls.
        near(metric(d, r, "program/main/compute", "time") * 1e-9, 0.020, 0.001, 0.05,
             f"rank {r}: compute time")


def abort(a):
    run = Run(a, "abort")
    run.run("mpi_fail", ["abort"], timeout=60)
    check(run.rc != 0, "mpirun reports the abort")
    check(run.elapsed < 25, f"took {run.elapsed:.1f} s (the program sleeps 30 s: killed?)")
    d = run.load()
    aborter = 1 if a.np > 1 else 0
    check(d["complete"] is False, "abort: experiment marked incomplete")
    check(sorted({n["rank"] for n in d["nodes"]}) == [aborter], "abort: the aborting rank's data")
    check(any("MPI_Abort" in s for s in d["meta"]["notes"]), "abort: note")
    check(metric(d, aborter, "program/MPI_Abort", "visits") == 1, "MPI_Abort region")
    check(d["meta"]["finished_by"] == "MPI_Abort", "finished_by")


def nofinalize(a):
    run = Run(a, "nofinalize")
    run.run("mpi_fail", ["nofinalize"], timeout=60)
    d = run.load()
    check(d["complete"] is False, "no MPI_Finalize: incomplete")
    check(d["meta"]["mpi"]["no_finalize_ranks"] == list(range(a.np)), "no_finalize_ranks")
    check(sorted({n["rank"] for n in d["nodes"]}) == list(range(a.np)), "all ranks' data")
    check(d["meta"]["finished_by"] == "exit", "finished_by exit")
    for r in range(a.np):
        check(metric(d, r, "program/MPI_Allreduce", "visits") == 1, f"rank {r}: Allreduce")


def late(a):
    run = Run(a, "late")
    late_s, timeout_s = 8, 1.5
    run.run("mpi_fail", ["late", str(late_s)], env={"SCALEA_MPI_TIMEOUT": str(timeout_s)},
            timeout=80)
    check(run.rc == 0, f"exit status {run.rc}")
    check(run.elapsed < late_s + 20, f"took {run.elapsed:.1f} s")
    d = run.load()
    last = a.np - 1
    check(d["complete"] is False, "late rank: incomplete")
    check(d["meta"]["mpi"]["missing_ranks"] == [last], f"missing {d['meta']['mpi']['missing_ranks']}")
    check(sorted({n["rank"] for n in d["nodes"]}) == list(range(last)), "the others' data")
    # The late rank wrote its own data next to it.
    d2 = run.load(run.dir + f".rank-{last}")
    check(sorted({n["rank"] for n in d2["nodes"]}) == [last], "late rank's own experiment")
    check(d2["complete"] is False, "late rank's experiment is incomplete")


def throttle(a):
    # Every rank throttles its hot user region; rank 0's meta.json lists every rank's, and the
    # report marks the merged region.
    run = Run(a, "throttle")
    run.run("mpi_throttle", env={"SCALEA_THROTTLE": "100:1s", "SCALEA_THROTTLE_REGIONS": "user",
                                 "SCALEA_COUNTERS": "NO_SUCH_EVENT", "SCALEA_NO_SUCH_SETTING": "1"})
    check(run.rc == 0, f"mpi_throttle exit status {run.rc}")
    d = run.load()
    common(d, a.np)
    th = d["meta"]["throttle"]
    check(th["count"] == a.np, f"throttled count {th['count']}, expected one per rank")
    listed = sorted(e["rank"] for e in th["throttled"])
    check(listed == list(range(a.np)), f"throttled entries of ranks {listed}")
    for e in th["throttled"]:
        tiny = [n for n in d["nodes"] if n["rank"] == e["rank"] and n["thread"] == e["thread"] and
                n["path"].endswith("/tiny")]
        check(len(tiny) == 1 and tiny[0]["index"] == e["node"],
              f"rank {e['rank']}: entry {e} does not name the node of 'tiny'")
        check(e["visits"] == 100, f"rank {e['rank']}: visits counted before throttling {e['visits']}")
    # What every rank would say alike is said once, by rank 0.
    for what in ("counters: none of the requested events", "unknown setting SCALEA_NO_SUCH_SETTING"):
        n = run.stderr.count(what)
        check(n == 1, f"'{what}' said {n} times, expected once for the job")
    said = [l for l in run.stderr.splitlines() if "throttled" in l]
    check(len(said) == 1 and f"throttled {a.np} call path(s)" in said[0] and
          f"on {a.np} of {a.np} ranks" in said[0], f"one line for all ranks expected: {said}")
    p = subprocess.run([os.path.join(a.bin, "scalea"), "report", run.dir, "--format", "json"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"scalea report failed: {p.stderr.strip()}")
    if p.returncode == 0:
        regions = json.loads(p.stdout)["regions"]
        marked = [r["path"] for r in regions if r.get("throttled")]
        check(len(marked) == 1 and marked[0].split("/")[-1].split("@")[0] == "tiny",
              f"throttled regions in the report: {marked}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--lib", required=True)
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--workdir", required=True)
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--preload", action="store_true")
    p.add_argument("scenario")
    a = p.parse_args()
    testdir.fresh(a.workdir)  # this test's own directory (tests.cmake)
    fn = {"planted": planted, "unify": unify, "hybrid": hybrid, "fortran": fortran,
          "multiple": lambda a: hybrid(a, multiple=True),
          "fortran_f08": lambda a: fortran(a, "mpi_fortran_f08"),
          "abort": abort, "nofinalize": nofinalize, "late": late, "throttle": throttle,
          "sites": sites, "self": self_partner, "hooks": hooks,
          "containers": containers, "analysis": analysis}[a.scenario]
    fn(a)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
