#!/usr/bin/env bash
# Installs everything scalea needs on Debian 12 (bookworm), as root, then configures and builds.
# Idempotent: packages already present are skipped by apt, the build is incremental.
# Usage: scripts/setup-debian.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
# Absolute: the libomp 19 links below point into it, and CMake is given it.
mkdir -p "$build" && build=$(cd "$build" && pwd)

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  clang libomp-dev                # clang -fopenmp with LLVM libomp 14 (OMPT; Archer for TSan)
  clang-format                    # the product's formatting, checked by the unit tests
  libclang-rt-14-dev              # sanitizer runtimes (ASan/UBSan/TSan stages): only a
                                  # Recommends of clang, and apt runs --no-install-recommends
  gfortran                        # Fortran user-region module and Fortran MPI test
  openmpi-bin libopenmpi-dev      # mpirun, PMPI
  libpapi-dev papi-tools          # hardware/software counters
  libboost-graph-dev              # region graph merge (drg/, never inside collect/)
  libdw-dev libelf-dev            # code address -> file:line after the run
  libunwind-dev                   # call-path sampling: the unwinder (opened at run time)
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libgtest-dev googletest         # unit tests
  gnuplot-nox                     # scalea report STUDY --plots
  help2man                        # man pages of scalea and its commands, made from their --help
  graphviz                        # scalea export --format dot/html: region graph as SVG
  chromium jq                     # tests/export: HTML report in headless Chromium, JSON checks
  python3 procps zlib1g-dev       # PMPI wrapper generator and test scripts; pgrep; fast CRC
  gdb                             # tests: the stacks of a run that hangs, at its timeout
  tmux                            # tests/online: scalea top on a terminal, read with capture-pane
  libsqlite3-dev                  # scalea db: the embedded default database (one SQLite file)
  libpq-dev                       # scalea db: PostgreSQL's client library, for a team's server
  postgresql                      # tests/db: a real server the tests start (initdb, pg_ctl)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing packages (${missing[*]}); run as root or install them" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# libomp 19 conflicts with libomp 14 as a package, so its runtime is unpacked beside the build
# and tests run a second time with it on the library path (it grants ompt_callback_dispatch).
omp19="$build/third_party/libomp19"
if [ ! -e "$omp19/libomp.so.5" ]; then  # -e follows the link: a dangling one is made again
  mkdir -p "$omp19/deb"
  ( cd "$omp19/deb" && apt-get download -qq libomp5-19 >/dev/null 2>&1 || { apt-get update -qq && apt-get download -qq libomp5-19; } )
  dpkg -x "$omp19"/deb/libomp5-19_*.deb "$omp19/root"
  lib=$(find "$omp19/root" -name 'libomp.so.5' | head -n1)
  [ -n "$lib" ] || { echo "setup: libomp5-19 package holds no libomp.so.5" >&2; exit 1; }
  ln -sf "$lib" "$omp19/libomp.so.5"
  ln -sf "$lib" "$omp19/libomp.so"
fi

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEA_UNITY_BUILD=ON \
  -DSCALEA_LIBOMP19_DIR="$omp19" >/dev/null
cmake --build "$build" -j"$(nproc)"
