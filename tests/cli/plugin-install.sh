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

# The build's plugin_version check (plugin/check-plugin-version.sh) under
# Debian's default awk, mawk (a fresh Debian 12 has no gawk: an awk regex
# with an {8} interval once failed every build there).
S=$(cd "$(dirname "$0")/../.." && pwd)
check=$S/plugin/check-plugin-version.sh
want=$(sed -n 's/^SLURM_VERSION_NUMBER = *//p' "$B/plugin/Makefile")
built=$B/plugin/sched_easypp.so
if command -v mawk >/dev/null 2>&1 && [ -n "$want" ] && [ -f "$built" ]; then
  mkdir -p "$T/bin" && ln -s "$(command -v mawk)" "$T/bin/awk"
  if PATH=$T/bin:$PATH sh "$check" "$built" "$want" 2>"$T/check.err"; then
    pass "plugin_version check passes under mawk ($want)"
  else fail "plugin_version check under mawk: $(cat "$T/check.err")"; fi
  if PATH=$T/bin:$PATH sh "$check" "$built" $((want + 1)) 2>"$T/check.err"; then
    fail "plugin_version check accepts a wrong version"
  elif grep -q "slurmctld would refuse it" "$T/check.err"; then
    pass "plugin_version check refuses a wrong version, saying why"
  else fail "plugin_version check, wrong version: $(cat "$T/check.err")"; fi
  if PATH=$T/bin:$PATH sh "$check" /bin/sh "$want" 2>"$T/check.err"; then
    fail "plugin_version check accepts a file without the symbol"
  elif grep -q "no plugin_version symbol" "$T/check.err"; then
    pass "plugin_version check says a file has no plugin_version"
  else fail "plugin_version check, no symbol: $(cat "$T/check.err")"; fi
else
  fail "plugin_version check not tested: needs mawk ($(command -v mawk || echo none)), SLURM_VERSION_NUMBER ('$want') and $built"
fi

echo
if [ "$fails" -ne 0 ]; then echo "$fails install test(s) failed"; exit 1; fi
echo "all install tests passed"
