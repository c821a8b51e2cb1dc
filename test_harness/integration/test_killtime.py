"""Integration test: the kill time stays the user's time limit.

A job of a user whose history says "about 1 s" asks for 1 minute and runs
for 5 minutes. The plugin plans with ~1 s, corrects the prediction to the
limit (60 s) when it is outlived, and past the limit by the beyond-estimate
rule (+1 min), but never touches the kill time: Slurm itself ends the job
as TIMEOUT, and never before 60 s. Meanwhile every `scontrol show job`
shows TimeLimit=1 min and EndTime = start + 60 s: the planning values the
plugin writes into end_time while it holds the job lock are never seen by
anyone else.

Slurm enforces limits every 30 s (plus KillWait=5), so the job ends 60 to
about 95 s after its start. The suite-wide form of this check (every job of
every test) is test_zz_suite.py.
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS


class KillTimeTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        require_plugin(cls)
        cls.c = cluster.Cluster(scheduler="sched/easypp", nodes=2, cpus=1,
                                scheduler_parameters="sched_interval=2,easypp_interval=1")
        cls.c.start()

    @classmethod
    def tearDownClass(cls):
        c = getattr(cls, "c", None)
        if c is not None:
            c.stop()

    def test_timeout_only_at_the_limit(self):
        c = self.c
        c.run_history(U1, [1, 1])
        k = c.submit(wrap="sleep 300", time_min=1, nodes=1, user=U1, name="K")
        jk = c.wait_state(k, "RUNNING", 30)
        start = jk["start"]
        seen = set()
        while True:
            d = c.job(k)
            if d["JobState"] != "RUNNING":
                break
            self.assertEqual(d["TimeLimit"], "00:01:00", d)
            seen.add(d["end"])
            self.assertLess(time.time() - start, 150, "not killed after 150 s")
            time.sleep(0.5)
        d = c.wait_state(k, "TIMEOUT", 60)
        # Every EndTime a client saw while the job ran was the kill time.
        self.assertEqual(seen, {start + 60})
        ran = d["end"] - d["start"]
        sys.stderr.write("\n  K: TIMEOUT after %d s (limit 60 s)\n" % ran)
        self.assertGreaterEqual(ran, 60)
        self.assertLessEqual(ran, 120)
        log = c.ctld_log_text()
        m = c.wait_log(r"sched/easypp: correction: JobId=%d prediction (\d) s -> 60 s \(1\)" % k,
                       timeout=1)
        self.assertLessEqual(int(m.group(1)), 2)
        self.assertRegex(log, r"sched/easypp: correction: JobId=%d prediction 60 s -> 120 s \(2\)"
                         % k)
        self.assertNotRegex(log, r"BUG: ")
        self.assertTrue(c.slurmctld_alive())


if __name__ == "__main__":
    unittest.main(verbosity=2)
