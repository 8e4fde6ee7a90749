#!/usr/bin/env bash
# What scalea says when a run cannot be measured, when there is nothing to show, and when the
# command line is wrong (docs/user-guide.md): the exact message and exit status of each, under the
# real tool with real programs (/bin/true, /bin/echo, apps/omp/phases).
# Usage: check_messages.sh BIN_DIR WORK_DIR GROUP
#   GROUP output:   scalea run -o DIR that cannot be made: refused before the program starts;
#                   plain OMP_TOOL_LIBRARIES: the experiment goes to a fallback place, said once
#         top:      scalea top on a mistyped name, a finished experiment without snapshots, a
#                   directory that is no experiment: one line at once, exit 2
#         killed:   a program killed by SIGKILL: said in one line; with snapshots, the last one kept
#                   as an incomplete experiment that scalea report reads
#         words:    mistyped commands and options, program arguments without --, scalea help
#         settings: invalid SCALEA_* values name their valid form; scalea settings lists the table
#         docs:     an error's docs/NAME.md names this scalea's documentation (scalea --version's),
#                   a path of the user's that holds docs/ is left as it is
#         sampling: libunwind that cannot be opened: the program unchanged, sampling off, said once
set -u
bin=$(cd "$1" && pwd); work=$2; group=$3
scalea=$bin/scalea
for v in $(compgen -e | grep '^SCALEA_'); do unset "$v"; done
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect STATUS REGEX ARGS...: scalea ARGS exits with STATUS within 10 s, and its stderr is one
# line matching the extended REGEX.
expect() {
  local want=$1 regex=$2; shift 2
  timeout -s KILL 10 "$scalea" "$@" > "$work/out" 2> "$work/err" < /dev/null
  local rc=$?
  echo "\$ scalea $* -> $rc: $(cat "$work/err")"
  [ $rc = "$want" ] || { fail "scalea $*: exit status $rc, expected $want"; return; }
  [ "$(wc -l < "$work/err")" = 1 ] || { fail "scalea $*: not one line on stderr"; return; }
  grep -Eq -- "$regex" "$work/err" || fail "scalea $*: stderr does not match: $regex"
}

phases=$bin/omp/phases
case $group in
  output)
    # Under a file, under a missing directory, and (as root too) on a file system that cannot
    # hold it: refused before the program starts (it would create "started").
    expect 2 '^scalea run: cannot create the experiment /proc/version/E \(/proc/version is not a directory\); choose another -o$' \
      run -o /proc/version/E -- /usr/bin/touch started
    expect 2 '^scalea run: cannot create the experiment no/such/E \(no/such: No such file or directory\); choose another -o' \
      run -o no/such/E -- /usr/bin/touch started
    expect 2 '^scalea run: cannot create the experiment /proc/E \(cannot make a directory in /proc: .*\); choose another -o$' \
      run -o /proc/E -- /usr/bin/touch started
    [ ! -e started ] || fail "the program ran although its experiment could not be made"
    # In a working directory where the default name cannot be made.
    cd /proc
    expect 2 "^scalea run: cannot create the experiment in the working directory \(cannot make a directory in \.: .*\); choose where with -o DIR$" \
      run -- /usr/bin/touch "$work/started"
    cd "$work"
    [ ! -e started ] || fail "the program ran in a working directory that cannot hold its experiment"
    # A read-only mount (a tmpfs mounted read-only in a mount namespace of its own, where the
    # machine lets root make one): faccessat answers EROFS, the probe confirms, and the refusal
    # names it.
    mkdir -p ro; rc=77
    if unshare -m true 2> /dev/null; then
      unshare -m bash -c "mount -t tmpfs -o ro none '$work/ro' 2> /dev/null || exit 77
        exec '$scalea' run -o '$work/ro/E' -- /usr/bin/touch '$work/started'" > out 2> err; rc=$?
      echo "\$ scalea run -o ro/E (read-only tmpfs) -> $rc: $(cat err)"
    fi
    if [ "${rc:-77}" = 77 ]; then
      echo "skipped: a read-only mount (no mount namespace, or no mount in it, here)"
    else
      [ $rc = 2 ] || fail "a read-only -o: exit status $rc, expected 2"
      grep -Eq "^scalea run: cannot create the experiment $work/ro/E \(cannot make a directory in $work/ro: Read-only file system\); choose another -o$" err ||
        fail "a read-only -o: stderr does not say so"
      [ ! -e started ] || fail "the program ran although its experiment's file system is read-only"
    fi
    # A good -o still runs.
    expect_ok() { "$scalea" "$@" > out 2> err || fail "scalea $*: $(cat err)"; }
    expect_ok run -q -o good -- /bin/true
    [ -f good/meta.json ] || fail "scalea run -o good wrote no experiment"
    # Plain OMP_TOOL_LIBRARIES: the program runs as without the tool (its output and exit status),
    # the experiment goes to the default name in the working directory, said once.
    out=$(OMP_NUM_THREADS=2 SCALEA_OUTPUT=/proc/version/E OMP_TOOL_LIBRARIES="$bin/../lib/libscalea-omp.so" \
      "$phases" 2 1 5 2> err | grep -c '^truth'); rc=${PIPESTATUS[0]}
    echo "plain OMP_TOOL_LIBRARIES, SCALEA_OUTPUT=/proc/version/E -> $rc: $(cat err)"
    [ "$rc" = 0 ] || fail "the program's exit status is $rc under the fallback"
    [ "$out" -gt 0 ] || fail "the program printed nothing under the fallback"
    [ "$(grep -c 'cannot write the experiment' err)" = 1 ] || fail "the fallback is not said once"
    grep -Eq '^scalea: cannot write the experiment to /proc/version/E \(/proc/version is not a directory\); writing it to (scalea-phases-[0-9-]+) instead$' err ||
      fail "the fallback line is not as expected"
    fallback=$(sed -nE 's/.*writing it to (scalea-phases-[0-9-]+) instead$/\1/p' err)
    [ -n "$fallback" ] && [ -f "$fallback/meta.json" ] || fail "no experiment at the fallback place '$fallback'"
    # The working directory cannot hold it either: $TMPDIR.
    mkdir -p tmp
    (cd /proc && OMP_NUM_THREADS=1 TMPDIR="$work/tmp" OMP_TOOL_LIBRARIES="$bin/../lib/libscalea-omp.so" \
      "$phases" 1 1 1 > /dev/null 2> "$work/err2"); rc=$?
    echo "plain OMP_TOOL_LIBRARIES in /proc -> $rc: $(cat err2)"
    [ "$rc" = 0 ] || fail "the program's exit status is $rc under the fallback to TMPDIR"
    grep -Eq "^scalea: cannot write the experiment to scalea-phases-[0-9-]+ \(cannot make a directory in \.: .*\); writing it to $work/tmp/scalea-phases-[0-9-]+ instead$" err2 ||
      fail "the fallback to TMPDIR is not said"
    ls tmp/scalea-phases-*/meta.json > /dev/null 2>&1 || fail "no experiment in TMPDIR"
    ;;
  top)
    "$scalea" run -q -o done.exp -- /bin/true > /dev/null 2>&1 || fail "cannot make done.exp"
    mkdir notanexp
    expect 2 '^scalea top: no experiment nosuch.exp, and no program started writing it \(to watch a run, start it with scalea run --snapshot 1s -o nosuch.exp\)$' \
      top nosuch.exp -b --wait 0
    expect 2 '^scalea top: no experiment done.ex \(did you mean done.exp\?\)$' top done.ex -b
    expect 2 '^scalea top: done.exp is a finished experiment without snapshots: nothing to watch; read it with scalea report done.exp \(to watch a run, start it with scalea run --snapshot 1s -o done.exp\)' \
      top done.exp -b
    expect 2 '^scalea top: notanexp is not an experiment \(no meta.json, no snapshots\)' top notanexp -b
    # Nothing there, nothing starting: a bounded wait, said, then the answer.
    timeout -s KILL 10 "$scalea" top nosuch.exp -b --wait 0.3 > out 2> err; rc=$?
    echo "\$ scalea top nosuch.exp -b --wait 0.3 -> $rc: $(cat err)"
    [ $rc = 2 ] || fail "scalea top --wait 0.3 on nothing: exit status $rc"
    grep -Eq '^scalea top: waiting for snapshots in nosuch.exp.live: nothing is at nosuch.exp yet; up to 0.3 s for a program to start \(to watch a run, start it with scalea run --snapshot 1s -o nosuch.exp\)$' err ||
      fail "the bounded wait is not said"
    grep -q '^scalea top: no experiment nosuch.exp, and no program started writing it within 0.3 s' err ||
      fail "the end of the bounded wait is not said"
    # A program still starting (its scalea run seen, no DIR.live yet): the wait names it; a run
    # that never writes DIR.live (no --snapshot) ends the wait with its experiment.
    "$scalea" run -q -o slow.exp -- /bin/sleep 1 > /dev/null 2>&1 &
    run=$!
    sleep 0.2
    timeout -s KILL 10 "$scalea" top slow.exp -b --wait 0 > out 2> err; rc=$?
    wait $run
    echo "\$ scalea top slow.exp -b (while scalea run -o slow.exp sleeps) -> $rc: $(cat err)"
    grep -Eq "^scalea top: waiting for snapshots in slow.exp.live: up to 60 s for .* \(pid [0-9]+\), which is starting, to write them$" err ||
      fail "the wait for a starting program is not said"
    grep -q "slow.exp is a finished experiment without snapshots" err || fail "the end of the wait is not said"
    [ $rc = 2 ] || fail "scalea top on a run without snapshots: exit status $rc"
    ;;
  killed)
    # Without snapshots: said, no experiment.
    OMP_NUM_THREADS=2 "$scalea" run -q -o plain.exp -- "$phases" 1000 1000 20 > /dev/null 2> err &
    run=$!
    for _ in $(seq 100); do child=$(pgrep -P $run) && break; sleep 0.02; done
    sleep 0.2
    kill -KILL "$child"; wait $run; rc=$?
    echo "killed without snapshots -> $rc: $(cat err)"
    [ $rc = 137 ] || fail "exit status $rc, expected 137"
    grep -Eq "^scalea run: .*/phases was killed by signal 9 \(SIGKILL\): no experiment was written \(with --snapshot 10s, scalea run keeps the last snapshot of a run that ends so\)$" err ||
      fail "the kill is not said as expected"
    [ "$(wc -l < err)" = 1 ] || fail "not one line"
    # With snapshots: the last one kept as an incomplete experiment.
    OMP_NUM_THREADS=2 "$scalea" run -q --snapshot 20ms -o snap.exp -- "$phases" 1000 1000 20 > /dev/null 2> err &
    run=$!
    for _ in $(seq 250); do [ "$(ls snap.exp.live/rank-000000/snap-*.sdrg 2> /dev/null | wc -l)" -ge 3 ] && break; sleep 0.02; done
    kill -KILL "$(pgrep -P $run)"; wait $run; rc=$?
    echo "killed with snapshots -> $rc: $(cat err)"
    [ $rc = 137 ] || fail "exit status $rc, expected 137"
    grep -Eq "^scalea run: .*/phases was killed by signal 9 \(SIGKILL\) before it wrote its experiment: its last snapshot, [0-9.]+ s into the run, is kept as the incomplete experiment snap.exp \(scalea report snap.exp\)$" err ||
      fail "the kept snapshot is not said as expected"
    [ ! -e snap.exp.live ] && [ -d snap.exp/snapshots ] || fail "the live snapshots were not moved into the experiment"
    "$scalea" report snap.exp > report.txt 2> err || fail "scalea report of the kept snapshot: $(cat err)"
    grep -Eq '^WARNING     the experiment is incomplete: the program was killed by signal 9 \(SIGKILL\) before it wrote its experiment: this is its last snapshot, [0-9.]+ s into the run \(kept by scalea run\); what ran after it is missing$' report.txt ||
      fail "the report's header does not say the experiment is a kept snapshot: $(head -5 report.txt)"
    grep -Eq 'loop .*phases.c' report.txt || fail "the report lacks the program's loop"
    "$scalea" report snap.exp --format json > report.json || fail "JSON report of the kept snapshot"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["experiment"]["complete"] is False' report.json 2> /dev/null ||
      fail "the JSON report does not say the experiment is incomplete"
    ;;
  words)
    expect 2 "^scalea: unknown command 'rep' \(did you mean report\?\); the commands: run, report, .* \(see scalea --help\)$" rep
    expect 2 "^scalea: unknown command 'reprot' \(did you mean report\?\)" reprot
    expect 2 "^scalea: unknown command 'frobnicate'; the commands: run, " frobnicate
    expect 2 "^scalea db: unknown command 'lst' \(did you mean list\?\) \(see scalea db --help\)$" db lst
    # scalea help is scalea --help; scalea help CMD is scalea CMD --help.
    "$scalea" help > out 2> err || fail "scalea help: exit status $?"
    grep -q '^  scalea run -o md.exp' out || fail "scalea help does not print the help"
    "$scalea" help top > out 2> err || fail "scalea help top: exit status $?"
    grep -q 'Live view of a run' out || fail "scalea help top does not print top's help"
    # Program arguments without --, a mistyped option: named.
    expect 2 '^scalea run: put the program and its arguments after --: scalea run -o E -- /bin/echo -n hi \(see scalea run --help\)$' \
      run -o E /bin/echo -n hi
    expect 2 '^scalea run: put the program and its arguments after --: scalea run -o E -- /bin/echo -o hi' \
      run -o E /bin/echo -o hi
    expect 2 '^scalea run: unknown option --outptu \(did you mean --output\?\) \(see scalea run --help\)$' \
      run --outptu E -- /bin/true
    expect 2 '^scalea run: unknown option --frobnicate \(see scalea run --help\)$' run --frobnicate -- /bin/true
    expect 2 '^scalea study: unknown option --thraeds \(did you mean --threads\?\)' \
      study -o S --thraeds 1,2 -- /bin/true
    [ ! -e E ] && [ ! -e S ] || fail "a refused command line ran the program"
    # What stays right: a program without -- and without options; options after --.
    "$scalea" run -q -o ok1 /bin/echo hi > out 2> err || fail "scalea run -o ok1 /bin/echo hi: $(cat err)"
    "$scalea" run -q -o ok2 -- /bin/echo -n -o hi > out 2> err || fail "scalea run -- /bin/echo -n -o hi: $(cat err)"
    [ "$(cat out)" = "-o hi" ] || fail "the program's options after -- did not reach it: $(cat out)"
    ;;
  settings)
    # Invalid values: the valid form, the default kept, the program runs and is measured.
    n=0
    check_env() {  # check_env KEY=VALUE REGEX
      OMP_NUM_THREADS=1 env "$1" SCALEA_OUTPUT="$work/env$n" OMP_TOOL_LIBRARIES="$bin/../lib/libscalea-omp.so" \
        "$phases" 1 1 1 > /dev/null 2> err; local rc=$?
      echo "$1 -> $rc: $(cat err)"
      [ $rc = 0 ] || fail "$1: the program's exit status is $rc"
      [ "$(grep -c "${1%%=*}" err)" = 1 ] || fail "$1: not one line naming the setting"
      grep -Eq -- "$2" err || fail "$1: the message does not match: $2"
      [ -f "$work/env$n/meta.json" ] || fail "$1: no experiment"
      n=$((n + 1))
    }
    check_env SCALEA_CLOCK=bogus "^scalea: invalid value 'bogus' for SCALEA_CLOCK \(valid: tsc or monotonic\), default kept$"
    check_env SCALEA_SNAPSHOT=1ms "^scalea: invalid value '1ms' for SCALEA_SNAPSHOT \(valid: a duration from 10ms to 1h with ms or s \(a bare number is s; e.g. 1s, 100ms\), or off\), default kept$"
    check_env SCALEA_QUIET=2 "^scalea: invalid value '2' for SCALEA_QUIET \(valid: on or off \(also 1 or 0, yes or no, true or false\)\), default kept$"
    check_env SCALEA_THROTTLE=fast "^scalea: invalid value 'fast' for SCALEA_THROTTLE \(valid: N:T with N a whole number of visits"
    # scalea settings: every row of the table with its default, values and meaning.
    "$scalea" settings > out 2> err || fail "scalea settings: $(cat err)"
    [ "$(grep -c '^SCALEA_' out)" -ge 20 ] || fail "scalea settings lists $(grep -c '^SCALEA_' out) settings"
    grep -A5 '^SCALEA_SNAPSHOT$' out | grep -q '^  values:   a duration from 10ms to 1h' || fail "SCALEA_SNAPSHOT's values not listed"
    grep -A5 '^SCALEA_SNAPSHOT$' out | grep -q '^  default:  off$' || fail "SCALEA_SNAPSHOT's default not listed"
    grep -q '^SCALEA_RUN_PRELOAD$' out && fail "an internal setting is listed"
    SCALEA_SAMPLE=100 "$scalea" settings SAMPLE > out 2> err || fail "scalea settings SAMPLE: $(cat err)"
    [ "$(grep -c '^SCALEA_' out)" = 1 ] && grep -q '^  set now:  100$' out || fail "scalea settings SAMPLE: $(cat out)"
    expect 2 '^scalea settings: no setting SCALEA_SNAPSHOTS \(did you mean SCALEA_SNAPSHOT\?\)' settings SNAPSHOTS
    "$scalea" settings --markdown > out || fail "scalea settings --markdown"
    grep -q '^| `SCALEA_CLOCK` | `tsc` when invariant | tsc or monotonic | `monotonic` forces `clock_gettime` |$' out ||
      fail "the markdown table lacks SCALEA_CLOCK's row"
    ;;
  docs)
    docs=$("$scalea" --version | sed -n 's/^documentation: //p')
    [ -f "$docs/online.md" ] || fail "scalea --version names no documentation with online.md: '$docs'"
    "$scalea" run -q -o done.exp -- /bin/true > /dev/null 2>&1 || fail "cannot make done.exp"
    expect 2 "^scalea report: done.exp: no snapshots \(run the program with SCALEA_SNAPSHOT=1s, or scalea run --snapshot 1s; $docs/online.md\)$" \
      report done.exp --over-time
    expect 2 '^scalea report: runs/docs/online.md: no such experiment' report runs/docs/online.md
    expect 2 '^scalea report: mydocs/online.md: no such experiment' report mydocs/online.md
    expect 2 '^scalea report: docs/online.md: no such experiment' report docs/online.md
    # The listing is read as --help is; its markdown is the user guide's table and keeps docs/.
    "$scalea" settings SNAPSHOT > out || fail "scalea settings SNAPSHOT"
    grep -q "$docs/online.md" out || fail "scalea settings SNAPSHOT does not name $docs/online.md: $(cat out)"
    "$scalea" settings --markdown SNAPSHOT > out || fail "scalea settings --markdown SNAPSHOT"
    grep -q '(10 ms to 1 h; a bare number is seconds; docs/online.md)' out ||
      fail "scalea settings --markdown does not keep docs/online.md: $(cat out)"
    ;;
  sampling)
    # libunwind unreadable (an empty file bound over it in a mount namespace of its own, where
    # the machine lets root make one): the program runs as without the tool, sampling is off,
    # said once and in meta.json.
    lib=$(ldconfig -p 2> /dev/null | sed -n 's/^[[:space:]]*libunwind\.so\.8 .*=> //p' | head -n 1)
    rc=77
    if [ -n "$lib" ] && unshare -m true 2> /dev/null; then
      unshare -m bash -c "mount --bind /dev/null '$(readlink -f "$lib")' 2> /dev/null || exit 77
        OMP_NUM_THREADS=2 exec '$scalea' run -o '$work/nounwind' -- '$bin/omp/sampled'" > out 2> err
      rc=$?
      echo "scalea run without libunwind -> $rc: $(cat err)"
    fi
    if [ $rc = 77 ]; then
      echo "skipped: libunwind hidden (no mount namespace, or no mount in it, here)"
    else
      [ $rc = 0 ] || fail "the program's exit status is $rc without libunwind"
      [ "$(grep -c '^truth' out)" = 4 ] || fail "the program's output changed without libunwind: $(cat out)"
      [ "$(grep -c '^scalea: call-path sampling is off: cannot open libunwind.so.8 (Debian: libunwind8)$' err)" = 1 ] ||
        fail "sampling's end is not said once"
      python3 - "$work/nounwind/meta.json" <<'PY' || fail "meta.json does not say sampling was off"
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
sys.exit(0 if not s["on"] and "libunwind" in s["off_reason"] and s["samples"] == 0 else 1)
PY
    fi
    ;;
  *) echo "unknown group $group"; exit 1 ;;
esac
if [ $fails != 0 ]; then echo "FAIL: $group: $fails failure(s)"; exit 1; fi
echo "PASS: $group"
