#!/usr/bin/env bash
# validate_tuning.sh -- the source-aware advice and `scalea tune` on real codes nobody here wrote
# (docs/validation.md, "Source-aware advice and scalea tune on real codes").
#
# usage: scripts/validate_tuning.sh [-w WORKDIR] [--build DIR] [--only REGEX] [--no-tune]
#                                   [--no-runs] [--tune-reps N] [--tune-passes N]
#                                   [--wait-quiet S] SRC_DIR...
#
#   SRC_DIR   a fetched checkout (a git directory, bare or a clone's .git, or a directory holding
#             .git, or an extracted tree), recognised by its files:
#               NPB3.0-omp-C (github:benchmark-subsetting/NPB3.0-omp-C: sys/setparams.c, CG/cg.c),
#               LULESH 2.0 (github:LLNL/LULESH: lulesh.cc),
#               BOTS (github:bsc-pm/bots: common/bots_main.c, omp-tasks/).
#   -w DIR    everything goes here (default /tmp/scalea-validate-tuning): src/, runs/, reports/,
#             tune/, logs/
#   --build   the scalea build directory (default /tmp/bval)
#   --only    only the cases whose name matches (e.g. 'lu|lulesh')
#   --no-tune only the runs and reports, no `scalea tune`
#   --no-runs only `scalea tune` (the codes are still extracted and built when missing)
#   --tune-reps N    `scalea tune -r N` (default 3)
#   --tune-passes N  how many times each tune case is run, to see whether its gain holds (default 2)
#   --wait-quiet S   before each run and tune, wait up to S seconds for the 1-minute load average
#             to fall below 1.0 (default 0: do not wait); load.txt has the load of each step
#
# Builds (clang -fopenmp -g -O2, `nice -n 19`): NPB LU and SP class W, CG class A (CG.W runs
# 0.1 s); LULESH's OpenMP build (-DUSE_MPI=0); BOTS sparselu_single and health (task codes),
# floorplan (a critical section) and alignment_for (a schedule(dynamic) loop creating tasks).
# Cases (each at 1 thread, the reference, and 2 threads under `scalea run`; the report is
# `scalea report RUN -r REF --findings 8`):
#   npb-lu      lu.W           npb-sp   sp.W          npb-cg  cg.A
#   lulesh      lulesh2.0-omp -s 30 -i 100
#   bots-sparselu  sparselu -n 50 -m 64 -c      bots-health  health -f small.input -x 2 -c
#   bots-floorplan floorplan -f input.15 -c     bots-alignment  alignment_for -f prot.20.aa -c
# Tune cases (2 threads, `scalea tune -r N --expect REGEX --timeout 300`, --tune-passes times):
#   npb-cg      cg.A --expect 'Verification += +SUCCESSFUL'
#   lulesh      --expect 'Final Origin Energy += +1\.322672e\+06' (the -s 30 -i 100 run's energy)
# Each writes runs/CASE-t{1,2}.exp, .out; reports/CASE.txt; tune/CASE.passN/ (tune.json, runs)
# and tune/CASE.passN.txt (its table); load.txt has `uptime` before and after each step.
# The runs are `nice -n 19` (the machine may be shared): every timing figure is noisy.
set -euo pipefail
work=/tmp/scalea-validate-tuning build=/tmp/bval only=. tune=1 runs=1 treps=3 tpasses=2 quiet_s=0
srcs=()
while [ $# -gt 0 ]; do
  case $1 in
    -w) work=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-tune) tune=0; shift ;;
    --no-runs) runs=0; shift ;;
    --tune-reps) treps=$2; shift 2 ;;
    --tune-passes) tpasses=$2; shift 2 ;;
    --wait-quiet) quiet_s=$2; shift 2 ;;
    -h|--help) sed -n '2,39p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "validate_tuning: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) srcs+=("$1"); shift ;;
  esac
done
[ ${#srcs[@]} -gt 0 ] || { echo "validate_tuning: no SRC_DIR given (see --help)" >&2; exit 2; }
scalea=$build/bin/scalea
[ -x "$scalea" ] || { echo "validate_tuning: no $scalea: give --build" >&2; exit 2; }
for tool in clang clang++ make git tar; do
  command -v "$tool" > /dev/null || { echo "validate_tuning: $tool not found" >&2; exit 2; }
done
mkdir -p "$work"/{src,runs,reports,logs,tune}
work=$(cd "$work" && pwd)
N="nice -n 19"
wait_quiet() {
  for _ in $(seq "$quiet_s"); do
    awk '{ exit !($1 < 1.0) }' /proc/loadavg && return 0
    sleep 1
  done
}
stamp() { echo "$(date -u +%H:%M:%S) $1: $(uptime | sed 's/.*load average/load average/')" >> "$work/load.txt"; }
load() { wait_quiet; stamp "$1"; }

extract() {  # extract SRC DEST: the checkout's HEAD (or the tree) into DEST
  local src=$1 dest=$2 gitdir=""
  [ -d "$dest" ] && return 0
  if [ -f "$src/HEAD" ] && [ -d "$src/objects" ]; then gitdir=$src
  elif [ -d "$src/.git" ]; then gitdir=$src/.git
  elif [ -d "$src/repo/objects" ]; then gitdir=$src/repo; fi
  mkdir -p "$dest"
  if [ -n "$gitdir" ]; then
    git --git-dir="$gitdir" archive HEAD 2> /dev/null | tar -x -C "$dest"
    git --git-dir="$gitdir" rev-parse --short HEAD > "$dest/.validate-commit"
  else
    cp -a "$src"/. "$dest"/
  fi
}

FLAGS="-O2 -g -fopenmp"
build_one() {  # build_one NAME: compile one code in src/NAME (log in logs/build-NAME.log)
  local d=$work/src/$1 log=$work/logs/build-$1.log
  case $1 in
    npb)
      cat > "$d/config/make.def" << EOF
CC = clang
CLINK = clang
C_LIB = -lm
C_INC = -I../common
CFLAGS = $FLAGS
CLINKFLAGS = $FLAGS
UCC = clang -O
BINDIR = ../bin
RAND = randdp
WTIME = wtime.c
EOF
      mkdir -p "$d/bin"
      (cd "$d" && for kc in lu:W sp:W cg:A; do
        [ -x "bin/${kc%:*}.${kc#*:}" ] || $N make "${kc%:*}" CLASS="${kc#*:}" || exit 1
      done) > "$log" 2>&1 ;;
    lulesh)
      # shellcheck disable=SC2086  # FLAGS is a list of flags
      (cd "$d" && { [ -x lulesh2.0-omp ] || $N clang++ $FLAGS -DUSE_MPI=0 ./*.cc -o lulesh2.0-omp; }) > "$log" 2>&1 ;;
    bots)
      mkdir -p "$d/bin"
      (cd "$d" && for e in "sparselu|sparselu/sparselu_single|" "health|health|-DMANUAL_CUTOFF" \
          "floorplan|floorplan|-DMANUAL_CUTOFF" "alignment_for|alignment/alignment_for|"; do
        IFS='|' read -r app sub flags <<< "$e"
        [ -x "bin/$app" ] && continue
        # BOTS' own makefiles need an interactive ./configure; the compile is one command per app.
        # shellcheck disable=SC2086
        $N clang $FLAGS $flags -Icommon -Iomp-tasks/$sub -DCDATE='"validate"' -DCMESSAGE='""' \
          -DCC='"clang"' -DLD='"clang"' -DCFLAGS="\"$FLAGS $flags\"" -DLDFLAGS='"-lm"' \
          common/bots_main.c common/bots_common.c omp-tasks/$sub/*.c -lm -o "bin/$app" || exit 1
      done) > "$log" 2>&1 ;;
  esac || { echo "validate_tuning: building $1 failed:" >&2; tail -n 5 "$log" >&2; exit 1; }
}

codes=()
for s in "${srcs[@]}"; do
  tmp=$work/src/.probe && rm -rf "$tmp" && extract "$s" "$tmp"
  name=""
  [ -f "$tmp/sys/setparams.c" ] && [ -f "$tmp/CG/cg.c" ] && name=npb
  [ -f "$tmp/lulesh.cc" ] && name=lulesh
  [ -f "$tmp/common/bots_main.c" ] && [ -d "$tmp/omp-tasks" ] && name=bots
  [ -n "$name" ] || { echo "validate_tuning: $s is none of the codes this script knows" >&2; exit 2; }
  if [ -d "$work/src/$name" ] && cmp -s "$tmp/.validate-commit" "$work/src/$name/.validate-commit"; then
    rm -rf "$tmp"  # the same commit: keep its builds
  else
    rm -rf "$work/src/$name" && mv "$tmp" "$work/src/$name"
  fi
  echo "building $name" && stamp "build $name" && build_one "$name"
  codes+=("$name")
done

# run_case NAME VERIFY-REGEX -- COMMAND...: the command at 1 thread (NAME-t1, the reference) and
# at 2 threads (NAME-t2) under scalea run, and reports/NAME.txt
run_case() {
  local name=$1 verify=$2; shift 3
  [[ $name =~ $only ]] && [ $runs = 1 ] || return 0
  local t
  for t in 1 2; do
    local exp=$work/runs/$name-t$t.exp
    rm -rf "$exp"
    load "run $name-t$t"
    local t0=$SECONDS
    OMP_NUM_THREADS=$t $N "$scalea" run -q -o "$exp" -- "$@" > "$work/runs/$name-t$t.out" 2>&1 ||
      echo "validate_tuning: $name-t$t failed" >&2
    local v=no
    grep -Eq "$verify" "$work/runs/$name-t$t.out" && v=yes
    echo "$name-t$t: $((SECONDS - t0)) s, verified $v"
  done
  "$scalea" report "$work/runs/$name-t2.exp" -r "$work/runs/$name-t1.exp" --findings 8 \
    > "$work/reports/$name.txt" 2>&1 || true
  echo "$name: $(grep -c '^  [0-9]\.' "$work/reports/$name.txt" || true) findings, $(grep -c '^pattern' "$work/reports/$name.txt" || true) pattern lines"
}

# tune_case NAME EXPECT -- COMMAND...: scalea tune at 2 threads, --tune-passes times
tune_case() {
  local name=$1 expect=$2; shift 3
  [[ $name =~ $only ]] && [ $tune = 1 ] || return 0
  local p
  for p in $(seq "$tpasses"); do
    local out=$work/tune/$name.pass$p
    rm -rf "$out"
    load "tune $name pass $p"
    local t0=$SECONDS
    OMP_NUM_THREADS=2 $N "$scalea" tune -r "$treps" --timeout 300 -o "$out" --expect "$expect" -- "$@" \
      > "$out.txt" 2>&1 || echo "validate_tuning: tune $name pass $p exited $?" >&2
    echo "tune $name pass $p: $((SECONDS - t0)) s (tune/$name.pass$p.txt)"
  done
}

s=$work/src
npb_ok='Verification += +SUCCESSFUL'
for code in "${codes[@]}"; do
  case $code in
    npb)
      run_case npb-lu "$npb_ok" -- "$s/npb/bin/lu.W"
      run_case npb-sp "$npb_ok" -- "$s/npb/bin/sp.W"
      run_case npb-cg "$npb_ok" -- "$s/npb/bin/cg.A"
      tune_case npb-cg "$npb_ok" -- "$s/npb/bin/cg.A" ;;
    lulesh)
      run_case lulesh 'Final Origin Energy += +1\.322672e\+06' -- "$s/lulesh/lulesh2.0-omp" -s 30 -i 100
      tune_case lulesh 'Final Origin Energy += +1\.322672e\+06' -- "$s/lulesh/lulesh2.0-omp" -s 30 -i 100 ;;
    bots)
      run_case bots-sparselu 'Verification +=  *successful' -- "$s/bots/bin/sparselu" -n 50 -m 64 -c
      run_case bots-health 'Verification +=  *successful' -- \
        "$s/bots/bin/health" -f "$s/bots/inputs/health/small.input" -x 2 -c
      run_case bots-floorplan 'Verification +=  *successful' -- \
        "$s/bots/bin/floorplan" -f "$s/bots/inputs/floorplan/input.15" -c
      run_case bots-alignment 'Verification +=  *successful' -- \
        "$s/bots/bin/alignment_for" -f "$s/bots/inputs/alignment/prot.20.aa" -c ;;
  esac
done
stamp end
echo "reports in $work/reports, tune tables in $work/tune"
