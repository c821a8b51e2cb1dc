#!/bin/sh
# The built plugin is the configured one: configure writes what changes the
# plugin's code into plugin/easypp_build.h (rewritten only when a value
# changes), every plugin object depends on it, and the sched_easypp.so in
# place was built with the configured --enable-debug-checks. (Configuring
# again with other options, as ./setup.sh demo then ./setup.sh test does,
# must rebuild the plugin; before easypp_build.h it did not, and the
# integration test of the debug checks was skipped.) And the core's objects
# were compiled with link-time optimization exactly when configured so.
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

# Link-time optimization (configure's --disable-lto, on by default where the
# compiler links with it): the core's objects carry GCC's LTO sections
# exactly when configure put -flto in the flags.
if grep -q "^CXXFLAGS = .*-flto" "$B/libpredict/Makefile"; then want=yes; else want=no; fi
o=$B/libpredict/src/.libs/libpredict_la-queue.o
if ! command -v readelf >/dev/null 2>&1; then fail "readelf not found (apt-get install binutils)"
elif [ ! -f "$o" ]; then fail "missing $o"
else
  if readelf -S "$o" | grep -q '\.gnu\.lto_'; then have=yes; else have=no; fi
  if [ "$have" = "$want" ]; then pass "libpredict objects: link-time optimization $have, as configured"
  else fail "libpredict objects: link-time optimization $have, the Makefile's CXXFLAGS say $want (a stale build?)"; fi
fi

echo
if [ "$fails" -ne 0 ]; then echo "$fails build option test(s) failed"; exit 1; fi
echo "all build option tests passed"
