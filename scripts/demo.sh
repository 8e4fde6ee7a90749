#!/usr/bin/env bash
# Sets everything up (packages, configure, build), then runs the demo: a scaling study of the
# bundled molecular-dynamics code apps/md at 1, 2 and 4 threads (4 oversubscribes the 2 cores of a
# small machine: the study shows what that costs), and prints its overhead tables.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${SCALEA_BUILD_DIR:-$here/build}
"$here/scripts/setup-debian.sh" "$build"
out=$(mktemp -d /tmp/scalea-demo.XXXXXX)
echo "== scalea study -o $out/md.study --threads 1,2,4 -- $build/bin/md =="
"$build/bin/scalea" study -o "$out/md.study" --threads 1,2,4 -- "$build/bin/md"
echo
echo "== scalea report $out/md.study =="
"$build/bin/scalea" report "$out/md.study"
echo
echo "== scalea report $out/md.study/runs/t4-r1-rep1 -r $out/md.study/runs/t1-r1-rep1 (one run, per region) =="
"$build/bin/scalea" report "$out/md.study/runs/t4-r1-rep1" -r "$out/md.study/runs/t1-r1-rep1"
