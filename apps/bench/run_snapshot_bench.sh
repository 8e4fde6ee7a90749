#!/usr/bin/env bash
# run_snapshot_bench.sh BUILD_DIR [RUNS]: the cost of snapshots (SCALEA_SNAPSHOT, docs/online.md;
# figures in docs/performance.md).
#   dilation   md (2 threads) and pricing (2 MPI ranks), each at its default size and at a longer
#              one (md 1024 400: ~5 s; pricing 7000: ~1.5 s of compute), under the tool with
#              snapshots off, every 1 s and every 100 ms, interleaved RUNS times (default 7):
#              medians of the program's compute time ("time X s") and of the whole process
#   per snapshot  from the snapshots' own meta ("snapshot.capture"): how long the publisher held
#              a thread (the most, and per thread), closing the copies, encoding and writing, the
#              file's size; the size of the first and the last snapshot of a run (bounded by the
#              call paths, not by the run time)
# As root, mpirun needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (set here).
set -euo pipefail
build=${1:?usage: run_snapshot_bench.sh BUILD_DIR [RUNS]}
runs=${2:-7}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "run_snapshot_bench.sh: RUNS must be a positive integer" >&2; exit 2; }
bin=$(cd "$build/bin" && pwd)
work=$(mktemp -d /tmp/scalea-snapbench.XXXXXX)
trap 'rm -rf "$work" "$work".live' EXIT
export SCALEA_QUIET=1
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
one() {  # one CASE SNAPSHOT RUN: prints "compute_s wall_ms"; keeps the snapshots of the run
  local case=$1 snap=$2 run=$3 out s exp=$work/exp-$1-$2-$3
  s=$(now_ms)
  case $case in
    md|md-long)
      local args=(); [ "$case" = md-long ] && args=(1024 400)
      out=$(OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores SCALEA_SNAPSHOT=$snap \
            SCALEA_OUTPUT=$exp "$bin/md" "${args[@]}" 2>&1 || true) ;;
    pricing|pricing-long)
      local args=(); [ "$case" = pricing-long ] && args=(7000)
      out=$(OMP_NUM_THREADS=1 mpirun --oversubscribe -np 2 -x OMP_NUM_THREADS \
            -x SCALEA_SNAPSHOT=$snap -x SCALEA_OUTPUT=$exp -x SCALEA_QUIET \
            "$bin/pricing" "${args[@]}" 2>&1 || true) ;;
  esac
  local t
  t=$(grep -o 'time [0-9.]*' <<< "$out" | head -1 | cut -d' ' -f2 || true)
  [ -n "$t" ] || { echo "run_snapshot_bench.sh: $case printed no time:" >&2; tail -5 <<< "$out" >&2; }
  echo "${t:-nan} $(( $(now_ms) - s ))"
}
cases=(md md-long pricing pricing-long)
command -v mpirun > /dev/null || { echo "no mpirun: pricing skipped"; cases=(md md-long); }
echo "# snapshot cost, $runs interleaved runs per variant (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
for i in $(seq "$runs"); do
  for c in "${cases[@]}"; do
    for snap in off 1s 100ms; do one "$c" "$snap" "$i" >> "$work/$c.$snap"; done
  done
done
python3 - "$work" "${cases[@]}" <<'PY'
import glob, json, os, re, statistics as st, sys
work, cases = sys.argv[1], sys.argv[2:]

def load(path):
    rows = [l.split() for l in open(path) if len(l.split()) == 2 and l.split()[0] != "nan"]
    return [float(a) for a, _ in rows], [float(b) for _, b in rows]

print("\n## dilation (compute: the program's own time, wall: the whole process; medians, and minima,"
      " the steadier statistic on a loaded machine)")
print(f"{'case':<13} {'snapshots':<9} {'compute s':>10} {'wall ms':>8} {'compute %':>10} {'wall %':>8} "
      f"{'min compute %':>14} {'min wall %':>11} {'snaps/run':>9}")
for c in cases:
    c0, w0 = load(f"{work}/{c}.off")
    for snap in ("off", "1s", "100ms"):
        cs, ws = load(f"{work}/{c}.{snap}")
        n = [len(glob.glob(f"{d}/snapshots/rank-*/snap-*.sdrg")) for d in glob.glob(f"{work}/exp-{c}-{snap}-*")]
        dc = "" if snap == "off" else f"{100 * (st.median(cs) / st.median(c0) - 1):+.1f}"
        dw = "" if snap == "off" else f"{100 * (st.median(ws) / st.median(w0) - 1):+.1f}"
        mc = "" if snap == "off" else f"{100 * (min(cs) / min(c0) - 1):+.1f}"
        mw = "" if snap == "off" else f"{100 * (min(ws) / min(w0) - 1):+.1f}"
        print(f"{c:<13} {snap:<9} {st.median(cs):10.4f} {st.median(ws):8.0f} {dc:>10} {dw:>8} "
              f"{mc:>14} {mw:>11} {(st.median(n) if n else 0):9.1f}")

print("\n## per snapshot (from the snapshots' meta; medians over all snapshots of the runs, max in brackets)")
print(f"{'case':<13} {'snapshots':<9} {'n':>5} {'threads':>7} {'hold max us':>14} {'hold/thread us':>15} "
      f"{'close us':>10} {'encode us':>10} {'write us':>10} {'bytes':>7} {'first..last bytes':>18}")
for c in cases:
    for snap in ("1s", "100ms"):
        caps, sizes, spans = [], [], []
        for d in glob.glob(f"{work}/exp-{c}-{snap}-*"):
            for rank in glob.glob(f"{d}/snapshots/rank-*"):
                files = sorted(glob.glob(f"{rank}/snap-*.sdrg"))
                for f in files:
                    b = open(f, "rb").read()
                    m = re.search(rb'"capture": (\{[^}]*\})', b)
                    if m:
                        caps.append(json.loads(m.group(1)))
                        sizes.append(len(b))
                if files:
                    spans.append((os.path.getsize(files[0]), os.path.getsize(files[-1])))
        if not caps:
            print(f"{c:<13} {snap:<9} {0:>5} (no snapshot: the run is shorter than the interval)")
            continue
        med = lambda k: st.median(x[k] for x in caps)
        top = lambda k: max(x[k] for x in caps)
        per_thread = [x["hold_us_total"] / max(1, x["threads"]) for x in caps]
        # encode and write are reported by the next snapshot (previous_*): skip the first's zeros
        enc = [x["previous_encode_us"] for x in caps if x["previous_encode_us"] > 0] or [0]
        wr = [x["previous_write_us"] for x in caps if x["previous_write_us"] > 0] or [0]
        first = min(a for a, _ in spans); last = max(b for _, b in spans)
        print(f"{c:<13} {snap:<9} {len(caps):>5} {int(med('threads')):>7} "
              f"{med('hold_us_max'):6.1f} [{top('hold_us_max'):5.0f}] "
              f"{st.median(per_thread):7.1f} [{max(per_thread):5.0f}] "
              f"{med('close_us'):10.1f} {st.median(enc):10.1f} {st.median(wr):10.1f} "
              f"{st.median(sizes):7.0f} {first:>8}..{last:<8}")
PY
