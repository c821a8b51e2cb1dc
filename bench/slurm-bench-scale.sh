#!/bin/bash
# make slurm-bench-scale: the Slurm benchmark at 2,000 nodes and 50,000
# pending jobs (docs/slurm-benchmark.md, "At scale").
#   1. a front-end Slurm in PREFIX (bench/build-frontend-slurm.sh; cached),
#   2. this tree's plugin built against PREFIX/build (a copy of the tree in
#      PREFIX/easypp, so this build is untouched),
#   3. bench/slurm_bench.py --scale on it, with the arguments given.
# Usage: bench/slurm-bench-scale.sh [slurm_bench.py options]
#   SLURM_FE_PREFIX   default /opt/slurm-fe-<major.minor> of the installed Slurm
set -euo pipefail
prog=${0##*/}
die() { echo "$prog: error: $*" >&2; exit 1; }
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || die "run as root (the benchmark starts Slurm daemons)"
[ -f /usr/include/munge.h ] || die "libmunge-dev is missing (./setup.sh deps)"
ver=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null) || die "libslurm-dev missing"
ver=${ver#*:}; ver=${ver%-*}
prefix=${SLURM_FE_PREFIX:-/opt/slurm-fe-${ver%.*}}
"$repo/bench/build-frontend-slurm.sh" "$prefix"
mkdir -p "$prefix/easypp"
rsync -a --delete --exclude .git --exclude .slurm-src --include /build-aux/ --exclude 'build-*' \
  "$repo/" "$prefix/easypp/"
cd "$prefix/easypp"
if ! grep -qs -- "--with-slurm-source=$prefix/build" config.log; then
  ./configure --enable-plugin --with-slurm-source="$prefix/build" \
    --with-slurm-plugindir="$prefix/lib/slurm" > easypp-configure.log 2>&1 ||
    { tail -20 easypp-configure.log; die "configure of the plugin failed"; }
  make -C plugin clean > /dev/null 2>&1 || true
fi
make -j2 -C libpredict > easypp-make.log 2>&1 && make -j2 -C plugin >> easypp-make.log 2>&1 ||
  { tail -30 easypp-make.log; die "building the plugin against $prefix/build failed"; }
cd "$repo"
EASYPP_PLUGIN_DIR="$prefix/easypp/plugin" exec python3 bench/slurm_bench.py --scale \
  --slurm-prefix "$prefix" "$@"
