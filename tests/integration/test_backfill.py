"""Integration test: prediction-driven backfilling, against sched/backfill.

The same submissions on two clusters of 8 one-CPU nodes, one under
sched/easypp, one under sched/backfill:
  1. user u1 runs two 2-second jobs (its history: it runs short jobs);
  2. A (u2, no history): 6 nodes, limit 2 min, runs 12 s;
  3. W (u3): all 8 nodes, limit 1 min: blocked until A ends, the head;
  4. C (u1): the 2 free nodes, limit 10 min, runs 2 s.
C's limit reaches far past W's planned start, so sched/backfill (which plans
with limits) must keep it waiting until W has run. EASY++ predicts C from
u1's history (about 2 s), so C ends long before A's predicted end (A's
limit, 120 s: u2 has no history) and is backfilled at once.
"""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS


def scenario(c):
    """Run the submissions; return {name: final job record}."""
    if c.scheduler == "sched/easypp":
        c.run_history(U1, [2, 2])  # and wait until the plugin learned them
    else:
        c.wait_jobs([c.submit(wrap="sleep 2", time_min=10, nodes=1, user=U1)
                     for _ in range(2)], timeout=60)
    a = c.submit(wrap="sleep 12", time_min=2, nodes=6, user=U2, name="A")
    c.wait_state(a, "RUNNING", 30)
    w = c.submit(wrap="sleep 1", time_min=1, nodes=8, user=U3, name="W")
    cj = c.submit(wrap="sleep 2", time_min=10, nodes=2, user=U1, name="C")
    done = c.wait_jobs([a, w, cj], timeout=180)
    return {"A": done[a], "W": done[w], "C": done[cj]}


class BackfillTest(unittest.TestCase):
    """Both clusters run at the same time (the scenario is not sensitive to a
    second either way), each in its own thread."""

    @classmethod
    def setUpClass(cls):
        require_plugin(cls)
        cls.results = {}
        runs = {"sched/easypp": "sched_interval=2,easypp_interval=1",
                "sched/backfill": "sched_interval=2,bf_interval=1"}
        threads = [threading.Thread(target=cls.run_on, args=(s, p)) for s, p in runs.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    @classmethod
    def run_on(cls, scheduler, params):
        c = cluster.Cluster(scheduler=scheduler, nodes=8, cpus=1, scheduler_parameters=params)
        try:
            c.start()
            jobs = scenario(c)
            cls.results[scheduler] = (jobs, c.ctld_log_text())
        except Exception as e:  # reported by the test that needs it
            cls.results[scheduler] = e
        finally:
            c.stop()

    def result(self, scheduler):
        r = self.results.get(scheduler)
        if isinstance(r, Exception):
            raise r
        jobs, log = r
        for name, d in jobs.items():
            self.assertEqual(d["JobState"], "COMPLETED", "%s: %s" % (name, d))
        return jobs, log

    def test_easypp_backfills_by_prediction(self):
        jobs, log = self.result("sched/easypp")
        a, w, cj = jobs["A"], jobs["W"], jobs["C"]
        sys.stderr.write("\n  easypp: A %d-%d, C %d-%d, W %d\n" % (
            a["start"], a["end"], cj["start"], cj["end"], w["start"]))
        self.assertLess(cj["start"], a["end"], "C was not backfilled while A ran")
        self.assertLessEqual(cj["start"] - a["start"], 5, "C waited")
        self.assertLess(cj["start"], w["start"])
        self.assertGreaterEqual(w["start"], a["end"])
        self.assertRegex(log, r"sched/easypp: started JobId=%s in batch on \S+ \(backfill, "
                              r"prediction [1-3] s, limit 10 min\)" % cj["JobId"])
        self.assertRegex(log, r"sched/easypp: reservation: JobId=%s " % w["JobId"])

    def test_backfill_keeps_it_waiting(self):
        jobs, _ = self.result("sched/backfill")
        a, w, cj = jobs["A"], jobs["W"], jobs["C"]
        sys.stderr.write("\n  backfill: A %d-%d, W %d, C %d\n" % (
            a["start"], a["end"], w["start"], cj["start"]))
        self.assertGreaterEqual(cj["start"], w["start"],
                                "sched/backfill started C ahead of the wide job")
        self.assertGreaterEqual(cj["start"], a["end"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
