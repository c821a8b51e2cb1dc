"""Integration test: fairness caps under SJBF (easypp_max_job_user).

8 one-CPU nodes under sched/easypp with a small test budget
(easypp_max_job_test=10):
  - A (u2, no history): 6 nodes, limit 3 min, runs 60 s; W (u3): all 8
    nodes, the head, reserved at A's predicted end (180 s after its start);
  - u1, whose history predicts about 2 s, floods the queue with 20 one-node
    jobs that cannot start now (each constrained to one of A's nodes, as a
    job needing a feature only busy nodes have): shortest predictions, so
    SJBF tries them first, and each costs a test;
  - B (u4, no history: predicted at its 2 min limit, ending before W's
    shadow): fits on a free node now.
Without a cap the flood spends the whole budget every cycle and B is never
tried: it waits. With easypp_max_job_user=3, u1's fourth and later jobs are
skipped untested each cycle, B is tried and backfilled while A still runs.
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
PARAMS = "sched_interval=2,easypp_interval=1,easypp_max_job_test=10"


class CapsTest(SharedClusterTest):

    CLUSTER = dict(scheduler="sched/easypp", nodes=8, cpus=1, scheduler_parameters=PARAMS)

    def test_flood_does_not_starve_another_user(self):
        c = self.c
        c.run_history(U1, [2, 2])
        a = c.submit(wrap="sleep 60", time_min=3, nodes=6, user=U2, name="A")
        ja = c.wait_state(a, "RUNNING", 30)
        busy = c.scontrol("show", "hostnames", ja["NodeList"]).split()[0]
        w = c.submit(wrap="sleep 1", time_min=1, nodes=8, user=U3, name="W")
        flood = [c.submit(wrap="sleep 2", time_min=1, nodes=1, user=U1, name="F%d" % i,
                          extra=["--nodelist=%s" % busy]) for i in range(20)]
        b = c.submit(wrap="sleep 2", time_min=2, nodes=1, user=U4, name="B")
        try:
            # No cap: several full cycles, each spending its budget on the flood.
            c.wait_log(r"cycle: .*tested=10 .*\(interrupted\)", timeout=20)
            time.sleep(5)
            self.assertEqual(c.job_state(b), "PENDING", "B started without the cap")
            self.assertNotRegex(c.ctld_log_text(), r"started JobId=%d " % b)
            # The cap: B is tried, and backfilled while A runs.
            c.set_scheduler_parameters(PARAMS + ",easypp_max_job_user=3")
            m = c.wait_log(r"sched/easypp: started JobId=%d in batch on \S+ \(backfill" % b,
                           timeout=40)
            self.assertEqual(c.job_state(a), "RUNNING", "B started only once A ended")
            # (The cycle's summary line comes after its starts: wait for it.)
            c.wait_log(r"cycle: .*capped=(1[0-9]|[4-9]) ", timeout=10)
            sys.stderr.write("\n  with easypp_max_job_user=3: %s\n" % m.group(0))
        finally:
            c.cancel(*flood)
        done = c.wait_jobs([a, w, b], timeout=180)
        self.assertEqual(done[b]["JobState"], "COMPLETED", done[b])
        self.assertLess(done[b]["start"], done[a]["end"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
