"""Integration test: heterogeneous jobs under sched/easypp.

Slurm's main scheduler never starts a het job; sched/easypp starts one when
all its components fit now (docs/plugin-internals.md 7.5).

slurmctld 22.05 accepts a het job only while SchedulerType=sched/backfill:
`_sched_backfill()` in proc_req.c refuses REQUEST_SUBMIT_BATCH_HET_JOB and
REQUEST_HET_JOB_ALLOCATION otherwise (ESLURM_NOT_SUPPORTED, "Requested
operation not supported on this system"). Under sched/easypp het jobs exist
only when a site switches from sched/backfill with het jobs still pending,
which is what every scenario here does: the cluster starts under
sched/backfill, the het jobs are submitted held, slurmctld restarts from its
saved state as sched/easypp, and the test releases them when it wants them.

Three clusters of 4 one-CPU nodes, each in its own thread:
  plain:       a new het submission is refused under sched/easypp; H1
               (1 node : 2 nodes, one srun over both groups) starts and
               completes; B holds 3 nodes for 8 s, H2 (1 node : 2 nodes) is
               released and waits while S (1 node) starts and runs, and H2
               starts once B has ended.
  reservation: A runs on 2 nodes (limit 1 min, no history: predicted to the
               limit), W (4 nodes) is blocked and gets the EASY++
               reservation on all 4 nodes; HL (u4, no history: predicted 10
               min) would still hold its nodes at W's shadow, so it keeps off
               them and waits until W has run; HS (u1, history ~2 s) ends
               long before the shadow and is backfilled at once.
  undo:        only with --enable-debug-checks: slurmctld runs with
               EASYPP_DEBUG_HET_FAIL=1, so the last component of a het job is
               offered no node when it is started; the plugin starts the
               first, select_nodes() fails for the second, and the first is
               deallocated as sched/backfill does (_het_job_kill_now): both
               pending, the undone one eligible again only after the job
               credential lifetime (121 s by default), its node free for
               other jobs at once, the script never ran.
The suite-wide kill-time check (test_zz_suite) covers every component: the
components other than the leader are added to cluster.JOB_REGISTRY here.
"""

import os
import re
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS
PARAMS = "sched_interval=2,easypp_interval=1"


def components(c, het_id):
    """{offset: scontrol record} of het job het_id's components."""
    p = c.client("scontrol", "show", "job", "-o", str(het_id), check=False)
    out = {}
    for line in p.stdout.splitlines():
        d = cluster.parse_kv_line(line)
        if d.get("HetJobId") == str(het_id):
            d["start"] = cluster.parse_time(d.get("StartTime"))
            d["end"] = cluster.parse_time(d.get("EndTime"))
            d["eligible"] = cluster.parse_time(d.get("EligibleTime"))
            out[int(d["HetJobOffset"])] = d
    return out


def submit_het(c, comps, wrap, user, name, hold=True):
    """sbatch one het job held; comps = [(time limit in minutes, [options])]
    per component. Returns (leader id, [component ids by offset]); every
    component is in cluster.JOB_REGISTRY."""
    t0, opts0 = comps[0]
    extra = list(opts0) + (["--hold"] if hold else [])
    for t, opts in comps[1:]:
        extra += [":", "--time=%d" % t] + list(opts)
    leader = c.submit(wrap=wrap, time_min=t0, user=user, name=name, extra=extra)
    recs = components(c, leader)
    if len(recs) != len(comps):
        raise cluster.ClusterError("het job %d has %d components: %s" % (leader, len(recs), recs))
    ids = [int(recs[k]["JobId"]) for k in sorted(recs)]
    for k, jid in enumerate(ids[1:], start=1):
        cluster.JOB_REGISTRY.append({"cluster": c.dir, "scheduler": c.scheduler, "job_id": jid,
                                     "time_limit": str(comps[k][0]), "user": user,
                                     "name": "%s+%d" % (name, k), "cancelled": False,
                                     "final": None})
    return leader, ids


def switch_to_easypp(c, params=PARAMS):
    """Restart slurmctld from its saved state as sched/easypp."""
    def rewrite():
        c.scheduler = "sched/easypp"
        c.scheduler_parameters = params
        c.write_conf()
    c.restart_slurmctld(while_stopped=rewrite)
    for r in cluster.JOB_REGISTRY:
        if r["cluster"] == c.dir:
            r["scheduler"] = c.scheduler
    c.wait_idle()  # every slurmd registered again


def out_file(c, job_id):
    return c.path("out", "slurm-%d.out" % job_id)


def plain_scenario(c):
    h1, h1c = submit_het(c, [(1, ["--nodes=1"]), (2, ["--nodes=2"])],
                         wrap="srun --het-group=0,1 hostname; sleep 1", user=U1, name="H1")
    h2, h2c = submit_het(c, [(1, ["--nodes=1"]), (1, ["--nodes=2"])],
                         wrap="sleep 1", user=U2, name="H2")
    switch_to_easypp(c)
    refused = c.client("sbatch", "--parsable", "--time=1", "--output=/dev/null", "--nodes=1", ":",
                       "--nodes=1", "--wrap", "true", user=U1, check=False)

    c.scontrol("release", str(h1))
    done1 = c.wait_jobs(h1c, timeout=40)
    with open(out_file(c, h1), errors="replace") as f:
        out1 = f.read()

    b = c.submit(wrap="sleep 8", time_min=1, nodes=3, user=U3, name="B")
    c.wait_state(b, "RUNNING", 30)
    c.scontrol("release", str(h2))
    s = c.submit(wrap="sleep 2", time_min=1, nodes=1, user=U4, name="S")
    c.wait_state(s, ("RUNNING", "COMPLETED"), 30)
    h2_while_s = c.job_state(h2)
    done = c.wait_jobs(h2c + [b, s], timeout=60)
    return {"refused": refused, "h1": [done1[j] for j in h1c], "out1": out1,
            "h2": [done[j] for j in h2c], "h2_while_s": h2_while_s,
            "B": done[b], "S": done[s], "log": c.ctld_log_text(),
            "alive": c.slurmctld_alive()}


def reservation_scenario(c):
    hl, hlc = submit_het(c, [(10, ["--nodes=1"]), (10, ["--nodes=1"])],
                         wrap="sleep 1", user=U4, name="HL")
    hs, hsc = submit_het(c, [(10, ["--nodes=1"]), (10, ["--nodes=1"])],
                         wrap="sleep 1", user=U1, name="HS")
    switch_to_easypp(c)
    c.run_history(U1, [2, 2])
    a = c.submit(wrap="sleep 12", time_min=1, nodes=2, user=U2, name="A")
    c.wait_state(a, "RUNNING", 30)
    w = c.submit(wrap="sleep 1", time_min=1, nodes=4, user=U3, name="W")
    c.wait_log(r"sched/easypp: reservation: JobId=%d " % w, timeout=20)
    c.scontrol("release", str(hl))
    c.scontrol("release", str(hs))
    done = c.wait_jobs([a, w] + hlc + hsc, timeout=90)
    return {"A": done[a], "W": done[w], "hl": [done[j] for j in hlc],
            "hs": [done[j] for j in hsc], "log": c.ctld_log_text(),
            "alive": c.slurmctld_alive()}


class FaultCluster(cluster.Cluster):
    """slurmctld with EASYPP_DEBUG_HET_FAIL=1 (honoured by debug-check builds),
    logging at debug level (the cycle lines count undone starts)."""

    def __init__(self, **kw):
        kw["debug"] = "debug"
        super().__init__(**kw)

    def daemon_env(self):
        e = super().daemon_env()
        e["EASYPP_DEBUG_HET_FAIL"] = "1"
        return e


def cancel_het(c, ids):
    """scancel the whole het job (its leader: a component alone is refused);
    every component is marked cancelled by the test."""
    for r in cluster.JOB_REGISTRY:
        if r["cluster"] == c.dir and r["job_id"] in ids:
            r["cancelled"] = True
    c.cancel(ids[0])


def undo_scenario(c):
    h, hc = submit_het(c, [(1, ["--nodes=1"]), (1, ["--nodes=1"])],
                       wrap="sleep 1", user=U1, name="HU")
    switch_to_easypp(c)
    if not re.search(r"sched/easypp: debug: EASYPP_DEBUG_HET_FAIL is set", c.ctld_log_text()):
        cancel_het(c, hc)
        return {"skip": "cannot run here: the plugin was built without --enable-debug-checks "
                         "(configure --enable-debug-checks; ./setup.sh test does)"}
    released = time.time()
    c.scontrol("release", str(h))
    c.wait_log(r"sched/easypp: heterogeneous JobId=%d: start undone" % h, timeout=20)
    c.wait_idle(30)  # the started component's node is given back
    n = c.submit(wrap="sleep 1", time_min=1, nodes=4, user=U2, name="N")
    done_n = c.wait_jobs([n], timeout=30)
    after = components(c, h)
    cancel_het(c, hc)
    return {"h": h, "ids": hc, "released": released, "after": after, "N": done_n[n],
            "out_exists": os.path.exists(out_file(c, h)), "log": c.ctld_log_text(),
            "alive": c.slurmctld_alive()}


class HetJobTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        require_plugin(cls)
        cls.results = {}
        runs = {"plain": (cluster.Cluster, plain_scenario),
                "reservation": (cluster.Cluster, reservation_scenario),
                "undo": (FaultCluster, undo_scenario)}
        threads = [threading.Thread(target=cls.run_on, args=(name, cls_, fn))
                   for name, (cls_, fn) in runs.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    @classmethod
    def run_on(cls, name, cluster_class, scenario):
        c = cluster_class(scheduler="sched/backfill", nodes=4, cpus=1,
                          scheduler_parameters="sched_interval=2,bf_interval=1")
        try:
            c.start()
            cls.results[name] = scenario(c)
        except Exception as e:  # reported by the test that needs it
            cls.results[name] = e
        finally:
            c.stop()

    def result(self, name):
        r = self.results.get(name)
        if isinstance(r, Exception):
            raise r
        self.assertTrue(r.get("alive", True), "slurmctld died")
        if "log" in r:
            self.assertNotRegex(r["log"], r"BUG: ")
        return r

    def assert_started_together(self, comps, what):
        for d in comps:
            self.assertEqual(d["JobState"], "COMPLETED", "%s: %s" % (what, d))
        starts = [d["start"] for d in comps]
        self.assertLessEqual(max(starts) - min(starts), 1, "%s: components started apart: %s"
                             % (what, starts))
        nodes = [d["NodeList"] for d in comps]
        self.assertEqual(len(set(nodes)), len(nodes), "%s: components share nodes" % what)

    def assert_started_by_plugin(self, log, comps):
        n = len(comps)
        for k, d in enumerate(comps):
            self.assertRegex(log, r"sched/easypp: started JobId=%s\+%d\(%s\) in batch on \S+ "
                                  r"\(heterogeneous, component %d of %d, " % (
                                      d["HetJobId"], k, d["JobId"], k + 1, n))
        self.assertRegex(log, r"sched/easypp: heterogeneous JobId=%s: all %d components started"
                         % (comps[0]["HetJobId"], n))

    def test_new_het_submission_refused_under_easypp(self):
        r = self.result("plain")
        self.assertNotEqual(r["refused"].returncode, 0)
        self.assertIn("not supported", r["refused"].stderr)
        self.assertRegex(r["log"], r"REQUEST_SUBMIT_BATCH_HET_JOB .* rejected as sched/backfill "
                                   r"is not configured")

    def test_het_job_starts_and_completes(self):
        r = self.result("plain")
        h1 = r["h1"]
        self.assert_started_together(h1, "H1")
        self.assert_started_by_plugin(r["log"], h1)
        # one srun over both groups: 1 + 2 tasks ran
        self.assertEqual(len([l for l in r["out1"].splitlines() if l.strip()]), 3, r["out1"])
        self.assertNotRegex(r["log"], r"sched/easypp: heterogeneous JobId=\d+: sched/easypp does "
                                      r"not start")

    def test_het_job_waits_for_room_and_others_run(self):
        r = self.result("plain")
        h2, b, s = r["h2"], r["B"], r["S"]
        sys.stderr.write("\n  B %d-%d, S %d-%d, H2 %d\n" % (
            b["start"], b["end"], s["start"], s["end"], h2[0]["start"]))
        self.assert_started_together(h2, "H2")
        self.assertEqual(b["JobState"], "COMPLETED")
        self.assertEqual(s["JobState"], "COMPLETED")
        self.assertEqual(r["h2_while_s"], "PENDING")
        self.assertLess(s["start"], b["end"], "S did not run while H2 waited")
        self.assertGreaterEqual(h2[0]["start"], b["end"], "H2 started before there was room")
        self.assertLessEqual(h2[0]["start"] - b["end"], 5, "H2 waited after B ended")
        self.assert_started_by_plugin(r["log"], h2)

    def test_het_job_respects_the_reservation(self):
        r = self.result("reservation")
        a, w, hl, hs = r["A"], r["W"], r["hl"], r["hs"]
        sys.stderr.write("\n  A %d-%d, HS %d, W %d, HL %d\n" % (
            a["start"], a["end"], hs[0]["start"], w["start"], hl[0]["start"]))
        for d in (a, w):
            self.assertEqual(d["JobState"], "COMPLETED", d)
        self.assert_started_together(hs, "HS")
        self.assert_started_together(hl, "HL")
        self.assertRegex(r["log"], r"sched/easypp: reservation: JobId=%s " % w["JobId"])
        # HS ends before W's shadow: backfilled onto the reserved nodes at once
        self.assertLess(hs[0]["start"], a["end"], "HS was not backfilled while A ran")
        self.assertRegex(r["log"], r"started JobId=%s\+0\(%s\) .*\(heterogeneous, component 1 of "
                                   r"2, prediction [1-3] s, limit 10 min\)"
                         % (hs[0]["HetJobId"], hs[0]["JobId"]))
        # HL would delay W: it never starts before W
        self.assertGreaterEqual(hl[0]["start"], w["start"], "HL took W's reserved nodes")
        self.assert_started_by_plugin(r["log"], hl)

    def test_partial_start_is_undone(self):
        r = self.result("undo")
        if "skip" in r:
            self.skipTest(r["skip"])
        h, ids, log, after = r["h"], r["ids"], r["log"], r["after"]
        self.assertRegex(log, r"sched/easypp: debug: EASYPP_DEBUG_HET_FAIL: offering "
                              r"JobId=%d\+1\(%d\) no node" % (h, ids[1]))
        m = re.search(r"sched/easypp: heterogeneous JobId=%d: deallocating JobId=%d\+0\(%d\) on "
                      r"n\d: JobId=%d\+1\(%d\) did not start \(.+\); eligible again in (\d+) s"
                      % (h, h, h, h, ids[1]), log)
        self.assertIsNotNone(m, "no deallocation of the started component in the log")
        wait = int(m.group(1))  # the credential lifetime + 1 (Slurm's default: 120 s)
        self.assertRegex(log, r"sched/easypp: heterogeneous JobId=%d: start undone \(1 of 2 "
                              r"components had started\)" % h)
        self.assertNotRegex(log, r"sched/easypp: heterogeneous JobId=%d: all" % h)
        self.assertNotRegex(log, r"sched/easypp: started JobId=%d\+" % h)
        self.assertRegex(log, r"het=0\(undone 1\)")
        self.assertEqual(sorted(after), [0, 1])
        for k in (0, 1):
            self.assertEqual(after[k]["JobState"], "PENDING", after[k])
        # the undone component waits for the credential lifetime (as under
        # sched/backfill); its node went back at once: N used all 4 nodes
        self.assertGreaterEqual(after[0]["eligible"], int(r["released"]) + wait - 2, after[0])
        self.assertGreater(wait, 60)
        self.assertEqual(r["N"]["JobState"], "COMPLETED")
        self.assertFalse(r["out_exists"], "the het job's script ran")


if __name__ == "__main__":
    unittest.main(verbosity=2)
