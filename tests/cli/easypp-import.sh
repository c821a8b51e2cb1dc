#!/bin/sh
# The easypp-import command-line contract without a cluster: --help, usage
# errors (exit 2, one line), sacct --json documents from files and pipes
# (written by this script: inputs to the reader, not stand-ins for
# slurmrestd, which the integration tests run), bad records refused and
# counted, broken documents exiting 2 with no output left, and the warm-start
# file's mode and --force. Uses $EASYPP_IMPORT (set by 'make check').
set -u
IMP=${EASYPP_IMPORT:-$(dirname "$0")/../../tools/easypp-import}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TZ=UTC; export TZ
SOURCE_DATE_EPOCH=1700000000; export SOURCE_DATE_EPOCH
unset SLURM_JWT
fails=0
checks=0
pass() { checks=$((checks + 1)); echo "ok   $1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
run() { "$@" >"$T/out" 2>"$T/err"; st=$?; }
expect() {
  name=$1 want=$2; shift 2
  run "$@"
  if [ "$st" = "$want" ]; then pass "$name"; else fail "$name (exit $st, wanted $want): $(head -c 300 "$T/err")"; fi
}
has() { grep -qF -- "$2" "$1"; }
check() { name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

expect "--help exits 0" 0 "$IMP" --help
for w in --url --sacct-json --run-sacct --days --window-hours --api --token-file --retries \
         --state --force --slurm-conf --procs --requeued "EXIT STATUS" SLURM_JWT v0.0.42; do
  has "$T/out" "$w" || fail "--help documents $w"
done
expect "--version exits 0" 0 "$IMP" --version
SRC=${TOP_SRCDIR:-$(dirname "$0")/../..}
if python3 "$SRC/contrib/help2roff.py" "$IMP" \
     "read Slurm accounting (slurmrestd or sacct --json) as SWF or a warm start" >"$T/man.1" &&
   cmp -s "$T/man.1" "$SRC/tools/easypp-import.1"; then pass "easypp-import.1 matches --help"
else fail "easypp-import.1 is stale (make -C tools man-import)"; fi
expect "no input" 2 "$IMP"
check "no input: one line" [ "$(wc -l <"$T/err")" = 1 ]
expect "two inputs" 2 "$IMP" --run-sacct --sacct-json x
expect "unknown option" 2 "$IMP" --frobnicate
expect "unknown API version" 2 "$IMP" --url http://127.0.0.1:1 --api v0.0.99
check "unknown API version: named" has "$T/err" "v0.0.99"
expect "impossible --start" 2 "$IMP" --sacct-json x --start 2024-02-31
expect "--end before --start" 2 "$IMP" --sacct-json x --start 2024-03-01 --end 2024-02-01
expect "TCP without a token" 2 "$IMP" --url http://127.0.0.1:1 -o "$T/x.swf"
check "TCP without a token: says so" has "$T/err" "no token"
check "TCP without a token: no output" [ ! -e "$T/x.swf" ]

# A small document in the 22.05 shape: two users, an array task, a het job
# (leader and component), a requeued job's two runs, a running job, a job
# whose End is before its Start.
job() {  # id user state submit start end elapsed limit cpus [array_job task] [het_job offset]
  printf '{"job_id": %s, "user": "%s", "group": "g", "partition": "batch", "cluster": "c",
   "name": "n", "state": {"current": "%s"}, "array": {"job_id": %s, "task_id": %s},
   "het": {"job_id": %s, "job_offset": %s},
   "time": {"submission": %s, "eligible": %s, "start": %s, "end": %s, "elapsed": %s, "limit": %s},
   "required": {"CPUs": %s}, "tres": {"allocated": [{"type": "cpu", "count": %s}],
   "requested": [{"type": "mem", "count": 100}]}}' \
    "$1" "$2" "$3" "${10:-0}" "${11:-null}" "${12:-0}" "${13:-null}" "$4" "$4" "$5" "$6" "$7" "$8" "$9" "$9"
}
{
  echo '{"meta": {}, "errors": [], "jobs": ['
  job 1 root COMPLETED 1000 1010 1110 100 5 4; echo ,
  job 2 root FAILED 1020 1030 1090 60 2 2; echo ,
  job 4 nobody COMPLETED 1030 1040 1050 10 1 1 3 1; echo ,
  job 5 nobody COMPLETED 1040 1050 1070 20 1 1 0 null 5 0; echo ,
  job 6 nobody COMPLETED 1040 1050 1070 20 1 1 0 null 5 1; echo ,
  job 7 root REQUEUED 1050 1060 1065 5 3 1; echo ,
  job 7 root COMPLETED 1070 1080 1100 20 3 1; echo ,
  job 8 root RUNNING 1080 1090 0 30 9 1; echo ,
  job 9 root COMPLETED 1090 1200 1100 0 9 1
  echo ']}'
} >"$T/doc.json"
expect "a document: exit 0" 0 "$IMP" --sacct-json "$T/doc.json" --procs 8 -o "$T/doc.swf"
check "six jobs written" [ "$(grep -vc '^;' "$T/doc.swf")" = 6 ]
check "report: requeued run" has "$T/err" "1 earlier attempts of requeued jobs"
check "report: running job" has "$T/err" "1 still running"
check "report: End before Start refused" has "$T/err" "job 9: time.end 1100 is before time.start 1200"
check "report: counted" has "$T/err" "1 unreadable records"
check "report: array task and het components" has "$T/err" "1 array tasks, 2 heterogeneous job components"
check "the last run of the requeued job" grep -q '^[0-9]* 70 10 20 1 ' "$T/doc.swf"
cat "$T/doc.json" | "$IMP" --sacct-json - --procs 8 -o "$T/pipe.swf" 2>/dev/null
check "a pipe gives the same SWF" cmp -s "$T/doc.swf" "$T/pipe.swf"

# The range ends now, inclusive of this second: a requeued job whose last run
# ended this very second is that run, not its earlier attempt (an import run
# right after a job's end dropped that run without a word); a run ending
# after an explicit --end is reported.
now=$(date +%s)
{
  echo '{"meta": {}, "errors": [], "jobs": ['
  job 7 root REQUEUED $((now - 30)) $((now - 25)) $((now - 20)) 5 3 1; echo ,
  job 7 root COMPLETED $((now - 20)) $((now - 10)) "$now" 10 3 1
  echo ']}'
} >"$T/now.json"
expect "ended this second: exit 0" 0 "$IMP" --sacct-json "$T/now.json" --days 1 --procs 8 -o "$T/now.swf"
check "ended this second: the last run is written (status 1)" \
  awk '!/^;/ && $11 == 1 { found = 1 } END { exit !found }' "$T/now.swf"
check "ended this second: the earlier run is reported" has "$T/err" "1 earlier attempts of requeued jobs"
expect "ended after --end: exit 0" 0 "$IMP" --sacct-json "$T/now.json" --end $((now - 5)) \
  --days 1 --procs 8 -o "$T/end.swf"
check "ended after --end: reported" has "$T/err" "1 ended after --end"

# warm start: mode 0600, learned jobs, --force
expect "--state: exit 0" 0 "$IMP" --sacct-json "$T/doc.json" --state "$T/state.json" --slurm-conf /dev/null
check "--state: mode 0600" [ "$(stat -c %a "$T/state.json")" = 600 ]
check "--state: learned the finished jobs, the het job once" has "$T/err" "(5 finished jobs learned"
check "--state: the het component is reported" has "$T/err" "1 heterogeneous job components"
check "--state: nobody's jobs are learned (a real user)" grep -q '"user": 65534' "$T/state.json"
expect "--state: an existing file needs --force" 2 "$IMP" --sacct-json "$T/doc.json" --state "$T/state.json" --slurm-conf /dev/null
expect "--state --force" 0 "$IMP" --sacct-json "$T/doc.json" --state "$T/state.json" --slurm-conf /dev/null --force

# broken documents: exit 2, the cause, no output
head -c 700 "$T/doc.json" >"$T/cut.json"
sed 's/"elapsed": 100,/"elapsed": 100,,/' "$T/doc.json" >"$T/bad.json"
printf '{"meta": {}, "errors": [{"error": "Access denied", "description": "no"}]}' >"$T/errors.json"
printf '[1, 2]' >"$T/array.json"
: >"$T/empty.json"
for c in "cut:truncated" "bad:malformed JSON in job 1" "errors:Access denied" "array:not a JSON object" "empty:empty answer"; do
  f=${c%%:*} why=${c#*:}
  expect "$f document: exit 2" 2 "$IMP" --sacct-json "$T/$f.json" --procs 8 -o "$T/$f.swf"
  check "$f document: '$why', naming the file" has "$T/err" "$T/$f.json: " 
  check "$f document: the cause" has "$T/err" "$why"
  check "$f document: one line" [ "$(wc -l <"$T/err")" = 1 ]
  check "$f document: no output" [ ! -e "$T/$f.swf" ]
done
expect "missing file" 2 "$IMP" --sacct-json "$T/nope.json"

[ $checks -gt 0 ] || { echo "no checks ran"; exit 1; }
[ $fails = 0 ] && echo "all $checks checks passed" || echo "$fails of $checks checks failed"
exit $((fails > 0))
