"""Integration test: long cycles yield the locks safely.

With easypp_yield_interval=1 (1 us, bf_yield_interval's minimum) and
easypp_yield_sleep=1000, a cycle releases the scheduling locks before
nearly every candidate it tests, as sched/backfill does every
bf_yield_interval. Each time the plugin must first put every running job's
true end_time back (checked by assert_no_planning_values(); in a build
configured with --enable-debug-checks a leftover planning value aborts
slurmctld), and after relocking it must give up the pass if anything
changed meanwhile.

8 one-CPU nodes: A holds 7 of them, W (all 8) is blocked behind it, and 30
one-node candidates that exclude the only free node (n8) are tested one by
one and never fit there. A runs until a cycle has yielded (its limit, 3
minutes, is far away), then is cancelled; everything else must run to
completion and slurmctld must still be up.

The yield is read from the cycle lines of the slurmctld log (DebugFlags=
Backfill), which record every cycle: the status file is rewritten at most
every few seconds, so its last cycle may be one that had nothing to test.
A 1 ms interval is not enough on a quiet machine: a pass over 150 such
candidates took less than 1 ms in a CI run, and never yielded.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

USERS = cluster.TEST_USERS


class YieldTest(unittest.TestCase):

    def setUp(self):
        require_plugin(self)

    def test_yields_restore_and_survive(self):
        c = cluster.Cluster(
            scheduler="sched/easypp", nodes=8, cpus=1,
            scheduler_parameters="sched_interval=2,easypp_interval=1,"
                                 "easypp_yield_interval=1,easypp_yield_sleep=1000")
        c.start()
        try:
            a = c.submit(wrap="sleep 170", time_min=3, nodes=7, user=USERS[1], name="A",
                         extra=("--nodelist=n[1-7]",))
            c.wait_state(a, "RUNNING", 30)
            w = c.submit(wrap="sleep 1", time_min=1, nodes=8, user=USERS[2], name="W")
            cands = [c.submit(wrap="sleep 1", time_min=1, nodes=1, user=USERS[i % 4],
                              name="cand%d" % i, extra=("--exclude=n8",))
                     for i in range(30)]
            m = c.wait_log(r"sched/easypp: cycle: .* tested=(\d+) .* yields=([1-9]\d*) ",
                           timeout=90)
            sys.stderr.write("\n  a cycle yielded %s times (tested %s)\n" % (m.group(2), m.group(1)))
            self.assertEqual(c.job(a)["JobState"], "RUNNING")
            c.cancel(a)
            done = c.wait_jobs([w] + cands, timeout=300)
            for j, d in done.items():
                self.assertEqual(d["JobState"], "COMPLETED", d)
            self.assertTrue(c.slurmctld_alive())
            self.assertNotRegex(c.ctld_log_text(), r"BUG: |fatal:")
        finally:
            c.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
