"""Integration test: easypp-sweep fanned out on a real Slurm cluster.

A small grid over two workloads is replayed here and, through
`easypp-sweep --slurm --wait`, as a job array of three tasks on a localhost
cluster (sched/backfill: the sweep needs a cluster, not the plugin). The
collected report and CSV must equal the local ones, robust ranking included.
Then the two ways a task goes missing:
  - its result is lost (the file removed): --collect names the task and
    exits 1 with the other tasks' figures merged and the incomplete
    configurations listed; --resubmit submits that task alone;
  - it is cancelled (scancel of one array task): the same, and once
    resubmitted the report is whole again.
"""

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402

SWEEP = os.path.join(cluster.REPO_ROOT, "contrib", "easypp-sweep")
SIM = os.environ.get("EASYPP_SIM") or os.path.join(cluster.REPO_ROOT, "tools", "easypp-sim")
W1 = "synthetic:seed=3,jobs=600,procs=32,users=8"
W2 = "synthetic:seed=4,jobs=600,procs=32,users=8"
GRID = ["-w", W1, "-w", W2, "--grid", "window=1,2,3", "--grid", "metric=avg,max",
        "--also", "easy+", "-j", "1"]


def rows_of(path):
    with open(path, newline="") as f:
        return sorted(tuple(sorted(r.items())) for r in csv.DictReader(f))


def ranking_lines(text):
    """The report without its first line (how it ran: calls or tasks)."""
    return text.split("\n", 1)[1]


class SweepOnSlurmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(SIM, os.X_OK):
            raise unittest.SkipTest("easypp-sim not built (%s)" % SIM)
        cls.tmp = tempfile.mkdtemp(prefix="easypp-sweep-test.")
        cls.c = cluster.Cluster(scheduler="sched/backfill", nodes=2, cpus=2,
                                scheduler_parameters="sched_interval=2,bf_interval=1")
        cls.c.start()

    @classmethod
    def tearDownClass(cls):
        cls.c.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def sweep(self, *args, check=None, timeout=600):
        p = subprocess.run([sys.executable, SWEEP] + list(args), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=timeout,
                           env=self.c.env(EASYPP_SIM=SIM))
        if check is not None:
            self.assertEqual(check, p.returncode, "easypp-sweep %s:\n%s\n%s" % (
                " ".join(args), p.stdout[-2000:], p.stderr[-2000:]))
        return p

    def wait_array(self, job, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            out = self.c.client("squeue", "-h", "-r", "-j", str(job), "-o", "%i",
                                check=False).stdout.strip()
            if not out:
                return
            time.sleep(1)
        self.fail("job array %s still queued after %d s" % (job, timeout))

    def local(self):
        if not hasattr(self.__class__, "local_report"):
            csv_path = os.path.join(self.tmp, "local.csv")
            p = self.sweep(*(GRID + ["--csv", csv_path]), check=0)
            self.__class__.local_report = p.stdout
            self.__class__.local_csv = csv_path
        return self.local_report, self.local_csv

    def test_1_array_equals_local_then_lost_result(self):
        report, local_csv = self.local()
        self.assertIn("robust ranking at load log", report)
        d = os.path.join(self.tmp, "sw1")
        out_csv = os.path.join(self.tmp, "slurm.csv")
        p = self.sweep(*(GRID + ["--slurm=--time=10", "--dir", d, "--tasks", "3", "--wait",
                                 "--csv", out_csv]), check=0)
        self.assertIn("as job array", p.stdout)
        self.assertIn("from 3 of 3 Slurm array tasks", p.stdout)
        self.assertEqual(ranking_lines(report), ranking_lines(p.stdout.split("\n", 1)[1]))
        self.assertEqual(rows_of(local_csv), rows_of(out_csv))
        # Every task replayed its slice (the figures came from the array).
        for i in range(3):
            self.assertTrue(os.path.exists(os.path.join(d, "out", "task-%d.csv" % i)))

        # A lost result: reported, the rest merged, resubmitted alone.
        os.unlink(os.path.join(d, "out", "task-1.csv"))
        p = self.sweep("--collect", d, check=1)
        self.assertIn("from 2 of 3 Slurm array tasks", p.stdout)
        self.assertIn("task 1: no result", p.stdout)
        self.assertIn("not ranked (a run failed or is missing)", p.stdout)
        self.assertIn("--resubmit %s" % d, p.stdout)
        p = self.sweep("--resubmit", d, "--slurm=--time=10", "--wait", "--csv", out_csv, check=0)
        self.assertIn("resubmitted task 1 as job", p.stdout)
        self.assertEqual(ranking_lines(report), ranking_lines(p.stdout.split("\n", 1)[1]))
        self.assertEqual(rows_of(local_csv), rows_of(out_csv))
        # Nothing left to resubmit.
        p = self.sweep("--resubmit", d, check=0)
        self.assertIn("every task has its result", p.stdout)

    def test_2_cancelled_task(self):
        report, local_csv = self.local()
        d = os.path.join(self.tmp, "sw2")
        # A task that cannot start at once (the first holds both nodes for
        # a while), so it can be cancelled before it runs.
        blocker = self.c.submit(wrap="sleep 20", time_min=2, nodes=2)
        self.c.wait_state(blocker, "RUNNING", 60)
        p = self.sweep(*(GRID + ["--slurm=--time=10", "--dir", d, "--tasks", "3"]), check=0)
        job = int(p.stdout.split("as job array ")[1].split()[0])
        self.assertIn("collect the results with: easypp-sweep --collect %s" % d, p.stdout)
        self.c.client("scancel", "%d_2" % job)
        self.c.cancel(blocker)
        self.wait_array(job)
        p = self.sweep("--collect", d, check=1)
        self.assertIn("task 2: no result", p.stdout)
        out_csv = os.path.join(self.tmp, "slurm2.csv")
        p = self.sweep("--resubmit", d, "--wait", "--csv", out_csv, check=0)
        self.assertIn("resubmitted task 2 as job", p.stdout)
        self.assertEqual(rows_of(local_csv), rows_of(out_csv))


if __name__ == "__main__":
    unittest.main()
