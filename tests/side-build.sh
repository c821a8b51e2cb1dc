#!/bin/sh
# side-build.sh DIR [CONFIGURE-ARGUMENTS...]
#
# A second build of this tree in DIR, with other compilers or flags, that
# leaves the main build alone ('make check-sanitize', 'make fuzz'). Run from
# the top build directory (MAKE may name the make to use).
#
# The main build is configured in the source tree, which forbids an
# out-of-tree configure of that same tree (automake: "source directory
# already configured"), so the sources are first copied into DIR/src with
# 'make distdir' (the distributed files only; modification times kept, so
# an unchanged file is not rebuilt), then configured in DIR/build, again only
# when the arguments changed. DIR/shared points to the ../shared the tests
# read the archive logs from. Prints nothing but configure's output.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [CONFIGURE-ARGUMENTS...]" >&2; exit 2; }
dir=$1; shift
top=$(pwd)
case $dir in /*) ;; *) dir=$top/$dir ;; esac
mkdir -p "$dir"
# distdir wants a path relative to the top build directory.
rel=${dir#"$top"/}
[ "$rel" != "$dir" ] || { echo "$0: $dir must be inside $top" >&2; exit 2; }
${MAKE:-make} distdir distdir="$rel/src" >/dev/null
# EXTRA_DIST names whole directories (tests/cli, tests/integration), which
# carry the logs of an in-tree 'make check': a VPATH build would take them
# for up-to-date results.
find "$dir/src" \( -name '*.log' -o -name '*.trs' -o -name __pycache__ \) -prune -exec rm -rf {} +
# The tests find the archive logs at $(abs_top_srcdir)/../shared/workloads.
if [ -d "$top/../shared" ] && [ ! -e "$dir/shared" ]; then ln -s "$top/../shared" "$dir/shared"; fi
mkdir -p "$dir/build"
cd "$dir/build"
want=$(printf '%s\n' "$@")
if [ ! -f Makefile ] || [ ! -f .side-build-args ] || [ "$(cat .side-build-args)" != "$want" ]; then
  rm -f .side-build-args
  ../src/configure "$@"
  printf '%s\n' "$want" >.side-build-args
fi
