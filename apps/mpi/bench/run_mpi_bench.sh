#!/usr/bin/env bash
# run_mpi_bench.sh BUILD_DIR [quick|cost]: the MPI figures of docs/mpi.md (cost: part 1 only).
#   1. cost per MPI call, bare vs tool (LD_PRELOAD=libscalea-mpi.so): the wrapper alone (MPI_Send
#      to MPI_PROC_NULL, MPI_Allreduce on MPI_COMM_SELF), small-message ping-pong (2 ranks) and
#      MPI_Allreduce of one double (2 and 4 ranks); median of RUNS runs.
#   2. unification at MPI_Finalize vs ranks (mpi_planted, 2..64 oversubscribed ranks) and vs
#      regions (mpi_bench regions N at 16 ranks): seconds, bytes held at the root, RSS growth at
#      the root and the largest on another rank (from meta.json "mpi.unification").
set -euo pipefail
B=${1:?usage: run_mpi_bench.sh BUILD_DIR [quick|cost]}
QUICK=${2:-}
RUNS=${RUNS:-5}
ITERS=${ITERS:-100000}
LIB=$B/lib/libscalea-mpi.so
BIN=$B/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
WORK=$(mktemp -d /tmp/scalea-mpi-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "## cost per call (us), median of $RUNS runs, $ITERS calls each (load average: $(cut -d" " -f1-3 /proc/loadavg))"
echo "| benchmark | ranks | bare us | tool us | tool - bare us |"
echo "|---|---|---|---|---|"
for spec in "null 1 8" "self 1 1" "pingpong 2 8" "allreduce 2 1" "allreduce 4 1"; do
  set -- $spec
  mode=$1 np=$2 n=$3
  # Bare and tool runs alternate, so that a change in the machine's load hits both alike.
  : > $WORK/bare; : > $WORK/tool
  for i in $(seq $RUNS); do
    $MPIRUN -np $np $BIN/mpi_bench $mode $ITERS $n | awk '{print $4}' >> $WORK/bare
    rm -rf $WORK/b
    $MPIRUN -np $np -x LD_PRELOAD=$LIB -x SCALEA_OUTPUT=$WORK/b -x SCALEA_QUIET=1 \
      $BIN/mpi_bench $mode $ITERS $n | awk '{print $4}' >> $WORK/tool
  done
  bare=$(median < $WORK/bare)
  tool=$(median < $WORK/tool)
    unit=" double"; case $mode in pingpong|null) unit=" B";; esac
  echo "| $mode $n$unit | $np | $bare | $tool | $(awk -v a=$tool -v b=$bare 'BEGIN{printf "%.3f", a-b}') |"
done

[ "$QUICK" = cost ] && exit 0

unify_row() {  # label, meta.json, wall seconds
  python3 - "$@" <<'PY'
import json, sys
label, meta, wall = sys.argv[1], sys.argv[2], float(sys.argv[3])
m = json.load(open(meta))["mpi"]
u = m["unification"]
print(f"| {label} | {u['regions']} | {u['seconds']*1e3:.1f} | {u['after_last_arrival_s']*1e3:.1f} | {u['root_bytes']/1024:.0f} | "
      f"{u['root_rss_growth_kb']} | {u['max_other_rss_growth_kb']} | {wall:.1f} |")
PY
}

echo
echo "## unification vs ranks (mpi_planted 0.02)"
echo "| ranks | regions | unify ms | after last arrival ms | root holds KiB | root RSS growth KiB | max other RSS growth KiB | run wall s |"
echo "|---|---|---|---|---|---|---|---|"
NPS="2 4 8 16 32 64"
[ "$QUICK" = quick ] && NPS="2 8"
for np in $NPS; do
  rm -rf $WORK/u
  t0=$(date +%s.%N)
  $MPIRUN -np $np -x LD_PRELOAD=$LIB -x SCALEA_OUTPUT=$WORK/u -x SCALEA_QUIET=1 $BIN/mpi_planted 0.02 > /dev/null
  t1=$(date +%s.%N)
  unify_row $np $WORK/u/meta.json $(awk -v a=$t0 -v b=$t1 'BEGIN{print b-a}')
done

echo
echo "## unification vs regions (mpi_bench regions N, 16 ranks)"
echo "| N shared regions | regions | unify ms | after last arrival ms | root holds KiB | root RSS growth KiB | max other RSS growth KiB | run wall s |"
echo "|---|---|---|---|---|---|---|---|"
NS="10 100 1000 10000"
[ "$QUICK" = quick ] && NS="10 1000"
for n in $NS; do
  rm -rf $WORK/r
  t0=$(date +%s.%N)
  $MPIRUN -np 16 -x LD_PRELOAD=$LIB -x SCALEA_OUTPUT=$WORK/r -x SCALEA_QUIET=1 $BIN/mpi_bench regions $n > /dev/null
  t1=$(date +%s.%N)
  unify_row $n $WORK/r/meta.json $(awk -v a=$t0 -v b=$t1 'BEGIN{print b-a}')
done
