"""Integration test: a job held back by an accounting limit idles no node.

The same scenario on two clusters with accounting (MariaDB, slurmdbd), 6
one-CPU nodes, AccountingStorageEnforce=associations,limits,qos and u1's
jobs in a QOS `capped` with MaxTRESPerUser=cpu=2 (the others' in `normal`),
one under sched/backfill, one under sched/easypp:
  1. u1 runs two one-node jobs (u1 is at its cap); A (u3) runs on 2 nodes:
     2 nodes stay idle;
  2. X (u1): 2 nodes, the highest priority pending job (priority/basic:
     first submitted, first): refused for u1's cap (QOSMaxCpuPerUserLimit);
  3. Z (u2): all 6 nodes: cannot start until everything running ended (it
     stops Slurm's main scheduler in the partition, so only the backfill
     scheduler can start what comes after it);
  4. Y (u4): one node, limit 1 min: fits on an idle node now and ends long
     before Z can start.
What must hold under both schedulers: Y starts within a cycle or two while
X stays pending for the limit, and no node stays idle while a job that fits
and is not held back by a limit waits. sched/backfill skips X (it never
reserves for a job refused for a limit). Before the fix sched/easypp made X
its head: select_nodes() refused it with ESLURM_ACCOUNTING_POLICY, X "fit
now", and the 2 idle nodes were reserved for X "now" in every cycle, so Y
waited (issue 36).

Then, on the same clusters (all nodes idle again), a QOS with NoReserve
(u2's second QOS `scavenger`): A2 (u3) runs on 4 nodes; N (u2,
--qos=scavenger): all 6 nodes, the highest priority pending job; B (u4): one
node, limit 30 min, ending long after A2's limit. N gets no reservation
under both schedulers, so B starts at once on an idle node (a reservation
for N at A2's end would keep B waiting: B would delay it).

Last, a limit that only node selection reveals, on two more clusters (3
two-CPU nodes, u1's QOS `capped` at cpu=3): u1 runs a 2-CPU job; X2 (u1,
--exclusive, 1 task) requests 1 CPU, which the cap allows, but gets the
whole node (2 CPUs) from node selection, which it does not: select_nodes()
refuses it with ESLURM_ACCOUNTING_POLICY. Z2 (u2, all 3 nodes, exclusive)
stops the main scheduler; Y2 (u4, 2 nodes, 1 min) fits the 2 idle nodes
and must start at once (a reservation for X2 "now" would hold one of them).
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
CAP = 2  # MaxTRESPerUser=cpu=CAP on u1's QOS `capped`
# Y must start within this many seconds of its submission (the cycles run
# every second; a second or two more for the submission and the launch).
START_WITHIN = 8
LIMIT_REASON = r"QOSMax\w*PerUser\w*"  # 22.05: QOSMaxCpuPerUserLimit


class CappedCluster(cluster.Cluster):
    CAP = CAP  # u1's cpu cap

    """A cluster where u1's jobs run in the QOS `capped` (its default QOS),
    MaxTRESPerUser=cpu=CAP; the other users' in `normal`, without a cap.
    Set in slurmdbd before slurmctld first starts (slurmctld then loads it
    with the associations)."""

    def _start_ctld(self, clear=False):
        if clear and self.acct is not None:
            self.client("sacctmgr", "-i", "add", "qos", "capped",
                        "MaxTRESPerUser=cpu=%d" % self.CAP)
            self.client("sacctmgr", "-i", "modify", "user", U1, "set", "qos=normal,capped",
                        "defaultqos=capped")
            self.client("sacctmgr", "-i", "add", "qos", "scavenger", "Flags=NoReserve")
            self.client("sacctmgr", "-i", "modify", "user", U2, "set", "qos=normal,scavenger")
            out = self.client("sacctmgr", "-nP", "show", "assoc", "user=%s" % U1,
                              "format=defaultqos").stdout
            if "capped" not in out:
                raise cluster.ClusterError("u1's default QOS is not `capped`: %r" % out)
        super()._start_ctld(clear=clear)


def idle_nodes(c):
    return [n for n in c.client("sinfo", "-h", "-N", "-t", "idle", "-o", "%N").stdout.split()]


def waiting_that_fit(c, idle):
    """Pending jobs that would fit the idle nodes and are not held back by a
    limit (nor by their dependency or begin time): (id, nodes, reason)."""
    out = []
    for line in c.squeue("%i %D %r", extra=["-t", "PD"]).splitlines():
        jid, nodes, reason = line.split(None, 2)
        if re.match(LIMIT_REASON + "|QOS|Assoc|Dependency|BeginTime", reason):
            continue
        if int(nodes) <= len(idle):
            out.append((int(jid), int(nodes), reason))
    return out


def scenario(c):
    """Returns what the test asserts on (see LimitsTest)."""
    capped = [c.submit(wrap="sleep 300", time_min=10, nodes=1, user=U1, name="u1-%d" % i)
              for i in range(CAP)]
    a = c.submit(wrap="sleep 300", time_min=10, nodes=2, user=U3, name="A")
    for j in capped + [a]:
        c.wait_state(j, "RUNNING", 30)
    x = c.submit(wrap="sleep 1", time_min=5, nodes=2, user=U1, name="X")
    z = c.submit(wrap="sleep 1", time_min=1, nodes=c.nodes, user=U2, name="Z")
    y_submit = time.time()
    y = c.submit(wrap="sleep 5", time_min=1, nodes=1, user=U4, name="Y")
    res = {"ids": {"X": x, "Y": y, "Z": z}, "violations": []}
    # Sample: after the first seconds (a cycle or two), no idle node while a
    # job that fits and is not limit-blocked waits.
    deadline = y_submit + START_WITHIN + 6
    while time.time() < deadline:
        if time.time() > y_submit + START_WITHIN:
            idle = idle_nodes(c)
            w = waiting_that_fit(c, idle)
            if w:
                res["violations"].append((round(time.time() - y_submit, 1), idle, w))
        time.sleep(1)
    res["Y"] = c.job(y)
    res["X"] = c.job(x)
    res["y_submit"] = y_submit
    res["queue"] = c.squeue("%i %j %u %T %D %r %S %N")
    c.cancel(x, z, y, a, *capped)
    return res


def scenario_no_reserve(c):
    """The NoReserve scenario (see the module's docstring)."""
    c.wait_idle(timeout=90)
    a2 = c.submit(wrap="sleep 300", time_min=10, nodes=4, user=U3, name="A2")
    c.wait_state(a2, "RUNNING", 30)
    n = c.submit(wrap="sleep 1", time_min=1, nodes=c.nodes, user=U2, name="N",
                 extra=["--qos=scavenger"])
    b_submit = time.time()
    b = c.submit(wrap="sleep 5", time_min=30, nodes=1, user=U4, name="B")
    try:
        c.wait_state(b, ("RUNNING", "COMPLETED"), START_WITHIN)
    except cluster.ClusterError:
        pass  # asserted by the test
    res = {"ids": {"N": n, "B": b}, "B": c.job(b), "N": c.job(n), "b_submit": b_submit,
           "queue": c.squeue("%i %j %u %T %D %r %S %N")}
    c.cancel(n, b, a2)
    return res


class SelectCappedCluster(CappedCluster):
    CAP = 3


def scenario_select(c):
    """The select_nodes() scenario (see the module's docstring)."""
    r = c.submit(wrap="sleep 300", time_min=10, nodes=1, ntasks=2, user=U1, name="r")
    c.wait_state(r, "RUNNING", 30)
    x = c.submit(wrap="sleep 1", time_min=5, nodes=1, ntasks=1, user=U1, name="X2",
                 extra=["--exclusive"])
    z = c.submit(wrap="sleep 1", time_min=1, nodes=c.nodes, user=U2, name="Z2",
                 extra=["--exclusive"])
    y_submit = time.time()
    y = c.submit(wrap="sleep 30", time_min=1, nodes=2, ntasks=2, user=U4, name="Y2")
    try:
        c.wait_state(y, ("RUNNING", "COMPLETED"), START_WITHIN)
    except cluster.ClusterError:
        pass  # asserted by the test
    time.sleep(2)  # a cycle more: X2 must still hold no reservation
    res = {"ids": {"X": x, "Y": y, "Z": z}, "X": c.job(x), "Y": c.job(y), "y_submit": y_submit,
           "queue": c.squeue("%i %j %u %T %D %C %r %S %N")}
    c.cancel(x, z, y, r)
    return res


class LimitsTest(unittest.TestCase):
    """Both clusters run at the same time, each in its own thread; they start
    one after the other (two mariadb-install-db at once failed here)."""

    start_lock = threading.Lock()

    @classmethod
    def setUpClass(cls):
        require_plugin(cls)
        why = cluster.accounting_available()
        if why:
            raise unittest.SkipTest("cannot run here: %s" % why)
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
        c = CappedCluster(scheduler=scheduler, nodes=6, cpus=1, scheduler_parameters=params,
                           accounting=True,
                           extra_conf="AccountingStorageEnforce=associations,limits,qos")
        try:
            with cls.start_lock:
                c.start()
            res = scenario(c)
            res["no_reserve"] = scenario_no_reserve(c)
            cls.results[scheduler] = (res, c.ctld_log_text())
        except Exception as e:  # reported by the test that needs it
            cls.results[scheduler] = e
        finally:
            c.stop()
        c = SelectCappedCluster(scheduler=scheduler, nodes=3, cpus=2, scheduler_parameters=params,
                                accounting=True,
                                extra_conf="AccountingStorageEnforce=associations,limits,qos")
        try:
            with cls.start_lock:
                c.start()
            cls.results[scheduler + " select"] = (scenario_select(c), c.ctld_log_text())
        except Exception as e:
            cls.results[scheduler + " select"] = e
        finally:
            c.stop()

    def result(self, scheduler):
        r = self.results.get(scheduler)
        if isinstance(r, Exception):
            raise r
        return r

    def check(self, scheduler):
        res, log = self.result(scheduler)
        y, x = res["Y"], res["X"]
        sys.stderr.write("\n  %s: Y %s%s; X %s %s\n%s" % (
            scheduler, y["JobState"],
            "" if y["JobState"] == "PENDING" else " start +%d s" % (y["start"] - res["y_submit"]),
            x["JobState"], x.get("Reason"), res["queue"]))
        # What the plugin did with X (its first lines): reserved for, or skipped.
        about_x = re.findall(r".*sched/easypp: (?:reservation: JobId=%d |JobId=%d skipped).*"
                             % (res["ids"]["X"], res["ids"]["X"]), log)
        sys.stderr.write("".join("  %s\n" % l for l in about_x[:3]))
        self.assertEqual(x["JobState"], "PENDING", "X started above its user's cap")
        self.assertRegex(x.get("Reason", ""), LIMIT_REASON)
        self.assertIn(y["JobState"], ("RUNNING", "COMPLETED"),
                      "Y (fits an idle node, not limit-blocked) did not start: %s" % res["queue"])
        self.assertLessEqual(y["start"] - int(res["y_submit"]), START_WITHIN,
                             "Y waited more than a cycle or two")
        self.assertEqual(res["violations"], [],
                         "idle nodes while a fitting, not limit-blocked job waited "
                         "(seconds after Y's submission, idle nodes, jobs)")
        return res, log

    def check_no_reserve(self, scheduler):
        res, log = self.result(scheduler)
        nr = res["no_reserve"]
        b, n = nr["B"], nr["N"]
        sys.stderr.write("\n  %s (NoReserve): B %s, N %s %s\n%s" % (
            scheduler, b["JobState"], n["JobState"], n.get("Reason"), nr["queue"]))
        self.assertEqual(n["JobState"], "PENDING")
        self.assertIn(b["JobState"], ("RUNNING", "COMPLETED"),
                      "B (fits an idle node) waited behind a NoReserve job: %s" % nr["queue"])
        self.assertLessEqual(b["start"] - int(nr["b_submit"]), START_WITHIN)
        return nr, log

    def check_select(self, scheduler):
        res, log = self.result(scheduler + " select")
        y, x = res["Y"], res["X"]
        sys.stderr.write("\n  %s (select_nodes): Y2 %s, X2 %s %s\n%s" % (
            scheduler, y["JobState"], x["JobState"], x.get("Reason"), res["queue"]))
        self.assertEqual(x["JobState"], "PENDING", "X2 started above its user's cap")
        self.assertIn(y["JobState"], ("RUNNING", "COMPLETED"),
                      "Y2 (fits an idle node, not limit-blocked) did not start: %s" % res["queue"])
        self.assertLessEqual(y["start"] - int(res["y_submit"]), START_WITHIN)
        return res, log

    def test_backfill(self):
        self.check("sched/backfill")

    def test_backfill_select_nodes_refusal(self):
        self.check_select("sched/backfill")

    def test_easypp_select_nodes_refusal(self):
        res, log = self.check_select("sched/easypp")
        x = res["ids"]["X"]
        self.assertRegex(log, r"sched/easypp: JobId=%d skipped: held back by an accounting "
                              r"limit \(select_nodes\(\): " % x)
        self.assertNotRegex(log, r"sched/easypp: reservation: JobId=%d " % x)

    def test_backfill_no_reserve(self):
        self.check_no_reserve("sched/backfill")

    def test_easypp_no_reserve(self):
        nr, log = self.check_no_reserve("sched/easypp")
        n = nr["ids"]["N"]
        self.assertRegex(log, r"sched/easypp: JobId=%d gets no reservation \(QOS NoReserve\)" % n)
        self.assertNotRegex(log, r"sched/easypp: reservation: JobId=%d " % n)

    def test_easypp(self):
        res, log = self.check("sched/easypp")
        x = res["ids"]["X"]
        # X was skipped for its limit, never the head.
        self.assertRegex(log, r"sched/easypp: JobId=%d skipped: held back by an accounting "
                              r"limit" % x)
        self.assertNotRegex(log, r"sched/easypp: reservation: JobId=%d " % x)


if __name__ == "__main__":
    unittest.main(verbosity=2)
