#!/bin/sh
# The easypp-sim command-line contract: help, exit statuses, one-line errors,
# JSON content, stdin and gzip input, --output-swf, determinism.
# Uses $EASYPP_SIM and $TEST_DATA_DIR (set by 'make check').
set -u
SIM=${EASYPP_SIM:-$(dirname "$0")/../../tools/easypp-sim}
DATA=${TEST_DATA_DIR:-$(dirname "$0")/../data}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# expect_status NAME STATUS CMD...: runs CMD, checks its exit status.
expect_status() {
  name=$1 want=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; got=$?
  if [ "$got" = "$want" ]; then pass "$name"; else fail "$name (exit $got, wanted $want): $(head -c 300 "$T/err")"; fi
}
# usage_error NAME CMD...: exit 2 and exactly one line on stderr.
usage_error() {
  name=$1; shift
  "$@" >"$T/out" 2>"$T/err"; got=$?
  lines=$(wc -l <"$T/err")
  if [ "$got" = 2 ] && [ "$lines" = 1 ] && grep -q '^easypp-sim: ' "$T/err"; then pass "$name"
  else fail "$name (exit $got, $lines stderr lines): $(head -c 300 "$T/err")"; fi
}
json_check() {  # json_check NAME FILE PYTHON-EXPRESSION-ON-d
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then pass "$1"; else fail "$1"; fi
}

# --- help and version ------------------------------------------------------
expect_status "help exits 0" 0 "$SIM" --help
for opt in --workload --procs --load --scheduler --json --output-swf --size-from --default-estimate \
           --clip-runtime --unsorted --max-jobs --max-malformed --flurries --warmup --short-threshold \
           --narrow-threshold --plan --estimate-factor --correction --backfill --queue-order \
           --reservations --safe --safe-after --window --metric --history-type --fullness --fallback --propagation; do
  grep -q -- "$opt" "$T/out" || fail "help documents $opt"
done
pass "help documents every option"
expect_status "version exits 0" 0 "$SIM" --version

# --- bad usage: one line, status 2 --------------------------------------------
usage_error "no arguments" "$SIM"
usage_error "unknown option" "$SIM" --workload "$DATA/cli_small.swf" --frobnicate
usage_error "missing value" "$SIM" --workload
usage_error "unknown scheduler" "$SIM" -w "$DATA/cli_small.swf" -s easy,easy+++
usage_error "bad window" "$SIM" -w "$DATA/cli_small.swf" --window 0
usage_error "bad knob in spec" "$SIM" -w "$DATA/cli_small.swf" -s 'easy++:window=x'
usage_error "bad load" "$SIM" -w "$DATA/cli_small.swf" --load abc
usage_error "negative procs" "$SIM" -w "$DATA/cli_small.swf" --procs -4
usage_error "bad correction" "$SIM" -w "$DATA/cli_small.swf" --correction sometimes
usage_error "stray argument" "$SIM" -w "$DATA/cli_small.swf" extra
usage_error "output-swf needs %s" "$SIM" -w "$DATA/cli_small.swf" -s easy,easy++ --output-swf "$T/x.swf"

# --- unusable input: status 2, message names the file -------------------------
"$SIM" -w "$T/does-not-exist.swf" >/dev/null 2>"$T/err"; st=$?
if [ $st = 2 ] && grep -q "does-not-exist.swf" "$T/err"; then pass "missing file"; else fail "missing file (exit $st)"; fi
"$SIM" -w "$DATA/cli_unsorted.swf" >/dev/null 2>"$T/err"; st=$?
if [ $st = 2 ] && grep -q "cli_unsorted.swf:14" "$T/err" && grep -q -- "--unsorted" "$T/err"; then pass "unsorted fails with a hint"
else fail "unsorted fails with a hint (exit $st): $(cat "$T/err")"; fi
expect_status "unsorted accepted with --unsorted sort" 0 "$SIM" -w "$DATA/cli_unsorted.swf" --unsorted sort
printf 'garbage\0\001\002\n\377\376 not swf at all\n' >"$T/garbage.swf"
"$SIM" -w "$T/garbage.swf" --procs 4 >/dev/null 2>"$T/err"; st=$?
if [ $st = 2 ] && grep -q "garbage.swf" "$T/err"; then pass "garbage file: status 2, named"; else fail "garbage file (exit $st)"; fi
{ echo "; MaxProcs: 1e3"; grep -v MaxProcs "$DATA/cli_small.swf"; } >"$T/hdr.swf"
usage_error "header value not an integer: status 2, one line" "$SIM" -w "$T/hdr.swf"
if grep -q "hdr.swf:1: header MaxProcs: '1e3' is not an integer" "$T/err"; then pass "header refusal names file, line and key"
else fail "header refusal names file, line and key: $(cat "$T/err")"; fi
head -c 2000 /dev/urandom | gzip -c | head -c 1500 >"$T/trunc.swf.gz"
"$SIM" -w "$T/trunc.swf.gz" --procs 4 >/dev/null 2>"$T/err"; st=$?
if [ $st = 2 ]; then pass "truncated gzip: status 2"; else fail "truncated gzip (exit $st)"; fi

# --- malformed lines are skipped, counted and reported -------------------------
cp "$DATA/cli_small.swf" "$T/bad.swf"
echo "   25   2100   -1   100  2  -1  -1  2  900  -1  1  3  1" >>"$T/bad.swf"              # 13 fields
echo "   26   2110   -1   1x0  2  -1  -1  2  900  -1  1  3  1  3  1  1  -1  -1" >>"$T/bad.swf"  # non-numeric
"$SIM" -w "$T/bad.swf" --json >"$T/bad.json" 2>"$T/err"; st=$?
if [ $st = 0 ] && grep -q "bad.swf:34: 13 fields" "$T/err" && grep -q "bad.swf:35: field 4 (run time)" "$T/err"; then pass "malformed lines named by file, line, field"
else fail "malformed lines reported (exit $st): $(cat "$T/err")"; fi
json_check "malformed lines counted in JSON" "$T/bad.json" "d['input']['dropped']['malformed_lines'] == 2 and d['input']['jobs'] == 24"

# --- JSON content ------------------------------------------------------------
"$SIM" -w "$DATA/cli_small.swf" -s easy,easy++,conservative --json >"$T/a.json" 2>"$T/err" || fail "json run"
json_check "JSON has every required field" "$T/a.json" "all(k in r for r in d['runs'] for k in ['scheduler','jobs_simulated','jobs_measured','avg_wait_minutes','avg_bounded_slowdown','avg_accuracy_percent','corrections_per_job','utilization','predictability','categories','elapsed_seconds']) and len(d['runs']) == 3"
json_check "JSON names schedulers in order" "$T/a.json" "[r['scheduler'] for r in d['runs']] == ['easy','easy++','conservative']"
json_check "JSON input block" "$T/a.json" "d['input']['procs'] == 16 and d['input']['jobs'] == 24 and 'dropped' in d['input']"
json_check "JSON categories" "$T/a.json" "sorted(c['category'] for c in d['runs'][0]['categories']) == ['long-narrow','long-wide','short-narrow','short-wide']"
"$SIM" -w "$DATA/cli_small.swf" -s easy,easy++,conservative --json >"$T/b.json" 2>/dev/null
strip() { python3 -c "import json,sys
d=json.load(open(sys.argv[1])); d['input'].pop('read_seconds'); d.pop('peak_rss_mb')
for r in d['runs']:
    for k in ('elapsed_seconds','jobs_per_second'): r.pop(k)
print(json.dumps(d, sort_keys=True))" "$1"; }
if [ "$(strip "$T/a.json")" = "$(strip "$T/b.json")" ]; then pass "deterministic"; else fail "deterministic"; fi

# --- stdin and gzip give the same result as the plain file -------------------
"$SIM" -w - -s easy++ --json <"$DATA/cli_small.swf" >"$T/stdin.json" 2>/dev/null || fail "stdin run"
gzip -c "$DATA/cli_small.swf" >"$T/small.swf.gz"
"$SIM" -w "$T/small.swf.gz" -s easy++ --json >"$T/gz.json" 2>/dev/null || fail "gzip run"
"$SIM" -w "$DATA/cli_small.swf" -s easy++ --json >"$T/plain.json" 2>/dev/null
same_metrics() { python3 -c "import json,sys
a=json.load(open(sys.argv[1]))['runs'][0]; b=json.load(open(sys.argv[2]))['runs'][0]
sys.exit(0 if a['avg_wait_minutes']==b['avg_wait_minutes'] and a['avg_bounded_slowdown']==b['avg_bounded_slowdown'] else 1)" "$1" "$2"; }
same_metrics "$T/stdin.json" "$T/plain.json" && pass "stdin equals file" || fail "stdin equals file"
same_metrics "$T/gz.json" "$T/plain.json" && pass "gzip equals plain" || fail "gzip equals plain"

# --- knobs change the outcome; presets equal their knob spelling ---------------
"$SIM" -w "$DATA/cli_small.swf" -s 'easy:plan=prediction:correction=estimate:backfill=sjbf' --json >"$T/k.json" 2>/dev/null
same_metrics "$T/k.json" "$T/plain.json" && pass "easy++ equals easy with its knobs" || fail "easy++ equals easy with its knobs"

# --- --output-swf --------------------------------------------------------------
"$SIM" -w "$DATA/cli_small.swf" -s easy,easy++ --output-swf "$T/out-%s.swf" >/dev/null 2>&1 || fail "output-swf run"
for s in easy easy++; do
  f="$T/out-$s.swf"
  if [ -f "$f" ] && [ "$(grep -vc '^;' "$f")" = 24 ] && awk '!/^;/ && (NF != 18 || $3 < 0) {bad=1} END {exit bad}' "$f"; then
    pass "output-swf $s: 24 jobs, 18 fields, wait filled in"
  else fail "output-swf $s"; fi
done
# The written schedule replays: its waits are the simulator's.
"$SIM" -w "$T/out-easy.swf" -s easy --json >"$T/re.json" 2>/dev/null && pass "output-swf is valid SWF" || fail "output-swf is valid SWF"

# --- the built-in synthetic workload -----------------------------------------
"$SIM" -w 'synthetic:jobs=2000,procs=64,users=20' --json >"$T/syn.json" 2>"$T/err" || fail "synthetic run: $(cat "$T/err")"
json_check "synthetic default compares easy and easy++" "$T/syn.json" "[r['scheduler'] for r in d['runs']] == ['easy','easy++'] and d['input']['jobs'] == 2000"
usage_error "bad synthetic spec" "$SIM" -w 'synthetic:jobs=many'

[ $fails = 0 ] && echo "all CLI checks passed" || echo "$fails CLI checks failed"
exit $((fails > 0))
