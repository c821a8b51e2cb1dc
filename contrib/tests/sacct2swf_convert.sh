#!/bin/sh
# easypp-sacct2swf conversions compared field by field with hand-computed SWF:
# the sacct fixture (every case: states, never started, running, pending,
# arrays, het jobs, requeues, steps, bad lines, limits), a jobcomp fixture and
# a jobcomp log written by a real slurmctld 22.05.8; then the options, input
# variants (stdin, gzip, Unix times, --parsable, column order) and the header.
. "$(dirname "$0")/lib.sh"
D=$TEST_DATA

# --- the sacct fixture -------------------------------------------------------
"$S2S" --procs 64 -o "$T/site.swf" "$D/site.sacct" 2>"$T/site.err"; st=$?
check "site.sacct converts (exit 0)" [ $st = 0 ]
if python3 "$COMPARE" "$D/site.expected.swf" "$T/site.swf" >"$T/diff"; then
  pass "site.sacct: every field of the 26 jobs as expected"
else
  fail "site.sacct fields: $(head -20 "$T/diff")"
fi
for h in "; Version: 2.2" "; Computer: tiny" "; Conversion: easypp sacct2swf 2024-06-01" \
         "; MaxJobs: 26" "; MaxRecords: 26" "; UnixStartTime: 1709279940" \
         "; StartTime: Fri Mar 01 07:59:00 UTC 2024" "; EndTime: Fri Mar 01 11:17:00 UTC 2024" \
         "; MaxProcs: 64" "; MaxPartitions: 3" "; Partition: 1 gpu" "; Partition: 2 batch" \
         "; Partition: 3 debug" "; Note: MaxProcs from --procs"; do
  has "$T/site.swf" "$h" || fail "header line '$h'"
done
pass "header: version, computer, conversion date, counts, times, MaxProcs, partitions"
check "header comes before the first job" \
  awk '/^;/ { if (job) exit 1; next } { job = 1 }' "$T/site.swf"
for m in "site.sacct:23: 5 fields, the header has 19; line skipped" \
         "site.sacct:24: ElapsedRaw 'abc' is not a whole number; line skipped" \
         "site.sacct:25: Submit 'yesterday' is not a time" \
         "site.sacct:36: TimelimitRaw 'forever'"; do
  has "$T/site.err" "$m" || fail "message: $m"
done
pass "unreadable lines are named by file and line"
for m in "wrote 26 jobs" "1 still running" "2 pending" "1 job step lines" \
         "1 earlier attempts of requeued jobs" "4 unreadable lines" "1 repeated header lines" \
         "3 never started" "2 array tasks" "2 heterogeneous job components" \
         "2 time limits UNLIMITED/Partition_Limit -> -1" "1 job names containing '|' joined" \
         "1 starts before submit -> wait 0" "WEIRD_STATE 1"; do
  has "$T/site.err" "$m" || fail "summary: $m"
done
pass "summary counts every skip reason"

# --- the same input in other shapes gives the same jobs ------------------------
jobs_of "$T/site.swf" >"$T/site.jobs"
same_jobs() {  # same_jobs NAME SWF
  jobs_of "$2" >"$T/other.jobs"
  if cmp -s "$T/site.jobs" "$T/other.jobs"; then pass "$1"
  else fail "$1: $(diff "$T/site.jobs" "$T/other.jobs" | head -5)"; fi
}
"$S2S" -q --procs 64 - <"$D/site.sacct" >"$T/stdin.swf"
same_jobs "standard input" "$T/stdin.swf"
gzip -c "$D/site.sacct" >"$T/site.sacct.gz"
"$S2S" -q --procs 64 "$T/site.sacct.gz" >"$T/gz.swf"
same_jobs "gzip input" "$T/gz.swf"
sed 's/$/|/' "$D/site.sacct" >"$T/parsable.sacct"
"$S2S" -q --procs 64 "$T/parsable.sacct" >"$T/parsable.swf"
same_jobs "--parsable output (trailing delimiter)" "$T/parsable.swf"
# Unix times (SLURM_TIME_FORMAT=%s) read in another zone give the same log.
python3 - "$D/site.sacct" >"$T/epoch.sacct" <<'EOF'
import calendar, re, sys, time
for line in open(sys.argv[1]):
    print(re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d",
                 lambda m: str(calendar.timegm(time.strptime(m.group(0), "%Y-%m-%dT%H:%M:%S"))),
                 line.rstrip("\n")))
EOF
TZ=Asia/Tokyo "$S2S" -q --procs 64 "$T/epoch.sacct" >"$T/epoch.swf"
same_jobs "Unix times (SLURM_TIME_FORMAT=%s), any TZ" "$T/epoch.swf"
check "Unix times keep UnixStartTime" has "$T/epoch.swf" "; UnixStartTime: 1709279940"
# Columns in another order (the header names them).
python3 - "$D/site.sacct" >"$T/reordered.sacct" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
n = len(lines[0].split("|"))
for ln in lines:
    f = ln.split("|")
    if len(f) == n + 1:            # the job name with a '|' inside (column 9)
        f[8:10] = [f[8] + "|" + f[9]]
    print("|".join(reversed(f)) if len(f) == n else ln)
EOF
"$S2S" -q --procs 64 "$T/reordered.sacct" >"$T/reordered.swf"
same_jobs "columns in another order" "$T/reordered.swf"

# --- options ------------------------------------------------------------------
field() {  # field SWF JOB N: field N of job JOB
  awk -v j="$2" -v n="$3" '!/^;/ && $1 == j { print $n }' "$1"
}
"$S2S" -q --procs 64 --include-running "$D/site.sacct" >"$T/running.swf"
check "--include-running: 27 jobs" [ "$(jobs_of "$T/running.swf" | wc -l)" = 27 ]
check "--include-running: 1009 with its run so far and status -1" \
  sh -c "grep -v '^;' '$T/running.swf' | awk '\$2 == 780 && \$3 == 60 && \$4 == 5000 && \$11 == -1 { f = 1 } END { exit !f }'"
"$S2S" -q --procs 64 --requeued all "$D/site.sacct" >"$T/requeued.swf"
check "--requeued all: 27 jobs" [ "$(jobs_of "$T/requeued.swf" | wc -l)" = 27 ]
check "--requeued all: the first attempt of 1030 (status 0, run 1410)" \
  sh -c "grep -v '^;' '$T/requeued.swf' | awk '\$2 == 1020 && \$3 == 30 && \$4 == 1410 && \$11 == 0 { f = 1 } END { exit !f }'"
"$S2S" -q --procs 64 --keep-ids --jobname-as-app "$D/site.sacct" >"$T/ids.swf"
check "--keep-ids: UID and GID (alice 1001/2001)" [ "$(field "$T/ids.swf" 2 12)/$(field "$T/ids.swf" 2 13)" = 1001/2001 ]
check "--keep-ids: UID column without a user name (1006/2004)" [ "$(field "$T/ids.swf" 18 12)/$(field "$T/ids.swf" 18 13)" = 1006/2004 ]
check "--jobname-as-app: warmup 1, sim_a 2, md 3, sim_a again 2" \
  [ "$(field "$T/ids.swf" 1 14) $(field "$T/ids.swf" 2 14) $(field "$T/ids.swf" 3 14) $(field "$T/ids.swf" 4 14)" = "1 2 3 2" ]
check "without --jobname-as-app field 14 is -1" [ "$(field "$T/site.swf" 2 14)" = -1 ]
"$S2S" -q --procs 64 --submit-from eligible "$D/site.sacct" >"$T/elig.swf"
check "--submit-from eligible: 1006 arrives at its Eligible time (1560) and waits 300" \
  sh -c "grep -v '^;' '$T/elig.swf' | awk '\$2 == 1560 && \$3 == 300 && \$4 == 900 { f = 1 } END { exit !f }'"
"$S2S" -q --procs 64 --partition debug "$D/site.sacct" >"$T/debug.swf" 2>/dev/null
check "--partition debug keeps the 5 debug jobs" [ "$(jobs_of "$T/debug.swf" | wc -l)" = 5 ]
check "--partition debug: one partition in the header" has "$T/debug.swf" "; Partition: 1 debug"
"$S2S" -q --procs 64 --cluster other "$D/site.sacct" >/dev/null 2>"$T/err"; st=$?
check "--cluster of no record: exit 2, nothing to write" [ $st = 2 ]
"$S2S" -q --procs 64 --computer "Tiny Cluster" --installation "Example U" "$D/site.sacct" >"$T/c.swf"
check "--computer and --installation" sh -c "grep -qx '; Computer: Tiny Cluster' '$T/c.swf' && grep -qx '; Installation: Example U' '$T/c.swf'"
tr '|' ';' <"$D/site.sacct" >"$T/semi.sacct"
"$S2S" -q --procs 64 --delimiter ';' "$T/semi.sacct" >"$T/semi.swf"
same_jobs "--delimiter ';'" "$T/semi.swf"

# --- jobcomp/filetxt ------------------------------------------------------------
"$S2S" --jobcomp "$D/jobcomp.txt" --procs 64 -o "$T/jc.swf" 2>"$T/jc.err"; st=$?
if [ $st = 0 ] && python3 "$COMPARE" "$D/jobcomp.expected.swf" "$T/jc.swf" >"$T/diff"; then
  pass "jobcomp fixture: every field as expected"
else fail "jobcomp fixture (exit $st): $(head -10 "$T/diff") $(head -5 "$T/jc.err")"; fi
check "jobcomp: the unreadable line is named" has "$T/jc.err" "jobcomp.txt:8: not a jobcomp/filetxt record"
"$S2S" --jobcomp "$D/slurm-22.05-jobcomp.txt" --procs 16 -o "$T/real.swf" 2>"$T/real.err"; st=$?
if [ $st = 0 ] && python3 "$COMPARE" "$D/slurm-22.05-jobcomp.expected.swf" "$T/real.swf" >"$T/diff"; then
  pass "jobcomp log of a real slurmctld 22.05.8: every field as expected"
else fail "real jobcomp log (exit $st): $(head -10 "$T/diff") $(head -5 "$T/real.err")"; fi
check "real jobcomp: 3 array tasks, 2 het components, the requeued run" \
  sh -c "grep -q '3 array tasks' '$T/real.err' && grep -q '2 heterogeneous' '$T/real.err' && grep -q '1 requeued runs logged as PENDING' '$T/real.err'"
# What sacct -c makes of the same log: Submit is the start time. Warned.
"$S2S" --procs 16 "$D/slurm-22.05-sacct-c.txt" >/dev/null 2>"$T/c.err"
check "sacct -c output is recognized (Submit = Start) and --jobcomp suggested" \
  has "$T/c.err" "looks like \`sacct -c\` output"
"$S2S" --procs 64 "$D/site.sacct" >/dev/null 2>"$T/noc.err"
check "no such warning for real accounting" sh -c "! grep -q 'sacct -c' '$T/noc.err'"

finish
