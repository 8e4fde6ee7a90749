#!/usr/bin/env bash
# What the report says about the run around the table (docs/user-guide.md): a reference that does
# not fit the run is refused unless --force, an estimated program start is said with its amount,
# threads that share CPUs are said, trivial findings are not made, scalea cache --region takes a
# source location, and --view mpi shows the MPI call sites with their bytes.
# Usage: check_report.sh BIN_DIR [MPIRUN]
set -u
bin=$(cd "$1" && pwd); mpirun=${2:-}
src=$(cd "$(dirname "$0")/../.." && pwd)  # the source tree (the build tree may be anywhere)
scalea=$bin/scalea
shapes=$bin/omp/shapes
for v in $(compgen -e | grep '^SCALEA_'); do unset "$v"; done
export SCALEA_QUIET=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d /tmp/scalea-report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() {  # run DIR THREADS ARGS...: the shapes program under scalea run
  local dir=$1 p=$2; shift 2
  OMP_NUM_THREADS=$p "$scalea" run -q -o "$dir" -- "$shapes" "$@" > /dev/null 2>&1 || fail "cannot run shapes $*"
}

# ---- a reference that does not fit ----
run r2 2 slowloop 8 10 0.5
run r1 1 slowloop 8 10 0.5
run other1 1 slowloop 4 10 0.5      # other arguments
run p2ref 2 slowloop 8 10 0.5       # p = 2
OMP_NUM_THREADS=1 "$scalea" run -q -o prog1 -- "$bin/omp/imbalance" 5 > /dev/null 2>&1  # another program
for cmd in "report r2 -r" "export --format json r2 -r" "diff r2 r2 --ref-a"; do
  for bad in other1 p2ref prog1; do
    # shellcheck disable=SC2086
    "$scalea" $cmd "$bad" > out 2> err; rc=$?
    [ $rc = 2 ] || fail "scalea $cmd $bad: exit $rc, expected 2"
    [ "$(wc -l < err)" = 1 ] || fail "scalea $cmd $bad: $(wc -l < err) lines on stderr"
    grep -q -- "--force" err || fail "scalea $cmd $bad: the error does not say --force: $(cat err)"
  done
done
grep -q "other arguments" <("$scalea" report r2 -r other1 2>&1) || fail "other arguments not named"
# The first argument that differs, by position and value, and the name --decomposition takes.
"$scalea" report r2 -r other1 > out 2> err
want="scalea report: reference other1 ran other arguments: argument 2: '8' here, '4' in the reference ('slowloop 8 10 0.5' here; 'slowloop 4 10 0.5' in the reference): the inputs differ; if argument 2 sets the decomposition, not the input, say so with --decomposition 2 (or SCALEA_DECOMPOSITION_ARGS=2); use --force to compare them anyway"
[ "$(cat err)" = "$want" ] || fail "other arguments: got '$(cat err)', expected '$want'"
# Named as decomposition arguments (by flag or position), the values may differ: every command
# that checks a reference accepts them, by option or by SCALEA_DECOMPOSITION_ARGS.
run grid2 2 slowloop 8 10 0.5 -t 2 -grid=2x1
run grid1 1 slowloop 8 10 0.5 -t 1 -grid=1x1
"$scalea" report grid2 -r grid1 > out 2> err && fail "a reference with -t 1 was not refused"
want="scalea report: reference grid1 ran other arguments: argument 6: '2' here, '1' in the reference ('slowloop 8 10 0.5 -t 2 -grid=2x1' here; 'slowloop 8 10 0.5 -t 1 -grid=1x1' in the reference): the inputs differ; if argument 6 sets the decomposition, not the input, say so with --decomposition t (or SCALEA_DECOMPOSITION_ARGS=t); use --force to compare them anyway"
[ "$(cat err)" = "$want" ] || fail "-t differs: got '$(cat err)', expected '$want'"
"$scalea" report grid2 -r grid1 --decomposition t > out 2> err && fail "-grid=2x1 was not refused"
grep -q "argument 7: '-grid=2x1' here, '-grid=1x1' in the reference .*say so with --decomposition grid " err ||
  fail "-grid differs: $(cat err)"
for cmd in "report grid2 -r grid1" "export --format json grid2 -r grid1" "diff grid2 grid2 --ref-a grid1 --ref-b grid1" \
           "db --db $tmp/grid.db add grid2 -r grid1"; do
  # shellcheck disable=SC2086
  "$scalea" $cmd --decomposition t,grid > out 2> err || fail "scalea $cmd --decomposition t,grid: $(cat err)"
  grep -q "other arguments" err && fail "scalea $cmd --decomposition t,grid: $(cat err)"
  # shellcheck disable=SC2086
  SCALEA_DECOMPOSITION_ARGS="t grid" "$scalea" $cmd > out 2> err ||
    fail "SCALEA_DECOMPOSITION_ARGS='t grid' scalea $cmd: $(cat err)"
  grep -q "other arguments" err && fail "SCALEA_DECOMPOSITION_ARGS scalea $cmd: $(cat err)"
done
# A decomposition flag that only the run gives (the reference left it at its default, as
# CoMD's "-i 2" against none): named by its flag, and accepted with its value when named.
run tonly2 2 slowloop 8 10 0.5 -t 2
"$scalea" report tonly2 -r r1 > out 2> err && fail "a reference without -t was accepted"
grep -q "argument 5: '-t' here, none in the reference .*say so with --decomposition t " err ||
  fail "a flag only in the run: $(cat err)"
"$scalea" report tonly2 -r r1 --decomposition t > out 2> err ||
  fail "--decomposition t with -t only in the run: $(cat err)"
"$scalea" report r2 -r grid1 --decomposition t > out 2> err && fail "-grid only in the reference was accepted"
"$scalea" report --decomposition t,grid grid2 -r grid1 > out 2> err ||  # one list per option
  fail "--decomposition before the experiment: $(cat err)"
"$scalea" report r2 -r other1 --decomposition 2 > out 2> err || fail "--decomposition 2 (a position): $(cat err)"
[ -s err ] && fail "--decomposition 2 gave stderr: $(cat err)"
"$scalea" report r2 -r other1 --decomposition 3 > out 2> err && fail "--decomposition 3 accepted argument 2"
grep -q "p = 2" <("$scalea" report r2 -r p2ref 2>&1) || fail "the reference's p not named"
grep -q "another program (imbalance" <("$scalea" report r2 -r prog1 2>&1) || fail "another program not named"
"$scalea" report r2 -r other1 --force > out 2> err || fail "report --force failed: $(cat err)"
grep -q "warning" err || fail "report --force gave no warning: $(cat err)"
"$scalea" report r2 -r r1 > out 2> err || fail "a fitting reference was refused: $(cat err)"
[ -s err ] && fail "a fitting reference gave stderr: $(cat err)"

# ---- program start estimated: the tool loaded by the runtime after 150 ms of serial code ----
OMP_NUM_THREADS=2 SCALEA_OUTPUT=late OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so \
  "$shapes" tasks 150 20 1 > /dev/null 2>&1 || fail "cannot run the late-loaded program"
"$scalea" report late > out 2>&1
grep -q "program start estimated (+0\.1" out || fail "no 'program start estimated (+0.1...' in: $(head -8 out)"
run early 2 tasks 150 20 1
"$scalea" report early > out 2>&1
grep -q "program start estimated" out && fail "scalea run: the start is estimated: $(head -8 out)"

# ---- trivial findings: one short parallel region run once ----
run tiny 2 reduction 1 0
"$scalea" report tiny > out 2>&1
grep -q "0\.000 s" out && fail "a finding of 0.000 s: $(grep -A2 findings out)"

# ---- scalea cache --region FILE:LINE ----
line=$(grep -n "LOOP_SLOW" "$src/apps/omp/shapes.c" | head -n1 | cut -d: -f1)
[ -n "$line" ] || fail "no LOOP_SLOW line in $src/apps/omp/shapes.c"
OMP_NUM_THREADS=2 "$scalea" run -q --counters perf::PAGE-FAULTS -o cache -- "$shapes" slowloop 8 10 0.5 > /dev/null 2>&1
"$scalea" cache cache --region "shapes.c:$line" --format json > out 2> err; rc=$?
[ $rc = 0 ] || fail "cache --region shapes.c:$line: exit $rc: $(cat err)"
"$scalea" cache cache --region nosuch.c:1 > out 2> err; rc=$?
[ $rc = 2 ] && [ "$(wc -l < err)" = 1 ] || fail "cache --region that matches nothing: exit $rc, $(cat err)"

# ---- a run ended by a signal while threads were inside a construct (a deadlock ended by kill) --
# One thread waits in `sections` for a flag nobody sets, the other at the sections' barrier: the
# report says how the run ended and where the threads were, and judges no balance there.
OMP_NUM_THREADS=2 "$scalea" run -q -o stuck -- "$shapes" stuck 10 30 > stuck.out 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q "stuck: waiting" stuck.out && break; sleep 0.1; done
sleep 0.3
kill -TERM $pid
wait $pid; rc=$?
[ $rc = 143 ] || fail "scalea run of a program ended by SIGTERM: exit $rc, expected 143: $(cat stuck.out)"
"$scalea" report stuck > out 2>&1 || fail "report of a run ended by a signal: $(cat out)"
ended=$(grep "^ENDED" out)
for want in "by signal 15 \(SIGTERM\) while thread [01] was inside" "inside sections @shapes.c:[0-9]+ \(for" \
    "inside barrier \(implicit, join\) @shapes.c:[0-9]+ \(for"; do
  grep -qE "$want" <<< "$ended" || fail "the header does not say how the run ended and where ($want): $ended"
done
grep -q "never left this region" out || fail "no finding says a thread never left: $(sed -n '/indings/,$p' out)"
grep -q "is balanced" out && fail "a balance claim where a thread never left: $(grep balanced out)"
"$scalea" report stuck --format json > out.json 2>&1
python3 - out.json <<'PY' || fail "JSON of a run ended by a signal: $(head -c 600 out.json)"
import json, sys
x = json.load(open(sys.argv[1]))["experiment"]
inner = [o for o in x["open_at_end"] if o["innermost"]]
assert x["finished_by"] == "signal 15", x["finished_by"]
assert sorted(o["thread"] for o in inner) == [0, 1], inner
assert all(o["open_s"] > 0.2 for o in inner), inner
PY
# The program exits (exit(0) in one section) while the other thread is inside the sections: a
# normal end, said as such; no deadlock suggested.
OMP_NUM_THREADS=2 "$scalea" run -q -o exited -- "$shapes" stuck 300 30 exit > /dev/null 2>&1 \
  || fail "shapes stuck ... exit: exit status $?"
"$scalea" report exited > out 2>&1
grep -qE "^ENDED +normally \(exit\) while thread [01] was inside sections @shapes.c:[0-9]+" out \
  || fail "a program that exited while a thread was inside: $(grep '^ENDED' out)"
grep -q "deadlock" out && fail "a normal exit said to be a deadlock: $(grep deadlock out)"

# ---- the recorder's anomalies are said in the header (meta.json as a collector would write it) --
"$scalea" report tiny > out 2>&1
grep -q "^EVENTS" out && fail "EVENTS line without anomalies: $(grep '^EVENTS' out)"
cp -r tiny odd
python3 - odd/meta.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["anomalies"] = {"unmatched_end": 32, "unclosed": 53, "foreign_resume": 0}
json.dump(m, open(sys.argv[1], "w"))
PY
"$scalea" report odd > out 2>&1
grep -qE "^EVENTS .*32 end event\(s\) without a begin .*53 region\(s\) still open" out \
  || fail "the anomalies are not in the header: $(sed -n '1,12p' out)"

# ---- MPI: threads sharing a core, and the MPI view ----
if [ -n "$mpirun" ] && [ -x "$bin/mpi_shapes" ]; then
  OMP_NUM_THREADS=2 "$mpirun" --allow-run-as-root --oversubscribe -np 1 \
    "$scalea" run -q -o bound -- "$shapes" slowloop 8 10 0.5 > /dev/null 2>&1
  bound_cpus=$(python3 -c "import json;print(json.load(open('bound/meta.json'))['affinity']['threads'][0]['count'])")
  if [ "$bound_cpus" = 1 ]; then
    "$scalea" report bound > out 2>&1
    grep -q "^CPUS .*shared CPUs" out || fail "2 threads bound to one core, not said: $(head -8 out)"
    grep -q "bind-to none" out || fail "the advice does not name --bind-to none"
    "$scalea" report bound --format json | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if d['experiment']['cpu_sharing'] else 1)" \
      || fail "cpu_sharing empty in the JSON report"
  else
    echo "note: mpirun -np 1 did not bind the rank to one core here ($bound_cpus CPUs): not checked"
  fi
  OMP_NUM_THREADS=2 "$mpirun" --allow-run-as-root --oversubscribe -np 1 --bind-to none \
    "$scalea" run -q -o unbound -- "$shapes" slowloop 8 10 0.5 > /dev/null 2>&1
  "$scalea" report unbound > out 2>&1
  # (Waiting for a CPU because other processes had them is said too, whatever the binding: not
  # the binding's sharing, which is what must be absent here.)
  grep "^CPUS" out | grep -q "shared CPUs" && fail "unbound threads said to share CPUs: $(grep CPUS out)"
  "$mpirun" --allow-run-as-root --oversubscribe -np 2 "$scalea" run -q -o mpi -- "$bin/mpi_shapes" allreduce 5 0.01 > /dev/null 2>&1
  "$scalea" report mpi --view mpi > out 2>&1
  grep -E "^MPI_Allreduce @mpi_shapes.c:[0-9]+ +10 +80 +80 " out > /dev/null \
    || fail "--view mpi: no MPI_Allreduce row with 10 calls and 80 bytes each way: $(cat out)"
fi

echo "check_report: $fails failure(s)"
[ $fails = 0 ]
