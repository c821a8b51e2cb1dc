#!/bin/sh
# Replay benchmark: four archive logs under nine schedulers. Prints wait,
# bounded slowdown, accuracy, corrections per job, run time and simulated jobs
# per second, then the whole-process time of an easy++ replay of each log
# (reading the gzip file included) and its peak memory.
#
# Figures are printed, never asserted: machines here are shared and noisy.
# Usage: replay_bench.sh [LOG...]   (default: the four logs below)
#   WORKLOADS  directory with the archive logs (default ../shared/workloads)
#   EASYPP_SIM the easypp-sim binary (default tools/easypp-sim)
#   REPEAT     easy++ whole-process repetitions, best kept (default 3)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
WORKLOADS=${WORKLOADS:-$here/../../shared/workloads}
SIM=${EASYPP_SIM:-$here/../tools/easypp-sim}
REPEAT=${REPEAT:-3}
SCHEDS=fcfs,easy,easy+,easy-sjbf,easy++,perfect++,x2,sjf,conservative
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
  "$SIM" -q -w "$f" -s "$SCHEDS" --json >"$tmp/all.json"
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
print(f"{'scheduler':<13}{'wait(min)':>10}{'bsld':>9}{'acc(%)':>8}{'corr/job':>10}{'run(s)':>9}{'jobs/s':>11}")
for r in d["runs"]:
    print(f"{r['scheduler']:<13}{r['avg_wait_minutes']:>10.1f}{r['avg_bounded_slowdown']:>9.2f}"
          f"{r['avg_accuracy_percent']:>8.1f}{r['corrections_per_job']:>10.3f}"
          f"{r['elapsed_seconds']:>9.3f}{r['jobs_per_second']:>11.0f}")
r = e["runs"][0]
print(f"easy++ whole process (read + replay + report, best of runs): {wall:.3f} s wall; "
      f"replay {r['elapsed_seconds']:.3f} s = {r['jobs_per_second']:.0f} jobs/s; "
      f"peak memory {e['peak_rss_mb']:.1f} MB")
PY
done
