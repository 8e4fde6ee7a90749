#!/bin/sh
# The screenshots of docs/report.md, made by the HTML report's test (tests/html/check_html.py) in
# headless Chromium from the test programs' experiments, never by hand. Usage:
#   scripts/report_screenshots.sh [BUILD_DIR]      (default: build; needs chromium, graphviz)
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
work=${TMPDIR:-/tmp}/scalea-report-shots  # a fixed name: the pages show their experiments' paths
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
check() {
  python3 "$here/tests/html/check_html.py" --scalea "$build/bin/scalea" --app "$build/bin/export/export_app" \
    --omp-app "$build/bin/omp/constructs" --gen "$build/bin/drg_gen" --workdir "$work/run" --shots "$work/shots" "$1"
}
check runs
for c in experiment single study large; do check $c; done
dest="$here/docs/img/report"
mkdir -p "$dest"
for f in report-first-screen report-cube report-flame report-flat report-graph report-constructs \
         study-first-screen study-region report-1024-ranks; do
  cp "$work/shots/$f.png" "$dest/$f.png"
done
ls -l "$dest"
