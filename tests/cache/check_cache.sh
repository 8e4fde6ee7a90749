#!/usr/bin/env bash
# scalea cache on (1) a literal experiment with L2 counters: the master's miss ratio stands out;
# (2) a real run with the software events this machine has: they are shown per thread and the
# missing cache counters are said; (3) a literal MPI experiment: CPU-time counters (ns) are shown
# in seconds, counts with thousands separators, and the program root's row says that its counts
# are its MPI calls'. Usage: check_cache.sh BIN_DIR
set -u
bin=$1
tmp=$(mktemp -d /tmp/scalea-cache.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$bin/make_cache_experiment" "$tmp/fig6" || fail "cannot write the literal experiment"
"$bin/scalea" cache "$tmp/fig6" --format json > "$tmp/fig6.json" || fail "scalea cache failed"
python3 - "$tmp/fig6.json" <<'PY' || fail "figure-6 checks"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["levels"] == ["L2"], d["levels"]
par = [r for r in d["regions"] if r["label"].startswith("parallel")][0]
by = {t["thread"]: t for t in par["threads"]}
assert abs(by[0]["L2"]["ratio"] - 0.3) < 1e-9 and by[0]["L2"]["stands_out"], by[0]
for t in (1, 2, 3):
    assert abs(by[t]["L2"]["ratio"] - 0.1) < 1e-9 and not by[t]["L2"]["stands_out"], by[t]
assert abs(by[0]["mpki"] - 3.0) < 1e-9, by[0]["mpki"]
PY
"$bin/scalea" cache "$tmp/fig6" | grep -q '0.300\*' || fail "text output does not mark the master"
"$bin/make_cache_experiment" "$tmp/mpi" mpi || fail "cannot write the literal MPI experiment"
"$bin/scalea" cache "$tmp/mpi" > "$tmp/mpi.txt" || fail "scalea cache failed on the MPI experiment"
grep -q ' 1\.157 s ' "$tmp/mpi.txt" || fail "TASK-CLOCK not in seconds: $(cat "$tmp/mpi.txt")"
grep -q '1157131950' "$tmp/mpi.txt" && fail "raw nanoseconds printed: $(cat "$tmp/mpi.txt")"
grep -q ' 1,234,567$' "$tmp/mpi.txt" || fail "counts not grouped: $(cat "$tmp/mpi.txt")"
grep -A1 '^halo ' "$tmp/mpi.txt" | grep -q 'sums of its MPI calls' \
  || fail "the root does not say its counts are its MPI calls': $(cat "$tmp/mpi.txt")"
SCALEA_COUNTERS=perf::PAGE-FAULTS OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so \
  SCALEA_OUTPUT=$tmp/faults SCALEA_QUIET=1 "$bin/papi/counters_app" faults 2000 > "$tmp/app.out" \
  || fail "counters_app failed"
"$bin/scalea" cache "$tmp/faults" > "$tmp/faults.txt" || fail "scalea cache failed on a real run"
grep -q "no cache-miss counters were measured" "$tmp/faults.txt" || fail "missing counters not said"
grep -q "PAGE-FAULTS" "$tmp/faults.txt" || fail "software events not shown"
"$bin/scalea" cache "$tmp/faults" --format json | python3 -c "
import json,sys
d=json.load(sys.stdin)
touch=[r for r in d['regions'] if 'touch' in r['label']]
assert touch, [r['label'] for r in d['regions']]
mx=max(t.get('perf::PAGE-FAULTS',0) for t in touch[0]['threads'])
assert mx >= 1900, mx
" || fail "the planted page faults are not on the touch region"
"$bin/scalea" cache "$tmp/nonexistent" 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || fail "bad input: exit $rc, $(cat "$tmp/err")"
echo PASS
