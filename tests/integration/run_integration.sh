#!/bin/sh
# Run the integration tests against a real local Slurm (test_*.py here,
# through run_tests.py, which fails any skipped test that does not say why
# it cannot run here). Exit 77 (automake's "skipped") when they cannot run
# at all: plugin not built, not root, Slurm daemons or python3 missing;
# exit 1 instead under EASYPP_NO_SKIP=1 (./setup.sh test, CI: everything is
# installed there, so a skip means something is broken).
#
#   EASYPP_PLUGIN_DIR  directory with the built sched_easypp.so
#                      (make check sets it; default <repo>/plugin)
#   TESTS_PATTERN      unittest file pattern (default test_*.py)
#   EASYPP_NO_SKIP     1: any skip fails
#   EASYPP_SLURM_PREFIX  a private Slurm build to run (tests/integration/cluster.py)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${EASYPP_PLUGIN_DIR:=$repo/plugin}"
export EASYPP_PLUGIN_DIR

skip() {
  if [ "${EASYPP_NO_SKIP:-}" = 1 ]; then
    echo "FAIL: integration tests cannot run here (EASYPP_NO_SKIP=1): $*"
    exit 1
  fi
  echo "SKIP: integration tests: cannot run here: $*"
  exit 77
}

[ -f "$EASYPP_PLUGIN_DIR/sched_easypp.so" ] ||
  skip "the Slurm plugin was not built ($EASYPP_PLUGIN_DIR/sched_easypp.so missing; see configure's summary)"
[ "$(id -u)" -eq 0 ] || skip "they start slurmctld/slurmd and need root"
# EASYPP_SLURM_PREFIX: daemons and clients of a private build (cluster.py)
for p in "${EASYPP_SLURM_PREFIX:-/usr}/sbin/slurmctld" "${EASYPP_SLURM_PREFIX:-/usr}/sbin/slurmd"; do
  [ -x "$p" ] || skip "$p not installed (apt-get install slurmctld slurmd slurm-client munge)"
done
[ -x "${EASYPP_SLURM_PREFIX:-/usr}/bin/sbatch" ] || command -v sbatch >/dev/null 2>&1 ||
  skip "slurm-client not installed"
py=$(command -v python3) || skip "python3 not found"

cd "$here" || exit 1
exec "$py" "$here/run_tests.py" "${TESTS_PATTERN:-test_*.py}"
