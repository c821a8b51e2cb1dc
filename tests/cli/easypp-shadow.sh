#!/bin/sh
# The easypp-shadow command-line contract without a cluster: --help and the
# man page, usage errors (exit 2, one line), configuration errors found
# before any poll (slurm.conf, state files, --report), and faults of the
# sources: slurmrestd refusing connections, squeue missing, failing or
# printing a broken document (small scripts on PATH that only inject the
# fault; the integration tests run the real squeue, sacct and slurmrestd):
# each retried with backoff, logged with the command or URL and the cause,
# and exit 2 when no poll ever reached the cluster, with no state written.
# Uses $EASYPP_SHADOW (set by 'make check').
set -u
SH=${EASYPP_SHADOW:-$(dirname "$0")/../../tools/easypp-shadow}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
unset SLURM_JWT
fails=0
checks=0
pass() { checks=$((checks + 1)); echo "ok   $1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
run() { "$@" >"$T/out" 2>"$T/err"; st=$?; }
expect() {
  name=$1 want=$2; shift 2
  run "$@"
  if [ "$st" = "$want" ]; then pass "$name"; else fail "$name (exit $st, wanted $want): $(head -c 400 "$T/err")"; fi
}
has() { grep -qF -- "$2" "$1"; }
check() { name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

expect "--help exits 0" 0 "$SH" --help
for w in --url --commands --interval --polls --duration --shadow-state --warm-from --state \
         --force --slurm-conf --set --api --token-file --retries --json --jobs --report \
         --report-only "EXIT STATUS" SLURM_JWT v0.0.42 SlurmUser; do
  has "$T/out" "$w" || fail "--help documents $w"
done
expect "--version exits 0" 0 "$SH" --version
SRC=${TOP_SRCDIR:-$(dirname "$0")/../..}
if python3 "$SRC/contrib/help2roff.py" "$SH" \
     "follow a cluster under sched/backfill and judge sched/easypp's predictions" >"$T/man.1" &&
   cmp -s "$T/man.1" "$SRC/tools/easypp-shadow.1"; then pass "easypp-shadow.1 matches --help"
else fail "easypp-shadow.1 is stale (make -C tools man-shadow)"; fi

# --- usage -------------------------------------------------------------------------
expect "no input" 2 "$SH"
check "no input: one line" [ "$(wc -l <"$T/err")" = 1 ]
expect "two inputs" 2 "$SH" --commands --url http://127.0.0.1:1
expect "unknown option" 2 "$SH" --frobnicate
expect "bad interval" 2 "$SH" --commands --interval 0
expect "bad duration" 2 "$SH" --commands --duration 3weeks
check "bad duration: named" has "$T/err" "3weeks"
expect "unknown API version" 2 "$SH" --url http://127.0.0.1:1 --api v0.0.99
check "unknown API version: named" has "$T/err" "v0.0.99"
expect "--report-only without a state" 2 "$SH" --report-only
expect "--set without easypp keys" 2 "$SH" --commands --set bf_window=10

# --- configuration, before any poll ---------------------------------------------------
cat >"$T/slurm.conf" <<'EOF'
ClusterName=test
SlurmUser=root
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=30,easypp_window=3,easypp_metric=sideways
EOF
mkdir -p "$T/empty" "$T/bin"
expect "slurm.conf missing" 2 "$SH" --commands --slurm-conf "$T/nothere.conf"
check "slurm.conf missing: named" has "$T/err" "$T/nothere.conf"
# squeue not installed: a configuration error, told at once (no retries)
expect "squeue missing" 2 env PATH="$T/empty" "$SH" --commands --slurm-conf "$T/slurm.conf" \
  --polls 3 --interval 1 --retries 2 -q
check "squeue missing: the command and why" has "$T/err" "squeue --json: failed (exit status 127)"
check "squeue missing: not retried" [ "$(grep -c 'trying again' "$T/err")" = 0 ]
check "bad easypp value: a warning naming the key" has "$T/err" "easypp_metric='sideways'"

# squeue failing (slurmctld down): retried with backoff, logged, and exit 2
# only because no poll ever got through; nothing written
cat >"$T/bin/squeue" <<'EOF'
#!/bin/sh
echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2
exit 1
EOF
chmod +x "$T/bin/squeue"
expect "squeue failing" 2 env PATH="$T/bin" "$SH" --commands --slurm-conf "$T/slurm.conf" \
  --polls 2 --interval 1 --retries 1 --shadow-state "$T/shadow.json"
check "squeue failing: retried once per poll" [ "$(grep -c 'trying again (1 of 1)' "$T/err")" = 2 ]
check "squeue failing: the cause" has "$T/err" "Unable to contact slurm controller"
check "squeue failing: polls go on" [ "$(grep -c 'poll failed' "$T/err")" = 2 ]
check "squeue failing: no poll reached" has "$T/err" "error: no poll reached the cluster"
check "squeue failing: no state written" [ ! -e "$T/shadow.json" ]

# squeue printing a truncated document
cat >"$T/bin/squeue" <<'EOF'
#!/bin/sh
printf '{"meta": {}, "errors": [], "jobs": [{"job_id": 1, "job_state": "PEN'
EOF
expect "truncated squeue output" 2 env PATH="$T/bin" "$SH" --commands --slurm-conf "$T/slurm.conf" \
  --polls 1 --retries 0
check "truncated: named" has "$T/err" "squeue --json: "
check "truncated: says so" has "$T/err" "truncated"
check "truncated: one error line" [ "$(grep -c 'error:' "$T/err")" = 1 ]

# slurmrestd: no token, nobody listening
expect "TCP without a token" 2 "$SH" --url http://127.0.0.1:1 --slurm-conf "$T/slurm.conf" --polls 1
check "TCP without a token: says so" has "$T/err" "no token"
expect "slurmrestd down" 2 env SLURM_JWT=x "$SH" --url http://127.0.0.1:1 --slurm-conf "$T/slurm.conf" \
  --polls 1 --retries 1
check "slurmrestd down: URL and cause" has "$T/err" "http://127.0.0.1:1/openapi/v3: cannot connect"
check "slurmrestd down: retried" [ "$(grep -c 'trying again (1 of 1)' "$T/err")" = 1 ]

# state files
echo '{"format_version": 1, "kind": "easypp-shadow"}' >"$T/bad-shadow.json"
expect "damaged shadow state" 2 "$SH" --report-only --shadow-state "$T/bad-shadow.json"
check "damaged shadow state: file and field" has "$T/err" "$T/bad-shadow.json: field settings: missing"
expect "missing shadow state (report only)" 2 "$SH" --report-only --shadow-state "$T/none.json"
check "missing shadow state: named" has "$T/err" "$T/none.json"
expect "damaged shadow state is not overwritten" 2 env PATH="$T/empty" "$SH" --commands \
  --slurm-conf "$T/slurm.conf" --shadow-state "$T/bad-shadow.json" --polls 1
check "damaged shadow state: kept" has "$T/bad-shadow.json" '"kind": "easypp-shadow"'
echo 'not json' >"$T/bad-state.json"
expect "damaged --warm-from" 2 "$SH" --commands --slurm-conf "$T/slurm.conf" --warm-from "$T/bad-state.json"
check "damaged --warm-from: named" has "$T/err" "$T/bad-state.json: not valid JSON"
echo '{}' >"$T/easypp_state.json"
expect "--state exists" 2 "$SH" --commands --slurm-conf "$T/slurm.conf" --state "$T/easypp_state.json"
check "--state exists: --force" has "$T/err" "--force"
check "--state exists: untouched" [ "$(cat "$T/easypp_state.json")" = '{}' ]
touch "$T/plainfile"
expect "--report under a file" 2 "$SH" --commands --slurm-conf "$T/slurm.conf" --report "$T/plainfile/r"
expect "--shadow-state in a missing directory" 2 env PATH="$T/empty" "$SH" --commands \
  --slurm-conf "$T/slurm.conf" --shadow-state "$T/nodir/shadow.json"
check "--shadow-state in a missing directory: told before polling" has "$T/err" "$T/nodir/shadow.json: cannot write into $T/nodir"

echo "$checks checks, $fails failed"
[ "$fails" = 0 ]
