#!/usr/bin/env bash
# Fault tests: the program ends badly; the experiment is written (or explicitly not), never
# half-written, and the program's own exit status is kept. Usage: run_faults.sh BIN_DIR CASE
set -u
bin=$1; case=$2
scalea=$bin/scalea; faulty=$bin/faulty
tmp=$(mktemp -d /tmp/scalea-faults.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
exp=$tmp/exp
meta() { python3 -c "import json,sys; d=json.load(open('$exp/meta.json')); print($1)"; }
partials() { ls -a "$tmp" | grep -c partial || true; }
case $case in
  term|int)
    # SIGINT: a background job of a non-interactive shell starts with SIGINT ignored (and the
    # tool leaves an ignored signal alone), so the program gets the default disposition back.
    if [ $case = term ]; then sig=TERM num=15; else sig=INT num=2; fi
    env --default-signal=INT "$scalea" run -q -o "$exp" -- "$faulty" term > "$tmp/out" 2>&1 &
    pid=$!
    for i in $(seq 100); do grep -q ready "$tmp/out" 2>/dev/null && break; sleep 0.05; done
    # The program, not the scalea front end, gets the signal (as from a job scheduler).
    child=$(pgrep -P $pid faulty)
    [ -n "$child" ] || fail "program did not start"
    kill -$sig "$child"
    wait $pid; rc=$?
    [ $rc = $((128 + num)) ] || fail "exit status $rc, expected $((128 + num)) (SIG$sig)"
    [ -f "$exp/meta.json" ] || fail "no experiment after SIG$sig"
    [ "$(meta 'd["finished_by"]')" = "signal $num" ] || fail "finished_by: $(meta 'd["finished_by"]')"
    [ "$(meta 'd["complete"]')" = "True" ] || fail "complete should stay true after SIG$sig"
    "$scalea" report "$exp" | grep -q "before" || fail "the user region is missing"
    ;;
  segv)
    "$scalea" run -q -o "$exp" -- "$faulty" segv > "$tmp/out" 2>&1; rc=$?
    [ $rc = 139 ] || fail "exit status $rc, expected 139 (SIGSEGV)"
    [ -f "$exp/meta.json" ] || fail "no experiment after SIGSEGV"
    [ "$(meta 'd["complete"]')" = "False" ] || fail "a crashed run must be marked incomplete"
    meta 'd["notes"][0]' | grep -q "Segmentation" || fail "notes: $(meta 'd["notes"]')"
    "$scalea" report "$exp" > "$tmp/report" || fail "report failed"
    grep -q "incomplete" "$tmp/report" || fail "the report does not say the experiment is incomplete"
    [ "$(partials)" = 0 ] || fail "a partial directory was left behind"
    ;;
  exit)
    "$scalea" run -q -o "$exp" -- "$faulty" exit > "$tmp/out" 2>&1; rc=$?
    [ $rc = 3 ] || fail "exit status $rc, expected 3"
    [ -f "$exp/meta.json" ] || fail "no experiment after exit() from a worker"
    "$scalea" report "$exp" | grep -q "parallel" || fail "the parallel region is missing"
    ;;
  fork)
    "$scalea" run -q -o "$exp" -- "$faulty" fork > "$tmp/out" 2>&1; rc=$?
    [ $rc = 0 ] || fail "exit status $rc"
    [ -f "$exp/meta.json" ] || fail "no experiment"
    [ ! -e "$exp.1" ] || fail "the forked child wrote a second experiment"
    ;;
  unwritable)
    # The experiment goes to the default name in the working directory instead, said once.
    mkdir "$tmp/ro"; chmod 555 "$tmp/ro"
    out=$(cd "$tmp" && OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so SCALEA_OUTPUT=$tmp/ro/sub/exp "$faulty" exit 2>&1); rc=$?
    [ $rc = 3 ] || fail "the program's exit status changed: $rc"
    echo "$out" | grep -q "scalea: cannot write the experiment to $tmp/ro/sub/exp (.*); writing it to scalea-faulty-[0-9-]* instead" ||
      fail "no message naming the fallback: $out"
    [ "$(echo "$out" | grep -c "cannot write")" = 1 ] || fail "the tool must say it once: $out"
    ls "$tmp"/scalea-faulty-*/meta.json > /dev/null 2>&1 || fail "no experiment at the fallback: $out"
    ;;
  same_dir)
    "$scalea" run -q -o "$exp" -- "$faulty" fork > /dev/null 2>&1 || fail "first run"
    OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so SCALEA_OUTPUT=$exp "$faulty" fork > /dev/null 2>&1 || fail "second run"
    [ -f "$exp.1/meta.json" ] || fail "the second run did not go to $exp.1"
    [ -f "$exp/meta.json" ] || fail "the first experiment was lost"
    ;;
  symlink)
    ln -s /etc "$tmp/evil"
    OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so SCALEA_OUTPUT=$tmp/evil "$faulty" fork > /dev/null 2>&1 || fail "run failed"
    [ -L "$tmp/evil" ] || fail "the planted symlink was replaced"
    [ -f "$tmp/evil.1/meta.json" ] || fail "the experiment should go to evil.1, beside the link"
    [ ! -e /etc/meta.json ] || fail "wrote through the symlink"
    ;;
  disk_full)
    # A 16 KiB tmpfs, filled up: needs root (CI and the quick start run as root); skipped else.
    mkdir "$tmp/full"
    mount -t tmpfs -o size=16k tmpfs "$tmp/full" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
    trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
    dd if=/dev/zero of="$tmp/full/fill" bs=4k count=100 2>/dev/null
    out=$(OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so SCALEA_OUTPUT=$tmp/full/exp "$faulty" exit 2>&1); rc=$?
    [ $rc = 3 ] || fail "the program's exit status changed: $rc"
    echo "$out" | grep -q "scalea: could not write the experiment: .*No space left on device" || fail "no message: $out"
    [ "$(echo "$out" | grep -c scalea:)" = 1 ] || fail "the tool must say it once: $out"
    [ -z "$(ls -A "$tmp/full" | grep -v '^fill$')" ] || fail "something was left behind: $(ls -A "$tmp/full")"
    # Room for the rank file but not for meta.json: still nothing half-written.
    rm -f "$tmp/full/fill"
    dd if=/dev/zero of="$tmp/full/fill" bs=1k count=12 2>/dev/null
    out=$(OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so SCALEA_OUTPUT=$tmp/full/exp "$faulty" exit 2>&1); rc=$?
    [ $rc = 3 ] || fail "the program's exit status changed: $rc"
    echo "$out" | grep -q "scalea: could not write the experiment" || fail "no message: $out"
    [ -z "$(ls -A "$tmp/full" | grep -v '^fill$')" ] || fail "something was left behind: $(ls -A "$tmp/full")"
    ;;
  umask)
    # Experiment files and directories honour the umask (no chmod of our own).
    for mask in 077 022; do
      rm -rf "$exp"
      (umask $mask; OMP_TOOL_LIBRARIES=$bin/../lib/libscalea-omp.so SCALEA_OUTPUT=$exp SCALEA_QUIET=1 "$faulty" fork > /dev/null 2>&1) || fail "run with umask $mask"
      want_dir=$(printf '%o' $(( 0777 & ~0$mask ))); want_file=$(printf '%o' $(( 0666 & ~0$mask )))
      [ "$(stat -c %a "$exp")" = "$want_dir" ] || fail "umask $mask: directory mode $(stat -c %a "$exp"), expected $want_dir"
      for f in "$exp"/*; do
        [ "$(stat -c %a "$f")" = "$want_file" ] || fail "umask $mask: $(basename "$f") mode $(stat -c %a "$f"), expected $want_file"
      done
      [ -n "$(ls "$exp")" ] || fail "umask $mask: empty experiment"
    done
    ;;
  *) fail "unknown case $case" ;;
esac
echo "PASS: $case"
