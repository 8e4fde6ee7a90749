#!/usr/bin/env python3
"""`scalea run` end to end on real programs (registered by tests.cmake).

usage: check_run.py --bin DIR --lib DIR --workdir DIR SCENARIO [ARGS...]

scenarios:
  signal NAME     kill -NAME to the `scalea run` process: passed on to the program once, the
                  experiment is written and says so, exit status 128+N
  tty-int         ^C typed at a terminal (a pty): the program gets SIGINT once, not twice
  start           the tool preloaded by `scalea run` measures the program's start (an OpenMP
                  program that sleeps before its first construct); loaded by the OpenMP runtime,
                  the start is estimated and meta.json says by how much
  plain           a program that is not an OpenMP program, with an LD_PRELOAD of its own, that
                  starts a shell: same output and exit status with and without `scalea run`, one
                  experiment (the shell does not load the tool)
  python          CPython under `scalea run` installs its own ^C handler as without the tool
  static          a statically linked program: one warning line, it runs, its exit status
  setuid          a set-user-ID program: one warning line, it runs, its exit status (needs root)
  mpi-functions   an MPI program built with -finstrument-functions that does not link the tool,
                  under `mpirun -np 2 scalea run`: its functions are recorded on every rank
  affinity-omp    meta.json "affinity": OMP_PLACES=cores OMP_PROC_BIND=close gives each of 2
                  threads its own CPU; unbound, every thread has the process's CPUs
  heap            a program that allocates and frees its arrays at every step (heap_app.c): the
                  same page faults under `scalea run` as without it (the tool's memory is not in
                  the program's heap, where it would keep glibc from trimming it)
  affinity-mpi    mpirun -np 1 binds the rank to one core: both threads on that CPU; with
                  --bind-to none they have the whole machine; -np 2: rank 0's meta.json lists
                  both ranks' affinity
"""
import argparse
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testdir  # noqa: E402  (tests/testdir.py)

FAILURES = []
SKIP = 77  # ctest SKIP_RETURN_CODE
FORWARDED = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2]


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def fresh(args, name):
    return testdir.fresh(os.path.join(args.workdir, name))


def default_signals():
    # Whoever started the test may ignore some of them (a background job ignores SIGINT, nohup
    # SIGHUP); `scalea run` keeps an ignored signal ignored, so the test starts from the defaults.
    for s in FORWARDED:
        signal.signal(s, signal.SIG_DFL)


def read_meta(exp):
    try:
        with open(os.path.join(exp, "meta.json")) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(False, f"no readable meta.json in {exp}: {e}")
        return {}


def check_ended_by(exp, sig):
    meta = read_meta(exp)
    check(meta.get("finished_by") == f"signal {int(sig)}",
          f"meta.json finished_by is {meta.get('finished_by')!r}, expected 'signal {int(sig)}'")
    name = signal.strsignal(sig)
    check(any(f"ended by signal {name}" in n for n in meta.get("notes", [])),
          f"meta.json notes do not say the program was ended by signal {name}: {meta.get('notes')}")


def wait_for_line(stream_fd, text, timeout, seen):
    """Reads stream_fd until a line containing `text` arrives; returns what was read."""
    end = time.time() + timeout
    while text not in seen and time.time() < end:
        r, _, _ = select.select([stream_fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(stream_fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk.decode(errors="replace")
    return seen


def scenario_signal(args):
    sig = signal.Signals["SIG" + args.rest[0]]
    work = fresh(args, "signal-" + sig.name)
    exp = os.path.join(work, "exp")
    cmd = [os.path.join(args.bin, "scalea"), "run", "-o", exp, "--",
           os.path.join(args.bin, "run", "signal_app"), "30"]
    env = dict(os.environ, OMP_NUM_THREADS="2")
    print("$", " ".join(cmd))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         preexec_fn=default_signals)
    out = wait_for_line(p.stdout.fileno(), "ready", 30, "")
    check("ready" in out, f"the program did not get ready: {out!r}")
    t0 = time.time()
    p.send_signal(sig)  # to `scalea run` only, not to its process group
    try:
        rest, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, err = p.communicate()
    out += rest.decode(errors="replace")
    err = err.decode(errors="replace")
    print(out)
    print(err, file=sys.stderr)
    print(f"(exit {p.returncode}, {time.time() - t0:.1f} s after the signal)")
    check(f"got signal {int(sig)}" in out, f"the program did not get signal {int(sig)}")
    check(f"signal {int(sig)} received 1 time(s)" in out,
          f"the program did not get signal {int(sig)} exactly once")
    check(p.returncode == 128 + int(sig), f"exit status {p.returncode}, expected {128 + int(sig)}")
    check(f"killed by signal {int(sig)}" in err, f"scalea run does not say the program was killed: {err!r}")
    check_ended_by(exp, sig)


def scenario_tty_int(args):
    work = fresh(args, "tty-int")
    exp = os.path.join(work, "exp")
    cmd = [os.path.join(args.bin, "scalea"), "run", "-o", exp, "--",
           os.path.join(args.bin, "run", "signal_app"), "30"]
    print("$", " ".join(cmd), "(in a pty, then ^C)")
    try:
        pid, fd = pty.fork()
    except OSError as e:
        print(f"no pseudo-terminal ({e}): skipped")
        sys.exit(SKIP)
    if pid == 0:  # a new session whose controlling terminal is the pty; scalea leads its group
        default_signals()
        os.environ["OMP_NUM_THREADS"] = "2"
        os.execv(cmd[0], cmd)
    out = wait_for_line(fd, "ready", 30, "")
    check("ready" in out, f"the program did not get ready: {out!r}")
    os.write(fd, b"\x03")  # ^C: the terminal signals its whole foreground process group
    end = time.time() + 30
    done, status = 0, 0
    while not done and time.time() < end:
        out = wait_for_line(fd, "\0never", 0.5, out)
        done, status = os.waitpid(pid, os.WNOHANG)
    if not done:
        os.kill(pid, signal.SIGKILL)
        done, status = os.waitpid(pid, 0)
    out = wait_for_line(fd, "\0never", 0.5, out)  # what is left in the pty
    os.close(fd)
    print(out)
    code = os.waitstatus_to_exitcode(status)
    print(f"(exit {code})")
    check("got signal 2" in out, "the program did not get SIGINT")
    check("signal 2 received 1 time(s)" in out,
          "the program got ^C more than once (or not at all): scalea run must not pass on a "
          "signal the terminal sent to the whole group")
    check(code == 130, f"exit status {code}, expected 130")
    check_ended_by(exp, signal.SIGINT)


def run(cmd, env=None, cwd=None, timeout=60):
    print("$", " ".join(cmd))
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       preexec_fn=default_signals)
    print(p.stdout[-3000:])
    print(p.stderr[-3000:], file=sys.stderr)
    print(f"(exit {p.returncode})")
    return p


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SCALEA_", "OMP_TOOL")) and k != "LD_PRELOAD"}
    env.update(extra)
    return env


def report_regions(args, exp):
    """The regions of `scalea report EXP --format json` (the program first)."""
    p = subprocess.run([os.path.join(args.bin, "scalea"), "report", exp, "--format", "json"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"scalea report {exp} failed: {p.stderr}")
    try:
        return json.loads(p.stdout)["regions"]
    except (ValueError, KeyError):
        check(False, f"no regions in the report of {exp}")
        return []


def program_time(args, exp):
    regions = report_regions(args, exp)
    check(bool(regions) and regions[0].get("kind") == "program", f"no program region in the report of {exp}")
    return regions[0].get("time", 0.0) if regions else 0.0


def experiments_in(work):
    return sorted(d for d in os.listdir(work) if os.path.isfile(os.path.join(work, d, "meta.json")))


def scenario_start(args):
    work = fresh(args, "start")
    app = os.path.join(args.bin, "run", "start_app")
    sleep_s = 0.15
    # Loaded by the OpenMP runtime at the first construct, 150 ms after the start.
    late = os.path.join(work, "late")
    p = run([app, str(int(sleep_s * 1000)), "0"],
            clean_env(OMP_NUM_THREADS="2", SCALEA_OUTPUT=late,
                      OMP_TOOL_LIBRARIES=os.path.join(args.lib, "libscalea-omp.so")))
    check(p.returncode == 0, f"exit status {p.returncode}")
    meta = read_meta(late)
    check(meta.get("program_start") == "estimated", f"program_start {meta.get('program_start')!r}")
    est = meta.get("program_start_estimated_s", -1)
    check(sleep_s - 0.02 <= est <= sleep_s + 0.5,
          f"program_start_estimated_s {est}: the program ran {sleep_s} s before its first construct")
    # Preloaded by `scalea run`: started with the program, nothing estimated.
    exp = os.path.join(work, "run")
    q = run([os.path.join(args.bin, "scalea"), "run", "-o", exp, "--", app, str(int(sleep_s * 1000)), "0"],
            clean_env(OMP_NUM_THREADS="2"))
    check(q.returncode == 0, f"exit status {q.returncode}")
    check(q.stdout == p.stdout, "the program printed something else under `scalea run`")
    meta = read_meta(exp)
    check(meta.get("program_start") == "measured", f"program_start {meta.get('program_start')!r}")
    check(meta.get("program_start_estimated_s") == 0,
          f"program_start_estimated_s {meta.get('program_start_estimated_s')!r}, expected 0")
    t = program_time(args, exp)
    check(sleep_s <= t <= sleep_s + 0.5, f"program time {t:.3f} s does not hold the {sleep_s} s sleep")
    # With a library the user preloads, the tool goes after it (a sanitizer runtime or an OMPT
    # multiplexer there must stay first) and still starts with the program.
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6", "/lib64/libm.so.6")
                 if os.path.exists(p)), None)
    if libm:
        exp2 = os.path.join(work, "run-preloaded")
        r = run([os.path.join(args.bin, "scalea"), "run", "-o", exp2, "--", app, "0", "0"],
                clean_env(OMP_NUM_THREADS="2", LD_PRELOAD=libm))
        check(r.returncode == 0, f"exit status {r.returncode} with LD_PRELOAD={libm}")
        check(f"LD_PRELOAD={libm}" in r.stdout, f"the program saw another LD_PRELOAD: {r.stdout!r}")
        check(read_meta(exp2).get("program_start") == "measured",
              "with a user's LD_PRELOAD the tool did not start with the program")


def scenario_plain(args):
    work = fresh(args, "plain")
    app = os.path.join(args.bin, "run", "start_app_plain")
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6", "/lib64/libm.so.6")
                 if os.path.exists(p)), None)
    if not libm:
        print("no libm.so.6 to preload: skipped")
        sys.exit(SKIP)
    child = ["/bin/sh", "-c", 'echo "child LD_PRELOAD=${LD_PRELOAD-unset}"']
    env = clean_env(LD_PRELOAD=libm)
    p = run([app, "0", "7"] + child, env, cwd=work)
    q = run([os.path.join(args.bin, "scalea"), "run", "-o", "exp", "--", app, "0", "7"] + child, env, cwd=work)
    check(p.returncode == 7 and q.returncode == 7, f"exit status {p.returncode} / {q.returncode}, expected 7")
    check(f"LD_PRELOAD={libm}\n" in p.stdout, f"the program does not see its LD_PRELOAD: {p.stdout!r}")
    check(q.stdout == p.stdout, "the program or the shell it starts saw something else under `scalea run`")
    check(experiments_in(work) == ["exp"], f"experiments written: {experiments_in(work)}, expected only exp")
    meta = read_meta(os.path.join(work, "exp"))
    check(meta.get("program_start") == "measured", f"program_start {meta.get('program_start')!r}")
    check(meta.get("threads") == 1, f"threads {meta.get('threads')!r}")


def scenario_python(args):
    work = fresh(args, "python")
    script = ("import signal, sys\n"
              "print(signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))\n"
              "try:\n    signal.raise_signal(signal.SIGINT)\nexcept KeyboardInterrupt:\n"
              "    print('KeyboardInterrupt')\n"
              "sys.exit(5)\n")
    py = sys.executable
    p = run([py, "-c", script], clean_env(), cwd=work)
    q = run([os.path.join(args.bin, "scalea"), "run", "-o", "exp", "--", py, "-c", script], clean_env(), cwd=work)
    check("default_int_handler" in p.stdout and "KeyboardInterrupt" in p.stdout, f"python itself: {p.stdout!r}")
    check(q.stdout == p.stdout, "python installs other signal handlers under `scalea run`")
    check(p.returncode == 5 and q.returncode == 5, f"exit status {p.returncode} / {q.returncode}, expected 5")
    check(experiments_in(work) == ["exp"], f"experiments written: {experiments_in(work)}")


def warned_once(p, what):
    lines = [l for l in p.stderr.splitlines() if l.startswith("scalea run: warning:")]
    check(len(lines) == 1 and what in lines[0], f"expected one warning line about {what!r}: {lines}")


def scenario_static(args):
    app = os.path.join(args.bin, "run", "start_app_static")
    if not os.path.exists(app):
        print("start_app_static not built (no static libc, or a sanitizer build), skipped")
        sys.exit(SKIP)
    work = fresh(args, "static")
    p = run([os.path.join(args.bin, "scalea"), "run", "-o", "exp", "--", app, "0", "7"], clean_env(), cwd=work)
    check(p.returncode == 7, f"exit status {p.returncode}, expected 7")
    check("LD_PRELOAD unset" in p.stdout, f"the program did not run: {p.stdout!r}")
    warned_once(p, "statically linked")


def scenario_setuid(args):
    if os.geteuid() != 0:
        print("not root: cannot make a set-user-ID program of another user, skipped")
        sys.exit(SKIP)
    import pwd
    try:
        nobody = pwd.getpwnam("nobody").pw_uid
    except KeyError:
        print("no user nobody: skipped")
        sys.exit(SKIP)
    work = fresh(args, "setuid")
    os.chmod(work, 0o777)  # the program runs as nobody, and so does the tool in it
    app = os.path.join(work, "start_app")
    shutil.copy(os.path.join(args.bin, "run", "start_app"), app)
    os.chown(app, nobody, -1)
    os.chmod(app, 0o4755)
    p = run([os.path.join(args.bin, "scalea"), "run", "-o", "exp", "--", app, "0", "7"],
            clean_env(OMP_NUM_THREADS="2"), cwd=work)
    check(p.returncode == 7, f"exit status {p.returncode}, expected 7")
    check("parallel: 2 threads" in p.stdout, f"the program did not run: {p.stdout!r}")
    warned_once(p, "set-user-ID")


def mpirun(args, np):
    return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(np)]


def scenario_mpi_functions(args):
    work = fresh(args, "mpi-functions")
    exp = os.path.join(work, "exp")
    p = run(mpirun(args, 2) + [os.path.join(args.bin, "scalea"), "run", "-q", "-o", exp, "--",
                               os.path.join(args.bin, "run", "mpi_functions")], clean_env())
    check(p.returncode == 0, f"exit status {p.returncode}")
    meta = read_meta(exp)
    check(meta.get("ranks") == 2, f"ranks {meta.get('ranks')!r}")
    visits = sum(r.get("visits", 0) for r in report_regions(args, exp)
                 if r.get("kind") == "function" and r.get("label") == "work")
    check(visits == 6, f"work() recorded {visits} times, expected 2 ranks x 3 calls")


def cpus_of(text):
    cpus = set()
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def cpulist(cpus):
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def check_affinity_object(aff, what, threads):
    """The schema of one process's affinity; returns its threads' CPU sets by thread index."""
    check(aff.get("cpus_online") == os.cpu_count(), f"{what}: cpus_online {aff.get('cpus_online')!r}")
    check(isinstance(aff.get("process_cpus"), str) and cpus_of(aff["process_cpus"]),
          f"{what}: process_cpus {aff.get('process_cpus')!r}")
    entries = aff.get("threads", [])
    check(sorted(t.get("index") for t in entries) == list(range(threads)),
          f"{what}: thread indexes {[t.get('index') for t in entries]}, expected 0..{threads - 1}")
    sets = {}
    for t in entries:
        cpus = cpus_of(t.get("cpus", ""))
        check(t.get("count") == len(cpus) > 0, f"{what}: thread {t}: count is not the size of cpus")
        check(cpulist(cpus) == t.get("cpus"), f"{what}: thread {t}: cpus is not a canonical cpulist")
        check(isinstance(t.get("os_tid"), int) and t["os_tid"] > 0, f"{what}: thread {t}: os_tid")
        sets[t.get("index")] = cpus
    return sets


def cpus_to_run_on():
    """The CPUs this test may run on; skips the test with fewer than two."""
    mine = os.sched_getaffinity(0)
    if len(mine) < 2:
        print("fewer than 2 CPUs to run on: skipped")
        sys.exit(SKIP)
    return mine


def scenario_affinity_omp(args):
    mine = cpus_to_run_on()
    work = fresh(args, "affinity-omp")
    app = [os.path.join(args.bin, "run", "start_app"), "0", "0"]
    bound = os.path.join(work, "bound")
    p = run([os.path.join(args.bin, "scalea"), "run", "-q", "-o", bound, "--"] + app,
            clean_env(OMP_NUM_THREADS="2", OMP_PLACES="cores", OMP_PROC_BIND="close"))
    check(p.returncode == 0, f"exit status {p.returncode}")
    meta = read_meta(bound)
    aff = meta.get("affinity", {})
    print("affinity:", json.dumps(aff))
    check(aff.get("process_cpus") == cpulist(mine), f"process_cpus {aff.get('process_cpus')!r}, "
                                                    f"the test runs on {cpulist(mine)}")
    sets = check_affinity_object(aff, "bound", 2)
    check(all(len(c) == 1 and c <= mine for c in sets.values()), f"bound threads' CPUs {sets}")
    check(len(sets) == 2 and sets.get(0) != sets.get(1), f"the two threads share a CPU: {sets}")
    check(next((t["os_tid"] for t in aff.get("threads", []) if t.get("index") == 0), 0) == meta.get("pid"),
          "thread 0 is not the initial thread")
    free = os.path.join(work, "unbound")
    q = run([os.path.join(args.bin, "scalea"), "run", "-q", "-o", free, "--"] + app, clean_env(OMP_NUM_THREADS="2"))
    check(q.returncode == 0, f"exit status {q.returncode}")
    sets = check_affinity_object(read_meta(free).get("affinity", {}), "unbound", 2)
    check(all(c == mine for c in sets.values()), f"unbound threads' CPUs {sets}, expected {cpulist(mine)}")


def scenario_affinity_mpi(args):
    mine = cpus_to_run_on()
    work = fresh(args, "affinity-mpi")
    scalea = os.path.join(args.bin, "scalea")
    app = [os.path.join(args.bin, "mpi_hybrid"), "0.1"]
    env = clean_env(OMP_NUM_THREADS="2")
    # Open MPI binds up to 2 ranks to a core each by default: both threads of the rank share it.
    exp = os.path.join(work, "np1")
    p = run(mpirun(args, 1) + ["--report-bindings", "-x", "OMP_NUM_THREADS", scalea, "run", "-q", "-o", exp, "--"] + app, env)
    check(p.returncode == 0, f"exit status {p.returncode}")
    check("bound to" in p.stderr, "mpirun did not report the rank bound to a core")
    aff = read_meta(exp).get("affinity", {})
    print("affinity:", json.dumps(aff))
    sets = check_affinity_object(aff, "np1", 2)
    check(len(cpus_of(aff.get("process_cpus", ""))) == 1, f"the rank is not bound to one CPU: {aff.get('process_cpus')!r}")
    check(len(sets) == 2 and sets.get(0) == sets.get(1) and len(sets.get(0, ())) == 1,
          f"the rank's threads do not share its one CPU: {sets}")
    ranks = aff.get("ranks", [])
    check([r.get("rank") for r in ranks] == [0], f"affinity.ranks {ranks}")
    if ranks:
        check(ranks[0].get("host") == read_meta(exp).get("host"), f"rank 0's host {ranks[0].get('host')!r}")
        check(check_affinity_object(ranks[0], "np1 rank 0", 2) == sets, "rank 0's entry differs from the top level")
    # Unbound: the threads may run anywhere the test may.
    exp = os.path.join(work, "np1-unbound")
    p = run(mpirun(args, 1) + ["--bind-to", "none", "-x", "OMP_NUM_THREADS", scalea, "run", "-q", "-o", exp, "--"] + app, env)
    check(p.returncode == 0, f"exit status {p.returncode}")
    sets = check_affinity_object(read_meta(exp).get("affinity", {}), "np1 --bind-to none", 2)
    check(all(c == mine for c in sets.values()), f"unbound threads' CPUs {sets}, expected {cpulist(mine)}")
    # Two ranks: rank 0's meta.json carries both.
    exp = os.path.join(work, "np2")
    p = run(mpirun(args, 2) + ["-x", "OMP_NUM_THREADS", scalea, "run", "-q", "-o", exp, "--"] + app,
            clean_env(OMP_NUM_THREADS="1"))
    check(p.returncode == 0, f"exit status {p.returncode}")
    ranks = read_meta(exp).get("affinity", {}).get("ranks", [])
    check([r.get("rank") for r in ranks] == [0, 1], f"affinity.ranks lists ranks {[r.get('rank') for r in ranks]}")
    for r in ranks:
        check_affinity_object(r, f"np2 rank {r.get('rank')}", 1)
        check(bool(r.get("host")), f"rank {r.get('rank')} has no host")


def scenario_heap(args):
    work = fresh(args, "heap")
    app = [os.path.join(args.bin, "run", "heap_app"), "20"]

    def faults(p):
        words = p.stdout.split()
        check(p.returncode == 0 and "faults" in words, f"exit status {p.returncode}, output {p.stdout!r}")
        return int(words[words.index("faults") + 1]) if "faults" in words else 0

    bare = faults(run(app, clean_env(OMP_NUM_THREADS="2")))
    tool = faults(run([os.path.join(args.bin, "scalea"), "run", "-q", "-o", os.path.join(work, "exp"), "--"] + app,
                      clean_env(OMP_NUM_THREADS="2")))
    # The premise: without the tool, 19 steps fault in most of their 8 MiB again (4 KiB pages).
    check(bare >= 19 * 2048 // 2, f"{bare} page faults without the tool: the heap is not trimmed between steps")
    check(abs(tool - bare) <= 0.1 * bare,
          f"{tool} page faults under the tool, {bare} without: the tool changes how the program's heap behaves")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("scenario")
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()
    args.bin, args.lib, args.workdir = map(os.path.abspath, (args.bin, args.lib, args.workdir))
    testdir.fresh(args.workdir)  # this test's own directory (tests.cmake)
    scenarios = {"signal": scenario_signal, "tty-int": scenario_tty_int, "start": scenario_start,
                 "plain": scenario_plain, "python": scenario_python, "static": scenario_static,
                 "setuid": scenario_setuid, "mpi-functions": scenario_mpi_functions,
                 "affinity-omp": scenario_affinity_omp, "affinity-mpi": scenario_affinity_mpi,
                 "heap": scenario_heap}
    if args.scenario not in scenarios:
        sys.exit(f"check_run.py: unknown scenario {args.scenario}")
    scenarios[args.scenario](args)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
