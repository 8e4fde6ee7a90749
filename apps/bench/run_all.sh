#!/usr/bin/env bash
# run_all.sh BUILD_DIR: every benchmark of docs/performance.md in one go (≈18 min here, and
# ≈6 GB of synthetic experiments under /tmp/scalea-drg-bench for the analysis part):
#   1. OpenMP: bare / no-op tool / scalea per callback (run_omp_bench.sh)
#   2. MPI: cost per call bare vs tool, unification (apps/mpi/bench/run_mpi_bench.sh)
#   3. applications: run-time dilation of md and pricing (run_app_bench.sh)
#   4. analysis: load, merge, classify 64 .. 1,024 ranks x 16 threads x 500 paths (bench/drg/run.sh)
#   5. snapshots: dilation at 1 s and 100 ms, cost per snapshot (run_snapshot_bench.sh)
#   6. database: db add of 64 .. 1,024 ranks (the same experiments), db history over 1,000 (bench/db/run.sh)
# Run it on a quiet machine: every figure is a time.
set -uo pipefail
build=$(cd "${1:?usage: run_all.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
rc=0
echo "## 1. OpenMP microbenchmarks"
bash "$src/apps/bench/run_omp_bench.sh" --micro "$build/bin/omp_micro" \
  --noop "$build/lib/libscalea-noop-tool.so" --tool "$build/lib/libscalea-omp.so" --runs 11 || rc=1
echo; echo "## 2. MPI"
RUNS=${RUNS:-7} ITERS=${ITERS:-50000} bash "$src/apps/mpi/bench/run_mpi_bench.sh" "$build" || rc=1
echo; echo "## 3. Applications"
bash "$src/apps/bench/run_app_bench.sh" "$build" 9 || rc=1
echo; echo "## 4. Analysis"
sh "$src/bench/drg/run.sh" "$build" || rc=1
echo; echo "## 5. Snapshots"
bash "$src/apps/bench/run_snapshot_bench.sh" "$build" 7 || rc=1
echo; echo "## 6. Database"
sh "$src/bench/db/run.sh" "$build" /tmp/scalea-drg-bench || rc=1
exit $rc
