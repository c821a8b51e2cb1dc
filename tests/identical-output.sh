#!/bin/sh
# Behaviour check for refactorings of the scheduling core: replay the four
# thesis logs under every preset (and a few knob variants) with this tree's
# easypp-sim and with the easypp-sim of a reference commit, and require
# identical results: every job's start time (the --output-swf schedule) and
# every figure of --json except the wall-clock ones (read/elapsed seconds,
# jobs per second, peak memory, CPU seconds) and the count of candidates
# tested (a cost, which the candidate indexes lower, not a decision).
#
#   tests/identical-output.sh [REF]      (default REF: d8c88b8, the last
#                                         commit before the JobBook redesign)
#
# Environment: WORKLOADS (default ../shared/workloads), EASYPP_SIM (this
# tree's binary, default tools/easypp-sim), KEEP=1 keeps the scratch folder,
# EXTRA_SCHEDS: more scheduler specs (for a reference that knows them, such
# as the guard's: EXTRA_SCHEDS="site easy++:max-delay=3600"), NEW_ARGS:
# options given to this tree's binary only, for defaults changed on
# purpose since the reference (a knob on the command line is overridden by
# the same knob inside a scheduler spec, so the variants below still test
# what they name). Since issue 12 propagation is on by default:
#
#   NEW_ARGS="--propagation no" tests/identical-output.sh d8c88b8
# The reference is built in a temporary git worktree (autotools, no plugin),
# unless REF_SIM names a built easypp-sim to compare with instead (another
# build of the same sources, such as 'make check-pgo's). LOGS: the logs to
# replay (names in WORKLOADS; default the four thesis logs).
# Exit 0 when everything is identical, 1 on any difference (each is named).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
ref=${1:-d8c88b8}
: "${WORKLOADS:=$top/../shared/workloads}"
if [ -z "${EASYPP_SIM:-}" ]; then
  for c in "$top/tools/easypp-sim" "$top/test_harness/easypp-sim"; do
    [ -x "$c" ] && EASYPP_SIM=$c && break
  done
fi
[ -x "${EASYPP_SIM:-}" ] || { echo "identical-output: build easypp-sim first (make)" >&2; exit 2; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/easypp-identical.XXXXXX")
cleanup() {
  git -C "$top" worktree remove --force "$scratch/ref" 2>/dev/null || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$scratch"
}
trap cleanup EXIT INT TERM

if [ -n "${REF_SIM:-}" ]; then
  [ -x "$REF_SIM" ] || { echo "identical-output: REF_SIM=$REF_SIM is not an executable" >&2; exit 2; }
  ref_sim=$REF_SIM
  ref=$REF_SIM
else
  echo "identical-output: building $ref's easypp-sim in $scratch/ref"
  git -C "$top" worktree add --detach "$scratch/ref" "$ref" >/dev/null 2>&1
  (cd "$scratch/ref" && ./autogen.sh >/dev/null 2>&1 && ./configure --disable-plugin >/dev/null &&
    make -j"$(nproc)" >/dev/null 2>&1) || { echo "identical-output: cannot build $ref" >&2; exit 2; }
  ref_sim=$(find "$scratch/ref" -name easypp-sim -type f -perm -u+x | head -n 1)
  [ -n "$ref_sim" ] || { echo "identical-output: no easypp-sim in $ref's build" >&2; exit 2; }
fi

logs=${LOGS:-"KTH-SP2-1996-2.1-cln.swf CTC-SP2-1996-3.1-cln.swf.gz SDSC-SP2-1998-4.2-cln.swf.gz
  SDSC-BLUE-2000-4.2-cln.swf.gz"}
# Every preset, then variants that exercise the other knobs of the
# prediction's life (propagation, correction policies, history types,
# fallback, safe backfill, the starvation guard, deeper reservations).
scheds="fcfs easy easy-pred easy-pcor easy+ easy-sjbf easy++ perfect perfect++ x2 sjf
  conservative easy++:propagation=yes easy++:correction=gradual easy++:correction=exponential
  easy++:history-type=extended:window=3 easy++:history-type=immediate:fullness=partial
  easy++:fallback=relative:metric=median easy++:safe=yes easy++:safe-after=86400
  easy++:reservations=3 conservative:plan=prediction:correction=estimate:propagation=yes
  easy-pred:window=5:metric=max ${EXTRA_SCHEDS:-}"

strip_clock() {  # the --json report without its wall-clock figures
  python3 -c '
import json, sys
CLOCK = {"read_seconds", "elapsed_seconds", "jobs_per_second", "peak_rss_mb", "cpu_seconds",
         "candidates_tested"}
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in CLOCK}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
json.dump(strip(json.load(sys.stdin)), sys.stdout, indent=1, sort_keys=True)
'
}

# The new report may have figures the reference did not have yet (issue 12
# added starvation and per-user metrics): keep only the reference's keys.
prune_to_ref() {  # prune_to_ref REF.json NEW.json: rewrites NEW.json
  python3 -c '
import json, sys
def prune(new, ref):
    if isinstance(new, dict) and isinstance(ref, dict):
        return {k: prune(v, ref[k]) for k, v in new.items() if k in ref}
    if isinstance(new, list) and isinstance(ref, list) and len(new) == len(ref):
        return [prune(a, b) for a, b in zip(new, ref)]
    return new
ref, new = (json.load(open(f)) for f in sys.argv[1:3])
with open(sys.argv[2], "w") as f:
    json.dump(prune(new, ref), f, indent=1, sort_keys=True)
' "$1" "$2"
}

fail=0
n=0
for log in $logs; do
  path="$WORKLOADS/$log"
  [ -f "$path" ] || { echo "identical-output: missing $path" >&2; exit 2; }
  for s in $scheds; do
    n=$((n + 1))
    for side in ref new; do
      bin=$EASYPP_SIM
      args=${NEW_ARGS:-}
      [ $side = ref ] && bin=$ref_sim && args=
      # shellcheck disable=SC2086  # NEW_ARGS is a list of words
      "$bin" --workload "$path" --scheduler "$s" --json --quiet $args \
        --output-swf "$scratch/$side.swf" | strip_clock >"$scratch/$side.json"
    done
    prune_to_ref "$scratch/ref.json" "$scratch/new.json"
    if ! cmp -s "$scratch/ref.json" "$scratch/new.json"; then
      echo "DIFFERENT (report): $log $s"
      diff "$scratch/ref.json" "$scratch/new.json" | head -n 20
      fail=1
    elif ! cmp -s "$scratch/ref.swf" "$scratch/new.swf"; then
      echo "DIFFERENT (schedule): $log $s"
      diff "$scratch/ref.swf" "$scratch/new.swf" | head -n 6
      fail=1
    fi
  done
done
if [ $fail = 0 ]; then
  echo "identical-output: $n replays identical to $ref (reports and schedules)${NEW_ARGS:+, with $NEW_ARGS on this side}"
fi
exit $fail
