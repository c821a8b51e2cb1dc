#!/bin/sh
# check-plugin-version.sh SO NUMBER: succeed if the Slurm plugin SO's
# plugin_version (a const uint32_t) equals NUMBER (decimal or 0x hex: the
# SLURM_VERSION_NUMBER of the Slurm it must load into), else say both and
# fail. slurmctld refuses a plugin whose plugin_version is not its own.
# Needs nm and objdump (binutils).
set -eu
so=$1
want=$(printf '%d' "$2")
addr=$(nm -D --defined-only "$so" | awk '$3 == "plugin_version" { print $1; exit }')
if [ -z "$addr" ]; then
  echo "$so: no plugin_version symbol" >&2
  exit 1
fi
start=$(printf '%d' "0x$addr")
# objdump -s prints memory bytes in address order: "ADDR b0b1b2b3 ..."
bytes=$(objdump -s --start-address="$start" --stop-address=$((start + 4)) "$so" |
  awk '/^ [0-9a-f]+ [0-9a-f]{8}( |$)/ { print $2; exit }')
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
