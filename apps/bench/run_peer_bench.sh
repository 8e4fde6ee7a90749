#!/usr/bin/env bash
# run_peer_bench.sh -- time added per construct by OMPT tools, side by side, in one interleaved run.
#
# usage: run_peer_bench.sh --micro PATH --noop PATH [--tool NAME=PATH]... [--rounds 21]
#                          [--threads 2] [--bench "forkjoin barrier for lock"] [--n NAME=N]...
#
#   --micro PATH      omp_micro executable
#   --noop PATH       libscalea-noop-tool.so: every callback registered, empty (the floor)
#   --tool NAME=PATH  a tool library (repeatable), e.g. scalea=build/lib/libscalea-omp.so,
#                     before=<an older build>, caliper=<libcaliper.so from build_caliper.sh>.
#                     NAME caliper* runs with CALI_USE_OMPT=1 CALI_SERVICES_ENABLE=ompt (its OMPT
#                     service only); caliper-report* with CALI_USE_OMPT=1
#                     CALI_CONFIG=openmp-report,output=/dev/null. Any other NAME is run as
#                     the scalea tool (SCALEA_OUTPUT a fresh directory, deleted, SCALEA_QUIET=1).
#   --rounds R        rounds; each runs every variant once, in an order rotated per round
#   --threads T       OMP_NUM_THREADS (default 2), pinned (OMP_PROC_BIND=close OMP_PLACES=cores)
#                     unless OMP_PROC_BIND is set
#   --bench LIST      omp_micro kernels
#   --n NAME=N        a kernel's size (default: omp_micro's)
#
# Per kernel and variant it prints the time added per unit of the kernel, in ns: per parallel
# region (forkjoin), per barrier, per `omp for` loop (for), per lock pair of each thread (lock:
# both threads run their N pairs at once, so this is the time a pair adds to the loop), per
# iteration (dynloop): (t - t_bare) / N, at the 10th percentile and the median of the rounds
# (each variant's own quantile minus bare's), and above the no-op tool paired by round: the
# median over rounds of (t - t_noop of the same round) / N. The machine's load average is
# printed at the start and the end: timings on a busy machine are not comparable.
# docs/performance.md ("Cost per construct") gives the figures. Needs python3.

set -euo pipefail

die() { echo "run_peer_bench.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }

MICRO='' NOOP='' ROUNDS=21 THREADS=2 BENCHES="forkjoin barrier for lock"
TOOLS=()
declare -A NSIZE=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --micro)   [[ $# -ge 2 ]] || die "--micro needs a path"; MICRO=$2; shift 2 ;;
    --noop)    [[ $# -ge 2 ]] || die "--noop needs a path"; NOOP=$2; shift 2 ;;
    --tool)    [[ $# -ge 2 && $2 == *=* ]] || die "--tool needs NAME=PATH"; TOOLS+=("$2"); shift 2 ;;
    --rounds)  [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a number"; ROUNDS=$2; shift 2 ;;
    --threads) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--threads needs a number"; THREADS=$2; shift 2 ;;
    --bench)   [[ $# -ge 2 ]] || die "--bench needs a list"; BENCHES=${2//,/ }; shift 2 ;;
    --n)       [[ $# -ge 2 && $2 =~ ^[a-z]+=[1-9][0-9]*$ ]] || die "--n needs NAME=N"
               NSIZE[${2%%=*}]=${2#*=}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
  esac
done
[[ -x $MICRO ]] || die "omp_micro '$MICRO' is not an executable file"
[[ -f $NOOP ]] || die "no-op tool '$NOOP' does not exist"
command -v python3 >/dev/null || die "python3 is needed"
NOOP=$(readlink -f -- "$NOOP")
VARIANTS=(bare noop)
declare -A LIB=([noop]=$NOOP)
for t in "${TOOLS[@]}"; do
  name=${t%%=*} path=${t#*=}
  [[ $name =~ ^[A-Za-z0-9_.-]+$ && $name != bare && $name != noop ]] || die "bad tool name '$name'"
  [[ -f $path ]] || die "tool '$path' does not exist"
  VARIANTS+=("$name")
  LIB[$name]=$(readlink -f -- "$path")
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/scalea-peer.XXXXXX")
trap 'rm -rf -- "$TMP"' EXIT
export OMP_NUM_THREADS=$THREADS OMP_TOOL=enabled
if [[ -z ${OMP_PROC_BIND:-} ]]; then
  export OMP_PROC_BIND=close OMP_PLACES=${OMP_PLACES:-cores}
fi
unset OMP_TOOL_LIBRARIES CALI_CONFIG CALI_SERVICES_ENABLE CALI_USE_OMPT SCALEA_OUTPUT

echo "# omp_micro $MICRO, $THREADS threads, OMP_PROC_BIND=$OMP_PROC_BIND, $ROUNDS rounds"
for v in "${VARIANTS[@]:1}"; do echo "# $v: ${LIB[$v]}"; done
echo "# start $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load:$(cut -d' ' -f1-3 /proc/loadavg)"

# run_one BENCH VARIANT ROUND -> one line "bench variant round seconds n" in $TMP/raw
run_one() {
  local bench=$1 v=$2 r=$3 out secs
  local -a envs=() size=()
  [[ -n ${NSIZE[$bench]:-} ]] && size=("${NSIZE[$bench]}")
  case $v in
    bare) ;;
    noop) envs=(OMP_TOOL_LIBRARIES="${LIB[$v]}") ;;
    caliper-report*) envs=(OMP_TOOL_LIBRARIES="${LIB[$v]}" CALI_USE_OMPT=1
                           "CALI_CONFIG=openmp-report,output=/dev/null") ;;
    caliper*) envs=(OMP_TOOL_LIBRARIES="${LIB[$v]}" CALI_USE_OMPT=1 CALI_SERVICES_ENABLE=ompt) ;;
    *) envs=(OMP_TOOL_LIBRARIES="${LIB[$v]}" SCALEA_QUIET=1 SCALEA_OUTPUT="$TMP/exp") ;;
  esac
  out=$(env "${envs[@]}" "$MICRO" "$bench" "${size[@]}" 2>"$TMP/err") ||
    { cat "$TMP/err" >&2; die "$bench/$v round $r failed"; }
  rm -rf -- "$TMP/exp"
  secs=$(sed -n 's/.*seconds=\([0-9.eE+-]*\).*/\1/p' <<<"$out")
  n=$(sed -n 's/.*n=\([0-9]*\).*/\1/p' <<<"$out")
  [[ -n $secs && -n $n ]] || die "$bench/$v: no result in '$out'"
  echo "$bench $v $r $secs $n" >>"$TMP/raw"
}

nv=${#VARIANTS[@]}
for bench in $BENCHES; do
  echo "# $bench ..." >&2
  for ((r = 0; r < ROUNDS; ++r)); do
    for ((k = 0; k < nv; ++k)); do run_one "$bench" "${VARIANTS[$(((r + k) % nv))]}" "$r"; done
  done
done
echo "# end   $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load:$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$TMP/raw" "${VARIANTS[@]}" <<'PY'
import sys
from collections import defaultdict

def q(xs, p):
    xs = sorted(xs)
    pos = (len(xs) - 1) * p
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

t = defaultdict(dict)  # (bench, variant) -> {round: seconds}
size = {}
benches = []
for line in open(sys.argv[1]):
    b, v, r, s, n = line.split()
    t[(b, v)][int(r)] = float(s)
    size[b] = int(n)
    if b not in benches:
        benches.append(b)
variants = sys.argv[2:]
print(f"{'bench':9} {'variant':16} {'median_s':>9} {'+ns p10':>9} {'+ns med':>9} "
      f"{'>noop paired':>13}")
for b in benches:
    n = size[b]
    bare = list(t[(b, "bare")].values())
    for v in variants:
        xs = t[(b, v)]
        vals = list(xs.values())
        p10 = (q(vals, 0.1) - q(bare, 0.1)) / n * 1e9
        med = (q(vals, 0.5) - q(bare, 0.5)) / n * 1e9
        noop = t[(b, "noop")]
        paired = q([(xs[r] - noop[r]) / n * 1e9 for r in xs if r in noop], 0.5)
        cells = ["", ""] if v == "bare" else [f"{p10:+.1f}", f"{med:+.1f}"]
        print(f"{b:9} {v:16} {q(vals, 0.5):9.4f} {cells[0]:>9} {cells[1]:>9} "
              f"{'' if v in ('bare', 'noop') else f'{paired:+.1f}':>13}")
PY
