"""Integration test: the learned history survives a slurmctld restart, and a
garbage state file never stops slurmctld.

4 one-CPU nodes under sched/easypp with easypp_window=5 (so a history
learned twice would show up as duplicated entries) and easypp_fullness=partial
(so two entries are enough to predict from):
  1. u1 runs two jobs, u2 one; the state file (StateSaveLocation/
     easypp_state.json) then holds them;
  2. slurmctld restarts: the plugin loads the history (log line), the status
     file shows the same entries, none learned a second time, and a new job
     of u1 is predicted from it (easypp-ctl, while it waits);
  3. slurmctld is stopped, the state file replaced by garbage, slurmctld
     started: it runs, the plugin logs the problem, keeps the file as .bad,
     starts with an empty history and schedules jobs;
  4. garbage again: kept as .bad.1, the older .bad untouched;
  5. a FIFO in the state file's place: slurmctld starts at once (the plugin
     never opens it blocking), the FIFO is left where it is (not corrupt
     content: not moved aside) and no save replaces it;
  6. the files are SlurmUser's and root's only (mode 0600) until
     easypp_file_mode opens them.
"""

import os
import re
import stat
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import SharedClusterTest  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS
CTL = os.path.join(os.environ.get("EASYPP_BUILD_DIR", cluster.REPO_ROOT), "plugin",
                   "easypp-ctl")


class RestartTest(SharedClusterTest):

    CLUSTER = dict(scheduler="sched/easypp", nodes=4, cpus=1,
                   scheduler_parameters="sched_interval=2,easypp_interval=1,easypp_window=5,"
                                        "easypp_fullness=partial")

    def saved_rings(self):
        st = self.c.read_json(self.c.state_path()) or {}
        out = {}
        for ring in st.get("users", []):
            if ring.get("estimate_key", -1) == -1:
                out[ring["user"]] = [e[0] for e in ring.get("history", [])]
        return out

    def test_1_history_saved(self):
        c = self.c
        c.wait_log(r"sched/easypp: no state file .* starting with an empty history", timeout=5)
        c.run_history(U1, [2, 3], window=5)
        c.run_history(U2, [1], window=5)
        uid1, uid2 = c.users[U1], c.users[U2]
        rings = c.wait_for("the state file to hold both users",
                           lambda: (lambda r: r if uid1 in r and uid2 in r and
                                    len(r[uid1]) == 2 else None)(self.saved_rings()))
        self.assertEqual(len(rings[uid1]), 2, rings)  # runtimes as Slurm measured them
        self.assertEqual(len(rings[uid2]), 1, rings)
        type(self).before = {U1: sorted(c.history(U1)), U2: c.history(U2)}
        # What users ran is SlurmUser's and root's business only.
        for path in (c.state_path(), c.status_path()):
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600, path)

    def test_2_history_back_after_restart(self):
        c = self.c
        before = self.before
        restarted = int(time.time())
        c.restart_slurmctld()
        m = c.wait_log(r"sched/easypp: history of (\d+) users \((\d+) jobs learned so far\) "
                       r"loaded from \S+easypp_state\.json", timeout=10)
        self.assertEqual(m.group(1), "2")
        self.assertEqual(m.group(2), "3")
        # After a few cycles: the same entries, nothing learned again from
        # the finished jobs slurmctld restored.
        # (The status file the old slurmctld wrote is there too: its totals
        # count the jobs learned before the restart. Wait for the new one.)
        c.wait_for("a status file after the restart", lambda: (lambda st: st.get(
            "written", 0) >= restarted and st.get("totals", {}).get("cycles", 0) >= 3)(
                c.status() or {}), timeout=15)
        st = c.status()
        self.assertEqual(st["totals"]["learned"], 0, st["totals"])
        self.assertEqual(sorted(c.history(U1)), before[U1])
        self.assertEqual(c.history(U2), before[U2])
        # u1's next job is predicted from the restored history (the average
        # of its two runtimes, rounded up), as easypp-ctl shows it while the
        # job waits behind a job on every node: on an idle cluster Slurm's
        # main scheduler may start it first (it did, in CI on 24.11), with
        # nothing to log.
        p = -(-sum(before[U1]) // 2)
        c.wait_idle()  # the nodes registered again (24.11's slurmd take a few seconds)
        blocker = c.submit(wrap="sleep 60", time_min=5, nodes=4, user=U4, extra=["--exclusive"])
        c.wait_state(blocker, "RUNNING", timeout=30)
        j = c.submit(wrap="sleep 1", time_min=5, nodes=1, user=U1)
        seen = c.wait_for("u1's job in easypp-ctl jobs", lambda: (lambda job: job if job and
                          job.get("prediction") is not None else None)(
                              cluster.ctl_job(CTL, c.path("state"), j)), timeout=30)
        c.cancel(blocker, j)
        self.assertTrue(seen.get("from_history"), seen)
        self.assertEqual(seen["prediction"], p, seen)

    def test_3_garbage_state_file(self):
        c = self.c
        path = c.state_path()

        def damage():
            with open(path, "wb") as f:
                f.write(b"{\"format_version\": 1, \"history\": [[[\x00\xff garbage")
        n_loaded = len(re.findall(r"sched/easypp: loaded", c.ctld_log_text()))
        c.restart_slurmctld(while_stopped=damage)
        self.assertTrue(c.slurmctld_alive())
        c.wait_for("the plugin to load again", lambda: len(re.findall(
            r"sched/easypp: loaded", c.ctld_log_text())) > n_loaded, timeout=10)
        m = c.wait_log(r"error: sched/easypp: cannot use the state file: (.*); starting with an "
                       r"empty history \(the file is kept as (\S+)\)", timeout=5)
        self.assertIn("easypp_state.json", m.group(1))
        self.assertTrue(os.path.exists(m.group(2)))
        with open(m.group(2), "rb") as f:
            self.assertIn(b"garbage", f.read())
        j = c.submit(wrap="sleep 1", time_min=1, nodes=2, user=U3)
        self.assertEqual(c.wait_jobs([j], timeout=60)[j]["JobState"], "COMPLETED")
        self.assertTrue(c.slurmctld_alive())
        self.assertNotRegex(c.ctld_log_text(), r"fatal:")
        type(self).first_bad = m.group(2)

    def test_4_older_bad_file_is_kept(self):
        c = self.c
        path = c.state_path()
        c.wait_for("a new state file", lambda: os.path.exists(path), timeout=30)

        def damage():
            with open(path, "wb") as f:
                f.write(b"{ second garbage")
        c.restart_slurmctld(while_stopped=damage)
        m = c.wait_log(r"error: sched/easypp: cannot use the state file: .*\(the file is kept as "
                       r"(\S+\.bad\.1)\)", timeout=15)
        with open(m.group(1), "rb") as f:
            self.assertIn(b"second garbage", f.read())
        with open(self.first_bad, "rb") as f:
            self.assertIn(b"garbage", f.read())  # the first one, untouched
            f.seek(0)
            self.assertNotIn(b"second", f.read())

    def test_5_fifo_state_file(self):
        c = self.c
        path = c.state_path()

        def fifo():
            if os.path.exists(path):
                os.unlink(path)
            os.mkfifo(path, 0o600)
        t0 = time.time()
        c.restart_slurmctld(while_stopped=fifo)
        m = c.wait_log(r"error: sched/easypp: cannot read the state file: (.*); starting with "
                       r"an empty history; the file is left in place", timeout=15)
        sys.stderr.write("\n  FIFO as state file: slurmctld up in %.1fs: %s\n"
                         % (time.time() - t0, m.group(1)))
        self.assertIn("not a regular file", m.group(1))
        # A job is learned; the FIFO is neither moved aside nor replaced.
        c.wait_idle()
        c.run_history(U4, [1], window=5)
        time.sleep(3)
        self.assertTrue(stat.S_ISFIFO(os.lstat(path).st_mode))
        self.assertFalse(os.path.exists(path + ".bad.2"))
        os.unlink(path)

    def test_6_file_mode_setting(self):
        c = self.c
        # A restart: the state file was blocked by the FIFO until one.
        c.set_scheduler_parameters(self.CLUSTER["scheduler_parameters"] +
                                   ",easypp_file_mode=0644", reconfigure=False)
        c.restart_slurmctld()
        c.wait_log(r"sched/easypp: loaded \(.*file_mode=0644", timeout=20)
        c.wait_idle()
        c.run_history(U3, [1], window=5)
        # easypp_file_mode opens the status file only: the state file (every
        # user's runtimes) stays 0600 (docs/security.md)
        for path, mode in ((c.status_path(), 0o644), (c.state_path(), 0o600)):
            c.wait_for("%s to be mode %o" % (path, mode), lambda: os.path.exists(path) and
                       stat.S_IMODE(os.stat(path).st_mode) == mode, timeout=20)
        self.assertEqual(stat.S_IMODE(os.stat(c.state_path()).st_mode), 0o600)


if __name__ == "__main__":
    unittest.main(verbosity=2)
