#!/bin/bash
# Build a SchedMD Slurm release tarball into a private prefix, for building
# sched/easypp against a release Debian does not ship (25.05, 25.11, 26.05)
# and for running the integration suite on that release's daemons.
#
# Usage: contrib/build-slurm-tarball.sh [-c] TARBALL
#   TARBALL  slurm-X.Y.Z.tar.bz2 (SchedMD's release, e.g. ../shared/slurm/)
#   -c       only unpack and configure (enough to compile the plugin against
#            the tree's headers; no daemons, no installed prefix)
#
# The tarball's SHA256 must be listed in contrib/slurm-releases.sha256 (the
# releases this project knows); an unknown or mismatching tarball is refused
# with exit status 2. Everything goes under the cache directory
# ${EASYPP_SLURM_CACHE:-/var/cache/easypp}/slurm-X.Y.Z/, never into the
# repository:
#   src/     the unpacked tree, configured once: the plugin's
#            --with-slurm-source
#   prefix/  the installed release: sbin/ (slurmctld, slurmd, slurmdbd,
#            slurmrestd where its libraries are present), bin/ (clients),
#            lib/slurm/ (plugins), include/slurm/ (public headers: the
#            plugin's CPPFLAGS=-I.../prefix/include)
# A stamp (prefix/.easypp-stamp) makes a second run with the same tarball do
# nothing; an interrupted run resumes (make is incremental). The last line
# printed is the cache directory.
#
# Configured as bench/build-frontend-slurm.sh does (munge authentication, no
# optional plugins the tests do not use; not --without-lz4, which breaks
# 26.05.3's configure: liblz4-dev is simply not installed) but without
# --enable-front-end: one slurmd per node, several on one host
# (--enable-multiple-slurmd, as Debian builds it): the integration tests run
# one per node on localhost. Needs a C compiler, make, libmunge-dev; for slurmdbd and slurmrestd (the accounting tests) also
# libmariadb-dev(-compat), libjson-c-dev, libhttp-parser-dev and libjwt-dev,
# each detected by Slurm's configure. MAKE_JOBS (default 2) and nice 10.
set -euo pipefail
prog=${0##*/}
die() { echo "$prog: error: $*" >&2; exit 1; }
refuse() { echo "$prog: $*" >&2; exit 2; }
usage() { echo "usage: $prog [-c] TARBALL" >&2; exit 2; }
repo_root=$(cd "$(dirname "$0")/.." && pwd)
table=$repo_root/contrib/slurm-releases.sha256

configure_only=no
while getopts "ch" opt; do
  case $opt in
    c) configure_only=yes ;;
    h) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
tarball=$1
[ -f "$tarball" ] || die "no such file: $tarball"
name=${tarball##*/}
case $name in
  slurm-*.tar.bz2) release=${name%.tar.bz2}; release=${release#slurm-} ;;
  *) refuse "refused: $name is not named slurm-X.Y.Z.tar.bz2 (a SchedMD release tarball)" ;;
esac

# The checksum first: nothing is unpacked from an unknown tarball.
want_sum=$(awk -v n="$name" '!/^#/ && $2 == n { print $1 }' "$table")
[ -n "$want_sum" ] ||
  refuse "refused: $name is not a known Slurm release (known: $(awk '!/^#/ && NF == 2 { printf "%s ", $2 }' "$table")- see $table)"
have_sum=$(sha256sum "$tarball" | cut -d' ' -f1)
[ "$have_sum" = "$want_sum" ] ||
  refuse "refused: $tarball has SHA256 $have_sum, but $name is $want_sum ($table): not SchedMD's release, or damaged"

cache=${EASYPP_SLURM_CACHE:-/var/cache/easypp}/slurm-$release
src=$cache/src
prefix=$cache/prefix
stamp=$prefix/.easypp-stamp
stamp_want="sha256=$want_sum build=2"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_want" ] && [ -x "$prefix/sbin/slurmctld" ]; then
  echo "$prog: $prefix already holds Slurm $release"; echo "$cache"; exit 0
fi
if [ "$configure_only" = yes ] && [ -f "$src/.easypp-configured" ] &&
   [ "$(cat "$src/.easypp-configured")" = "$stamp_want" ]; then
  echo "$prog: $src is configured for Slurm $release"; echo "$cache"; exit 0
fi
mkdir -p "$cache"

# Unpack (again) unless the tree is of this tarball, not yet configured or
# configured as this script configures it (older objects are not reused).
configured=$(cat "$src/.easypp-configured" 2>/dev/null || true)
if [ "$(cat "$src/.easypp-unpacked" 2>/dev/null)" != "$want_sum" ] ||
   { [ -n "$configured" ] && [ "$configured" != "$stamp_want" ]; }; then
  echo "$prog: unpacking $name into $src"
  rm -rf "$src" "$src.tmp"
  mkdir -p "$src.tmp"
  tar -C "$src.tmp" --strip-components=1 -xjf "$tarball"
  [ -x "$src.tmp/configure" ] || die "$name has no configure script"
  echo "$want_sum" > "$src.tmp/.easypp-unpacked"
  mv "$src.tmp" "$src"
fi
cd "$src"

# Configure once, in the tree (the plugin reads config.h and the generated
# headers there). PluginDir and the config directory are the prefix's; the
# tests pass every path explicitly anyway.
if [ "$(cat .easypp-configured 2>/dev/null)" != "$stamp_want" ]; then
  echo "$prog: configuring Slurm $release (log: $src/easypp-configure.log)"
  ./configure --prefix="$prefix" --sysconfdir="$prefix/etc" --enable-multiple-slurmd \
    --disable-debug --without-rpath --disable-x11 --disable-sview --disable-pam \
    --without-hdf5 --without-pmix --without-nvml --without-rsmi --without-oneapi \
    --without-hwloc --without-ucx --without-bpf --without-freeipmi \
    --without-rdkafka --without-s2n --without-lua --without-ofed --without-hpe-slingshot \
    --without-yaml --with-munge \
    SUCMD=/bin/su SLEEP_CMD=/bin/sleep > easypp-configure.log 2>&1 ||
    { tail -30 easypp-configure.log; die "configure failed (log: $src/easypp-configure.log)"; }
  echo "$stamp_want" > .easypp-configured
fi
grep -q 'define HAVE_FRONT_END 1' config.h && die "$src is configured as a front end"
if [ "$configure_only" = yes ]; then
  echo "$prog: configured $src (no build: -c)"; echo "$cache"; exit 0
fi

# Only src/ (daemons, clients, libraries, plugins) and the public headers;
# doc/, testsuite/ and contribs/ are not needed.
jobs=${MAKE_JOBS:-2}
echo "$prog: building Slurm $release with make -j$jobs (log: $src/easypp-make.log)"
nice -n 10 make -j"$jobs" -C src > easypp-make.log 2>&1 ||
  { tail -40 easypp-make.log; die "make failed (log: $src/easypp-make.log)"; }
{ make -C src install && make install-pkgincludeHEADERS; } > easypp-install.log 2>&1 ||
  { tail -40 easypp-install.log; die "make install failed (log: $src/easypp-install.log)"; }
for f in sbin/slurmctld sbin/slurmd sbin/slurmstepd bin/sbatch bin/squeue bin/scontrol \
         lib/slurm/sched_backfill.so lib/slurm/select_cons_tres.so lib/slurm/auth_munge.so \
         include/slurm/slurm_version.h; do
  [ -e "$prefix/$f" ] || die "the build did not install $prefix/$f"
done
for f in sbin/slurmdbd lib/slurm/accounting_storage_slurmdbd.so lib/slurm/accounting_storage_mysql.so \
         sbin/slurmrestd lib/slurm/auth_jwt.so; do
  [ -e "$prefix/$f" ] || echo "$prog: note: no $f (its libraries missing at configure time?)" >&2
done
echo "$stamp_want" > "$stamp"
echo "$prog: built Slurm $release into $prefix; plugin: --with-slurm-source=$src CPPFLAGS=-I$prefix/include"
echo "$cache"
