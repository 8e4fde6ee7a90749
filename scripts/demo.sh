#!/usr/bin/env bash
# Sets everything up (packages, configure, build), then runs the demo: a bundled OpenMP program
# with planted overheads under the scalea tool, and its per-region report.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${SCALEA_BUILD_DIR:-$here/build}
"$here/scripts/setup-debian.sh" "$build"
out=$(mktemp -d /tmp/scalea-demo.XXXXXX)
echo "== scalea run: $build/bin/imbalance with 4 threads =="
OMP_NUM_THREADS=4 "$build/bin/scalea" run -o "$out/imbalance.exp" -- "$build/bin/imbalance"
echo
echo "== scalea report $out/imbalance.exp =="
"$build/bin/scalea" report "$out/imbalance.exp"
