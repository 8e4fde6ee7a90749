#!/usr/bin/env bash
# run_sample_bench.sh BUILD_DIR [ROUNDS]: the cost of call-path sampling (docs/sampling.md; figures
# in docs/performance.md, "Call-path sampling").
#   For stacks 10 and 100 frames deep (bin/sample_depth), ROUNDS rounds (default 7) of: the same
#   computation (about 1 s of CPU) under the tool with sampling off, at the default rate (250 a
#   second of CPU time) and at 1000 a second, in that order within the round. Prints the median
#   dilation of the computation's CPU time against the run without sampling, and the handler's own
#   time per sample from meta.json (sampling.cost_median_ns, cost_p99_ns: medians over the rounds).
set -euo pipefail
build=${1:?usage: run_sample_bench.sh BUILD_DIR [ROUNDS]}
rounds=${2:-7}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run_sample_bench.sh: ROUNDS must be a positive integer" >&2; exit 2; }
bin=$(cd "$build/bin" && pwd)
[ -x "$bin/sample_depth" ] || { echo "run_sample_bench.sh: no $bin/sample_depth (build it)" >&2; exit 2; }
work=$(mktemp -d /tmp/scalea-samplebench.XXXXXX)
trap 'rm -rf "$work"' EXIT
iterations=${SAMPLE_BENCH_ITERATIONS:-600000000}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
one() {  # one DEPTH RATE ROUND: "cpu_s cost_median_ns cost_p99_ns samples"
  local exp=$work/e-$1-$2-$3 out
  out=$("$bin/scalea" run -q --sample "$2" -o "$exp" -- "$bin/sample_depth" "$1" "$iterations")
  python3 - "$exp/meta.json" "$out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])).get("sampling", {})
cpu = float(sys.argv[2].split()[1])
print(cpu, s.get("cost_median_ns", 0), s.get("cost_p99_ns", 0), s.get("samples", 0))
PY
  rm -rf "$exp"
}
printf "%-6s %-6s %10s %10s %12s %12s %9s\n" depth rate cpu_s dilation median_ns p99_ns samples
for depth in 10 100; do
  for r in $(seq "$rounds"); do
    for rate in off 250 1000; do
      echo "$rate $(one "$depth" "$rate" "$r")" >> "$work/d$depth"
    done
  done
  base=$(awk '$1 == "off" {print $2}' "$work/d$depth" | median)
  for rate in off 250 1000; do
    cpu=$(awk -v r=$rate '$1 == r {print $2}' "$work/d$depth" | median)
    med=$(awk -v r=$rate '$1 == r {print $3}' "$work/d$depth" | median)
    p99=$(awk -v r=$rate '$1 == r {print $4}' "$work/d$depth" | median)
    n=$(awk -v r=$rate '$1 == r {print $5}' "$work/d$depth" | median)
    printf "%-6s %-6s %10.4f %9.2f%% %12s %12s %9s\n" "$depth" "$rate" "$cpu" \
      "$(awk -v a="$cpu" -v b="$base" 'BEGIN {print 100 * (a / b - 1)}')" "$med" "$p99" "$n"
  done
done
