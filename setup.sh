#!/bin/sh
# One entry point for a fresh Debian 12 machine (run as root):
#
#   ./setup.sh demo   install what is needed, build, and replay the built-in
#                     synthetic workload under EASY and EASY++
#   ./setup.sh test   install what is needed, build, and run every test:
#                     unit tests, CLI tests, the real-Slurm integration tests
#   ./setup.sh deps   only install the Debian packages
#   ./setup.sh build  only install and build
#
# Idempotent: packages already installed and a Slurm source tree already
# fetched are reused. Needs Debian's package registry (apt-get update).
set -eu
cd "$(dirname "$0")"
what=${1:-demo}

# Build tools, libraries, the Slurm packages (public headers, daemons for the
# integration tests) and dpkg-dev (to fetch Slurm's source for its internal
# headers). Never slurm-wlm-emulator: it replaces the real daemons.
# libcurl (easypp-import and easypp-shadow talk to slurmrestd); MariaDB,
# slurmdbd, slurmrestd and the JWT plugin: the accounting and shadow
# integration tests run them on localhost. python3-matplotlib draws the HTML
# pages of easypp-sim --report and easypp-shadow --report.
PACKAGES="build-essential autoconf automake libtool pkg-config
  libjansson-dev libcppunit-dev zlib1g-dev libboost-dev libcurl4-openssl-dev
  dpkg-dev python3 python3-matplotlib ca-certificates
  slurmctld slurmd slurm-client munge libslurm-dev
  mariadb-server mariadb-client slurmdbd slurmrestd slurm-wlm-jwt-plugin"
# The tests also load easypp-sim's --report page in a headless browser.
if [ "$what" = test ]; then PACKAGES="$PACKAGES chromium"; fi

missing_packages() {
  for p in $PACKAGES; do
    dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || echo "$p"
  done
}

deps() {
  need=$(missing_packages)
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

# build [CONFIGURE-ARGS...]: configure (again, if the arguments changed) and make.
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

case $what in
  deps) deps ;;
  build) build ;;
  demo)
    build
    echo
    echo "== Replaying the built-in synthetic workload (easypp-gen defaults) =="
    exec ./tools/easypp-sim --workload synthetic --scheduler easy,easy++ ;;
  test)
    # The tests run a plugin whose planning-value check aborts instead of
    # repairing (--enable-debug-checks): a leak must fail the suite loudly.
    build --enable-debug-checks
    if ! make check -j"$(nproc)"; then
      # Show why, so a CI log is enough to diagnose the failure.
      for f in tests/test-suite.log contrib/test-suite.log; do [ -f "$f" ] && cat "$f"; done
      echo "setup: tests failed (logs: tests/*.log, tests/*/*.log)" >&2
      exit 1
    fi ;;
  *)
    echo "usage: $0 demo|test|deps|build" >&2
    exit 2 ;;
esac
