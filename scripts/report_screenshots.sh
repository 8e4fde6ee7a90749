#!/bin/sh
# The screenshots of docs/report.md, made by the HTML report's test (tests/html/check_html.py) in
# headless Chromium from the test programs' experiments, never by hand. Usage:
#   scripts/report_screenshots.sh [BUILD_DIR] [LU_RUN LU_REF]   (default: build; needs chromium, graphviz)
# With LU_RUN and LU_REF (NPB LU class W experiments at p = 2 and 1, from the validation script:
# docs/validation.md; NPB is not in the repository), also the LU page's first screen and threads
# at 1366 x 768 (check_html.py laptop).
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
work=${TMPDIR:-/tmp}/scalea-report-shots  # a fixed name: the pages show their experiments' paths
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
check() {
  python3 "$here/tests/html/check_html.py" --scalea "$build/bin/scalea" --app "$build/bin/export/export_app" \
    --omp-app "$build/bin/omp/constructs" --shapes-app "$build/bin/omp/shapes" --gen "$build/bin/drg_gen" \
    --workdir "$work/run" --shots "$work/shots" "$@"
}
check runs
for c in experiment pipeline single study large; do check $c; done
dest="$here/docs/img/report"
mkdir -p "$dest"
for f in report-first-screen report-cube report-system report-flame report-flat report-callers report-graph \
         report-constructs \
         study-first-screen study-region report-1024-ranks; do
  cp "$work/shots/$f.png" "$dest/$f.png"
done
if [ -n "$3" ]; then
  # The page names its experiments as given: short names, as a user would type them.
  cp -r "$2" "$work/lu.W.p2"
  cp -r "$3" "$work/lu.W.p1"
  (cd "$work" && "$build/bin/scalea" report lu.W.p2 -r lu.W.p1 --html lu.html >/dev/null)
  check --page "$work/lu.html" laptop
  cp "$work/shots/report-laptop-first-screen.png" "$dest/report-lu-first-screen.png"
  cp "$work/shots/report-laptop-threads.png" "$dest/report-lu-threads.png"
fi
ls -l "$dest"
