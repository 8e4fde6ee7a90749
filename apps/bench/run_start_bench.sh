#!/usr/bin/env bash
# run_start_bench.sh BUILD_DIR [RUNS] [OTHER_SCALEA]: the fixed cost of `scalea run` per process
# (docs/performance.md, "Start-up and exit cost"). Whole-process wall time of a program with one
# parallel region (build/bin/run/start_app 0 0, 2 threads) and of the same program without OpenMP
# (start_app_plain): bare, under this build's `scalea run`, and under OTHER_SCALEA (another build's
# scalea binary, to compare two versions). For start_app also the tool library alone
# (OMP_TOOL_LIBRARIES=libscalea-omp.so, no `scalea run`) and the no-op tool (the floor: every
# callback registered, empty), and the two differences issue 37 sets targets for, paired by
# round: the tool above the no-op tool (the tool's cost in the process) and `scalea run` above
# the tool alone (the command's own cost). RUNS interleaved runs per variant (default 41).
set -euo pipefail
build=$(cd "${1:?usage: run_start_bench.sh BUILD_DIR [RUNS] [OTHER_SCALEA]}" && pwd)
runs=${2:-41}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "run_start_bench.sh: RUNS must be a positive integer" >&2; exit 2; }
other=${3:-}
for app in start_app start_app_plain; do
  [ -x "$build/bin/run/$app" ] || { echo "run_start_bench.sh: $build/bin/run/$app not built" >&2; exit 2; }
done
for lib in libscalea-omp.so libscalea-noop-tool.so; do
  [ -f "$build/lib/$lib" ] || { echo "run_start_bench.sh: $build/lib/$lib not built" >&2; exit 2; }
done
echo "# start-up and exit cost, $runs interleaved runs per variant (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$build" "$runs" "$other" <<'PY'
import os, shutil, statistics as st, subprocess, sys, tempfile, time
build, runs, other = sys.argv[1], int(sys.argv[2]), sys.argv[3]
work = tempfile.mkdtemp(prefix="scalea-startbench.")
env = dict(os.environ, OMP_NUM_THREADS="2", SCALEA_QUIET="1")
variants = {"bare": None, "scalea run": os.path.join(build, "bin", "scalea")}
if other:
    variants["other scalea run"] = other
# The tool loaded by the runtime without `scalea run` (start_app only: the plain program has no
# OpenMP runtime to load it).
libs = {"no-op tool": os.path.join(build, "lib", "libscalea-noop-tool.so"),
        "tool alone": os.path.join(build, "lib", "libscalea-omp.so")}
def paired(times, a, b):
    d = [x - y for x, y in zip(times[a], times[b])]
    q = st.quantiles(d, n=4)
    print(f"{'':16} {a + ' - ' + b:28} paired median {st.median(d):+6.2f} ms  quartiles {q[0]:+6.2f} .. {q[2]:+6.2f}")
try:
    for app in ("start_app", "start_app_plain"):
        prog = [os.path.join(build, "bin", "run", app), "0", "0"]
        names = list(variants) + (list(libs) if app == "start_app" else [])
        times = {k: [] for k in names}
        for i in range(runs):
            for name in names:
                exp = os.path.join(work, "exp")
                run_env = env
                if name in libs:
                    cmd = prog
                    run_env = dict(env, OMP_TOOL_LIBRARIES=libs[name], SCALEA_OUTPUT=exp)
                elif variants[name] is None:
                    cmd = prog
                else:
                    cmd = [variants[name], "run", "-q", "-o", exp, "--"] + prog
                t = time.perf_counter()
                subprocess.run(cmd, env=run_env, stdout=subprocess.DEVNULL, check=True)
                times[name].append((time.perf_counter() - t) * 1e3)
                shutil.rmtree(exp, ignore_errors=True)
        for name, v in times.items():
            q = st.quantiles(v, n=4)
            print(f"{app:16} {name:17} median {st.median(v):7.2f} ms  quartiles {q[0]:6.2f} .. {q[2]:6.2f}  min {min(v):6.2f}")
        if app == "start_app":
            paired(times, "tool alone", "no-op tool")
            paired(times, "scalea run", "tool alone")
finally:
    shutil.rmtree(work, ignore_errors=True)
PY
