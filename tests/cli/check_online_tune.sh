#!/usr/bin/env bash
# The on-line tuner (SCALEA_TUNE=on, `scalea run --tune`; docs/tuning.md "On-line tuning") on a
# planted program: `shapes steps 24 8 40`, 24 time steps on 2 threads, each a parallel region
# whose `omp for schedule(runtime)` runs 8 iterations of rising cost (i sleeps 5 (i + 1) ms: the
# default static schedule gives the second thread 130 of the 180 ms of work), then a
# `parallel for schedule(static)` and a `parallel for` without a schedule clause that record which
# thread ran each iteration. With libomp 14 and, when given, libomp 19:
#  - the program's own timers: the runtime loop's imbalance (slowest minus fastest thread) in the
#    last 8 steps is at most half of the first 4 steps' (medians). The tuner needs 13 executions
#    (a warm-up, 3 with the program's schedule, 3 of each of static,1 dynamic,1 guided,1). Long
#    sleeps, because on a loaded 2-core machine a thread that wakes waits for a CPU up to a tick
#    (4 ms) per sleep;
#  - the program's output is the same with and without tuning (the run without it on libomp 14
#    only: the checksum does not depend on the runtime): the checksum, the static and the
#    unclaused loops' assignment of iterations to threads never changed, and omp_get_schedule()
#    between the steps is the program's own in every step;
#  - the report (text and JSON) names the region, its loop's directive as the source writes it,
#    the schedules tried and the chosen one;
#  - libomp 19 reports each loop's schedule: the runtime loop is proven schedule(runtime), and the
#    other two loops' regions are not tuned (none of their loops follows the schedule set);
#  - SCALEA_TUNE off: no "online_tuning" in meta.json and nothing in the report; light mode
#    (no work callback): the tuner says once that it is off, the program runs as without it.
# Usage: check_online_tune.sh BIN_DIR WORK_DIR [LIBOMP19_DIR]
set -euo pipefail
bin=$1 work=$2 omp19=${3:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
export OMP_NUM_THREADS=2
unset OMP_SCHEDULE SCALEA_TUNE SCALEA_TUNE_REPEAT
src="$(dirname "$0")/../../apps/omp/shapes.c"
region_line=$(grep -n 'STEPS_RUNTIME_REGION' "$src" | cut -d: -f1)
static_line=$(grep -n 'STEPS_STATIC_LOOP' "$src" | cut -d: -f1)
unclaused_line=$(grep -n 'STEPS_UNCLAUSED_LOOP' "$src" | cut -d: -f1)

# The median of the imbalances of steps [from, to] in a program's output.
imbalance() {
  awk -v a="$2" -v b="$3" '/^step [0-9]+:/ { s = $2 + 0; if (s >= a && s <= b) print $6 }' "$1" |
    sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

steps=(steps 24 8 40)
check_runtime() {
  local rt=$1 libdir=$2 plain=plain-14
  local run=(env)
  [ -n "$libdir" ] && run=(env "LD_LIBRARY_PATH=$libdir")
  if [ "$rt" = 14 ]; then
    "${run[@]}" "$bin/scalea" run -q -o plain-$rt -- "$bin/omp/shapes" "${steps[@]}" \
      > plain-$rt.out 2> plain-$rt.err || no "[$rt] the run without tuning failed: $(tail -2 plain-$rt.err)"
  fi
  "${run[@]}" "$bin/scalea" run -q --tune -o tuned-$rt -- "$bin/omp/shapes" "${steps[@]}" \
    > tuned-$rt.out 2> tuned-$rt.err || no "[$rt] the tuned run failed: $(tail -2 tuned-$rt.err)"
  jq -r '.openmp.runtime_path' tuned-$rt/meta.json | grep -q "${libdir:-llvm-14}" ||
    no "[$rt] the tuned run did not use that libomp: $(jq -c .openmp tuned-$rt/meta.json)"
  # The program's output, the same with and without tuning.
  local sum_plain sum_tuned
  sum_plain=$(grep '^steps: checksum' $plain.out || true)
  sum_tuned=$(grep '^steps: checksum' tuned-$rt.out || true)
  [ -n "$sum_plain" ] && [ "$sum_plain" = "$sum_tuned" ] ||
    no "[$rt] checksum '$sum_tuned' under tuning, '$sum_plain' without"
  for f in $plain.out tuned-$rt.out; do
    grep -q '^steps: static assignment unchanged$' $f ||
      no "[$rt] $f: the schedule(static) loop's assignment changed: $(grep static $f)"
    grep -q '^steps: unclaused assignment unchanged$' $f ||
      no "[$rt] $f: the loop without a schedule clause changed: $(grep unclaused $f)"
    grep -q '^steps: schedule outside unchanged$' $f ||
      no "[$rt] $f: omp_get_schedule() between the steps changed: $(grep outside $f)"
  done
  # The program's own timers: the late steps' imbalance at most half of the first steps'.
  local first late
  first=$(imbalance tuned-$rt.out 0 3) late=$(imbalance tuned-$rt.out 16 23)
  echo "[$rt] runtime loop imbalance: steps 0-3 $first s, steps 16-23 $late s (median)"
  awk -v f="$first" -v l="$late" 'BEGIN { exit !(f > 0.04 && l <= f / 2) }' ||
    no "[$rt] imbalance of the late steps $late s is not at most half of the first steps' $first s"
  # What the tool says it did.
  local region
  region=$(jq -c --arg l "shapes.c:$region_line" \
    '[.online_tuning.regions[] | select(.label | contains($l))][0]' \
    <("$bin/scalea" report tuned-$rt --format json))
  [ "$region" != null ] || no "[$rt] the JSON report has no tuned region at shapes.c:$region_line"
  local chosen
  chosen=$(jq -r '.chosen // ""' <<< "$region")
  case "$chosen" in
    static,1 | dynamic,* | guided,*) ;;
    *) no "[$rt] chosen '$chosen' for the runtime loop: $region" ;;
  esac
  jq -e '.source | contains("schedule(runtime)")' <<< "$region" > /dev/null ||
    no "[$rt] the report does not show the region's loop directive: $region"
  jq -e '.state == "fixed" and .gain > 0.15 and (.trials | length) >= 4 and
    .trials[0].program and .trials[0].schedule == "static"' <<< "$region" > /dev/null ||
    no "[$rt] the region's tuning is not fixed with a gain over 15 %: $region"
  "$bin/scalea" report tuned-$rt > tuned-$rt.txt
  grep -q "^on-line tuning" tuned-$rt.txt || no "[$rt] the text report has no on-line tuning block"
  grep -q "shapes.c:$region_line: chosen $chosen from execution" tuned-$rt.txt ||
    no "[$rt] the text report does not name the chosen $chosen: $(grep -A3 '^on-line' tuned-$rt.txt)"
  # The untuned run says nothing of tuning.
  jq -e 'has("online_tuning") | not' $plain/meta.json > /dev/null ||
    no "[$rt] meta.json of the run without tuning has online_tuning"
  ! "$bin/scalea" report $plain | grep -q 'on-line tuning' ||
    no "[$rt] the report of the run without tuning shows on-line tuning"
}

check_runtime 14 ""
grep 'runtime_loops' -q tuned-14/meta.json || no "[14] meta.json has no runtime_loops"
jq -e '[.online_tuning.regions[] | .runtime_loops] | all(. == "unknown")' tuned-14/meta.json \
  > /dev/null || no "[14] libomp 14 reports no loop schedule, yet: $(jq -c '[.online_tuning.regions[].runtime_loops]' tuned-14/meta.json)"
if [ -n "$omp19" ]; then
  check_runtime 19 "$omp19"
  report=$("$bin/scalea" report tuned-19 --format json)
  jq -e --arg l "shapes.c:$region_line" '[.online_tuning.regions[] | select(.label | contains($l))][0]
    | .runtime_loops == "proven"' <<< "$report" > /dev/null ||
    no "[19] the runtime loop is not proven schedule(runtime)"
  for l in $static_line $unclaused_line; do
    jq -e --arg l "shapes.c:$l" '[.online_tuning.regions[] | select(.label | contains($l))][0]
      | .state == "stopped" and .runtime_loops == "none" and .chosen == null' <<< "$report" \
      > /dev/null ||
      no "[19] the region at shapes.c:$l is not left alone: $(jq -c '.online_tuning.regions' <<< "$report")"
  done
fi

# Light mode registers no work callback: the tuner says once that it is off, and the program
# runs with its own schedule (the same output as without the tool's tuning).
SCALEA_OPENMP=light "$bin/scalea" run -q --tune -o light -- "$bin/omp/shapes" "${steps[@]}" \
  > light.out 2> light.err || no "the light run failed: $(tail -2 light.err)"
[ "$(grep -c 'on-line tuning off: the work callback is not registered' light.err)" = 1 ] ||
  no "light mode: the tuner did not say once that it is off: $(cat light.err)"
diff <(grep '^steps:' plain-14.out) <(grep '^steps:' light.out) > /dev/null ||
  no "light mode: the output differs from the run without tuning"
jq -e '.online_tuning.on == false' light/meta.json > /dev/null ||
  no "light mode: meta.json does not say the tuner was off"

# A setting the tool cannot take: said once, the program runs.
SCALEA_TUNE_REPEAT=99 "$bin/scalea" run -q --tune -o bad -- "$bin/omp/shapes" steps 2 4 1 \
  > bad.out 2> bad.err || no "a run with SCALEA_TUNE_REPEAT=99 failed"
grep -q "SCALEA_TUNE_REPEAT" bad.err || no "SCALEA_TUNE_REPEAT=99 is not reported: $(cat bad.err)"
exit $fail
