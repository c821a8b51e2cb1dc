#!/bin/sh
# run-fuzz.sh BIN-DIR SRC-DIR WORK-DIR SECONDS [TARGET...]
#
# 'make fuzz': runs each libFuzzer target in BIN-DIR for SECONDS, FUZZ_JOBS
# of them at a time (default: the number of processors; a libFuzzer
# process uses one), starting from its seed corpus SRC-DIR/corpus/<name>/
# (read only) and the corpus it grew in earlier runs, WORK-DIR/corpus/<name>/.
# A crash, a failed property (abort), a leak, a sanitizer report, an input
# running longer than FUZZ_TIMEOUT seconds or going over FUZZ_RSS_MB stops
# that target; its input is saved in WORK-DIR/artifacts/<name>/ and the
# run fails (after the other targets had their turn). Prints each target's
# executions, in the order the targets were given. FUZZ_OPTIONS adds
# libFuzzer options.
set -u
[ $# -ge 4 ] || { echo "usage: $0 BIN-DIR SRC-DIR WORK-DIR SECONDS [TARGET...]" >&2; exit 2; }
bin=$1 src=$2 work=$3 seconds=$4
shift 4
targets=${*:-fuzz_swf fuzz_state fuzz_settings fuzz_ctl fuzz_accounting}
case $seconds in ''|*[!0-9]*) echo "$0: SECONDS must be a number, not '$seconds'" >&2; exit 2 ;; esac
timeout=${FUZZ_TIMEOUT:-25}
rss=${FUZZ_RSS_MB:-2048}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) echo "$0: FUZZ_JOBS must be a positive number, not '$jobs'" >&2; exit 2 ;; esac

# Every sanitizer report is fatal; leaks are checked (libFuzzer does it per
# input when it sees new memory grow).
ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS
# Symbolized stack traces: Debian's llvm-14 has llvm-symbolizer off PATH.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && ! command -v llvm-symbolizer >/dev/null 2>&1; then
  for s in /usr/lib/llvm-*/bin/llvm-symbolizer; do
    [ -x "$s" ] && ASAN_SYMBOLIZER_PATH=$s
  done
  [ -n "${ASAN_SYMBOLIZER_PATH:-}" ] && export ASAN_SYMBOLIZER_PATH
fi

# Inputs bigger than this are not more interesting for these parsers.
max_len() {
  case $1 in
    fuzz_settings) echo 2048 ;;
    *) echo 16384 ;;
  esac
}

# Every target is checked before any runs.
count=0
for t in $targets; do
  count=$((count + 1))
  [ -x "$bin/$t" ] || { echo "$0: $bin/$t is not built" >&2; exit 2; }
  [ -d "$src/corpus/${t#fuzz_}" ] || { echo "$0: no seed corpus $src/corpus/${t#fuzz_}" >&2; exit 2; }
done

# One target's run; its exit status goes to WORK-DIR/<name>.status (the
# report is read from its log once every target of the batch is done).
run_one() {
  t=$1
  name=${t#fuzz_}
  mkdir -p "$work/corpus/$name" "$work/artifacts/$name"
  dict=""
  [ -f "$src/dict/$name.dict" ] && dict="-dict=$src/dict/$name.dict"
  rm -f "$work/$name.status"
  # shellcheck disable=SC2086
  "$bin/$t" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss" \
    -max_len="$(max_len "$t")" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$name/" $dict ${FUZZ_OPTIONS:-} \
    "$work/corpus/$name" "$src/corpus/$name" >"$work/$name.log" 2>&1
  echo $? >"$work/$name.status"
}

# What a finished target found.
report() {
  t=$1
  name=${t#fuzz_}
  exe=$bin/$t
  log=$work/$name.log
  st=$(cat "$work/$name.status" 2>/dev/null || echo "?")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  corpus_n=$(find "$work/corpus/$name" -type f | wc -l)
  echo "== $t: ${seconds}s (log $log)"
  if [ "$st" = 0 ]; then
    echo "   ok: ${execs:-?} executions, $cov, corpus $corpus_n inputs"
  else
    echo "   FAILED (exit $st) after ${execs:-?} executions; the report:"
    grep -E '^(==[0-9]+==|SUMMARY|fuzz check failed|.*runtime error:|artifact_prefix|Test unit written|\s+#[0-9]+ )' "$log" | head -n 40 | sed 's/^/   /'
    echo "   reproduce: $exe $(ls -t "$work/artifacts/$name/" | head -n 1 | sed "s|^|$work/artifacts/$name/|")"
    failed="$failed $t"
  fi
}

# Batches of FUZZ_JOBS targets, each batch waited for, then reported in order.
failed=""
batch=""
n=0
flush() {
  [ -n "$batch" ] || return 0
  wait
  for b in $batch; do report "$b"; done
  batch=""
  n=0
}
echo "fuzz: $count targets, ${seconds}s each, $jobs at a time"
for t in $targets; do
  run_one "$t" &
  batch="$batch $t"
  n=$((n + 1))
  [ "$n" -lt "$jobs" ] || flush
done
flush
if [ -n "$failed" ]; then
  echo "fuzz: FAILED:$failed (inputs in $work/artifacts/; add each, once fixed, to $src/corpus/<name>/)"
  exit 1
fi
echo "fuzz: every target ran ${seconds}s without a finding"
