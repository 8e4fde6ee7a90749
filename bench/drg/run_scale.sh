#!/bin/sh
# The million-PE benchmark: synthetic experiments of RANKS x 64 threads x 100 call paths in the
# few-files layout (one container per 64 ranks, docs/experiment-format.md "Containers"), analysed
# by `scalea report DIR --depth 1` under /usr/bin/time -v, then deleted. Needs the experiment's
# size free on WORK's disk (0.8 GiB at 4,096 ranks, 3 GiB at 16,384, format 3) and about 1 GiB of
# memory. Usage:
#   bench/drg/run_scale.sh [BUILD_DIR] [WORK_DIR] [RANKS...]      (default RANKS: 4096)
set -e
BUILD=${1:-build}
WORK=${2:-/tmp/scalea-drg-scale}
[ $# -ge 2 ] && shift 2 || shift $#
RANKS=${*:-4096}
mkdir -p "$WORK"
printf 'ranks\tthreads\tpaths\tfiles\tinput_MiB\tgen_s\treport_s\treport_cpu_s\treport_peak_rss_MiB\n'
for R in $RANKS; do
  D="$WORK/c$R"
  rm -rf "$D"
  gen=$( { /usr/bin/time -f 'TIME %e' "$BUILD/bin/drg_gen" "$D" "$R" 64 100 64 >/dev/null; } 2>&1 |
        awk '/^TIME/ {print $2}')
  files=$(ls "$D" | wc -l)
  mib=$(du -sm "$D" | cut -f1)
  report=$( { /usr/bin/time -v "$BUILD/bin/scalea" report "$D" --depth 1 >/dev/null; } 2>&1 |
           awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = t[n] + (n > 1 ? 60 * t[n - 1] : 0)}
                       /User time/ {u = $2} /System time/ {k = $2} /Maximum resident/ {m = $2}
                       END {printf "%.2f\t%.2f\t%.0f", s, u + k, m / 1024}')
  printf '%s\t64\t100\t%s\t%s\t%s\t%s\n' "$R" "$files" "$mib" "$gen" "$report"
  rm -rf "$D"
done
