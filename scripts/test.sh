#!/usr/bin/env bash
# Sets everything up (packages, configure, build) and runs every test: unit tests, integration
# tests under the real runtimes (libomp 14, libomp 19, Open MPI, PAPI).
# Usage: scripts/test.sh [ctest arguments...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${SCALEA_BUILD_DIR:-$here/build}
"$here/scripts/setup-debian.sh" "$build"
# mpirun refuses root without these; CI and the quick start run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$build"
# Integration tests plant sleeps and time them: they run one at a time so they do not compete
# for the two cores; unit tests run in parallel. A timing test may miss its 10 % / 2 ms tolerance
# when the machine is busy (a thread woken late); it gets one more try, a real defect fails twice.
ctest --output-on-failure -j"$(nproc)" -L unit "$@"
ctest --output-on-failure -LE unit --repeat until-pass:2 "$@"
# Optional stages: a subset of the tests under ASan+UBSan and under TSan (with Archer), each in a
# separate tree (docs/reliability.md). Both run; the script fails if either failed.
if [ "${CI:-}" = true ] || [ "${SCALEA_SANITIZE_STAGE:-0}" = 1 ]; then
  rc=0
  SCALEA_SANITIZE_SUBSET=ci "$here/scripts/sanitize.sh" address "$build-asan" || rc=1
  SCALEA_SANITIZE_SUBSET=ci "$here/scripts/sanitize.sh" thread "$build-tsan" || rc=1
  exit $rc
fi
