"""Integration test: squeue --start beyond the head (easypp_publish_starts).

4 one-CPU nodes under sched/easypp; nobody has a history, so every job is
predicted at its time limit:
  - A (3 nodes, limit 3 min) runs; W (4 nodes, limit 1 min) is the head,
    reserved at A's predicted end, A's start + 180 s;
  - X1 (2 nodes, limit 2 min) and X2 (1 node, limit 5 min) cannot start now
    (X1 does not fit, X2 would delay W): their projected starts are after W
    (A's start + 240 s), both (3 CPUs left beside X1), shown by squeue
    --start and easypp-ctl jobs as estimates (not reserved);
  - with easypp_publish_starts=0 only W keeps a planned start;
  - slurmctld restarts (as 24.11's `scontrol reconfigure` does) with
    easypp_interval=60: W is reserved again within seconds, not at the next
    interval, although the first cycle after the start runs before the nodes
    registered again (the plugin retries every second while nodes register).
"""

import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import SharedClusterTest  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS
PARAMS = "sched_interval=2,easypp_interval=1"
CTL = os.path.join(os.environ.get("EASYPP_BUILD_DIR", cluster.REPO_ROOT), "plugin", "easypp-ctl")


class PublishStartsTest(SharedClusterTest):

    CLUSTER = dict(scheduler="sched/easypp", nodes=4, cpus=1, scheduler_parameters=PARAMS)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        c = cls.c
        cls.a = c.submit(wrap="sleep 120", time_min=3, nodes=3, user=U2, name="A")
        cls.a_start = c.wait_state(cls.a, "RUNNING", 30)["start"]
        cls.w = c.submit(wrap="sleep 1", time_min=1, nodes=4, user=U3, name="W")
        cls.x1 = c.submit(wrap="sleep 1", time_min=2, nodes=2, user=U4, name="X1")
        cls.x2 = c.submit(wrap="sleep 1", time_min=5, nodes=1, user=U1, name="X2")

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "c", None) is not None and cls.c.dir:
            cls.c.cancel(cls.a, cls.w, cls.x1, cls.x2)
        super().tearDownClass()

    def test_1_projected_beyond_the_head(self):
        c = self.c
        starts = c.wait_for("planned starts for W, X1 and X2", lambda: (lambda s: s if all(s)
                            else None)([c.planned_start(j) for j in (self.w, self.x1, self.x2)]),
                            timeout=20)
        sys.stderr.write("\n  A started %d; planned: W +%d s, X1 +%d s, X2 +%d s\n" % (
            self.a_start, *(t - self.a_start for t in starts)))
        pw, p1, p2 = starts
        self.assertLessEqual(abs(pw - (self.a_start + 180)), 2)
        self.assertLessEqual(abs(p1 - (self.a_start + 240)), 2)
        self.assertLessEqual(abs(p2 - (self.a_start + 240)), 2)
        self.assertEqual(c.job_state(self.x1), "PENDING")
        self.assertEqual(c.job_state(self.x2), "PENDING")
        # The status file and easypp-ctl: a start, not a reservation.
        jobs = {j["job_id"]: j for j in c.status()["jobs"]}
        self.assertTrue(jobs[self.w]["reserved"])
        self.assertFalse(jobs[self.x1]["reserved"])
        self.assertLessEqual(abs(jobs[self.x1]["start"] - p1), 1)
        if os.access(CTL, os.X_OK):
            out = subprocess.run([CTL, "--dir", c.path("state"), "jobs"], capture_output=True,
                                 text=True, timeout=30).stdout
            line = [l for l in out.splitlines() if l.startswith("%d " % self.x1)]
            self.assertEqual(len(line), 1, out)
            self.assertTrue(line[0].endswith("no (estimate)"), line[0])
            js = json.loads(subprocess.run([CTL, "--dir", c.path("state"), "--json", "jobs"],
                                           capture_output=True, text=True, timeout=30).stdout)
            self.assertIn(self.x2, [j["job_id"] for j in js if j["start"] and not j["reserved"]])

    def test_2_heads_only_when_off(self):
        c = self.c
        c.set_scheduler_parameters(PARAMS + ",easypp_publish_starts=0")
        c.wait_log(cluster.reconfigured_pattern(r".*publish_starts=0"), timeout=20)
        c.wait_for("X1's projection to be withdrawn",
                   lambda: c.planned_start(self.x1) is None, timeout=20)
        self.assertIsNone(c.planned_start(self.x2))
        self.assertIsNotNone(c.wait_for("W's planned start", lambda: c.planned_start(self.w),
                                        timeout=20))

    def test_3_replanned_as_soon_as_nodes_register(self):
        c = self.c
        c.set_scheduler_parameters(PARAMS + ",easypp_publish_starts=0,easypp_interval=60",
                                   reconfigure=False)
        offset = len(c.ctld_log_text())
        t0 = time.time()
        c.restart_slurmctld()
        rx = re.compile(r"sched/easypp: reservation: JobId=%d partition=batch" % self.w)
        c.wait_for("W reserved again after the restart",
                   lambda: rx.search(c.ctld_log_text()[offset:]), timeout=30)
        log = c.ctld_log_text()[offset:]
        waits = re.findall(r"cycle: trigger=(\w+) .* registering=(\d+) ", log)
        sys.stderr.write("\n  reserved again %.1fs after the restart; cycles before: %s\n" % (
            time.time() - t0, waits[:8]))
        self.assertLess(time.time() - t0, 30)  # the next interval was 60 s away


if __name__ == "__main__":
    unittest.main(verbosity=2)
