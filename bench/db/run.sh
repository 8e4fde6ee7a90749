#!/bin/sh
# Benchmark of the experiment database (scalea db, docs/database.md; figures in
# docs/performance.md). Usage: bench/db/run.sh [BUILD_DIR] [WORK_DIR] [DATABASE]
#   1. db add of synthetic experiments of 64, 256 and 1,024 ranks x 16 threads x 500 call paths
#      (bench/drg's generator) into a fresh database each: wall and CPU time, peak RSS, and how
#      much the database grew (it should not grow with the PEs); then 64 ranks with --per-pe.
#   2. db history of one region over 1,000 experiments: copies of one real experiment
#      (apps/omp/imbalance under the tool) with distinct start times, stored by one db add.
# DATABASE: an SQLite file (default WORK_DIR/bench.db, made afresh) or a postgresql:// URL of an
# empty database (its tables are dropped first).
set -e
BUILD=${1:-build}
WORK=${2:-/tmp/scalea-db-bench}
DB=${3:-$WORK/bench.db}
S=$(cd "$BUILD" && pwd)/bin/scalea
mkdir -p "$WORK"
fresh() {
  case $DB in
    postgresql://*|postgres://*)
      psql -q "$DB" -c 'SET client_min_messages = warning' -c 'DROP VIEW IF EXISTS sampled, region_history, overheads' \
        -c 'DROP TABLE IF EXISTS sampled_lines, sampled_functions, study_runs, studies, pe_times, region_counters, region_subclasses, region_stats, regions, tags, experiments, scalea_schema' ;;
    *) rm -f "$DB" ;;
  esac
  "$S" db --db "$DB" migrate > /dev/null
}
size() {  # bytes the database holds
  case $DB in
    postgresql://*|postgres://*) psql -qtA "$DB" -c 'SELECT pg_database_size(current_database())' ;;
    *) stat -c %s "$DB" ;;
  esac
}
echo "== db add (synthetic, 500 call paths)"
printf 'ranks\tthreads\tper_pe\twall_s\tcpu_s\tpeak_rss_MiB\tdb_growth_KiB\n'
for spec in "64 no" "256 no" "1024 no" "64 yes"; do
  set -- $spec
  R=$1; D="$WORK/r$R"
  [ -f "$D/meta.json" ] || "$(dirname "$S")/drg_gen" "$D" "$R" 16 500 > /dev/null
  for rep in 1 2 3; do
    fresh
    before=$(size)
    flag=""; [ "$2" = yes ] && flag=--per-pe
    t=$( { /usr/bin/time -f 'TIME %e %U %S %M' "$S" db --db "$DB" add "$D" $flag > /dev/null; } 2>&1 | awk '/^TIME/')
    printf '%s\t16\t%s\t%s\n' "$R" "$2" "$(echo "$t" | awk -v g=$(( ($(size) - before) / 1024 )) '{printf "%s\t%.2f\t%.0f\t%s", $2, $3 + $4, $5 / 1024, g}')"
  done
done

echo "== db history over 1,000 experiments"
E="$WORK/exp"
if [ ! -f "$E/e1000/meta.json" ]; then
  rm -rf "$E"; mkdir -p "$E"
  OMP_NUM_THREADS=4 "$S" run -q -o "$E/base" -- "$(dirname "$S")/omp/imbalance" 2 > /dev/null
  python3 - "$E" <<'PY'
import json, os, shutil, sys, time
e = sys.argv[1]
meta = json.load(open(f"{e}/base/meta.json"))
t0 = time.mktime(time.strptime(meta["start_time"][:19], "%Y-%m-%dT%H:%M:%S"))
for i in range(1, 1001):
    d = f"{e}/e{i}"
    shutil.copytree(f"{e}/base", d)
    m = dict(meta, pid=meta["pid"] + i,
             start_time=time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t0 + 3600 * i)))
    json.dump(m, open(f"{d}/meta.json", "w"))
PY
fi
fresh
/usr/bin/time -f 'db add of 1,000 experiments (one command): %e s wall, %U+%S s CPU' \
  "$S" db --db "$DB" add -q $(ls -d "$E"/e* | sort -V) 2>&1
echo "database size: $(( $(size) / 1024 )) KiB"
region=$("$S" db --db "$DB" query "SELECT path FROM regions WHERE kind = 'barrier_implicit' LIMIT 1" -f csv | tail -n 1)
for rep in 1 2 3 4 5; do
  /usr/bin/time -f "db history (1,000 rows): %e s wall, %U+%S s CPU" \
    "$S" db --db "$DB" history --region "$region" --class synchronization -f csv 2>&1 > "$WORK/history.csv" |
    tail -n 1
done
echo "rows: $(($(wc -l < "$WORK/history.csv") - 1))"
/usr/bin/time -f "db history --plot (1,000 points): %e s wall" \
  "$S" db --db "$DB" history --region "$region" --class synchronization --plot "$WORK/history.svg" 2>&1 > /dev/null | tail -n 1
