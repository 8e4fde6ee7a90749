#!/usr/bin/env bash
# validate_mpi.sh -- run scalea on MPI and hybrid codes nobody here wrote, on a quiet machine and
# beside a documented load, and keep what it says about them (docs/validation.md, "MPI and
# hybrid codes").
#
# usage: scripts/validate_mpi.sh [-w WORKDIR] [--build DIR] [--only REGEX] [--load on|off|both]
#                                [--wait-quiet S] SRC_DIR...
#
#   SRC_DIR   a fetched checkout (a git directory, bare or a clone's .git, or a directory holding
#             .git, or an extracted tree), recognised by its files:
#               CoMD (github:ECP-copa/CoMD: src-mpi/, src-openmp/),
#               LULESH 2.0 (github:LLNL/LULESH: lulesh.cc),
#               HPCCG (github:Mantevo/HPCCG: HPCCG.cpp),
#               the Parallel Research Kernels (github:ParRes/Kernels: MPI1/Stencil),
#               the Intel MPI Benchmarks (github:intel/mpi-benchmarks: src_c/).
#   -w DIR    everything goes here (default /tmp/scalea-validate-mpi): src/, runs/, reports/
#   --build   the scalea build directory (default: <this repo>/build)
#   --only    only the cases whose name matches
#   --load    on: every case beside the load; off: quiet only; both (default): each case twice
#   --wait-quiet S  before a quiet case, wait up to S seconds for the 1-minute load average to
#             fall below 0.5 (default 0: do not wait); the load average is printed per case
#
# The load: one busy loop per CPU (`sh -c 'while :; do :; done'` at the runs' priority), started
# before a loaded case and killed after it (each bounded by timeout 600). A quiet case should run
# with nothing else runnable: the report's CPUS lines say when it did not.
#
# Cases (the reference is the same code at one PE; decomposition flags are named with
# --decomposition, sizes that differ per rank with --force):
#   comd-mpi-np{2,4}     CoMD src-mpi -x 20 -y 20 -z 20 -N 40 -n 10 [-i 2 [-j 2]] vs 1 rank
#   comd-omp-t2          CoMD src-openmp, 2 threads vs 1
#   lulesh-np8           LULESH (MPI+OpenMP build, 1 thread) -s 15 -i 50 at 8 ranks vs -s 30 at 1
#   hpccg-np2            HPCCG (MPI+OpenMP, 1 thread) 48 48 48 per rank vs 48 48 96 at 1 rank
#   prk-stencil-np{2,4}  PRK MPI1 Stencil 100 iterations, grid 2000, vs 1 rank
#   prk-transpose-np2    PRK MPI1 Transpose 20 iterations, order 2000, vs 1 rank
#   imb-np2              IMB-MPI1 PingPong Allreduce Barrier Bcast Alltoall -msglog 0:12
#                        -iter 1000 -time 1 (no reference: IMB's loops have no serial version)
# Each writes runs/CASE[.loaded].exp and reports/CASE[.loaded].txt (`scalea report`, findings 8).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=/tmp/scalea-validate-mpi build=$here/build only=. load=both quiet_s=0
srcs=()
while [ $# -gt 0 ]; do
  case $1 in
    -w) work=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --load) load=$2; shift 2 ;;
    --wait-quiet) quiet_s=$2; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "validate_mpi: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) srcs+=("$1"); shift ;;
  esac
done
[ ${#srcs[@]} -gt 0 ] || { echo "validate_mpi: no SRC_DIR given (see --help)" >&2; exit 2; }
scalea=$build/bin/scalea
[ -x "$scalea" ] || { echo "validate_mpi: no $scalea: build scalea first or give --build" >&2; exit 2; }
scalea=$(cd "$build" && pwd)/bin/scalea  # the runs start in $work/runs
for tool in mpicc mpicxx mpirun clang clang++ make git tar; do
  command -v "$tool" > /dev/null || { echo "validate_mpi: $tool not found" >&2; exit 2; }
done
export OMPI_CC=clang OMPI_CXX=clang++ OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$work"/{src,runs,reports,logs}
work=$(cd "$work" && pwd)

extract() {  # extract SRC DEST: the checkout's HEAD (or the tree) into DEST
  local src=$1 dest=$2 gitdir=""
  [ -d "$dest" ] && return 0
  if [ -f "$src/HEAD" ] && [ -d "$src/objects" ]; then gitdir=$src
  elif [ -d "$src/.git" ]; then gitdir=$src/.git
  elif [ -d "$src/repo/objects" ]; then gitdir=$src/repo; fi
  mkdir -p "$dest"
  if [ -n "$gitdir" ]; then
    # Only the source folders: a checkout may hold large files its mirror does not carry.
    local paths
    paths=$(git --git-dir="$gitdir" ls-tree --name-only HEAD | grep -v -E '^(doc|docs|logo)$' || true)
    # shellcheck disable=SC2086
    # (git may complain of large files its mirror left out; what it writes is complete)
    git --git-dir="$gitdir" archive HEAD $paths 2> /dev/null | tar -x -C "$dest"
  else
    cp -a "$src"/. "$dest"/
  fi
}

build_one() {  # build_one NAME: compile one code in src/NAME (log in logs/build-NAME.log)
  local d=$work/src/$1 log=$work/logs/build-$1.log
  case $1 in
    comd)
      (cd "$d/src-mpi" && cp Makefile.vanilla Makefile &&
        sed -i 's/^CC = .*/CC = mpicc/; s/^OPTFLAGS = .*/OPTFLAGS = -O2 -g/' Makefile && make -j2) > "$log" 2>&1
      (cd "$d/src-openmp" && cp Makefile.vanilla Makefile &&
        sed -i 's/^CC = .*/CC = clang/; s/^OPTFLAGS = .*/OPTFLAGS = -O2 -g/; s/^DO_MPI = ON/DO_MPI = OFF/' Makefile &&
        make -j2) >> "$log" 2>&1 ;;
    lulesh)
      (cd "$d" && mpicxx -O2 -g -fopenmp -DUSE_MPI=1 -o lulesh2.0 lulesh.cc lulesh-comm.cc lulesh-viz.cc \
        lulesh-util.cc lulesh-init.cc) > "$log" 2>&1 ;;
    hpccg)
      (cd "$d" && make CXX=mpicxx LINKER=mpicxx USE_MPI=-DUSING_MPI USE_OMP=-DUSING_OMP \
        CPP_OPT_FLAGS="-O2 -g" OMP_FLAGS=-fopenmp) > "$log" 2>&1 ;;
    prk)
      printf 'CC=clang -std=c99 -O2 -g\nOPENMPFLAG=-fopenmp\nMPICC=mpicc -O2 -g\n' > "$d/common/make.defs"
      (cd "$d/MPI1/Stencil" && make stencil && cd ../Transpose && make transpose) > "$log" 2>&1 ;;
    imb)
      (cd "$d/src_c" && make CC=mpicc CPPFLAGS=-DOMPI_SKIP_MPICXX TARGET=MPI1 -j2) > "$log" 2>&1 ;;
  esac || { echo "validate_mpi: building $1 failed:" >&2; tail -n 5 "$log" >&2; exit 1; }
}

codes=()
for s in "${srcs[@]}"; do
  tmp=$work/src/.probe && rm -rf "$tmp" && extract "$s" "$tmp"
  name=""
  [ -d "$tmp/src-mpi" ] && name=comd
  [ -f "$tmp/lulesh.cc" ] && name=lulesh
  [ -f "$tmp/HPCCG.cpp" ] && name=hpccg
  [ -d "$tmp/MPI1/Stencil" ] && name=prk
  [ -f "$tmp/src_c/IMB_benchlist.c" ] && name=imb
  [ -n "$name" ] || { echo "validate_mpi: $s is none of the codes this script knows" >&2; exit 2; }
  rm -rf "$work/src/$name" && mv "$tmp" "$work/src/$name"
  echo "building $name" && build_one "$name"
  codes+=("$name")
done

busy=()
start_load() {
  for _ in $(seq "$(nproc)"); do
    timeout 600 sh -c 'while :; do :; done' &
    busy+=($!)
  done
}
stop_load() {
  [ ${#busy[@]} -gt 0 ] && kill "${busy[@]}" 2> /dev/null || true
  busy=()
}
trap stop_load EXIT
wait_quiet() {
  for _ in $(seq "$quiet_s"); do
    awk '{ exit !($1 < 0.5) }' /proc/loadavg && return 0
    sleep 1
  done
}

# case NAME NP CODE-ENV REPORT-ARGS -- COMMAND...: one run under the tool (and its reference,
# NAME.ref, the same way at 1 rank, when REPORT-ARGS is not "none")
run_case() {
  local name=$1 np=$2 threads=$3 rargs=$4; shift 5
  local suffix="" ref_cmd=() cmd=() seen=0
  for w in "$@"; do
    if [ "$w" = "::" ]; then seen=1; continue; fi
    if [ $seen = 0 ]; then cmd+=("$w"); else ref_cmd+=("$w"); fi
  done
  [[ $name =~ $only ]] || return 0
  for mode in quiet loaded; do
    [ "$load" = on ] && [ $mode = quiet ] && continue
    [ "$load" = off ] && [ $mode = loaded ] && continue
    suffix=$([ $mode = loaded ] && echo .loaded || true)
    local exp=$work/runs/$name$suffix.exp ref=$work/runs/$name$suffix.ref.exp
    rm -rf "$exp" "$ref"
    [ $mode = quiet ] && wait_quiet
    [ $mode = loaded ] && start_load
    local l1; l1=$(cut -d' ' -f1 /proc/loadavg)
    # In $work/runs: codes write files of their own where they run (CoMD's and HPCCG's YAML).
    if [ ${#ref_cmd[@]} -gt 0 ]; then
      (cd "$work/runs" && OMP_NUM_THREADS=1 mpirun -np 1 --oversubscribe "$scalea" run -q -o "$ref" \
        -- "${ref_cmd[@]}") > "$work/runs/$name$suffix.ref.out" 2>&1 ||
        echo "validate_mpi: $name reference failed" >&2
    fi
    if [ "$np" = 0 ]; then
      (cd "$work/runs" && OMP_NUM_THREADS=$threads "$scalea" run -q -o "$exp" -- "${cmd[@]}") \
        > "$work/runs/$name$suffix.out" 2>&1 || echo "validate_mpi: $name failed" >&2
    else
      (cd "$work/runs" && OMP_NUM_THREADS=$threads mpirun -np "$np" --oversubscribe "$scalea" run -q \
        -o "$exp" -- "${cmd[@]}") > "$work/runs/$name$suffix.out" 2>&1 || echo "validate_mpi: $name failed" >&2
    fi
    stop_load
    local args=(--findings 8)
    # shellcheck disable=SC2206
    [ "$rargs" != none ] && args+=(-r "$ref" $rargs)
    "$scalea" report "$exp" "${args[@]}" > "$work/reports/$name$suffix.txt" 2>&1 || true
    echo "$name$suffix: load $l1 before the run; $(grep -c '^  [0-9]\.' "$work/reports/$name$suffix.txt") findings"
  done
}

s=$work/src
for code in "${codes[@]}"; do
  case $code in
    comd)
      a=(-x 20 -y 20 -z 20 -N 40 -n 10)
      run_case comd-mpi-np2 2 1 "--decomposition i,j,k" -- "$s/comd/bin/CoMD-mpi" "${a[@]}" -i 2 :: "$s/comd/bin/CoMD-mpi" "${a[@]}"
      run_case comd-mpi-np4 4 1 "--decomposition i,j,k" -- "$s/comd/bin/CoMD-mpi" "${a[@]}" -i 2 -j 2 :: "$s/comd/bin/CoMD-mpi" "${a[@]}"
      run_case comd-omp-t2 0 2 "" -- "$s/comd/bin/CoMD-openmp" "${a[@]}" :: "$s/comd/bin/CoMD-openmp" "${a[@]}" ;;
    lulesh)
      run_case lulesh-np8 8 1 "--force" -- "$s/lulesh/lulesh2.0" -s 15 -i 50 :: "$s/lulesh/lulesh2.0" -s 30 -i 50 ;;
    hpccg)
      run_case hpccg-np2 2 1 "--force" -- "$s/hpccg/test_HPCCG" 48 48 48 :: "$s/hpccg/test_HPCCG" 48 48 96 ;;
    prk)
      run_case prk-stencil-np2 2 1 "" -- "$s/prk/MPI1/Stencil/stencil" 100 2000 :: "$s/prk/MPI1/Stencil/stencil" 100 2000
      run_case prk-stencil-np4 4 1 "" -- "$s/prk/MPI1/Stencil/stencil" 100 2000 :: "$s/prk/MPI1/Stencil/stencil" 100 2000
      run_case prk-transpose-np2 2 1 "" -- "$s/prk/MPI1/Transpose/transpose" 20 2000 :: "$s/prk/MPI1/Transpose/transpose" 20 2000 ;;
    imb)
      run_case imb-np2 2 1 none -- "$s/imb/src_c/IMB-MPI1" PingPong Allreduce Barrier Bcast Alltoall \
        -msglog 0:12 -iter 1000 -time 1 ;;
  esac
done
echo "reports in $work/reports"
