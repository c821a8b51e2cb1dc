"""The suite-wide kill-time check; runs last (unittest orders modules by name).

Every job any test submitted through cluster.Cluster.submit() is in
cluster.JOB_REGISTRY, with its final record read when its cluster stopped.
Over all of them: a job either ended by its own script (COMPLETED or
FAILED), or ran at least its requested time limit (TIMEOUT), unless the test
itself cancelled it. No scheduler may end a job early, and sched/easypp plans
with predictions far shorter than the limits.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402


class SuiteKillTimeTest(unittest.TestCase):

    def test_no_job_ended_before_its_limit(self):
        reg = cluster.JOB_REGISTRY
        if not reg:
            self.skipTest("cannot run here: no job was submitted in this run (TESTS_PATTERN "
                          "selected no cluster test)")
        judged, unjudged, timeouts = 0, 0, 0
        bad = []
        for r in reg:
            f = r.get("final")
            if r.get("cancelled") or f is None or f.get("JobState") not in cluster.FINISHED_STATES:
                unjudged += 1
                continue
            judged += 1
            if f.get("JobState") == "TIMEOUT":
                timeouts += 1
            why = cluster.ended_early(r)
            if why:
                bad.append("JobId=%d (%s, %s, %s): %s" % (
                    r["job_id"], r["scheduler"], r["name"], r["user"], why))
        sys.stderr.write("\n  kill time: %d jobs judged (%d TIMEOUT), %d not judged "
                         "(cancelled by a test, unfinished at teardown or forgotten)\n" % (
                             judged, timeouts, unjudged))
        self.assertEqual(bad, [], "jobs ended before their time limit:\n" + "\n".join(bad))
        self.assertGreater(judged, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
