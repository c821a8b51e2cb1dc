#!/bin/bash
# Build Slurm with --enable-front-end into a private prefix, for the large
# Slurm benchmark (make slurm-bench at thousands of nodes, docs/slurm-benchmark.md).
#
# A front-end build lets one slurmd, declared as FrontendName in slurm.conf,
# serve every compute node (Slurm FAQ "Can Slurm emulate a larger cluster?"):
# the controller schedules on thousands of nodes while one process runs every
# job's batch script. Debian's packages are built with --enable-multiple-slurmd
# instead, which still needs one slurmd per node, so this build is separate and
# never replaces the system's Slurm.
#
# Usage: bench/build-frontend-slurm.sh [PREFIX]   (default /opt/slurm-fe-<ver>)
#   SLURM_SRC   source tree to copy (default: .slurm-src/<ver> of the installed
#               libslurm-dev, as fetched by contrib/fetch-slurm-source.sh)
# The configured and built tree is kept in PREFIX/build: configure the plugin
# against it (./configure --with-slurm-source=PREFIX/build) so that it sees
# HAVE_FRONT_END as the daemons do. A second run with the same source does
# nothing (stamp PREFIX/.easypp-fe-stamp). Takes ~25 min with make -j2; an interrupted run resumes.
set -euo pipefail
prog=${0##*/}
die() { echo "$prog: error: $*" >&2; exit 1; }
repo_root=$(cd "$(dirname "$0")/.." && pwd)
deb_version=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null) ||
  die "libslurm-dev is not installed (./setup.sh)"
upstream=${deb_version#*:}; upstream=${upstream%-*}
src=${SLURM_SRC:-$repo_root/.slurm-src/$upstream}
[ -f "$src/configure" ] || die "no Slurm source at $src (run contrib/fetch-slurm-source.sh)"
prefix=${1:-/opt/slurm-fe-${upstream%.*}}
stamp=$prefix/.easypp-fe-stamp
want="source=$upstream front-end step-guard"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$prefix/sbin/slurmctld" ]; then
  echo "$prog: $prefix already holds $want"; exit 0
fi
jobs=${MAKE_JOBS:-2}
mkdir -p "$prefix"
# An interrupted earlier run's configured tree is built on (make is
# incremental); anything else starts from a fresh copy of the source.
if ! grep -qs '^#define HAVE_FRONT_END 1' "$prefix/build.tmp/config.h"; then
  rm -rf "$prefix/build.tmp"
  cp -a "$src" "$prefix/build.tmp"
fi
cd "$prefix/build.tmp"
if [ ! -f config.status ] || ! grep -qs '^#define HAVE_FRONT_END 1' config.h; then
# Munge for authentication as the system's Slurm; no optional plugins
# (X11, PMIx, HDF5, ...) the benchmark does not use. SLEEP_CMD/SUCMD as Debian.
./configure --prefix="$prefix" --sysconfdir="$prefix/etc" --enable-front-end \
  --disable-debug --without-rpath --disable-x11 --without-hdf5 --without-pmix \
  --without-nvml --without-rsmi --without-hwloc --without-ucx --without-bpf --without-freeipmi --without-rrdtool --without-lz4 \
  --without-yaml --without-json --without-jwt --without-http-parser \
  SUCMD=/bin/su SLEEP_CMD=/bin/sleep > easypp-configure.log 2>&1 ||
  { tail -30 easypp-configure.log; die "configure failed (log: $prefix/build.tmp/easypp-configure.log)"; }
fi
grep -q '^#define HAVE_FRONT_END 1' config.h || die "configure did not enable HAVE_FRONT_END"
# Front-end builds of 22.05 with select/cons_tres crash slurmctld when a batch
# job completes: its batch step has a step_layout but no step_node_bitmap
# (the script ran on the front end, not on a node), and _step_dealloc_lps()
# calls bit_test() on that NULL bitmap (seen here: SIGSEGV in the agent thread,
# job_epilog_complete -> ... -> _step_dealloc_lps). One guard line, marked:
f=src/slurmctld/step_mgr.c
if ! grep -q 'easypp-bench: front end' "$f"; then
  awk '{print} /^static void _step_dealloc_lps\(.*\)$/ {fn=1}
       fn && /if \(step_ptr->step_layout == NULL\)/ {
         getline; print
         print "\tif (step_ptr->step_node_bitmap == NULL)\t/* easypp-bench: front end */"
         print "\t\treturn;"; fn=0 }' "$f" > "$f.new" && mv "$f.new" "$f"
  grep -q 'easypp-bench: front end' "$f" || die "could not patch $f"
fi
# Only src/ (daemons, clients, libraries, plugins): Debian's source package
# has no generated man pages, which doc/ would want.
make -j"$jobs" -C src > easypp-make.log 2>&1 || { tail -40 easypp-make.log; die "make failed"; }
make -C src install > easypp-install.log 2>&1 ||
  { tail -40 easypp-install.log; die "make install failed"; }
rm -rf "$prefix/build"
mv "$prefix/build.tmp" "$prefix/build"
echo "$want" > "$stamp"
echo "$prog: built $prefix (slurmctld, slurmd, clients; plugin source tree $prefix/build)"
