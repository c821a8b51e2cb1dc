"""Integration test: selective reservations (easypp_selective) in slurmctld.

The same submissions on two clusters of 8 one-CPU nodes under sched/easypp,
one as EASY++ (easypp_selective off), one with one starvation threshold,
easypp_selective=1.2 (Srinivasan et al.'s Sel; docs/selective-reservations.md):
  1. A (u2, no history): 6 nodes, limit 2 min, runs 25 s;
  2. W (u3, no history): all 8 nodes, limit 1 min, runs 1 s: blocked until
     A ends. Its planning value is its limit (60 s), so its expansion factor
     (wait + 60) / 60 reaches 1.2 after 12 s of waiting;
  3. C (u1): the 2 free nodes, limit 10 min, runs 3 s, submitted at once:
     it would end long after A's planned end (A's limit), where W needs C's
     nodes;
  4. D (u4): like C, submitted once W has waited 16 s (under Sel, and once
     W's reservation is logged).
EASY reserves for the first waiting job at once: W holds A's planned end,
C would delay it, so C waits until W has run. Sel reserves nothing while W
has not starved: C is backfilled at once. Once W's expansion factor passes
1.2 it gets its reservation (logged then, at A's planned end), and D, which
would delay it, waits until W has run, as under EASY.

A third cluster runs the same submissions with adaptive thresholds
(easypp_selective=adaptive-d, easypp_sel_scale=1.25): each category's
threshold is 1.25 x the mean bounded slowdown of its finished jobs (1 while
it has none). Before its jobs, slurmctld is restarted on a state file that
holds the slowdowns of 200 earlier jobs (short narrow ones: mean 1.2), so W
(8 one-CPU nodes: narrow; planning value 60 s: short) gets 1.25 x 1.2 = 1.5
and starves after 30 s of waiting, not after 15 s as it would with no saved
slowdowns (or 12 s under Sel 1.2); A runs 50 s so that W is still blocked
then. Then: the status file's thresholds are the scale times its
slowdowns, easypp-ctl prints them, the finished jobs' slowdowns reach the
state file, and a restart loads them back.

The reservation lines carry the cycle's time: start=T (in S s) was logged at
T - S, which times the reservation without parsing log timestamps.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS

THRESHOLD = 1.2
W_LIMIT = 60                             # s: W's planning value (no history)
STARVES_AFTER = (THRESHOLD - 1) * W_LIMIT  # s of waiting: 12
D_AFTER = 16                             # s of W's waiting when D is submitted
PARAMS = "sched_interval=2,easypp_interval=1"
RUNS = {"easy": PARAMS, "sel": PARAMS + ",easypp_selective=%g" % THRESHOLD}
SCALE = 1.25
ADAPTIVE = PARAMS + ",easypp_selective=adaptive-d,easypp_sel_scale=%g" % SCALE
# The saved slowdowns (SN, SW, LN, LW): short narrow jobs 1.2 on average.
PRELOAD = {"sum": [120.0, 0.0, 500.0, 0.0], "count": [100, 0, 100, 0], "sum_all": 620.0,
           "count_all": 200}
# W's threshold 1.25 x 1.2 = 1.5: 30 s of waiting (C, which ends first with
# slowdown 1, makes it 1.25 x 121 / 101: 29.9 s).
ADAPTIVE_STARVES_AFTER = (SCALE * 121 / 101 - 1) * W_LIMIT
NO_HISTORY_STARVES_AFTER = (SCALE - 1) * W_LIMIT  # 15 s
CTL = os.path.join(os.environ.get("EASYPP_BUILD_DIR", cluster.REPO_ROOT), "plugin", "easypp-ctl")


def reservations(log, job_id):
    """[(cycle time, planned start)] of the job's reservation lines, in order."""
    rx = r"sched/easypp: reservation: JobId=%d partition=batch start=(\d+) \(in (-?\d+) s\)"
    return [(int(s) - int(d), int(s)) for s, d in re.findall(rx % job_id, log)]


def saved_slowdowns(c):
    """The state file's "slowdowns" member, or None (no file or member yet)."""
    try:
        with open(c.path("state", "easypp_state.json")) as f:
            return json.load(f).get("slowdowns")
    except (OSError, ValueError):
        return None


def preload_slowdowns(c):
    """Restart slurmctld on a state file holding PRELOAD (and no history)."""
    def write():
        now = int(time.time())
        with open(c.state_path(), "w") as f:
            json.dump({"format_version": 1, "written": now, "last_learned_end": now,
                       "learned_jobs": 0, "window": 2, "users": [], "slowdowns": PRELOAD}, f)
        os.chmod(c.state_path(), 0o600)
    c.restart_slurmctld(while_stopped=write)
    c.wait_log(r"sched/easypp: history of 0 users \(0 jobs learned so far\) loaded from \S+, "
               r"with the slowdowns of 200 finished jobs", timeout=30)
    c.wait_idle(timeout=60)


def adaptive_scenario(c):
    """The submissions under adaptive thresholds from PRELOAD, then a look at
    the files and a restart; returns (jobs, status, easypp-ctl's output,
    the state file's slowdowns before the restart)."""
    preload_slowdowns(c)
    jobs = scenario(c, True, a_runs=50, d_after=ADAPTIVE_STARVES_AFTER + 4)
    deadline = time.time() + 30
    sd = saved_slowdowns(c)
    while (sd is None or sd.get("count_all", 0) < 204) and time.time() < deadline:
        time.sleep(0.5)
        sd = saved_slowdowns(c)
    cycles = (c.status() or {}).get("totals", {}).get("cycles", 0)
    c.wait_for("a cycle after the last slowdown", lambda: (c.status() or {}).get("totals", {})
               .get("cycles", 0) >= cycles + 2, timeout=30)
    status = c.status()
    ctl = subprocess.run([CTL, "--dir", c.path("state"), "status"], capture_output=True,
                         text=True, timeout=30)
    c.restart_slurmctld()
    c.wait_log(r"sched/easypp: history of \d+ users \(\d+ jobs learned so far\) loaded from "
               r"\S+, with the slowdowns of %d finished jobs" % sd["count_all"], timeout=30)
    return jobs, status, ctl, sd


def scenario(c, selective, a_runs=25, d_after=D_AFTER):
    """Run the submissions; return {name: final job record}."""
    a = c.submit(wrap="sleep %d" % a_runs, time_min=2, nodes=6, user=U2, name="A")
    c.wait_state(a, "RUNNING", 30)
    w = c.submit(wrap="sleep 1", time_min=1, nodes=8, user=U3, name="W")
    cj = c.submit(wrap="sleep 3", time_min=10, nodes=2, user=U1, name="C")
    w_submit = c.job(w)["submit"]
    time.sleep(max(0.0, w_submit + d_after - time.time()))
    if selective:  # (under load a cycle may come late: D follows the reservation)
        c.wait_log(r"sched/easypp: reservation: JobId=%d " % w, timeout=90)
    d = c.submit(wrap="sleep 1", time_min=10, nodes=2, user=U4, name="D")
    done = c.wait_jobs([a, w, cj, d], timeout=240)
    return {"A": done[a], "W": done[w], "C": done[cj], "D": done[d]}


class SelectiveTest(unittest.TestCase):
    """Both clusters run at the same time, each in its own thread (the
    scenario's margins are seconds: W starves 12 s after its submission, C is
    submitted at once, D 4 s after W starved, or later if its reservation
    comes late)."""

    @classmethod
    def setUpClass(cls):
        require_plugin(cls)
        cls.results = {}
        threads = [threading.Thread(target=cls.run_on, args=(k, p)) for k, p in RUNS.items()]
        threads.append(threading.Thread(target=cls.run_adaptive))
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    @classmethod
    def run_on(cls, key, params):
        c = cluster.Cluster(scheduler="sched/easypp", nodes=8, cpus=1,
                            scheduler_parameters=params)
        try:
            c.start()
            jobs = scenario(c, "selective" in params)
            cls.results[key] = (jobs, c.ctld_log_text())
        except Exception as e:  # reported by the test that needs it
            cls.results[key] = e
        finally:
            c.stop()

    @classmethod
    def run_adaptive(cls):
        c = cluster.Cluster(scheduler="sched/easypp", nodes=8, cpus=1,
                            scheduler_parameters=ADAPTIVE)
        try:
            c.start()
            r = adaptive_scenario(c)
            cls.results["adaptive"] = r + (c.ctld_log_text(),)
        except Exception as e:  # reported by the test that needs it
            cls.results["adaptive"] = e
        finally:
            c.stop()

    def adaptive(self):
        r = self.results.get("adaptive")
        if isinstance(r, Exception):
            raise r
        return r

    def test_adaptive_threshold_decides_the_reservation(self):
        jobs, status, ctl, sd, log = self.adaptive()
        for name, d in jobs.items():
            self.assertEqual(d["JobState"], "COMPLETED", "%s: %s" % (name, d))
        a, w, cj, d = jobs["A"], jobs["W"], jobs["C"], jobs["D"]
        res = reservations(log, int(w["JobId"]))
        self.show("adaptive", jobs, res)
        self.assertGreaterEqual(w["start"], a["end"], "W started before A ended")
        # W not starving under its saved-slowdown threshold: C backfilled at once.
        self.assertLessEqual(cj["start"] - cj["submit"], 5, "C waited")
        self.assertLess(cj["start"], a["end"], "C was not backfilled while A ran")
        # Reserved once its expansion factor passed 1.25 x the saved mean
        # (~30 s), not at 1.25 (15 s: the slowdowns were not loaded).
        self.assertTrue(res, "W never got a reservation")
        first, start = res[0]
        self.assertGreaterEqual(first - w["submit"], ADAPTIVE_STARVES_AFTER - 1,
                                "W reserved after %d s: before its adaptive threshold (%.1f s; "
                                "%d s without the saved slowdowns)" % (
                                    first - w["submit"], ADAPTIVE_STARVES_AFTER,
                                    NO_HISTORY_STARVES_AFTER))
        self.assertLessEqual(first - w["submit"], ADAPTIVE_STARVES_AFTER + 10,
                             "W reserved late after it starved")
        self.assertLessEqual(abs(start - (a["start"] + 120)), 2, "W not planned at A's limit")
        self.assertGreaterEqual(d["start"], w["end"], "D was backfilled ahead of a starving W")

    def test_adaptive_thresholds_shown_and_kept(self):
        jobs, status, ctl, sd, log = self.adaptive()
        self.assertRegex(log, r"sched/easypp: loaded \(.* selective=adaptive-d sel_scale=1\.25 ")
        bad = re.findall(r".*sched/easypp: (?:invalid|unknown|cannot).*", log)
        self.assertEqual(bad, [], "slurmctld complained")
        # The state file: the 200 saved and the 4 jobs of the scenario.
        self.assertIsNotNone(sd, "no slowdowns in the state file")
        self.assertEqual(sd["count_all"], 204, sd)
        self.assertEqual(sum(sd["count"]), 204, sd)
        self.assertGreaterEqual(sd["count"][0], 104, sd)  # A, W, C, D: short and narrow
        # The status: thresholds = scale x its slowdowns' means (1 without any).
        got = status.get("selective_thresholds")
        sds = status.get("slowdowns")
        self.assertIsNotNone(got, "no selective_thresholds in the status file")
        self.assertIsNotNone(sds, "no slowdowns in the status file")
        want = [SCALE * (s / n if n else 1.0) for s, n in zip(sds["sum"], sds["count"])]
        self.assertEqual(len(got), 4, got)
        for g, x in zip(got, want):
            self.assertAlmostEqual(g, x, places=6, msg="thresholds %s, slowdowns %s" % (got, sds))
        self.assertAlmostEqual(got[2], SCALE * 5.0, places=6)  # LN: the saved mean alone
        self.assertEqual(got[1], SCALE)                        # SW: none finished
        # easypp-ctl prints them.
        self.assertEqual(ctl.returncode, 0, ctl.stderr)
        self.assertRegex(ctl.stdout, r"(?m)^  selective +adaptive, SN %.2f, SW 1\.25, LN 6\.25, "
                                     r"LW 1\.25 " % got[0])
        self.assertRegex(ctl.stdout, r"(?m)^  slowdowns +mean \S+ over 204 finished jobs")
        # loaded three times (start, the preload's restart, the last restart)
        self.assertEqual(len(re.findall(r"sched/easypp: loaded \(", log)), 3)

    def result(self, key):
        r = self.results.get(key)
        if isinstance(r, Exception):
            raise r
        jobs, log = r
        for name, d in jobs.items():
            self.assertEqual(d["JobState"], "COMPLETED", "%s: %s" % (name, d))
        a, w = jobs["A"], jobs["W"]
        self.assertGreaterEqual(w["start"], a["end"], "W started before A ended")
        return jobs, log

    def show(self, key, jobs, res):
        a, w, cj, d = jobs["A"], jobs["W"], jobs["C"], jobs["D"]
        t0 = w["submit"]
        sys.stderr.write("\n  Slurm %s, %s (times from W's submission): A %d-%d, W %d-%d, C %d-%d, "
                         "D submitted %d, %d-%d; W's first reservation logged at %s\n" % (
                             "%02d.%02d.%d" % cluster.slurm_version(), key,
                             a["start"] - t0, a["end"] - t0, w["start"] - t0, w["end"] - t0,
                             cj["start"] - t0, cj["end"] - t0, d["submit"] - t0,
                             d["start"] - t0, d["end"] - t0,
                             res[0][0] - t0 if res else "never"))

    def test_easy_reserves_for_the_first_waiting_job(self):
        jobs, log = self.result("easy")
        a, w, cj, d = jobs["A"], jobs["W"], jobs["C"], jobs["D"]
        res = reservations(log, int(w["JobId"]))
        self.show("easy", jobs, res)
        self.assertTrue(res, "no reservation for W under EASY")
        self.assertLess(res[0][0] - w["submit"], STARVES_AFTER,
                        "EASY reserved W only after it waited %d s" % (res[0][0] - w["submit"]))
        self.assertGreaterEqual(cj["start"], w["end"], "EASY backfilled C ahead of W")
        self.assertGreaterEqual(d["start"], w["end"], "EASY backfilled D ahead of W")

    def test_selective_reserves_once_the_job_starves(self):
        jobs, log = self.result("sel")
        a, w, cj, d = jobs["A"], jobs["W"], jobs["C"], jobs["D"]
        res = reservations(log, int(w["JobId"]))
        self.show("sel", jobs, res)
        # Not starving yet: nothing reserved, C is backfilled at once.
        self.assertLess(cj["start"], a["end"], "C was not backfilled while A ran")
        self.assertLessEqual(cj["start"] - cj["submit"], 5, "C waited")
        self.assertLess(cj["start"], w["submit"] + STARVES_AFTER)
        # (With nothing reserved, the pass starts it as a job that fits: "in
        # order" in the plugin's words, not a backfill around a reservation.)
        self.assertRegex(log, r"sched/easypp: started JobId=%s in batch on \S+ \(in order, "
                              r"prediction 600 s, limit 10 min\)" % cj["JobId"])
        # Starving: W reserved from its expansion factor's 1.2 on, at A's
        # planned end (A's start + its limit, u2 having no history).
        self.assertTrue(res, "W never got a reservation")
        first, start = res[0]
        self.assertGreaterEqual(first - w["submit"], STARVES_AFTER - 1,
                                "W reserved before it starved")
        self.assertLessEqual(first - w["submit"], STARVES_AFTER + 10,
                             "W reserved late after it starved")
        self.assertLess(first, d["submit"])
        self.assertLessEqual(abs(start - (a["start"] + 120)), 2, "W not planned at A's limit")
        # ... which D would delay: D waits.
        self.assertGreaterEqual(d["start"], w["end"], "D was backfilled ahead of a starving W")


if __name__ == "__main__":
    unittest.main(verbosity=2)
