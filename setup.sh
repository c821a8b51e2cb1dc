#!/bin/sh
# One entry point for a fresh Debian 12 machine (run as root; Debian 13 works
# too, with the roles of the two Slurm releases swapped):
#
#   ./setup.sh demo   install what is needed, build, and replay the built-in
#                     synthetic workload under EASY and EASY++
#   ./setup.sh test   install what is needed, build, and run every test:
#                     unit tests, CLI tests, the real-Slurm integration tests
#                     on Slurm 22.05 (this machine) and on Slurm 24.11 (in a
#                     Debian 13 root that this script makes and caches; the
#                     integration suite only); the unit and CLI suites
#                     under ASan+UBSan (make check-sanitize), each fuzz
#                     target for 60 s (make fuzz) and the profile-guided
#                     easypp-sim against the plain one (make check-pgo) run
#                     at nice 19 alongside the Slurm 24.11 stage, their
#                     output shown after it (build-checks/output.log)
#   ./setup.sh fuzz   install clang too, build, and run each fuzz target for
#                     FUZZ_SECONDS (default 60) seconds (fuzz/README.md)
#   ./setup.sh deps   only install the Debian packages (to build and to test)
#   ./setup.sh integration [--slurm RELEASE] [--slurm-tarball FILE]
#                     install, build (from the working tree, with the
#                     debug checks) and run only the integration suite on
#                     that Slurm release (default: this machine's); for the
#                     other Debian release in its Debian root, as `test`
#                     does; for 25.05, 25.11 and 26.05 on daemons built from
#                     SchedMD's tarball into a private prefix.
#                     TESTS_PATTERN='test_selective.py' picks tests.
#   ./setup.sh build [--slurm RELEASE] [--slurm-tarball FILE]
#                     only install what building needs (no Slurm daemon, no
#                     database, no browser: fit for a controller) and build,
#                     with the plugin for that Slurm release (default: this
#                     machine's, 22.05); the last line printed is the
#                     absolute path of the sched_easypp.so built
#
# RELEASE is 22.05, 24.11, 25.05, 25.11 or 26.05 (X.Y or X.Y.Z). Slurm 22.05
# is Debian 12's, Slurm 24.11 Debian 13's. The release of this machine's
# Debian is built in the repository itself; the other one out of tree in
# build-<release>/ (from a copy of the sources in build-<release>/src) inside
# a root of that Debian release made by debootstrap from Debian's registry,
# cached in /var/cache/easypp/<codename> (EASYPP_ROOT_DIR) and made again when
# missing or broken (contrib/debian-root.sh). 25.05, 25.11 and 26.05, which
# Debian 12 and 13 do not ship, are built from SchedMD's release tarball
# (default: ../shared/slurm/slurm-X.Y.Z.tar.bz2 of the release known to
# contrib/slurm-releases.sha256; --slurm-tarball FILE another one, its
# checksum checked against that table) by contrib/build-slurm-tarball.sh
# into /var/cache/easypp/slurm-X.Y.Z/ (EASYPP_SLURM_CACHE), and the plugin
# natively, out of tree in build-<release>/ (`build` only configures the
# tree; `integration` also builds and installs the daemons).
#
# Idempotent: packages already installed, a Slurm source tree already
# fetched and the Debian 13 root are reused. Needs Debian's package registry.
set -eu
cd "$(dirname "$0")"
repo=$(pwd -P)
what=${1:-demo}
[ $# -gt 0 ] && shift

# What building needs (a controller that only builds the plugin gets these
# and nothing else): build tools, libraries, Slurm's public headers
# (libslurm-dev) and dpkg-dev (to fetch Slurm's source for its internal
# headers); libcurl for easypp-import.
BUILD_PACKAGES="build-essential autoconf automake libtool pkg-config
  libjansson-dev zlib1g-dev libboost-dev libcurl4-openssl-dev
  dpkg-dev python3 ca-certificates libslurm-dev"
# What only the tests need: CppUnit, matplotlib (easypp-sim --report), the
# Slurm daemons the integration tests start on localhost (never
# slurm-wlm-emulator: it replaces the real daemons), MariaDB, slurmdbd,
# slurmrestd and the JWT plugin for the accounting tests; libmunge-dev for
# the front-end Slurm of the large benchmark (bench/build-frontend-slurm.sh).
TEST_PACKAGES="libcppunit-dev python3-matplotlib
  slurmctld slurmd slurm-client munge libmunge-dev
  mariadb-server mariadb-client slurmdbd slurmrestd slurm-wlm-jwt-plugin"
case $what in
  test|deps|integration) PACKAGES="$BUILD_PACKAGES $TEST_PACKAGES" ;;
  *) PACKAGES="$BUILD_PACKAGES" ;;
esac
# The same in a Debian root, which runs the integration suite; Slurm 24.11's
# upstream source tree (see contrib/fetch-slurm-source.sh) only configures
# with munge's headers; chromium checks easypp-shadow's page there too (a
# skipped test fails the suite).
ROOT_PACKAGES="$BUILD_PACKAGES $TEST_PACKAGES libmunge-dev chromium"
# The tests also load easypp-sim's --report page and easypp-shadow's page
# in a headless browser: `integration` and `deps` need it as `test` does
# (a skipped test fails the suite).
case $what in test|deps|integration) PACKAGES="$PACKAGES chromium" ;; esac
# What this machine needs to make and use that root.
ROOT_HOST_PACKAGES="debootstrap git"

usage() {
  echo "usage: $0 demo|test|fuzz|deps|integration|build [--slurm 22.05|24.11|25.05|25.11|26.05] [--slurm-tarball FILE]" >&2
  exit 2
}

# The Debian release shipping each supported Slurm release; "tarball" for
# those built from SchedMD's release tarball.
suite_of() {
  case $1 in
    22.05) echo bookworm ;;
    24.11) echo trixie ;;
    25.05|25.11|26.05) echo tarball ;;
    *) return 1 ;;
  esac
}
SUPPORTED="22.05 24.11"
# Built from SchedMD's tarballs: `test` runs the integration suite on
# TARBALL_TESTED and builds the plugin (symbols checked against the built
# slurmctld) for TARBALL_BUILT.
TARBALL_TESTED=""
TARBALL_BUILT=""
# What building Slurm from a tarball needs here: munge's headers; MariaDB's,
# json-c, http-parser and libjwt for slurmdbd, slurmrestd and auth/jwt.
TARBALL_PACKAGES="build-essential bzip2 libmunge-dev libmariadb-dev libmariadb-dev-compat
  libjson-c-dev libhttp-parser-dev libjwt-dev munge"
# This machine's Slurm release (from its Debian release), built natively.
native=$(. /etc/os-release 2>/dev/null
  case ${VERSION_CODENAME:-} in bookworm) echo 22.05 ;; trixie) echo 24.11 ;; esac)
if [ "$native" = 24.11 ]; then
  # Slurm 24.11's upstream source tree needs munge's headers here too.
  PACKAGES="$PACKAGES libmunge-dev"
fi

slurm=${native:-22.05}
slurm_tarball=""
while [ $# -gt 0 ]; do
  case $1 in
    --slurm) [ $# -ge 2 ] || usage; slurm=$2; shift 2 ;;
    --slurm=*) slurm=${1#--slurm=}; shift ;;
    --slurm-tarball) [ $# -ge 2 ] || usage; slurm_tarball=$2; shift 2 ;;
    --slurm-tarball=*) slurm_tarball=${1#--slurm-tarball=}; shift ;;
    *) [ "${what#_}" != "$what" ] && break; usage ;;
  esac
done
# The release of a tarball is in its name (slurm-X.Y.Z.tar.bz2); the
# checksum is checked by contrib/build-slurm-tarball.sh.
if [ -n "$slurm_tarball" ]; then
  case ${slurm_tarball##*/} in
    slurm-*.tar.bz2) t=${slurm_tarball##*/slurm-}; t=${t#slurm-}; t=${t%.tar.bz2} ;;
    *) echo "setup: $slurm_tarball is not a Slurm release tarball (slurm-X.Y.Z.tar.bz2)" >&2; exit 2 ;;
  esac
  slurm_tarball=$(cd "$(dirname "$slurm_tarball")" && pwd -P)/${slurm_tarball##*/}
  slurm=$t
fi
# X.Y.Z: the release X.Y (the point release must then be the tarball's).
slurm_point=""
case $slurm in *.*.*) slurm_point=$slurm; slurm=${slurm%.*} ;; esac
suite=$(suite_of "$slurm") || {
  echo "setup: Slurm $slurm is not supported (supported: 22.05, Debian 12's; 24.11, Debian 13's; 25.05, 25.11 and 26.05 from SchedMD's tarballs)" >&2
  exit 2
}
if [ "$suite" != tarball ] && [ -n "$slurm_tarball" ]; then
  echo "setup: Slurm $slurm is built from Debian's source, not from a tarball" >&2
  exit 2
fi

# Only for the fuzz targets (make fuzz; ./setup.sh fuzz and test): clang with
# libFuzzer and its sanitizer runtimes (a Recommends, so named), and
# llvm-symbolizer for readable reports.
FUZZ_PACKAGES="clang libclang-rt-14-dev llvm-14"

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

# deps [EXTRA-PACKAGES]: install what is missing of PACKAGES and the extra ones.
deps() {
  # shellcheck disable=SC2086
  install_packages $PACKAGES ${1:-}
}

# make_all: make, after a clean if the compiler flags configure chose changed
# since the last build here (configure's link-time optimization, say): make
# does not count flags, so old objects would stay. 'make am--refresh' first
# reruns autoconf and config.status if configure.ac changed (a pull). A
# build from before this check (objects, no .build-flags) is cleaned once.
make_all() {
  make am--refresh >/dev/null
  flags=$(grep -E '^(CXXFLAGS|CFLAGS|LDFLAGS) =' Makefile)
  if [ "$(cat .build-flags 2>/dev/null)" != "$flags" ] && [ -d libpredict/src/.libs ]; then
    echo "setup: the compiler flags changed since the last build: make clean" >&2
    make clean >/dev/null
  fi
  printf '%s\n' "$flags" >.build-flags
  make -j"$(nproc)"
}

# build [CONFIGURE-ARGS...]: configure (again, if the arguments changed) and
# make, for this machine's Slurm, in the repository.
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
  make_all
}

# --- Slurm releases of other Debian releases (a cached Debian root) -----------

# The repository's source files (tracked, and untracked but not ignored) into
# $1, modification times kept, so that an unchanged file does not rebuild;
# files gone from the repository are removed from $1.
#
# Outside a git checkout (a `make dist` tarball of this project): every file
# except the out-of-tree builds (build-*/ but build-aux/) and Slurm's source
# (.slurm-src/);
# once the tree has been configured in place (it then holds build products
# too), the files `make distdir` copies, which are the sources.
snapshot() {
  dest=$1
  mkdir -p "$dest"
  from=$repo
  if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$repo" ls-files -co --exclude-standard >"$dest.files.all"
  elif [ -f "$repo/config.status" ] && [ -f "$repo/Makefile" ]; then
    from=$dest.distdir
    rm -rf "$from"
    make -s -C "$repo" distdir distdir="$from" >/dev/null
    (cd "$from" && find . -type f -print | sed 's|^\./||') >"$dest.files.all"
  else
    (cd "$repo" && find . \( -path ./.slurm-src -o \( -path './build-*' ! -path './build-aux/*' ! -path ./build-aux \) \) \
      -prune -o -type f -print |
      sed 's|^\./||') >"$dest.files.all"
  fi
  (cd "$from" && while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done) \
    <"$dest.files.all" | sort -u >"$dest.files.new"
  rm -f "$dest.files.all"
  if [ -f "$dest.files" ]; then
    comm -23 "$dest.files" "$dest.files.new" | while IFS= read -r f; do rm -f "$dest/$f"; done
  fi
  tar -C "$from" -cf - -T "$dest.files.new" | tar -C "$dest" -xpf -
  [ "$from" = "$repo" ] || rm -rf "$from"
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

# integration_in_root: the integration suite for $slurm inside its root,
# built already (build_in_root), with the accounting tests' database server
# here, outside the root: Debian 13's slurmdbd does not start against Debian
# 13's MariaDB (see tests/integration/host-mariadb.sh). Output also in
# build-$slurm/integration.log; returns the suite's status.
integration_in_root() {
  log=$repo/build-$slurm/integration.log
  db=$repo/build-$slurm/host-mariadb
  EASYPP_TEST_DB=$(tests/integration/host-mariadb.sh start "$db") || EASYPP_TEST_DB=""
  export EASYPP_TEST_DB
  { rc=0
    in_root sh "$repo/setup.sh" _root-integration --slurm "$slurm" 2>&1 || rc=$?
    echo "$rc" >"$log.rc"
  } | tee "$log"
  tests/integration/host-mariadb.sh stop "$db"
  unset EASYPP_TEST_DB
  return "$(cat "$log.rc")"
}

# --- Slurm releases built from SchedMD's tarballs (natively) -------------------

# tarball_of RELEASE: the known tarball of X.Y (contrib/slurm-releases.sha256;
# with --slurm X.Y.Z, that point release), in ../shared/slurm; --slurm-tarball
# wins.
tarball_of() {
  if [ -n "$slurm_tarball" ]; then echo "$slurm_tarball"; return 0; fi
  name=$(awk -v r="slurm-${slurm_point:-$1}" \
    '!/^#/ && NF == 2 && index($2, r ".") == 1 && $2 ~ /\.tar\.bz2$/ { print $2 }' \
    contrib/slurm-releases.sha256 | tail -1)
  [ -n "$name" ] || {
    echo "setup: no known tarball of Slurm ${slurm_point:-$1} (contrib/slurm-releases.sha256); pass --slurm-tarball FILE" >&2
    exit 2
  }
  f=$(cd "$repo/.." && pwd -P)/shared/slurm/$name
  [ -f "$f" ] || { echo "setup: $f is missing (SchedMD's $name; or --slurm-tarball FILE)" >&2; exit 2; }
  echo "$f"
}

# tarball_build MODE [CONFIGURE-ARGS...]: Slurm $slurm from its tarball into
# the cache (MODE "configure": the configured tree only, enough for the
# plugin; "daemons": also built and installed into its prefix), then the
# project out of tree in build-$slurm/ against it. Sets slurm_cache.
tarball_build() {
  mode=$1; shift
  # shellcheck disable=SC2086
  install_packages $BUILD_PACKAGES $TARBALL_PACKAGES
  tb=$(tarball_of "$slurm")
  t0=$(date +%s)
  if [ "$mode" = daemons ]; then ./contrib/build-slurm-tarball.sh "$tb"
  else ./contrib/build-slurm-tarball.sh -c "$tb"; fi
  r=${tb##*/slurm-}
  slurm_cache=${EASYPP_SLURM_CACHE:-/var/cache/easypp}/slurm-${r%.tar.bz2}
  echo "setup: Slurm from $tb ready in $slurm_cache in $(($(date +%s) - t0)) s"
  inc=$slurm_cache/src
  [ -f "$slurm_cache/prefix/.easypp-stamp" ] && inc=$slurm_cache/prefix/include
  snapshot "$repo/build-$slurm/src"
  b=$repo/build-$slurm
  (cd "$b/src" && { [ -x configure ] || ./autogen.sh; })
  cd "$b"
  want="--enable-plugin --with-slurm-source=$slurm_cache/src --with-slurm-plugindir=$slurm_cache/prefix/lib/slurm CPPFLAGS=-I$inc $*"
  have=""
  [ -f config.status ] && have=$(./config.status --config 2>/dev/null | tr -d "'")
  if [ ! -f Makefile ] || [ src/configure -nt config.status ] || [ "$(echo $have)" != "$(echo $want)" ]; then
    # shellcheck disable=SC2086
    ./src/configure $want
  fi
  make_all
  cd "$repo"
  if [ -x "$slurm_cache/prefix/sbin/slurmctld" ]; then
    ./contrib/check-plugin-symbols.sh "$b/plugin/sched_easypp.so" "$slurm_cache/prefix"
  fi
}

# tarball_integration: the integration suite on the daemons of $slurm_cache
# (tarball_build daemons first). Output also in build-$slurm/integration.log;
# returns the suite's status.
tarball_integration() {
  b=$repo/build-$slurm
  log=$b/integration.log
  { rc=0
    EASYPP_SLURM_PREFIX=$slurm_cache/prefix EASYPP_BUILD_DIR=$b EASYPP_PLUGIN_DIR=$b/plugin \
      EASYPP_SIM=$b/tools/easypp-sim EASYPP_SHADOW=$b/tools/easypp-shadow \
      EASYPP_CTL=$b/plugin/easypp-ctl sh tests/integration/run_integration.sh 2>&1 || rc=$?
    # A skipped suite did not test this release.
    [ $rc -eq 77 ] && { echo "setup: the integration suite was skipped on Slurm $slurm"; rc=1; }
    echo "$rc" >"$log.rc"
  } | tee "$log"
  return "$(cat "$log.rc")"
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
  fi
  make_all
}

plugin_path() {
  if [ "$slurm" = "$native" ]; then echo "$repo/plugin/sched_easypp.so"
  else echo "$repo/build-$slurm/plugin/sched_easypp.so"; fi
}

# Inside the root: the integration suite on its Slurm.
root_integration() {
  b=$repo/build-$slurm
  rc=0
  EASYPP_PLUGIN_DIR=$b/plugin EASYPP_SIM=$b/tools/easypp-sim \
    EASYPP_SHADOW=$b/tools/easypp-shadow EASYPP_CTL=$b/plugin/easypp-ctl \
    sh tests/integration/run_integration.sh || rc=$?
  # A skipped suite did not test this release.
  [ $rc -eq 77 ] && { echo "setup: the integration suite was skipped on Slurm $slurm" >&2; exit 1; }
  exit $rc
}

# step NAME COMMAND...: run a step, say how long it took (CI logs show where
# the time goes).
step() {
  name=$1; shift
  t0=$(date +%s)
  st=0
  "$@" || st=$?
  echo "setup: $name took $(( $(date +%s) - t0 ))s (exit $st)"
  return $st
}

# background_checks LOG FAILED: make check-sanitize, make fuzz and make
# check-pgo one after the other, at the lowest CPU priority (nice 19), with
# their output in LOG and the names of those that failed in FAILED (`test`
# runs them in the background while the other Slurm releases build and run
# their integration suites, which mostly wait on sleeping jobs; the daemons
# of those suites keep their priority). None of them writes into the source
# tree: each copies it (make distdir) into a side build of its own.
background_checks() {
  : >"$2"
  # (the clusters of check-sanitize's integration tests take other ports
  # than those of the suite running meanwhile: tests/integration/cluster.py)
  EASYPP_PORT_SHARE=0/2
  export EASYPP_PORT_SHARE
  {
    background_step "$2" check-sanitize -j"$(nproc)"
    background_step "$2" fuzz FUZZ_SECONDS=60 -j"$(nproc)"
    # The profile-guided easypp-sim for long sweeps (build-pgo/): built,
    # trained (on a smaller workload than by default: this checks the
    # build, not its speed), and its replays identical to this build's.
    background_step "$2" check-pgo PGO_JOBS=4000
  } >"$1" 2>&1
}

# background_step FAILED TARGET [MAKE-ARGS...]: step "make TARGET" at nice
# 19; its name into FAILED if it fails.
background_step() {
  f=$1 target=$2
  shift 2
  step "make $target" nice -n 19 make "$target" "$@" || echo "make $target" >>"$f"
}

# background_finish: wait for the background checks, if running, and print
# their output (also on an early exit: nothing is left running, and the log
# shows what they found).
bgpid=""
background_finish() {
  [ -n "$bgpid" ] || return 0
  wait "$bgpid" || true
  bgpid=""
  echo "setup: the background checks took $(($(date +%s) - t_bg)) s; their output ($bglog):"
  cat "$bglog"
}

# failure_digest LOG...: the failing unittest cases of each LOG, with the
# last lines of their tracebacks, in a few lines. Printed before the full
# logs and again at the very end, so that a CI log cut to a part of its
# output still names what failed.
failure_digest() {
  for f in "$@"; do
    [ -f "$f" ] || continue
    case $f in
      */test-suite.log) continue ;;
      */integration.log) [ "$(cat "$f.rc" 2>/dev/null)" != 0 ] || continue ;;
      *) grep -qE '^:test-result: (FAIL|ERROR)' "${f%.log}.trs" 2>/dev/null || continue ;;
    esac
    awk -v f="$f" '
      /^(FAIL|ERROR): / { if (n) flush(); n = 1; head = $0; k = 0; found = 1; next }
      n && /^(=+|-+)$/ && k > 0 { flush(); next }
      n && NF && !/^(=+|-+)$/ { tail[k++ % 6] = $0 }
      { last[m++ % 8] = $0 }
      END {
        if (n) flush()
        if (!found) {  # not unittest output: its last lines
          printf "setup: %s failed; its last lines:\n", f
          for (i = (m > 8 ? m - 8 : 0); i < m; i++) printf "    %s\n", last[i % 8]
        }
      }
      function flush(  i) {
        printf "setup: %s: %s\n", f, head
        for (i = (k > 6 ? k - 6 : 0); i < k; i++) printf "    %s\n", tail[i % 6]
        n = 0; k = 0
      }' "$f"
  done
}

# automake's test results that say SKIP (make check, this machine).
skipped_tests() {
  find tests contrib -name '*.trs' -exec grep -l '^:test-result: SKIP' {} + 2>/dev/null |
    sed 's/\.trs$//' | tr '\n' ' '
}

# Processes this run started and should have stopped: every process
# carrying this run's EASYPP_RUN_ID (inherited by everything the tests start,
# here and in the root) outside this script's own session (the harness
# starts every daemon in a session of its own: slurmctld, slurmd, munged,
# mariadbd, slurmdbd, slurmrestd and the jobs' processes).
leftover_daemons() {
  me=$(ps -o sid= -p $$ | tr -d ' ')
  ps -e -o pid=,sid= | while read -r pid sid; do
    [ "$sid" = "$me" ] && continue
    # (a process may end meanwhile: the failed redirection is not reported)
    { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qx "EASYPP_RUN_ID=$EASYPP_RUN_ID" ||
      continue
    echo "  $pid: $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"
  done
}

case $what in
  deps) deps "$FUZZ_PACKAGES" ;;
  build)
    if [ "$suite" = tarball ]; then tarball_build configure
    elif [ "$slurm" = "$native" ]; then build; else build_in_root; fi
    so=$(plugin_path)
    [ -f "$so" ] || { echo "setup: $so was not built" >&2; exit 1; }
    echo "$so" ;;
  demo)
    build
    echo
    echo "== Replaying the built-in synthetic workload (easypp-gen defaults) =="
    exec ./tools/easypp-sim --workload synthetic --scheduler easy,easy++ ;;
  integration)
    # As `test` does for each release, for one: a skipped test fails.
    EASYPP_NO_SKIP=1
    EASYPP_RUN_ID="setup-$$-$(date +%s)"
    export EASYPP_NO_SKIP EASYPP_RUN_ID
    if [ "$suite" = tarball ]; then
      # shellcheck disable=SC2086
      install_packages $PACKAGES
      tarball_build daemons --enable-debug-checks
      rc=0
      tarball_integration || rc=$?
    elif [ "$slurm" = "$native" ]; then
      build --enable-debug-checks
      rc=0
      make -C tests check TESTS=integration/run_integration.sh || rc=$?
      [ "$rc" = 0 ] || { cat tests/test-suite.log; failure_digest tests/*/*.log; }
    else
      build_in_root --enable-debug-checks
      rc=0
      integration_in_root || rc=$?
    fi
    left=$(leftover_daemons)
    if [ -n "$left" ]; then
      echo "setup: processes of the test clusters still running:" >&2
      echo "$left" >&2
      rc=1
    fi
    echo "setup: Slurm $slurm integration suite: $([ "$rc" = 0 ] && echo passed || echo FAILED)"
    exit "$rc" ;;
  fuzz)
    EXTRA_PACKAGES=$FUZZ_PACKAGES build
    exec make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}" ;;
  test)
    # The tests run a plugin whose planning-value check aborts instead of
    # repairing (--enable-debug-checks): a leak must fail the suite loudly.
    # This machine's release: everything (make check). Each other supported
    # release: the integration suite, in a root of its Debian release.
    # Everything is installed and built here: a skipped test fails
    # (EASYPP_NO_SKIP, also passed into the root).
    EASYPP_NO_SKIP=1
    # Marks every process the tests start (leftover_daemons).
    EASYPP_RUN_ID="setup-$$-$(date +%s)"
    export EASYPP_NO_SKIP EASYPP_RUN_ID
    failed=""
    t0=$(date +%s)
    EXTRA_PACKAGES=$FUZZ_PACKAGES build --enable-debug-checks
    if ! make check -j"$(nproc)"; then
      # Show why, so a CI log is enough to diagnose the failure: what
      # failed first, then the whole logs.
      failure_digest tests/*/*.log tests/*.log contrib/*.log
      for f in tests/test-suite.log contrib/test-suite.log fuzz/test-suite.log; do
        [ -f "$f" ] && cat "$f"
      done
      failed="Slurm $native (logs: tests/*.log, tests/*/*.log)"
    fi
    skipped=$(skipped_tests)
    if [ -n "$skipped" ]; then
      echo "setup: skipped, which fails here:" $skipped >&2
      failed="$failed${failed:+, }skipped tests ($skipped)"
    fi
    echo "setup: Slurm $native: build and make check took $(($(date +%s) - t0)) s${failed:+: FAILED}"
    # The unit, CLI, contrib and fuzz-corpus suites again under ASan and
    # UBSan (build-sanitize/, with the plugin in a real slurmctld), each
    # fuzz target for 60 s (build-fuzz/) and the profile-guided build
    # (build-pgo/): in the background (background_checks), alongside the
    # other releases' stages below. Their output follows those stages.
    mkdir -p "$repo/build-checks"
    bglog=$repo/build-checks/output.log
    bgfailed=$repo/build-checks/failed
    t_bg=$(date +%s)
    background_checks "$bglog" "$bgfailed" &
    bgpid=$!
    trap background_finish EXIT
    EASYPP_PORT_SHARE=1/2
    export EASYPP_PORT_SHARE
    for slurm in $SUPPORTED; do
      [ "$slurm" = "$native" ] && continue
      suite=$(suite_of "$slurm")
      t0=$(date +%s)
      build_in_root --enable-debug-checks
      echo "setup: Slurm $slurm: root and build took $(($(date +%s) - t0)) s"
      t0=$(date +%s)
      integration_in_root ||
        failed="$failed${failed:+, }Slurm $slurm integration (log: build-$slurm/integration.log)"
      echo "setup: Slurm $slurm: integration suite took $(($(date +%s) - t0)) s${failed:+ ($failed)}"
    done
    # The releases built from SchedMD's tarballs, natively: the daemons into
    # the cache (once), the plugin in build-<release>/ (its symbols checked
    # against that slurmctld), the integration suite on them. Each stage is a
    # setup.sh of its own, so that a failed step stops that stage only.
    for slurm in $TARBALL_TESTED; do
      t0=$(date +%s)
      if sh "$repo/setup.sh" _tarball-build --slurm "$slurm" daemons --enable-debug-checks; then
        echo "setup: Slurm $slurm: Slurm and plugin build took $(($(date +%s) - t0)) s"
        t0=$(date +%s)
        sh "$repo/setup.sh" _tarball-integration --slurm "$slurm" ||
          failed="$failed${failed:+, }Slurm $slurm integration (log: build-$slurm/integration.log)"
        echo "setup: Slurm $slurm: integration suite took $(($(date +%s) - t0)) s${failed:+ ($failed)}"
      else
        failed="$failed${failed:+, }Slurm $slurm build"
      fi
    done
    for slurm in $TARBALL_BUILT; do
      t0=$(date +%s)
      sh "$repo/setup.sh" _tarball-build --slurm "$slurm" daemons --enable-debug-checks ||
        failed="$failed${failed:+, }Slurm $slurm build"
      echo "setup: Slurm $slurm: Slurm and plugin build took $(($(date +%s) - t0)) s"
    done
    background_finish
    while read -r f; do failed="$failed${failed:+, }$f"; done <"$bgfailed"
    left=$(leftover_daemons)
    if [ -n "$left" ]; then
      echo "setup: processes of the test clusters still running:" >&2
      echo "$left" >&2
      failed="$failed${failed:+, }daemons left running"
    fi
    if [ -n "$failed" ]; then
      failure_digest tests/*/*.log tests/*.log contrib/*.log build-*/integration.log >&2
      echo "setup: tests failed: $failed" >&2
      exit 1
    fi
    echo "setup: all tests passed on Slurm" $SUPPORTED $TARBALL_TESTED \
      ${TARBALL_BUILT:+"(built for $TARBALL_BUILT)"} ;;
  _tarball-build) tarball_build "$@" ;;
  _tarball-integration)
    r=$(tarball_of "$slurm"); r=${r##*/slurm-}
    slurm_cache=${EASYPP_SLURM_CACHE:-/var/cache/easypp}/slurm-${r%.tar.bz2}
    tarball_integration ;;
  _root-build) root_build "$@" ;;
  _root-integration) root_integration ;;
  *) usage ;;
esac
