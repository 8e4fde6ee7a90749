#!/usr/bin/env bash
# Shared CPUs are part of the diagnosis (docs/overhead-model.md, "How findings are chosen"): two
# threads bound to one CPU, beside a busy loop on the same CPU (taskset; the load is made by the
# test itself and ends with the run, after 10 s at most), spin in libomp's barriers while the
# other has work, and wait for the CPU when they wake.
#  - the report says the waiting threads spun, how long they waited, and OMP_WAIT_POLICY=passive
#    (header and the findings' preface); not when the run already waited passively;
#  - a fork/join finding names the threads' wait for a CPU first, with its figure;
#  - a barrier after a loop whose threads did the same work (the same CPU time, perf::TASK-CLOCK)
#    while one of them shared its CPU with the busy loop is not called imbalance: no schedule
#    advice, the CPU times named;
#  - MPI: two ranks with the same work (mpi_sampled divide), rank 1 beside a busy loop on its
#    CPU: rank 0 waits in the MPI_Allreduce for it, and that finding (and the slower work's)
#    names the wait for a CPU first, with its figure, before "balance the work".
# Usage: check_shared_cpus.sh BIN_DIR WORK_DIR
set -euo pipefail
bin=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
command -v taskset > /dev/null || { echo "SKIP: no taskset"; exit 77; }

taskset -c 0 timeout 10 sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2> /dev/null || true' EXIT
OMP_NUM_THREADS=2 taskset -c 0 "$bin/scalea" run -q -o spun -- "$bin/omp/imbalance" 40 > /dev/null
# 1,200 parallel regions back to back: their fork/join is a finding here, and passive waiting
# would make every start wake the sleeping threads: the spinning note says both.
OMP_NUM_THREADS=2 taskset -c 0 "$bin/scalea" run -q -o forks -- "$bin/omp/shapes" forkjoin 1200 2 0.02 > /dev/null
kill $busy 2> /dev/null || true
"$bin/scalea" report spun > spun.txt
grep -q '^CPUS .*2 threads ran on 1 CPU' spun.txt || no "the header does not say 2 threads shared 1 CPU"
grep -q '^CPUS .*threads waiting in OpenMP synchronization ([0-9.]* s in all) spin on their CPU.*OMP_WAIT_POLICY=passive' spun.txt ||
  no "the header does not say the waiting threads spun"
grep -q '^first, threads shared CPUs: threads waiting in OpenMP synchronization' spun.txt ||
  no "the findings do not start with the spinning"
# The threads waited for the CPU the other spun on: the scheduler's account says so.
grep -q '^CPUS .*the threads waited [0-9.]* s in all for a CPU' spun.txt ||
  no "the header does not give the threads' wait for a CPU"
# The fork/join finding names that wait first.
"$bin/scalea" report forks > forks.txt
grep -q '^CPUS .*OMP_WAIT_POLICY=passive.*but the run starts 1200 parallel regions ([0-9]* per second).*wakes the sleeping threads' forks.txt ||
  no "the spinning note does not say what passive waiting costs 1,200 regions: $(grep '^CPUS' forks.txt)"
"$bin/scalea" report forks --format json --findings 20 > forks.json
python3 - forks.json << 'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
forks = [f for f in doc["findings"] if f["subclass"] == "fork_join"]
if not forks:
    print("FAIL: no fork/join finding for 1,200 regions on a busy CPU", file=sys.stderr)
for f in forks:
    if not f["hint"].startswith("first, the threads waited"):
        print("FAIL: the fork/join finding does not name the wait for a CPU first:", f["text"],
              file=sys.stderr)
sys.exit(0 if forks and all(f["hint"].startswith("first, the threads waited") for f in forks)
         else 1)
PY

# The same work on each thread (shapes cpuwork: 100 ms of CPU time per thread and round), thread 1
# beside a busy loop on its CPU.
if [ "$(nproc)" -ge 2 ]; then
  taskset -c 1 timeout 10 sh -c 'while :; do :; done' &
  busy=$!
  OMP_NUM_THREADS=2 OMP_PROC_BIND=true OMP_PLACES='{0},{1}' "$bin/scalea" run -q \
    --counters perf::TASK-CLOCK -o even -- "$bin/omp/shapes" cpuwork 3 100 > /dev/null
  kill $busy 2> /dev/null || true
  "$bin/scalea" report even --format json --findings 20 > even.json
  python3 - even.json << 'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
bar = [f for f in doc["findings"] if f["subclass"] == "barrier"]
ok = bool(bar) and all("CPU time before it was even" in f["hint"] and "schedule(dynamic" not in f["hint"]
                      for f in bar)
if not ok:
    print("FAIL: equal CPU time called imbalance:", [f["text"] for f in bar], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
fi

mpirun=$(command -v mpirun || true)
if [ "$(nproc)" -ge 2 ] && [ -n "$mpirun" ] && [ -x "$bin/mpi_sampled" ]; then
  "$mpirun" -np 1 --oversubscribe "$bin/scalea" run -q -o mref -- "$bin/mpi_sampled" 400 divide > /dev/null
  taskset -c 1 timeout 10 sh -c 'while :; do :; done' &
  busy=$!
  "$mpirun" -np 2 --oversubscribe --bind-to core "$bin/scalea" run -q -o mrun -- \
    "$bin/mpi_sampled" 400 divide > /dev/null
  kill $busy 2> /dev/null || true
  "$bin/scalea" report mrun -r mref --format json --findings 20 > mrun.json
  python3 - mrun.json << 'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
waits = [f for f in doc["findings"] if f["subclass"] == "mpi_waiting"]
slow = [f for f in doc["findings"] if f["class"] == "unidentified"]
ok = bool(waits) and all(f["hint"].startswith("first, the threads waited") and
                         " s per PE, " in f["hint"] for f in waits + slow)
if not ok:
    print("FAIL: MPI waiting on a shared CPU does not name the wait for a CPU first:",
          [f["text"] for f in waits + slow], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
fi

OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 taskset -c 0 "$bin/scalea" run -q -o slept -- "$bin/omp/imbalance" 40 > /dev/null
"$bin/scalea" report slept > slept.txt
grep -q '^CPUS .*2 threads ran on 1 CPU' slept.txt || no "passive: the header does not say 2 threads shared 1 CPU"
if grep -q 'spin on their CPU' slept.txt; then no "passive waiting was told to wait passively"; fi

[ $fail = 0 ] && echo "shared CPUs: spinning, fork/join and MPI waiting named"
exit $fail
