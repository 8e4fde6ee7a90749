#!/usr/bin/env bash
# scalea cache on (1) a literal experiment with L2 counters: the master's miss ratio stands out;
# (2) a real run with the software events this machine has: they are shown per thread and the
# missing cache counters are said. Usage: check_cache.sh BIN_DIR
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
