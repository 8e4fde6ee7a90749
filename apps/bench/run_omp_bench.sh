#!/usr/bin/env bash
# run_omp_bench.sh -- cost of an OMPT tool per callback, against bare and a no-op tool.
#
# usage: run_omp_bench.sh --micro PATH --noop PATH --tool PATH
#                         [--runs 11] [--threads 2] [--bench "forkjoin barrier dynloop lock"]
#                         [--n NAME=N]... [--raw FILE] [--timeout SECONDS]
#
#   --micro PATH    omp_micro executable                         (env OMP_MICRO)
#   --noop PATH     libscalea-noop-tool.so                       (env NOOP_TOOL)
#   --tool PATH     libscalea-omp.so; may not exist yet -> "n/a" (env SCALEA_TOOL)
#   --runs R        runs per benchmark and variant, default 11   (env BENCH_RUNS)
#   --threads T     OMP_NUM_THREADS, default 2                   (env BENCH_THREADS)
#   --bench LIST    benchmarks to run (space or comma separated) (env BENCH_LIST)
#   --n NAME=N      override omp_micro's default N for one benchmark (repeatable)
#   --raw FILE      also write every run as TSV: bench variant run seconds callbacks
#   --timeout S     kill a run after S seconds (default 300; needs `timeout`)
#
# Environment passed through: LD_LIBRARY_PATH (e.g. another libomp), OMP_*, KMP_*.
# If OMP_PROC_BIND is unset, the script sets OMP_PROC_BIND=close OMP_PLACES=cores.
#
# For each benchmark it runs, interleaved, R times each (the order rotates per round
# so no variant always runs first):
#   bare   no tool (OMP_TOOL_LIBRARIES unset)
#   noop   OMP_TOOL_LIBRARIES=<noop>, NOOP_TOOL_COUNT_FILE=<tmp> -> callbacks per run
#   scalea OMP_TOOL_LIBRARIES=<tool>, SCALEA_OUTPUT=<fresh tmp dir, deleted after>,
#          SCALEA_QUIET=1
# and prints one table (see docs/performance.md, "OpenMP microbenchmarks"):
#   median seconds, min-max and IQR, callbacks/run, ns per callback above bare and
#   above noop, and % dilation against bare.
# Only bash, coreutils and python3 (standard library) are used.

set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "run_omp_bench.sh: $*" >&2; exit 2; }

MICRO=${OMP_MICRO:-}
NOOP=${NOOP_TOOL:-}
TOOL=${SCALEA_TOOL:-}
RUNS=${BENCH_RUNS:-11}
THREADS=${BENCH_THREADS:-2}
BENCHES=${BENCH_LIST:-forkjoin barrier dynloop lock}
RAW_OUT=
TIMEOUT_S=300
declare -A NOVERRIDE=()

while [[ $# -gt 0 ]]; do
  case $1 in
    --micro)   [[ $# -ge 2 ]] || die "--micro needs a path";  MICRO=$2; shift 2 ;;
    --noop)    [[ $# -ge 2 ]] || die "--noop needs a path";   NOOP=$2; shift 2 ;;
    --tool)    [[ $# -ge 2 ]] || die "--tool needs a path";   TOOL=$2; shift 2 ;;
    --runs)    [[ $# -ge 2 ]] || die "--runs needs a number"; RUNS=$2; shift 2 ;;
    --threads) [[ $# -ge 2 ]] || die "--threads needs a number"; THREADS=$2; shift 2 ;;
    --bench)   [[ $# -ge 2 ]] || die "--bench needs a list";  BENCHES=$2; shift 2 ;;
    --n)       [[ $# -ge 2 && $2 == *=* ]] || die "--n needs NAME=N"
               NOVERRIDE[${2%%=*}]=${2#*=}; shift 2 ;;
    --raw)     [[ $# -ge 2 ]] || die "--raw needs a file";    RAW_OUT=$2; shift 2 ;;
    --timeout) [[ $# -ge 2 ]] || die "--timeout needs seconds"; TIMEOUT_S=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
  esac
done

BENCHES=${BENCHES//,/ }
[[ -n $MICRO ]] || die "no omp_micro given (--micro PATH or env OMP_MICRO)"
[[ -x $MICRO ]] || die "omp_micro '$MICRO' is not an executable file"
[[ -n $NOOP ]]  || die "no no-op tool given (--noop PATH or env NOOP_TOOL)"
[[ -f $NOOP ]]  || die "no-op tool '$NOOP' does not exist"
[[ $RUNS =~ ^[1-9][0-9]*$ ]]    || die "--runs must be a positive integer, got '$RUNS'"
[[ $THREADS =~ ^[1-9][0-9]*$ ]] || die "--threads must be a positive integer, got '$THREADS'"
command -v python3 >/dev/null || die "python3 is needed for the statistics"
for b in "${!NOVERRIDE[@]}"; do
  [[ ${NOVERRIDE[$b]} =~ ^[1-9][0-9]*$ ]] || die "--n $b=${NOVERRIDE[$b]}: N must be a positive integer"
done
# Tool libraries are dlopen()ed by the runtime: give it absolute paths.
MICRO=$(readlink -f -- "$MICRO")
NOOP=$(readlink -f -- "$NOOP")
HAVE_TOOL=0
if [[ -n $TOOL && -f $TOOL ]]; then
  TOOL=$(readlink -f -- "$TOOL"); HAVE_TOOL=1
fi

known=$("$MICRO" --help)
for bench in $BENCHES; do
  grep -q -w -- "$bench" <<<"$known" || die "unknown benchmark '$bench' (omp_micro knows: $(head -n1 <<<"$known"))"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/scalea-bench.XXXXXX")
trap 'rm -rf -- "$TMP"' EXIT
RAW=$TMP/raw.tsv
: >"$RAW"
TIMEOUT_CMD=()
command -v timeout >/dev/null && TIMEOUT_CMD=(timeout "$TIMEOUT_S")

export OMP_NUM_THREADS=$THREADS
# Pin threads unless the caller chose otherwise (OMP_PROC_BIND=false to disable): on a
# small VM, unpinned threads sharing one core turn a 0.8 s lock run into 4-10 s outliers.
if [[ -z ${OMP_PROC_BIND:-} ]]; then
  export OMP_PROC_BIND=close
  export OMP_PLACES=${OMP_PLACES:-cores}
fi
unset OMP_TOOL_LIBRARIES NOOP_TOOL_COUNT_FILE SCALEA_OUTPUT
export OMP_TOOL=enabled   # a stray OMP_TOOL=disabled would silently measure "bare" three times

libomp=$(ldd "$MICRO" 2>/dev/null | awk '/libomp|libiomp|libgomp/ {print $3; exit}')
echo "# omp_micro : $MICRO"
echo "# libomp    : ${libomp:-unknown}${LD_LIBRARY_PATH:+ (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)}"
echo "# noop tool : $NOOP"
if [[ $HAVE_TOOL == 1 ]]; then echo "# tool      : $TOOL"
else echo "# tool      : ${TOOL:-<none>} (not found: variant 'scalea' reported as n/a)"; fi
echo "# host      : $(uname -n), $(nproc) cores online, OMP_NUM_THREADS=$THREADS," \
     "OMP_PROC_BIND=${OMP_PROC_BIND:-unset}, OMP_PLACES=${OMP_PLACES:-unset}, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}"
echo "# date      : $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $RUNS runs per variant, interleaved"

# run_one BENCH VARIANT ROUND -> appends one line to $RAW (seconds "fail" on error)
run_one() {
  local bench=$1 variant=$2 round=$3 out err rc=0 cb=- outdir=
  local -a nargs=() envs=()
  [[ -n ${NOVERRIDE[$bench]:-} ]] && nargs=("${NOVERRIDE[$bench]}")
  err=$TMP/stderr.$bench.$variant
  case $variant in
    bare) ;;
    noop)
      rm -f -- "$TMP/count"
      envs=(OMP_TOOL_LIBRARIES="$NOOP" NOOP_TOOL_COUNT_FILE="$TMP/count") ;;
    scalea)
      outdir=$TMP/scalea-out.$bench.$round   # must not exist: the tool never writes into an existing path
      envs=(OMP_TOOL_LIBRARIES="$TOOL" SCALEA_OUTPUT="$outdir" SCALEA_QUIET=1) ;;
  esac
  out=$(env "${envs[@]}" "${TIMEOUT_CMD[@]}" "$MICRO" "$bench" "${nargs[@]}" 2>"$err") || rc=$?
  local secs
  secs=$(sed -n 's/.*seconds=\([0-9.eE+-]*\).*/\1/p' <<<"$out" | head -n1)
  if [[ $rc -ne 0 || -z $secs ]]; then
    echo "run_omp_bench.sh: $bench/$variant run $round failed (exit $rc):" >&2
    head -n 5 -- "$err" >&2 || true
    secs=fail
  fi
  if [[ $variant == noop && $secs != fail ]]; then
    [[ -s $TMP/count ]] || die "$bench/noop: the no-op tool wrote no count file -- was it loaded? (check OMP_TOOL_LIBRARIES handling, 'NOOP_TOOL_VERBOSE=1')"
    cb=$(tail -n1 -- "$TMP/count")
  fi
  if [[ $variant == scalea ]]; then
    if [[ $secs != fail && ! -s $outdir/meta.json && ! -e $TMP/warned-empty ]]; then
      echo "run_omp_bench.sh: warning: the scalea tool wrote nothing to SCALEA_OUTPUT -- was it loaded?" >&2
      touch "$TMP/warned-empty"
    fi
    rm -rf -- "$outdir" "$outdir".*
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$bench" "$variant" "$round" "$secs" "$cb" >>"$RAW"
}

VARIANTS=(bare noop scalea)
for bench in $BENCHES; do
  echo "# running $bench ..." >&2
  for ((r = 1; r <= RUNS; ++r)); do
    for ((k = 0; k < 3; ++k)); do
      v=${VARIANTS[$(((r - 1 + k) % 3))]}
      [[ $v == scalea && $HAVE_TOOL == 0 ]] && continue
      run_one "$bench" "$v" "$r"
    done
  done
  [[ $HAVE_TOOL == 1 ]] || printf '%s\tscalea\t0\tna\t-\n' "$bench" >>"$RAW"
done

[[ -n $RAW_OUT ]] && cp -- "$RAW" "$RAW_OUT"

python3 - "$RAW" <<'PY'
import sys
from collections import OrderedDict

def quantile(xs, q):            # linear interpolation between order statistics
    xs = sorted(xs)
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

data = OrderedDict()            # (bench, variant) -> {"s": [...], "cb": [...], "fail": n, "na": bool}
for line in open(sys.argv[1]):
    bench, variant, _run, secs, cb = line.rstrip("\n").split("\t")
    d = data.setdefault((bench, variant), {"s": [], "cb": [], "fail": 0, "na": False})
    if secs == "na":
        d["na"] = True
    elif secs == "fail":
        d["fail"] += 1
    else:
        d["s"].append(float(secs))
    if cb != "-":
        d["cb"].append(int(cb))

def med(b, v):
    d = data.get((b, v))
    return quantile(d["s"], 0.5) if d and d["s"] else None

MIN_CB = 1000                   # below this, time/callback is start-up noise, not a cost
hdr = ["benchmark", "variant", "runs", "median_s", "min-max_s", "IQR_s",
       "callbacks/run", "ns/cb>bare", "ns/cb>noop", "dilation%"]
rows = []
notes = set()
for (b, v), d in data.items():
    noop = data.get((b, "noop"))
    cbs = noop["cb"] if noop else []
    cb = quantile(cbs, 0.5) if cbs else None
    if d["na"] or not d["s"]:
        notes.add("scalea: n/a = tool library not found (build target scalea-omp)" if d["na"]
                  else "n/a = every run of that variant failed (see stderr above)")
        rows.append([b, v, "0" if d["na"] else "0(+%d failed)" % d["fail"], "n/a",
                     "-", "-", "-", "-", "-", "-"])
        continue
    m = quantile(d["s"], 0.5)
    runs = str(len(d["s"])) + ("(+%d failed)" % d["fail"] if d["fail"] else "")
    spread = "%.4f-%.4f" % (min(d["s"]), max(d["s"]))
    iqr = "%.4f" % (quantile(d["s"], 0.75) - quantile(d["s"], 0.25))
    def per_cb(ref):
        r = med(b, ref)
        if v == "bare" or v == ref or r is None or not cb:
            return "-"
        if cb < MIN_CB:          # e.g. dynloop on a runtime without ompt_callback_dispatch
            return "n/a*"
        return "%.1f" % ((m - r) / cb * 1e9)
    bare = med(b, "bare")
    dil = "-" if v == "bare" or not bare else "%+.1f" % ((m / bare - 1.0) * 100.0)
    rows.append([b, v, runs, "%.4f" % m, spread, iqr,
                 "%d" % round(cb) if cb else "-", per_cb("bare"),
                 per_cb("noop") if v != "noop" else "-", dil])

w = [max(len(str(r[i])) for r in [hdr] + rows) for i in range(len(hdr))]
def fmt(r):
    return "  ".join(str(c).ljust(w[i]) if i < 2 else str(c).rjust(w[i]) for i, c in enumerate(r)).rstrip()
print(fmt(hdr))
print("  ".join("-" * x for x in w))
prev = None
for r in rows:
    if prev is not None and r[0] != prev:
        print()
    print(fmt(r))
    prev = r[0]
print()
print("# callbacks/run: from the no-op tool's count (whole run, incl. start-up); "
      "ns/cb = (median - reference median) / callbacks/run")
for n in sorted(notes):
    print("# " + n)

# Bimodal kernels (fork/join on a small VM runs ~0.14 s or ~0.4 s, bare too, and the mode cannot be
# chosen): a variant's runs are split at the largest jump between consecutive sorted times when it
# is more than 1.5x, and variants are compared within each mode, so that a pass whose variants
# landed in different modes does not compare a fast run with a slow one.
def split_modes(xs):
    xs = sorted(xs)
    if len(xs) < 2:
        return None
    i = max(range(1, len(xs)), key=lambda k: xs[k] / xs[k - 1])
    return (xs[:i], xs[i:]) if xs[i] / xs[i - 1] > 1.5 else None

for b in OrderedDict((k[0], 1) for k in data):
    splits = {v: split_modes(data[(b, v)]["s"]) for v in ("bare", "noop", "scalea")
              if (b, v) in data and data[(b, v)]["s"]}
    if sum(1 for x in splits.values() if x) < 2:
        continue
    noop_cb = data.get((b, "noop"), {}).get("cb")
    cb = quantile(noop_cb, 0.5) if noop_cb else None
    print("# %s is bimodal in this pass; per mode (median s, runs):" % b)
    for mode, name in ((0, "fast"), (1, "slow")):
        meds = {}
        for v, sp in splits.items():
            if sp:
                meds[v] = sp[mode]
            else:           # one mode only: it belongs to the mode whose other variants it is near
                xs = data[(b, v)]["s"]
                ref = [quantile(x[mode], 0.5) for x in splits.values() if x]
                other = [quantile(x[1 - mode], 0.5) for x in splits.values() if x]
                m = quantile(xs, 0.5)
                if ref and other and abs(m - sum(ref) / len(ref)) < abs(m - sum(other) / len(other)):
                    meds[v] = xs
        text = ", ".join("%s %.4f (%d)" % (v, quantile(x, 0.5), len(x)) for v, x in meds.items())
        if cb and "noop" in meds and "scalea" in meds:
            text += "; scalea ns/cb>noop %.1f (medians), %.1f (minima)" % (
                (quantile(meds["scalea"], 0.5) - quantile(meds["noop"], 0.5)) / cb * 1e9,
                (min(meds["scalea"]) - min(meds["noop"])) / cb * 1e9)
        print("#   %s mode: %s" % (name, text or "no runs"))
if any(r[7] == "n/a*" or r[8] == "n/a*" for r in rows):
    print("# n/a*: fewer than %d callbacks per run (the runtime does not report this "
          "benchmark's events, e.g. no ompt_callback_dispatch before LLVM 15): "
          "only the dilation is meaningful" % MIN_CB)
PY
