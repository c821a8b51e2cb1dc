#!/bin/sh
# The easypp-gen command-line contract: the built-in generator's basics, and
# the fitted Markov model (--fit, --model, --validate; easypp-sim --workload
# model:FILE): outputs, one-line errors with status 2 (a bad model names its
# file, line and field), nothing half-written.
# Uses $EASYPP_GEN, $EASYPP_SIM and $TEST_DATA_DIR (set by 'make check').
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=${EASYPP_GEN:-$HERE/../../tools/easypp-gen}
SIM=${EASYPP_SIM:-$HERE/../../tools/easypp-sim}
DATA=${TEST_DATA_DIR:-$HERE/../data}
MAN="$HERE/../../tools/easypp-gen.1"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
expect_status() {  # expect_status NAME STATUS CMD...
  name=$1 want=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; got=$?
  if [ "$got" = "$want" ]; then pass "$name"; else fail "$name (exit $got, wanted $want): $(head -c 300 "$T/err")"; fi
}
usage_error() {  # usage_error NAME CMD...: status 2, one line on stderr
  name=$1; shift
  "$@" >"$T/out" 2>"$T/err"; got=$?
  lines=$(wc -l <"$T/err")
  if [ "$got" = 2 ] && [ "$lines" = 1 ] && grep -q '^easypp-gen: ' "$T/err"; then pass "$name"
  else fail "$name (exit $got, $lines stderr lines): $(head -c 300 "$T/err")"; fi
}
json_check() {  # json_check NAME FILE PYTHON-EXPRESSION-ON-d
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then pass "$1"; else fail "$1"; fi
}

# --- help, man page ---------------------------------------------------------------------
expect_status "help exits 0" 0 "$GEN" --help
for opt in --seed --jobs --procs --users --load --max-estimate --output --fit --model --thin --validate \
           --against --seeds --scheduler --json; do
  grep -q -- "$opt" "$T/out" || fail "help documents $opt"
  name=${opt#--}
  grep -qF -e "\\-\\-$name" -e "\\-\\-$(echo "$name" | sed 's/-/\\-/g')" "$MAN" || fail "man page documents $opt"
done
pass "help and man page document every option"

# --- the built-in generator ------------------------------------------------------------
expect_status "synthetic workload" 0 "$GEN" --jobs 300 --procs 32 -o "$T/syn.swf"
[ "$(grep -vc '^;' "$T/syn.swf")" = 300 ] && pass "300 jobs written" || fail "300 jobs written"
usage_error "synthetic: bad --jobs" "$GEN" --jobs 0

# --- fit a model ------------------------------------------------------------------------
LOG="$DATA/cli_small.swf"
expect_status "--fit writes a model" 0 "$GEN" --fit "$LOG" -o "$T/m.json"
grep -q "fitted to .*cli_small.swf: .* states, .* transitions, 4 users, written to $T/m.json" "$T/err" \
  && pass "--fit says what it fitted" || fail "--fit says what it fitted: $(cat "$T/err")"
json_check "model file: format, version, machine, states" "$T/m.json" \
  "d['format'] == 'easypp-markov-model' and d['format_version'] == 1 and d['machine']['procs'] == 16 and [s['size_class'] for s in d['states']] == [2, 4, 8, 16] and d['generation']['jobs'] == 24 and d['users']['users'] == 4"
"$GEN" --fit "$LOG" >"$T/m-stdout.json" 2>/dev/null
cmp -s "$T/m.json" "$T/m-stdout.json" && pass "--fit to standard output: the same model" || fail "--fit to standard output"
expect_status "--fit from standard input" 0 sh -c "\"$GEN\" --fit - <\"$LOG\" -o \"$T/m-stdin.json\""

# --- generate from it -------------------------------------------------------------------
expect_status "--model writes SWF" 0 "$GEN" --model "$T/m.json" --seed 3 --jobs 500 -o "$T/g.swf"
[ "$(grep -vc '^;' "$T/g.swf")" = 500 ] && pass "--jobs 500: 500 jobs" || fail "--jobs 500"
grep -q '^; MaxProcs: 16' "$T/g.swf" && pass "generated log keeps the machine" || fail "generated log keeps the machine"
"$GEN" --model "$T/m.json" --seed 3 --jobs 500 >"$T/g2.swf" 2>/dev/null
cmp -s "$T/g.swf" "$T/g2.swf" && pass "same seed, same workload" || fail "same seed, same workload"
"$GEN" --model "$T/m.json" --seed 4 --jobs 500 >"$T/g3.swf" 2>/dev/null
cmp -s "$T/g.swf" "$T/g3.swf" && fail "another seed, another workload" || pass "another seed, another workload"
expect_status "--model default jobs: as many as the log" 0 "$GEN" --model "$T/m.json" -o "$T/g4.swf"
[ "$(grep -vc '^;' "$T/g4.swf")" = 24 ] && pass "24 jobs by default" || fail "24 jobs by default"

# easypp-sim draws the same workload.
"$SIM" -w "$T/g.swf" -s easy,easy++ --json -q >"$T/a.json" 2>"$T/err" &&
"$SIM" -w "model:$T/m.json:seed=3,jobs=500" -s easy,easy++ --json -q >"$T/b.json" 2>>"$T/err"
if python3 -c "
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
keys = ['avg_wait_minutes', 'avg_bounded_slowdown', 'avg_accuracy_percent', 'utilization']
sys.exit(0 if all(x[k] == y[k] for x, y in zip(a['runs'], b['runs']) for k in keys) else 1)" "$T/a.json" "$T/b.json"; then
  pass "easypp-sim --workload model:FILE:seed=3,jobs=500 replays easypp-gen's jobs"
else fail "easypp-sim --workload model:FILE: $(cat "$T/err")"; fi

# --- validation -------------------------------------------------------------------------
expect_status "--fit --validate" 0 "$GEN" --fit "$LOG" --validate --seeds 2
grep -q 'runtime / estimate' "$T/out" && grep -q '^easy++ ' "$T/out" && grep -q 'KS distance' "$T/out" \
  && pass "the validation table: correlations, KS distances, EASY++" || fail "validation table: $(head -5 "$T/out")"
[ ! -e "$T/m-none.json" ] && pass "--validate without --output writes no model" || fail "no model"
expect_status "--model --validate --against --json" 0 "$GEN" --model "$T/m.json" --validate --against "$LOG" \
  --seeds 3 --seed 5 --scheduler easy,conservative --json
cp "$T/out" "$T/v.json"
json_check "validation JSON: seeds, rows for each scheduler, one value per seed" "$T/v.json" \
  "d['seeds'] == [5, 6, 7] and {r['group'] for r in d['rows']} >= {'easy', 'conservative', 'correlation', 'KS distance'} and all(len(r['model']) == 3 for r in d['rows']) and all(('log' in r) != r['distance'] for r in d['rows'])"
json_check "validation JSON: the log's own figures" "$T/v.json" \
  "[r['log'] for r in d['rows'] if r['figure'] == 'jobs'] == [24] and [r['log'] for r in d['rows'] if r['figure'] == 'users'] == [4]"

# --- bad usage: one line, status 2 -------------------------------------------------------
usage_error "--fit and --model" "$GEN" --fit "$LOG" --model "$T/m.json"
usage_error "--users with --fit" "$GEN" --fit "$LOG" --users 5
usage_error "--procs with --model" "$GEN" --model "$T/m.json" --procs 64
usage_error "--jobs with --fit" "$GEN" --fit "$LOG" --jobs 10
usage_error "--validate without a model" "$GEN" --validate
usage_error "--thin without a model" "$GEN" --thin 10
usage_error "--seeds without --validate" "$GEN" --fit "$LOG" --seeds 3
usage_error "--against without --validate" "$GEN" --model "$T/m.json" --against "$LOG"
usage_error "--model --validate without --against" "$GEN" --model "$T/m.json" --validate
usage_error "--seeds 0" "$GEN" --fit "$LOG" --validate --seeds 0
usage_error "--thin 0" "$GEN" --model "$T/m.json" --thin 0
usage_error "--thin x" "$GEN" --model "$T/m.json" --thin x
usage_error "bad --scheduler" "$GEN" --fit "$LOG" --validate --scheduler easy,nope
usage_error "--fit missing log" "$GEN" --fit "$T/none.swf" -o "$T/x.json"
[ ! -e "$T/x.json" ] && pass "no model written for a missing log" || fail "no model written for a missing log"
head -10 "$LOG" >"$T/one.swf"
usage_error "--fit a log of one job" "$GEN" --fit "$T/one.swf"
usage_error "--model missing file" "$GEN" --model "$T/none.json"
usage_error "--model not JSON" "$GEN" --model "$LOG"
grep -q "cli_small.swf:1: not valid JSON" "$T/err" && pass "not JSON: file and line" || fail "not JSON: $(cat "$T/err")"
sed 's/"thin": 1/"thin": 0/' "$T/m.json" >"$T/bad.json"
line=$(grep -n '"thin": 0' "$T/bad.json" | cut -d: -f1)
usage_error "--model with a bad field" "$GEN" --model "$T/bad.json"
grep -q "^easypp-gen: $T/bad.json:$line: field generation.thin: out of range" "$T/err" \
  && pass "bad field: file, line $line, field" || fail "bad field: $(cat "$T/err")"
"$SIM" -w "model:$T/bad.json" >/dev/null 2>"$T/err"; st=$?
[ $st = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "$T/bad.json:$line: field generation.thin" "$T/err" \
  && pass "easypp-sim model:BAD: exit 2, file, line, field" || fail "easypp-sim model:BAD (exit $st): $(cat "$T/err")"
"$SIM" -w "model:$T/m.json:seed=x" >/dev/null 2>"$T/err"; st=$?
[ $st = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && pass "easypp-sim model: bad seed, exit 2" || fail "easypp-sim bad seed (exit $st)"

# --- nothing half-written ------------------------------------------------------------------
mkdir "$T/ro" && chmod 0555 "$T/ro"
if [ "$(id -u)" != 0 ]; then
  usage_error "--fit into a read-only directory" "$GEN" --fit "$LOG" -o "$T/ro/m.json"
fi
"$GEN" --fit "$LOG" -o "$T/nodir/m.json" >/dev/null 2>"$T/err"; st=$?
[ $st != 0 ] && [ ! -e "$T/nodir" ] && [ "$(wc -l <"$T/err")" = 1 ] && pass "--fit into a missing directory fails cleanly" \
  || fail "--fit into a missing directory (exit $st): $(cat "$T/err")"
[ -z "$(find "$T" -name '*.tmp.*')" ] && pass "no temporary file left" || fail "temporary left: $(find "$T" -name '*.tmp.*')"

[ $fails = 0 ] && echo "all easypp-gen checks passed" || echo "$fails easypp-gen checks failed"
exit $((fails > 0))
