"""Runs the integration tests (unittest discovery) and judges skips.

A test may skip only when it cannot run on this machine, and must say so:
its reason starts with "cannot run here: " (a package missing, not root, a
build without the plugin or without --enable-debug-checks). Any other skip
counts as a failure: a test that silently does not run passes nothing.
With EASYPP_NO_SKIP=1 (./setup.sh test and CI, where everything is
installed and built) every skip is a failure.

    python3 run_tests.py [PATTERN]      (default test_*.py)
"""

import os
import sys
import time
import unittest

ALLOWED = "cannot run here: "


class TimedResult(unittest.TextTestResult):
    """Also prints each test's wall time, so slow tests show in CI's log."""

    def startTest(self, test):
        self._t0 = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.stream.write("  (%s: %.1fs)\n" % (test.id(), time.monotonic() - self._t0))
        self.stream.flush()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
    suite = unittest.defaultTestLoader.discover(here, pattern=pattern)
    result = unittest.TextTestRunner(verbosity=2, resultclass=TimedResult).run(suite)
    strict = os.environ.get("EASYPP_NO_SKIP") == "1"
    bad = [(t, why) for t, why in result.skipped if strict or not why.startswith(ALLOWED)]
    for t, why in result.skipped:
        verdict = "FAIL" if (t, why) in bad else "SKIP"
        sys.stderr.write("%s (skipped) %s: %s\n" % (verdict, t.id(), why))
    if bad:
        sys.stderr.write("%d test(s) skipped %s: a skipped test fails this run\n" % (
            len(bad), "under EASYPP_NO_SKIP=1" if strict else
            "without saying why they cannot run here (\"%s...\")" % ALLOWED))
    ok = result.wasSuccessful() and not bad and result.testsRun > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
