#!/bin/sh
# The closed-loop contract of easypp-sim (docs/closed-loop.md): --feedback,
# --workload sessions:..., queue-order=creasy: one-line errors with exit 2
# for bad values, the closed-loop figures in the table and the JSON, links
# and fallbacks counted, and open replays unchanged by the new options.
# Uses $EASYPP_SIM (set by 'make check').
set -u
SIM=${EASYPP_SIM:-$(dirname "$0")/../../tools/easypp-sim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
usage_error() {  # usage_error NAME WORD CMD...: exit 2, one stderr line naming WORD
  name=$1 word=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; got=$?
  lines=$(wc -l <"$T/err")
  if [ "$got" = 2 ] && [ "$lines" = 1 ] && grep -q '^easypp-sim: ' "$T/err" && grep -q -- "$word" "$T/err"
  then pass "$name"
  else fail "$name (exit $got, $lines stderr lines): $(head -c 300 "$T/err")"; fi
}
json_check() {  # json_check NAME FILE PYTHON-EXPRESSION-ON-d
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then pass "$1"; else fail "$1"; fi
}

# --- bad values: one line, exit 2, naming the field --------------------------
usage_error "queue-order bad value" "queue-order" "$SIM" -w synthetic:jobs=200 --queue-order critical
usage_error "creasy-alpha negative" "creasy-alpha" "$SIM" -w synthetic:jobs=200 --creasy-alpha -5
usage_error "creasy-alpha not a number" "creasy-alpha" "$SIM" -w synthetic:jobs=200 -s easy:queue-order=creasy:creasy-alpha=lots
usage_error "sessions users 0" "users" "$SIM" -w sessions:users=0 --feedback
usage_error "sessions days not a number" "days" "$SIM" -w sessions:days=two --feedback
usage_error "sessions cont-max above 1" "cont-max" "$SIM" -w sessions:cont-max=1.5 --feedback
usage_error "sessions unknown key" "nope" "$SIM" -w sessions:nope=1
usage_error "sessions item without =" "users" "$SIM" -w sessions:users
usage_error "sessions with --load" "--load" "$SIM" -w sessions:users=5 --load 0.5 --feedback
usage_error "feedback, sessions site, jitter" "--shake-jitter" "$SIM" -w sessions:users=5 --feedback --shake 3 --shake-jitter 10
usage_error "feedback with csv and shake" "--shake" "$SIM" -w synthetic:jobs=200 --feedback --csv --shake 3
usage_error "feedback takes no value" "feedback" "$SIM" -w synthetic:jobs=200 --feedback=yes

# --- help and the closed-loop section -----------------------------------------
"$SIM" --help >"$T/help"
for w in --feedback sessions creasy --creasy-alpha; do
  if grep -q -- "$w" "$T/help"; then pass "help mentions $w"; else fail "help mentions $w"; fi
done

S="sessions:users=60,days=10,procs=64"
if "$SIM" -w "$S" --feedback -s easy,easy:queue-order=creasy >"$T/text" 2>"$T/err"; then
  pass "sessions --feedback runs"
else
  fail "sessions --feedback runs: $(head -c 300 "$T/err")"
fi
for w in "closed loop (--feedback)" "jobs/h" "sessions" "per runtime class" "<=1m runtime" "1-10m runtime" ">10m runtime"; do
  if grep -qF -- "$w" "$T/text"; then pass "table shows '$w'"; else fail "table shows '$w'"; fi
done
"$SIM" -w "$S" --feedback -s easy,easy:queue-order=creasy --json >"$T/fb.json"
json_check "JSON closed_loop figures" "$T/fb.json" \
  'all(r["closed_loop"]["throughput_per_hour"] > 0 and r["closed_loop"]["avg_session_jobs"] >= 1 and len(r["closed_loop"]["runtime_classes"]) == 3 for r in d["runs"])'
json_check "JSON runtime classes add up to the measured jobs" "$T/fb.json" \
  'all(sum(c["jobs"] for c in r["closed_loop"]["runtime_classes"]) == r["jobs_measured"] for r in d["runs"])'
json_check "JSON links: no fallback on a session site" "$T/fb.json" \
  'all(r["closed_loop"]["links"]["linked"] > 0 and r["closed_loop"]["links"]["fallback_missing"] == 0 for r in d["runs"])'
json_check "JSON creasy knobs" "$T/fb.json" '"creasy-alpha=6000" in d["runs"][1]["knobs"] and "creasy" not in d["runs"][0]["knobs"]'
json_check "JSON submitted + not submitted = jobs" "$T/fb.json" \
  'all(r["closed_loop"]["jobs_submitted"] + r["closed_loop"]["jobs_not_submitted"] == d["input"]["jobs"] for r in d["runs"])'

# --- --feedback with --shake: the copies replayed closed-loop ------------------
"$SIM" -w "$S" --feedback -s easy,easy++ --shake 4 --threads 2 >"$T/shake.txt" 2>"$T/err" ||
  fail "sessions --feedback --shake runs: $(head -c 300 "$T/err")"
for w in "closed loop, shaken: in each copy" "jobs/session" "more: copies in which the scheduler has more than easy"; do
  if grep -qF -- "$w" "$T/shake.txt"; then pass "shaken table shows '$w'"; else fail "shaken table shows '$w'"; fi
done
if awk '/^closed loop, shaken/ { s = 1 } s && $1 == "easy++" && $NF ~ /^[0-9]+$/ && /\/4/ { ok = 1 } END { exit !ok }' "$T/shake.txt"
then pass "shaken closed-loop row of easy++ (more: n/4)"; else fail "shaken closed-loop row of easy++: $(grep -A4 '^closed loop, shaken' "$T/shake.txt")"; fi
"$SIM" -w "$S" --feedback -s easy,easy++ --shake 4 --threads 1 --json >"$T/shake1.json"
"$SIM" -w "$S" --feedback -s easy,easy++ --shake 4 --threads 2 --json >"$T/shake2.json"
json_check "JSON shaken closed_loop spread per run" "$T/shake1.json" \
  'all(r["shaken"]["copies"] == 4 and r["shaken"]["closed_loop"]["throughput_per_hour"]["min"] > 0 and r["shaken"]["closed_loop"]["throughput_per_hour"]["min"] <= r["shaken"]["closed_loop"]["throughput_per_hour"]["mean"] <= r["shaken"]["closed_loop"]["throughput_per_hour"]["max"] and len(r["shaken"]["closed_loop"]["runtime_classes"]) == 3 for r in d["runs"])'
json_check "JSON shaken closed_loop: paired change for the second run only" "$T/shake1.json" \
  '"percent_change_vs_first" not in d["runs"][0]["shaken"]["closed_loop"] and 0 <= d["runs"][1]["shaken"]["closed_loop"]["more_than_first"]["throughput_per_hour"] <= 4'
json_check "JSON shaken copies differ (the load band moves the users' first jobs)" "$T/shake1.json" \
  'd["runs"][0]["shaken"]["closed_loop"]["jobs_submitted"]["max"] > d["runs"][0]["shaken"]["closed_loop"]["jobs_submitted"]["min"]'
json_check "JSON links of every copy: none falls back on a session site" "$T/shake1.json" \
  'len(d["shake"]["links_per_copy"]) == 4 and all(l["linked"] > 0 and l["fallback_missing"] + l["fallback_not_earlier"] + l["fallback_no_think"] == 0 for l in d["shake"]["links_per_copy"])'
# the shaken wait and bsld are the closed runs' (on the workload each copy made):
# the mean of the measured jobs over copies is not the input's job count.
json_check "JSON shaken metrics measured on the workloads the copies made" "$T/shake1.json" \
  'all(r["shaken"]["jobs_measured"]["max"] < d["input"]["jobs"] for r in d["runs"])'
if python3 - "$T/shake1.json" "$T/shake2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if [r["shaken"] for r in a["runs"]] == [r["shaken"] for r in b["runs"]] else 1)
PY
then pass "shaken closed-loop figures do not depend on --threads"; else fail "shaken closed-loop figures do not depend on --threads"; fi
# jitter on a log with links: the links that a jitter reorders fall back, counted per copy
"$SIM" -w synthetic:jobs=3000 --feedback -s easy --shake 3 --shake-jitter 3600 --json >"$T/jit.json"
json_check "jitter: reordered links counted as not earlier, per copy" "$T/jit.json" \
  'all(l["fallback_not_earlier"] > 0 and l["linked"] + l["fallback_not_earlier"] + l["independent"] == d["input"]["jobs"] for l in d["shake"]["links_per_copy"])'

# --- --feedback with --csv: the closed runs' figures, five more columns --------
"$SIM" -w "$S" --feedback -s easy,easy++,easy --csv --threads 2 >"$T/fb.csv" 2>"$T/err" ||
  fail "--feedback --csv runs: $(head -c 300 "$T/err")"
if python3 - "$T/fb.csv" "$T/fb.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = json.load(open(sys.argv[2]))["runs"]  # easy, easy:queue-order=creasy (above)
ok = len(rows) == 3 and list(rows[0])[-5:] == ["jobs_submitted", "jobs_not_submitted", "throughput_per_hour", "sessions", "avg_session_jobs"]
easy = runs[0]
ok = ok and int(rows[0]["jobs_submitted"]) == easy["closed_loop"]["jobs_submitted"]
ok = ok and int(rows[0]["jobs_measured"]) == easy["jobs_measured"]
ok = ok and abs(float(rows[0]["throughput_per_hour"]) - easy["closed_loop"]["throughput_per_hour"]) < 1e-6
ok = ok and abs(float(rows[0]["avg_bounded_slowdown"]) - easy["avg_bounded_slowdown"]) < 1e-6
ok = ok and rows[2]["same_as"] == "easy" and rows[2]["throughput_per_hour"] == rows[0]["throughput_per_hour"]
sys.exit(0 if ok else 1)
PY
then pass "--feedback --csv: the table's closed-loop figures, extra columns"; else fail "--feedback --csv: $(head -c 600 "$T/fb.csv")"; fi
"$SIM" -w "$S" -s easy --csv >"$T/open.csv"
if head -1 "$T/open.csv" | grep -q ',log_offered_load$'; then pass "open --csv: no closed-loop columns"; else fail "open --csv: no closed-loop columns"; fi

# --- fallbacks counted on a log with broken links -------------------------------
cat >"$T/links.swf" <<'SWF'
; MaxProcs: 4
    1      0  -1  100  4  -1  -1  4  100  -1  1  1  1  1  1  1  -1   -1
    2      0  -1 1000  4  -1  -1  4 1000  -1  1  1  1  1  1  1  -1   -1
    3   5000  -1   50  4  -1  -1  4   50  -1  1  1  1  1  1  1   1   10
    4   5001  -1   50  4  -1  -1  4   50  -1  1  1  1  1  1  1  77   10
    5   5002  -1   50  4  -1  -1  4   50  -1  1  1  1  1  1  1   6   10
    6   5003  -1   50  4  -1  -1  4   50  -1  1  1  1  1  1  1   1   -1
SWF
"$SIM" -w "$T/links.swf" --feedback -s easy --json --warmup 0 >"$T/links.json" 2>"$T/err"
json_check "fallbacks by reason" "$T/links.json" \
  'd["runs"][0]["closed_loop"]["links"] == {"linked": 1, "independent": 2, "fallback_missing": 1, "fallback_not_earlier": 1, "fallback_no_think": 1, "submitted_earlier": 1, "submitted_later": 0}'
"$SIM" -w "$T/links.swf" --feedback -s easy >"$T/links.txt"
if grep -q "3 fall back to their logged submit time (1 preceding job not in the workload, 1 not earlier in the log, 1 think time unknown)" "$T/links.txt"; then
  pass "fallbacks reported in the table"
else
  fail "fallbacks reported in the table: $(grep 'closed loop' "$T/links.txt")"
fi
"$SIM" -w "$T/links.swf" --feedback -s easy --output-swf "$T/sched.swf" >/dev/null
if awk '!/^;/ && $1 == 3 { exit !($2 == 110 && $3 == 990) }' "$T/sched.swf"; then
  pass "--output-swf writes the fed-back submit time and wait"
else
  fail "--output-swf writes the fed-back submit time and wait: $(awk '!/^;/ && $1 == 3' "$T/sched.swf")"
fi

# --- open replays: the new options change nothing unless asked ----------------
"$SIM" -w synthetic:jobs=2000 -s easy,easy++ --json >"$T/a.json"
"$SIM" -w synthetic:jobs=2000 -s easy,easy++ --creasy-alpha 1500 --json >"$T/b.json"
json_check "no closed_loop without --feedback" "$T/a.json" 'all("closed_loop" not in r for r in d["runs"])'
if python3 - "$T/a.json" "$T/b.json" <<'PY'
import json, sys
clock = {"elapsed_seconds", "jobs_per_second", "read_seconds", "peak_rss_mb", "cpu_seconds"}
def strip(o):
    if isinstance(o, dict): return {k: strip(v) for k, v in o.items() if k not in clock}
    if isinstance(o, list): return [strip(v) for v in o]
    return o
a, b = (strip(json.load(open(p))) for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
PY
then pass "creasy-alpha alone changes nothing under queue-order=fcfs"; else fail "creasy-alpha alone changes nothing under queue-order=fcfs"; fi

# --- easypp-gen --sessions: the site as SWF, its links replayed ---------------
GEN=${EASYPP_GEN:-$(dirname "$SIM")/easypp-gen}
gen_error() {  # gen_error NAME WORD ARGS...
  name=$1 word=$2; shift 2
  "$GEN" "$@" >"$T/out" 2>"$T/err"; got=$?
  if [ "$got" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$word" "$T/err"; then pass "$name"
  else fail "$name (exit $got): $(head -c 300 "$T/err")"; fi
}
gen_error "gen --sessions bad users" "users" --sessions users=x
gen_error "gen --sessions with --fit" "--fit" --sessions users=3 --fit x.swf
gen_error "gen --sessions with --users" "SPEC" --sessions users=3 --users 5
if "$GEN" --sessions users=20,days=5,procs=32 -o "$T/site.swf" && \
   "$SIM" -w "$T/site.swf" --feedback -s easy --json >"$T/site.json"; then
  json_check "gen --sessions: links replayed, none falls back" "$T/site.json" \
    'd["runs"][0]["closed_loop"]["links"]["linked"] > 0 and d["runs"][0]["closed_loop"]["links"]["fallback_missing"] + d["runs"][0]["closed_loop"]["links"]["fallback_no_think"] + d["runs"][0]["closed_loop"]["links"]["fallback_not_earlier"] == 0'
else
  fail "gen --sessions writes a replayable site"
fi
"$GEN" --sessions users=20,days=5,procs=32 -o "$T/site2.swf"
if cmp -s "$T/site.swf" "$T/site2.swf"; then pass "gen --sessions deterministic"; else fail "gen --sessions deterministic"; fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
