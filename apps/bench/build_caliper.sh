#!/usr/bin/env bash
# build_caliper.sh -- builds LLNL Caliper's library with its OMPT service, for the comparison of
# apps/bench/run_omp_bench.sh (--tool caliper=...) and run_instr_bench.sh.
#
# usage: build_caliper.sh SOURCE BUILD_DIR
#
#   SOURCE     a Caliper checkout: a work tree (with CMakeLists.txt), or a git directory without
#              one (as a mirror or `git clone --bare` leaves it: its HEAD is exported)
#   BUILD_DIR  where the sources are exported (BUILD_DIR/src) and built (BUILD_DIR/build)
#
# Environment: JOBS (default 2) parallel compile jobs, run under `nice -n 19`; CC and CXX as
# CMake reads them (default: clang and clang++, the compilers of omp_micro, whose omp-tools.h the
# OMPT service includes).
#
# Prints the path of libcaliper.so last. Caliper is never copied into this repository: the
# sources stay where they were fetched, the build in BUILD_DIR.
#
# How the comparison runs Caliper (docs/performance.md, "Caliper beside scalea"):
#   OMP_TOOL_LIBRARIES=BUILD_DIR/build/src/libcaliper.so CALI_USE_OMPT=1 ...
#   OMPT only:      CALI_SERVICES_ENABLE=ompt   (its callbacks update Caliper's blackboard)
#   openmp-report:  CALI_CONFIG=openmp-report,output=/dev/null
set -euo pipefail

die() { echo "build_caliper.sh: $*" >&2; exit 2; }
[[ $# -eq 2 ]] || die "usage: build_caliper.sh SOURCE BUILD_DIR"
src=$1 out=$2
command -v cmake >/dev/null || die "cmake is needed"
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [[ -f $src/CMakeLists.txt ]]; then
  tree=$(cd "$src" && pwd)
elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null; then
  tree=$out/src
  rm -rf "$tree"
  mkdir -p "$tree"
  git --git-dir="$src" archive HEAD | tar -x -C "$tree"
  echo "build_caliper.sh: exported $(git --git-dir="$src" rev-parse --short HEAD) to $tree" >&2
else
  die "'$src' is neither a Caliper work tree nor a git directory"
fi
[[ -f $tree/src/services/ompt/OmptService.cpp ]] || die "'$tree' has no OMPT service: not Caliper?"

export CC=${CC:-clang} CXX=${CXX:-clang++}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$tree" -B "$out/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWITH_OMPT=On -DWITH_TOOLS=Off -DWITH_KOKKOS=Off -DWITH_GOTCHA=Off -DBUILD_TESTING=Off \
  -DWITH_FORTRAN=Off -DWITH_PYTHON_BINDINGS=Off >"$out/cmake.log" 2>&1 ||
  { tail -20 "$out/cmake.log" >&2; die "cmake failed (log: $out/cmake.log)"; }
nice -n 19 cmake --build "$out/build" --parallel "${JOBS:-2}" >"$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log" >&2; die "build failed (log: $out/build.log)"; }
lib=$(find "$out/build" -name 'libcaliper.so' -print -quit)
[[ -n $lib ]] || die "no libcaliper.so under $out/build"
nm -D "$lib" | grep -q ' T ompt_start_tool$' || die "$lib exports no ompt_start_tool"
echo "$lib"
