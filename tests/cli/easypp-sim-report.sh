#!/bin/sh
# easypp-sim --report DIR: the page is written whole (temp dir + rename, mode
# 0700), is self-contained, and every chart is there and drawn when the page
# is loaded in headless Chromium (check_report_page.py, DevTools protocol):
# no console error, nothing fetched, no blank chart. Also checks that the
# checker itself fails on a broken page.
# Uses $EASYPP_SIM, $EASYPP_REPORT and $TEST_DATA_DIR (set by 'make check').
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SIM=${EASYPP_SIM:-$HERE/../../tools/easypp-sim}
EASYPP_REPORT=${EASYPP_REPORT:-$HERE/../../tools/easypp-report}
export EASYPP_REPORT
CHECK="$HERE/check_report_page.py"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# Debian's python3 (the scripts' interpreter), not whatever python3 is first on PATH.
PY=/usr/bin/python3
if ! "$PY" -c 'import matplotlib, PIL' 2>/dev/null; then
  echo "FAIL python3-matplotlib is not installed (./setup.sh test installs it)"
  exit 1
fi
if [ ! -x "$CHROMIUM" ]; then
  # Not a silent skip: CI installs chromium (./setup.sh test), so it runs
  # there, and there (EASYPP_NO_SKIP=1) a missing browser fails.
  if [ "${EASYPP_NO_SKIP:-}" = 1 ]; then
    echo "FAIL $CHROMIUM not installed (EASYPP_NO_SKIP=1: nothing may be skipped)"
    exit 1
  fi
  echo "SKIP: cannot run here: $CHROMIUM not installed (apt-get install chromium; ./setup.sh test does)"
  exit 77
fi

SYN='synthetic:jobs=3000,procs=64,users=15'

# --- with shaking: seven charts ---------------------------------------------------------
"$SIM" -w "$SYN" -s easy,easy++ --shake 3 --report "$T/rep" >"$T/out" 2>"$T/err"; st=$?
if [ $st = 0 ] && [ -s "$T/rep/index.html" ] && [ -s "$T/rep/report.json" ]; then pass "--report writes index.html and report.json"
else fail "--report (exit $st): $(cat "$T/err")"; fi
grep -q "^easy++ " "$T/out" && pass "the table still goes to standard output" || fail "the table still goes to standard output"
grep -q "report written to $T/rep/index.html" "$T/err" && pass "says where the page is" || fail "says where the page is"
[ "$(stat -c %a "$T/rep")" = 700 ] && pass "report directory is private (0700)" || fail "report directory mode $(stat -c %a "$T/rep")"
[ "$(ls -A "$T" | grep -c 'tmp-' || true)" = 0 ] && pass "no temporary left" || fail "temporary left: $(ls -A "$T")"
if grep -qi '<script\|src="http\|href="http' "$T/rep/index.html"; then fail "page has no script and no remote reference"
else pass "page has no script and no remote reference"; fi
"$PY" "$CHECK" "$T/rep/index.html" running-bsld wait-cdf accuracy queue users improvement spread >"$T/check" 2>&1 \
  && pass "Chromium: seven charts present and drawn, no console error" \
  || fail "Chromium check of the shaken report: $(grep -v '^ok' "$T/check" | head -8)"
sed 's/^/     /' "$T/check"

# --- again into the same directory, without shaking: six charts, other files kept ------
echo keep >"$T/rep/notes.txt"
"$SIM" -w "$SYN" -s easy,easy++ --report "$T/rep" -q >/dev/null 2>"$T/err"; st=$?
if [ $st = 0 ] && [ "$(cat "$T/rep/notes.txt")" = keep ] && ! grep -q 'chart-spread' "$T/rep/index.html"; then
  pass "rewriting an existing report directory replaces the page, keeps other files"
else fail "rewriting an existing report directory (exit $st): $(cat "$T/err")"; fi
"$PY" "$CHECK" "$T/rep/index.html" running-bsld wait-cdf accuracy queue users improvement >"$T/check" 2>&1 \
  && pass "Chromium: six charts without shaking" \
  || fail "Chromium check of the unshaken report: $(grep -v '^ok' "$T/check" | head -8)"

# --- the checker fails on a broken page --------------------------------------------------
# A console error, a blank chart and a missing one must all be caught.
cat >"$T/broken.html" <<'EOF'
<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title></head><body>
<figure class="chart" id="chart-running-bsld"><svg width="600" height="300"></svg></figure>
<figure class="chart" id="chart-queue"><svg width="600" height="300">WHITE</svg></figure>
<script>console.error("boom")</script>
</body></html>
EOF
# chart-queue: 30 shapes, all white: drawn, but blank on screen.
white=$(i=0; while [ $i -lt 30 ]; do printf '<rect x="%d" y="0" width="10" height="300" fill="#fff"/>' $((i * 20)); i=$((i + 1)); done)
sed -i "s|WHITE|$white|" "$T/broken.html"
"$PY" "$CHECK" "$T/broken.html" running-bsld wait-cdf queue >"$T/check" 2>&1; st=$?
if [ $st = 1 ] && grep -q '^FAIL no console errors: console: boom' "$T/check" \
   && grep -q '^FAIL chart running-bsld present and drawn' "$T/check" \
   && grep -q '^FAIL chart wait-cdf present' "$T/check" && grep -q '^FAIL no script in the page' "$T/check" \
   && grep -q '^ok   chart queue present and drawn' "$T/check" && grep -q '^FAIL chart queue not blank on screen' "$T/check"; then
  pass "the checker catches a console error, empty and blank charts, a missing chart and a script"
else fail "the checker catches a broken page (exit $st): $(cat "$T/check")"; fi

[ $fails = 0 ] && echo "all report checks passed" || echo "$fails report checks failed"
exit $((fails > 0))
