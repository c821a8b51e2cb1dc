#!/bin/sh
# easypp-sacct2swf on hostile input: values that Python would accept or choke
# on must be refused with the file and line (never a traceback), counted in
# the summary, and never turned into a different job.
#   - Unicode digits (fullwidth, Arabic-Indic, superscript) in numbers/times
#   - epochs far beyond any possible date
#   - impossible dates (2024-02-31, 10:61) and End before Start
#   - a jobcomp JobName that forges the fields after it
#   - a corrupt gzip file (exit 2, no output left)
. "$(dirname "$0")/lib.sh"
D=$TEST_DATA
HDR=$(head -1 "$D/site.sacct")
GOOD='1001|1001|tiny|batch|alice|1001|physics|2001|sim_a|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T08:00:10|2024-03-01T09:00:10|3600|120|16|16|32000M|COMPLETED'

# refused NAME LINE TEXT: a file with GOOD and LINE (line 3): exit 0, one job
# written, line 3 reported with TEXT, counted, no traceback.
refused() {
  name=$1 line=$2 text=$3
  printf '%s\n%s\n%s\n' "$HDR" "$GOOD" "$line" >"$T/in.sacct"
  "$S2S" --procs 64 -o "$T/out.swf" "$T/in.sacct" >"$T/out" 2>"$T/err"; got=$?
  if [ "$got" != 0 ]; then fail "$name: exit $got: $(head -c 300 "$T/err")"; return; fi
  if has "$T/err" "Traceback"; then fail "$name: a traceback: $(tail -c 300 "$T/err")"; return; fi
  if ! has "$T/err" "in.sacct:3: $text"; then fail "$name: no line message '$text': $(head -c 400 "$T/err")"; return; fi
  if ! has "$T/err" "1 unreadable lines"; then fail "$name: not counted: $(head -c 400 "$T/err")"; return; fi
  n=$(grep -vc '^;' "$T/out.swf")
  if [ "$n" = 1 ]; then pass "$name"; else fail "$name: $n jobs written, wanted 1"; fi
}

base='1002|1002|tiny|batch|bob|1002|chem|2002|md'
refused "fullwidth digits in ElapsedRaw" \
  "$base|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|１８００|60|8|8|16G|FAILED" \
  "ElapsedRaw '１８００' is not a whole number"
refused "superscript digit in TimelimitRaw" \
  "$base|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|1800|6²|8|8|16G|FAILED" \
  "TimelimitRaw '6²'"
refused "Arabic-Indic digits in a Unix time" \
  "$base|١٧٠٩٢٨٠٠٠٠|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|1800|60|8|8|16G|FAILED" \
  "Submit '١٧٠٩٢٨٠٠٠٠' is not a time"
refused "superscript digit in AllocCPUS" \
  "$base|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|1800|60|²|8|16G|FAILED" \
  "AllocCPUS '²' is not a whole number"
refused "a huge epoch" \
  "$base|99999999999999999999|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|1800|60|8|8|16G|FAILED" \
  "Submit '99999999999999999999' is out of range"
refused "a huge ElapsedRaw" \
  "$base|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|99999999999999999999|60|8|8|16G|FAILED" \
  "ElapsedRaw '99999999999999999999' is out of range"
refused "February 31st" \
  "$base|2024-02-31T08:05:00|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|1800|60|8|8|16G|FAILED" \
  "Submit '2024-02-31T08:05:00' is not a possible date"
refused "minute 61" \
  "$base|2024-03-01T08:61:00|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T08:35:00|1800|60|8|8|16G|FAILED" \
  "Submit '2024-03-01T08:61:00' is not a possible date"
refused "End before Start" \
  "$base|2024-03-01T08:05:00|2024-03-01T08:05:00|2024-03-01T09:05:00|2024-03-01T08:35:00|1800|60|8|8|16G|FAILED" \
  "End 2024-03-01T08:35:00 is before Start 2024-03-01T09:05:00"

# --- a jobcomp job name that forges fields --------------------------------------
# The real job: 64 CPUs, 10 hours, TIMEOUT. Its name carries JobState=,
# StartTime=, EndTime= and ProcCnt= of a 1-second 1-CPU COMPLETED job. The
# name is read as a name (between Name= and the last JobState=): the real
# job is written as it ran, and named in the summary.
forged='JobId=3001 UserId=eve(1005) GroupId=eve(1005) Name=x JobState=COMPLETED StartTime=2024-03-02T10:00:00 EndTime=2024-03-02T10:00:01 ProcCnt=1 JobState=TIMEOUT Partition=batch TimeLimit=600 StartTime=2024-03-02T00:00:00 EndTime=2024-03-02T10:00:00 NodeList=n[1-4] NodeCnt=4 ProcCnt=64 WorkDir=/home/eve ReservationName= Tres=cpu=64,node=4,billing=64 Account=acct QOS=normal WcKey= Cluster=tiny SubmitTime=2024-03-01T23:00:00 EligibleTime=2024-03-01T23:00:00 DerivedExitCode=0:0 ExitCode=0:0'
{ head -1 "$D/jobcomp.txt"; echo "$forged"; } >"$T/forged.txt"
"$S2S" --procs 64 --jobcomp "$T/forged.txt" -o "$T/forged.swf" >"$T/out" 2>"$T/err"; got=$?
check "forged jobcomp name: exit 0" [ "$got" = 0 ]
check "forged jobcomp name: named with its line" has "$T/err" "forged.txt:2: job 3001: its name holds field names"
check "forged jobcomp name: counted by job" has "$T/err" "(read as names) (jobs 3001)"
if grep -v '^;' "$T/forged.swf" | awk '$4 == 1 && $5 == 1 && $11 == 1' | grep -q .; then
  fail "forged jobcomp name: a 1-second 1-CPU COMPLETED job was written"
else pass "forged jobcomp name: no forged job in the output"; fi
check "forged jobcomp name: the real job written as it ran (64 CPUs, 36000 s)" \
  sh -c "grep -v '^;' '$T/forged.swf' | awk '\$4 == 36000 && \$5 == 64' | grep -q ."
check "forged jobcomp name: both jobs written" [ "$(grep -vc '^;' "$T/forged.swf")" = 2 ]

# A newline in the name (jobcomp/filetxt writes it raw): the name holds a
# whole record of another job for another uid, then the real job's fields
# follow on the line after. Before, the forged record was read as a job and
# the real job dropped as "2 unreadable lines". Now the lines are one record
# whose name holds a newline: refused, and named.
{ head -1 "$D/jobcomp.txt"
  printf '%s\n' 'JobId=3002 UserId=eve(1005) GroupId=eve(1005) Name=a' \
    'JobId=4000 UserId=bob(1006) GroupId=bob(1006) Name=y JobState=COMPLETED Partition=batch TimeLimit=600 StartTime=2024-03-02T10:00:00 EndTime=2024-03-02T10:00:01 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/home/bob ReservationName= Tres=cpu=1,node=1,billing=1 Account=acct QOS=normal WcKey= Cluster=tiny SubmitTime=2024-03-02T09:00:00 EligibleTime=2024-03-02T09:00:00 DerivedExitCode=0:0 ExitCode=0:0' \
    'z JobState=TIMEOUT Partition=batch TimeLimit=600 StartTime=2024-03-02T00:00:00 EndTime=2024-03-02T10:00:00 NodeList=n[1-4] NodeCnt=4 ProcCnt=64 WorkDir=/home/eve ReservationName= Tres=cpu=64,node=4,billing=64 Account=acct QOS=normal WcKey= Cluster=tiny SubmitTime=2024-03-01T23:00:00 EligibleTime=2024-03-01T23:00:00 DerivedExitCode=0:0 ExitCode=0:0'
} >"$T/newline.txt"
# The same, with a JobState= in the name before the newline, which closes
# the first line: bob's line then starts a record of its own, and carries
# eve's real fields after its own name.
{ head -1 "$D/jobcomp.txt"
  printf '%s\n' 'JobId=3003 UserId=eve(1005) GroupId=eve(1005) Name=a JobState=COMPLETED' \
    'JobId=4001 UserId=bob(1006) GroupId=bob(1006) Name=y' \
    'z JobState=TIMEOUT Partition=batch TimeLimit=600 StartTime=2024-03-02T00:00:00 EndTime=2024-03-02T10:00:00 NodeList=n[1-4] NodeCnt=4 ProcCnt=64 WorkDir=/home/eve ReservationName= Tres=cpu=64,node=4,billing=64 Account=acct QOS=normal WcKey= Cluster=tiny SubmitTime=2024-03-01T23:00:00 EligibleTime=2024-03-01T23:00:00 DerivedExitCode=0:0 ExitCode=0:0'
} >"$T/closed.txt"
for f in newline:3002 closed:4001; do
  id=${f#*:} f=${f%:*}
  "$S2S" --procs 64 --jobcomp "$T/$f.txt" -o "$T/$f.swf" >"$T/out" 2>"$T/err"; got=$?
  check "$f: exit 0 (the other job is written)" [ "$got" = 0 ]
  check "$f: the record with a newline in its name refused, named" has "$T/err" "its name holds a newline"
  check "$f: counted by job" has "$T/err" "(jobs $id)"
  check "$f: only the first job written" [ "$(grep -vc '^;' "$T/$f.swf")" = 1 ]
  if grep -v '^;' "$T/$f.swf" | awk '$12 == 1006 || $5 == 1 || $5 == 64' | grep -q .; then
    fail "$f: a job of bob's, or of the forged or real sizes, was written"
  else pass "$f: no forged job"; fi
done
check "closed: eve's incomplete first line is unreadable" has "$T/err" "1 unreadable lines"

# --- corrupt gzip -------------------------------------------------------------------
# Big enough that the damage is in the compressed stream, not only the trailer.
{ cat "$D/site.sacct"; i=0; while [ $i -lt 300 ]; do
    echo "$((5000 + i))|$((5000 + i))|tiny|batch|u$((i % 7))|$((2000 + i % 7))|g|3000|j$i|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T08:00:10|2024-03-01T09:00:10|3600|120|16|16|32000M|COMPLETED"
    i=$((i + 1)); done; } | gzip -c >"$T/good.gz"
python3 - "$T/good.gz" "$T/bad.gz" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
for i in range(len(b) // 3, len(b) // 3 + 40):
    b[i] ^= 0x5a
open(sys.argv[2], "wb").write(bytes(b))
PY
head -c 200 "$T/good.gz" >"$T/cut.gz"
for f in bad cut; do
  "$S2S" --procs 64 -o "$T/$f.swf" "$T/$f.gz" >"$T/out" 2>"$T/err"; got=$?
  check "$f gzip: exit 2" [ "$got" = 2 ]
  check "$f gzip: the message names the file" has "$T/err" "$T/$f.gz"
  check "$f gzip: no traceback" sh -c "! grep -q Traceback '$T/err'"
  check "$f gzip: no output file" [ ! -e "$T/$f.swf" ]
  check "$f gzip: no temporary file" [ ! -e "$T/$f.swf.tmp" ]
done
finish
