# Shared helpers of the contrib tests (sourced). Environment from 'make check':
#   EASYPP_SIM   the built easypp-sim        CONTRIB_DIR  contrib/ (sources)
#   WORKLOADS    the archive logs (optional) TEST_DATA    contrib/tests/data
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CONTRIB_DIR=${CONTRIB_DIR:-$(cd "$HERE/.." && pwd)}
TEST_DATA=${TEST_DATA:-$HERE/data}
EASYPP_SIM=${EASYPP_SIM:-$CONTRIB_DIR/../tools/easypp-sim}
WORKLOADS=${WORKLOADS:-$CONTRIB_DIR/../../shared/workloads}
S2S="$CONTRIB_DIR/easypp-sacct2swf"
SWEEP="$CONTRIB_DIR/easypp-sweep"
COMPARE="$HERE/swf_compare.py"
export EASYPP_SIM
# Fixed zone and conversion date: the fixtures are in UTC.
TZ=UTC; export TZ
SOURCE_DATE_EPOCH=1717200000; export SOURCE_DATE_EPOCH

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
checks=0
pass() { checks=$((checks + 1)); echo "ok   $1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL $1"; }

# check NAME COMMAND...: pass if COMMAND succeeds.
check() { name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

# expect_status NAME STATUS COMMAND...: stdout in $T/out, stderr in $T/err.
expect_status() {
  name=$1 want=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; got=$?
  if [ "$got" = "$want" ]; then pass "$name"
  else fail "$name (exit $got, wanted $want): $(head -c 400 "$T/err")"; fi
}

# has FILE TEXT: FILE contains the fixed string TEXT.
has() { grep -qF -- "$2" "$1"; }

# json_check NAME FILE PYTHON-EXPRESSION-ON-d
json_check() {
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"
  then pass "$1"; else fail "$1"; fi
}

# Job lines only, fields separated by one space.
jobs_of() { grep -v '^;' "$1" | awk '{$1=$1; print}'; }

need_sim() {
  if [ ! -x "$EASYPP_SIM" ]; then
    echo "FAIL easypp-sim not built at $EASYPP_SIM (make -C tools easypp-sim)"
    exit 1
  fi
}

finish() {
  if [ "$checks" = 0 ]; then echo "no checks ran"; exit 1; fi
  [ $fails = 0 ] && echo "all $checks checks passed" || echo "$fails of $checks checks failed"
  exit $((fails > 0))
}
