#!/bin/sh
# One entry point for a fresh Debian 12 machine (run as root):
#
#   ./setup.sh demo   install what is needed, build, and replay the built-in
#                     synthetic workload under EASY and EASY++
#   ./setup.sh test   install what is needed, build, and run every test:
#                     unit tests, CLI tests, the real-Slurm integration tests,
#                     then the unit and CLI suites under ASan+UBSan (make
#                     check-sanitize) and each fuzz target for 60 s (make fuzz)
#   ./setup.sh fuzz   install clang too, build, and run each fuzz target for
#                     FUZZ_SECONDS (default 60) seconds (fuzz/README.md)
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
# libcurl (easypp-import talks to slurmrestd); MariaDB, slurmdbd, slurmrestd and
# the JWT plugin: the accounting integration tests run them on localhost.
PACKAGES="build-essential autoconf automake libtool pkg-config
  libjansson-dev libcppunit-dev zlib1g-dev libboost-dev libcurl4-openssl-dev
  dpkg-dev python3 python3-matplotlib ca-certificates
  slurmctld slurmd slurm-client munge libslurm-dev
  mariadb-server mariadb-client slurmdbd slurmrestd slurm-wlm-jwt-plugin"
# The tests also load easypp-sim's --report page in a headless browser.
if [ "$what" = test ]; then PACKAGES="$PACKAGES chromium"; fi

# Only for the fuzz targets (make fuzz; ./setup.sh fuzz and test): clang with
# libFuzzer and its sanitizer runtimes (a Recommends, so named), and
# llvm-symbolizer for readable reports.
FUZZ_PACKAGES="clang libclang-rt-14-dev llvm-14"

missing_packages() {
  for p in "$@"; do
    dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || echo "$p"
  done
}

# deps [EXTRA-PACKAGES]: install what is missing of PACKAGES and the extra ones.
deps() {
  # shellcheck disable=SC2086
  need=$(missing_packages $PACKAGES ${1:-})
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
  deps "${EXTRA_PACKAGES:-}"
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

# step NAME COMMAND...: run a step, say how long it took (CI logs show where
# the time goes).
step() {
  name=$1; shift
  t0=$(date +%s)
  "$@"; st=$?
  echo "setup: $name took $(( $(date +%s) - t0 ))s (exit $st)"
  return $st
}

case $what in
  deps) deps "$FUZZ_PACKAGES" ;;
  build) build ;;
  demo)
    build
    echo
    echo "== Replaying the built-in synthetic workload (easypp-gen defaults) =="
    exec ./tools/easypp-sim --workload synthetic --scheduler easy,easy++ ;;
  fuzz)
    EXTRA_PACKAGES=$FUZZ_PACKAGES build
    exec make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}" ;;
  test)
    # The tests run a plugin whose planning-value check aborts instead of
    # repairing (--enable-debug-checks): a leak must fail the suite loudly.
    EXTRA_PACKAGES=$FUZZ_PACKAGES build --enable-debug-checks
    if ! step "make check" make check -j"$(nproc)"; then
      # Show why, so a CI log is enough to diagnose the failure.
      for f in tests/test-suite.log contrib/test-suite.log fuzz/test-suite.log; do [ -f "$f" ] && cat "$f"; done
      echo "setup: tests failed (logs: tests/*.log, tests/*/*.log)" >&2
      exit 1
    fi
    # The unit, CLI, contrib and fuzz-corpus suites again under ASan and
    # UBSan (build-sanitize/), then each fuzz target for 60 s (build-fuzz/).
    # Both print what failed.
    step "make check-sanitize" make check-sanitize -j"$(nproc)" || exit 1
    step "make fuzz" make fuzz FUZZ_SECONDS=60 -j"$(nproc)" || exit 1 ;;
  *)
    echo "usage: $0 demo|test|fuzz|deps|build" >&2
    exit 2 ;;
esac
