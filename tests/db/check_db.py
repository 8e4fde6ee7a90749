#!/usr/bin/env python3
"""The experiment database (scalea db, docs/database.md) against SQLite and a real PostgreSQL.

  check_db.py --bin BUILD/bin --source SRC --work DIR BACKEND GROUP

BACKEND sqlite: a database file in DIR. BACKEND postgresql: a server of Debian's postgresql
package made for the test (initdb + pg_ctl in a temporary directory, as an unprivileged user,
on a Unix socket and a free TCP port with password authentication), stopped at the end.
GROUP commands: every command (add, list, query, history with its plot, compare, rm, migrate,
run --db, study --db) on experiments of real programs under the real tool, each value checked
against what `scalea report`, `scalea report STUDY` and `scalea diff` print; the seed paper's
two queries as docs/database.md shows them. GROUP sampled: apps/omp/sampled (functions of known CPU time) stored with
its call-path samples: `db functions` names the planted functions with their CPU time within the
tolerance, the stored rows are `scalea export -f csv-sampled`'s, a schema-1 database is migrated,
`db rm` removes the rows. GROUP html (sqlite): `scalea db html` in headless
Chromium (tests/html's harness): the experiments by date and by tag, a region's classes over the
experiments and two runs compared, each value the database's; its bad input. GROUP faults: a
locked, read-only or newer database,
corrupt SQLite files, a refused connection, a server that goes away mid-insert, a writer killed
mid-insert, two adds at once, SQL errors and writes in db query, bad input: one line and exit
status 2 each, nothing half-stored, no password in any output. BACKEND both, GROUP same_answers:
the same commands against both backends print the same. Exit 0 = pass, 1 = fail.
"""
import argparse
import csv
import glob
import io
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testdir  # noqa: E402  (tests/testdir.py)

CLASSES = ["data_movement", "synchronization", "control_of_parallelism",
           "additional_computation", "loss_of_parallelism", "unidentified"]
PASSWORD = "s3cret-Pw9"
WRITER_LOCK = 115991155803745  # report/src/db/postgres.cpp


class Fail(Exception):
    pass


checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        raise Fail(msg)


def close(a, b, what):
    if a is None or b is None:
        check(a is None and b is None, f"{what}: {a} vs {b}")
        return
    check(abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12, f"{what}: {a} vs {b}")


OUTPUTS = []  # every output of scalea, for the password check


def run(args, ok=(0,), env=None, timeout=120, cwd=None):
    t0 = time.time()
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)
    OUTPUTS.append(p.stdout + p.stderr)
    if os.environ.get("CHECK_DB_TRACE"):
        print(f"{time.time() - t0:6.2f} s  {' '.join(map(str, args))[:150]}", file=sys.stderr)
    if ok is not None and p.returncode not in ok:
        raise Fail(f"{' '.join(map(str, args))} exited {p.returncode}\nstdout: {p.stdout[-3000:]}\n"
                   f"stderr: {p.stderr[-3000:]}")
    return p


# ---- a PostgreSQL server of our own --------------------------------------------------------

class PgServer:
    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
        if not bins or not os.path.exists(bins[-1] + "/initdb"):
            raise Fail("PostgreSQL is not installed (Debian: postgresql; scripts/setup-debian.sh)")
        self.bin = bins[-1]
        self.root = os.getuid() == 0
        # The server refuses to run as root: as root it runs as the package's postgres user.
        self.user = None
        if self.root:
            self.user = "postgres" if subprocess.run(["id", "postgres"], capture_output=True).returncode == 0 else "nobody"
        self.dir = tempfile.mkdtemp(prefix="scalea-pg-")
        os.chmod(self.dir, 0o755)
        os.makedirs(self.dir + "/sock")
        if self.root:
            subprocess.run(["chown", "-R", self.user, self.dir], check=True)
        run(self.as_user([self.bin + "/initdb", "-D", self.dir + "/data", "-U", "scalea", "--auth-local=trust",
                          "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"]))
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.start()
        run(self.as_user([self.bin + "/psql", "-X", "-q", "-h", self.dir + "/sock", "-p", self.port, "-U", "scalea",
                          "-d", "postgres", "-c", "CREATE DATABASE scalea",
                          "-c", f"ALTER ROLE scalea PASSWORD '{PASSWORD}'"]))
        self.url = f"postgresql:///scalea?host={self.dir}/sock&port={self.port}&user=scalea"
        self.tcp_url = f"postgresql://scalea:{PASSWORD}@127.0.0.1:{self.port}/scalea"

    def as_user(self, argv):
        return (["runuser", "-u", self.user, "--"] if self.root else []) + [str(a) for a in argv]

    def start(self):
        run(self.as_user([self.bin + "/pg_ctl", "-D", self.dir + "/data", "-l", self.dir + "/server.log", "-w",
                          "-t", "60", "-o", f"-k {self.dir}/sock -p {self.port} -c listen_addresses=127.0.0.1 "
                          "-c fsync=off -c full_page_writes=off", "start"]))

    def kill(self):  # as a crash: no shutdown, connections cut
        run(self.as_user([self.bin + "/pg_ctl", "-D", self.dir + "/data", "-m", "immediate", "stop"]), ok=None)

    def stop(self):
        run(self.as_user([self.bin + "/pg_ctl", "-D", self.dir + "/data", "-m", "fast", "-w", "stop"]), ok=None)
        shutil.rmtree(self.dir, ignore_errors=True)

    def psql(self, *args, **kw):
        return self.as_user([self.bin + "/psql", "-X", "-q", "-t", "-A", "-h", self.dir + "/sock", "-p", self.port,
                             "-U", "scalea", "-d", "scalea", *args])

    def sql(self, *statements):
        args = []
        for s in statements:
            args += ["-c", s]
        return run(self.psql(*args)).stdout.strip()


# ---- the test's context: binaries, experiments, the database -------------------------------

class Ctx:
    def __init__(self, a, backend, work):
        self.bin, self.source = os.path.abspath(a.bin), os.path.abspath(a.source)
        self.work, self.backend = work, backend
        self.scalea = os.path.join(self.bin, "scalea")
        # No setting of the caller's, no default database or machine file of the user's.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SCALEA_")}
        self.env["HOME"] = os.path.join(work, "home")
        self.env.pop("XDG_DATA_HOME", None)
        os.makedirs(self.env["HOME"], exist_ok=True)
        self.pg = None
        self.db = os.path.join(work, "experiments.db")
        if backend == "postgresql":
            self.pg = PgServer()
            self.db = self.pg.url

    def path(self, name):
        return os.path.join(self.work, name)

    def sc(self, *args, ok=(0,), env=None, **kw):
        e = dict(self.env, **(env or {}))
        return run([self.scalea, *args], ok=ok, env=e, cwd=self.work, **kw)

    def db_cmd(self, *args, db=None, ok=(0,), **kw):
        return self.sc("db", "--db", db or self.db, *args, ok=ok, **kw)

    def q(self, sql, db=None):
        return json.loads(self.db_cmd("query", sql, "-f", "json", db=db).stdout)

    def one(self, sql, db=None):
        rows = self.q(sql, db)
        return list(rows[0].values())[0] if rows else None

    def bad(self, args, *words, db=None, env=None):
        """db ARGS must fail: exit status 2, one line on stderr naming scalea, with `words`."""
        p = self.sc("db", "--db", db or self.db, *args, ok=None, env=env)
        where = f"scalea db {' '.join(args)}"
        check(p.returncode == 2, f"{where}: exit status {p.returncode}, expected 2: {p.stderr[-800:]}")
        lines = p.stderr.strip("\n").split("\n")
        check(len(lines) == 1, f"{where}: {len(lines)} lines on stderr: {p.stderr[-800:]}")
        check(lines[0].startswith("scalea db: "), f"{where}: the error does not start with 'scalea db: ': {lines[0]}")
        for w in words:
            check(w.lower() in lines[0].lower(), f"{where}: the error does not say '{w}': {lines[0]}")
        return lines[0]

    def experiment(self, name, threads, *args, prog="omp/imbalance"):
        d = self.path(name)
        shutil.rmtree(d, ignore_errors=True)
        self.sc("run", "-q", "-o", d, "--", os.path.join(self.bin, prog), *args, env={"OMP_NUM_THREADS": str(threads)})
        check(os.path.isfile(d + "/meta.json"), f"no experiment written at {d}")
        return d

    def study(self, name, unit, *extra):
        d = self.path(name)
        shutil.rmtree(d, ignore_errors=True)
        self.sc("study", "-o", d, "--threads", "1,2,4", *extra, "--", os.path.join(self.bin, "study/study_app"), unit)
        return d

    def close(self):
        if self.pg:
            self.pg.stop()


def report_json(c, *args):
    return json.loads(c.sc("report", *args, "--format", "json").stdout)


def count(c, table, where=""):
    return c.one(f"SELECT count(*) AS n FROM {table} {where}")


# ---- commands ---------------------------------------------------------------------------------

M64 = (1 << 64) - 1


def _mix(x):  # splitmix64's finalizer
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def key_hash(text, seed=(0, 0)):
    """report/src/db/ingest.cpp's hash_bytes: two 64-bit hashes of the bytes, from a parent's."""
    data = text.encode()
    a, b = 0xCBF29CE484222325 ^ seed[0], 0x84222325CBF29CE4 ^ _mix((seed[1] + 1) & M64)
    for ch in data:
        a = ((a ^ ch) * 0x100000001B3) & M64
        b = (b * 0x9E3779B97F4A7C15 + ch + 1) & M64
    return _mix(a ^ len(data)), _mix((b + (len(data) << 1)) & M64)


def hex_key(h):
    return "%016x%016x" % h


def check_region_keys(c):
    """The stored keys are the hashes of the region keys' texts from the program down, in the bytes
    every scalea has stored (drg/include/scalea/drg/region_key.hpp): a database written by an
    earlier scalea matches the runs added now."""
    with open(os.path.join(c.source, "apps/omp/imbalance.c")) as f:
        line = next(n for n, text in enumerate(f, 1) if "/* PARALLEL */" in text)
    program = key_hash(hex_key(key_hash("0:0:imbalance")))
    parallel = key_hash(hex_key(key_hash(f"3:0:@imbalance.c:{line}:main")), program)
    rows = c.q("SELECT label, region_key FROM regions WHERE depth <= 1")
    keys = {r["label"]: r["region_key"] for r in rows}
    check(keys == {"imbalance": hex_key(program), "parallel": hex_key(parallel)},
          f"region keys of the program and its parallel region: {keys}")


def check_region_values(c, rep, exp_id, what):
    """The database's rows of experiment exp_id hold what the JSON report says of each region."""
    cols = ", ".join(CLASSES)
    rows = {r["path"]: r for r in c.q(
        f"SELECT path, visits, t_p, t_s, t_o, {cols}, speedup, efficiency, pes, time_min, time_max, kind, "
        f"location FROM overheads WHERE experiment_id = {exp_id} AND in_run = 1")}
    check(len(rows) == len(rep["regions"]), f"{what}: {len(rows)} regions stored, the report has {len(rep['regions'])}")
    subs = {}
    for r in c.q(f"SELECT r.path, c.subclass, c.seconds FROM region_subclasses c JOIN regions r ON r.id = c.region_id "
                 f"WHERE c.experiment_id = {exp_id}"):
        subs.setdefault(r["path"], {})[r["subclass"]] = r["seconds"]
    for reg in rep["regions"]:
        row = rows.get(reg["path"])
        check(row is not None, f"{what}: region {reg['path']} not stored")
        w = f"{what} {reg['path']}"
        check(row["visits"] == reg["visits"], f"{w}: visits {row['visits']} vs {reg['visits']}")
        check(row["kind"] == reg["kind"], f"{w}: kind {row['kind']} vs {reg['kind']}")
        close(row["t_p"], reg["time"], w + " T_p")
        close(row["t_s"], reg["reference_time"], w + " T_s")
        close(row["t_o"], reg["overheads"]["total"], w + " T_o")
        for k in CLASSES:
            close(row[k], reg["overheads"][k], f"{w} {k}")
        close(row["speedup"], reg["speedup"], w + " speedup")
        close(row["efficiency"], reg["efficiency"], w + " efficiency")
        check(row["pes"] == reg["imbalance"]["pes"], f"{w}: pes {row['pes']} vs {reg['imbalance']['pes']}")
        times = [t["time"] for t in reg["per_thread"]]
        close(row["time_min"], min(times), w + " time_min")
        close(row["time_max"], max(times), w + " time_max")
        stored = subs.get(reg["path"], {})
        check(set(stored) == set(reg["overheads"]["subclasses"]),
              f"{w}: subclasses {sorted(stored)} vs {sorted(reg['overheads']['subclasses'])}")
        for k, v in reg["overheads"]["subclasses"].items():
            close(stored[k], v, f"{w} {k}")


def seed_queries(c):
    """The seed paper's two queries as docs/database.md shows them."""
    text = open(os.path.join(c.source, "docs/database.md")).read()
    q = {}
    for m in re.finditer(r"```sql\n(-- (Q\d):.*?)```", text, re.S):
        q[m.group(2)] = m.group(1)
    check("Q1" in q and "Q2" in q, "docs/database.md shows no ```sql blocks starting -- Q1: and -- Q2:")
    return q["Q1"], q["Q2"]


def do_commands(c):
    # Before anything is stored, reading says so.
    if c.backend == "sqlite":
        c.bad(["list"], "no database at")
    else:
        c.bad(["list"], "no experiments yet")
    p1 = c.experiment("imb.p1", 1, "10", "2")
    p4 = c.experiment("imb.p4", 4, "10", "2")

    out = c.db_cmd("add", p4, "-r", p1, "--tag", "commit=c1").stdout
    check("experiment 1: stored" in out and "experiment 2: stored" in out, f"db add: {out}")
    stats = count(c, "region_stats")
    # The same experiment again is the same rows; a new tag is added to it.
    out = c.db_cmd("add", p4, "-r", p1, "--tag", "extra=x").stdout
    check("experiment 2: " in out and "stored already" in out, f"db add again: {out}")
    check(count(c, "experiments") == 2 and count(c, "region_stats") == stats,
          "adding the same experiment again added rows")
    check(c.one("SELECT value FROM tags WHERE experiment_id = 2 AND tag = 'extra'") == "x", "the new tag is missing")
    check(count(c, "tags", "WHERE experiment_id = 1 AND tag = 'extra'") == 0, "the reference got the new tag")

    # Every region's values are the report's.
    check_region_values(c, report_json(c, p4, "-r", p1), 2, "imb.p4")
    check_region_values(c, report_json(c, p1, "-r", p1), 1, "imb.p1")
    bad_identity = count(c, "overheads", "WHERE abs(t_o - (" + " + ".join(CLASSES) + ")) > 1e-9")
    check(bad_identity == 0, f"{bad_identity} rows whose classes do not sum to T_o")

    check_region_keys(c)

    # What identifies the runs.
    exps = {e["id"]: e for e in json.loads(c.db_cmd("list", "-f", "json").stdout)}
    meta = json.load(open(p4 + "/meta.json"))
    e2 = exps[2]
    check(e2["program"] == "imbalance" and e2["arguments"] == "10 2", f"program and arguments: {e2}")
    check((e2["p"], e2["threads"], e2["ranks"]) == (4, 4, 1), f"p, threads, ranks: {e2}")
    check(e2["host"] == meta["host"] and e2["reference"] == 1 and exps[1]["reference"] == 1, f"host, reference: {e2}")
    check(e2["tags"] == "commit=c1 extra=x", f"tags: {e2['tags']}")
    git = subprocess.run(["git", "-C", os.path.join(c.bin, "omp"), "rev-parse", "HEAD"], capture_output=True, text=True)
    check(e2["git_commit"] == (git.stdout.strip() if git.returncode == 0 else None),
          f"git commit {e2['git_commit']} vs {git.stdout.strip()}")
    facts = c.q("SELECT compiler, openmp_runtime, started, tool_version, complete, reference_estimated FROM experiments "
                "WHERE id = 2")[0]
    check("clang" in (facts["compiler"] or ""), f"compiler: {facts['compiler']}")
    check("LLVM OMP" in (facts["openmp_runtime"] or ""), f"OpenMP runtime: {facts['openmp_runtime']}")
    check(facts["started"] == meta["start_time"] and facts["tool_version"] == meta["tool_version"], f"facts: {facts}")
    check(facts["complete"] == 1 and facts["reference_estimated"] == 0, f"facts: {facts}")

    # study --db stores every run against the study's reference; db add STUDY the same.
    s1 = c.study("s1", "3", "--db", c.db, "--tag", "series=nightly")
    s2 = c.study("s2", "4")
    c.db_cmd("add", s2, "--tag", "series=weekly")
    studies = json.loads(c.db_cmd("list", "--studies", "-f", "json").stdout)
    check([s["experiments"] for s in studies] == [3, 3], f"studies: {studies}")
    for sdir, tag in ((s1, "nightly"), (s2, "weekly")):
        rep = report_json(c, sdir)
        ids = {r["p"]: r["experiment_id"] for r in c.q(
            "SELECT e.p, e.id AS experiment_id FROM experiments e JOIN tags t ON t.experiment_id = e.id "
            f"WHERE t.tag = 'series' AND t.value = '{tag}'")}
        check(sorted(ids) == [1, 2, 4], f"study {tag}: experiments at p = {sorted(ids)}")
        for p, eid in ids.items():
            rows = {r["path"]: r for r in c.q(
                f"SELECT path, t_p, t_o, {', '.join(CLASSES)} FROM overheads WHERE experiment_id = {eid}")}
            entries = [r for r in rep["regions"] if r["p"] == p]
            check(len(entries) == len(rows), f"study {tag} p={p}: {len(rows)} regions stored, {len(entries)} reported")
            for r in entries:
                row = rows.get(r["path"])
                check(row is not None, f"study {tag} p={p}: {r['path']} not stored")
                close(row["t_p"], r["time"], f"study {tag} p={p} {r['path']} T_p")
                close(row["t_o"], r["overheads"]["total"], f"study {tag} p={p} {r['path']} T_o")
                for k in CLASSES:
                    close(row[k], r["overheads"][k], f"study {tag} p={p} {r['path']} {k}")

    # run --db, with and without -o.
    c.sc("run", "-q", "-o", c.path("r2"), "--db", c.db, "--tag", "via=run", "--",
         os.path.join(c.bin, "omp/imbalance"), "5", env={"OMP_NUM_THREADS": "2"})
    c.sc("run", "-q", "--db", c.db, "--tag", "via=default", "--", os.path.join(c.bin, "omp/imbalance"), "5",
         env={"OMP_NUM_THREADS": "2"})
    for via in ("run", "default"):
        rows = json.loads(c.db_cmd("list", "--tag", "via=" + via, "-f", "json").stdout)
        check(len(rows) == 1 and rows[0]["p"] == 2, f"run --db (via={via}): {rows}")
    check(os.path.isfile(rows[0]["path"] + "/meta.json"), f"run --db without -o stored {rows[0]['path']}")
    p = c.sc("run", "--db", c.db, "--", os.path.join(c.bin, "omp/imbalance"), "5", ok=None,
             env={"OMPI_COMM_WORLD_RANK": "0"})
    check(p.returncode == 2 and "needs -o" in p.stderr, f"run --db under a launcher without -o: {p.stderr}")

    # list filters and formats.
    def listed(*args):
        return len(json.loads(c.db_cmd("list", *args, "-f", "json").stdout))
    check(listed() == 10, f"list: {listed()} experiments, expected 10")
    check(listed("--program", "imbalance") == 4 and listed("--program", "study_app") == 6, "list --program")
    check(listed("--tag", "series=nightly") == 3 and listed("--tag", "series=nightly", "--tag", "commit=c1") == 0,
          "list --tag")
    text = c.db_cmd("list").stdout
    check(text.rstrip().endswith("(10 rows)"), f"list text: {text[-200:]}")
    csv_out = c.db_cmd("query", "SELECT id, program FROM experiments ORDER BY id", "-f", "csv").stdout.splitlines()
    check(csv_out[0] == "id,program" and csv_out[1] == "1,imbalance" and len(csv_out) == 11, f"query csv: {csv_out[:3]}")

    # history: a class of one region across the experiments, in time order, and its plot.
    region = next(r["path"] for r in report_json(c, s1)["regions"] if r["kind"] == "parallel")
    hist = json.loads(c.db_cmd("history", "--region", region, "--class", "synchronization", "-f", "json").stdout)
    check(len(hist) == 6, f"history: {len(hist)} rows, expected 6")
    check([h["experiment"] for h in hist] == sorted(h["experiment"] for h in hist), "history is not in time order")
    want = {r["experiment_id"]: r["synchronization"] for r in c.q(
        f"SELECT experiment_id, synchronization FROM overheads WHERE path = '{region}'")}
    for h in hist:
        close(h["synchronization"], want[h["experiment"]], f"history of experiment {h['experiment']}")
    weekly = json.loads(c.db_cmd("history", "--region", region, "--class", "total", "--tag", "series=weekly",
                                 "-f", "json").stdout)
    check(sorted(h["p"] for h in weekly) == [1, 2, 4], f"history --tag: {weekly}")
    sub = c.q(f"SELECT c.subclass, c.seconds, c.experiment_id FROM region_subclasses c JOIN regions r "
              f"ON r.id = c.region_id WHERE r.path = '{region}' ORDER BY c.experiment_id, c.subclass")
    check(sub, f"no subclass values for {region}")
    hs = json.loads(c.db_cmd("history", "--region", region, "--class", sub[0]["subclass"], "-f", "json").stdout)
    close(next(h[sub[0]["subclass"]] for h in hs if h["experiment"] == sub[0]["experiment_id"]), sub[0]["seconds"],
          "history of a subclass")
    part = region.split("/")[-1]
    loop = json.loads(c.db_cmd("history", "--region", "loop@study_app", "--class", "time", "-f", "json").stdout)
    check(len(loop) == 6, f"history of a part of a path: {len(loop)} rows")
    c.bad(["history", "--region", part.split("@")[1], "--class", "time"], "matches")
    c.bad(["history", "--region", "no-such-region", "--class", "time"], "no region")
    c.bad(["history", "--region", region, "--class", "speed"], "--class")
    for ext in ("svg", "png"):
        plot = c.path("history." + ext)
        c.db_cmd("history", "--region", region, "--class", "synchronization", "--plot", plot)
        data = open(plot, "rb").read()
        check(data.startswith(b"\x89PNG") if ext == "png" else b"<svg" in data and b"p = 4 (4 x 1)" in data,
              f"the {ext} plot is not one: {data[:80]}")

    # compare: the table of scalea diff.
    diff = c.sc("diff", p1, p4, "--ref-a", p1, "--ref-b", p1).stdout.splitlines()
    comp = c.db_cmd("compare", "1", "2").stdout.splitlines()
    check(comp[2:] == diff[2:], "db compare differs from scalea diff:\n" + "\n".join(comp) + "\n--\n" + "\n".join(diff))
    check(comp[0].startswith("A  " + p1 + " (p = 1") and comp[1].startswith("B  " + p4 + " (p = 4"), f"{comp[:2]}")
    dj = json.loads(c.sc("diff", p1, p4, "--ref-a", p1, "--ref-b", p1, "-f", "json").stdout)
    cj = json.loads(c.db_cmd("compare", "1", "2", "-f", "json").stdout)
    for key in ("regions", "only_in_a", "only_in_b"):
        check(json.dumps(cj[key], sort_keys=True) == json.dumps(dj[key], sort_keys=True),
              f"db compare --format json: {key} differs from scalea diff's")
    c.bad(["compare", "1", "99"], "no experiment 99")

    # The seed paper's queries, as docs/database.md shows them.
    q1, q2 = seed_queries(c)
    r1, r2 = c.q(q1), c.q(q2)
    rows = c.q("SELECT o.experiment_id, o.path, o.depth, o.t_p FROM overheads o JOIN tags t ON "
               "t.experiment_id = o.experiment_id WHERE t.tag = 'series' AND t.value = 'nightly'")
    top = max((r for r in rows if r["depth"] >= 1), key=lambda r: r["t_p"])
    check(len(r1) == 1 and r1[0]["path"] == top["path"] and r1[0]["experiment_id"] == top["experiment_id"],
          f"Q1 gave {r1}, the longest region is {top}")
    inside = max((r for r in rows if r["experiment_id"] == top["experiment_id"] and
                  r["path"].startswith(top["path"] + "/")), key=lambda r: r["t_p"])
    check(len(r2) == 1 and r2[0]["path"] == inside["path"], f"Q2 gave {r2}, the longest inside is {inside}")

    # Per-PE rows only on request: the same experiment with them replaces its rows.
    check(count(c, "pe_times") == 0, "per-PE rows stored without --per-pe")
    out = c.db_cmd("add", p4, "-r", p1, "--per-pe").stdout
    check("experiment 2: replaced" in out, f"db add --per-pe: {out}")
    check(count(c, "pe_times") == c.one("SELECT sum(pes) AS n FROM region_stats WHERE experiment_id = 2"),
          "one per-PE row per region and PE")
    for r in c.q("SELECT s.time_min, s.time_max, min(p.pe_time) AS lo, max(p.pe_time) AS hi FROM region_stats s "
                 "JOIN pe_times p ON p.experiment_id = s.experiment_id AND p.region_id = s.region_id "
                 "WHERE s.experiment_id = 2 GROUP BY s.region_id, s.time_min, s.time_max"):
        close(r["lo"], r["time_min"], "per-PE minimum")
        close(r["hi"], r["time_max"], "per-PE maximum")

    # rm: not a reference others need; a study with its experiments; regions no one holds.
    c.bad(["rm", "1"], "classified against")
    c.bad(["rm", "99"], "no experiment 99")
    n = count(c, "experiments")
    c.db_cmd("rm", "--study", "1")
    check(count(c, "experiments") == n - 3 and count(c, "studies") == 1, "rm --study")
    c.db_cmd("rm", "2", "1")
    check(count(c, "experiments") == n - 5, "rm 2 1")
    check(count(c, "regions", "WHERE id NOT IN (SELECT region_id FROM region_stats)") == 0, "regions left behind")
    check(count(c, "experiments", "WHERE reference_id IS NOT NULL AND reference_id NOT IN (SELECT id FROM experiments)")
          == 0, "references left dangling")
    check_counters_and_noise(c)
    out = c.db_cmd("migrate").stdout
    check("nothing to do" in out, f"migrate: {out}")


def drg_inclusive(c, d, metric):
    """{call path: inclusive value} of `scalea drg D --metric METRIC` (its text tree)."""
    out, stack = {}, []
    lines = c.sc("drg", d, "--metric", metric).stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("calling context")) + 1
    for line in lines[start:]:
        name = line[:56].rstrip()
        depth = (len(name) - len(name.lstrip())) // 2
        stack[depth:] = [name.strip().replace(" @", "@")]
        out["/".join(stack)] = float(line[56:].split()[0])
    return out


def check_counters_and_noise(c):
    """Counters and NOISE where measured: an experiment with two perf counters (events this
    machine has), added with a machine file (a calibration written by hand). Each region's
    counter values are what `scalea drg --metric` sums, its NOISE what `scalea report` says with
    the same machine file; experiments added without one have no NOISE."""
    d = c.path("imb.counters")
    c.sc("run", "-q", "-o", d, "--", os.path.join(c.bin, "omp/imbalance"), "10", "2",
         env={"OMP_NUM_THREADS": "2", "SCALEA_COUNTERS": "perf::PAGE-FAULTS,perf::TASK-CLOCK"})
    machine = c.path("machine.json")
    with open(machine, "w") as f:
        json.dump({"format": "scalea-machine", "format_version": 1, "host": "test", "created": "2026-01-01T00:00:00",
                   "cpus": 2, "tool_cost_ns": {"user": 1000, "lock": 1000, "barrier": 2000000,
                                               "parallel": 3000000, "default": 1000}}, f)
    c.db_cmd("add", d, "--machine", machine)
    eid = c.one(f"SELECT id FROM experiments WHERE path = '{d}'")
    check(c.one(f"SELECT machine_file FROM experiments WHERE id = {eid}") == machine, "machine_file not stored")
    rep = report_json(c, d, "--machine", machine)
    noise = {r["path"]: r["noise"] for r in c.q(f"SELECT path, noise FROM overheads WHERE experiment_id = {eid}")}
    check(set(noise) == {r["path"] for r in rep["regions"]}, f"regions with NOISE: {sorted(noise)}")
    for r in rep["regions"]:
        close(noise[r["path"]], r["noise"], f"NOISE of {r['path']}")
    check(any(v > 0 for v in noise.values()), f"no region has NOISE: {noise}")
    check(count(c, "region_stats", f"WHERE experiment_id <> {eid} AND noise IS NOT NULL") == 0,
          "NOISE stored for experiments added without a machine file")

    columns = sorted(m["column"] for m in rep["counters"]["measured"])
    check(columns == ["papi:perf::PAGE-FAULTS", "papi:perf::TASK-CLOCK"], f"counters measured: {columns}")
    stored = {(r["path"], r["counter"]): r["value"] for r in c.q(
        "SELECT r.path, c.counter, c.value FROM region_counters c JOIN regions r ON r.id = c.region_id "
        f"WHERE c.experiment_id = {eid}")}
    check(len(stored) == len(columns) * len(rep["regions"]), f"{len(stored)} counter rows for {len(rep['regions'])} "
          f"regions and {len(columns)} counters")
    for col in columns:
        drg = drg_inclusive(c, d, col)
        check(set(drg) == {r["path"] for r in rep["regions"]}, f"scalea drg's call paths: {sorted(drg)}")
        for path, v in drg.items():
            check(abs(stored.get((path, col), -1) - v) <= 0.5, f"{col} of {path}: {stored.get((path, col))} vs {v}")
    check(any(v > 0 for v in stored.values()), f"every counter value is 0: {stored}")
    check(count(c, "region_counters", f"WHERE experiment_id <> {eid}") == 0,
          "counter rows for experiments that measured none")


# ---- call-path samples ----------------------------------------------------------------------

SAMPLED_MS = "200"  # apps/omp/sampled: serial_work and work_a 200 ms of CPU time, inlined_work and work_b 100


def sampled_line(c, marker):
    with open(os.path.join(c.source, "apps/omp/sampled.c")) as f:
        return next(f"sampled.c:{i}" for i, line in enumerate(f, 1) if f"/* {marker} */" in line)


def to_schema_1(c):
    """The database as schema version 1 left it: no sampled tables, view or version row."""
    statements = ["DROP VIEW sampled", "DROP TABLE sampled_lines", "DROP TABLE sampled_functions",
                  "ALTER TABLE experiments DROP COLUMN samples", "DELETE FROM scalea_schema WHERE version = 2"]
    if c.pg:
        c.pg.sql(*statements)
    else:
        with sqlite3.connect(c.db) as con:
            for stmt in statements:
                con.execute(stmt)


def do_sampled(c):
    d = c.path("sampled")
    shutil.rmtree(d, ignore_errors=True)
    out = c.sc("run", "-q", "-o", d, "--", os.path.join(c.bin, "omp/sampled"), SAMPLED_MS).stdout
    truth = {m[1]: float(m[2]) for m in re.finditer(r"^truth (\w+) ([0-9.]+)$", out, re.M)}
    check(len(truth) == 4, f"the program printed no truth: {out[-500:]}")
    period = json.load(open(d + "/meta.json"))["sampling"]["period_ns"] * 1e-9

    def near(got, key, what):  # tests/groundtruth's tolerance for sampled CPU time
        check(abs(got - truth[key]) <= max(0.1 * truth[key], 2 * period),
              f"{what}: {got:.4f} s of CPU time stored, the program measured {truth[key]:.4f} s")

    # A database of schema version 1, which stored the experiment without its samples: readers ask
    # for a migration, `db migrate` adds the tables, and `db add` stores the experiment again,
    # with its samples.
    c.db_cmd("add", c.experiment("imb.p2", 2, "5", "1"))
    c.db_cmd("add", d, "--tag", "app=sampled")
    to_schema_1(c)
    c.bad(["list"], "schema version 1", "db migrate")
    out = c.db_cmd("migrate").stdout
    check("migrated from schema version 1 to 2" in out, f"migrate: {out}")
    check(c.one("SELECT max(version) AS v FROM scalea_schema") == 2, "schema version after the migration")
    check(count(c, "experiments", "WHERE samples IS NULL") == 2, "experiments of schema 1 have samples")
    out = c.db_cmd("add", d).stdout
    eid = c.one(f"SELECT id FROM experiments WHERE path = '{d}'")
    check(eid and "replaced" in out, f"db add of an experiment stored by schema 1: {out}")
    check(c.one(f"SELECT samples FROM experiments WHERE id = {eid}") > 0, "the experiment's samples")
    check("stored already" in c.db_cmd("add", d).stdout, "db add again stored it again")

    fns = {f["function"]: f for f in json.loads(c.db_cmd("functions", str(eid), "-f", "json").stdout)}
    for name, key in [("serial_work", "cpu_serial"), ("inlined_work", "cpu_inlined"), ("work_a", "cpu_a"),
                      ("work_b", "cpu_b")]:
        check(name in fns, f"db functions lists no {name}: {sorted(fns)}")
        f = fns[name]
        near(f["on_stack"], key, f"db functions: {name}")  # the program measured it with its callees
        check(f["samples"] > 0 and abs(f["own_error"] - f["own"] / f["samples"] ** 0.5) < 1e-9, f"{name}: {f}")
    check(fns["inlined_work"]["hottest_line"] == sampled_line(c, "INLINED_LOOP"),
          f"inlined_work's hottest line: {fns['inlined_work']['hottest_line']}")
    check(abs(sum(f["own_percent"] for f in fns.values()) - 100) < 1e-6, "own_percent does not add up to 100")
    par = {f["function"]: f for f in json.loads(c.db_cmd("functions", str(eid), "--region", "sampled/parallel@" + sampled_line(c, "PAR"),
                                                         "-f", "json").stdout)}
    check({"work_a", "work_b"} <= set(par) and "serial_work" not in par, f"the parallel region's functions: {sorted(par)}")
    share = par["work_a"]["on_stack"] / par["work_b"]["on_stack"]
    want = truth["cpu_a"] / truth["cpu_b"]
    check(abs(share - want) <= 0.2 * want, f"work_a / work_b {share:.2f}, the program's {want:.2f}")
    lines = {x["line"]: x for x in json.loads(c.db_cmd("functions", str(eid), "--lines", "-f", "json").stdout)}
    serial = lines.get(sampled_line(c, "SERIAL_LOOP"))
    check(serial and serial["function"] == "serial_work", f"db functions --lines: {sorted(lines)}")
    check(abs(serial["own"] - fns["serial_work"]["own"]) < 1e-9, "serial_work's own time is not all at its line")
    text = c.db_cmd("functions", str(eid), "--top", "2").stdout
    # The two rows are the two functions of most own time (the experiment's path may hold "work").
    body = text.splitlines()
    head = next((i for i, l in enumerate(body) if l.startswith("function ")), None)
    top = [l.split()[0] for l in body[head + 1:head + 3]] if head is not None else []
    best = sorted(fns, key=lambda n: -fns[n]["own"])[:2]
    check(len(top) == 2 and set(top) <= set(fns) and fns[top[0]]["own"] >= fns[top[1]]["own"]
          and fns[top[1]]["own"] >= fns[best[1]]["own"] and "(2 rows)" in text and "sampled:" in text,
          f"db functions --top 2: {text}")

    # The stored rows are the CSV export's, row by row.
    rows = {(r["path"], r["sampled"], r["function_name"], r["location"]): r for r in c.q(
        f"SELECT path, sampled, function_name, location, samples, own, own_error, self, on_stack FROM sampled "
        f"WHERE experiment_id = {eid}")}
    exported = c.sc("export", "--format", "csv-sampled", d).stdout
    want = list(csv.DictReader(io.StringIO(exported)))
    check(len(rows) == len(want), f"{len(rows)} sampled rows stored, the CSV export has {len(want)}")
    for w in want:
        r = rows.get((w["path"], w["sampled"], w["function"], w["location"]))
        check(r is not None, f"not stored: {w}")
        for k in ("samples", "own", "own_error") + (("self", "on_stack") if w["sampled"] == "function" else ()):
            check(abs(r[k] - float(w[k])) <= 1e-8, f"{k} of {w['function']} {w['location']}: {r[k]} vs {w[k]}")
    # Sampled rows are not regions: the experiment's regions are the report's, T_o = sum of classes.
    check(count(c, "region_stats", f"WHERE experiment_id = {eid}") == len(report_json(c, d)["regions"]),
          "the regions stored are not the report's")
    check(count(c, "overheads", "WHERE abs(t_o - (" + " + ".join(CLASSES) + ")) > 1e-9") == 0,
          "classes do not sum to T_o")
    c.bad(["functions", "99"], "no experiment 99")
    c.bad(["functions", str(eid), "--region", "no-such-region"], "no region")
    c.db_cmd("rm", str(eid))
    check(count(c, "sampled_functions") == 0 and count(c, "sampled_lines") == 0, "db rm left sampled rows")
    print(f"sampled: serial_work {fns['serial_work']['on_stack']:.3f} s (measured {truth['cpu_serial']:.3f}), "
          f"work_a {fns['work_a']['on_stack']:.3f} s (measured {truth['cpu_a']:.3f}), {len(rows)} rows")


# ---- faults -------------------------------------------------------------------------------------

def set_schema_version(c, v):
    stmt = f"UPDATE scalea_schema SET version = {v} WHERE version = (SELECT max(version) FROM scalea_schema)"
    if c.pg:
        c.pg.sql(stmt)
    else:
        with sqlite3.connect(c.db) as con:
            con.execute(stmt)


def synthetic(c, name, ranks, paths=500):
    d = c.path(name)
    if not os.path.isfile(d + "/meta.json"):
        run([os.path.join(c.bin, "drg_gen"), d, ranks, 16, paths])
    return d


def wait_for(cond, what, seconds=60):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > seconds:
            raise Fail("timed out waiting for " + what)
        time.sleep(0.02)


def do_faults(c):
    p1 = c.experiment("imb.p1", 1, "10", "1")
    p2 = c.experiment("imb.p2", 2, "10", "1")
    p4 = c.experiment("imb.p4", 4, "10", "1")
    c.db_cmd("add", p4, "-r", p1)
    n_exp, n_stats = count(c, "experiments"), count(c, "region_stats")

    def nothing_added(what):
        check(count(c, "experiments") == n_exp and count(c, "region_stats") == n_stats, f"{what}: rows were added")

    # Bad input: nothing is stored.
    c.bad(["add", c.path("missing")], "missing")
    c.bad(["add", p4, "-r", p4], "reference")
    c.bad(["add", p4, "-r", c.path("missing")], "missing")
    c.bad(["add", p2, "--tag", "novalue"], "KEY=VALUE")
    c.bad(["rm"], "give the experiments")
    nothing_added("bad input")

    # A database of a newer schema: refused by every command, readers and writers.
    current = c.one("SELECT max(version) AS v FROM scalea_schema")
    set_schema_version(c, 99)
    for args in (["list"], ["add", p2], ["query", "SELECT 1"], ["migrate"]):
        c.bad(args, "schema version 99", "newer")
    set_schema_version(c, current)

    # SQL errors and writes in db query.
    c.bad(["query", "SELECT nope FROM experiments"], "query failed")
    c.bad(["query", "SELEC 1"], "")
    c.bad(["query", "   "], "no SQL statement")
    for sql in ("DELETE FROM experiments", "INSERT INTO tags VALUES (1, 'a', 'b')", "UPDATE experiments SET p = 0",
                "DROP TABLE regions", "CREATE TABLE x (a INTEGER)", "SELECT 1; DELETE FROM experiments",
                "WITH d AS (DELETE FROM tags RETURNING 1) SELECT * FROM d"):
        line = c.bad(["query", sql], "")
        check(any(w in line for w in ("read-only", "one SQL statement", "query failed")), f"query {sql}: {line}")
    nothing_added("writes in db query")
    check(count(c, "regions") > 0, "a table was dropped by db query")

    # Another process holds the database: a clear line after --wait, nothing half-stored.
    if c.pg:
        holder = subprocess.Popen(c.pg.psql("-c", f"SELECT pg_advisory_lock({WRITER_LOCK})", "-c", "SELECT pg_sleep(60)"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for(lambda: c.pg.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") == "1",
                 "the advisory lock")
    else:
        holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys, time\n"
                                   "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                                   "con.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(60)",
                                   c.db], stdout=subprocess.PIPE, text=True, start_new_session=True)
        check(holder.stdout.readline().strip() == "locked", "the lock holder did not start")
    t0 = time.time()
    c.bad(["--wait", "1", "add", p2], "locked", "--wait")
    check(time.time() - t0 < 20, "db add waited far longer than --wait 1")
    if c.pg:
        c.db_cmd("list")  # readers are not blocked by a writer
    os.killpg(holder.pid, signal.SIGKILL)  # runuser and the psql under it
    holder.wait()
    if c.pg:  # its server process sleeps on, holding the lock, unless it is ended
        c.pg.sql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'")
        wait_for(lambda: c.pg.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == "0",
                 "the lock holder's session to end")
    nothing_added("a locked database")

    # Two adds at once (one of them twice): each experiment stored once, regions shared.
    a, b = synthetic(c, "g4", 4), synthetic(c, "g5", 5)
    procs = [subprocess.Popen([c.scalea, "db", "--db", c.db, "add", d], env=c.env, cwd=c.work, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for d in (a, b, a)]
    for pr in procs:
        out, err = pr.communicate(timeout=300)
        OUTPUTS.append(out + err)
        check(pr.returncode == 0, f"concurrent db add: exit status {pr.returncode}: {err}")
    check(count(c, "experiments") == n_exp + 2, f"concurrent adds: {count(c, 'experiments')} experiments")
    ids = [r["id"] for r in c.q("SELECT id FROM experiments WHERE program = 'synthetic' ORDER BY id")]
    regions = [{r["region_id"] for r in c.q(f"SELECT region_id FROM region_stats WHERE experiment_id = {i}")} for i in ids]
    check(len(regions[0]) == 500 and regions[0] == regions[1], "the synthetic experiments do not share their regions")
    n_exp, n_stats = count(c, "experiments"), count(c, "region_stats")

    # A writer that dies mid-insert (SQLite: killed; PostgreSQL: the server goes away): nothing
    # of the experiment is stored.
    big = synthetic(c, "g16", 16)
    proc = subprocess.Popen([c.scalea, "db", "--db", c.db, "add", big, "--per-pe"], env=c.env, cwd=c.work, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if c.pg:
        wait_for(lambda: c.pg.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") == "1"
                 or proc.poll() is not None, "db add to start writing")
        time.sleep(0.3)
        check(proc.poll() is None, "db add finished before the server could be stopped (make its experiment larger)")
        c.pg.kill()
        out, err = proc.communicate(timeout=120)
        OUTPUTS.append(out + err)
        lines = err.strip().split("\n")
        check(proc.returncode == 2 and len(lines) == 1 and "lost the connection" in lines[0],
              f"server gone mid-insert: exit status {proc.returncode}: {err}")
        c.pg.start()
    else:
        wait_for(lambda: os.path.exists(c.db + "-journal") or proc.poll() is not None, "db add to start writing")
        check(proc.poll() is None, "db add finished before it could be killed")
        proc.kill()
        proc.communicate()
        with sqlite3.connect(c.db) as con:
            check(con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "the database is damaged")
    nothing_added("a writer gone mid-insert")
    check(count(c, "pe_times") == 0, "per-PE rows of the unfinished experiment were stored")

    if c.pg:
        # A read-only database (a standby, a read-only default): writers refused, readers work.
        c.pg.sql("ALTER DATABASE scalea SET default_transaction_read_only = on")
        c.bad(["add", p2], "read-only")
        c.db_cmd("list")
        c.pg.sql("SET default_transaction_read_only = off", "ALTER DATABASE scalea RESET default_transaction_read_only")
        # A server that refuses the connection; a wrong password; the right one, masked.
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        line = c.bad(["list"], "cannot connect", "postgresql://scalea:***@127.0.0.1", db=f"postgresql://scalea:{PASSWORD}@127.0.0.1:{port}/scalea")
        line = c.bad(["list"], "password", db=f"postgresql://scalea:Wr0ng-Pass@127.0.0.1:{c.pg.port}/scalea")
        check("Wr0ng-Pass" not in line, f"the wrong password is printed: {line}")
        line = c.bad(["list"], "", db=f"postgresql://scalea@127.0.0.1:{c.pg.port}/scalea?password=Wr0ng-Pass")
        check("Wr0ng-Pass" not in line, f"the wrong password is printed: {line}")
        out = c.db_cmd("add", p2, db=c.pg.tcp_url).stdout
        check("postgresql://scalea:***@127.0.0.1" in out, f"the database is not named with its password masked: {out}")
        # SCALEA_DB with the password, inherited by the programs run and study start: what they
        # store arrives, and no file they write (meta.json's environment, logs) holds the password.
        env = {"SCALEA_DB": c.pg.tcp_url, "OMP_NUM_THREADS": "2"}
        r = c.path("env.run")
        c.sc("run", "-q", "-o", r, "--db", "--", os.path.join(c.bin, "omp/imbalance"), "10", "1", env=env)
        s = c.path("env.study")
        c.sc("study", "-o", s, "--threads", "1,2", "--db", "--", os.path.join(c.bin, "study/study_app"), "3", env=env)
        check(count(c, "experiments", f"WHERE path = '{r}' OR path LIKE '{s}/%'") == 3,
              "run --db and study --db with SCALEA_DB did not store their 3 experiments")
        for root in (r, s):
            for d, _, files in os.walk(root):
                for f in files:
                    data = open(os.path.join(d, f), "rb").read()
                    check(PASSWORD.encode() not in data, f"the password is written in {os.path.join(d, f)}")
        n_exp, n_stats = count(c, "experiments"), count(c, "region_stats")
    else:
        # A read-only file: as root, file permissions do not stop us, so the commands run as nobody,
        # on copies in a directory of their own under the temporary directory: nobody may not reach
        # the build tree (a checkout under /root, mode 700). The command and its SQLite module are
        # copied too, laid out as in the build (bin/, lib/).
        as_nobody = ["runuser", "-u", "nobody", "--"] if os.getuid() == 0 else []
        shared = tempfile.mkdtemp(prefix="scalea-db-ro.")
        try:
            os.chmod(shared, 0o755)
            ro = os.path.join(shared, "ro.db")
            shutil.copy(c.db, ro)
            os.chmod(ro, 0o444)
            exp = shutil.copytree(p2, os.path.join(shared, "exp"))
            scalea = os.path.join(shared, "bin", "scalea")
            os.makedirs(os.path.dirname(scalea))
            os.makedirs(os.path.join(shared, "lib"))
            shutil.copy2(c.scalea, scalea)
            shutil.copy2(os.path.join(os.path.dirname(c.scalea), "..", "lib", "libscalea-db-sqlite.so"),
                         os.path.join(shared, "lib"))
            for d, dirs, files in os.walk(shared):
                for name in dirs:
                    os.chmod(os.path.join(d, name), 0o755)
            env = dict(c.env, HOME="/nonexistent")
            p = run(as_nobody + [scalea, "db", "--db", ro, "add", exp], ok=None, env=env)
            check(p.returncode == 2 and "read-only" in p.stderr and len(p.stderr.strip().split("\n")) == 1,
                  f"a read-only file: {p.returncode}: {p.stderr}")
            p = run(as_nobody + [scalea, "db", "--db", ro, "list"], ok=None, env=env)
            check(p.returncode == 0 and "imbalance" in p.stdout, f"reading a read-only file: {p.returncode}: {p.stderr}")
        finally:
            shutil.rmtree(shared, ignore_errors=True)
        # Corrupt files: not a database; a damaged schema page; another application's database; a
        # directory.
        junk = c.path("junk.db")
        open(junk, "w").write("this is not a database\n" * 200)
        for args in (["list"], ["add", p2], ["query", "SELECT 1"]):
            c.bad(args, "not an SQLite database", db=junk)
        damaged = c.path("damaged.db")
        shutil.copy(c.db, damaged)
        with open(damaged, "r+b") as f:
            f.seek(100)
            f.write(bytes((i * 37 + 11) % 256 for i in range(3900)))
        for args in (["list"], ["add", p2]):
            c.bad(args, "corrupt", db=damaged)
        other = c.path("other.db")
        with sqlite3.connect(other) as con:
            con.execute("CREATE TABLE notes (text TEXT)")
        for args in (["list"], ["add", p2]):
            c.bad(args, "another application", db=other)
        c.bad(["list"], "directory", db=c.work)
        c.bad(["list"], "no database at", db=c.path("none.db"))
    nothing_added("faults")


# ---- the same answers from both backends ------------------------------------------------------

# ---- the site (scalea db html) in headless Chromium, with tests/html's harness ----------------

def cells_close(got, want, what):
    """A cell of the page (seconds as the page prints them: 4 decimals from 1 ms to 100 s, else 3
    significant digits) against the database's value."""
    v = float(got.replace("+", "")) if got not in ("-", "") else None
    check(v is not None and abs(v - want) <= 6e-5 + 5e-3 * abs(want), f"{what}: the page shows {got}, the database {want}")


def do_html(c):
    sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "html")]
    import check_html  # noqa: E402  (tests/html: Chromium through the DevTools protocol)
    site = c.path("site")
    # Bad input: one line and exit status 2, nothing written.
    c.bad(["html", site], "no database at")
    c.db_cmd("migrate")
    c.bad(["html", site], "holds no experiments")
    check(not os.path.exists(site + "/index.html"), "a site was written for an empty database")
    # The program of known functions first (the oldest: the last two stay p = 2 and p = 4).
    smp = c.experiment("sampled", 2, SAMPLED_MS, prog="omp/sampled")
    c.db_cmd("add", smp)
    p1 = c.experiment("imb.p1", 1, "10", "2")
    p2 = c.experiment("imb.p2", 2, "10", "2")
    p4 = c.experiment("imb.p4", 4, "10", "2")
    c.db_cmd("add", p2, "-r", p1, "--tag", "commit=c1")
    c.db_cmd("add", p4, "-r", p1, "--tag", "commit=c2")
    c.bad(["html", "/proc/version/site"], "cannot write", "/proc/version/site")
    c.bad(["html", site, "--tag", "commit=none"], "matches")
    out = c.db_cmd("html", site)
    index = os.path.join(site, "index.html")
    check(out.stderr.strip() == f"scalea db: wrote {index}" and not out.stdout, f"db html said {out.stderr!r}")
    text = open(index).read()
    check_html.static_checks(text)
    exps = json.loads(c.db_cmd("list", "-f", "json").stdout)
    ids = [e["id"] for e in exps]  # by date, as db list orders them
    loop = c.one("SELECT region_id FROM overheads WHERE kind = 'loop' AND experiment_id = 3 ORDER BY t_p DESC LIMIT 1")
    rows = {(r["experiment_id"], r["region_id"]): r for r in c.q("SELECT * FROM overheads")}
    funcs = {}  # experiment -> {(function, module): own CPU time summed over its regions}
    for r in c.q("SELECT experiment_id, function_name, module, SUM(own) AS own FROM sampled_functions "
                 "GROUP BY experiment_id, function_name, module"):
        funcs.setdefault(r["experiment_id"], {})[(r["function_name"], r["module"])] = r["own"]
    smp_id = c.one(f"SELECT id FROM experiments WHERE path = '{smp}'")
    check(smp_id == ids[0] and "serial_work" in {f for f, _ in funcs.get(smp_id, {})},
          f"the sampled program is not the oldest experiment with its samples: {ids}, {smp_id}")
    try:
        site_in_chromium(check_html, index, ids, exps, loop, rows, funcs)
    except check_html.Skip as e:
        print(f"SKIP: {e}")
        return 77
    except (check_html.Fail, check_html.cdp.CdpError) as e:  # tests/html's own failures
        raise Fail(str(e))
    return 0


def site_in_chromium(check_html, index, ids, exps, loop, rows, funcs):
    """The site's three views in Chromium against the database's rows (overheads, sampled
    functions)."""
    with check_html.Page(index) as br:
        js = br.js
        # Experiments by date; grouped by a tag, each under its value.
        got = js("Array.from(document.querySelectorAll('#exp-table tr[data-id]')).map(function(e){return +e.getAttribute('data-id')})")
        check(got == ids, f"experiments {got}, the database lists {ids}")
        js("var s=document.getElementById('group'); s.value='commit'; s.dispatchEvent(new Event('change',{bubbles:true}))")
        groups = js("""Array.from(document.querySelectorAll('#exp-table tr')).filter(function(e){return e.classList.contains('group')||e.hasAttribute('data-id')})
            .map(function(e){return e.classList.contains('group') ? e.textContent.split(' (')[0] : +e.getAttribute('data-id')})""")
        want = []
        for e in exps:
            tag = next((t for t in e["tags"].split() if t.startswith("commit=")), "no commit") if e["tags"] else "no commit"
            if tag not in want:
                want.append(tag)
        check([g for g in groups if isinstance(g, str)] == want, f"groups {groups}, want {want}")
        for e in exps:
            tag = next((t for t in (e["tags"] or "").split() if t.startswith("commit=")), "no commit")
            head = max(i for i, g in enumerate(groups) if isinstance(g, str) and groups.index(e["id"]) > i)
            check(groups[head] == tag, f"experiment {e['id']} ({tag}) is under {groups[head]}")
        # A region's class history: the loop's six classes over the experiments that ran it.
        br.click("#tab-history")
        js("var s=document.getElementById('region'); s.value='%d'; s.dispatchEvent(new Event('change',{bubbles:true}))" % loop)
        ran = [i for i in ids if (i, loop) in rows and rows[(i, loop)]["in_run"]]
        lines = js("""Array.from(document.querySelectorAll('#history-classes polyline.series')).map(function(l){
            return [l.getAttribute('data-series'), l.getAttribute('points').trim().split(' ').length, l.getAttribute('stroke')]})""")
        check([x[0] for x in lines] == CLASSES and all(x[1] == len(ran) for x in lines),
              f"history lines {lines}, want the six classes with {len(ran)} points")
        keys = js("""Array.from(document.querySelectorAll('#history-classes text.key tspan')).map(function(t){return getComputedStyle(t).fill})""")
        check(len(set(keys)) == 6, f"the history legend's keys are not in six colours: {keys}")
        table = js("""Array.from(document.querySelectorAll('#history-table tbody tr')).map(function(r){
            return [+r.getAttribute('data-id')].concat(Array.from(r.cells).slice(4).map(function(c){return c.textContent}))})""")
        check([r[0] for r in table] == ran, f"history rows {[r[0] for r in table]}, want {ran}")
        for r in table:
            v = rows[(r[0], loop)]
            for got, col in zip(r[1:], ["t_p", "t_o"] + CLASSES):
                cells_close(got, v[col], f"history of the loop, experiment {r[0]}, {col}")
        # Two runs compared: p = 2 against p = 4, region by region, B - A.
        a, b = ids[-2], ids[-1]
        br.click("#tab-compare")
        js("var s=document.getElementById('cmp-a'); s.value='%d'; s.dispatchEvent(new Event('change',{bubbles:true}))" % a)
        js("var s=document.getElementById('cmp-b'); s.value='%d'; s.dispatchEvent(new Event('change',{bubbles:true}))" % b)
        cmp = js("""Array.from(document.querySelectorAll('#cmp-table tbody tr')).map(function(r){
            return [+r.getAttribute('data-region')].concat(Array.from(r.cells).slice(1).map(function(c){return c.textContent}))})""")
        check(cmp, "the comparison has no rows")
        d = [float(x[3]) for x in cmp]
        check([abs(x) for x in d] == sorted((abs(x) for x in d), reverse=True), f"compare is not ordered by |change of T_p|: {d}")
        row = next((x for x in cmp if x[0] == loop), None)
        check(row is not None, "the loop is not in the comparison")
        va, vb = rows[(a, loop)], rows[(b, loop)]
        cells_close(row[1], va["t_p"], "compare: T_p A")
        cells_close(row[2], vb["t_p"], "compare: T_p B")
        cells_close(row[3], vb["t_p"] - va["t_p"], "compare: change of T_p")
        for i, k in enumerate(CLASSES):
            cells_close(row[7 + i], vb[k] - va[k], f"compare: change of {k}")
        # Sampled functions compared: the program of known functions (B) against p = 4 (A), each
        # row its own CPU time in A and B as stored, ordered by |B - A|.
        fa, fb = funcs.get(b, {}), funcs.get(ids[0], {})
        js("var s=document.getElementById('cmp-a'); s.value='%d'; s.dispatchEvent(new Event('change',{bubbles:true}))" % b)
        js("var s=document.getElementById('cmp-b'); s.value='%d'; s.dispatchEvent(new Event('change',{bubbles:true}))" % ids[0])
        fcmp = js("""Array.from(document.querySelectorAll('#cmp-functions tbody tr')).map(function(r){
            return Array.from(r.cells).map(function(c){return c.textContent})})""")
        shown = {(x[0], x[1]) for x in fcmp}
        top_b = sorted(fb, key=lambda k: -fb[k])[:20]
        check(fcmp and set(top_b) <= shown, f"sampled functions compared: {sorted(shown)}, B's hottest {top_b}")
        for name, module, own_a, own_b, d in fcmp:
            key = (name, module)
            if key in fb:
                cells_close(own_b, fb[key], f"compare: {name}'s own CPU time in B")
            if key in fa and own_a != "-":
                cells_close(own_a, fa[key], f"compare: {name}'s own CPU time in A")
        dd = [abs(float(x[4].replace("+", ""))) for x in fcmp]
        check(dd == sorted(dd, reverse=True), f"sampled functions not ordered by |change|: {dd}")
        serial = next((x for x in fcmp if x[0] == "serial_work"), None)
        check(serial and float(serial[4].replace("+", "")) > 0, f"serial_work in the comparison: {serial}")
        check_html.no_errors(br)
    print(f"site: {len(ids)} experiments by date and by tag {want}; the loop's history over {len(ran)} "
          f"experiments; #{a} against #{b}: {len(cmp)} regions; #{b} against #{ids[0]}: {len(fcmp)} "
          f"sampled functions; {os.path.getsize(index)} bytes")


def do_same_answers(c_sqlite, c_pg):
    p1 = c_sqlite.experiment("imb.p1", 1, "10", "2")
    p4 = c_sqlite.experiment("imb.p4", 4, "10", "2")
    s1 = c_sqlite.study("s1", "3")
    region = next(r["path"] for r in report_json(c_sqlite, s1)["regions"] if r["kind"] == "parallel")
    q1, q2 = seed_queries(c_sqlite)
    outputs = {}
    for c in (c_sqlite, c_pg):
        c.db_cmd("add", p4, "-r", p1, "--tag", "commit=c1")
        c.db_cmd("add", s1, "--tag", "series=nightly")
        seq = [["list", "-f", "csv"], ["list", "--studies", "-f", "csv"], ["list"],
               ["query", "SELECT * FROM overheads ORDER BY experiment_id, path", "-f", "csv"],
               ["query", "SELECT * FROM region_history ORDER BY experiment_id, path, class", "-f", "json"],
               ["query", "SELECT id, region_key, parent_id, depth, path, kind, label, location FROM regions ORDER BY id",
                "-f", "csv"],
               ["history", "--region", region, "--class", "total"],
               ["history", "--region", region, "--class", "synchronization", "-f", "csv"],
               ["compare", "1", "2"], ["compare", "3", "5", "-f", "json"], ["query", q1], ["query", q2],
               ["functions", "2"], ["functions", "2", "--lines"]]
        outputs[c.backend] = [c.db_cmd(*args).stdout for args in seq]
        check(all(o.strip() for o in outputs[c.backend]), f"{c.backend}: an empty output")
    for i, (a, b) in enumerate(zip(outputs["sqlite"], outputs["postgresql"])):
        check(a == b, f"command {i} prints differently:\n--- sqlite\n{a[:3000]}\n--- postgresql\n{b[:3000]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("backend", choices=["sqlite", "postgresql", "both"])
    ap.add_argument("group", choices=["commands", "faults", "same_answers", "html", "sampled"])
    a = ap.parse_args()
    work = testdir.fresh(os.path.abspath(a.work))  # this test's own directory (tests.cmake)
    ctxs = []
    t0 = time.time()
    try:
        if a.group == "same_answers":
            ctxs = [Ctx(a, "sqlite", work), Ctx(a, "postgresql", work)]
            do_same_answers(*ctxs)
        else:
            ctxs = [Ctx(a, a.backend, work)]
            groups = {"commands": do_commands, "faults": do_faults, "html": do_html, "sampled": do_sampled}
            if groups[a.group](ctxs[0]) == 77:
                return 77
        leaked = [o for o in OUTPUTS if PASSWORD in o or "Wr0ng-Pass" in o]
        check(not leaked, f"a password in the output: {leaked[:1]}")
    except Fail as e:
        print(f"FAIL ({a.backend} {a.group}): {e}")
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"FAIL ({a.backend} {a.group}): timed out: {e}")
        return 1
    finally:
        for c in ctxs:
            c.close()
    print(f"ok: {a.backend} {a.group}: {checks} checks in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
