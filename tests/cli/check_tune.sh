#!/usr/bin/env bash
# scalea tune (docs/tuning.md) on a planted program: `shapes runtime 3 24 8`, a `parallel for
# schedule(runtime)` whose iterations cost more and more (i sleeps 8 (i+1)/24 ms), 3 time steps,
# on 2 threads. The default schedule (static) gives the second thread three quarters of the work;
# any of the schedules the knowledge base tries (static,1, dynamic, guided) brings it near a half.
#  - the rule `schedule` reads the directive at the loop and tries OMP_SCHEDULE variants, naming
#    the loop; the chosen variant is one of them, at least 15 % faster than the baseline and
#    beyond the noise (its slowest run faster than the baseline's fastest);
#  - a variant whose output differs (SHAPES_BREAK makes the checksum one more) is reported as
#    failed by --expect and by --check, and never chosen, although it is as fast as the best;
#  - tune.json holds every variant, its runs and the choice; the table and the verdict on stdout;
#  - the loop without a schedule clause (`shapes rising`): no OMP_SCHEDULE variant, said why;
#  - with --ranks (MPI): runs through mpirun, the rule `split` tries 1 rank x 2 threads for 2 x 1;
#    one rank of 2 threads bound to one core: the rule `place` tries mpirun --bind-to none, whose
#    runs' threads had both CPUs; a launcher with its own --bind-to is kept;
#  - bad input: one line, exit 2, nothing run; a baseline that fails: exit 1.
# Usage: check_tune.sh BIN_DIR WORK_DIR
set -euo pipefail
bin=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
export OMP_NUM_THREADS=2
unset OMP_SCHEDULE OMP_WAIT_POLICY KMP_BLOCKTIME OMP_PROC_BIND OMP_PLACES
line=$(grep -n 'LOOP_RUNTIME' "$(dirname "$0")/../../apps/omp/shapes.c" | cut -d: -f1)

"$bin/scalea" tune -o t1 -r 3 --expect 'checksum 828$' \
  --try 'OMP_SCHEDULE=dynamic,1 SHAPES_BREAK=1' \
  -- "$bin/omp/shapes" runtime 3 24 8 > t1.out 2> t1.err || no "tune exited $?: $(tail -3 t1.err)"
jq -e . t1/tune.json > /dev/null || no "t1/tune.json is not JSON"
chosen=$(jq -r '.chosen // ""' t1/tune.json)
case "$chosen" in
  OMP_SCHEDULE=static,1 | OMP_SCHEDULE=dynamic,* | OMP_SCHEDULE=guided,*) ;;
  *) no "chosen '$chosen', not one of the schedule variants" ;;
esac
[ "$(jq -r .beyond_noise t1/tune.json)" = true ] || no "the choice is not beyond the noise"
base=$(jq '.variants[0].median_s' t1/tune.json)
best=$(jq --arg c "$chosen" '.variants[] | select(.name == $c) | .median_s' t1/tune.json)
awk -v b="$base" -v v="$best" 'BEGIN { exit !(v < 0.85 * b) }' ||
  no "chosen median $best s is not 15% below the baseline's $base s"
jq -e --arg w "shapes.c:$line" '[.variants[] | select(.rule == "schedule") | .why |
  contains($w)] | length >= 3 and all' t1/tune.json > /dev/null ||
  no "the schedule variants do not name the loop at shapes.c:$line: $(jq -c '[.variants[].why]' t1/tune.json)"
broken=$(jq -c '.variants[] | select(.settings.SHAPES_BREAK == "1")' t1/tune.json)
[ "$(jq -r .ok <<< "$broken")" = false ] || no "the variant that changes the output passed: $broken"
jq -e '.failures[0] | contains("--expect")' <<< "$broken" > /dev/null ||
  no "its failure does not name --expect: $broken"
# The run the rules read (repetition 0, not timed), then 3 of every variant.
[ "$(jq '.runs | length' t1/tune.json)" = "$((1 + 3 * $(jq '.variants | length' t1/tune.json)))" ] ||
  no "tune.json does not list the analysis run and 3 runs of every variant"
jq -e '.variants[0].seconds | length == 3' t1/tune.json > /dev/null ||
  no "the baseline has not 3 timed runs: $(jq -c '.variants[0].seconds' t1/tune.json)"
grep -q "^chosen: $chosen: [0-9]*% faster than the baseline" t1.out || no "no verdict line: $(cat t1.out)"
grep -q "failed: repetition 1: its output does not match --expect" t1.out ||
  no "the table does not show the failed variant: $(cat t1.out)"
grep -q "will try OMP_SCHEDULE=dynamic,1: the schedule(runtime) loop at shapes.c:$line" t1.err ||
  no "the plan does not say why: $(head -5 t1.err)"

# --check with the two outputs; only the given variants.
"$bin/scalea" tune -o t2 -r 1 --only-try --try OMP_SCHEDULE=guided,2 \
  --try 'OMP_SCHEDULE=guided,2 SHAPES_BREAK=1' \
  --check 'test "$(grep checksum "$SCALEA_TUNE_OUTPUT")" = "$(grep checksum "$SCALEA_TUNE_BASELINE_OUTPUT")"' \
  -- "$bin/omp/shapes" runtime 1 8 2 > t2.out 2> t2.err || no "tune --check exited $?"
[ "$(jq '.variants | length' t2/tune.json)" = 3 ] || no "--only-try: not the baseline and two variants"
jq -e '.variants[1].ok == true and .variants[2].ok == false and
  (.variants[2].failures[0] | contains("--check failed"))' t2/tune.json > /dev/null ||
  no "--check did not fail the changed output alone: $(jq -c '.variants' t2/tune.json)"
[ "$(jq -r '.chosen // ""' t2/tune.json)" != 'OMP_SCHEDULE=guided,2 SHAPES_BREAK=1' ] ||
  no "a variant with a changed output was chosen"
grep -q "one repetition each: no measure of the noise\|no variant was faster" t2.out ||
  no "one repetition is not said to be unsure: $(cat t2.out)"

# A loop without a schedule clause: OMP_SCHEDULE changes nothing, and the tuner says so.
"$bin/scalea" tune -o t3 -r 1 -- "$bin/omp/shapes" rising 1 8 2 > t3.out 2> t3.err ||
  no "tune of rising exited $?"
jq -e '[.variants[] | select(.settings.OMP_SCHEDULE != null)] | length == 0' t3/tune.json \
  > /dev/null || no "OMP_SCHEDULE tried for a loop without schedule(runtime)"
grep -q "not tried: OMP_SCHEDULE: no loop is schedule(runtime)" t3.out ||
  no "not said why OMP_SCHEDULE was not tried: $(cat t3.out)"

# An MPI run (--ranks): every run goes through mpirun, and the rule `split` tries the same PEs
# as other ranks x threads: mpi_hybrid ranklag gives rank r (r + 1) times the work, so 2 ranks of
# 1 thread wait for the last rank; 1 rank of 2 threads is the variant.
if [ -x "$bin/mpi_hybrid" ] && command -v mpirun > /dev/null; then
  # Under ASan, Open MPI's own allocations at exit are not the tool's leaks (the sanitizer
  # stage's MPI tests run without leak detection too: scripts/sanitize.sh).
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    OMP_NUM_THREADS=1 "$bin/scalea" tune -o t4 -r 1 --ranks 2 -- "$bin/mpi_hybrid" 1 ranklag \
    > t4.out 2> t4.err || no "tune --ranks exited $?: $(tail -3 t4.err)"
  jq -e '[.variants[] | select(.rule == "split" and .ranks == 1 and
    .settings.OMP_NUM_THREADS == "2" and .ok)] | length == 1' t4/tune.json > /dev/null ||
    no "no passed split variant ranks=1 OMP_NUM_THREADS=2: $(jq -c '.variants' t4/tune.json)"
  jq -e '(.runs | length) == (.variants | length) + 1' t4/tune.json > /dev/null || no "t4: runs missing"
  if grep -q "^chosen: ranks=1" t4.out; then
    grep -q "run it so: OMP_NUM_THREADS=2 mpirun .*-np 1 .*mpi_hybrid 1 ranklag" t4.out ||
      no "the chosen split's command line lacks its launcher: $(grep 'run it so' t4.out)"
  fi

  # One rank of 2 threads: Open MPI binds the rank to one core (its default for 2 ranks or
  # fewer), so both threads share it. The rule `place` tries mpirun --bind-to none (and
  # --map-by slot:PE=2, a core per thread), and those runs' threads had both CPUs (meta.json
  # affinity), where the baseline's had one. A launcher that already says where ranks run is kept.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$bin/scalea" tune -o t5 -r 1 --ranks 1 -- "$bin/omp/sampled" 100 > t5.out 2> t5.err ||
    no "tune --ranks 1 exited $?: $(tail -3 t5.err)"
  cpus_of() {  # the CPUs a run's threads were allowed, as meta.json says
    jq -r '[.affinity.threads[].cpus] | unique | join(" ")' "t5/runs/$1/meta.json"
  }
  base_cpus=$(cpus_of v0-rep1)
  case "$base_cpus" in
    *-*|*,*) echo "the baseline's rank was not bound to one CPU here ($base_cpus): place not checked" ;;
    *)
      free=$(jq -r '[.variants | to_entries[] | select(.value.rule == "place" and
        .value.launcher_options == ["--bind-to", "none"] and .value.ok) | .key] | first // ""' t5/tune.json)
      if [ -z "$free" ]; then
        no "no passed variant mpirun --bind-to none: $(jq -c '.variants' t5/tune.json)"
      else
        case "$(cpus_of "v$free-rep1")" in
          *-*|*,*) ;;
          *) no "mpirun --bind-to none: its threads still had one CPU ($(cpus_of "v$free-rep1"))" ;;
        esac
      fi
      grep -q "ranks had their 2 threads bound to fewer CPUs" t5/tune.json ||
        no "the rule place does not say why: $(jq -c '[.variants[] | .why]' t5/tune.json)"
      ;;
  esac
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$bin/scalea" tune -o t6 -r 1 --ranks 1 --launcher 'mpirun --bind-to none -np {ranks}' \
    -- "$bin/omp/sampled" 50 > t6.out 2> t6.err || no "tune --launcher exited $?: $(tail -3 t6.err)"
  grep -q "not tried: mpirun's binding: set in your launcher (--bind-to), kept" t6.out ||
    no "a launcher's own binding was not kept: $(grep 'not tried' t6.out)"
  jq -e '[.variants[] | select(.rule == "place")] | length == 0' t6/tune.json > /dev/null ||
    no "place variants despite the launcher's --bind-to"
else
  echo "no MPI: the --ranks part is skipped"
fi

# Bad input: one line on stderr, exit 2, nothing created.
bad() {
  local want=$1
  shift
  set +e
  "$bin/scalea" tune "$@" > bad.out 2> bad.err
  local rc=$?
  set -e
  [ "$rc" = 2 ] || no "tune $*: exit $rc, not 2"
  [ "$(wc -l < bad.err)" = 1 ] || no "tune $*: not one line: $(cat bad.err)"
  grep -q -- "$want" bad.err || no "tune $*: '$want' not in: $(cat bad.err)"
}
bad "'oops' is not NAME=VALUE" -o b1 --try oops -- /bin/true
[ ! -e b1 ] || no "a bad --try created its directory"
bad "already exists" -o t1 -- /bin/true
bad "not a regular expression" -o b2 --expect '(' -- /bin/true
bad "not found" -o b3 -- ./no-such-program
bad "needs at least one --try" -o b4 --only-try -- /bin/true
bad "sets ranks: give the baseline's with --ranks" -o b6 --try 'ranks=2' -- /bin/true
set +e
"$bin/scalea" tune -o b5 -r 1 -- /bin/false > /dev/null 2> b5.err
rc=$?
set -e
[ "$rc" = 1 ] || no "a failing baseline: exit $rc, not 1"
grep -q "the program as given failed (repetition 0: exit status 1): nothing to tune" b5.err ||
  no "a failing baseline is not said: $(cat b5.err)"
exit $fail
