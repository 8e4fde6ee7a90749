#!/usr/bin/env bash
# What scalea says when a run cannot be measured, when there is nothing to show, and when the
# command line is wrong (docs/user-guide.md): the exact message and exit status of each, under the
# real tool with real programs (/bin/true, /bin/echo, apps/omp/phases).
# Usage: check_messages.sh BIN_DIR WORK_DIR GROUP
#   GROUP words:    mistyped commands and options, program arguments without --, scalea help
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
  *) echo "unknown group $group"; exit 1 ;;
esac
if [ $fails != 0 ]; then echo "FAIL: $group: $fails failure(s)"; exit 1; fi
echo "PASS: $group"
