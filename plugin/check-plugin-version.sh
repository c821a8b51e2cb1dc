#!/bin/sh
# check-plugin-version.sh SO NUMBER: succeed if the Slurm plugin SO's
# plugin_version (a const uint32_t) equals NUMBER (decimal or 0x hex: the
# SLURM_VERSION_NUMBER of the Slurm it must load into), else say both and
# fail. slurmctld refuses a plugin whose plugin_version is not its own.
# Needs objdump (binutils).
set -eu
so=$1
want=$(printf '%d' "$2")
# objdump -T: "ADDR flags DO SECTION SIZE VERSION NAME" (SECTION and SIZE
# are tab-separated; awk's default splitting takes both)
set -- $(objdump -T "$so" | awk '$NF == "plugin_version" { print $1, $(NF - 3); exit }')
if [ $# -ne 2 ]; then
  echo "$so: no plugin_version symbol" >&2
  exit 1
fi
addr=$1 section=$2
start=$(printf '%d' "0x$addr")
# objdump -s prints memory bytes in address order: "ADDR b0b1b2b3 ...". Only
# the symbol's own section: the debug sections' addresses start at 0 and
# overlap it. No {8} interval in the regex: Debian's default awk (mawk)
# does not know it.
x='[0-9a-f]'
bytes=$(objdump -s -j "$section" --start-address="$start" --stop-address=$((start + 4)) "$so" |
  awk -v rx="^ $x+ $x$x$x$x$x$x$x$x( |\$)" '$0 ~ rx { print $2; exit }')
if [ ${#bytes} -ne 8 ]; then
  echo "$so: cannot read plugin_version at 0x$addr" >&2
  exit 1
fi
# little-endian uint32
got=$(printf '%d' "0x$(echo "$bytes" | sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/')")
if [ "$got" -ne "$want" ]; then
  echo "$so: plugin_version is $(printf '0x%06x' "$got") but the installed Slurm's SLURM_VERSION_NUMBER is $(printf '0x%06x' "$want"): slurmctld would refuse it" >&2
  exit 1
fi
