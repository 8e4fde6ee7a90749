#!/usr/bin/env bash
# Bad input to every scalea subcommand (docs/reliability.md, "Bad input").
# Usage: run_cli_bad.sh BIN_DIR CORPUS_DIR GROUP
#   GROUP experiments: missing, empty, a file, truncated, wrong version, huge numbers, every file of
#                      the loader corpus (tests/drg/corpus) as an experiment, given to report,
#                      export, drg and diff
#         flags:       wrong, missing and out-of-range flags of every subcommand
#         env:         bad SCALEA_* values: one warning, the program runs and is measured
#         deep DEPTH [MAX_S MAX_MIB]: a valid experiment whose call tree is DEPTH levels deep (a
#                      recursion), and a study of it: every command must read them, each within
#                      MAX_S seconds and MAX_MIB MiB of peak RSS
# Bad input must give exit status 2 and exactly one line on stderr, starting "scalea", within the
# timeout: never a crash signal, never a hang.
set -u
bin=$(cd "$1" && pwd); corpus=$(cd "$2" && pwd); group=$3
scalea=$bin/scalea
T=${SCALEA_CLI_TIMEOUT:-30}
# Settings of the caller (CI, scripts) must not add warnings to the ones counted here.
for v in $(compgen -e | grep '^SCALEA_'); do unset "$v"; done
tmp=$(mktemp -d /tmp/scalea-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"  # anything written by mistake (a default experiment name) lands here
fails=0; cases=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Where expect_bad and expect_sane keep a command's output (a shard of the corpus has its own).
io=$tmp

# expect_bad ARGS...: exit status 2, one line on stderr that names scalea.
expect_bad() {
  cases=$((cases + 1))
  timeout -s KILL "$T" "$scalea" "$@" > "$io/out" 2> "$io/err" < /dev/null
  local rc=$? lines
  lines=$(wc -l < "$io/err")
  if [ $rc = 137 ]; then fail "scalea $*: killed after ${T}s (hang?)"; return; fi
  if [ $rc -gt 128 ]; then fail "scalea $*: signal $((rc - 128)): $(head -c 300 "$io/err")"; return; fi
  if [ $rc != 2 ]; then fail "scalea $*: exit status $rc, expected 2: $(head -c 300 "$io/err")"; return; fi
  if [ "$lines" != 1 ]; then fail "scalea $*: $lines lines on stderr: $(head -c 600 "$io/err")"; return; fi
  grep -q "^scalea" "$io/err" || fail "scalea $*: the error does not start with scalea: $(cat "$io/err")"
}

# A small real experiment (two threads, one user region), the base for the damaged copies.
good=$tmp/good
make_good() {
  OMP_NUM_THREADS=2 "$scalea" run -q -o "$good" -- "$bin/load_app" events 2 1000 > /dev/null 2>&1 \
    || { echo "FAIL: cannot make the good experiment"; exit 1; }
  rank=$(cd "$good" && ls rank-*.sdrg | head -n1)
}

# expect_sane ARGS...: input that is odd but may be readable: exit 0, or 2 with one line.
expect_sane() {
  cases=$((cases + 1))
  timeout -s KILL "$T" "$scalea" "$@" > "$io/out" 2> "$io/err" < /dev/null
  local rc=$?
  if [ $rc = 137 ]; then fail "scalea $*: killed after ${T}s (hang?)"; return; fi
  if [ $rc -gt 128 ]; then fail "scalea $*: signal $((rc - 128)): $(head -c 300 "$io/err")"; return; fi
  [ $rc = 0 ] || [ $rc = 2 ] || { fail "scalea $*: exit status $rc: $(head -c 300 "$io/err")"; return; }
  [ $rc = 0 ] || [ "$(wc -l < "$io/err")" = 1 ] || fail "scalea $*: not one line: $(head -c 600 "$io/err")"
}

# Each damaged experiment is given to the commands that read experiments.
readers() {
  local d=$1
  expect_bad report "$d"
  expect_bad report "$d" --format json
  expect_bad export --format csv "$d"
  expect_bad drg "$d"
  expect_bad diff "$good" "$d"
}

case $group in
  experiments)
    make_good
    # Sanity: the good experiment is read by every command.
    for c in "report $good" "export --format json $good" "drg $good" "diff $good $good"; do
      timeout -s KILL "$T" "$scalea" $c > /dev/null 2> "$tmp/err" || fail "scalea $c on a good experiment: $(cat "$tmp/err")"
    done
    readers "$tmp/missing"
    mkdir "$tmp/empty"; readers "$tmp/empty"
    echo "not an experiment" > "$tmp/afile"; readers "$tmp/afile"
    # Truncated copies: the rank file cut in half, to its header, to nothing; meta.json cut.
    size=$(stat -c %s "$good/$rank")
    for cut in $((size / 2)) 40 8 0 $((size - 1)); do
      cp -r "$good" "$tmp/trunc$cut"; truncate -s $cut "$tmp/trunc$cut/$rank"; readers "$tmp/trunc$cut"
    done
    cp -r "$good" "$tmp/trunc-meta"; truncate -s 100 "$tmp/trunc-meta/meta.json"; readers "$tmp/trunc-meta"
    cp -r "$good" "$tmp/no-rank"; rm "$tmp/no-rank/$rank"; readers "$tmp/no-rank"
    # meta.json edited: wrong version, wrong format, huge and negative numbers, wrong types.
    edit() {  # edit NAME PYTHON-EXPRESSION-ON-d
      cp -r "$good" "$tmp/$1"
      python3 - "$tmp/$1/meta.json" "$2" <<'PY'
import json, sys
p, expr = sys.argv[1], sys.argv[2]
d = json.load(open(p))
exec(expr)
open(p, "w").write(json.dumps(d) if not isinstance(d, str) else d)
PY
      readers "$tmp/$1"
    }
    edit version-next 'd["format_version"] += 1'  # a version after this scalea's
    edit version-0 'd["format_version"] = 0'
    edit version-huge 'd["format_version"] = 10**30'
    edit version-float 'd["format_version"] = 1.5'
    edit version-string 'd["format_version"] = "1"'
    edit format-other 'd["format"] = "something-else"'
    edit ranks-huge 'd["ranks"] = 10**30'
    edit ranks-negative 'd["ranks"] = -1'
    # More ranks declared than rank files is allowed (ranks that died before writing).
    cp -r "$good" "$tmp/ranks-2e9"
    sed -i 's/"ranks": 1,/"ranks": 2147483648,/' "$tmp/ranks-2e9/meta.json"
    expect_sane report "$tmp/ranks-2e9"; expect_sane drg "$tmp/ranks-2e9"
    edit files-huge 'd["files"] = ["rank-%06d.sdrg" % i for i in range(100000)]'
    edit files-traversal 'd["files"] = ["../../../../etc/passwd"]'
    edit files-empty 'd["files"] = []'
    edit files-number 'd["files"] = 7'
    edit meta-array 'd = "[1, 2, 3]"'
    edit meta-nan 'd = json.dumps(d).replace("\"ranks\": 1", "\"ranks\": NaN")'
    edit meta-deep 'd = "[" * 100000 + "]" * 100000'
    edit meta-bignum 'd = json.dumps(d).replace("\"ranks\": 1", "\"ranks\": 1" + "0" * 400)'
    # The rank file with bytes flipped in its middle (CRC) and with a huge count in its header.
    # Inverted, not overwritten: 0xff bytes written where the file already holds -1 change nothing
    # (the middle moves with the length of the program's path).
    cp -r "$good" "$tmp/flipped"
    python3 - "$tmp/flipped/$rank" <<'PY'
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(os.path.getsize(sys.argv[1]) // 2); b = f.read(4)
    f.seek(-len(b), 1); f.write(bytes(x ^ 0xFF for x in b))
PY
    readers "$tmp/flipped"
    # The few-files layout: the rank file in a container (as the MPI layer writes it), then that
    # container missing, cut inside the rank file, cut inside its index, and beside a rank file.
    cp -r "$good" "$tmp/container"
    python3 - "$tmp/container" "$rank" <<'PY'
import json, os, struct, sys, zlib
d, rank_file = sys.argv[1], sys.argv[2]
data = open(os.path.join(d, rank_file), "rb").read()
data = data[:32] + struct.pack("<i", 0) + data[36:]  # FileHeader.rank: rank 0 of an MPI job
index = struct.pack("<iIQQ", 0, zlib.crc32(data), 32 + 24, len(data))
head = b"SCALEACN" + struct.pack("<IIIIQ", 1, 32, 1, zlib.crc32(index), 32 + 24 + len(data))
open(os.path.join(d, "node-000000.sdrc"), "wb").write(head + index + data)
os.remove(os.path.join(d, rank_file))
meta = json.load(open(os.path.join(d, "meta.json")))
meta["files"] = ["node-000000.sdrc"]
json.dump(meta, open(os.path.join(d, "meta.json"), "w"))
PY
    timeout -s KILL "$T" "$scalea" report "$tmp/container" > /dev/null 2> "$tmp/err" \
      || fail "scalea report on a good container: $(cat "$tmp/err")"
    csize=$(stat -c %s "$tmp/container/node-000000.sdrc")
    cp -r "$tmp/container" "$tmp/container-missing"; rm "$tmp/container-missing/node-000000.sdrc"
    readers "$tmp/container-missing"
    for cut in $((csize - 1)) 60 40 0; do
      cp -r "$tmp/container" "$tmp/container-cut$cut"
      truncate -s $cut "$tmp/container-cut$cut/node-000000.sdrc"; readers "$tmp/container-cut$cut"
    done
    cp -r "$tmp/container" "$tmp/container-mixed"; cp "$good/$rank" "$tmp/container-mixed/"
    readers "$tmp/container-mixed"
    # Every file of the loader corpus as an experiment: .sdrg as the rank file (beside the good
    # meta.json), .json as meta.json (beside the good rank file), .fuzz (the fuzz harness layout:
    # a mode byte, then meta.json and the files it names, separated by "\n@@\n") split into files.
    n=0 dirs=()
    for f in "$corpus"/*; do
      name=$(basename "$f"); d=$tmp/corpus-$name; n=$((n + 1))
      case $name in
        *.sdrg) cp -r "$good" "$d"; cp "$f" "$d/$rank" ;;
        *.json) cp -r "$good" "$d"; cp "$f" "$d/meta.json" ;;
        *.fuzz)
          mkdir "$d"
          python3 - "$f" "$d" <<'PY'
import json, sys
data = open(sys.argv[1], "rb").read()[1:]
parts = data.split(b"\n@@\n")
open(sys.argv[2] + "/meta.json", "wb").write(parts[0])
try:
    names = json.loads(parts[0]).get("files", [])
except Exception:
    names = []
for name, part in zip(names if isinstance(names, list) else [], parts[1:]):
    if isinstance(name, str) and "/" not in name and name not in ("", ".", ".."):
        open(sys.argv[2] + "/" + name, "wb").write(part)
PY
          ;;
        *) continue ;;
      esac
      dirs+=("$d")
    done
    [ $n -ge 50 ] || fail "only $n corpus files in $corpus"
    # The commands on the corpus are independent: one shard per CPU (at most 4), each with its
    # own output files, counts added up after (under ASan this halves the group's time).
    shards=$(nproc); [ "$shards" -le 4 ] || shards=4
    for k in $(seq 0 $((shards - 1))); do
      (
        io=$tmp/shard$k cases=0 fails=0; mkdir -p "$io"
        for i in "${!dirs[@]}"; do [ $((i % shards)) = "$k" ] && readers "${dirs[$i]}"; done
        echo "$cases $fails" > "$io/counts"
      ) &
    done
    wait
    for k in $(seq 0 $((shards - 1))); do
      read -r c f < "$tmp/shard$k/counts" || { fail "corpus shard $k gave no counts"; continue; }
      cases=$((cases + c)); fails=$((fails + f))
    done
    # A good experiment given as the reference of a bad one and the other way round.
    expect_bad report "$good" -r "$tmp/empty"
    expect_bad export --format extrap "$good" "$tmp/trunc8"
    expect_bad export --format hatchet "$good" -r "$tmp/afile"
    expect_bad diff "$good" "$good" --ref-a "$tmp/missing"
    ;;
  flags)
    make_good
    expect_bad bogus
    expect_bad --bogus
    expect_bad report
    expect_bad report "$good" --bogus
    expect_bad report "$good" extra-positional
    expect_bad report "$good" --format bogus
    expect_bad report "$good" --view bogus
    expect_bad report "$good" --depth -1
    expect_bad report "$good" --depth 99999999999999999999
    expect_bad report "$good" --depth 4294967296
    expect_bad report "$good" --min-time -5
    expect_bad report "$good" --min-time abc
    expect_bad report "$good" --pes 0
    expect_bad report "$good" --pes -3
    expect_bad report "$good" --pes 99999999999999999999
    expect_bad report "$good" --findings -1
    expect_bad report "$good" --top -2
    expect_bad report "$good" --machine "$tmp/no-such-machine.json"
    echo '{"broken' > "$tmp/bad-machine.json"
    expect_bad report "$good" --machine "$tmp/bad-machine.json"
    expect_bad report "$good" --html "$tmp/no/such/dir/r.html"
    expect_bad report "$good" --format
    expect_bad export "$good"
    expect_bad export --format bogus "$good"
    expect_bad export --format csv
    expect_bad export --format csv "$good" -o "$tmp/no/such/dir/out.csv"
    expect_bad export --format csv "$good" --pes 0
    expect_bad export --format csv "$good" --pes 99999999999999999999
    expect_bad export --format json "$good" --findings -7
    expect_bad diff "$good"
    expect_bad diff "$good" "$good" "$good"
    expect_bad diff "$good" "$good" --format bogus
    expect_bad diff "$good" "$good" --min-change -1
    expect_bad drg
    expect_bad drg "$good" --graph bogus
    expect_bad drg "$good" --format bogus
    expect_bad drg "$good" --metric no-such-metric
    expect_bad drg "$good" --depth -1
    expect_bad drg "$good" --depth 99999999999999999999
    expect_bad run
    expect_bad run --bogus -- "$bin/load_app" events 1 10
    expect_bad run -o "$good" -- "$bin/load_app" events 1 10
    expect_bad run -o "" -- "$bin/load_app" events 1 10
    expect_bad run -- "$tmp/no-such-program"
    # A launcher given to scalea run instead of scalea run given to the launcher.
    expect_bad run -- mpirun -np 2 "$bin/load_app" events 1 10
    expect_bad run -- "$tmp"
    expect_bad run -- "$good/meta.json"
    expect_bad study
    expect_bad study -o "$tmp/s1"
    expect_bad study -o "$tmp/s2" --threads 0 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s3" --threads 1,,2 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s4" --threads abc -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s5" --threads 99999999999999999999 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s6" --threads 1,2 --repeat 0 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s7" --threads 1,2 --repeat 99999999999999999999 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s8" --threads 1,2 --timeout -1 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s9" --ranks -2 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s10" --resume
    expect_bad study -o "$good" --threads 1,2 -- "$bin/load_app" events 1 10
    expect_bad study -o "$tmp/s11" --threads 1,2 -- "$tmp/no-such-program"
    expect_bad calibrate --bogus
    expect_bad calibrate extra-positional
    ;;
  env)
    # Bad values of the settings the tool reads: one warning naming the setting, the program
    # runs with its own exit status and the experiment is written.
    for kv in SCALEA_CLOCK=bogus SCALEA_ENABLE=maybe SCALEA_QUIET=2 SCALEA_START=later \
              SCALEA_PAPI=perhaps SCALEA_OUTPUT= SCALEA_NO_SUCH_SETTING=1 SCALEA_COUNTERS=no::SUCH-EVENT; do
      cases=$((cases + 1))
      key=${kv%%=*}
      cases_env=$((${cases_env:-0} + 1)); exp=$tmp/env$cases_env
      out=$(cd "$tmp" && env "$kv" OMP_TOOL_LIBRARIES="$bin/../lib/libscalea-omp.so" \
        $( [ "$key" = SCALEA_OUTPUT ] || echo SCALEA_OUTPUT=$exp ) \
        timeout -s KILL "$T" "$bin/load_app" events 2 1000 2>&1); rc=$?
      [ $rc = 0 ] || { fail "$kv: the program's exit status is $rc: $out"; continue; }
      echo "$out" | grep -q "load_app: events p=2 pairs=1000 ok" || fail "$kv: the program did not run: $out"
      pat=$key; [ "$key" = SCALEA_COUNTERS ] && pat=no::SUCH-EVENT  # the warning names the event
      warnings=$(echo "$out" | grep -c -- "$pat")
      [ "$warnings" = 1 ] || fail "$kv: $warnings lines name $key, expected one warning: $out"
      if [ "$key" != SCALEA_OUTPUT ]; then
        [ -f "$exp/meta.json" ] || fail "$kv: no experiment written: $out"
      fi
    done
    # The CLI's own settings.
    make_good
    cases=$((cases + 1))
    echo '{"broken' > "$tmp/bad-machine.json"
    SCALEA_MACHINE=$tmp/bad-machine.json timeout -s KILL "$T" "$scalea" report "$good" > /dev/null 2> "$tmp/err"; rc=$?
    [ $rc = 0 ] || [ $rc = 2 ] || fail "SCALEA_MACHINE=corrupt: exit status $rc"
    [ "$(wc -l < "$tmp/err")" -le 1 ] || fail "SCALEA_MACHINE=corrupt: more than one line: $(cat "$tmp/err")"
    cases=$((cases + 1))
    SCALEA_LIBOMP=$tmp/no-such-libomp.so timeout -s KILL "$T" "$scalea" run -q -o "$tmp/libomp" -- "$bin/load_app" events 1 10 > /dev/null 2> "$tmp/err"; rc=$?
    [ $rc = 0 ] || [ $rc = 2 ] || fail "SCALEA_LIBOMP=missing: exit status $rc: $(cat "$tmp/err")"
    [ "$(wc -l < "$tmp/err")" -le 1 ] || fail "SCALEA_LIBOMP=missing: more than one line: $(cat "$tmp/err")"
    ;;
  deep)
    # A valid experiment whose call tree is DEPTH levels deep (a recursion), and a study of it at
    # 1 and 2 threads: every command reads them (exit 0, nothing on stderr), each within MAX_S
    # seconds and MAX_MIB MiB of peak RSS (0: no bound). The analyses cost time and memory linear
    # in the nodes; before call paths were interned they grew with depth^2 (8,000 levels took
    # 3.4-7.4 GB), so the bounds of the 100,000-level case fail on that.
    depth=${4:-100000}; max_s=${5:-$T}; max_mib=${6:-0}
    deep=$tmp/deep
    # Without I/O regions: the counts below are the recursion's nodes (under TSan, the program's
    # stdout writes reach the tool through TSan's interceptors and would add regions).
    export SCALEA_IO=off
    "$scalea" run -q -o "$deep" -- "$bin/load_app" deep "$depth" > /dev/null 2>&1 || { echo "FAIL: cannot make the deep experiment"; exit 1; }
    "$scalea" study -o "$tmp/deep.study" --threads 1,2 -- "$bin/load_app" deep "$depth" > /dev/null 2>&1 \
      || { echo "FAIL: cannot make the deep study"; exit 1; }
    shortened=$((depth > 2000 ? depth - 2000 : 0))  # nodes whose call path is printed shortened
    # check COUNT REGEX [COUNT REGEX]... -- ARGS...: runs scalea ARGS once; its stdout must have
    # COUNT lines matching each REGEX (COUNT -: not checked, stdout is dropped). Prints the exit
    # status, seconds and peak MiB.
    check() {
      local counts=() regexes=()
      while [ "$1" != -- ]; do counts+=("$1"); regexes+=("$2"); shift 2; done
      shift
      cases=$((cases + 1))
      local rc secs mib lines
      read -r rc secs mib lines < <(python3 - "$max_s" "$tmp/err" "${#counts[@]}" "${counts[@]}" "${regexes[@]}" "$scalea" "$@" <<'PY'
import os, re, resource, subprocess, sys, threading, time
limit, err, n = float(sys.argv[1]), sys.argv[2], int(sys.argv[3])
counts, regexes, command = sys.argv[4:4 + n], sys.argv[4 + n:4 + 2 * n], sys.argv[4 + 2 * n:]
patterns = [re.compile(r.encode()) for c, r in zip(counts, regexes) if c != "-"]
matched = [0] * len(patterns)
t0 = time.monotonic()
with open(err, "w") as e:
    p = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=e,
                         stdout=subprocess.PIPE if patterns else subprocess.DEVNULL)
    def read():
        for line in p.stdout:
            for i, pattern in enumerate(patterns):
                if pattern.search(line):
                    matched[i] += 1
    reader = threading.Thread(target=read) if patterns else None
    if reader: reader.start()
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = 128 + 9
        p.wait()
    if reader: reader.join()
secs = time.monotonic() - t0
mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(rc if rc >= 0 else 128 - rc, f"{secs:.2f}", f"{mib:.0f}", ",".join(map(str, matched)) or "-")
PY
)
      local what="scalea $* (depth $depth)"
      echo "  $what: exit $rc, $secs s, $mib MiB"
      if [ "$rc" = 137 ]; then fail "$what: killed after ${max_s}s"; return; fi
      [ "$rc" = 0 ] || { fail "$what: exit status $rc: $(head -c 300 "$tmp/err")"; return; }
      [ -s "$tmp/err" ] && fail "$what: wrote to stderr: $(head -c 300 "$tmp/err")"
      [ "$max_mib" = 0 ] || [ "$mib" -le "$max_mib" ] || fail "$what: peak RSS $mib MiB, bound $max_mib MiB"
      local want="" i
      for i in "${!counts[@]}"; do [ "${counts[$i]}" = - ] || want+="${want:+,}${counts[$i]}"; done
      [ "$lines" = "${want:--}" ] || fail "$what: $lines lines match '${regexes[*]}', expected $want"
    }
    nodes=$((depth + 1))
    check - '' -- report "$deep"
    check $nodes '^      "depth": ' $shortened '^      "path": "load_app/\.\.\.\([0-9]+ levels\)\.\.\./' \
      -- report "$deep" --format json
    check $nodes '^"?load_app' -- report "$deep" --format csv
    check - '' -- report "$deep" --format markdown
    check - '' -- report "$deep" --view times
    check $nodes '^      "depth": ' -- report "$deep" -r "$deep" --format json
    check - '' -- export --format csv "$deep"
    check $nodes '^      "depth": ' -- export --format json "$deep"
    check - '' -- export --format dot "$deep"
    check - '' -- export --format hatchet "$deep"
    check - '' -- export --format extrap "$deep"
    check - '' -- export --format html --no-graphviz "$deep"
    check - '' -- drg "$deep"
    check - '' -- drg --graph regions "$deep"
    check - '' -- cache "$deep"
    check - '' -- diff "$deep" "$deep"
    check $nodes '^      "path": ' -- diff "$deep" "$deep" --format json
    check - '' -- diff "$deep" "$deep" --ref-a "$deep" --ref-b "$deep"
    check - '' -- report "$tmp/deep.study"
    check $((2 * nodes)) '^      "path": ' -- report "$tmp/deep.study" --format json
    check - '' -- report "$tmp/deep.study" --format csv
    ;;
  names)
    # A region name that is not UTF-8 (Latin-1 "cafe" with an acute e, byte 0xE9), as a program
    # may pass it: every JSON output is still whole and valid, with U+FFFD for the bad byte.
    # Before, the JSON writer threw on it: `report --format json` stopped half-way with exit 2.
    "$scalea" run -q -o "$tmp/name" -- "$bin/load_app" name $'caf\xe9' > /dev/null 2>&1 \
      || { echo "FAIL: cannot make the experiment"; exit 1; }
    "$scalea" study -o "$tmp/name.study" --threads 1,2 -- "$bin/load_app" name $'caf\xe9' > /dev/null 2>&1 \
      || { echo "FAIL: cannot make the study"; exit 1; }
    json_ok() {  # json_ok ARGS...: scalea ARGS prints one JSON document naming "caf\ufffd"
      cases=$((cases + 1))
      "$scalea" "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
      [ "$rc" = 0 ] || { fail "scalea $*: exit $rc: $(head -c 300 "$tmp/err")"; return; }
      python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert "caf\ufffd" in json.dumps(d, ensure_ascii=False)' \
        "$tmp/out" 2> /dev/null || fail "scalea $*: not whole valid JSON naming the region: $(head -c 200 "$tmp/out")"
    }
    json_ok report "$tmp/name" --format json
    json_ok report "$tmp/name" -r "$tmp/name" --format json
    json_ok export --format json "$tmp/name"
    json_ok export --format hatchet "$tmp/name"
    json_ok diff "$tmp/name" "$tmp/name" --format json
    json_ok report "$tmp/name.study" --format json
    ;;
  *) echo "unknown group $group"; exit 1 ;;
esac
if [ $fails != 0 ]; then echo "FAIL: $group: $fails of $cases cases"; exit 1; fi
echo "PASS: $group ($cases cases)"
