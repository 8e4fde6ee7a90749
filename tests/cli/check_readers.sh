#!/usr/bin/env bash
# The commands read an experiment's rank files ahead on every core the process may run on
# (docs/drg.md, "On every core"): what they print must not depend on it. A generated MPI+OpenMP
# experiment of many rank files is analysed by each command with the readers (the default on 2 or
# more cores) and bound to one core (`taskset`: no reader), and the outputs compared byte for
# byte; with two damaged rank files, both ways name the first in file order, exit 2.
# Usage: check_readers.sh BIN_DIR
set -u
bin=$(cd "$1" && pwd)
scalea=$bin/scalea
for v in $(compgen -e | grep '^SCALEA_'); do unset "$v"; done
tmp=$(mktemp -d /tmp/scalea-readers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v taskset > /dev/null || { echo "no taskset (util-linux)"; exit 1; }
cores=$(nproc)
[ "$cores" -ge 2 ] || echo "note: $cores core: both ways read without readers here"

"$bin/drg_gen" exp 48 4 60 > /dev/null || { echo "drg_gen failed"; exit 1; }
for cmd in "report exp" "report exp --format json" "report exp --view times" \
           "export --format csv exp" "diff exp exp" "cache exp"; do
  read -r -a args <<< "$cmd"
  "$scalea" "${args[@]}" > all.out 2> all.err; all=$?
  taskset -c 0 "$scalea" "${args[@]}" > one.out 2> one.err; single=$?
  [ $all = 0 ] && [ $single = 0 ] || fail "$cmd: exit $all with readers, $single on one core"
  [ -s all.out ] || fail "$cmd: printed nothing"
  cmp -s all.out one.out || fail "$cmd: output differs with readers ($(wc -c < all.out) against $(wc -c < one.out) bytes)"
done

# Two damaged files: a flipped byte in rank 10 (checksum), rank 20 cut short.
python3 - exp/rank-000010.sdrg <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(2000); b = f.read(1); f.seek(2000); f.write(bytes([b[0] ^ 0xFF]))
PY
truncate -s 100 exp/rank-000020.sdrg
for way in "" "taskset -c 0"; do
  $way "$scalea" report exp > bad.out 2> bad.err; rc=$?
  [ $rc = 2 ] || fail "damaged files${way:+ ($way)}: exit $rc, not 2"
  [ "$(wc -l < bad.err)" = 1 ] || fail "damaged files${way:+ ($way)}: $(wc -l < bad.err) lines on stderr"
  grep -q 'rank-000010.sdrg' bad.err || fail "damaged files${way:+ ($way)}: not the first in file order: $(cat bad.err)"
done

[ $fails = 0 ] && echo "check_readers: all passed ($cores cores)" && exit 0
echo "$fails failure(s)"
exit 1
