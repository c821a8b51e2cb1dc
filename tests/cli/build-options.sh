#!/bin/sh
# The built plugin is the configured one: configure writes what changes the
# plugin's code into plugin/easypp_build.h (rewritten only when a value
# changes), every plugin object depends on it, and the sched_easypp.so in
# place was built with the configured --enable-debug-checks. (Configuring
# again with other options, as ./setup.sh demo then ./setup.sh test does,
# must rebuild the plugin; before easypp_build.h it did not, and the
# integration test of the debug checks was skipped.)
# Uses $EASYPP_BUILD_DIR (set by 'make check'; the plugin must be built).
set -u
B=${EASYPP_BUILD_DIR:-$(dirname "$0")/../..}
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

h=$B/plugin/easypp_build.h
so=$B/plugin/sched_easypp.so
if [ -f "$h" ] && [ -f "$so" ]; then pass "easypp_build.h and sched_easypp.so exist"
else fail "missing $h or $so"; echo "1 test(s) failed"; exit 1; fi

if "$B/config.status" --config | grep -q -- "--enable-debug-checks"; then want=yes; else want=no; fi
if grep -q "^#define EASYPP_DEBUG_CHECKS 1" "$h"; then have=yes; else have=no; fi
if [ "$want" = "$have" ]; then pass "easypp_build.h: debug checks $have, as configured"
else fail "easypp_build.h says debug checks $have, configure was given $want"; fi

# The .so holds the message of the build it is: abort (debug checks) or repair.
if grep -q "aborting (--enable-debug-checks)" "$so"; then built=yes; else built=no; fi
if [ "$built" = "$want" ]; then pass "sched_easypp.so built with debug checks $built, as configured"
else fail "sched_easypp.so was built with debug checks $built, configure was given $want (a stale build)"; fi

for o in agent slurm_cluster het_jobs sched_easypp_wrapper; do
  d=$B/plugin/.deps/sched_easypp_la-$o.Plo
  if grep -q "easypp_build.h" "$d" 2>/dev/null; then pass "$o depends on easypp_build.h"
  else fail "$o: $d does not list easypp_build.h (a configure change would not rebuild it)"; fi
done

echo
if [ "$fails" -ne 0 ]; then echo "$fails build option test(s) failed"; exit 1; fi
echo "all build option tests passed"
