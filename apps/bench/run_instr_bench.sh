#!/usr/bin/env bash
# run_instr_bench.sh -- instructions per construct of OMPT tools, counted by callgrind.
#
# usage: run_instr_bench.sh --micro PATH --noop PATH [--tool NAME=PATH]...
#                           [--bench "forkjoin barrier for lock"] [--n 20000] [--threads 1]
#                           [--env NAME=VALUE]...
#
#   --micro PATH        omp_micro executable
#   --noop PATH         libscalea-noop-tool.so (the floor)
#   --tool NAME=PATH    a tool library to count (repeatable: e.g. before=... after=...);
#                       NAME caliper* runs it with CALI_USE_OMPT=1 CALI_SERVICES_ENABLE=ompt
#   --bench LIST        omp_micro kernels (space or comma separated)
#   --n N               kernel size; each kernel runs with N and 2N units
#   --threads T         OMP_NUM_THREADS (default 1: no waiting to count)
#   --env NAME=VALUE    set for every tool run (repeatable), e.g. SCALEA_OPENMP=light
#
# Instruction counts do not depend on the machine's load: this is the measure to compare
# two builds of the tool with. For each kernel and library the script runs
#   valgrind --tool=callgrind omp_micro BENCH N   and   ... BENCH 2N
# on `strip -g` copies (valgrind 3.19 cannot read clang's DWARF 5), with
# OMP_WAIT_POLICY=passive (the runtime's spinning depends on how valgrind schedules threads),
# SCALEA_QUIET=1 SCALEA_SAMPLE=off (the sampler's work grows with the run's CPU time, which
# valgrind stretches) and prints per unit (one region, barrier, loop or lock pair):
#   process   (I(2N) - I(N)) / N, the whole process's instructions
#   >noop     the same minus the no-op tool's
#   callbacks the tool's registered callbacks (symbols on_*), inclusive, per unit
# docs/performance.md ("Cost per construct") gives the method and the figures.
# Needs valgrind, callgrind_annotate, strip, python3.

set -euo pipefail

die() { echo "run_instr_bench.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }

MICRO='' NOOP='' BENCHES="forkjoin barrier for lock" N=20000 THREADS=1
TOOLS=() ENVS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --micro)   [[ $# -ge 2 ]] || die "--micro needs a path"; MICRO=$2; shift 2 ;;
    --noop)    [[ $# -ge 2 ]] || die "--noop needs a path"; NOOP=$2; shift 2 ;;
    --tool)    [[ $# -ge 2 && $2 == *=* ]] || die "--tool needs NAME=PATH"; TOOLS+=("$2"); shift 2 ;;
    --bench)   [[ $# -ge 2 ]] || die "--bench needs a list"; BENCHES=${2//,/ }; shift 2 ;;
    --n)       [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--n needs a number"; N=$2; shift 2 ;;
    --threads) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--threads needs a number"; THREADS=$2; shift 2 ;;
    --env)     [[ $# -ge 2 && $2 == *=* ]] || die "--env needs NAME=VALUE"; ENVS+=("$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
  esac
done
[[ -x $MICRO ]] || die "omp_micro '$MICRO' is not an executable file"
[[ -f $NOOP ]] || die "no-op tool '$NOOP' does not exist"
for x in valgrind callgrind_annotate strip python3; do
  command -v "$x" >/dev/null || die "$x is needed"
done

WORK=$(mktemp -d /tmp/scalea-instr.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
strip -g -o "$WORK/omp_micro" "$MICRO"
strip -g -o "$WORK/noop.so" "$NOOP"
NAMES=(noop)
declare -A LIB=([noop]=$WORK/noop.so)
for t in "${TOOLS[@]}"; do
  name=${t%%=*} path=${t#*=}
  [[ -f $path ]] || die "tool '$path' does not exist"
  strip -g -o "$WORK/$name.so" "$path"
  NAMES+=("$name")
  LIB[$name]=$WORK/$name.so
done

# count NAME BENCH N -> "total callbacks": the process's instructions and the tool's callbacks'
# inclusive instructions.
count() {
  local name=$1 bench=$2 n=$3 out=$WORK/cg.$1.$2.$3
  local -a env=(OMP_NUM_THREADS="$THREADS" OMP_WAIT_POLICY=passive OMP_TOOL_LIBRARIES="${LIB[$name]}"
                SCALEA_QUIET=1 SCALEA_SAMPLE=off SCALEA_OUTPUT="$WORK/exp.$name.$bench.$n"
                "${ENVS[@]}")
  [[ $name == caliper* ]] && env+=(CALI_USE_OMPT=1 CALI_SERVICES_ENABLE=ompt)
  env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$WORK/omp_micro" "$bench" "$n" >"$out.log" 2>&1 || { cat "$out.log" >&2; die "$name $bench $n failed"; }
  rm -rf "$WORK/exp.$name.$bench.$n"
  local total cbs
  total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out.log")
  # Inclusive counts of the registered callbacks (on_* for scalea, cb_* for the no-op tool and
  # Caliper); one
  # callback calling another (on_reduction) would be counted twice: none of these kernels has one.
  cbs=$(callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
        awk '/(ompt::on|:cb)_[a-z_]+[ (]/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
  echo "$total $cbs"
}

printf '%-9s %-8s %12s %10s %10s\n' bench tool process '>noop' callbacks
for bench in $BENCHES; do
  declare -A PER=()
  for name in "${NAMES[@]}"; do
    read -r a ca < <(count "$name" "$bench" "$N")
    read -r b cb < <(count "$name" "$bench" $((2 * N)))
    PER[$name]=$(python3 -c "print(f'{($b - $a) / $N:.1f} {($cb - $ca) / $N:.1f}')")
  done
  read -r floor _ <<<"${PER[noop]}"
  for name in "${NAMES[@]}"; do
    read -r p c <<<"${PER[$name]}"
    printf '%-9s %-8s %12s %10s %10s\n' "$bench" "$name" "$p" \
      "$(python3 -c "print(f'{$p - $floor:+.1f}')")" "$c"
  done
  unset PER
done
