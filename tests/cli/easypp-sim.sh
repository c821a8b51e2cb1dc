#!/bin/sh
# The easypp-sim command-line contract: help, exit statuses, one-line errors,
# JSON content, stdin and gzip input, --output-swf, determinism.
# Uses $EASYPP_SIM and $TEST_DATA_DIR (set by 'make check').
set -u
SIM=${EASYPP_SIM:-$(dirname "$0")/../../tools/easypp-sim}
DATA=${TEST_DATA_DIR:-$(dirname "$0")/../data}
T=$(mktemp -d)
trap 'umount "$T/ro" 2>/dev/null; rm -rf "$T"' EXIT
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
           --reservations --safe --safe-after --predictor --window --metric --ewma-alpha --history-type \
           --fullness --fallback --propagation --fairness --no-fairness \
           --shake --shake-jitter --shake-seed --threads --top-users --report --pass-per-event \
           --no-correction-pass --safe-after-delay --safe-after-xfactor --max-delay --rounding \
           --prediction-floor --learn --learn-min-runtime --history-ttl --csv --scheduler-file \
           --parse-only --selective --sel-scale --sel-short --sel-narrow; do
  grep -q -- "$opt" "$T/out" || fail "help documents $opt"
done
pass "help documents every option"
grep -q "site" "$T/out" || fail "help names the site preset"
MAN="$(dirname "$0")/../../tools/easypp-sim.1"
for opt in shake shake-jitter shake-seed threads top-users report; do
  grep -q -- "^\.BI\? \\\\-\\\\-$opt\b" "$MAN" || fail "man page documents --$opt"
done
pass "man page documents the verdict options"
for opt in predictor ewma-alpha selective sel-scale sel-short sel-narrow; do
  grep -q -- "^\.B[IR]\? \\\\-\\\\-$opt\b" "$MAN" || fail "man page documents --$opt"
done
pass "man page documents the predictor options"
for opt in pass-per-event no-correction-pass safe-after-delay safe-after-xfactor max-delay rounding \
           prediction-floor learn learn-min-runtime propagation; do
  grep -q -- "^\.BI\? \\\\-\\\\-$opt\b" "$MAN" || grep -q -- "^\.BR \\\\-\\\\-$opt\b" "$MAN" \
    || fail "man page documents --$opt"
done
pass "man page documents the conventions, guards and history knobs"
expect_status "version exits 0" 0 "$SIM" --version

# --- bad usage: one line, status 2 --------------------------------------------
usage_error "no arguments" "$SIM"
usage_error "unknown option" "$SIM" --workload "$DATA/cli_small.swf" --frobnicate
usage_error "missing value" "$SIM" --workload
usage_error "unknown scheduler" "$SIM" -w "$DATA/cli_small.swf" -s easy,easy+++
usage_error "bad window" "$SIM" -w "$DATA/cli_small.swf" --window 0
usage_error "bad knob in spec" "$SIM" -w "$DATA/cli_small.swf" -s 'easy++:window=x'
usage_error "bad predictor" "$SIM" -w "$DATA/cli_small.swf" --predictor lstm
usage_error "bad predictor in spec" "$SIM" -w "$DATA/cli_small.swf" -s 'easy++:predictor=mean'
usage_error "ewma-alpha 0" "$SIM" -w "$DATA/cli_small.swf" --ewma-alpha 0
usage_error "ewma-alpha above 1" "$SIM" -w "$DATA/cli_small.swf" -s 'easy++:predictor=ewma:ewma-alpha=1.5'
usage_error "bad load" "$SIM" -w "$DATA/cli_small.swf" --load abc
usage_error "negative procs" "$SIM" -w "$DATA/cli_small.swf" --procs -4
usage_error "bad correction" "$SIM" -w "$DATA/cli_small.swf" --correction sometimes
usage_error "stray argument" "$SIM" -w "$DATA/cli_small.swf" extra
usage_error "output-swf needs %s" "$SIM" -w "$DATA/cli_small.swf" -s easy,easy++ --output-swf "$T/x.swf"
usage_error "--shake 0" "$SIM" -w "$DATA/cli_small.swf" --shake 0
usage_error "--shake 1 (no spread)" "$SIM" -w "$DATA/cli_small.swf" --shake 1
usage_error "--shake negative band" "$SIM" -w "$DATA/cli_small.swf" --shake 9:-1%
usage_error "--shake band not a number" "$SIM" -w "$DATA/cli_small.swf" --shake 9:wide
usage_error "--shake band too wide" "$SIM" -w "$DATA/cli_small.swf" --shake 9:60%
usage_error "--shake 0% band without jitter" "$SIM" -w "$DATA/cli_small.swf" --shake 9:0%
usage_error "--shake-jitter without --shake" "$SIM" -w "$DATA/cli_small.swf" --shake-jitter 60
usage_error "--shake-jitter negative" "$SIM" -w "$DATA/cli_small.swf" --shake 3 --shake-jitter -5
usage_error "--threads 0" "$SIM" -w "$DATA/cli_small.swf" --shake 3 --threads 0
usage_error "--top-users negative" "$SIM" -w "$DATA/cli_small.swf" --top-users -1
usage_error "bad max-delay" "$SIM" -w "$DATA/cli_small.swf" --max-delay soon
usage_error "negative max-delay" "$SIM" -w "$DATA/cli_small.swf" -s 'site:max-delay=-5'
usage_error "bad safe-after-delay" "$SIM" -w "$DATA/cli_small.swf" --safe-after-delay -1
usage_error "safe-after-xfactor below 1" "$SIM" -w "$DATA/cli_small.swf" --safe-after-xfactor 0.5
usage_error "selective threshold below 1" "$SIM" -w "$DATA/cli_small.swf" --selective 0.5
usage_error "selective: three thresholds" "$SIM" -w "$DATA/cli_small.swf" -s 'easy:selective=2/3/4'
usage_error "selective: not a number" "$SIM" -w "$DATA/cli_small.swf" -s 'sel:selective=high'
usage_error "selective with a guard" "$SIM" -w "$DATA/cli_small.swf" -s 'site:selective=3'
usage_error "bad sel-short" "$SIM" -w "$DATA/cli_small.swf" --sel-short 0
usage_error "bad sel-narrow" "$SIM" -w "$DATA/cli_small.swf" -s 'sel-d:sel-narrow=wide'
usage_error "bad sel-scale" "$SIM" -w "$DATA/cli_small.swf" --sel-scale -1
"$SIM" -q -w "$DATA/cli_small.swf" -s easy,sel,sel-d++:selective=adaptive-d --json >"$T/sel.json" 2>"$T/err"
json_check "selective: thresholds derived, fairness and histograms in the JSON" "$T/sel.json" \
  "'selective=derive' not in d['runs'][1]['knobs'] and 'selective=' in d['runs'][1]['knobs'] and \
   len(d['runs'][0]['bsld_histogram_percent']) == 5 and \
   abs(sum(d['runs'][0]['fairness']['bsld_over_fair_histogram_percent']) - 100) < 1e-6 and \
   'max_bounded_slowdown' in d['runs'][2]['categories'][0]"
# Fairness by fair start time: by default only beside selective reservations
# (above: every run of that call has it), else when asked; never with --no-fairness.
"$SIM" -q -w "$DATA/cli_small.swf" -s easy,easy++ --json >"$T/nofair.json" 2>"$T/err"
json_check "fairness: not computed by default without selective reservations" "$T/nofair.json" \
  "all('fairness' not in r for r in d['runs']) and len(d['runs'][0]['bsld_histogram_percent']) == 5"
"$SIM" -q -w "$DATA/cli_small.swf" -s easy,easy++ --json --fairness >"$T/fair.json" 2>"$T/err"
json_check "fairness: --fairness computes it for every run" "$T/fair.json" \
  "all(abs(sum(r['fairness']['bsld_over_fair_histogram_percent']) - 100) < 1e-6 for r in d['runs'])"
"$SIM" -q -w "$DATA/cli_small.swf" -s easy,sel --json --no-fairness >"$T/nofair2.json" 2>"$T/err"
json_check "fairness: --no-fairness even beside selective reservations" "$T/nofair2.json" \
  "all('fairness' not in r for r in d['runs'])"
if "$SIM" -q -w "$DATA/cli_small.swf" -s easy | grep -q 'fairness by fair start time: --fairness' &&
   "$SIM" -q -w "$DATA/cli_small.swf" -s easy --fairness | grep -q 'late(%)'; then
  pass "fairness: the table says how to ask for it, and shows it when asked"
else
  fail "fairness: the table says how to ask for it, and shows it when asked"
fi
usage_error "--fairness with --csv (no such columns)" "$SIM" -w "$DATA/cli_small.swf" --csv --fairness
usage_error "bad learn" "$SIM" -w "$DATA/cli_small.swf" --learn some
usage_error "negative learn-min-runtime" "$SIM" -w "$DATA/cli_small.swf" --learn-min-runtime -1
usage_error "bad rounding" "$SIM" -w "$DATA/cli_small.swf" --rounding sideways
usage_error "bad prediction-floor" "$SIM" -w "$DATA/cli_small.swf" -s 'easy++:prediction-floor=x'
usage_error "--pass-per-event takes no value" "$SIM" -w "$DATA/cli_small.swf" --pass-per-event=yes

# --report into a place that cannot be written: one line, status 2, nothing left.
: >"$T/a-file"
usage_error "--report under a file" "$SIM" -w "$DATA/cli_small.swf" --report "$T/a-file/rep"
usage_error "--report onto a file" "$SIM" -w "$DATA/cli_small.swf" --report "$T/a-file"
usage_error "--report under a missing directory" "$SIM" -w "$DATA/cli_small.swf" --report "$T/no/such/dir/rep"
mkdir "$T/ro" && mount -t tmpfs -o ro,size=1m tmpfs "$T/ro" 2>/dev/null && ro_mounted=1 || ro_mounted=0
if [ $ro_mounted = 1 ]; then
  usage_error "--report on a read-only file system" "$SIM" -w "$DATA/cli_small.swf" --report "$T/ro/rep"
  umount "$T/ro"
else
  chmod 0500 "$T/ro"
  if [ "$(id -u)" != 0 ]; then
    usage_error "--report in a read-only directory" "$SIM" -w "$DATA/cli_small.swf" --report "$T/ro/rep"
  else
    echo "note: read-only --report case not run (root cannot mount a read-only tmpfs here)"
  fi
fi
left=$(ls -A "$T" | grep -c 'tmp-' || true)
if [ "$left" = 0 ] && [ -f "$T/a-file" ] && [ ! -s "$T/a-file" ] && [ -z "$(ls -A "$T/ro")" ]; then
  pass "--report failures leave nothing behind"
else fail "--report failures leave nothing behind: $(ls -A "$T" "$T/ro")"; fi
# The drawing fails (a stand-in script that writes half a page and exits 1):
# status 1, the message says so, and neither DIR nor a temporary is left.
printf '#!/bin/sh\necho "<html>half" >"$2"\nexit 1\n' >"$T/bad-report" && chmod +x "$T/bad-report"
EASYPP_REPORT="$T/bad-report" "$SIM" -w "$DATA/cli_small.swf" --report "$T/rep-fail" >/dev/null 2>"$T/err"; st=$?
if [ $st = 1 ] && grep -q "failed (exit 1); nothing was written to $T/rep-fail" "$T/err" && [ ! -e "$T/rep-fail" ] \
   && [ "$(ls -A "$T" | grep -c 'tmp-' || true)" = 0 ]; then pass "a failing easypp-report leaves nothing behind"
else fail "a failing easypp-report leaves nothing behind (exit $st): $(cat "$T/err"; ls -A "$T")"; fi

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
json_check "JSON: this project's event-loop conventions by default" "$T/a.json" \
  "d['simulator'] == {'pass_per_event': False, 'pass_after_correction': True}"
"$SIM" -w "$DATA/cli_small.swf" -s easy++,site --pass-per-event --no-correction-pass --json >"$T/authors.json" 2>/dev/null
json_check "JSON: the authors' event-loop conventions when asked" "$T/authors.json" \
  "d['simulator'] == {'pass_per_event': True, 'pass_after_correction': False}"
json_check "propagation is on by default; site shows its guard and history knobs" "$T/authors.json" \
  "'propagation=yes' in d['runs'][0]['knobs'] and all(k in d['runs'][1]['knobs'] for k in ['max-delay=86400', 'safe-after=345600', 'learn=completed', 'learn-min-runtime=60'])"
"$SIM" -w "$DATA/cli_small.swf" -s easy++ --pass-per-event >"$T/authors.txt" 2>/dev/null
if grep -q "a scheduling pass after each event" "$T/authors.txt"; then pass "the table says when the authors' conventions are replayed"
else fail "the table says when the authors' conventions are replayed"; fi
json_check "JSON categories" "$T/a.json" "sorted(c['category'] for c in d['runs'][0]['categories']) == ['long-narrow','long-wide','short-narrow','short-wide']"
"$SIM" -w "$DATA/cli_small.swf" -s easy,easy++,conservative --json >"$T/b.json" 2>/dev/null
strip() { python3 -c "import json,sys
d=json.load(open(sys.argv[1])); d['input'].pop('read_seconds'); d.pop('peak_rss_mb'); d.pop('cpu_seconds')
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
# A write that fails (here the file size limit, as a full disk) keeps the old
# schedule whole and leaves no temporary file: exit 2, the file named.
cp "$T/out-easy.swf" "$T/keep.swf"
(trap "" XFSZ; ulimit -f 1; exec "$SIM" -w "$DATA/cli_small.swf" -s easy --output-swf "$T/out-easy.swf") \
  >/dev/null 2>"$T/fsize.err"
st=$?
if [ "$st" = 2 ] && cmp -s "$T/keep.swf" "$T/out-easy.swf" && grep -q "out-easy.swf" "$T/fsize.err" &&
   [ -z "$(ls -A "$T" | grep '\.tmp\.')" ]; then
  pass "output-swf: a failed write keeps the old file"
else fail "output-swf: a failed write keeps the old file (exit $st: $(head -c 300 "$T/fsize.err"))"; fi

# --- starvation and per-user views ---------------------------------------------
json_check "JSON starvation metrics" "$T/a.json" "all(0 <= r['p99_wait_minutes'] <= r['max_wait_minutes'] and r['wide_max_wait_minutes'] <= r['max_wait_minutes'] and r['wide_avg_wait_minutes'] <= r['wide_max_wait_minutes'] for r in d['runs'])"
# Wide jobs: more than half the machine (16 processors): count them in the log.
wide=$(awk '!/^;/ && $5 > 8' "$DATA/cli_small.swf" | wc -l)
json_check "JSON wide jobs are those wider than half the machine ($wide)" "$T/a.json" "all(r['wide_jobs'] == $wide for r in d['runs'])"
json_check "JSON per-user rows add up to the measured jobs" "$T/a.json" "all(sum(u['jobs'] for u in r['users']) == r['jobs_measured'] and [u['user'] for u in r['users']] == sorted(u['user'] for u in r['users']) for r in d['runs'])"
json_check "JSON improvement factors against the first (not for the first)" "$T/a.json" "'improvement_vs_first' not in d['runs'][0] and all(len(r['improvement_vs_first'][k]['quantiles']) == 201 and r['improvement_vs_first'][k]['quantiles'] == sorted(r['improvement_vs_first'][k]['quantiles']) and abs(r['improvement_vs_first'][k]['better_percent'] + r['improvement_vs_first'][k]['same_percent'] + r['improvement_vs_first'][k]['worse_percent'] - 100) < 1e-9 and r['improvement_vs_first']['jobs'] > 0 for r in d['runs'][1:] for k in ['response', 'bounded_slowdown'])"
"$SIM" -w "$DATA/cli_small.swf" -s easy,easy --json >"$T/same.json" 2>/dev/null
json_check "JSON improvement of a scheduler over itself: every factor is 1" "$T/same.json" "d['runs'][1]['improvement_vs_first']['response']['same_percent'] == 100 and set(d['runs'][1]['improvement_vs_first']['bounded_slowdown']['quantiles']) == {1} and d['runs'][1]['improvement_vs_first']['response']['geometric_mean'] == 1"
json_check "JSON per-user change against the first" "$T/a.json" "all(abs(u['percent_change_vs_first']['avg_bounded_slowdown'] - 100*(u['avg_bounded_slowdown']-b['avg_bounded_slowdown'])/b['avg_bounded_slowdown']) < 1e-6 for u, b in zip(d['runs'][2]['users'], d['runs'][0]['users']) if u['user'] == b['user'])"
"$SIM" -w "$DATA/cli_small.swf" -s easy,easy++ --top-users 1 >"$T/text" 2>/dev/null
if grep -q '^starvation (all simulated jobs; wide: more than 8 processors' "$T/text" && grep -q '^per user (the 1 of ' "$T/text" \
   && grep -q 'users have a lower bsld than under easy' "$T/text"; then pass "table shows starvation and per-user views"
else fail "table shows starvation and per-user views"; fi

# --- --shake -------------------------------------------------------------------
SYN='synthetic:jobs=2000,procs=64,users=20'
"$SIM" -w "$SYN" --shake 4 --json --threads 1 >"$T/sh1.json" 2>"$T/err" || fail "shake run: $(cat "$T/err")"
json_check "shake: copies spread evenly over +-1%" "$T/sh1.json" "d['shake']['copies'] == 4 and all(abs(x - y) < 1e-12 for x, y in zip(d['shake']['load_factors'], [0.9925, 0.9975, 1.0025, 1.0075]))"
json_check "shake: every metric has mean, sd, min, max, ci95" "$T/sh1.json" "all(r['shaken']['copies'] == 4 and all(set(r['shaken'][k]) == {'mean','sd','min','max','ci95'} and r['shaken'][k]['min'] <= r['shaken'][k]['mean'] <= r['shaken'][k]['max'] and r['shaken'][k]['ci95'][0] <= r['shaken'][k]['mean'] <= r['shaken'][k]['ci95'][1] for k in ['avg_wait_minutes','avg_bounded_slowdown','max_wait_minutes','p99_wait_minutes','wide_avg_wait_minutes','avg_accuracy_percent','utilization','corrections_per_job']) for r in d['runs'])"
json_check "shake: the mean is the copies' mean, and the copies differ" "$T/sh1.json" "all(abs(sum(r['shaken']['per_copy']['avg_wait_minutes'])/4 - r['shaken']['avg_wait_minutes']['mean']) < 1e-6 and len(set(r['shaken']['per_copy']['avg_wait_minutes'])) > 1 for r in d['runs'])"
json_check "shake: wins against the first, from the paired copies" "$T/sh1.json" "'wins_vs_first' not in d['runs'][0]['shaken'] and d['runs'][1]['shaken']['wins_vs_first']['avg_wait_minutes'] == sum(a < b for a, b in zip(d['runs'][1]['shaken']['per_copy']['avg_wait_minutes'], d['runs'][0]['shaken']['per_copy']['avg_wait_minutes']))"
"$SIM" -w "$SYN" --shake 4 --json --threads 2 >"$T/sh2.json" 2>/dev/null
if python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(0 if [r['shaken'] for r in a['runs']] == [r['shaken'] for r in b['runs']] else 1)" "$T/sh1.json" "$T/sh2.json"
then pass "shake: same result on 1 and 2 threads"; else fail "shake: same result on 1 and 2 threads"; fi
"$SIM" -w "$SYN" --load 0.6 --shake 3:5% --shake-jitter 120 --shake-seed 9 --json >"$T/sh3.json" 2>/dev/null
"$SIM" -w "$SYN" --load 0.6 --shake 3:5% --shake-jitter 120 --shake-seed 9 --json >"$T/sh4.json" 2>/dev/null
"$SIM" -w "$SYN" --load 0.6 --shake 3:5% --shake-jitter 120 --shake-seed 10 --json >"$T/sh5.json" 2>/dev/null
json_check "shake: band and jitter recorded, loads around --load" "$T/sh3.json" "d['shake']['band_percent'] == 5 and d['shake']['jitter_seconds'] == 120 and d['shake']['seed'] == 9 and 0.55 < min(d['shake']['offered_loads']) < max(d['shake']['offered_loads']) < 0.65"
if python3 -c "import json,sys; a,b,c=(json.load(open(f)) for f in sys.argv[1:]); sa,sb,sc=([r['shaken']['per_copy'] for r in x['runs']] for x in (a,b,c)); sys.exit(0 if sa == sb and sa != sc else 1)" "$T/sh3.json" "$T/sh4.json" "$T/sh5.json"
then pass "shake: the seed names the jitter"; else fail "shake: the seed names the jitter"; fi
"$SIM" -w "$SYN" --shake 3 >"$T/text" 2>/dev/null
if grep -q '^shaken: 3 copies, offered load x0.9933 to x1.0067' "$T/text" && grep -Eq '^easy\+\+ +[0-9.]+ \+- [0-9.]+ +[-+][0-9.]+% \+- [0-9.]+ +[0-3]/3 ' "$T/text"
then pass "table shows mean +- ci and the win counts"; else fail "table shows mean +- ci and the win counts: $(tail -3 "$T/text")"; fi

# --- the built-in synthetic workload -----------------------------------------
"$SIM" -w 'synthetic:jobs=2000,procs=64,users=20' --json >"$T/syn.json" 2>"$T/err" || fail "synthetic run: $(cat "$T/err")"
json_check "synthetic default compares easy and easy++" "$T/syn.json" "[r['scheduler'] for r in d['runs']] == ['easy','easy++'] and d['input']['jobs'] == 2000"
usage_error "bad synthetic spec" "$SIM" -w 'synthetic:jobs=many'

# --- batches: --scheduler-file, --csv, --parse-only ------------------------------
SYN='synthetic:jobs=3000,procs=64,users=20'
printf '# a sweep\neasy\n\neasy++:window=1:metric=max\n  easy++:window=1:metric=min:fullness=partial  \neasy++:window=3\nconservative\n' >"$T/specs.txt"
"$SIM" -w "$SYN" --scheduler-file "$T/specs.txt" --csv --threads 2 >"$T/b.csv" 2>"$T/err" || fail "csv batch: $(cat "$T/err")"
"$SIM" -w "$SYN" -s easy,easy++:window=1:metric=max,easy++:window=3,conservative --json >"$T/b.json" 2>/dev/null
if python3 - "$T/b.csv" "$T/b.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = {r["scheduler"]: r for r in json.load(open(sys.argv[2]))["runs"]}
names = [r["scheduler"] for r in rows]
assert names == ["easy", "easy++:window=1:metric=max", "easy++:window=1:metric=min:fullness=partial",
                 "easy++:window=3", "conservative"], names
for r in rows:
    j = runs.get(r["scheduler"], runs["easy++:window=1:metric=max"])
    for k in ("avg_wait_minutes", "avg_bounded_slowdown", "avg_accuracy_percent", "utilization",
              "max_wait_minutes", "p99_wait_minutes"):
        assert abs(float(r[k]) - j[k]) <= 1e-6 * max(1.0, abs(j[k])), (r["scheduler"], k, r[k], j[k])
    assert int(r["jobs_measured"]) == j["jobs_measured"] and int(r["jobs_simulated"]) == 3000
# with a window of 1, metric and fullness cannot matter: replayed once
assert rows[2]["same_as"] == "easy++:window=1:metric=max" and rows[1]["same_as"] == "", rows[2]
assert float(rows[2]["replay_seconds"]) == 0 and float(rows[1]["replay_seconds"]) > 0
PY
then pass "--csv: one row per spec of the file, in order, equal to --json's figures; duplicates replayed once"
else fail "--csv: rows equal --json's figures"; fi
"$SIM" -w "$SYN" --scheduler-file "$T/specs.txt" --csv --threads 1 >"$T/b1.csv" 2>/dev/null
if cut -d, -f1-13 "$T/b.csv" | cmp -s - "$(cut -d, -f1-13 "$T/b1.csv" >"$T/b1.cut"; echo "$T/b1.cut")"
then pass "--csv: the same figures on 1 and 2 threads"; else fail "--csv: the same figures on 1 and 2 threads"; fi
printf 'easy\neasy++:window=0\n' >"$T/bad.txt"
usage_error "--scheduler-file: a bad line" "$SIM" -w "$SYN" --scheduler-file "$T/bad.txt" --csv
grep -q "bad.txt:2: scheduler 'easy++:window=0'" "$T/err" && pass "--scheduler-file: the bad line is named" || fail "--scheduler-file: the bad line is named"
usage_error "--scheduler-file: missing file" "$SIM" -w "$SYN" --scheduler-file "$T/none.txt"
printf '# nothing\n' >"$T/empty.txt"
usage_error "--scheduler-file: no scheduler" "$SIM" -w "$SYN" --scheduler-file "$T/empty.txt"
usage_error "--csv with --json" "$SIM" -w "$SYN" --csv --json
# the event loop's conventions apply to --csv's replays too (they were ignored there)
"$SIM" -w "$SYN" -s easy,easy++ --pass-per-event --no-correction-pass --csv >"$T/ppe.csv" 2>/dev/null
"$SIM" -w "$SYN" -s easy,easy++ --pass-per-event --no-correction-pass --json >"$T/ppe.json" 2>/dev/null
if python3 - "$T/ppe.csv" "$T/ppe.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = json.load(open(sys.argv[2]))["runs"]
sys.exit(0 if len(rows) == 2 and all(abs(float(c["avg_bounded_slowdown"]) - r["avg_bounded_slowdown"]) < 1e-6 and int(c["scheduling_passes"]) == r["scheduling_passes"] for c, r in zip(rows, runs)) else 1)
PY
then pass "--csv honours --pass-per-event and --no-correction-pass"; else fail "--csv honours --pass-per-event and --no-correction-pass"; fi
echo easy | "$SIM" -w "$SYN" --scheduler-file - --csv >"$T/stdin.csv" 2>/dev/null
[ "$(wc -l <"$T/stdin.csv")" = 2 ] && pass "--scheduler-file -: reads standard input" || fail "--scheduler-file -: reads standard input"
"$SIM" -w "$DATA/cli_small.swf" --parse-only --json >"$T/p.json" 2>/dev/null
json_check "--parse-only: the input, no run, the CPU time" "$T/p.json" "d['runs'] == [] and d['input']['jobs'] > 0 and d['cpu_seconds'] >= 0"
usage_error "--parse-only with --output-swf" "$SIM" -w "$DATA/cli_small.swf" --parse-only --output-swf "$T/x.swf"

[ $fails = 0 ] && echo "all CLI checks passed" || echo "$fails CLI checks failed"
exit $((fails > 0))
