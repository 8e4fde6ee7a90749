#!/usr/bin/env bash
# Builds scalea with a sanitizer in a separate tree and runs the tests that make sense under it.
# Usage: scripts/sanitize.sh [address|thread] [build-dir] [ctest arguments...]
#   address: AddressSanitizer + UndefinedBehaviorSanitizer (default build dir: build-asan)
#   thread:  ThreadSanitizer                                (default build dir: build-tsan)
# Environment: SCALEA_SANITIZE_SUBSET=ci  runs only the CI subset (see docs/reliability.md),
#              SCALEA_SANITIZE_JOBS=N      build and unit-test parallelism (default: nproc),
#              SCALEA_ARCHER=PATH          thread: Archer's libarcher.so (default: LLVM 14's).
# ASan's runtime is linked as a shared library (-shared-libasan) and found through an rpath, so
# every instrumented binary runs as is and the instrumented tool library can be loaded into any
# instrumented program. Programs that are not instrumented (the gcc-built app) get the runtime
# through LD_PRELOAD in a stage of their own. TSan: the default (static) runtime; libomp is not
# instrumented, so OpenMP programs run with LLVM's Archer next to scalea (scripts/tsan/).
# Exclusions and their reasons are next to each regex below and in docs/reliability.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-address}
case $kind in
  address) build=${2:-$here/build-asan} ;;
  thread) build=${2:-$here/build-tsan} ;;
  *) echo "usage: scripts/sanitize.sh [address|thread] [build-dir] [ctest args...]" >&2; exit 2 ;;
esac
shift $(( $# >= 2 ? 2 : $# ))
mkdir -p "$build" && build=$(cd "$build" && pwd)  # absolute: the stages run inside it
jobs=${SCALEA_SANITIZE_JOBS:-$(nproc)}
subset=${SCALEA_SANITIZE_SUBSET:-all}
rtdir=$(clang -print-resource-dir)/lib/linux
unset SCALEA_SANITIZE_SUBSET SCALEA_SANITIZE_JOBS  # the tool would warn about unknown settings
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
stamp() { date +%s; }
t0=$(stamp)

if [ "$kind" = address ]; then
  rt=$rtdir/libclang_rt.asan-x86_64.so
  extra="-shared-libasan"
else
  rt=$rtdir/libclang_rt.tsan-x86_64.so
  extra=""
fi
[ -e "$rt" ] || { echo "sanitize: no sanitizer runtime $rt (install clang's compiler-rt)" >&2; exit 1; }

# libomp 19 as unpacked by scripts/setup-debian.sh into the normal tree: omp19.* tests (full run).
omp19=${SCALEA_LIBOMP19_DIR:-$here/build/third_party/libomp19}
[ -e "$omp19/libomp.so.5" ] || omp19=""
unset SCALEA_LIBOMP19_DIR
# -O1 and line tables only: what the sanitizers' reports need (stack traces with lines), and
# about 15 % less compilation than -O2 -g in the two trees CI builds.
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DSCALEA_SANITIZE="$kind" -DSCALEA_UNITY_BUILD=ON \
  -DCMAKE_C_FLAGS="$extra" -DCMAKE_CXX_FLAGS="$extra" \
  -DCMAKE_EXE_LINKER_FLAGS="$extra -Wl,-rpath,$rtdir" \
  -DCMAKE_SHARED_LINKER_FLAGS="$extra -Wl,-rpath,$rtdir" \
  -DCMAKE_Fortran_COMPILER=NOTFOUND \
  -DSCALEA_LIBOMP19_DIR="$omp19" >/dev/null
cmake --build "$build" -j"$jobs"
t1=$(stamp)
echo "sanitize($kind): configure+build $((t1 - t0)) s" >&2

cd "$build"
ctest_run() {  # ctest_run NAME ARGS...: runs ctest, prints its time, remembers a failure
  local name=$1 s rc failed_fixtures; shift
  s=$(stamp)
  ctest --output-on-failure "$@" 2>&1 | tee "$build/sanitize-$name.log" && rc=0 || rc=$?
  echo "sanitize($kind): $name $(( $(stamp) - s )) s (ctest exit $rc)" >&2
  [ $rc = 0 ] || status=1
  cp Testing/Temporary/LastTest.log "$build/sanitize-$name-full.log" 2>/dev/null || true
  # A fixture whose SetUpTestSuite fails (its program died of a sanitizer report) makes
  # GoogleTest skip the suite's tests, which ctest counts as skipped, not failed: such a failure
  # fails the stage (skips for a missing tool, e.g. Fortran, stay skips).
  failed_fixtures=$(grep -E '^\[  FAILED  \] .*: SetUpTestSuite or TearDownTestSuite' \
    "$build/sanitize-$name-full.log" 2>/dev/null | sort | uniq -c || true)
  if [ -n "$failed_fixtures" ]; then
    echo "sanitize($kind): $name: fixtures failed, their tests show as skipped (output in $build/sanitize-$name-full.log):" >&2
    echo "$failed_fixtures" >&2
    grep -E '\*\*\*Skipped' "$build/sanitize-$name.log" >&2 || true
    status=1
  fi
}
status=0
if [ "$kind" = address ]; then
  # Open MPI, hwloc and PAPI keep allocations until exit by design; their leaks are not ours.
  supp=$build/lsan.supp
  printf '%s\n' 'leak:libopen-pal.so' 'leak:libmpi.so' 'leak:libopen-rte.so' 'leak:libhwloc.so' \
    'leak:libpapi.so' 'leak:libpfm.so' 'leak:libevent' 'leak:libomp.so' > "$supp"
  # verify_asan_link_order=0: `scalea run` preloads libscalea-mpi.so into MPI programs, ahead of
  # the runtime in the initial library list; the runtime still comes before libc in symbol lookup.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
         UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
         LSAN_OPTIONS=suppressions=$supp
  # Excluded under ASan (reasons in docs/reliability.md):
  #   Gcc.        the gcc-built app is not instrumented: runs below with the runtime preloaded
  #   omp19.      the same tests again with libomp 19 (full run only)
  #   Compensation|Calibrate  time the tool's own cost per event: ASan's 2-3x slowdown breaks them
  #   faults.segv ASan's SIGSEGV handler reports the planted crash first (exit 134, not 139)
  #   PlantedPageFaults  ASan's shadow memory adds page faults to the planted count
  #   ScratchPageFaults  weighs page faults against the loop's time (ASan's slowdown of the loop
  #               and its shadow memory's faults change both)
  #   SerialWithReference  fails in the normal build too (groundtruth work in progress)
  #   TasksRunInsideBarrier  asserts a barrier wait near 0 while tasks run in it; under ASan's
  #               slowdown the wait is 60 ms (timing, not memory)
  #   preload.setuid  LeakSanitizer cannot run in a set-user-ID process ("fatal error" at exit)
  #   ForkJoinOfBalancedRegions  judges 1,000 tiny balanced regions by their per-thread times;
  #               the sanitizer's slowdown of the code around them makes them uneven (timing)
  #   run.heap    the tool's own heap is not built under sanitizers (their allocators must see
  #               every block), and the program's heap is the sanitizer's, not glibc's
  #   cli.shared_cpus  judges findings made from a run beside a busy loop on one CPU (timing)
  exclude='Gcc\.|Compensation|Calibrate|faults\.segv|PlantedPageFaults|ScratchPageFaults|SerialWithReference|TasksRunInsideBarrier|ForkJoinOfBalancedRegions|preload\.setuid|run\.heap|cli\.shared_cpus'
  if [ "$subset" = ci ]; then
    # CI: unit tests, the loader corpus, bad input, faults, loads and one of each integration area.
    # cli.deep_tree.20000 takes about 30 s under ASan; cli.deep_tree.300 runs the same code.
    # export.extrap_study runs a study (six runs), as study.Study does; export.extrap runs the
    # same writer.
    # load.taskdeep200k: a 200,000-deep recursion of tasks (half a GiB under the tool; its
    # task lookup runs in every task test).
    exclude="$exclude|omp19\.|study\.Study\.|export\.(html|extrap_study)|apps_|load\.(tasks1m|taskdeep200k|threads64)|consumer\."
    exclude="$exclude|cli\.deep_tree\.20000"
    # The browser-driven pages (html.*: 34 s under ASan; the report's HTML writer runs here in
    # cli.deep_tree.300's export), the PostgreSQL variants of the database tests (the command's
    # code is the SQLite variants'; 21 s), and cli.tune's planted runs (12 s; the normal stage
    # runs them).
    exclude="$exclude|html\.|db\.postgresql\.|cli\.tune"
    # Also: cli.bad_input.experiments (61 s under ASan: the loader corpus it gives the commands
    # runs under ASan in unit.drg's corpus tests; the other bad-input groups stay), cli.online_tune
    # (22 s of planted sleeps; the tuner's core runs in unit.collect.OnlineTuner.*),
    # cli.report_context and db.same_answers (13 s and 6 s; TSan runs the first, the SQLite
    # command tests the second's code).
    exclude="$exclude|cli\.bad_input\.experiments|cli\.online_tune|cli\.report_context|db\.same_answers"
  fi
  # MPI: Open MPI's dlopen'ed components leak at exit and are unloaded before LSan looks, so
  # their leaks have no module to suppress by: MPI tests run with leak detection off.
  mpi='mpi\.|MpiNp\.|SampledMpi|apps_(pricing|lapw)|\.mpi$'
  ctest_run unit -j"$jobs" -L unit -E "$exclude" "$@"
  # One more try for a test that misses a timing tolerance, as in the normal and TSan stages.
  ctest_run integration -LE unit -E "$exclude|$mpi" --repeat until-pass:2 "$@"
  mpi_only=$mpi
  [ "$subset" = ci ] && mpi_only='mpi\.planted\.np2$'
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:verify_asan_link_order=0 \
    ctest_run mpi -R "$mpi_only" -E "$exclude" "$@"
  if [ "$subset" != ci ]; then
    # The gcc-built program is not instrumented: the ASan runtime must come first in it.
    LD_PRELOAD=$rt ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:verify_asan_link_order=0 \
      ctest_run gcc -R 'Gcc\.' "$@"
  fi
else
  # libomp is not instrumented: TSan sees OpenMP's synchronization only through Archer (LLVM's
  # OMPT tool that annotates barriers, tasks and locks). The runtime starts one OMPT tool, so
  # scripts/tsan/archer-mux.c, preloaded into every test process, starts Archer and the tool of
  # OMP_TOOL_LIBRARIES (scalea) together and forwards each callback to both; in programs without
  # TSan or without OpenMP it does nothing.
  archer=${SCALEA_ARCHER:-/usr/lib/llvm-14/lib/libarcher.so}
  unset SCALEA_ARCHER  # the tool would warn about an unknown setting
  [ -e "$archer" ] || { echo "sanitize: no Archer at $archer (install libomp-14-dev)" >&2; exit 1; }
  mux=$build/lib/libarcher-mux.so
  clang -O2 -g -Wall -Wextra -shared -fPIC -DARCHER_MUX_DEFAULT_ARCHER="\"$archer\"" \
    "$here/scripts/tsan/archer-mux.c" -o "$mux" -ldl
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1
  ctest_run unit -j"$jobs" -L unit "$@"
  # The probe: an OpenMP program under scalea that hands data between threads only through
  # OpenMP must be clean with Archer and reported without it; its racy variant must be reported.
  probe=$build/bin/tsan_race_probe
  clang -g -O1 -fopenmp -fsanitize=thread "$here/scripts/tsan/race_probe.c" -o "$probe"
  s=$(stamp) pdir=$(mktemp -d) perr=0
  probe_run() {  # probe_run NAME EXPECT(clean|race) PRELOAD ARGS...
    local name=$1 want=$2 pre=$3 rc=0; shift 3
    LD_PRELOAD=$pre ARCHER_MUX_VERBOSE=1 OMP_TOOL_LIBRARIES=$build/lib/libscalea-omp.so \
      SCALEA_OUTPUT=$pdir/$name "$probe" "$@" > "$pdir/$name.out" 2>&1 || rc=$?
    local got=clean
    grep -q 'WARNING: ThreadSanitizer' "$pdir/$name.out" && got=race
    if [ "$got" != "$want" ] || { [ "$want" = clean ] && [ $rc != 0 ]; } ||
       { [ -n "$pre" ] && ! grep -q 'archer-mux: Archer ([0-9]* callbacks) and the tool ([1-9][0-9]* callbacks) active' "$pdir/$name.out"; }; then
      echo "sanitize(thread): probe $name: expected $want, got $got (exit $rc)" >&2
      cat "$pdir/$name.out" >&2
      perr=1
    fi
  }
  probe_run clean clean "$mux"
  probe_run race race "$mux" race
  # Control: without Archer the barrier hand-off is reported. TSan sees it in most runs, not all
  # (3 of 4 on 2026-11-28): up to three tries, one of them must report it.
  for try in 1 2 3; do
    before=$perr
    probe_run no-archer race "" 2> "$pdir/no-archer.err"
    if [ $perr = "$before" ]; then break; fi
    if [ $try -lt 3 ]; then perr=$before; else cat "$pdir/no-archer.err" >&2; fi
  done
  rm -rf "$pdir"
  echo "sanitize($kind): probe $(( $(stamp) - s )) s (failures $perr)" >&2
  [ $perr = 0 ] || status=1
  # OpenMP programs under scalea with Archer, one at a time (timing tests; one retry as in
  # scripts/test.sh). Excluded (reasons in docs/reliability.md):
  #   Gcc.|mpi.planted.np2.preload  preload or load the instrumented tool into a program that is
  #               not instrumented (the gcc-built app, mpiexec): no TSan runtime there
  #   consumer.   links the installed instrumented library into a project built without TSan
  #   TasksRunInsideBarrier  asserts a barrier wait near 0 while tasks run in it (timing)
  #   ForkJoinOfBalancedRegions  judges 1,000 tiny balanced regions by their per-thread times,
  #               which TSan's slowdown of the instrumented code around them makes uneven (timing)
  #   RecursiveTasksFolded  bounds a task tree's useful time by its leaves' sleeps + 10 %; under
  #               TSan with Archer each of its 126 tasks costs about 60 us more of its own code
  #               (measured: 0.081 s for 0.072 s of leaves in 1 of 5 runs at p = 4 on 2 cores)
  #   Compensation|Calibrate  time the tool's own cost per event (TSan's slowdown)
  #   PlantedPageFaults  TSan's shadow memory adds page faults to the planted count
  #   ScratchPageFaults  weighs page faults against the loop's time (as for ASan)
  #   SerialWithReference  fails in the normal build too (groundtruth work in progress)
  #   faults.*    run below with handle_segv=0 (TSan's SIGSEGV handler would report the planted
  #               crash first) and die_after_fork=0 (the program's fork mode starts threads in the
  #               child of a multi-threaded fork, which TSan refuses by default)
  #   load.tasks1m, load.taskdeep200k  libomp recycles task descriptors in its own
  #               (uninstrumented) pools: TSan reports the reuse, in the baseline run without the
  #               tool too
  #   load.nested3    three levels of nested teams: libomp initialises a mutex of a thread it
  #               hands to an inner team and another thread locks it, ordered by libomp's own
  #               (uninstrumented) atomics; TSan reports it in a quarter of the baseline runs,
  #               without the tool
  #   study.Study.  asserts speedups (> 1.6 on 4 threads) that TSan's slowdown does not reach
  #   run.preload., run.affinity.  run the program with a clean LD_PRELOAD (what they test), which takes the Archer
  #               multiplexer out of the program: TSan then sees OpenMP without its annotations
  #   run.heap    the tool's own heap is not built under sanitizers (as for ASan)
  #   IoRegions.BytesAndTimesAtTheirCallPaths  compares the I/O regions' times with the program's
  #               own timers, which under TSan also hold its interceptors' work (they run before
  #               the tool's wrapper): timing; IoRegions' other tests run
  #   HostTeamsHoldBothTeamsWork  Archer (LLVM 14's libarcher.so, the OMPT tool TSan's OpenMP
  #               support needs) crashes on a host `teams` construct: SEGV inside libarcher.so
  #   cli.messages.(output|top|words|docs)  run programs that are not built with TSan (/bin/echo,
  #               /bin/true, touch) under `scalea run`, which preloads the TSan-built library: the
  #               dynamic loader refuses it ("undefined symbol: __tsan_init") before main; the
  #               messages they check are the command line's, tested in the other stages
  #   cli.tune    runs /bin/true and /bin/false as bad input and failed baselines under `scalea
  #               run` (as cli.messages does); its planted runs are checked in the other stages
  #   Sampling., SampledMpi, cli.messages.sampling  call-path sampling turns itself off under TSan
  #               (it holds signals back to points of its own: docs/sampling.md), before libunwind
  #               is opened; what they check needs the samples or the unwinder. The other tests run
  #               with the sampler's set-up and its refusal
  exclude='Gcc\.|mpi\.planted\.np2\.preload|consumer\.|TasksRunInsideBarrier|ForkJoinOfBalancedRegions|RecursiveTasksFolded|run\.(preload|affinity)\.|run\.heap|Compensation|Calibrate|cli\.shared_cpus|Sampling\.|SampledMpi|HostTeamsHoldBothTeamsWork|IoRegions\.BytesAndTimes|cli\.messages\.(output|top|words|docs|sampling)|cli\.tune'
  exclude="$exclude|PlantedPageFaults|ScratchPageFaults|SerialWithReference|faults\.|load\.(tasks1m|taskdeep200k|nested3)|study\.Study\."
  if [ "$subset" = ci ]; then
    # CI: as for ASan, without libomp 19 and the long or browser-driven tests; no MPI (mpi.*, and
    # the groundtruth's MpiNp.* ranks: 60 s under TSan; the full run has them). Also
    # without the tests of the command's single-threaded parts (bad input, databases, HTML,
    # exports: 150 s under TSan, and the ASan stage runs them); cli.deep_tree and
    # cli.report_context keep the loader's and the classifier's threads under TSan.
    exclude="$exclude|omp19\.|export\.|apps_|mpi\.|MpiNp\.|cli\.deep_tree\.20000"
    exclude="$exclude|cli\.bad_input\.|db\.|html\."
    # cli.online_tune: 20 s of planted sleeps; the tuner's policy core
    # (unit.collect.OnlineTuner.*) runs here with the unit tests.
    exclude="$exclude|cli\.online_tune"
    # load.events1e7: 27 s under TSan (10^7 events of one thread; ASan runs it in 4 s).
    exclude="$exclude|load\.events1e7"
  fi
  # Three tries, not two: this stage runs last in CI, after 20 minutes of both cores busy, and
  # the planted times of its programs (p up to 8 on 2 cores, the instrumented code 5-15 times
  # slower) missed their tolerance twice in a row in 2 of 3 local CI runs on 2026-12-03 (a
  # different test each time; every test passed when the stage ran again on the idle machine).
  # A deterministic defect still fails every try; the normal stage keeps its one retry.
  LD_PRELOAD=$mux ctest_run integration -LE unit -E "$exclude" --repeat until-pass:3 "$@"
  TSAN_OPTIONS=$TSAN_OPTIONS:handle_segv=0:die_after_fork=0 LD_PRELOAD=$mux \
    ctest_run faults -R '^faults\.' "$@"
fi
echo "sanitize($kind): total $(( $(stamp) - t0 )) s" >&2
exit $status
