#!/usr/bin/env bash
# run_app_bench.sh BUILD_DIR [RUNS]: run-time dilation of the bundled applications at their
# default sizes with the default event set (docs/performance.md).
#   md       2 threads (OMP_PROC_BIND=close, OMP_PLACES=cores)
#   pricing  2 MPI ranks, 1 thread each (mpirun; as root set OMPI_ALLOW_RUN_AS_ROOT=1 and
#            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
# Each run is done with the tool switched off (SCALEA_ENABLE=0: the library is linked but records
# nothing) and on, interleaved, RUNS times (default 9). Two figures per variant: the program's
# own compute time (what it prints: "time X s") and the whole process's wall time, which adds
# the tool's fixed start-up and exit cost (counter set-up, clock calibration, writing).
set -euo pipefail
build=${1:?usage: run_app_bench.sh BUILD_DIR [RUNS]}
runs=${2:-9}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "run_app_bench.sh: RUNS must be a positive integer" >&2; exit 2; }
bin=$build/bin
work=$(mktemp -d /tmp/scalea-appbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export SCALEA_QUIET=1
# mpirun refuses root without these (CI and the quick start run as root).
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
one() {  # one APP VARIANT: prints "compute_s wall_ms"
  local app=$1 on=$2 out s
  rm -rf "$work/exp"
  s=$(now_ms)
  case $app in
    md) out=$(OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores SCALEA_ENABLE=$on \
              SCALEA_OUTPUT=$work/exp "$bin/md" 2>&1 || true) ;;
    pricing) out=$(OMP_NUM_THREADS=1 mpirun --oversubscribe -np 2 -x OMP_NUM_THREADS \
                   -x SCALEA_ENABLE=$on -x SCALEA_OUTPUT=$work/exp -x SCALEA_QUIET \
                   "$bin/pricing" 2>&1 || true) ;;
  esac
  local t
  t=$(grep -o 'time [0-9.]*' <<< "$out" | head -1 | cut -d' ' -f2 || true)
  [ -n "$t" ] || { echo "run_app_bench.sh: $app printed no time:" >&2; tail -5 <<< "$out" >&2; }
  echo "${t:-nan} $(( $(now_ms) - s ))"
}
echo "# run-time dilation, $runs interleaved runs per variant (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-8s %-5s %12s %12s %12s %14s\n' app tool compute_med compute_min wall_med_ms dilation_med%
for app in md pricing; do
  if [ $app = pricing ] && ! command -v mpirun > /dev/null; then echo "pricing: no mpirun, skipped"; continue; fi
  : > "$work/$app.off"; : > "$work/$app.on"
  for i in $(seq "$runs"); do
    one $app 0 >> "$work/$app.off"
    one $app 1 >> "$work/$app.on"
  done
  python3 - "$app" "$work/$app.off" "$work/$app.on" <<'PY'
import statistics as st, sys
app, off, on = sys.argv[1:4]
def load(p):
    rows = [l.split() for l in open(p) if len(l.split()) == 2 and l.split()[0] != "nan"]
    return [float(a) for a, _ in rows], [float(b) for _, b in rows]
(c0, w0), (c1, w1) = load(off), load(on)
if not c0 or not c1:
    sys.exit(f"{app}: the program printed no time (see the app's output)")
for name, c, w in (("off", c0, w0), ("on", c1, w1)):
    dil = "" if name == "off" else "compute %+.1f / wall %+.1f" % (
        100 * (st.median(c1) / st.median(c0) - 1), 100 * (st.median(w1) / st.median(w0) - 1))
    print(f"{app:<8} {name:<5} {st.median(c):12.4f} {min(c):12.4f} {st.median(w):12.0f} {dil:>14}")
PY
done
