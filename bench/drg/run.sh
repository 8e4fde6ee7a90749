#!/bin/sh
# Analysis benchmark of drg/ and overheads/: synthetic experiments of R ranks x 16 threads x 500
# call paths, R = 64 .. 1024. Each is loaded and merged by drg_bench, then analysed end to end by
# `scalea report DIR --depth 1` (load, merge, classify, print), each in a fresh process. Usage:
#   bench/drg/run.sh [BUILD_DIR] [WORK_DIR]
set -e
BUILD=${1:-build}
WORK=${2:-/tmp/scalea-drg-bench}
mkdir -p "$WORK"
printf 'ranks\tthreads\tinput_MiB\tload_s\tmerge_s\tregion_graph_s\tpeak_rss_load_MiB\tpeak_rss_MiB\treport_s\treport_cpu_s\treport_peak_rss_MiB\n'
for R in 64 128 256 512 1024; do
  D="$WORK/r$R"
  [ -f "$D/meta.json" ] || "$BUILD/bin/drg_gen" "$D" "$R" 16 500 >/dev/null
  bench=$("$BUILD/bin/drg_bench" "$D" | awk -F'\t' '/^TSV/ {print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 "\t" $8}')
  report=$( { /usr/bin/time -f 'TIME %e %U %S %M' "$BUILD/bin/scalea" report "$D" --depth 1 >/dev/null; } 2>&1 |
           awk '/^TIME/ {printf "%s\t%.2f\t%.0f", $2, $3 + $4, $5 / 1024}')
  printf '%s\t%s\t%s\n' "$R" "$bench" "$report"
done
