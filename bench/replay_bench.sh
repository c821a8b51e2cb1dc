#!/bin/sh
# Replay benchmark: four archive logs under ten schedulers. Prints wait,
# bounded slowdown, longest wait, accuracy, corrections per job, run time
# and simulated jobs per second for the log as it is, the same averages over
# SHAKE shaken copies (offered load spread over +-1%: mean +- half-width of
# the 95% confidence interval, easypp-sim --shake), then the whole-process
# time of an easy++ replay of each log (reading the gzip file included) and
# its peak memory.
#
# Figures are printed, never asserted: machines here are shared and noisy.
# Usage: replay_bench.sh [LOG...]   (default: the four logs below)
#   WORKLOADS  directory with the archive logs (default ../shared/workloads)
#   EASYPP_SIM the easypp-sim binary (default tools/easypp-sim)
#   REPEAT     easy++ whole-process repetitions, best kept (default 3)
#   SHAKE      shaken copies per log (default 9; 0: none)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
WORKLOADS=${WORKLOADS:-$here/../../shared/workloads}
SIM=${EASYPP_SIM:-$here/../tools/easypp-sim}
REPEAT=${REPEAT:-3}
SHAKE=${SHAKE:-9}
SCHEDS=fcfs,easy,easy+,easy-sjbf,easy++,site,perfect++,x2,sjf,conservative
[ $# -gt 0 ] || set -- KTH-SP2-1996-2.1-cln.swf CTC-SP2-1996-3.1-cln.swf.gz \
                        SDSC-SP2-1998-4.2-cln.swf.gz SDSC-BLUE-2000-4.2-cln.swf.gz
command -v python3 >/dev/null || { echo "replay_bench: python3 is needed to format the figures" >&2; exit 2; }
[ -x "$SIM" ] || { echo "replay_bench: $SIM not built (run make)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

echo "easypp-sim replay benchmark on $(uname -n), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for log in "$@"; do
  f=$WORKLOADS/$log
  [ -f "$f" ] || { echo "replay_bench: missing $f" >&2; exit 2; }
  shake=
  [ "$SHAKE" -gt 0 ] && shake="--shake $SHAKE"
  # shellcheck disable=SC2086  # $shake is two words or none
  "$SIM" -q -w "$f" -s "$SCHEDS" $shake --top-users 0 --json >"$tmp/all.json"
  best=""
  for i in $(seq "$REPEAT"); do
    t0=$(date +%s.%N)
    "$SIM" -q -w "$f" -s easy++ --json >"$tmp/epp.json"
    t1=$(date +%s.%N)
    w=$(echo "$t1 - $t0" | awk '{print $1 - $3}')
    best=$(printf '%s\n%s\n' "$best" "$w" | awk 'NF' | sort -g | head -n1)
  done
  python3 - "$tmp/all.json" "$tmp/epp.json" "$best" "$log" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))
wall = float(sys.argv[3]); log = sys.argv[4]
i = d["input"]
print()
print(f"{log}: {i['jobs']} jobs on {i['procs']} processors, read in {i['read_seconds']:.3f} s")
print(f"{'scheduler':<13}{'wait(min)':>10}{'bsld':>9}{'maxw(h)':>9}{'acc(%)':>8}{'corr/job':>10}"
      f"{'run(s)':>9}{'jobs/s':>11}")
for r in d["runs"]:
    print(f"{r['scheduler']:<13}{r['avg_wait_minutes']:>10.1f}{r['avg_bounded_slowdown']:>9.2f}"
          f"{r['max_wait_minutes'] / 60:>9.1f}{r['avg_accuracy_percent']:>8.1f}"
          f"{r['corrections_per_job']:>10.3f}{r['elapsed_seconds']:>9.3f}{r['jobs_per_second']:>11.0f}")
if "shake" in d:
    sh = d["shake"]
    lo, hi = min(sh["offered_loads"]), max(sh["offered_loads"])
    print(f"shaken: {sh['copies']} copies, offered load {lo:.3f} to {hi:.3f}; "
          "mean +- half-width of the 95% confidence interval")
    print(f"{'scheduler':<13}{'wait(min)':>16}{'bsld':>18}{'maxw(h)':>14}")
    half = lambda m: (m["ci95"][1] - m["ci95"][0]) / 2
    for r in d["runs"]:
        s = r["shaken"]
        w, b, m = s["avg_wait_minutes"], s["avg_bounded_slowdown"], s["max_wait_minutes"]
        print(f"{r['scheduler']:<13}{w['mean']:>9.1f} +- {half(w):<4.1f}{b['mean']:>10.2f} +- {half(b):<5.2f}"
              f"{m['mean'] / 60:>7.0f} +- {half(m) / 60:<4.0f}")
r = e["runs"][0]
print(f"easy++ whole process (read + replay + report, best of runs): {wall:.3f} s wall; "
      f"replay {r['elapsed_seconds']:.3f} s = {r['jobs_per_second']:.0f} jobs/s; "
      f"peak memory {e['peak_rss_mb']:.1f} MB")
PY
done
