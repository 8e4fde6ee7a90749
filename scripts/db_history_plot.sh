#!/bin/sh
# The history plot of the README (docs/img/db/history.svg), made from a database, never by hand:
# four scaling studies (1, 2, 4 threads) of apps/omp/imbalance stored with `scalea study --db`,
# each standing for a version of the program whose planted imbalance is smaller than the one
# before (X = 40, 30, 20, 10 ms: thread i sleeps (i+1) X ms, docs/apps.md), tagged version=v1..v4;
# then `scalea db history` of the synchronization in the loop's barrier, drawn by gnuplot.
# Usage: scripts/db_history_plot.sh [BUILD_DIR]      (default: build; needs gnuplot)
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
scalea=$build/bin/scalea
work=${TMPDIR:-/tmp}/scalea-db-history
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
db=$work/experiments.db
v=0
for x in 40 30 20 10; do
  v=$((v + 1))
  [ $v = 1 ] || sleep "${PAUSE:-10}"  # time between the versions, for the time axis
  "$scalea" study -o "$work/v$v" --threads 1,2,4 --db "$db" --tag version=v$v -- \
    "$build/bin/omp/imbalance" "$x" 2 > /dev/null
done
dest=$here/docs/img/db
mkdir -p "$dest"
"$scalea" db --db "$db" history --region 'barrier (implicit)@imbalance.c' --class synchronization \
  --plot "$dest/history.svg" > /dev/null
# SHOW=FILE.png: also a PNG of it, to look at.
[ -z "${SHOW:-}" ] || "$scalea" db --db "$db" history --region 'barrier (implicit)@imbalance.c' \
  --class synchronization --plot "$SHOW" > /dev/null
ls -l "$dest/history.svg"
