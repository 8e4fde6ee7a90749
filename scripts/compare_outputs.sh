#!/usr/bin/env bash
# Byte-for-byte comparison of every analysis command's output between two builds of scalea, on
# one corpus of experiments: for refactorings that must not change what users see (docs/
# architecture.md, "Changing the code without changing the outputs").
#
# Usage: scripts/compare_outputs.sh [options] BASE CANDIDATE
#   BASE, CANDIDATE   build directories (holding bin/scalea), or a git revision for BASE: it is
#                     built in <work>/base-build from a worktree of this repository
#   --corpus DIR      the experiments to analyse (made there when absent: see make_corpus)
#   --work DIR        where the outputs go (default /tmp/scalea-compare)
#   --keep-going      list every difference instead of stopping at the first 20
#   --formats         the experiment format instead of the code: BASE (an older build, writing
#                     an older format version) makes the corpus and reads it; then every
#                     experiment is rewritten in CANDIDATE's format (CANDIDATE/bin/drg_upgrade) and
#                     CANDIDATE reads the same measurements from it (docs/experiment-format.md).
#                     With SCALEA_KEEP_MB=0 in the environment the candidate keeps no file's
#                     threads between passes: each pass decodes only its columns again
#
# The corpus is made once, by CANDIDATE's collector: OpenMP programs of apps/omp and tests (every
# planted shape, tasks, locks, nesting, a gcc-built program where gcc is present), MPI programs at
# 1, 2 and 4 ranks, a scaling study, and runs with counters. Then every command that reads
# experiments runs on it with each build: report (text, json, csv, markdown, every view, with and
# without a reference), export (every format), diff, drg, cache and the study report (text and
# HTML). Exit status 0 when every output is identical, 1 when some differ (the first lines of
# each diff are shown), 2 on bad usage.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=/tmp/scalea-compare
corpus=""
limit=20
formats=0
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --corpus) corpus=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --keep-going) limit=1000000; shift ;;
    --formats) formats=1; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare_outputs: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} = 2 ] || { echo "compare_outputs: give BASE and CANDIDATE (see --help)" >&2; exit 2; }
base=${args[0]}; cand=$(cd "${args[1]}" && pwd)
[ -x "$cand/bin/scalea" ] || { echo "compare_outputs: $cand/bin/scalea not found" >&2; exit 2; }
mkdir -p "$work"
corpus=${corpus:-$work/corpus}
[ $formats = 1 ] && corpus=${corpus%/}-formats
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SCALEA_QUIET=1

# BASE as a git revision: built once in a worktree.
if [ ! -x "$base/bin/scalea" ]; then
  rev=$(git -C "$here" rev-parse --verify "$base^{commit}" 2>/dev/null) ||
    { echo "compare_outputs: $base is neither a build directory nor a git revision" >&2; exit 2; }
  src=$work/base-src; bld=$work/base-build
  if [ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" != "$rev" ]; then
    git -C "$here" worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
    git -C "$here" worktree add --detach "$src" "$rev" > /dev/null
  fi
  echo "compare_outputs: building $base ($rev) in $bld" >&2
  cmake -S "$src" -B "$bld" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
  # With --formats BASE makes the corpus: its collector and the programs too.
  if [ $formats = 1 ]; then cmake --build "$bld" > /dev/null; else cmake --build "$bld" --target scalea > /dev/null; fi
  base=$bld
fi
base=$(cd "$base" && pwd)

# ---- the corpus ----
make_corpus() {
  local c=$1 maker=$cand
  [ $formats = 1 ] && maker=$base
  local s=$maker/bin/scalea omp=$maker/bin/omp
  mkdir -p "$c"
  echo "compare_outputs: making the corpus in $c" >&2
  run() { local dir=$1 p=$2; shift 2; OMP_NUM_THREADS=$p "$s" run -q -o "$c/$dir" -- "$@" > /dev/null 2>&1 || true; }
  for p in 1 2 4; do
    run imbalance.p$p $p "$omp/imbalance" 10
    run locks.p$p $p "$omp/locks" 2 2
    run single.p$p $p "$omp/single" 10 2
    run tasks.p$p $p "$omp/tasks" 8 5
    for mode in "slowloop 8 5 0.5" "pipeline 4 4 5" "tasks 50 50 1" "partial 5 5" "reduction 8 2" "recursive 5 1"; do
      set -- $mode
      run "shapes-$1.p$p" $p "$omp/shapes" $mode
    done
  done
  run nested 2 "$omp/nested" 10
  run constructs 2 "$omp/constructs"
  OMP_NUM_THREADS=2 "$s" run -q --counters perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES -o "$c/counters.p2" -- "$omp/shapes" slowloop 8 5 0.5 > /dev/null 2>&1 || true
  if [ -x "$omp/imbalance_gcc" ]; then run gcc.p2 2 "$omp/imbalance_gcc" 10; fi
  local mpirun; mpirun=$(command -v mpirun || true)
  if [ -n "$mpirun" ] && [ -x "$maker/bin/mpi_planted" ]; then
    for np in 1 2 4; do
      "$mpirun" --oversubscribe -np $np "$s" run -q -o "$c/mpi_planted.np$np" -- "$maker/bin/mpi_planted" 0.2 > /dev/null 2>&1 || true
      "$mpirun" --oversubscribe -np $np "$s" run -q -o "$c/mpi_shapes.np$np" -- "$maker/bin/mpi_shapes" allreduce 3 0.01 > /dev/null 2>&1 || true
    done
    OMP_NUM_THREADS=2 "$mpirun" --oversubscribe -np 2 "$s" run -q -o "$c/mpi_hybrid.np2" -- "$maker/bin/mpi_hybrid" 0.5 > /dev/null 2>&1 || true
  fi
  "$s" study -o "$c/study" --threads 1,2 --repeat 2 -- "$omp/shapes" slowloop 8 5 0.5 > /dev/null 2>&1 || true
}
[ -d "$corpus" ] && [ -n "$(ls -A "$corpus" 2>/dev/null)" ] || make_corpus "$corpus"
# A run with snapshots (report --over-time), added to a corpus made before it was part of it.
if [ ! -d "$corpus/snapshots.p2" ]; then
  maker=$cand; [ $formats = 1 ] && maker=$base
  OMP_NUM_THREADS=2 "$maker/bin/scalea" run -q --snapshot 100ms -o "$corpus/snapshots.p2" -- \
    "$maker/bin/omp/shapes" slowloop 8 5 0.5 > /dev/null 2>&1 || true
fi

# ---- the commands: one per line, EXP and REF stand for experiment paths ----
commands_for() {  # commands_for EXP [REF]
  local e=$1 r=${2:-}
  local ref=""; [ -n "$r" ] && ref="-r $r"
  echo "report $e"
  echo "report $e --format json"
  echo "report $e --format csv"
  echo "report $e --format markdown"
  echo "report $e --view times"
  echo "report $e --view mpi"
  echo "report $e --unfold --findings 10"
  if [ -n "$r" ]; then
    echo "report $e $ref --force"
    echo "report $e $ref --force --format json"
    echo "export --format csv $e $ref --force"
    echo "export --format html --no-graphviz $e $ref --force"
    echo "diff $e $r"
    echo "diff $e $r --format json"
  fi
  for f in csv json dot hatchet extrap; do echo "export --format $f $e"; done
  echo "export --format html --no-graphviz $e"
  echo "drg $e"
  echo "drg $e --graph regions"
  echo "drg $e --metric visits --depth 3"
  echo "cache $e"
  echo "cache $e --format json"
  echo "report $e --html /dev/stdout --findings 2"
  echo "report $e --html /dev/stdout --no-source --format json"
  echo "report $e --depth 1 --min-time 0.001 --findings 0"
}

list=$work/commands
: > "$list"
for e in "$corpus"/*/; do
  e=${e%/}
  name=$(basename "$e")
  [ "$name" = study ] && continue
  ref=""
  case $name in
    *.p2|*.p4) ref="$corpus/${name%.p*}.p1" ;;
    *.np2|*.np4) ref="$corpus/${name%.np*}.np1" ;;
  esac
  [ -n "$ref" ] && [ -d "$ref" ] || ref=""
  commands_for "$e" "$ref" >> "$list"
done
if [ -d "$corpus/study" ]; then
  for f in text json csv markdown; do echo "report $corpus/study --format $f" >> "$list"; done
  echo "export --format html --no-graphviz $corpus/study" >> "$list"
  {
    echo "export --format html --no-graphviz --findings 1 $corpus/study"
    echo "report $corpus/study --top 1 --findings 2"
    echo "report $corpus/study --region loop --format json"
    echo "report $corpus/study --top 0 --format csv"
    echo "report $corpus/study --html /dev/stdout --no-source"
    echo "report $corpus/study -r $corpus/imbalance.p1"
    echo "report $corpus/study --view times"
    echo "report $corpus/study --region no-such-region"
  } >> "$list"
fi
# Over time, and what each command says of itself and of bad input.
for f in text csv json markdown; do
  echo "report $corpus/snapshots.p2 --over-time --format $f" >> "$list"
done
{
  echo "report $corpus/snapshots.p2 --over-time --interval 300ms --top 2"
  echo "report $corpus/snapshots.p2 --over-time --interval 1ms"
  echo "report $corpus/imbalance.p2 --over-time"
  echo "report $corpus/imbalance.p2 --compensate --machine /nonexistent.json"
  echo "report $corpus/no-such-experiment"
  echo "export --format csv $corpus/study"
  echo "export --format extrap $corpus/imbalance.p1 $corpus/imbalance.p2 $corpus/imbalance.p4"
  echo "export --list-formats"
  echo "--help"
  for c in run report cache drg study export diff calibrate top db; do echo "$c --help"; done
} >> "$list"

# ---- run both builds ----
# Each side runs every command; with --formats the corpus is rewritten in CANDIDATE's format
# between the two sides (and put back afterwards), at the same paths, so outputs stay comparable.
out=$work/outputs
rm -rf "$out"; mkdir -p "$out"
run_side() {  # run_side base|cand BUILD
  local side=$1 bin=$2 i=0
  while IFS= read -r cmd; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    ( cd "$work" && "$bin/bin/scalea" $cmd > "$out/$side.$i.out" 2> "$out/$side.$i.err"; echo "exit $?" >> "$out/$side.$i.err" ) || true
  done < "$list"
}
run_side base "$base"
if [ $formats = 1 ]; then
  [ -x "$cand/bin/drg_upgrade" ] || { echo "compare_outputs: $cand/bin/drg_upgrade not found" >&2; exit 2; }
  rm -rf "$corpus.v1"; cp -a "$corpus" "$corpus.v1"
  trap 'rm -rf "$corpus"; mv "$corpus.v1" "$corpus"' EXIT
  find "$corpus" -name meta.json -not -path '*/snapshots/*' -printf '%h\n' | xargs -r "$cand/bin/drg_upgrade"
fi
run_side cand "$cand"
n=0; differ=0
while IFS= read -r cmd; do
  n=$((n + 1))
  if ! cmp -s "$out/base.$n.out" "$out/cand.$n.out" || ! cmp -s "$out/base.$n.err" "$out/cand.$n.err"; then
    differ=$((differ + 1))
    if [ $differ -le $limit ]; then
      echo "DIFFERS: scalea $cmd"
      diff "$out/base.$n.out" "$out/cand.$n.out" | head -8 || true
      diff "$out/base.$n.err" "$out/cand.$n.err" | head -4 || true
    fi
  fi
done < "$list"
echo "compare_outputs: $n command(s) on $(ls "$corpus" | wc -l) experiment(s): $differ differ"
[ $differ = 0 ]
