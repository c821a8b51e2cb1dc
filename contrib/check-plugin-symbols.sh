#!/bin/sh
# Check that every Slurm symbol sched_easypp.so needs is there at load time:
# each unversioned undefined symbol of the plugin must be defined by
# slurmctld, the libraries it links (libslurmfull) or the plugin's own
# libraries. The same check as the integration suite's
# test_load.PluginBinaryTest, for releases whose daemons the build does not
# run (contrib/build-slurm-tarball.sh builds them into PREFIX).
#
# Usage: contrib/check-plugin-symbols.sh PLUGIN.so PREFIX|SLURMCTLD
# Exit status 0 when all resolve, 1 (the missing names on stderr) otherwise.
set -eu
prog=${0##*/}
[ $# -eq 2 ] || { echo "usage: $prog PLUGIN.so PREFIX|SLURMCTLD" >&2; exit 2; }
so=$1
ctld=$2
[ -d "$ctld" ] && ctld=$ctld/sbin/slurmctld
[ -f "$so" ] || { echo "$prog: no such file: $so" >&2; exit 2; }
[ -x "$ctld" ] || { echo "$prog: no slurmctld at $ctld" >&2; exit 2; }
command -v nm >/dev/null || { echo "$prog: nm (binutils) not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --undefined-only "$so" | awk '$1 == "U" && $NF !~ /@/ { print $NF }' | sort -u >"$tmp/wanted"
{ echo "$ctld"; ldd "$ctld" "$so" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p'; } | sort -u |
  while IFS= read -r lib; do nm -D --defined-only "$lib" 2>/dev/null; done |
  awk '{ sub(/@.*/, "", $NF); print $NF }' | sort -u >"$tmp/have"
missing=$(comm -23 "$tmp/wanted" "$tmp/have")
n=$(wc -l <"$tmp/wanted")
if [ -n "$missing" ]; then
  echo "$prog: $so needs symbols $ctld and its libraries do not define:" >&2
  echo "$missing" | sed 's/^/  /' >&2
  exit 1
fi
echo "$prog: all $n Slurm symbols of $so resolve against $ctld and its libraries"
