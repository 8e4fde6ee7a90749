#!/usr/bin/env bash
# Checks that the product's C and C++ sources (*.c *.cpp *.hpp *.h tracked by git in collect/
# drg/ overheads/ report/) are formatted as .clang-format says, with Debian 12's
# clang-format 14 (package clang-format, which also ships git-clang-format). Generated sources
# are left out: they live in the build tree, which git does not track. Changes nothing.
# Usage:
#   scripts/check_format.sh                  whole files: clang-format --dry-run -Werror on each
#   scripts/check_format.sh --changed BASE   only the lines changed since git revision BASE
#                                            (git clang-format --diff BASE; files git does not
#                                            track yet are not seen: git add them first)
# Exit status: 0 formatted; 1 not: the files are listed (and with --changed, the diff that would
# format them); 2 bad usage or no clang-format 14.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
dirs=(collect drg overheads report)
extensions=c,cpp,hpp,h
clang_format=${CLANG_FORMAT:-/usr/bin/clang-format}

usage() { echo "usage: scripts/check_format.sh [--changed BASE]" >&2; exit 2; }
base=""
case $# in
  0) ;;
  2) [ "$1" = --changed ] || usage; base=$2 ;;
  *) usage ;;
esac

# Another version formats some constructs differently: the check would then disagree with CI.
version=$("$clang_format" --version 2>/dev/null) || { echo "check_format: no $clang_format (apt-get install clang-format)" >&2; exit 2; }
case $version in
  *"version 14."*) ;;
  *) echo "check_format: needs clang-format 14 (Debian 12's), $clang_format is: $version" >&2; exit 2 ;;
esac

if [ -n "$base" ]; then
  git rev-parse --verify --quiet "$base^{commit}" > /dev/null || { echo "check_format: no git revision $base" >&2; exit 2; }
  command -v git-clang-format > /dev/null || { echo "check_format: no git-clang-format (package clang-format)" >&2; exit 2; }
  # Exit status 0 with a diff (clang 14), 1 with one in later versions: the output says which.
  rc=0
  diff=$(git clang-format --binary "$clang_format" --extensions "$extensions" --diff "$base" -- "${dirs[@]}") || rc=$?
  if [ $rc != 0 ] && [ "${diff#diff --git}" = "$diff" ]; then
    echo "check_format: git clang-format failed ($rc): $diff" >&2
    exit 2
  fi
  case $diff in
    "" | "no modified files to format" | "clang-format did not modify any files") echo "check_format: the lines changed since $base are formatted"; exit 0 ;;
  esac
  echo "check_format: not formatted (lines changed since $base), in:"
  printf '%s\n' "$diff" | sed -n 's|^+++ b/|  |p'
  printf '%s\n' "$diff"
  exit 1
fi

mapfile -t files < <(git ls-files -- "${dirs[@]}" | grep -E "\.(${extensions//,/|})\$")
bad=()
for f in "${files[@]}"; do
  "$clang_format" --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -eq 0 ]; then
  echo "check_format: ${#files[@]} files formatted"
  exit 0
fi
echo "check_format: ${#bad[@]} of ${#files[@]} files not formatted (clang-format -i FILE formats one):"
printf '  %s\n' "${bad[@]}"
exit 1
