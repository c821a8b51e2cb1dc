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
about 95 s after its start: the scenario runs in the background from the
start of the suite (test_aa_background.py) and the test here only checks
what it saw. The suite-wide form of this check (every job of every test) is
test_zz_suite.py.
"""

import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS


def killtime_scenario():
    """On its own 2-node cluster: give U1 a history of ~1 s jobs, run K
    (limit 1 min, sleeps 5 min) and watch it until Slurm ends it. Returns
    what the test checks. Runs in the background (test_aa_background.py)."""
    c = cluster.Cluster(scheduler="sched/easypp", nodes=2, cpus=1,
                        scheduler_parameters="sched_interval=2,easypp_interval=1")
    c.start()
    try:
        c.run_history(U1, [1, 1])
        k = c.submit(wrap="sleep 300", time_min=1, nodes=1, user=U1, name="K")
        jk = c.wait_state(k, "RUNNING", 30)
        start = jk["start"]
        seen_end, seen_limit = set(), set()
        while True:
            d = c.job(k)
            if d["JobState"] != "RUNNING":
                break
            seen_end.add(d["end"])
            seen_limit.add(d["TimeLimit"])
            if time.time() - start > 150:
                break
            time.sleep(1)
        final = c.wait_jobs([k], timeout=60)[k]
        return {"job": k, "start": start, "final": final, "seen_end": seen_end,
                "seen_limit": seen_limit, "log": c.ctld_log_text(),
                "alive": c.slurmctld_alive()}
    finally:
        c.stop()


cluster.background("killtime", killtime_scenario)


class KillTimeTest(unittest.TestCase):

    def test_timeout_only_at_the_limit(self):
        require_plugin(self)
        r = cluster.join_background("killtime", timeout=300)
        k, start, d, log = r["job"], r["start"], r["final"], r["log"]
        self.assertEqual(d["JobState"], "TIMEOUT", d)
        # Every TimeLimit and EndTime a client saw while the job ran was the
        # user's: 1 minute, start + 60 s.
        self.assertEqual(r["seen_limit"], {"00:01:00"})
        self.assertEqual(r["seen_end"], {start + 60})
        ran = d["end"] - d["start"]
        sys.stderr.write("\n  K: TIMEOUT after %d s (limit 60 s)\n" % ran)
        self.assertGreaterEqual(ran, 60)
        self.assertLessEqual(ran, 120)
        m = re.search(r"sched/easypp: correction: JobId=%d prediction (\d) s -> 60 s \(1\)" % k,
                      log)
        self.assertIsNotNone(m, "no correction to the limit in the log")
        self.assertLessEqual(int(m.group(1)), 2)
        self.assertRegex(log, r"sched/easypp: correction: JobId=%d prediction 60 s -> 120 s \(2\)"
                         % k)
        self.assertNotRegex(log, r"BUG: ")
        self.assertTrue(r["alive"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
