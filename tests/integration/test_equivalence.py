"""Integration test: the simulator and the real Slurm cluster run the same
EASY++ code, so the same workload gives the same start order.

A small workload (26 jobs of four users on 8 one-CPU nodes, so processors
and nodes coincide) is replayed twice:
  - by libpredict's Simulator through easypp-sim with the site preset (the
    plugin's defaults; both sides learn every runtime, as test jobs run
    seconds) (--output-swf gives every job's wait time, hence its start);
  - on the real cluster under sched/easypp, every job submitted up front with
    --begin at its (scaled) submit time, `sleep <runtime>` as its script.
Time scale 1: one simulated second is one real second. The workload is
pseudo-random with a fixed seed, chosen (and re-checked here) so that no
decision depends on a second or two: its simulated start order is the same
when every runtime grows by 0-2 s and every arrival slips by 0-1 s, which
is what Slurm's whole-second clock, job launch, the agent's 1 s interval
and their accumulation along a chain of jobs do to it (the real starts lag
the simulated ones by 1-2 s). It is also chosen so that plain EASY orders it differently (the
test can tell EASY++ from EASY).

Compared: the start ORDER. For every two jobs the simulator starts at
different times, the real cluster must not start them the other way round
(jobs the simulator starts at the same time may start in any order).
"""

import os
import random
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

SEED = 11
NODES = 8


def easypp_sim():
    path = os.environ.get("EASYPP_SIM") or os.path.join(
        cluster.REPO_ROOT, "tools", "easypp-sim")
    return path if os.access(path, os.X_OK) else None


def workload(seed=SEED, njobs=18):
    """[submit s, runtime s, nodes, limit min, user 1-4]: two one-node jobs
    per user at time 0 (their history), then `njobs` jobs 2-7 s apart."""
    rnd = random.Random(seed)
    jobs = []
    for u in range(1, 5):
        for _ in range(2):
            jobs.append([0, rnd.randint(6, 20), 1, 1, u])
    t = 25
    for _ in range(njobs):
        t += rnd.randint(2, 7)
        size = rnd.choice([1, 1, 2, 2, 3, 4, 4, 6, 8])
        rt = rnd.randint(8, 35)
        est = rnd.choice([1, 1, 2, 2, 3])
        if est * 60 < rt + 15:
            est = (rt + 15 + 59) // 60
        jobs.append([t, rt, size, est, rnd.randint(1, 4)])
    return jobs


def to_swf(jobs, perturb=None):
    lines = ["; MaxProcs: %d" % NODES, "; MaxNodes: %d" % NODES]
    for i, (sub, rt, size, est, user) in enumerate(jobs):
        if perturb:
            sub, rt = perturb(i, sub, rt)
        lines.append("%d %d -1 %d %d -1 -1 %d %d -1 1 %d 1 1 1 1 -1 -1" % (
            i + 1, sub, rt, size, size, est * 60, user))
    return "\n".join(lines) + "\n"


# The plugin's defaults are the harness's preset `site`; the cluster runs
# them with easypp_learn_min_runtime=0 (cluster.py: test jobs run seconds).
SITE = "site:learn-min-runtime=0"


def simulate(sim, swf_text, scheduler=SITE):
    """{job index (1-based): start} from easypp-sim --output-swf."""
    d = tempfile.mkdtemp(prefix="easypp-eq-")
    try:
        inp, out = os.path.join(d, "in.swf"), os.path.join(d, "out.swf")
        with open(inp, "w") as f:
            f.write(swf_text)
        p = subprocess.run([sim, "-q", "--workload", inp, "--procs", str(NODES),
                            "--scheduler", scheduler, "--output-swf", out],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError("easypp-sim failed: %s" % p.stderr)
        starts = {}
        with open(out) as f:
            for line in f:
                if line.startswith(";") or not line.strip():
                    continue
                fields = line.split()
                starts[int(fields[0])] = int(fields[1]) + int(fields[2])
        return starts
    finally:
        for name in os.listdir(d):
            os.unlink(os.path.join(d, name))
        os.rmdir(d)


def inversions(reference, other):
    """Pairs (a, b) that `reference` starts strictly in the order a, b and
    `other` strictly in the order b, a."""
    ids = sorted(reference)
    return [(a, b) for a in ids for b in ids
            if reference[a] < reference[b] and other[a] > other[b]]


class EquivalenceTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        require_plugin(cls)
        cls.sim = easypp_sim()
        if cls.sim is None:
            raise unittest.SkipTest("cannot run here: easypp-sim not built (set EASYPP_SIM)")
        cls.jobs = workload()
        cls.expected = simulate(cls.sim, to_swf(cls.jobs))

    def test_1_workload_is_robust_and_discriminating(self):
        """Preconditions of the comparison, in the simulator alone."""
        rnd = random.Random(1)
        for trial in range(30):
            dr = [rnd.randint(0, 2) for _ in self.jobs]
            ds = {t: rnd.randint(0, 1) for t in {j[0] for j in self.jobs}}
            got = simulate(self.sim, to_swf(
                self.jobs, lambda i, s, r: (s + ds[s] if s > 0 else s, r + dr[i])))
            self.assertEqual(inversions(self.expected, got), [],
                             "trial %d: a second or two change the order" % trial)
        easy = simulate(self.sim, to_swf(self.jobs), "easy")
        self.assertNotEqual(inversions(self.expected, easy), [],
                            "EASY and EASY++ start this workload in the same order")

    def test_2_real_cluster_same_start_order(self):
        users = cluster.TEST_USERS
        c = cluster.Cluster(scheduler="sched/easypp", nodes=NODES, cpus=1,
                            scheduler_parameters="sched_interval=2,easypp_interval=1")
        c.start()
        try:
            t0 = int(time.time()) + 4 + len(self.jobs) // 4
            ids = []
            for i, (sub, rt, size, est, user) in enumerate(self.jobs):
                ids.append(c.submit(wrap="sleep %d" % rt, time_min=est, nodes=size,
                                    name="eq%d" % (i + 1), user=users[user - 1],
                                    begin=t0 + sub))
            self.assertLess(time.time(), t0, "submitting took too long; raise t0's margin")
            makespan = max(self.expected[i + 1] + j[1] for i, j in enumerate(self.jobs))
            done = c.wait_jobs(ids, timeout=makespan + 150)
            real = {}
            for i, jid in enumerate(ids):
                d = done[jid]
                self.assertEqual(d["JobState"], "COMPLETED", d)
                real[i + 1] = d["start"] - t0
            table = "\n".join(
                "  job %2d: submit %3d runtime %2d nodes %d limit %d min user %d: "
                "simulated start %3d, real %3d" % ((i + 1,) + tuple(j) + (
                    self.expected[i + 1], real[i + 1]))
                for i, j in enumerate(self.jobs))
            lag = max(real[k] - self.expected[k] for k in real)
            sys.stderr.write("\n  equivalence: %d jobs, makespan %d s, largest lag %d s\n" % (
                len(ids), makespan, lag))
            bad = inversions(self.expected, real)
            self.assertEqual(bad, [], "start order differs from the simulator:\n" + table)
            log = c.ctld_log_text()
            self.assertRegex(log, r"sched/easypp: started JobId=\d+ .*\(backfill")
            self.assertNotRegex(log, r"BUG: ")
        finally:
            c.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
