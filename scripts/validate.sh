#!/usr/bin/env bash
# validate.sh -- run scalea on real codes nobody here wrote (NPB3.0-omp-C, LULESH 2.0, BOTS)
# and collect what it says about them, with the codes' own verification and the tool's cost.
#
# usage: scripts/validate.sh [options] SRC_DIR...
#
#   SRC_DIR        a fetched checkout of one of the codes: a git directory (bare, or the .git
#                  of a clone; HEAD is extracted with `git archive HEAD | tar -x`), a directory
#                  holding .git, or an already extracted tree. The code is recognised by its
#                  files: NPB3.0-omp-C (sys/setparams.c, CG/cg.c), LULESH 2.0 (lulesh.cc),
#                  BOTS (common/bots_main.c, omp-tasks/). E.g.
#                    /work/.mirror/benchmark-subsetting+NPB3.0-omp-C/repo/.git
#                    /work/.mirror/LLNL+LULESH/repo  /work/.mirror/bsc-pm+bots/repo
#
# options:
#   -w, --workdir DIR   everything goes here (default /tmp/scalea-validate); re-running reuses
#                       the builds whose sources and flags did not change and redoes the runs
#   --build DIR         the scalea build directory (default: <this repo>/build); it must hold
#                       bin/scalea, lib/libscalea-omp.so, lib/libscalea-mpi.so and
#                       lib/libscalea-noop-tool.so (the no-op OMPT tool, apps/bench/noop_tool.c)
#   --reps N            timed repetitions per variant (bare, no-op tool, scalea), interleaved,
#                       default 5; the figure kept is the minimum
#   --no-timing         skip the timed runs (analysis runs and reports only)
#   --timing-only       skip the analysis runs and reports (build, timed runs, summary): for the
#                       tool's cost alone (docs/performance.md, "The tool on real codes")
#   --summary-only      redo only summary.md/.json and evidence.md from what the work directory
#                       holds (no build, run or report)
#   --only REGEX        only the cases whose name matches (e.g. 'npb-(cg|lu)', 'lulesh', 'bots')
#   --counters LIST     counters of the analysis runs (default
#                       perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,perf::TASK-CLOCK; "none" for none)
#   --variants LIST     the timed variants, in the order of the first round (default
#                       "bare noop tool light scalea"); nosample is `scalea run --sample off`,
#                       so that "scalea nosample" times call-path sampling's cost alone
#                       (paired by round: scalea against nosample, docs/performance.md)
#   --timeout S         kill any single run after S seconds (default 300)
#   --wait-quiet S      before each analysis run and each timing round, wait up to S seconds
#                       for the machine to be idle (no other runnable process for 2 s, from
#                       /proc/loadavg); the state is logged and kept in status.tsv/timing.tsv
#                       (default 0: do not wait). On a shared machine, e.g. --wait-quiet 120.
#   --retry-disturbed N redo an analysis run up to N times (default 2) when other processes
#                       took the CPUs from its threads (on-CPU below 90 %, see "summary"); the
#                       least disturbed run is kept. Needs perf::TASK-CLOCK in --counters. Cases
#                       that share CPUs by design (p > CPUs, mpirun's default binding of a
#                       rank with 2 threads) are not redone.
#   -h, --help          this text
#
# What it does, per code:
#   build  NPB: CG MG EP IS FT BT SP LU at class W, clang -O2 -g -fopenmp (config/make.def);
#          LULESH: OMPI_CXX=clang++ mpicxx -O2 -g -fopenmp -DUSE_MPI=1 (lulesh2.0) and
#          clang++ -O2 -g -fopenmp -DUSE_MPI=0 (lulesh2.0-omp);
#          BOTS: fib nqueens sort health strassen sparselu (omp-tasks, sparselu_single, manual
#          cut-off where the code has one), clang -O2 -g -fopenmp.
#   cases  NPB: each kernel at 1 and 2 threads. LULESH MPI build: 1 rank x 1 thread -s 30
#          (the reference), 8 ranks x 1 thread -s 15 (the same global problem, reported with
#          --force because the arguments differ), 1 rank x 2 threads with mpirun's default
#          binding and with --bind-to none; OpenMP build: 1, 2 and 4 threads (4 oversubscribes
#          2 cores). BOTS: each at 1 and 2 threads, sort also at 4. All -i 100 for LULESH.
#   runs   one analysis run per case under `scalea run --counters LIST` (runs/CASE.exp, its
#          output runs/CASE.out; redone when disturbed, --retry-disturbed); the code's own verification is checked (NPB "Verification =
#          SUCCESSFUL", BOTS "Verification = successful", LULESH the symmetry test MaxRelDiff
#          <= 1e-8 and the final origin energy equal to the 1-rank -s 30 run's to 1e-6).
#   report reports/CASE.txt and CASE.json: `scalea report RUN -r REF` for p > 1 (the p = 1
#          case of the same build and input), `scalea report RUN` for p = 1 (T_s estimated);
#          reports/CASE.noise.txt/.json (p = 1 cases, --reps >= 2): timed scalea repetition 2
#          against repetition 1 -- identical configurations, so every finding there is
#          run-to-run noise.
#   timing per case, --reps rounds of bare / no-op tool / the tool through OMP_TOOL_LIBRARIES /
#          the same in light mode (SCALEA_OPENMP=light) / scalea run (order rotated per round),
#          wall time of the whole command (mpirun included), the load average before each;
#          timing.tsv has every run, summary.md the minima and the dilations.
#   evidence evidence.md: per case, each thread's time at the program root outside every region
#          (against the "unparallelized" class), and for each barrier finding the per-thread
#          times of the construct before the barrier and of the barrier (docs/validation.md W1, W2)
#   summary summary.md and summary.json: per case p, verified, minima, dilation against bare
#          and against the no-op tool, load average, and the top 3 findings as scalea prints
#          them, and "on-CPU": TASK-CLOCK / thread time in the top-level parallel regions of the
#          analysis run (below ~90 %, other processes took CPUs from the program's threads and
#          the run's overheads hold that; docs/validation.md is written from the summary, with
#          a human judgment per finding).
#
# Runs go under `nice -n 5` (the machine is shared). As root, mpirun gets
# OMPI_ALLOW_RUN_AS_ROOT=1; every mpirun gets --oversubscribe. Needs: git, tar, make,
# clang, clang++, mpicxx and mpirun (Open MPI), python3, timeout. A missing tool, a failed
# extraction or build stops the script with the log's last lines; a failed run or verification
# is recorded in the summary and the script goes on (exit status 1 at the end).
# See docs/validation.md.

set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "validate.sh: error: $*" >&2; exit 2; }
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=/tmp/scalea-validate
BUILD=$HERE/build
REPS=5
VARIANTS=(bare noop tool light scalea)
TIMING=1
ANALYSIS=1
ONLY=
COUNTERS=perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,perf::TASK-CLOCK
TIMEOUT_S=300
WAIT_QUIET=0
RETRIES=2
SUMMARY_ONLY=0
SRCS=()

while [[ $# -gt 0 ]]; do
  case $1 in
    -w|--workdir) [[ $# -ge 2 ]] || die "$1 needs a directory"; WORK=$2; shift 2 ;;
    --build)      [[ $# -ge 2 ]] || die "--build needs a directory"; BUILD=$2; shift 2 ;;
    --reps)       [[ $# -ge 2 ]] || die "--reps needs a number"; REPS=$2; shift 2 ;;
    --no-timing)  TIMING=0; shift ;;
    --timing-only) ANALYSIS=0; shift ;;
    --summary-only) SUMMARY_ONLY=1; shift ;;
    --only)       [[ $# -ge 2 ]] || die "--only needs a regular expression"; ONLY=$2; shift 2 ;;
    --counters)   [[ $# -ge 2 ]] || die "--counters needs a list"; COUNTERS=$2; shift 2 ;;
    --timeout)    [[ $# -ge 2 ]] || die "--timeout needs seconds"; TIMEOUT_S=$2; shift 2 ;;
    --variants)   [[ $# -ge 2 ]] || die "--variants needs a list"; read -r -a VARIANTS <<<"$2"; shift 2 ;;
    --wait-quiet) [[ $# -ge 2 ]] || die "--wait-quiet needs seconds"; WAIT_QUIET=$2; shift 2 ;;
    --retry-disturbed) [[ $# -ge 2 ]] || die "--retry-disturbed needs a number"; RETRIES=$2; shift 2 ;;
    -h|--help)    usage; exit 0 ;;
    --)           shift; SRCS+=("$@"); break ;;
    -*)           die "unknown option '$1' (try --help)" ;;
    *)            SRCS+=("$1"); shift ;;
  esac
done

[[ ${#SRCS[@]} -gt 0 ]] || die "no SRC_DIR given (try --help)"
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps must be a positive integer, got '$REPS'"
[[ $TIMEOUT_S =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer, got '$TIMEOUT_S'"
[[ $WAIT_QUIET =~ ^[0-9]+$ ]] || die "--wait-quiet must be a number of seconds, got '$WAIT_QUIET'"
[[ $RETRIES =~ ^[0-9]+$ ]] || die "--retry-disturbed must be a number, got '$RETRIES'"
[[ $COUNTERS == *perf::TASK-CLOCK* ]] || RETRIES=0
[[ ${#VARIANTS[@]} -gt 0 ]] || die "--variants needs at least one of bare noop tool light scalea nosample"
for v in "${VARIANTS[@]}"; do
  [[ $v =~ ^(bare|noop|tool|light|scalea|nosample)$ ]] ||
    die "unknown variant '$v' in --variants (bare noop tool light scalea nosample)"
done

# ---- tools ---------------------------------------------------------------------------------
for t in git tar make clang clang++ mpicxx mpirun python3 timeout; do
  command -v "$t" >/dev/null || die "'$t' is not on PATH (needed to build or run the codes)"
done
[[ -d $BUILD ]] || die "scalea build directory '$BUILD' does not exist (build scalea first, see README.md)"
BUILD=$(cd "$BUILD" && pwd)
SCALEA=$BUILD/bin/scalea
NOOP=$BUILD/lib/libscalea-noop-tool.so
[[ -x $SCALEA ]] || die "$SCALEA is missing (build scalea first: cmake --build $BUILD)"
[[ -f $BUILD/lib/libscalea-omp.so ]] || die "$BUILD/lib/libscalea-omp.so is missing (target scalea-omp)"
[[ -f $BUILD/lib/libscalea-mpi.so ]] || die "$BUILD/lib/libscalea-mpi.so is missing (target scalea-mpi; needs MPI at configure time)"
[[ -f $NOOP ]] || die "$NOOP is missing (target scalea-noop-tool, apps/bench)"

mkdir -p "$WORK" || die "cannot create the work directory '$WORK'"
WORK=$(cd "$WORK" && pwd)
mkdir -p "$WORK"/{src,bin,logs,runs,reports,timing}

if [[ $(id -u) == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl_base_warn_component_unused=0
unset OMP_TOOL_LIBRARIES OMP_PROC_BIND OMP_PLACES SCALEA_OUTPUT
export OMP_TOOL=enabled
SCRIPT_START=$(date +%s)
log "work directory $WORK; scalea $SCALEA; load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- sources -------------------------------------------------------------------------------
# git_dir_of PATH -> prints the git directory PATH is or holds, or nothing (an extracted tree)
git_dir_of() {
  local p=$1
  if [[ -f $p/HEAD && -d $p/objects ]]; then echo "$p"
  elif [[ -d $p/.git ]]; then echo "$p/.git"
  fi
}

# kind_of DIR -> npb | lulesh | bots | ""
kind_of() {
  local d=$1
  if [[ -f $d/sys/setparams.c && -f $d/CG/cg.c ]]; then echo npb
  elif [[ -f $d/lulesh.cc ]]; then echo lulesh
  elif [[ -f $d/common/bots_main.c && -d $d/omp-tasks ]]; then echo bots
  fi
}

declare -A SRC=()      # kind -> extracted tree under $WORK/src
declare -A SRC_ID=()   # kind -> commit (or "tree:<path>") for the build stamps
for s in "${SRCS[@]}"; do
  [[ -d $s ]] || die "source '$s' is not a directory"
  s=$(cd "$s" && pwd)
  gd=$(git_dir_of "$s")
  if [[ -n $gd ]]; then
    commit=$(git --git-dir="$gd" rev-parse HEAD 2>/dev/null) || die "'$gd' is a git directory without a HEAD commit"
    tmp=$WORK/src/.extract.$$
    rm -rf -- "$tmp"; mkdir -p "$tmp"
    git --git-dir="$gd" archive HEAD | tar -x -C "$tmp" || die "extracting HEAD of '$gd' failed"
    kind=$(kind_of "$tmp")
    [[ -n $kind ]] || { rm -rf -- "$tmp"; die "'$s' is neither NPB3.0-omp-C, LULESH 2.0 nor BOTS (no sys/setparams.c, lulesh.cc or common/bots_main.c at HEAD)"; }
    dest=$WORK/src/$kind
    if [[ -f $dest/.validate-commit && $(cat "$dest/.validate-commit") == "$commit" ]]; then
      rm -rf -- "$tmp"       # same commit: keep the tree (and the builds in it)
      log "source $kind: $gd at ${commit:0:7} (already extracted)"
    else
      rm -rf -- "$dest"; mv -- "$tmp" "$dest"; echo "$commit" >"$dest/.validate-commit"
      log "source $kind: $gd at ${commit:0:7}, extracted to $dest"
    fi
    SRC_ID[$kind]=$commit
  else
    kind=$(kind_of "$s")
    [[ -n $kind ]] || die "'$s' is neither NPB3.0-omp-C, LULESH 2.0 nor BOTS, nor a git directory holding one"
    dest=$WORK/src/$kind
    if [[ $s != "$dest" ]]; then
      rm -rf -- "$dest"; mkdir -p "$dest"; cp -a -- "$s/." "$dest/"
    fi
    SRC_ID[$kind]="tree:$s"
    log "source $kind: extracted tree $s, copied to $dest"
  fi
  [[ -z ${SRC[$kind]:-} ]] || die "two sources of the same code ($kind) given"
  SRC[$kind]=$dest
done

# ---- builds --------------------------------------------------------------------------------
# build_step NAME STAMP_TEXT OUTPUT... -- COMMAND...: runs COMMAND (log in logs/build-NAME.log)
# unless every OUTPUT exists and the stamp holds STAMP_TEXT; dies with the log's tail on failure.
build_step() {
  local name=$1 stamp_text=$2; shift 2
  local -a outs=()
  while [[ $1 != -- ]]; do outs+=("$1"); shift; done; shift
  local stamp=$WORK/logs/build-$name.stamp logf=$WORK/logs/build-$name.log ok=1 o
  for o in "${outs[@]}"; do [[ -x $o ]] || ok=0; done
  if [[ $ok == 1 && -f $stamp && $(cat "$stamp") == "$stamp_text" ]]; then
    log "build $name: up to date"
    return 0
  fi
  log "build $name ..."
  rm -f -- "$stamp"
  if ! (nice -n 10 "$@") >"$logf" 2>&1; then
    tail -n 25 -- "$logf" >&2
    die "build $name failed (full log: $logf)"
  fi
  for o in "${outs[@]}"; do
    [[ -x $o ]] || { tail -n 25 -- "$logf" >&2; die "build $name did not produce $o (log: $logf)"; }
  done
  echo "$stamp_text" >"$stamp"
}

NPB_KERNELS=(cg mg ep is ft bt sp lu)
CFLAGS_ALL="-O2 -g -fopenmp"
CC_ID="$(clang --version | head -n1)"

build_npb() {
  local d=${SRC[npb]}
  cat >"$d/config/make.def" <<EOF
CC = clang
CLINK = clang
C_LIB = -lm
C_INC = -I../common
CFLAGS = $CFLAGS_ALL
CLINKFLAGS = $CFLAGS_ALL
UCC = clang -O
BINDIR = ../bin
RAND = randdp
WTIME = wtime.c
EOF
  mkdir -p "$d/bin"
  local k
  for k in "${NPB_KERNELS[@]}"; do
    # the kernels share common/*.o: one at a time
    build_step "npb-$k" "${SRC_ID[npb]} $CC_ID $CFLAGS_ALL W" "$d/bin/$k.W" -- \
      bash -c "cd '$d' && make $k CLASS=W"
    ln -sf "$d/bin/$k.W" "$WORK/bin/$k.W"
  done
}

build_lulesh() {
  local d=${SRC[lulesh]} mpicc_id
  mpicc_id=$(OMPI_CXX=clang++ mpicxx --showme 2>/dev/null || echo mpicxx)
  build_step lulesh-mpi "${SRC_ID[lulesh]} $CC_ID $mpicc_id $CFLAGS_ALL -DUSE_MPI=1" "$d/lulesh2.0" -- \
    bash -c "cd '$d' && OMPI_CXX=clang++ mpicxx $CFLAGS_ALL -DUSE_MPI=1 *.cc -o lulesh2.0"
  build_step lulesh-omp "${SRC_ID[lulesh]} $CC_ID $CFLAGS_ALL -DUSE_MPI=0" "$d/lulesh2.0-omp" -- \
    bash -c "cd '$d' && clang++ $CFLAGS_ALL -DUSE_MPI=0 *.cc -o lulesh2.0-omp"
  ln -sf "$d/lulesh2.0" "$WORK/bin/lulesh2.0"
  ln -sf "$d/lulesh2.0-omp" "$WORK/bin/lulesh2.0-omp"
}

# BOTS apps: name, directory under omp-tasks, extra flags (manual cut-off where the code has one)
BOTS_APPS=(
  "fib|fib|-DMANUAL_CUTOFF"
  "nqueens|nqueens|-DMANUAL_CUTOFF"
  "sort|sort|"
  "health|health|-DMANUAL_CUTOFF"
  "strassen|strassen|-DMANUAL_CUTOFF"
  "sparselu|sparselu/sparselu_single|"
)
build_bots() {
  local d=${SRC[bots]} e app sub flags
  mkdir -p "$d/bin"
  for e in "${BOTS_APPS[@]}"; do
    IFS='|' read -r app sub flags <<<"$e"
    # BOTS' own makefiles need an interactive ./configure; the compile is one command per app.
    build_step "bots-$app" "${SRC_ID[bots]} $CC_ID $CFLAGS_ALL $flags" "$d/bin/$app" -- \
      bash -c "cd '$d' && clang $CFLAGS_ALL $flags -Icommon -Iomp-tasks/$sub \
        -DCDATE='\"validate\"' -DCMESSAGE='\"\"' -DCC='\"clang\"' -DLD='\"clang\"' \
        -DCFLAGS='\"$CFLAGS_ALL $flags\"' -DLDFLAGS='\"-lm\"' \
        common/bots_main.c common/bots_common.c omp-tasks/$sub/*.c -lm -o bin/$app"
    ln -sf "$d/bin/$app" "$WORK/bin/bots-$app"
  done
}

if [[ $SUMMARY_ONLY == 0 ]]; then
  [[ -n ${SRC[npb]:-} ]] && build_npb
  [[ -n ${SRC[lulesh]:-} ]] && build_lulesh
  [[ -n ${SRC[bots]:-} ]] && build_bots
fi

# ---- cases ---------------------------------------------------------------------------------
# name | code | binary (in $WORK/bin) | args | threads | ranks (0: no mpirun) | mpirun options |
# verification | reference case | report with --force
CASES=()
if [[ -n ${SRC[npb]:-} ]]; then
  for k in "${NPB_KERNELS[@]}"; do
    CASES+=("npb-$k.W-t1|npb|$k.W||1|0||npb||")
    CASES+=("npb-$k.W-t2|npb|$k.W||2|0||npb|npb-$k.W-t1|")
  done
fi
if [[ -n ${SRC[lulesh]:-} ]]; then
  CASES+=("lulesh-mpi-1x1|lulesh|lulesh2.0|-s 30 -i 100|1|1||lulesh||")
  CASES+=("lulesh-mpi-8x1|lulesh|lulesh2.0|-s 15 -i 100|1|8||lulesh|lulesh-mpi-1x1|force")
  CASES+=("lulesh-mpi-1x2|lulesh|lulesh2.0|-s 30 -i 100|2|1||lulesh|lulesh-mpi-1x1|")
  CASES+=("lulesh-mpi-1x2-nobind|lulesh|lulesh2.0|-s 30 -i 100|2|1|--bind-to none|lulesh|lulesh-mpi-1x1|")
  CASES+=("lulesh-omp-t1|lulesh|lulesh2.0-omp|-s 30 -i 100|1|0||lulesh||")
  CASES+=("lulesh-omp-t2|lulesh|lulesh2.0-omp|-s 30 -i 100|2|0||lulesh|lulesh-omp-t1|")
  CASES+=("lulesh-omp-t4|lulesh|lulesh2.0-omp|-s 30 -i 100|4|0||lulesh|lulesh-omp-t1|")
fi
if [[ -n ${SRC[bots]:-} ]]; then
  # inputs chosen to run about 0.3-2 s at 2 threads on a 2-core VM; -c: the code's own check
  declare -A BOTS_ARGS=(
    [fib]="-n 42 -x 12 -c"
    [nqueens]="-n 13 -x 4 -c"
    [sort]="-n 16777216 -c"
    [health]="-f ${SRC[bots]}/inputs/health/small.input -x 2 -c"
    [strassen]="-n 2048 -x 64 -c"
    [sparselu]="-n 50 -m 64 -c"
  )
  for e in "${BOTS_APPS[@]}"; do
    IFS='|' read -r app _ _ <<<"$e"
    CASES+=("bots-$app-t1|bots|bots-$app|${BOTS_ARGS[$app]}|1|0||bots||")
    CASES+=("bots-$app-t2|bots|bots-$app|${BOTS_ARGS[$app]}|2|0||bots|bots-$app-t1|")
    [[ $app == sort ]] && CASES+=("bots-$app-t4|bots|bots-$app|${BOTS_ARGS[$app]}|4|0||bots|bots-$app-t1|")
  done
fi
if [[ -n $ONLY ]]; then
  sel=()
  for c in "${CASES[@]}"; do [[ ${c%%|*} =~ $ONLY ]] && sel+=("$c"); done
  [[ ${#sel[@]} -gt 0 ]] || die "--only '$ONLY' matches no case"
  CASES=("${sel[@]}")
fi
declare -A CASE_OF=()
for c in "${CASES[@]}"; do CASE_OF[${c%%|*}]=$c; done
log "${#CASES[@]} cases: $(for c in "${CASES[@]}"; do printf '%s ' "${c%%|*}"; done)"

# run_case CASE VARIANT OUTFILE [EXPDIR] -> runs one case; prints wall seconds; returns the exit status
#   VARIANT: bare | noop | tool | light | scalea | nosample | analysis
#   (tool: libscalea-omp.so loaded through OMP_TOOL_LIBRARIES as the no-op tool is, without
#   `scalea run`: the tool's cost in the process alone, beside the no-op floor; light: the same
#   in light mode, SCALEA_OPENMP=light)
run_case() {
  local c=$1 variant=$2 out=$3 exp=${4:-}
  local name code bin args threads ranks mpiopts verify ref force
  IFS='|' read -r name code bin args threads ranks mpiopts verify ref force <<<"$c"
  local -a cmd=() envs=(OMP_NUM_THREADS="$threads") tool=() argv=()
  read -r -a argv <<<"$args"
  case $variant in
    bare) ;;
    noop) rm -f -- "$out.count"
          envs+=(OMP_TOOL_LIBRARIES="$NOOP" NOOP_TOOL_COUNT_FILE="$out.count") ;;
    tool) envs+=(OMP_TOOL_LIBRARIES="$BUILD/lib/libscalea-omp.so" SCALEA_OUTPUT="$exp" SCALEA_QUIET=1) ;;
    scalea) tool=("$SCALEA" run -q -o "$exp" --) ;;
    nosample) tool=("$SCALEA" run -q --sample off -o "$exp" --) ;;
    light) envs+=(OMP_TOOL_LIBRARIES="$BUILD/lib/libscalea-omp.so" SCALEA_OPENMP=light SCALEA_OUTPUT="$exp"
                  SCALEA_QUIET=1) ;;
    analysis)
      if [[ $COUNTERS == none ]]; then tool=("$SCALEA" run -o "$exp" --)
      else tool=("$SCALEA" run -o "$exp" --counters "$COUNTERS" --)
      fi ;;
  esac
  if [[ $ranks -gt 0 ]]; then
    local -a mo=()
    read -r -a mo <<<"$mpiopts"
    cmd=(mpirun --oversubscribe "${mo[@]}" -np "$ranks" -x OMP_NUM_THREADS)
    [[ $variant == noop ]] && cmd+=(-x OMP_TOOL_LIBRARIES -x NOOP_TOOL_COUNT_FILE)
    [[ $variant == tool ]] && cmd+=(-x OMP_TOOL_LIBRARIES -x SCALEA_OUTPUT -x SCALEA_QUIET)
    [[ $variant == light ]] && cmd+=(-x OMP_TOOL_LIBRARIES -x SCALEA_OPENMP -x SCALEA_OUTPUT -x SCALEA_QUIET)
  fi
  cmd+=("${tool[@]}" "$WORK/bin/$bin" "${argv[@]}")
  local t0 t1 rc=0
  t0=$(date +%s%N)
  (cd "$WORK/runs" && env "${envs[@]}" nice -n 5 timeout "$TIMEOUT_S" "${cmd[@]}") >"$out" 2>&1 || rc=$?
  t1=$(date +%s%N)
  printf '%s\n' "${cmd[*]}" >"$out.cmd"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
  return $rc
}

# verified CASE OUTFILE -> prints "yes" or "no: reason"
LULESH_E30=
verified() {
  local c=$1 out=$2 name code bin args threads ranks mpiopts verify ref force
  IFS='|' read -r name code bin args threads ranks mpiopts verify ref force <<<"$c"
  case $verify in
    npb)  grep -Eq 'Verification +=  *SUCCESSFUL' "$out" && echo yes || echo "no: no 'Verification = SUCCESSFUL'" ;;
    bots) grep -Eq 'Verification +=  *successful' "$out" && echo yes || echo "no: no 'Verification = successful'" ;;
    lulesh)
      local e rel
      e=$(sed -n 's/.*Final Origin Energy *= *\([0-9.eE+-]*\).*/\1/p' "$out" | head -n1)
      rel=$(sed -n 's/.*MaxRelDiff *= *\([0-9.eE+-]*\).*/\1/p' "$out" | head -n1)
      if [[ -z $e || -z $rel ]]; then echo "no: no final origin energy / symmetry test in the output"; return; fi
      python3 - "$e" "$rel" "${LULESH_E30:-}" <<'PY'
import sys
e, rel, ref = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
if rel > 1e-8:
    print("no: symmetry test MaxRelDiff %g > 1e-8" % rel)
elif ref and abs(e - float(ref)) > 1e-6 * abs(float(ref)):
    print("no: final origin energy %g differs from the 1-rank -s 30 run's %s" % (e, ref))
else:
    print("yes")
PY
      ;;
    *) echo "no: unknown verification '$verify'" ;;
  esac
}

# wait_quiet -> prints "quiet" or "busy" (after waiting up to WAIT_QUIET s); "-" when not asked.
# Idle: the runnable count of /proc/loadavg (which counts the reader itself) is 1 in 4 samples
# 0.5 s apart.
wait_quiet() {
  [[ $WAIT_QUIET -gt 0 ]] || { echo -; return; }
  local deadline=$(( $(date +%s) + WAIT_QUIET )) ok=0 r
  while :; do
    r=$(cut -d' ' -f4 /proc/loadavg); r=${r%%/*}
    if [[ $r -le 1 ]]; then ok=$((ok + 1)); else ok=0; fi
    [[ $ok -ge 4 ]] && { echo quiet; return; }
    [[ $(date +%s) -ge $deadline ]] && { echo busy; return; }
    sleep 0.5
  done
}

# on_cpu EXP -> TASK-CLOCK / thread time over the top-level parallel regions (e.g. 0.97), or "-"
on_cpu() {
  local t c
  t=$("$SCALEA" drg "$1" --metric time --depth 1 2>/dev/null |
      awk '/^  parallel/ { s += $(NF-5) } END { printf "%.6f", s }')
  c=$("$SCALEA" drg "$1" --metric papi:perf::TASK-CLOCK --depth 1 2>/dev/null |
      awk '/^  parallel/ { s += $(NF-5) } END { printf "%.6f", s / 1e9 }')
  awk -v t="$t" -v c="$c" 'BEGIN { if (t > 0 && c > 0) printf "%.2f\n", c / t; else print "-" }'
}

FAILURES=0
STATUS=$WORK/status.tsv      # case  what  result  seconds  load  quiet
TSV=$WORK/timing.tsv
if [[ $SUMMARY_ONLY == 1 ]]; then
  [[ -f $STATUS ]] || die "--summary-only: $STATUS does not exist (run the script without it first)"
  [[ -f $TSV ]] && TIMING=1 || TIMING=0
else
: >"$STATUS"

# ---- analysis runs -------------------------------------------------------------------------
if [[ $ANALYSIS == 1 ]]; then
log "analysis runs (scalea run --counters $COUNTERS) ..."
for c in "${CASES[@]}"; do
  name=${c%%|*}
  exp=$WORK/runs/$name.exp
  out=$WORK/runs/$name.out
  rm -rf -- "$exp" "$exp".* "$out".try*
  best=-1 besttry=0
  # A case that shares CPUs by design (more PEs than CPUs, or mpirun's default binding of a rank
  # with several threads to one core) is never undisturbed: no retry.
  IFS='|' read -r _ _ _ _ threads ranks mpiopts _ _ _ <<<"$c"
  retries=$RETRIES
  if (( threads * (ranks > 0 ? ranks : 1) > $(nproc) )) ||
     [[ $ranks -gt 0 && $threads -gt 1 && $mpiopts != *"--bind-to none"* ]]; then
    retries=0
  fi
  for ((try = 0; try <= retries; ++try)); do
    quiet=$(wait_quiet)
    load=$(cut -d' ' -f1 /proc/loadavg)
    rc=0
    secs=$(run_case "$c" analysis "$out.try$try" "$exp.try$try") || rc=$?
    cpu=-
    [[ $rc -eq 0 && -f $exp.try$try/meta.json ]] && cpu=$(on_cpu "$exp.try$try")
    printf '%s\t%s\t%s\t%s\t%s\n' "$rc" "$secs" "$load" "$quiet" "$cpu" >"$out.try$try.info"
    # keep the least disturbed try; on-CPU 0.90 and more counts as undisturbed
    [[ $cpu == - ]] && { besttry=$try; break; }
    awk -v a="$cpu" -v b="$best" 'BEGIN { exit !(a > b) }' && { best=$cpu; besttry=$try; }
    awk -v a="$cpu" 'BEGIN { exit !(a >= 0.90) }' && break
    [[ $try -lt $retries ]] && log "  $name: on-CPU $cpu (load $load): disturbed by other processes, again"
  done
  mv -- "$exp.try$besttry" "$exp" 2>/dev/null || true
  mv -- "$out.try$besttry" "$out"
  mv -- "$out.try$besttry.cmd" "$out.cmd"
  IFS=$'\t' read -r rc secs load quiet cpu <"$out.try$besttry.info"
  rm -rf -- "$exp".try* "$out".try*
  v=$(verified "$c" "$WORK/runs/$name.out")
  if [[ $name == lulesh-mpi-1x1 && $v == yes && -z $LULESH_E30 ]]; then
    LULESH_E30=$(sed -n 's/.*Final Origin Energy *= *\([0-9.eE+-]*\).*/\1/p' "$WORK/runs/$name.out" | head -n1)
  fi
  if [[ $rc -ne 0 ]]; then v="no: exit status $rc"; fi
  [[ -f $exp/meta.json ]] || v="$v; no experiment written"
  [[ $v == yes ]] || FAILURES=$((FAILURES + 1))
  printf '%s\tanalysis\t%s\t%s\t%s\t%s\t%s\n' "$name" "$v" "$secs" "$load" "$quiet" "$cpu" >>"$STATUS"
  log "  $name: ${secs}s, verified: $v, load $load${quiet/-/}, on-CPU $cpu  [$(tail -n1 "$WORK/runs/$name.out" | cut -c1-90)]"
done

# ---- reports -------------------------------------------------------------------------------
# report CASE RUN REF OUTBASE: text and JSON; REF empty: no reference
report() {
  local c=$1 run=$2 ref=$3 base=$4 force
  IFS='|' read -r _ _ _ _ _ _ _ _ _ force <<<"$c"
  local -a ra=()
  [[ -n $ref ]] && ra=(-r "$ref")
  [[ -n $ref && $force == force ]] && ra+=(--force)
  local rc=0
  "$SCALEA" report "$run" "${ra[@]}" >"$base.txt" 2>"$base.err" || rc=$?
  "$SCALEA" report "$run" "${ra[@]}" --format json >"$base.json" 2>>"$base.err" || rc=$?
  printf '%s\n' "$SCALEA report $run ${ra[*]}" >"$base.cmd"
  return $rc
}

log "reports ..."
for c in "${CASES[@]}"; do
  IFS='|' read -r name _ _ _ _ _ _ _ ref _ <<<"$c"
  run=$WORK/runs/$name.exp
  [[ -f $run/meta.json ]] || { log "  $name: no experiment, no report"; continue; }
  refexp=
  if [[ -n $ref ]]; then
    refexp=$WORK/runs/$ref.exp
    [[ -f $refexp/meta.json ]] || { log "  $name: reference $ref has no experiment; reported without"; refexp=; }
  fi
  if report "$c" "$run" "$refexp" "$WORK/reports/$name"; then
    log "  $name: reports/$name.txt ($(grep -c '^  [0-9]*\. \[' "$WORK/reports/$name.txt" || true) findings)"
  else
    FAILURES=$((FAILURES + 1))
    printf '%s\treport\tfailed: %s\t\n' "$name" "$(head -n1 "$WORK/reports/$name.err")" >>"$STATUS"
    log "  $name: scalea report failed: $(head -n1 "$WORK/reports/$name.err")"
  fi
done
fi  # ANALYSIS

# ---- timing --------------------------------------------------------------------------------
if [[ $TIMING == 1 ]]; then
  log "timing: $REPS interleaved rounds of ${VARIANTS[*]} per case ..."
  printf 'case\tvariant\tround\tseconds\tstatus\tverified\tload1\tquiet\n' >"$TSV"
  # The previous pass's runs are moved aside now and deleted after this pass: files deleted just
  # before the timed runs would slow the experiments they write. On ext4 without a journal (this
  # project's CI machine) a new file's inode allocation skips the inodes freed in the last minute,
  # one inode-table lookup each: ~300 us per file created after a few thousand deletions, against
  # ~20 us otherwise, and the tool writes a directory and two files.
  OLD_TIMING=""
  if [[ -d $WORK/timing ]]; then
    OLD_TIMING=$WORK/timing.old.$$
    mv -- "$WORK/timing" "$OLD_TIMING"
  fi
  mkdir -p -- "$WORK/timing"
  for c in "${CASES[@]}"; do
    name=${c%%|*}
    for ((r = 1; r <= REPS; ++r)); do
      line=""
      quiet=$(wait_quiet)
      for ((k = 0; k < ${#VARIANTS[@]}; ++k)); do
        v=${VARIANTS[$(((r - 1 + k) % ${#VARIANTS[@]}))]}
        load=$(cut -d' ' -f1 /proc/loadavg)
        exp=$WORK/timing/$name.r$r.exp
        [[ $v == light || $v == tool || $v == nosample ]] && exp=$WORK/timing/$name.r$r.$v.exp
        out=$WORK/timing/$name.$v.out
        rc=0
        secs=$(run_case "$c" "$v" "$out" "$exp") || rc=$?
        ver=$(verified "$c" "$out")
        if [[ $v == noop && $rc -eq 0 && ! -s $out.count ]]; then
          ver="no: the no-op tool wrote no callback count (was it loaded?)"
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$v" "$r" "$secs" "$rc" "$ver" "$load" "$quiet" >>"$TSV"
        line+="$v ${secs}s  "
        [[ $rc -eq 0 && $ver == yes ]] || { FAILURES=$((FAILURES + 1)); line+="(FAILED: rc $rc, $ver) "; }
      done
      log "  $name round $r/$REPS: $line(load $load${quiet/-/})"
    done
    # noise check: timed scalea repetition 2 against repetition 1 of the same p = 1 case
    IFS='|' read -r _ _ _ _ threads ranks _ _ ref _ <<<"$c"
    if [[ $threads == 1 && $ranks -le 1 && -f $WORK/timing/$name.r1.exp/meta.json && -f $WORK/timing/$name.r2.exp/meta.json ]]; then
      report "$c" "$WORK/timing/$name.r2.exp" "$WORK/timing/$name.r1.exp" "$WORK/reports/$name.noise" ||
        log "  $name: noise report failed: $(head -n1 "$WORK/reports/$name.noise.err")"
    fi
  done
  # This pass's and any an interrupted pass left behind.
  [[ -n $OLD_TIMING ]] && rm -rf -- "$WORK"/timing.old.*
fi
fi  # SUMMARY_ONLY

# ---- summary -------------------------------------------------------------------------------
log "summary ..."
python3 - "$WORK" "$REPS" "$TIMING" "$SCALEA" "${CASES[@]}" <<'PY'
import json, os, random, statistics, subprocess, sys
work, reps, timing, scalea = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
cases = [c.split("|") for c in sys.argv[5:]]

def on_cpu(exp):
    """TASK-CLOCK / thread time summed over the top-level parallel regions of an experiment:
    below 1, other processes took the CPUs from the program's threads (spinning waits count as
    on the CPU). None without the counter."""
    def col(metric):
        try:
            out = subprocess.run([scalea, "drg", exp, "--metric", metric, "--depth", "1"],
                                 capture_output=True, text=True, timeout=60).stdout
        except Exception:
            return None
        tot = 0.0
        for line in out.splitlines():
            if line.startswith("  ") and not line.startswith("   ") and line.strip().startswith("parallel"):
                try:
                    tot += float(line.split()[-6])
                except ValueError:
                    pass
        return tot
    t, c = col("time"), col("papi:perf::TASK-CLOCK")
    return c / 1e9 / t if t and c else None

status = {}
for line in open(os.path.join(work, "status.tsv")):
    f = line.rstrip("\n").split("\t")
    if f[1] == "analysis":
        status[f[0]] = (f[2], f[3], f[4] if len(f) > 4 else "", f[5] if len(f) > 5 else "",
                        f[6] if len(f) > 6 else "")

times = {}      # (case, variant) -> [(secs, ok, load)]
by_round = {}   # (case, variant) -> {round: secs}, verified runs only
tsv = os.path.join(work, "timing.tsv")
if timing and os.path.exists(tsv):
    for i, line in enumerate(open(tsv)):
        if i == 0:
            continue
        name, v, r, secs, rc, ver, load = line.rstrip("\n").split("\t")[:7]
        times.setdefault((name, v), []).append((float(secs), rc == "0" and ver == "yes", float(load)))
        if rc == "0" and ver == "yes":
            by_round.setdefault((name, v), {})[r] = float(secs)

# The paired comparison of a variant with the no-op floor: each round's run against the same
# round's no-op run (interleaved, so a slow phase of the machine hits both), the median of those
# ratios and a bootstrap 95 % interval of it (2,000 resamples, fixed seed: the same data gives the
# same interval). Minima alone do not settle a few per cent on a busy or virtual machine.
def paired(name, v, base="noop"):
    a, n = by_round.get((name, v), {}), by_round.get((name, base), {})
    d = [a[r] / n[r] - 1 for r in sorted(set(a) & set(n)) if n[r] > 0]
    if len(d) < 3:
        return None
    rng = random.Random(20)
    boots = sorted(statistics.median(rng.choices(d, k=len(d))) for _ in range(2000))
    return (100 * statistics.median(d), 100 * boots[49], 100 * boots[1950], len(d))

def findings(path, n=3):
    try:
        d = json.load(open(path))
    except Exception as e:
        return None, ["(report unreadable: %s)" % e]
    root = d["regions"][0] if d.get("regions") else {}
    tp = root.get("time")
    to = root.get("overheads", {}).get("total")
    return (tp, to), ["[%s] %s" % (".".join(x for x in (f.get("class"), f.get("subclass")) if x), f["text"])
                   for f in d.get("findings", [])[:n]]

rows = []
for c in cases:
    name, code, bin_, args, threads, ranks, mpiopts, verify, ref, force = c
    p = int(threads) * max(1, int(ranks))
    ver, asecs, aload, aquiet, acpu = status.get(name, ("not run", "", "", "", ""))
    row = {"case": name, "p": p, "threads": int(threads), "ranks": int(ranks),
           "args": args, "mpirun": mpiopts, "reference": ref, "verified_analysis": ver,
           "analysis_s": float(asecs) if asecs else None,
           "analysis_load": float(aload) if aload else None, "analysis_quiet": aquiet,
           "on_cpu": (float(acpu) if acpu not in ("", "-")
                      else on_cpu(os.path.join(work, "runs", name + ".exp")))}
    for v in ("bare", "noop", "tool", "light", "scalea", "nosample"):
        xs = times.get((name, v), [])
        ok = [x for x in xs if x[1]]
        row[v + "_min_s"] = min(x[0] for x in ok) if ok else None
        row[v + "_ok"] = "%d/%d" % (len(ok), len(xs)) if xs else ""
    loads = [x[2] for v in ("bare", "noop", "tool", "light", "scalea", "nosample")
             for x in times.get((name, v), [])]
    row["load_min"], row["load_max"] = (min(loads), max(loads)) if loads else (None, None)
    b, n, s = row["bare_min_s"], row["noop_min_s"], row["scalea_min_s"]
    row["dilation_bare_pct"] = (s / b - 1) * 100 if b and s else None
    row["dilation_noop_pct"] = (s / n - 1) * 100 if n and s else None
    to = row["tool_min_s"]
    row["tool_vs_noop_pct"] = (to / n - 1) * 100 if n and to else None
    li = row["light_min_s"]
    row["light_vs_noop_pct"] = (li / n - 1) * 100 if n and li else None
    for v in ("tool", "light"):
        pr = paired(name, v)
        row[v + "_vs_noop_paired"] = ({"median_pct": pr[0], "ci95_pct": [pr[1], pr[2]], "rounds": pr[3]}
                                      if pr else None)
    # call-path sampling's own cost: `scalea run` (sampling at its default rate) against
    # `scalea run --sample off` of the same round
    pr = paired(name, "scalea", "nosample")
    row["sampling_paired"] = ({"median_pct": pr[0], "ci95_pct": [pr[1], pr[2]], "rounds": pr[3]}
                              if pr else None)
    root, fs = findings(os.path.join(work, "reports", name + ".json"))
    row["T_p"], row["T_o"] = root if root else (None, None)
    row["findings"] = fs
    nz = os.path.join(work, "reports", name + ".noise.json")
    if os.path.exists(nz):
        nroot, nfs = findings(nz, 5)
        row["noise_T_o"] = nroot[1] if nroot else None
        row["noise_findings"] = nfs
    rows.append(row)

json.dump(rows, open(os.path.join(work, "summary.json"), "w"), indent=1)

def f(x, fmt):
    return fmt % x if x is not None else "-"
with open(os.path.join(work, "summary.md"), "w") as o:
    o.write("| case | p | verified (analysis; timed bare/noop/tool/light/scalea) | bare s | noop s | tool s "
            "| light s | scalea s | dil. vs bare | dil. vs noop | tool vs noop | light vs noop "
            "| load 1-min (timed) | T_p | T_o (load) | on-CPU | top findings |\n")
    o.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        ok = "; ".join(x for x in (r["bare_ok"], r["noop_ok"], r["tool_ok"], r["light_ok"], r["scalea_ok"]) if x)
        fs = "<br>".join("%d. %s" % (i + 1, t) for i, t in enumerate(r["findings"])) or "(none)"
        o.write("| %s | %d | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
            r["case"], r["p"], r["verified_analysis"], " (%s)" % ok if ok else "",
            f(r["bare_min_s"], "%.3f"), f(r["noop_min_s"], "%.3f"), f(r["tool_min_s"], "%.3f"),
            f(r["light_min_s"], "%.3f"), f(r["scalea_min_s"], "%.3f"),
            f(r["dilation_bare_pct"], "%+.1f%%"), f(r["dilation_noop_pct"], "%+.1f%%"),
            f(r["tool_vs_noop_pct"], "%+.1f%%"), f(r["light_vs_noop_pct"], "%+.1f%%"),
            "%.2f-%.2f" % (r["load_min"], r["load_max"]) if r["load_min"] is not None else "-",
            f(r["T_p"], "%.3f"),
            f(r["T_o"], "%.3f") + (" (%.2f%s)" % (r["analysis_load"], ", " + r["analysis_quiet"]
                                                  if r["analysis_quiet"] not in ("", "-") else "")
                                   if r["analysis_load"] is not None else ""),
            f(r["on_cpu"] and 100 * r["on_cpu"], "%.0f%%"),
            fs.replace("|", "\\|")))
    if any(r.get("tool_vs_noop_paired") for r in rows):
        o.write("\n## Above the no-op floor, paired by round\n\n")
        o.write("Each round's run against the same round's no-op run: the median of those ratios and "
                "a bootstrap 95 % interval of it.\n\n| case | rounds | tool vs noop | light vs noop |\n"
                "|---|---|---|---|\n")
        def pp(x):
            return ("%+.1f%% [%+.1f, %+.1f]" % (x["median_pct"], x["ci95_pct"][0], x["ci95_pct"][1])
                    if x else "-")
        for r in rows:
            t, li = r.get("tool_vs_noop_paired"), r.get("light_vs_noop_paired")
            if t or li:
                o.write("| %s | %d | %s | %s |\n" % (r["case"], (t or li)["rounds"], pp(t), pp(li)))
    if any(r.get("sampling_paired") for r in rows):
        o.write("\n## Call-path sampling's cost, paired by round\n\n")
        o.write("Each round's `scalea run` (sampling at the default rate) against the same round's "
                "`scalea run --sample off`: the median of those ratios and a bootstrap 95 % interval "
                "of it, with the minima of both.\n\n| case | rounds | nosample min s | scalea min s "
                "| sampling's cost |\n|---|---|---|---|---|\n")
        for r in rows:
            x = r.get("sampling_paired")
            if x:
                o.write("| %s | %d | %s | %s | %+.1f%% [%+.1f, %+.1f] |\n" % (
                    r["case"], x["rounds"], f(r["nosample_min_s"], "%.3f"), f(r["scalea_min_s"], "%.3f"),
                    x["median_pct"], x["ci95_pct"][0], x["ci95_pct"][1]))
    noisy = [r for r in rows if r.get("noise_findings")]
    if noisy:
        o.write("\n## Findings on identical p = 1 configurations (timed scalea repetition 2 vs 1)\n\n")
        o.write("Every finding here is run-to-run noise.\n\n")
        for r in noisy:
            o.write("- %s (T_o %s s): %s\n" % (r["case"], f(r.get("noise_T_o"), "%.3f"),
                                               " / ".join(r["noise_findings"])))

# evidence.md: the per-thread times behind two kinds of findings, to check them by hand
# (docs/validation.md, W1 and W2): the time each thread spent outside every region at the program
# root (serial code on the initial thread; on a worker: idle while the initial thread runs serial
# code, or absent from a region it should be in), and for each barrier finding the per-thread
# times of the construct before the barrier and of the barrier itself.
def per_thread(r):
    return "[" + ", ".join("%.3f" % t["time"] for t in r["per_thread"]) + "]" if r else "-"
with open(os.path.join(work, "evidence.md"), "w") as o:
    o.write("| case | root time outside regions, per thread (s) | loss_of_parallelism.unparallelized (s) |\n|---|---|---|\n")
    barriers = []
    for c in cases:
        name = c[0]
        try:
            d = json.load(open(os.path.join(work, "reports", name + ".json")))
        except Exception:
            continue
        regs = {r["id"]: r for r in d["regions"]}
        kids = {}
        for r in d["regions"]:
            kids.setdefault(r.get("parent"), []).append(r)
        root = d["regions"][0]
        inside = {}
        for k in kids.get(root["id"], []):
            for t in k["per_thread"]:
                key = (t.get("rank", -1), t["thread"])
                inside[key] = inside.get(key, 0.0) + t["time"]
        outside = ["%s%d:%.3f" % ("r%d." % t["rank"] if t.get("rank", -1) >= 0 and root["p"] > 1 and
                                  len({x.get("rank") for x in root["per_thread"]}) > 1 else "",
                                  t["thread"], t["time"] - inside.get((t.get("rank", -1), t["thread"]), 0.0))
                   for t in root["per_thread"]]
        o.write("| %s | %s | %.3f |\n" % (name, " ".join(outside),
                root["overheads"].get("subclasses", {}).get("loss_of_parallelism.unparallelized", 0.0)))
        for f in d.get("findings", []):
            if f.get("subclass") != "barrier" or f.get("node") not in regs:
                continue
            b = regs[f["node"]]
            sib = kids.get(b.get("parent"), [])
            i = [x["id"] for x in sib].index(b["id"])
            prev = sib[i - 1] if i > 0 else None
            barriers.append("| %s | %s | %.3f | %s %s | %s |\n" % (
                name, f["path"].split("/")[-1], f["seconds"],
                prev["path"].split("/")[-1] if prev else "-", per_thread(prev), per_thread(b)))
    o.write("\n| case | barrier finding | s | construct before it, per thread (s) | barrier, per thread (s) |\n|---|---|---|---|---|\n")
    o.writelines(barriers)
print(open(os.path.join(work, "summary.md")).read())
print("per-thread evidence for the findings: %s" % os.path.join(work, "evidence.md"))
PY

elapsed=$(( $(date +%s) - SCRIPT_START ))
log "done in $((elapsed / 60)) min $((elapsed % 60)) s; load $(cut -d' ' -f1-3 /proc/loadavg); $WORK/summary.md"
if [[ $FAILURES -gt 0 ]]; then
  log "$FAILURES run(s), verification(s) or report(s) failed: see $WORK/status.tsv and $WORK/timing.tsv"
  exit 1
fi
