#!/bin/sh
# make install / make uninstall of the plugin directory into a scratch
# DESTDIR: Slurm's plugin directory gets sched_easypp.so and no libtool .la;
# uninstall removes the .so again (the rollback in docs/admin-guide.md).
# Uses $EASYPP_BUILD_DIR (set by 'make check'; the plugin must be built).
set -u
B=${EASYPP_BUILD_DIR:-$(dirname "$0")/../..}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

if ! make -s -C "$B/plugin" install DESTDIR="$T/root" >"$T/install.log" 2>&1; then
  fail "make install: $(tail -5 "$T/install.log")"
fi
so=$(find "$T/root" -name sched_easypp.so)
if [ -n "$so" ] && [ -f "$so" ]; then pass "make install puts sched_easypp.so in ${so#"$T/root"}"
else fail "make install: no sched_easypp.so under DESTDIR"; fi
dir=$(dirname "$so")
la=$(find "$T/root" -name '*.la')
if [ -z "$la" ]; then pass "no libtool .la installed"; else fail "libtool archives installed: $la"; fi
if [ -x "$(find "$T/root" -name easypp-ctl | head -1)" ]; then pass "easypp-ctl installed"
else fail "easypp-ctl not installed"; fi

if ! make -s -C "$B/plugin" uninstall DESTDIR="$T/root" >"$T/uninstall.log" 2>&1; then
  fail "make uninstall: $(tail -5 "$T/uninstall.log")"
fi
left=$(find "$T/root" -type f)
if [ ! -e "$dir/sched_easypp.so" ] && [ -z "$left" ]; then pass "make uninstall removes every installed file"
else fail "make uninstall left: $left"; fi

echo
if [ "$fails" -ne 0 ]; then echo "$fails install test(s) failed"; exit 1; fi
echo "all install tests passed"
