#!/bin/sh
# One entry point for a fresh Debian 12 machine (run as root):
#
#   ./setup.sh demo   install what is needed, build, and replay the built-in
#                     synthetic workload under EASY and EASY++
#   ./setup.sh test   install what is needed, build, and run every test:
#                     unit tests, CLI tests, the real-Slurm integration tests
#                     on Slurm 22.05 (this machine) and on Slurm 24.11 (in a
#                     Debian 13 root that this script makes and caches)
#   ./setup.sh deps   only install the Debian packages
#   ./setup.sh build [--slurm 22.05|24.11]
#                     only install and build, with the plugin for that Slurm
#                     release (default 22.05: this machine's); the last line
#                     printed is the absolute path of the sched_easypp.so built
#
# Slurm 22.05 is Debian 12's: built in the repository itself. Slurm 24.11 is
# Debian 13's: built out of tree in build-24.11/ (from a copy of the sources
# in build-24.11/src) inside a Debian 13 root made by debootstrap from
# Debian's registry, cached in /var/cache/easypp/trixie (EASYPP_ROOT_DIR) and
# made again when missing or broken (contrib/debian-root.sh).
#
# Idempotent: packages already installed, a Slurm source tree already
# fetched and the Debian 13 root are reused. Needs Debian's package registry.
set -eu
cd "$(dirname "$0")"
repo=$(pwd -P)
what=${1:-demo}
[ $# -gt 0 ] && shift

# Build tools, libraries, the Slurm packages (public headers, daemons for the
# integration tests) and dpkg-dev (to fetch Slurm's source for its internal
# headers). Never slurm-wlm-emulator: it replaces the real daemons.
PACKAGES="build-essential autoconf automake libtool pkg-config
  libjansson-dev libcppunit-dev zlib1g-dev
  dpkg-dev python3 ca-certificates
  slurmctld slurmd slurm-client munge libslurm-dev"
# What the Debian 13 root needs besides: Slurm 24.11's upstream source
# tree only configures with munge's headers.
ROOT_PACKAGES="$PACKAGES libmunge-dev"
# What this machine needs to make and use that root.
ROOT_HOST_PACKAGES="debootstrap git"

usage() {
  echo "usage: $0 demo|test|deps|build [--slurm 22.05|24.11]" >&2
  exit 2
}

slurm=22.05
while [ $# -gt 0 ]; do
  case $1 in
    --slurm) [ $# -ge 2 ] || usage; slurm=$2; shift 2 ;;
    --slurm=*) slurm=${1#--slurm=}; shift ;;
    *) [ "${what#_}" != "$what" ] && break; usage ;;
  esac
done
case $slurm in
  22.05) ;;
  24.11) suite=trixie ;;
  *) echo "setup: Slurm $slurm is not supported (22.05: this machine's Debian 12; 24.11: Debian 13)" >&2
     exit 2 ;;
esac

missing_packages() {
  for p in "$@"; do
    dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || echo "$p"
  done
}

# install PACKAGE...: install those of the packages that are missing.
install_packages() {
  need=$(missing_packages "$@")
  [ -z "$need" ] && { echo "setup: all packages present"; return 0; }
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages:" $need >&2
    echo "setup: run as root (or: sudo apt-get install" $need ")" >&2
    exit 1
  fi
  echo "setup: installing" $need
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $need
}

deps() {
  # shellcheck disable=SC2086
  install_packages $PACKAGES
}

# build [CONFIGURE-ARGS...]: configure (again, if the arguments changed) and
# make, for this machine's Slurm (22.05), in the repository.
build() {
  deps
  ./contrib/fetch-slurm-source.sh
  [ -x configure ] || ./autogen.sh
  want="--enable-plugin $*"
  have=""
  [ -f config.status ] && have=$(./config.status --config 2>/dev/null | tr -d "'")
  if [ ! -f Makefile ] || [ configure -nt config.status ] || [ "$(echo $have)" != "$(echo $want)" ]; then
    # shellcheck disable=SC2086
    ./configure $want
  fi
  make -j"$(nproc)"
}

# --- Slurm releases of other Debian releases (a cached Debian root) -----------

# The repository's source files (tracked, and untracked but not ignored) into
# $1, modification times kept, so that an unchanged file does not rebuild;
# files gone from the repository are removed from $1.
snapshot() {
  dest=$1
  git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
    echo "setup: $repo is not a git checkout: cannot tell sources from build products" >&2
    exit 1
  }
  mkdir -p "$dest"
  git -C "$repo" ls-files -co --exclude-standard |
    while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done | sort -u >"$dest.files.new"
  if [ -f "$dest.files" ]; then
    comm -23 "$dest.files" "$dest.files.new" | while IFS= read -r f; do rm -f "$dest/$f"; done
  fi
  tar -C "$repo" -cf - -T "$dest.files.new" | tar -C "$dest" -xpf -
  mv "$dest.files.new" "$dest.files"
}

root_ensure() {
  # shellcheck disable=SC2086
  install_packages $ROOT_HOST_PACKAGES
  t0=$(date +%s)
  # shellcheck disable=SC2086
  EASYPP_ROOT_SUITE=$suite ./contrib/debian-root.sh ensure $ROOT_PACKAGES
  echo "setup: Debian $suite root ready in $(($(date +%s) - t0)) s"
}

# in_root COMMAND...: run COMMAND inside the root, the repository mounted at
# its own path.
in_root() {
  EASYPP_ROOT_SUITE=$suite EASYPP_ROOT_ENV="TESTS_PATTERN ${EASYPP_ROOT_ENV:-}" \
    ./contrib/debian-root.sh run --bind "$repo" "$@"
}

# build_in_root [CONFIGURE-ARGS...]: build everything for $slurm inside the
# root, out of tree in build-$slurm/.
build_in_root() {
  root_ensure
  snapshot "$repo/build-$slurm/src"
  in_root sh "$repo/setup.sh" _root-build --slurm "$slurm" "$@"
}

# Inside the root: fetch and configure the Slurm source of the installed
# version, then configure (again, if the arguments changed) and make.
root_build() {
  ./contrib/fetch-slurm-source.sh
  v=$(dpkg-query -W -f '${Version}' libslurm-dev)
  v=${v#*:}
  v=${v%-*}
  case $v in "$slurm".*) ;; *)
    echo "setup: the root has Slurm $v, not $slurm" >&2; exit 1 ;;
  esac
  b=$repo/build-$slurm
  (cd "$b/src" && { [ -x configure ] || ./autogen.sh; })
  cd "$b"
  want="--enable-plugin --with-slurm-source=$repo/.slurm-src/$v $*"
  have=""
  [ -f config.status ] && have=$(./config.status --config 2>/dev/null | tr -d "'")
  if [ ! -f Makefile ] || [ src/configure -nt config.status ] || [ "$(echo $have)" != "$(echo $want)" ]; then
    # shellcheck disable=SC2086
    ./src/configure $want
    # The plugin's objects depend on configure options (--enable-debug-checks)
    # that make cannot see: build them again.
    make -C plugin clean >/dev/null
  fi
  make -j"$(nproc)"
}

plugin_path() {
  if [ "$slurm" = 22.05 ]; then echo "$repo/plugin/sched_easypp.so"
  else echo "$repo/build-$slurm/plugin/sched_easypp.so"; fi
}

# Inside the root: the integration suite on its Slurm.
root_integration() {
  b=$repo/build-$slurm
  rc=0
  EASYPP_PLUGIN_DIR=$b/plugin EASYPP_SIM=$b/tools/easypp-sim \
    sh tests/integration/run_integration.sh || rc=$?
  # A skipped suite did not test this release.
  [ $rc -eq 77 ] && { echo "setup: the integration suite was skipped on Slurm $slurm" >&2; exit 1; }
  exit $rc
}

case $what in
  deps) deps ;;
  build)
    if [ "$slurm" = 22.05 ]; then build; else build_in_root; fi
    so=$(plugin_path)
    [ -f "$so" ] || { echo "setup: $so was not built" >&2; exit 1; }
    echo "$so" ;;
  demo)
    build
    echo
    echo "== Replaying the built-in synthetic workload (easypp-gen defaults) =="
    exec ./tools/easypp-sim --workload synthetic --scheduler easy,easy++ ;;
  test)
    # The tests run a plugin whose planning-value check aborts instead of
    # repairing (--enable-debug-checks): a leak must fail the suite loudly.
    failed=""
    t0=$(date +%s)
    build --enable-debug-checks
    if ! make check -j"$(nproc)"; then
      # Show why, so a CI log is enough to diagnose the failure.
      for f in tests/test-suite.log contrib/test-suite.log; do [ -f "$f" ] && cat "$f"; done
      failed="Slurm 22.05 (logs: tests/*.log, tests/*/*.log)"
    fi
    echo "setup: Slurm 22.05: build and make check took $(($(date +%s) - t0)) s${failed:+: FAILED}"
    # Slurm 24.11 (Debian 13): the integration suite against its daemons.
    slurm=24.11 suite=trixie
    t0=$(date +%s)
    build_in_root --enable-debug-checks
    echo "setup: Slurm 24.11: root and build took $(($(date +%s) - t0)) s"
    t0=$(date +%s)
    log=$repo/build-24.11/integration.log
    { rc=0
      in_root sh "$repo/setup.sh" _root-integration --slurm 24.11 2>&1 || rc=$?
      echo "$rc" >"$log.rc"
    } | tee "$log"
    [ "$(cat "$log.rc")" = 0 ] ||
      failed="$failed${failed:+, }Slurm 24.11 integration (log: build-24.11/integration.log)"
    echo "setup: Slurm 24.11: integration suite took $(($(date +%s) - t0)) s${failed:+ ($failed)}"
    if [ -n "$failed" ]; then
      echo "setup: tests failed: $failed" >&2
      exit 1
    fi
    echo "setup: all tests passed on Slurm 22.05 and 24.11" ;;
  _root-build) root_build "$@" ;;
  _root-integration) root_integration ;;
  *) usage ;;
esac
