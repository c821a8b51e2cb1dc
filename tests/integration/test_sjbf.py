"""Integration test: SJBF, the shortest predicted job is backfilled first,
while the reservation stays on the first blocked job.

8 one-CPU nodes under sched/easypp:
  - u1 has a history of short jobs (about 2 s), u4 has none;
  - A (u2, no history): 6 nodes, limit 3 min, runs 15 s;
  - W (u3): all 8 nodes: blocked until A ends, the head;
  - C1 (u4) and C2 (u1), both 2 nodes and limit 2 min, become eligible in
    the same second (--begin), C1 first in priority order. Only 2 nodes are
    free, so they cannot both start. Both would end before W's shadow time
    (A's predicted end, 180 s after its start), so both may backfill.
With SJBF, C2 (predicted ~2 s) starts before C1 (predicted 120 s: u4 has no
history, so its limit), and W keeps the reservation (squeue --start shows
its planned start at A's predicted end). With easypp_sjbf=no (FCFS backfill
order, which is also sched/backfill's: equal limits, priority order) the
same submissions start C1 first.
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import SharedClusterTest  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS
PARAMS = "sched_interval=2,easypp_interval=1"


class SjbfTest(SharedClusterTest):

    CLUSTER = dict(scheduler="sched/easypp", nodes=8, cpus=1, scheduler_parameters=PARAMS)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.c.run_history(U1, [2, 2])

    def scenario(self):
        c = self.c
        a = c.submit(wrap="sleep 15", time_min=3, nodes=6, user=U2, name="A")
        c.wait_state(a, "RUNNING", 30)
        w = c.submit(wrap="sleep 1", time_min=1, nodes=8, user=U3, name="W")
        begin = int(time.time()) + 3
        c1 = c.submit(wrap="sleep 3", time_min=2, nodes=2, user=U4, name="C1", begin=begin)
        c2 = c.submit(wrap="sleep 3", time_min=2, nodes=2, user=U1, name="C2", begin=begin)
        # While C1 waits: W's planned start is A's predicted end.
        planned = c.wait_for("a planned start for W", lambda: c.planned_start(w), timeout=20)
        ja = c.job(a)
        done = c.wait_jobs([a, w, c1, c2], timeout=180)
        for j, d in done.items():
            self.assertEqual(d["JobState"], "COMPLETED", d)
        return {"A": done[a], "W": done[w], "C1": done[c1], "C2": done[c2],
                "planned": planned, "a_start": ja["start"]}

    def test_1_shortest_prediction_first(self):
        r = self.scenario()
        c1, c2, w = r["C1"], r["C2"], r["W"]
        sys.stderr.write("\n  sjbf: C2 %d-%d, C1 %d-%d, W %d (planned %s)\n" % (
            c2["start"], c2["end"], c1["start"], c1["end"], w["start"], r["planned"]))
        self.assertLess(c2["start"], c1["start"], "SJBF must start C2 (shorter) first")
        self.assertGreaterEqual(c1["start"], c2["end"], "they cannot both run")
        self.assertLess(c1["start"], r["A"]["end"], "C1 is backfilled too, before A ends")
        # The reservation stayed on W, planned at A's predicted end (its limit).
        self.assertLessEqual(abs(r["planned"] - (r["a_start"] + 180)), 2, r)
        log = self.c.ctld_log_text()
        for name in ("C1", "C2"):
            self.assertNotRegex(log, r"reservation: JobId=%s " % r[name]["JobId"])
            self.assertRegex(log, r"started JobId=%s .*\(backfill" % r[name]["JobId"])
        self.assertRegex(log, r"reservation: JobId=%s partition=batch" % w["JobId"])

    def test_2_fcfs_order_without_sjbf(self):
        c = self.c
        c.set_scheduler_parameters(PARAMS + ",easypp_sjbf=no")
        c.wait_log(cluster.reconfigured_pattern(r".*sjbf=no"), timeout=15)
        try:
            r = self.scenario()
        finally:
            c.set_scheduler_parameters(PARAMS)
        sys.stderr.write("\n  fcfs: C1 %d, C2 %d\n" % (r["C1"]["start"], r["C2"]["start"]))
        self.assertLess(r["C1"]["start"], r["C2"]["start"],
                        "without SJBF the higher-priority candidate starts first")


if __name__ == "__main__":
    unittest.main(verbosity=2)
