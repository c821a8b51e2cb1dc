"""Integration test: prediction correction.

8 one-CPU nodes under sched/easypp with a long periodic interval (30 s), so
that what happens at a predicted end is the correction timer's doing:
  - u1 has a history of 3-second jobs;
  - X (u1): 6 nodes, limit 2 min, runs 20 s: predicted ~3 s, it outlives
    its prediction;
  - W (u3): all 8 nodes, blocked behind X: its planned start is X's
    predicted end.
At X's predicted end (+1 s of grace) the agent wakes (trigger=correction),
corrects X's prediction to its limit (120 s) and runs a cycle at once: W's
planned start moves to X's start + 120 s. X keeps running to completion
(its time limit is untouched), then W runs.

The agent learns and sees new jobs at its cycles; with a 30 s interval the
test kicks it (Cluster.wake_scheduler(): sched_p_reconfig wakes the agent)
after the history jobs ended and after X started.
"""

import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import SharedClusterTest  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS


class CorrectionTest(SharedClusterTest):

    CLUSTER = dict(scheduler="sched/easypp", nodes=8, cpus=1, debug="debug",
                   scheduler_parameters="sched_interval=2,easypp_interval=30")

    def kick(self):
        """Wake the agent now (sched_p_reconfig runs a cycle at once; not
        `scontrol reconfigure`, which restarts slurmctld from 23.11 on)."""
        n = len(re.findall(r"sched/easypp: cycle: trigger=reconfigure", self.c.ctld_log_text()))
        self.c.wake_scheduler()
        self.c.wait_for("a cycle after the wake-up", lambda: len(re.findall(
            r"sched/easypp: cycle: trigger=reconfigure", self.c.ctld_log_text())) > n)

    def test_correction_moves_the_reservation(self):
        c = self.c
        hist = [c.submit(wrap="sleep 3", time_min=10, nodes=1, user=U1, name="history")
                for _ in range(2)]
        c.wait_jobs(hist, timeout=60)
        time.sleep(1.1)  # a finished job is learned once its end_time < now
        self.kick()
        self.assertEqual(len(c.history(U1)), 2, c.status())

        x = c.submit(wrap="sleep 20", time_min=2, nodes=6, user=U1, name="X")
        jx = c.wait_state(x, "RUNNING", 30)
        w = c.submit(wrap="sleep 1", time_min=1, nodes=8, user=U3, name="W")
        self.kick()  # the agent sees X running, plans W, sets X's timer
        st = c.status()
        xs = [j for j in st["jobs"] if j["job_id"] == x][0]
        p = xs["prediction"]
        self.assertLessEqual(p, 5, xs)
        self.assertTrue(xs["from_history"], xs)
        m1 = c.wait_log(r"reservation: JobId=%d partition=batch start=(\d+)" % w, timeout=10)
        first = int(m1.group(1))
        self.assertLessEqual(abs(first - (jx["start"] + p)), 2,
                             "W planned at X's predicted end")

        m = c.wait_log(r"sched/easypp: correction: JobId=%d prediction (\d+) s -> (\d+) s \(1\)"
                       % x, timeout=30)
        self.assertEqual(int(m.group(1)), p)
        self.assertEqual(int(m.group(2)), 120)
        self.assertRegex(c.ctld_log_text(), r"woke at the predicted end of JobId=%d" % x)
        # The cycle's line comes after its files are written: wait for it.
        c.wait_log(r"sched/easypp: cycle: trigger=correction .*corrections=1", timeout=10)
        m2 = c.wait_log(r"reservation: JobId=%d partition=batch start=(%d|%d|%d) " % (
            w, jx["start"] + 119, jx["start"] + 120, jx["start"] + 121), timeout=5)
        moved = c.planned_start(w)
        sys.stderr.write("\n  X start %d, prediction %d s; W planned %d, after the "
                         "correction %s (squeue --start %s)\n" % (
                             jx["start"], p, first, m2.group(1), moved))
        self.assertIsNotNone(moved)
        self.assertGreater(moved, first + 60)

        done = c.wait_jobs([x, w], timeout=120)
        dx, dw = done[x], done[w]
        self.assertEqual(dx["JobState"], "COMPLETED", dx)
        self.assertGreaterEqual(dx["end"] - dx["start"], 20)
        self.assertEqual(dx["TimeLimit"], "00:02:00")
        self.assertEqual(dw["JobState"], "COMPLETED", dw)
        self.assertGreaterEqual(dw["start"], dx["end"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
