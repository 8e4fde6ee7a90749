#!/bin/sh
# Load+merge benchmark of drg/: synthetic experiments of R ranks x 16 threads x 500 call paths,
# R = 64 .. 1024, each loaded and merged in a fresh process. Usage:
#   bench/drg/run.sh [BUILD_DIR] [WORK_DIR]
set -e
BUILD=${1:-build}
WORK=${2:-/tmp/scalea-drg-bench}
mkdir -p "$WORK"
printf 'ranks\tthreads\tinput_MiB\tload_s\tmerge_s\tregion_graph_s\tpeak_rss_load_MiB\tpeak_rss_MiB\n'
for R in 64 128 256 512 1024; do
  D="$WORK/r$R"
  [ -f "$D/meta.json" ] || "$BUILD/bin/drg_gen" "$D" "$R" 16 500 >/dev/null
  "$BUILD/bin/drg_bench" "$D" | awk -v r="$R" -F'\t' '/^TSV/ {print r "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 "\t" $8}'
done
