#!/bin/sh
# The easypp-ctl command-line contract on hand-written fixtures
# (tests/data/ctl/ok: a valid status and state; tests/data/ctl/corrupt: a
# truncated status and a state with a negative runtime): output of status,
# jobs, users and state, exit statuses (0 ok, 1 missing/corrupt, 2 usage) and
# one-line errors, --json, and finding StateSaveLocation through scontrol.
# Uses $EASYPP_CTL and $TEST_DATA_DIR (set by 'make check').
set -u
CTL=${EASYPP_CTL:-$(dirname "$0")/../../plugin/easypp-ctl}
DATA=${TEST_DATA_DIR:-$(dirname "$0")/../data}/ctl
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TZ=UTC; export TZ
LC_ALL=C; export LC_ALL
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# run CMD...: output in $T/out and $T/err, status in $st.
run() { "$@" >"$T/out" 2>"$T/err"; st=$?; }
# expect NAME STATUS CMD...
expect() {
  name=$1 want=$2; shift 2
  run "$@"
  if [ "$st" = "$want" ]; then pass "$name"; else fail "$name (exit $st, wanted $want): $(head -c 300 "$T/err")"; fi
}
# one_line_error NAME STATUS CMD...: exit STATUS, one stderr line "easypp-ctl: ...", nothing on stdout.
one_line_error() {
  name=$1 want=$2; shift 2
  run "$@"
  lines=$(wc -l <"$T/err")
  if [ "$st" = "$want" ] && [ "$lines" = 1 ] && grep -q '^easypp-ctl: ' "$T/err" && [ ! -s "$T/out" ]; then pass "$name"
  else fail "$name (exit $st, $lines stderr lines): $(head -c 300 "$T/err")"; fi
}
has() {  # has NAME FILE PATTERN (grep -E)
  if grep -Eq -- "$3" "$2"; then pass "$1"; else fail "$1: no /$3/ in: $(head -c 600 "$2")"; fi
}
hasnt() {
  if grep -Eq -- "$3" "$2"; then fail "$1: unexpected /$3/"; else pass "$1"; fi
}
json_check() {  # json_check NAME FILE PYTHON-EXPRESSION-ON-d
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then pass "$1"; else fail "$1: $(head -c 300 "$2")"; fi
}

OK="$DATA/ok"
BAD="$DATA/corrupt"

# --- help and version ---------------------------------------------------------
expect "help exits 0" 0 "$CTL" --help
for word in status jobs users state --dir --json --user --partition --estimate --file --help --version; do
  grep -q -- "$word" "$T/out" || fail "help documents $word"
done
pass "help documents every command and option"
expect "version exits 0" 0 "$CTL" --version
has "version names easypp" "$T/out" '^easypp-ctl \(easypp\) [0-9]'

# --- usage errors: status 2, one line ------------------------------------------
one_line_error "unknown option" 2 "$CTL" --dir "$OK" --frobnicate
one_line_error "unknown command" 2 "$CTL" --dir "$OK" frobnicate
one_line_error "missing value" 2 "$CTL" status --dir
one_line_error "option of another command" 2 "$CTL" --dir "$OK" status --user alice
one_line_error "stray argument" 2 "$CTL" --dir "$OK" jobs extra
one_line_error "bad estimate" 2 "$CTL" --dir "$OK" users --estimate 2x
one_line_error "zero estimate" 2 "$CTL" --dir "$OK" users --estimate 0
one_line_error "unknown user" 2 "$CTL" --dir "$OK" users no_such_user_easypp
one_line_error "option twice" 2 "$CTL" --dir "$OK" --dir "$OK" status

# --- status ----------------------------------------------------------------------
expect "status exits 0" 0 "$CTL" --dir "$OK" status
has "status: written" "$T/out" 'written +2024-05-01T12:00:00'
has "status: versions" "$T/out" 'easypp 0\.1\.0, Slurm 22\.05\.8'
has "status: settings" "$T/out" 'settings +interval=10s plan=prediction window=2 metric=avg'
has "status: history" "$T/out" 'history +3 users, 5 runtimes'
has "status: jobs" "$T/out" 'jobs +2 pending, 2 running'
has "status: last cycle" "$T/out" 'started +2024-05-01T11:59:59, took 0\.013s, trigger interval'
has "status: last cycle started" "$T/out" 'started +1 in order, 1 by backfill'
has "status: totals" "$T/out" 'cycles +360'
has "status: cycle time" "$T/out" 'cycle time +4\.500s total, 0\.013s mean, 0\.250s longest'
has "status: old file marked stale" "$T/out" 'STALE'
has "status: stale warning on stderr" "$T/err" '^easypp-ctl: warning: the status is .* old'
expect "status is the default command" 0 "$CTL" --dir "$OK"
has "default command prints the status" "$T/out" '^sched/easypp status'

mkdir "$T/fresh"
sed "s/\"written\": 1714564800/\"written\": $(date +%s)/" "$OK/easypp_status.json" >"$T/fresh/easypp_status.json"
expect "fresh status exits 0" 0 "$CTL" --dir "$T/fresh"
hasnt "fresh status: not stale" "$T/out" 'STALE'
if [ -s "$T/err" ]; then fail "fresh status: nothing on stderr"; else pass "fresh status: nothing on stderr"; fi

hasnt "status without selective: no thresholds" "$T/out" '^  selective '
hasnt "status without slowdowns: no slowdowns line" "$T/out" '^  slowdowns '

# Selective reservations: the thresholds the last cycle used and the slowdowns
# adaptive ones follow (members selective_thresholds and slowdowns).
mkdir "$T/sel"
sed -e "s/\"written\": 1714564800/\"written\": $(date +%s)/" \
    -e 's/"easypp_fallback": "estimate"}/"easypp_fallback": "estimate", "easypp_selective": "adaptive-d", "easypp_sel_scale": "1.5"}/' \
    -e 's/^ "history": \[$/ "slowdowns": {"sum": [4, 0, 3.5, 1], "count": [2, 0, 1, 1], "sum_all": 8.5, "count_all": 4},\
 "selective_thresholds": [3, 1.5, 5.25, 1.5],\
 "history": [/' "$OK/easypp_status.json" >"$T/sel/easypp_status.json"
expect "selective status exits 0" 0 "$CTL" --dir "$T/sel"
has "selective status: the thresholds per category" "$T/out" '^  selective +adaptive, SN 3\.00, SW 1\.50, LN 5\.25, LW 1\.50 \(short: planning value <= 1h00m, narrow: <= 8 CPUs\)$'
has "selective status: how adaptive ones are made" "$T/out" '1\.50 x the mean bounded slowdown of the finished jobs'
has "selective status: the slowdowns" "$T/out" '^  slowdowns +mean 2\.12 over 4 finished jobs; SN 2\.00 \(2\), SW - \(0\), LN 3\.50 \(1\), LW 1\.00 \(1\)$'
if [ -s "$T/err" ]; then fail "selective status: nothing on stderr"; cat "$T/err"; else pass "selective status: nothing on stderr"; fi
expect "selective status --json exits 0" 0 "$CTL" --dir "$T/sel" --json status
has "selective status --json: thresholds" "$T/out" '"selective_thresholds"'
has "selective status --json: slowdowns" "$T/out" '"count_all": 4'
sed 's/"selective_thresholds": \[3, 1.5, 5.25, 1.5\]/"selective_thresholds": [3, 1.5]/' "$T/sel/easypp_status.json" >"$T/sel/bad.json"
mkdir "$T/selbad" && mv "$T/sel/bad.json" "$T/selbad/easypp_status.json"
expect "status with 2 thresholds is corrupt (exit 1)" 1 "$CTL" --dir "$T/selbad"
has "corrupt thresholds: file and field" "$T/err" 'easypp_status.json: field selective_thresholds: must have 1 or 4 elements, got 2'

# --- jobs ----------------------------------------------------------------------------
expect "jobs exits 0" 0 "$CTL" --dir "$OK" jobs
has "jobs: header" "$T/out" '^JOBID +USER +PARTITION +STATE +ESTIMATE +PREDICTION +SOURCE +CORR +START +END +RESERVED$'
has "jobs: running job, start and predicted end" "$T/out" '^101 +alice +batch +RUNNING +2h00m +1h00m +history +0 +2024-05-01T11:00:00 +2024-05-01T12:00:00$'
has "jobs: corrected job" "$T/out" '^102 +[^ ]+ +batch +RUNNING +4h00m +2h00m +history +1 +2024-05-01T11:30:00 +2024-05-01T13:30:00$'
has "jobs: array task, planned start, reservation" "$T/out" '^103_2 +root +debug +PENDING +30m00s +30m00s +fallback +0 +2024-05-01T12:10:00 +2024-05-01T12:40:00 +yes$'
has "jobs: pending without a planned start" "$T/out" '^104 +alice +batch +PENDING +1d00h +1h00m +history +0 +\(none\) +-$'
# uid 5002 has no name in the status file: the passwd name, else the uid.
name5002=$(getent passwd 5002 | cut -d: -f1); [ -n "$name5002" ] || name5002=5002
has "jobs: uid without a name resolved through passwd" "$T/out" "^102 +$name5002 "
[ "$(wc -l <"$T/out")" = 5 ] && pass "jobs: 4 jobs" || fail "jobs: 4 jobs ($(wc -l <"$T/out") lines)"

expect "jobs --user alice" 0 "$CTL" --dir "$OK" jobs --user alice
[ "$(grep -c alice "$T/out")" = 2 ] && [ "$(wc -l <"$T/out")" = 3 ] && pass "jobs --user alice: 2 jobs" || fail "jobs --user alice: $(cat "$T/out")"
expect "jobs --user by uid" 0 "$CTL" --dir "$OK" jobs --user=5001
[ "$(wc -l <"$T/out")" = 3 ] && pass "jobs --user 5001: 2 jobs" || fail "jobs --user 5001"
expect "jobs --partition debug" 0 "$CTL" jobs --partition debug --dir "$OK"
[ "$(wc -l <"$T/out")" = 2 ] && grep -q '^103_2 ' "$T/out" && pass "jobs --partition debug: 1 job" || fail "jobs --partition: $(cat "$T/out")"
expect "jobs without a match" 0 "$CTL" --dir "$OK" jobs --partition nowhere
has "jobs without a match says so" "$T/out" '^no matching jobs$'

mkdir "$T/susp"
sed 's/"job_id": 102, \(.*\)"state": "RUNNING"/"job_id": 102, \1"state": "SUSPENDED"/' "$OK/easypp_status.json" >"$T/susp/easypp_status.json"
expect "suspended job: status" 0 "$CTL" --dir "$T/susp" status
has "suspended job: counted apart" "$T/out" 'jobs +2 pending, 1 running, 1 suspended'
expect "suspended job: jobs" 0 "$CTL" --dir "$T/susp" jobs
has "suspended job: start and predicted end" "$T/out" '^102 +[^ ]+ +batch +SUSPENDED +4h00m +2h00m +history +1 +2024-05-01T11:30:00 +2024-05-01T13:30:00$'

# --- users ------------------------------------------------------------------------
expect "users exits 0" 0 "$CTL" --dir "$OK" users
has "users: source" "$T/out" "^History from $OK/easypp_status.json$"
has "users: predictor from the settings" "$T/out" '^Predictor: window=2 metric=avg history_type=all fullness=full fallback=estimate$'
has "users: alice, history and prediction" "$T/out" '^alice +5001 +2 +50m00s/2h00m 1h10m/2h00m +2h00m -> 1h00m \(history\)$'
has "users: one job is not a full window" "$T/out" '^root +0 +1 +1m00s/30m00s +30m00s -> 30m00s \(fallback\)$'
has "users: (2h40m+20m)/2" "$T/out" '4h00m -> 1h30m \(history\)$'
# Another predictor from the same history: ewma, alpha 0.75 (50m then 1h10m:
# 0.75 * 70 + 0.25 * 50 = 65 minutes).
mkdir "$T/ewma"
sed 's/"easypp_window": "2"/"easypp_window": "2", "easypp_predictor": "ewma", "easypp_ewma_alpha": "0.75"/' \
  "$OK/easypp_status.json" >"$T/ewma/easypp_status.json"
expect "users under ewma exits 0" 0 "$CTL" --dir "$T/ewma" users
has "users under ewma: the predictor named" "$T/out" '^Predictor: ewma alpha=0.75 window=2 history_type=all fullness=full fallback=estimate$'
has "users under ewma: alice's moving average" "$T/out" '^alice +5001 +2 +50m00s/2h00m 1h10m/2h00m +2h00m -> 1h05m \(history\)$'
expect "users alice" 0 "$CTL" --dir "$OK" users alice
has "users alice: header" "$T/out" '^User alice \(uid 5001\)$'
has "users alice: runtimes" "$T/out" '1 +50m00s +2h00m +42%'
has "users alice: prediction" "$T/out" 'a new job asking 2h00m would be planned with 1h00m \(history\)'
expect "users 5002 --estimate" 0 "$CTL" --dir "$OK" users 5002 --estimate 1:00:00
has "users --estimate: capped at the estimate" "$T/out" 'asking 1h00m would be planned with 1h00m \(history\)'
expect "users --estimate 3h" 0 "$CTL" --dir "$OK" users 5002 -e 3h
has "users --estimate 3h: the average" "$T/out" 'asking 3h00m would be planned with 1h30m \(history\)'
# Without a status file (plugin never ran a cycle), the state file is used.
mkdir "$T/stateonly"
cp "$OK/easypp_state.json" "$T/stateonly/"
expect "users from the state file" 0 "$CTL" --dir "$T/stateonly" users
has "users from the state file: source" "$T/out" "^History from $T/stateonly/easypp_state.json$"
has "users from the state file: prediction" "$T/out" '2h00m -> 1h00m \(history\)'

# With easypp_plan=estimate the plugin plans with time limits: so must the
# predictions easypp-ctl shows (the settings come from the status file and go
# through the plugin's own table).
mkdir "$T/byestimate"
sed 's/"easypp_plan": "prediction"/"easypp_plan": "estimate"/' "$OK/easypp_status.json" >"$T/byestimate/easypp_status.json"
expect "users under plan=estimate" 0 "$CTL" --dir "$T/byestimate" users
has "users under plan=estimate: says so" "$T/out" '^Planning with time limits \(easypp_plan=estimate\)'
has "users under plan=estimate: planned with the limit" "$T/out" '^alice +5001 +2 +50m00s/2h00m 1h10m/2h00m +2h00m -> 2h00m \(time limit\)$'
hasnt "users under plan=estimate: no prediction shown" "$T/out" '\(history\)'
# Settings of a newer plugin: reported, the known ones still used.
mkdir "$T/newer"
sed 's/"easypp_window": "2"/"easypp_window": "2", "easypp_future": "x"/' "$OK/easypp_status.json" >"$T/newer/easypp_status.json"
expect "status with an unknown setting" 0 "$CTL" --dir "$T/newer" status
has "status with an unknown setting: warned" "$T/err" "unknown SchedulerParameters key 'easypp_future'"

# --- state ------------------------------------------------------------------------
expect "state: valid file exits 0" 0 "$CTL" --dir "$OK" state
has "state: valid" "$T/out" "^$OK/easypp_state.json: valid \(format_version 1\)$"
has "state: users" "$T/out" 'users +3 \(0 extended rings\), 5 runtimes'
has "state: learned" "$T/out" 'learned jobs +57'
expect "state --file" 0 "$CTL" state --file "$OK/easypp_state.json"
one_line_error "state: corrupt file exits 1" 1 "$CTL" --dir "$BAD" state
has "state: corrupt names the file and the field" "$T/err" "$BAD/easypp_state.json: field users\[1\]\.history\[0\] \(runtime\): must be 0\.\."
one_line_error "state: missing file exits 1" 1 "$CTL" state --file "$T/none.json"
has "state: missing names the file" "$T/err" "$T/none.json: no such file"
printf '[[[[[[[[\0\377garbage' >"$T/garbage.json"
one_line_error "state: garbage exits 1" 1 "$CTL" state --file "$T/garbage.json"

# --- corrupt or missing status ----------------------------------------------------------
for cmd in status jobs users; do
  one_line_error "$cmd: corrupt status exits 1" 1 "$CTL" --dir "$BAD" $cmd
  has "$cmd: corrupt status, JSON position" "$T/err" "$BAD/easypp_status.json: not valid JSON at line 10, column"
  one_line_error "$cmd: missing status exits 1" 1 "$CTL" --dir "$T/nowhere" $cmd
  has "$cmd: missing status names the file" "$T/err" "$T/nowhere/easypp_status.json: no such file"
done

# --- a FIFO in the place of a file: refused at once, never read ----------------------------
# (a blocking open would wait for a writer forever: `timeout` turns that into 124)
mkdir "$T/fifo"
mkfifo "$T/fifo/easypp_status.json" "$T/fifo/easypp_state.json"
for cmd in status jobs users; do
  one_line_error "$cmd: FIFO status exits 1 at once" 1 timeout 20 "$CTL" --dir "$T/fifo" $cmd
  has "$cmd: FIFO status is not a regular file" "$T/err" "$T/fifo/easypp_status.json: not a regular file$"
done
one_line_error "state: FIFO exits 1 at once" 1 timeout 20 "$CTL" --dir "$T/fifo" state
has "state: FIFO is not a regular file" "$T/err" "$T/fifo/easypp_state.json: not a regular file$"
# check --plugin: a FIFO is refused at once, a device (/dev/zero, endless)
# is never read
one_line_error "check --plugin FIFO exits 1 at once" 1 timeout 20 "$CTL" check --plugin "$T/fifo/easypp_state.json"
has "check --plugin FIFO is not a regular file" "$T/err" "easypp_state.json: not a regular file$"
one_line_error "check --plugin /dev/zero exits 1 at once" 1 timeout 20 "$CTL" check --plugin /dev/zero
has "check --plugin /dev/zero is not a regular file" "$T/err" "/dev/zero: not a regular file$"

# --- JSON ------------------------------------------------------------------------
expect "status --json" 0 "$CTL" --dir "$OK" --json
json_check "status --json: the status without history and jobs" "$T/out" \
  "d['totals']['cycles'] == 360 and d['last_cycle']['trigger'] == 'interval' and 'jobs' not in d and 'history' not in d"
expect "jobs --json --user" 0 "$CTL" --dir "$OK" jobs --json --user alice
json_check "jobs --json: filtered jobs" "$T/out" "[j['job_id'] for j in d] == [101, 104]"
expect "users --json USER" 0 "$CTL" --dir "$OK" users --json 5002
json_check "users --json: that user's rings" "$T/out" "d == [{'user': 5002, 'estimate_key': -1, 'history': [[1200, 14400], [9600, 14400]]}]"
expect "state --json" 0 "$CTL" --dir "$OK" state --json
json_check "state --json: the file" "$T/out" "d['learned_jobs'] == 57 and len(d['users']) == 3"

# The file replaced while easypp-ctl reads it (the plugin writes it after
# every cycle): what is printed comes from the one snapshot that was
# validated, never from a second read. Another status whose jobs are all
# bob's is renamed over the file again and again.
mkdir "$T/race"
sed 's/"user": 5001, "user_name": "alice"/"user": 5009, "user_name": "bob"/g; s/"user": 5002,/"user": 5009,/; s/"user": 0, "user_name": ""/"user": 5009, "user_name": "bob"/' \
  "$OK/easypp_status.json" >"$T/race/bob.json"
cp "$OK/easypp_status.json" "$T/race/alice.json"
cp "$T/race/alice.json" "$T/race/easypp_status.json"
touch "$T/race/go"
( i=0; while [ -e "$T/race/go" ] && [ $i -lt 100000 ]; do
    cp "$T/race/bob.json" "$T/race/t1" && mv -f "$T/race/t1" "$T/race/easypp_status.json"
    cp "$T/race/alice.json" "$T/race/t2" && mv -f "$T/race/t2" "$T/race/easypp_status.json"
    i=$((i + 1)); done ) &
wrong=0 runs=0
while [ $runs -lt 400 ]; do
  runs=$((runs + 1))
  "$CTL" --dir "$T/race" jobs --json --user alice >"$T/race/out" 2>/dev/null || continue
  if grep -q '"user": 5009' "$T/race/out"; then wrong=$((wrong + 1)); fi
done
rm -f "$T/race/go"
wait
[ $wrong = 0 ] && pass "jobs --json --user while the file is replaced: only alice's jobs ($runs runs)" \
  || fail "jobs --json --user while the file is replaced: another user's jobs in $wrong of $runs runs"

# --- untrusted strings are escaped in text output --------------------------------------
# tests/data/ctl/escape: a status whose user and partition names, versions,
# settings, state file and trigger hold terminal control sequences (ESC, BEL,
# CR LF, DEL, the C1 CSI U+009B). Text output shows each such byte as \xNN;
# nothing but newlines reaches the terminal raw. --json escapes them as \uNNNN
# (jansson does C0, easypp-ctl DEL and C1) and keeps other UTF-8.
ESC_DIR="$DATA/escape"
# no_controls NAME FILE [DEL]: no byte below 0x20 but newline, no C1 control
# (UTF-8 c2 80..9f), and no DEL unless the third argument says DEL is fine.
no_controls() {
  if python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
bad = [c for c in b if (c < 32 and c != 10) or (c == 127 and len(sys.argv) < 3)]
bad += [i for i in range(len(b) - 1) if b[i] == 0xc2 and 0x80 <= b[i + 1] <= 0x9f]
sys.exit(1 if bad else 0)" "$2" ${3:+"$3"}
  then pass "$1"; else fail "$1: $(od -c "$2" | head -20)"; fi
}
for cmd in status jobs users "users 5001"; do
  # shellcheck disable=SC2086
  run "$CTL" --dir "$ESC_DIR" $cmd
  if [ "$st" = 0 ]; then pass "escape fixture: $cmd exits 0"; else fail "escape fixture: $cmd (exit $st): $(head -c 300 "$T/err")"; fi
  no_controls "escape fixture: $cmd stdout has no control characters" "$T/out"
  no_controls "escape fixture: $cmd stderr has no control characters" "$T/err"
done
# fixed FILE STRING: the exact text (no pattern) is in FILE.
fixed() {
  if grep -Fq -- "$3" "$2"; then pass "$1"; else fail "$1: no '$3'"; fi
}
run "$CTL" --dir "$ESC_DIR" status
fixed "escape: versions, ESC and C1 CSI" "$T/out" '  version        easypp 0.1.0\x1b[2J, Slurm 22.05.8\xc2\x9b6n'
fixed "escape: a settings value in a warning" "$T/err" "easypp-ctl: warning: settings: invalid easypp_window='\x1b[31m2' (want 1..30), using 2"
fixed "escape: a settings key in a warning" "$T/err" "easypp-ctl: warning: settings: unknown SchedulerParameters key 'easypp_\x1b[1mcolour', ignored"
fixed "escape: CR LF cannot forge a line" "$T/out" '  state file     /var/spool/slurmctld/easypp_state.json\x0d\x0aforged line'
fixed "escape: trigger, BEL and DEL" "$T/out" ', trigger interval\x07\x7f'
run "$CTL" --dir "$ESC_DIR" jobs
fixed "escape: user and partition names" "$T/out" '101        mallory\x1b]0;owned\x07  batch\x1b[8m  RUNNING '
fixed "escape: array id and state; UTF-8 and backslashes kept" "$T/out" '102_\x1bc  café\x1b'
fixed "escape: state" "$T/out" ' PENDING\x01 '
run "$CTL" --dir "$ESC_DIR" users
fixed "escape: users: warnings quoting the settings" "$T/err" "easypp-ctl: warning: settings: invalid easypp_window='\x1b[31m2'"
fixed "escape: users table" "$T/out" 'mallory\x1b]0;owned\x07  5001 '
run "$CTL" --dir "$ESC_DIR" users 5001
fixed "escape: users USER header" "$T/out" 'User mallory\x1b]0;owned\x07 (uid 5001)'
run "$CTL" --dir "$ESC_DIR" jobs --user "$(printf 'mallory\033]0;owned\007')"
if [ "$st" = 0 ] && [ "$(wc -l <"$T/out")" = 2 ]; then pass "escape: --user matches the raw name"; else fail "escape: --user raw name (exit $st)"; fi
printf '{"format_version": 1, "written": \033[2J\033]0;x\007}' >"$T/esc_state.json"
one_line_error "escape: an error quoting the file's bytes" 1 "$CTL" state --file "$T/esc_state.json"
no_controls "escape: error message has no control characters" "$T/err"
fixed "escape: error message shows the bytes escaped" "$T/err" '\x1b'
for cmd in "status" "jobs" "users"; do
  # shellcheck disable=SC2086
  run "$CTL" --dir "$ESC_DIR" --json $cmd
  no_controls "escape: $cmd --json has no control characters" "$T/out"
done
run "$CTL" --dir "$ESC_DIR" --json jobs
json_check "escape: --json keeps the exact strings" "$T/out" \
  "d[0]['user_name'] == 'mallory\x1b]0;owned\x07' and d[1]['user_name'] == 'caf\u00e9\\\\x1b' and d[1]['array'] == '102_\x1bc' and d[0]['partition'] == 'batch\x1b[8m'"
run "$CTL" --dir "$ESC_DIR" --json
json_check "escape: --json keeps DEL and C1 (escaped)" "$T/out" \
  "d['slurm_version'] == '22.05.8\x9b6n' and d['last_cycle']['trigger'] == 'interval\x07\x7f'"
fixed "escape: --json writes C1 as \\u009b" "$T/out" '22.05.8\u009b6n'
run "$CTL" --dir "$ESC_DIR" --json jobs
fixed "escape: --json keeps readable UTF-8" "$T/out" "$(printf 'caf\303\251')"

# --- StateSaveLocation from scontrol ------------------------------------------------------
mkdir "$T/bin"
cat >"$T/bin/scontrol" <<EOF
#!/bin/sh
[ "\$1 \$2" = "show config" ] || exit 1
echo "SLURM_VERSION           = 22.05.8"
echo "StateSaveLocation       = $OK"
echo "SwitchType              = switch/none"
EOF
chmod +x "$T/bin/scontrol"
PATH="$T/bin:$PATH" run "$CTL" status
if [ "$st" = 0 ] && grep -q "^sched/easypp status ($OK/easypp_status.json)" "$T/out"; then pass "--dir from scontrol show config"
else fail "--dir from scontrol (exit $st): $(head -c 300 "$T/err")"; fi

# A hanging scontrol: given up after 5 s (and killed), then the default directory.
cat >"$T/bin/scontrol" <<EOF
#!/bin/sh
echo \$\$ >"$T/scontrol.pid"
exec sleep 60
EOF
start=$(date +%s)
PATH="$T/bin:$PATH" run "$CTL" status
elapsed=$(( $(date +%s) - start ))
if [ "$elapsed" -ge 4 ] && [ "$elapsed" -le 9 ]; then pass "hanging scontrol: gave up after ${elapsed}s"; else fail "hanging scontrol: ${elapsed}s"; fi
if [ "$st" = 0 ] || grep -q "/var/spool/slurmctld/easypp_status.json" "$T/err"; then pass "hanging scontrol: default directory"
else fail "hanging scontrol: default directory (exit $st): $(cat "$T/err")"; fi
if [ -s "$T/scontrol.pid" ] && ! kill -0 "$(cat "$T/scontrol.pid")" 2>/dev/null; then pass "hanging scontrol: killed"
else fail "hanging scontrol: still running"; kill "$(cat "$T/scontrol.pid")" 2>/dev/null; fi

# --- check: SchedulerParameters (sched/backfill's keys, plugin_config.h) -------------------
# A stand-in plugin: a shared object exporting plugin_version = 22.05.8.
printf 'const unsigned int plugin_version = 0x160508;\n' >"$T/fake.c"
if ${CC:-cc} -shared -fPIC -o "$T/fake.so" "$T/fake.c" 2>"$T/cc.err"; then
  FAKE="$T/fake.so"
  expect "check -S: ignored keys warn, exit 0" 0 "$CTL" check --plugin "$FAKE" --slurm-version 22.05.8 \
    --scheduler-parameters 'bf_window=2880,bf_interval=60,BF_CONTINUE,easypp_max_time=20,bf_busy_nodes'
  has "check -S: plugin loads" "$T/out" "^OK: slurmctld 22.05.8 loads this plugin$"
  has "check -S: the parameters and where they come from" "$T/out" \
    "^settings   SchedulerParameters=bf_window=2880,bf_interval=60,BF_CONTINUE,easypp_max_time=20,bf_busy_nodes \(--scheduler-parameters\)$"
  has "check -S: bf_window not honoured, what instead" "$T/out" \
    "^WARNING: bf_window: not honoured by sched/easypp: no window: planning looks at every running job's predicted end"
  has "check -S: bf_continue not honoured" "$T/out" "^WARNING: bf_continue: not honoured by sched/easypp: "
  has "check -S: bf_interval honoured" "$T/out" "^ok: bf_interval: read as easypp_interval"
  has "check -S: bf_busy_nodes applies" "$T/out" "^ok: bf_busy_nodes: applies"
  hasnt "check -S: no error" "$T/out" "^ERROR"
  expect "check -S: bf_licenses fails (exit 1)" 1 "$CTL" check --plugin "$FAKE" --slurm-version 22.05.8 \
    --scheduler-parameters 'bf_continue,bf_licenses'
  has "check -S: bf_licenses is an error" "$T/out" \
    "^ERROR: SchedulerParameters=bf_licenses is harmful under sched/easypp \(no license planning"
  has "check -S: the plugin still loads" "$T/out" "^OK: slurmctld 22.05.8 loads this plugin$"
  expect "check -S: a bad bf_interval warns, exit 0" 0 "$CTL" check --plugin "$FAKE" --slurm-version 22.05.8 \
    --scheduler-parameters 'bf_interval=-1'
  has "check -S: bad bf_interval named" "$T/out" \
    "^WARNING: invalid bf_interval='-1' \(want 1\.\.3600 for easypp_interval\), using 30$"
  expect "check -S: a version mismatch still exits 1" 1 "$CTL" check --plugin "$FAKE" --slurm-version 22.05.9 \
    --scheduler-parameters 'bf_window=10'
  has "check -S: keys checked after a mismatch too" "$T/out" "^WARNING: bf_window: "
  # From scontrol show config.
  mkdir "$T/bin2"
  {
    echo '#!/bin/sh'
    echo '[ "$1 $2" = "show config" ] || exit 1'
    echo 'echo "SchedulerParameters     = bf_licenses,bf_max_job_start=10"'
    echo 'echo "SchedulerTimeSlice      = 30 sec"'
  } >"$T/bin2/scontrol"
  chmod +x "$T/bin2/scontrol"
  PATH="$T/bin2:$PATH" expect "check: scontrol's bf_licenses fails" 1 "$CTL" check --plugin "$FAKE" --slurm-version 22.05.8
  has "check: SchedulerParameters from scontrol" "$T/out" \
    "^settings   SchedulerParameters=bf_licenses,bf_max_job_start=10 \(scontrol show config\)$"
  has "check: scontrol's bf_max_job_start warned" "$T/out" "^WARNING: bf_max_job_start: not honoured by sched/easypp: no cap on starts"
  has "check: scontrol's bf_licenses an error" "$T/out" "^ERROR: SchedulerParameters=bf_licenses is harmful"
  printf '#!/bin/sh\necho "SchedulerParameters     = (null)"\n' >"$T/bin2/scontrol"
  PATH="$T/bin2:$PATH" expect "check: no SchedulerParameters, exit 0" 0 "$CTL" check --plugin "$FAKE" --slurm-version 22.05.8
  has "check: empty SchedulerParameters shown" "$T/out" "^settings   SchedulerParameters= \(scontrol show config\)$"
  hasnt "check: empty SchedulerParameters, no finding" "$T/out" "^(WARNING|ERROR)"
  printf '#!/bin/sh\nexit 1\n' >"$T/bin2/scontrol"
  PATH="$T/bin2:$PATH" expect "check: scontrol fails, exit 0" 0 "$CTL" check --plugin "$FAKE" --slurm-version 22.05.8
  has "check: scontrol fails, not checked" "$T/out" "^settings   not checked: "
else
  echo "skip check -S tests: cannot build a shared object ($(head -c 200 "$T/cc.err"))"
fi
one_line_error "--scheduler-parameters applies to check only" 2 "$CTL" status --scheduler-parameters bf_window=1

echo
if [ "$fails" -ne 0 ]; then echo "$fails easypp-ctl test(s) failed"; exit 1; fi
echo "all easypp-ctl tests passed"
