#!/bin/sh
# easypp-sweep: a 4-configuration x 2-load sweep gives the expected table rows,
# each equal to a direct easypp-sim run of the same spec; several schedulers
# share one easypp-sim call; a failing configuration is reported with
# easypp-sim's message while the others complete (exit 1); a configuration
# that starves jobs (--max-starvation) is marked on its line and never named
# best; usage errors exit 2.
. "$(dirname "$0")/lib.sh"
need_sim
W='synthetic:seed=7,jobs=1500,procs=64,users=12'

expect_status "--help exits 0" 0 "$SWEEP" --help
for opt in --workload --grid --base --load --baseline --also --jobs --batch --sort --top \
           --csv --json --procs --max-jobs --flurries --sim --timeout --quiet --max-starvation \
           --thesis-grid --slurm --dir --tasks --wait --collect --resubmit "robust ranking" \
           "EXIT STATUS"; do
  has "$T/out" "$opt" || fail "--help documents $opt"
done
pass "--help documents every option"

# --- a small sweep -----------------------------------------------------------------
"$SWEEP" -w "$W" --grid window=1,3 --grid backfill=fcfs,sjbf --load 0.7,0.9 -j 2 --batch 2 \
  --csv "$T/s.csv" --json "$T/s.json" >"$T/table" 2>"$T/err"; st=$?
check "sweep exits 0" [ $st = 0 ]
# Two cells on -j 2: each load's five schedulers in two shares of 3 and 2
# (a cell per worker would leave a core idle while the larger cell finishes),
# --batch 2 cutting the first in two calls: 3 calls per load.
check "4 configurations x 2 loads, baseline included, two shares per load on -j 2, batches of 2" \
  has "$T/table" "4 configurations x 2 loads = 10 runs (with easy) in 6 easypp-sim calls"
"$SWEEP" -w "$W" --grid window=1,3 --grid backfill=fcfs,sjbf --load 0.7,0.9 -j 1 \
  --csv "$T/s1.csv" >"$T/table1" 2>"$T/err"; st=$?
check "-j 1: one call per load, the same CSV as -j 2's shares" sh -c "[ $st = 0 ] &&
  grep -q 'in 2 easypp-sim calls' '$T/table1' && [ \$(wc -l < '$T/s.csv') = 11 ] &&
  cmp -s '$T/s.csv' '$T/s1.csv'"
for load in 0.7 0.9; do
  n=$(awk -v l="$load" '/^load /{cur=$2} cur==l && $1 ~ /^[0-9]+$/ {n++} END {print n+0}' "$T/table")
  check "load $load: 5 ranked rows" [ "$n" = 5 ]
  for s in easy easy++:window=1:backfill=fcfs easy++:window=1:backfill=sjbf \
           easy++:window=3:backfill=fcfs easy++:window=3:backfill=sjbf; do
    awk -v l="$load" -v s="$s" '/^load /{cur=$2} cur==l && $NF==s {f=1} END {exit !f}' "$T/table" \
      || fail "load $load: row $s"
  done
done
pass "every configuration has its row at every load"
# The rows hold what easypp-sim itself reports for that spec and load.
for load in 0.7 0.9; do
  "$EASYPP_SIM" -w "$W" --load $load -s easy,easy++:window=3:backfill=sjbf --json >"$T/direct.json" 2>/dev/null
  python3 - "$T/direct.json" "$T/table" "$load" <<'EOF' && pass "load $load: rows equal direct easypp-sim runs" || fail "load $load: rows equal direct easypp-sim runs"
import json, sys
d = json.load(open(sys.argv[1]))
rows, cur = {}, None
for line in open(sys.argv[2]):
    f = line.split()
    if line.startswith("load "):
        cur = f[1]
    elif cur == sys.argv[3] and f and f[0].isdigit():
        rows[f[-1]] = f
base = d["runs"][0]
ok = True
for r in d["runs"]:
    f = rows[r["scheduler"]]
    want = ["%.1f" % r["avg_wait_minutes"], "%.2f" % r["avg_bounded_slowdown"],
            "%.1f" % r["avg_accuracy_percent"], "%.3f" % r["corrections_per_job"],
            "%.3f" % r["utilization"], "%.1f" % (r["max_wait_minutes"] / 60),
            "%.1f" % (r["p99_wait_minutes"] / 60)]
    got = [f[1], f[3], f[5], f[6], f[7], f[8], f[9]]
    pw = "%+.1f%%" % ((r["avg_wait_minutes"] - base["avg_wait_minutes"]) / base["avg_wait_minutes"] * 100)
    if got != want or f[2] != pw:
        print(r["scheduler"], "table", got, f[2], "easypp-sim", want, pw)
        ok = False
sys.exit(0 if ok else 1)
EOF
done
check "rows are ranked by bsld" python3 - "$T/table" <<'EOF'
import sys
cur, prev = None, {}
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith("load "):
        cur, last = f[1], -1
    elif cur and f and f[0].isdigit() and len(f) == 12:
        if float(f[3]) < last:
            sys.exit(1)
        last = float(f[3])
    elif line.startswith("best configuration per load"):
        cur = None
EOF
for load in 0.7 0.9; do
  best=$(awk -v l="$load" '/^load /{cur=$2} cur==l && $1 ~ /^[0-9]+$/ && $NF != "easy" {print $NF; exit}' "$T/table")
  awk -v l="$load" -v b="$best" '/^best configuration per load/{on=1} on && $1==l && ($NF==b || ($NF=="(*)" && $(NF-1)==b)) {f=1} END {exit !f}' "$T/table" \
    || fail "best per load $load is the best-ranked configuration ($best)"
done
pass "best per load lists each load's best-ranked configuration"
"$SWEEP" -w "$W" --grid window=1,3 --baseline perfect++ >"$T/table2" 2>"$T/err"
check "a baseline no configuration beats is said so" \
  sh -c "grep -q ' easy++:window=[13] (\*)\$' '$T/table2' && grep -q 'no configuration beats perfect++ on bsld: keep perfect++ there' '$T/table2'"
check "CSV: header and 10 rows with the knobs in columns" python3 - "$T/s.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 10, len(rows)
assert {r["load"] for r in rows} == {"0.7", "0.9"}
r = [r for r in rows if r["scheduler"] == "easy++:window=3:backfill=sjbf"][0]
assert (r["window"], r["backfill"], r["preset"], r["status"]) == ("3", "sjbf", "easy++", "ok"), r
assert float(r["avg_wait_minutes"]) >= 0 and r["wait_vs_baseline_percent"] != ""
e = [r for r in rows if r["scheduler"] == "easy"][0]
assert float(e["wait_vs_baseline_percent"]) == 0.0
EOF
json_check "JSON: 10 results, no error" "$T/s.json" "len(d['results']) == 10 and all(r['error'] is None for r in d['results'])"

# --- starvation: marked on every ranked line, never named best ---------------------------
# At the log's load, window=16:metric=min waits longest 151.7 h against easy's
# 70.9 h (2.1x); window=1 and 3 stay within 2x (window=1: 1.6x longest, 1.42x p99).
"$SWEEP" -w "$W" --grid window=1,3,16 --grid metric=avg,min --also x2 --json "$T/st.json" \
  >"$T/table" 2>"$T/err"; st=$?
check "starvation sweep exits 0" [ $st = 0 ]
check "every ranked line's '!' agrees with its longest and p99 waits (limit 2x)" python3 - "$T/table" "$T/st.json" 2 <<'EOF'
import json, sys
doc = json.load(open(sys.argv[2]))
limit = float(sys.argv[3])
runs = {r["scheduler"]: r["run"] for r in doc["results"]}
base = runs["easy"]
starving = 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 12 and f[0].isdigit():
        r = runs[f[11]]
        want = f[11] != "easy" and (r["max_wait_minutes"] > limit * base["max_wait_minutes"] or
                                    r["p99_wait_minutes"] > limit * base["p99_wait_minutes"])
        if ("!" in f[10]) != want:
            print("wrong mark:", line.rstrip()); sys.exit(1)
        # the other marks: worse than easy on wait (w) and on bsld (b)
        if ("w" in f[10]) != (f[11] != "easy" and r["avg_wait_minutes"] > base["avg_wait_minutes"]):
            print("wrong w:", line.rstrip()); sys.exit(1)
        starving += want
sys.exit(0 if starving >= 1 else 1)
EOF
check "the starving configuration is listed with its figures" \
  has "$T/table" "load log, easy++:window=16:metric=min: longest wait 151.7 h (2.14x), p99 wait 116.3 h (2.35x) (easy: longest 70.9 h, p99 49.4 h)"
json_check "JSON: starving flag and best" "$T/st.json" "d['max_starvation'] == 2 and [r['starving'] for r in d['results'] if r['scheduler'] == 'easy++:window=16:metric=min'] == [True] and d['best'] == {'log': 'easy++:window=1:metric=avg'}"
# A stricter limit excludes the top-ranked configurations: the best becomes
# x2, the first that stays within 1.2x of easy's waits.
"$SWEEP" -w "$W" --grid window=1,3 --also x2 --max-starvation 1.2 --csv "$T/st.csv" >"$T/table" 2>"$T/err"
top=$(awk '/^load /{on=1} on && $1 == "1" {print $NF; exit}' "$T/table")
check "stricter limit: the top-ranked configuration ($top) is marked '!'" \
  sh -c "[ '$top' = easy++:window=1 ] && grep -Eq '^ +1 .* ! +easy\+\+:window=1\$' '$T/table'"
check "stricter limit: best is the best-ranked configuration within the limit (x2)" \
  sh -c "awk '/^best configuration per load/{on=1} on && \$1 == \"log\" {print \$NF}' '$T/table' | grep -qx x2"
check "stricter limit: both exclusions are explained" \
  sh -c "grep -q 'load log, easy++:window=1: longest wait 113.1 h (1.60x), p99 wait 70.2 h (1.42x)' '$T/table' && grep -q 'load log, easy++:window=3: ' '$T/table'"
check "CSV: p99 and flags columns" python3 - "$T/st.csv" <<'EOF'
import csv, sys
rows = {r["scheduler"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert rows["easy++:window=1"]["flags"] == "!", rows["easy++:window=1"]
assert rows["easy"]["flags"] == "-" and float(rows["easy"]["p99_wait_minutes"]) > 0
EOF
"$SWEEP" -w "$W" --grid window=1,3 --max-starvation 1.01 >"$T/table" 2>"$T/err"
check "no configuration within the limit: keep the baseline" \
  has "$T/table" "log  no configuration within the starvation limit: keep easy there"
"$SWEEP" -w "$W" --grid window=16 --grid metric=min --max-starvation off >"$T/table" 2>"$T/err"
check "--max-starvation off: no mark, the starving configuration can be best" \
  sh -c "! grep -q ' ! ' '$T/table' && awk '/^best configuration per load/{on=1} on && \$1 == \"log\"' '$T/table' | grep -q 'easy++:window=16:metric=min'"
expect_status "bad --max-starvation: exit 2" 2 "$SWEEP" -w "$W" --grid window=1 --max-starvation -1
expect_status "non-numeric --max-starvation: exit 2" 2 "$SWEEP" -w "$W" --grid window=1 --max-starvation lots

# --- a failing configuration -----------------------------------------------------------
"$SWEEP" -w "$W" --grid window=2,0,4 -j 2 >"$T/table" 2>"$T/err"; st=$?
check "a failing configuration: exit 1" [ $st = 1 ]
check "the failure is reported with easypp-sim's message" \
  has "$T/table" "easy++:window=0: easypp-sim exit 2: easypp-sim: scheduler 'easy++:window=0': bad value '0' for window"
check "the other configurations still have their rows" \
  sh -c "grep -q ' easy++:window=2\$' '$T/table' && grep -q ' easy++:window=4\$' '$T/table' && grep -q ' easy\$' '$T/table'"
check "1 run FAILED" has "$T/table" "1 run FAILED"

# --- presets, --also, no baseline --------------------------------------------------------
"$SWEEP" -w "$W" --grid preset=easy+,easy++ --grid window=2 --also perfect++ --baseline none \
  --sort wait >"$T/table" 2>"$T/err"; st=$?
check "--grid preset, --also, --baseline none: exit 0" [ $st = 0 ]
check "preset grid and --also rows" sh -c "grep -q ' easy+:window=2\$' '$T/table' && grep -q ' easy++:window=2\$' '$T/table' && grep -q ' perfect++\$' '$T/table' && ! grep -q ' easy\$' '$T/table'"

# --- several workloads: the thesis' robust ranking ---------------------------------------
W2='synthetic:seed=8,jobs=1500,procs=64,users=12'
"$SWEEP" -w "$W" -w "$W2" --grid window=1,3 --grid metric=avg,max --also easy+ -j 1 --csv "$T/r.csv" \
  --json "$T/r.json" >"$T/rob" 2>"$T/err"; st=$?
check "two workloads: exit 0, 6 runs per workload in one call each on -j 1" \
  sh -c "[ $st = 0 ] && grep -q '4 configurations x 1 loads x 2 workloads = 12 runs (with easy, easy+) in 2 easypp-sim calls' '$T/rob'"
check "robust ranking: degradation from each workload's best, averaged, ranked, in the CSV" python3 - "$T/r.csv" "$T/rob" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 12, len(rows)
by = {}
for r in rows:
    by.setdefault(r["workload"], {})[r["scheduler"]] = r
assert len(by) == 2
avg = {}
for w, rs in by.items():
    best = min(float(r["avg_bounded_slowdown"]) for s, r in rs.items() if s != "easy")
    for s, r in rs.items():
        if s == "easy":
            assert r["degradation_percent"] == "" and r["robust_rank"] == ""
            continue
        d = (float(r["avg_bounded_slowdown"]) - best) / best * 100
        assert abs(d - float(r["degradation_percent"])) < 1e-3, (w, s, d, r["degradation_percent"])
        avg[s] = avg.get(s, 0) + d / 2
ranked = sorted(avg, key=lambda s: (avg[s], s))
for w, rs in by.items():
    for s in ranked:
        assert abs(float(rs[s]["robust_avg_degradation_percent"]) - avg[s]) < 1e-3
        assert int(rs[s]["robust_rank"]) == ranked.index(s) + 1
# window 1: max is avg (replayed once, the same figures)
for rs in by.values():
    assert rs["easy++:window=1:metric=max"]["avg_wait_minutes"] == rs["easy++:window=1:metric=avg"]["avg_wait_minutes"]
lines = open(sys.argv[2]).read().split("robust ranking at load log (by bsld)")[1].splitlines()
first = [l for l in lines if l.strip().startswith("1 ")][0]
assert first.split()[-1] == ranked[0] and abs(float(first.split()[1]) - avg[ranked[0]]) < 0.006, first
EOF
json_check "JSON: the robust ranking" "$T/r.json" "len(d['robust']['log']) == 5 and d['robust']['log'][0]['rank'] == 1 and all(len(r['degradation_percent']) == 2 for r in d['robust']['log'])"
expect_status "--thesis-grid with one of its knobs: exit 2" 2 "$SWEEP" -w "$W" --thesis-grid --grid window=2
expect_status "the same workload twice: exit 2" 2 "$SWEEP" -w "$W" -w "$W"
expect_status "--wait without --slurm: exit 2" 2 "$SWEEP" -w "$W" --grid window=1 --wait
expect_status "--collect of a directory without a sweep: exit 2" 2 "$SWEEP" --collect "$T"

# --- usage errors ---------------------------------------------------------------------
expect_status "no workload: exit 2" 2 "$SWEEP" --grid window=1
expect_status "standard input refused: exit 2" 2 "$SWEEP" -w - --grid window=1
expect_status "missing workload file: exit 2" 2 "$SWEEP" -w "$T/nope.swf"
expect_status "grid without '=': exit 2" 2 "$SWEEP" -w "$W" --grid window
expect_status "bad range 5..1: exit 2" 2 "$SWEEP" -w "$W" --grid window=5..1
expect_status "value with ':': exit 2" 2 "$SWEEP" -w "$W" --grid window=1:2
expect_status "bad load: exit 2" 2 "$SWEEP" -w "$W" --load high
expect_status "easypp-sim not found: exit 2" 2 "$SWEEP" -w "$W" --sim "$T/nope"
check "easypp-sim not found: says how to fix" has "$T/err" "pass --sim PATH or set EASYPP_SIM"

# --- alike_key, the shares' grouping, agrees with easypp-sim's replay_key ---------
python3 "$CONTRIB_DIR/tests/sweep_alike.py" "$SWEEP" "$EASYPP_SIM" >"$T/alike" 2>&1; st=$?
check "thesis grid: every spec has the alike_key of the replay it reused, one share per key" \
  sh -c "[ $st = 0 ] && grep -q '8640 specs, 7620 replays, 7620 alike_keys, 0 problems' '$T/alike'"

# --- a truncated real log (skipped without the archive) ------------------------------------
KTH="$WORKLOADS/KTH-SP2-1996-2.1-cln.swf"
if [ -r "$KTH" ]; then
  "$SWEEP" -w "$KTH" --max-jobs 3000 --grid window=2,4 --grid correction=estimate,gradual \
    --load log,0.85 >"$T/table" 2>"$T/err"; st=$?
  check "KTH (3000 jobs): exit 0, 3000 jobs on 100 processors" \
    sh -c "[ $st = 0 ] && grep -q 'KTH-SP2-1996-2.1-cln.swf: 3000 jobs on 100 processors' '$T/table'"
  n=$(awk '$1 ~ /^[0-9]+$/ && NF == 12' "$T/table" | wc -l)
  check "KTH: 2 loads x 5 rows" [ "$n" = 10 ]
else
  echo "skip KTH sweep: $KTH not readable"
fi

finish
