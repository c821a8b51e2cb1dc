#!/bin/sh
# Converted accounting replays with easypp-sim: the fixture's job and drop
# counts are the expected ones, and a real archive log taken through
# accounting (swf2sacct.py) and back replays with identical metrics.
. "$(dirname "$0")/lib.sh"
need_sim
D=$TEST_DATA

# --- the sacct fixture replays ------------------------------------------------
"$S2S" -q --procs 64 -o "$T/site.swf" "$D/site.sacct" || fail "conversion"
expect_status "converted fixture replays (exit 0)" 0 "$EASYPP_SIM" -w "$T/site.swf" -s easy,easy++ --json
cp "$T/out" "$T/site.json"
# 26 records: 3 never started (runtime<0), 1 of 80 CPUs on 64 (wider), 22 jobs.
json_check "26 records read, 22 jobs simulated" "$T/site.json" \
  "d['input']['records'] == 26 and d['input']['jobs'] == 22 and all(r['jobs_simulated'] == 22 for r in d['runs'])"
json_check "dropped: 3 never started, 1 wider than the machine, nothing else" "$T/site.json" \
  "d['input']['dropped'] == {'malformed_lines': 0, 'submit_negative': 0, 'runtime_negative': 3, 'no_size': 0, 'wider_than_machine': 1}"
json_check "the UNLIMITED job gets the default estimate" "$T/site.json" \
  "d['input']['adjusted']['estimate_missing'] == 1 and d['input']['procs'] == 64"
check "easypp-sim names the first never-started job (job 8) and the wide one (job 24)" \
  sh -c "grep -q 'job 8 dropped: run time -1' '$T/err' && grep -q 'job 24 dropped: 80 processors' '$T/err'"
"$S2S" -q --procs 64 "$D/site.sacct" | "$EASYPP_SIM" -w - -s easy --json >"$T/pipe.json" 2>/dev/null
json_check "converter piped into easypp-sim" "$T/pipe.json" "d['input']['jobs'] == 22"
"$S2S" -q --procs 16 --jobcomp "$D/slurm-22.05-jobcomp.txt" | "$EASYPP_SIM" -w - -s easy,easy++ --json >"$T/real.json" 2>/dev/null
json_check "the real jobcomp log replays: 11 jobs, 1 never started" "$T/real.json" \
  "d['input']['jobs'] == 11 and d['input']['dropped']['runtime_negative'] == 1"

# --- round trip through accounting: identical replay ---------------------------
KTH="$WORKLOADS/KTH-SP2-1996-2.1-cln.swf"
if [ -r "$KTH" ]; then
  python3 "$HERE/swf2sacct.py" "$KTH" >"$T/kth.sacct"
  "$S2S" -q --procs 100 -o "$T/kth.swf" "$T/kth.sacct" || fail "KTH conversion"
  "$EASYPP_SIM" -w "$KTH" -s easy,easy++ --json >"$T/a.json" 2>/dev/null
  "$EASYPP_SIM" -w "$T/kth.swf" -s easy,easy++ --json >"$T/b.json" 2>/dev/null
  if python3 - "$T/a.json" "$T/b.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
keys = ("jobs_simulated", "jobs_measured", "avg_wait_minutes", "avg_bounded_slowdown",
        "avg_accuracy_percent", "corrections_per_job", "utilization")
bad = [(ra["scheduler"], k, ra[k], rb[k]) for ra, rb in zip(a["runs"], b["runs"])
       for k in keys if ra[k] != rb[k]]
for x in bad:
    print("%s %s: archive %s, round trip %s" % x)
sys.exit(1 if bad or a["input"]["jobs"] != 28475 or b["input"]["jobs"] != 28475 else 0)
EOF
  then pass "KTH-SP2 through sacct and back: same 28475 jobs, identical easy/easy++ metrics"
  else fail "KTH round trip"; fi
  python3 "$HERE/swf2sacct.py" --iso "$KTH" | "$S2S" -q --procs 100 - >"$T/kth-iso.swf"
  if [ "$(jobs_of "$T/kth.swf" | md5sum)" = "$(jobs_of "$T/kth-iso.swf" | md5sum)" ]; then
    pass "KTH with ISO times equals KTH with Unix times"
  else fail "KTH with ISO times"; fi
else
  echo "skip KTH round trip: $KTH not readable"
fi

finish
