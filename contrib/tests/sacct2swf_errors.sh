#!/bin/sh
# easypp-sacct2swf: help, usage errors and bad input (exit 2 with a message
# saying what is wrong and what is needed), --run-sacct against a stub sacct
# (the command line it builds, SLURM_TIME_FORMAT, sacct failing), and the
# machine size from a stub sinfo (answering, failing, hanging).
. "$(dirname "$0")/lib.sh"
D=$TEST_DATA

# error NAME TEXT COMMAND...: exit 2 and TEXT in the one error line.
error() {
  name=$1 text=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; got=$?
  if [ "$got" = 2 ] && has "$T/err" "$text"; then pass "$name"
  else fail "$name (exit $got): $(head -c 400 "$T/err")"; fi
}

# --- help -------------------------------------------------------------------------
expect_status "--help exits 0" 0 "$S2S" --help
for opt in --output --run-sacct --jobcomp --start --end --partition --cluster --procs \
           --no-sinfo --sinfo-timeout --computer --installation --keep-ids --jobname-as-app \
           --include-running --requeued --submit-from --delimiter --quiet --version \
           "FIELD MAPPING" "STATUS" "EXIT STATUS" "UNLIMITED" "Partition_Limit" "JobIDRaw"; do
  has "$T/out" "$opt" || fail "--help documents $opt"
done
pass "--help documents every option, the mapping, statuses and exit codes"
expect_status "--version exits 0" 0 "$S2S" --version

# --- usage errors --------------------------------------------------------------
error "--start needs --run-sacct" "--start/--end only apply with --run-sacct" "$S2S" --start 2024-01-01 "$D/site.sacct"
error "two inputs" "give one input" "$S2S" --jobcomp "$D/jobcomp.txt" "$D/site.sacct"
error "--procs 0" "--procs must be a positive" "$S2S" --procs 0 "$D/site.sacct"
error "bad --requeued" "invalid choice" "$S2S" --requeued some "$D/site.sacct"
error "unknown option" "unrecognized arguments" "$S2S" --frobnicate "$D/site.sacct"

# --- unusable input ---------------------------------------------------------------
error "missing file is named" "cannot read $T/nope.sacct" "$S2S" --procs 8 "$T/nope.sacct"
: >"$T/empty.sacct"
error "empty input" "empty input (no sacct header line)" "$S2S" --procs 8 "$T/empty.sacct"
printf '       JobID    JobName  Partition    Account  AllocCPUS      State ExitCode\n------------ ---------- ---------- ---------- ---------- ---------- --------\n' >"$T/fixed.sacct"
error "fixed-width sacct output is refused" "not sacct --parsable2 output" "$S2S" --procs 8 "$T/fixed.sacct"
cut -d'|' -f1-13,15-18 "$D/site.sacct" >"$T/short.sacct"   # no ElapsedRaw, no State
error "missing columns: exit 2, names each" "missing required sacct columns: ElapsedRaw, State" \
  "$S2S" --procs 8 "$T/short.sacct"
check "missing columns: the message gives the export command" has "$T/err" "--format=JobIDRaw,JobID,"
check "missing columns: the message names the line" has "$T/err" "short.sacct:1:"
check "missing columns: one line on stderr" [ "$(wc -l <"$T/err")" = 1 ]
cut -d'|' -f1-8,10-19 "$D/site.sacct" >"$T/noname.sacct"
error "--jobname-as-app needs JobName" "JobName (for --jobname-as-app)" "$S2S" --procs 8 --jobname-as-app "$T/noname.sacct"
cut -d'|' -f1-10,12-19 "$D/site.sacct" >"$T/noelig.sacct"
error "--submit-from eligible needs Eligible" "Eligible (for --submit-from eligible)" \
  "$S2S" --procs 8 --submit-from eligible "$T/noelig.sacct"
expect_status "without those options the same columns suffice" 0 "$S2S" -q --procs 8 "$T/noname.sacct"
grep -E '^JobIDRaw|PENDING|RUNNING' "$D/site.sacct" >"$T/pending.sacct"
error "only pending/running jobs: nothing to write" "no job to write (3 records read, 1 still running" \
  "$S2S" --procs 8 "$T/pending.sacct"
error "unwritable output" "cannot write $T/no/such/dir/x.swf" "$S2S" -q --procs 8 -o "$T/no/such/dir/x.swf" "$D/site.sacct"
check "no partial output file is left" [ ! -e "$T/x.swf.tmp" ]

# --- --run-sacct with a stub sacct ------------------------------------------------
mkdir -p "$T/bin"
cat >"$T/bin/sacct" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T/sacct.args"
echo "\$SLURM_TIME_FORMAT" >"$T/sacct.tf"
if [ -n "\${STUB_FAIL:-}" ]; then echo "sacct: error: Problem talking to the database: Connection refused" >&2; exit 1; fi
cat "$D/site.sacct"
EOF
chmod +x "$T/bin/sacct"
PATH="$T/bin:$PATH" "$S2S" --run-sacct --start 2024-03-01 --end 2024-03-02 --partition batch \
  --cluster tiny --procs 64 -o "$T/run.swf" 2>"$T/run.err"; st=$?
check "--run-sacct: exit 0" [ $st = 0 ]
for a in --allusers --allocations --parsable2 \
         --format=JobIDRaw,JobID,Cluster,Partition,User,UID,Group,GID,JobName,Submit,Eligible,Start,End,ElapsedRaw,TimelimitRaw,AllocCPUS,ReqCPUS,ReqMem,State \
         --starttime 2024-03-01 --endtime 2024-03-02 --partition batch --clusters tiny; do
  grep -qxF -- "$a" "$T/sacct.args" || fail "--run-sacct passes $a"
done
pass "--run-sacct: the documented sacct command line, with the passthroughs"
check "--run-sacct: no --duplicates by default" sh -c "! grep -qx -- --duplicates '$T/sacct.args'"
check "--run-sacct: SLURM_TIME_FORMAT=%s" [ "$(cat "$T/sacct.tf")" = "%s" ]
# sacct selected the partition: the converter does not filter again.
if python3 "$COMPARE" "$D/site.expected.swf" "$T/run.swf" >"$T/diff"; then
  pass "--run-sacct: same jobs as converting the export"
else fail "--run-sacct jobs: $(head -5 "$T/diff")"; fi
PATH="$T/bin:$PATH" "$S2S" -q --run-sacct --start 2024-03-01 --requeued all --procs 64 >/dev/null
check "--run-sacct --requeued all asks sacct for --duplicates" grep -qx -- --duplicates "$T/sacct.args"
PATH="$T/bin:$PATH" "$S2S" --run-sacct --procs 64 >/dev/null 2>"$T/err"
check "--run-sacct without --start warns about sacct's default window" has "$T/err" "no --start"
STUB_FAIL=1 PATH="$T/bin:$PATH" "$S2S" --run-sacct --start 2024-03-01 --procs 64 >"$T/out" 2>"$T/err"; st=$?
if [ $st = 2 ] && has "$T/err" "sacct failed (exit 1): sacct: error: Problem talking to the database"; then
  pass "sacct failing: exit 2 with sacct's message"
else fail "sacct failing (exit $st): $(cat "$T/err")"; fi
mkdir -p "$T/nobin"
PY=$(python3 -c 'import sys; print(sys.executable)')
PATH="$T/nobin" "$PY" "$S2S" --run-sacct --start 2024-03-01 --procs 64 >/dev/null 2>"$T/err"; st=$?
if [ $st = 2 ] && has "$T/err" "cannot run sacct"; then pass "no sacct installed: exit 2"
else fail "no sacct installed (exit $st): $(cat "$T/err")"; fi

# --- machine size from sinfo ------------------------------------------------------
mkdir -p "$T/sinfo-ok" "$T/sinfo-fail" "$T/sinfo-hang"
cat >"$T/sinfo-ok/sinfo" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T/sinfo.args"
printf 'n1 0/16/0/16\nn1 0/16/0/16\nn2 4/12/0/16\n'
EOF
printf '#!/bin/sh\necho "sinfo: error: Unable to contact slurm controller" >&2\nexit 1\n' >"$T/sinfo-fail/sinfo"
printf '#!/bin/sh\nexec sleep 30\n' >"$T/sinfo-hang/sinfo"
chmod +x "$T"/sinfo-*/sinfo
PATH="$T/sinfo-ok:$PATH" "$S2S" "$D/site.sacct" >"$T/s.swf" 2>"$T/err"
check "sinfo: each node counted once (n1 in two partitions): MaxProcs 32" has "$T/s.swf" "; MaxProcs: 32"
check "sinfo: the header says where MaxProcs came from" has "$T/s.swf" "; Note: MaxProcs from sinfo: 32 CPUs on 2 nodes on this host"
check "sinfo: warns that a job is wider than what sinfo reports" has "$T/err" "a job had 80 CPUs, more than the 32 CPUs sinfo reports"
check "sinfo is asked per node with %C" sh -c "tr '\n' ' ' <'$T/sinfo.args' | grep -q -- '-h -N -o %N %C'"
PATH="$T/sinfo-ok:$PATH" "$S2S" -q --partition debug "$D/site.sacct" >/dev/null
check "--partition restricts sinfo too (-p debug)" sh -c "tr '\n' ' ' <'$T/sinfo.args' | grep -q -- '-p debug'"
PATH="$T/sinfo-fail:$PATH" "$S2S" "$D/site.sacct" >"$T/s.swf" 2>"$T/err"
check "sinfo failing: MaxProcs is the largest AllocCPUS (80)" has "$T/s.swf" "; MaxProcs: 80"
check "sinfo failing: the warning asks for --procs" has "$T/err" "pass --procs N"
start=$(date +%s)
PATH="$T/sinfo-hang:$PATH" "$S2S" --sinfo-timeout 1 "$D/site.sacct" >"$T/s.swf" 2>"$T/err"
took=$(( $(date +%s) - start ))
check "sinfo hanging: given up after --sinfo-timeout (took ${took} s)" [ "$took" -lt 5 ]
check "sinfo hanging: the warning says so" has "$T/err" "sinfo did not answer within 1 s"
check "sinfo hanging: MaxProcs 80" has "$T/s.swf" "; MaxProcs: 80"
rm -f "$T/sinfo.args"
PATH="$T/sinfo-ok:$PATH" "$S2S" --no-sinfo "$D/site.sacct" >"$T/s.swf" 2>/dev/null
check "--no-sinfo: sinfo not asked, MaxProcs 80" sh -c "[ ! -e '$T/sinfo.args' ] && grep -q '; MaxProcs: 80' '$T/s.swf'"

finish
