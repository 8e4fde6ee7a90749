#!/usr/bin/env bash
# run_start_bench.sh BUILD_DIR [RUNS] [OTHER_SCALEA]: the fixed cost of `scalea run` per process
# (docs/performance.md, "Start-up and exit cost"). Whole-process wall time of a program with one
# parallel region (build/bin/run/start_app 0 0, 2 threads) and of the same program without OpenMP
# (start_app_plain): bare, under this build's `scalea run`, and under OTHER_SCALEA (another build's
# scalea binary, to compare two versions). RUNS interleaved runs per variant (default 41).
set -euo pipefail
build=$(cd "${1:?usage: run_start_bench.sh BUILD_DIR [RUNS] [OTHER_SCALEA]}" && pwd)
runs=${2:-41}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "run_start_bench.sh: RUNS must be a positive integer" >&2; exit 2; }
other=${3:-}
for app in start_app start_app_plain; do
  [ -x "$build/bin/run/$app" ] || { echo "run_start_bench.sh: $build/bin/run/$app not built" >&2; exit 2; }
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
try:
    for app in ("start_app", "start_app_plain"):
        prog = [os.path.join(build, "bin", "run", app), "0", "0"]
        times = {k: [] for k in variants}
        for i in range(runs):
            for name, scalea in variants.items():
                exp = os.path.join(work, "exp")
                cmd = prog if scalea is None else [scalea, "run", "-q", "-o", exp, "--"] + prog
                t = time.perf_counter()
                subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
                times[name].append((time.perf_counter() - t) * 1e3)
                shutil.rmtree(exp, ignore_errors=True)
        for name, v in times.items():
            q = st.quantiles(v, n=4)
            print(f"{app:16} {name:17} median {st.median(v):7.2f} ms  quartiles {q[0]:6.2f} .. {q[2]:6.2f}  min {min(v):6.2f}")
finally:
    shutil.rmtree(work, ignore_errors=True)
PY
