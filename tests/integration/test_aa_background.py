"""Runs first (unittest orders modules by name): starts the background
scenarios other modules registered with cluster.background(), so that their
long idle waits (test_killtime waits for Slurm's 30 s time-limit check)
overlap the other tests instead of adding to the suite's run time. Each
scenario runs on its own small cluster; the registering module joins it and
makes its assertions in its usual place.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402


class BackgroundStart(unittest.TestCase):

    def test_start_background_scenarios(self):
        require_plugin(self)
        started = cluster.start_background()
        sys.stderr.write("\n  started in the background: %s\n" % (", ".join(started) or "none"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
