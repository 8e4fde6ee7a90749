#!/usr/bin/env python3
"""`scalea run` end to end on real programs (registered by tests.cmake).

usage: check_run.py --bin DIR --lib DIR --workdir DIR SCENARIO [ARGS...]

scenarios:
  signal NAME     kill -NAME to the `scalea run` process: passed on to the program once, the
                  experiment is written and says so, exit status 128+N
  tty-int         ^C typed at a terminal (a pty): the program gets SIGINT once, not twice
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

FAILURES = []
FORWARDED = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2]


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def fresh(args, name):
    path = os.path.join(args.workdir, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


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
    pid, fd = pty.fork()
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("scenario")
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    scenarios = {"signal": scenario_signal, "tty-int": scenario_tty_int}
    if args.scenario not in scenarios:
        sys.exit(f"check_run.py: unknown scenario {args.scenario}")
    scenarios[args.scenario](args)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
