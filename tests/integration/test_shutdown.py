"""Integration test: slurmctld stops promptly while a cycle is yielding.

From Slurm 25.11.2 slurmctld's shutdown waits, on check_bf_running_cond
under check_bf_running_lock, until slurmctld_diag_stats.bf_active is clear;
sched/backfill clears it under that mutex and broadcasts. A scheduler that
clears bf_active without the broadcast leaves slurmctld waiting forever at
shutdown (it must be killed); one that keeps cycling once
slurmctld_config.shutdown_time is set delays it. sched/easypp clears it as
sched/backfill does (easypp_bf_active() of the release's compat header)
and ends a cycle at its next yield once slurmctld is shutting down.

8 one-CPU nodes: A holds 7 of them, W (all 8) is blocked behind it, and 30
one-node candidates that exclude the only free node (n8) are tested one by
one, with a yield of 0.3 s before nearly every test (easypp_yield_interval=1,
easypp_yield_sleep=300000): a cycle lasts about 9 s and is yielding nearly
all the time. Once a cycle has yielded, slurmctld gets SIGTERM in the middle
of the next one and must exit within 15 s (a hang here is the bug). On
22.05 and 24.11 (no condition variable) the test checks the same: a
prompt stop.

Seen on 26.05.3 daemons: with the plugin as it is, slurmctld exits 0.2-0.4 s
after SIGTERM; with easypp_bf_active() as a plain write and no
shutdown_time check (the plugin before the port), slurmctld ignored SIGTERM
until it was killed 35 s later, and this test failed.
"""

import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from test_load import require_plugin  # noqa: E402

USERS = cluster.TEST_USERS


class ShutdownWhileYieldingTest(unittest.TestCase):

    def setUp(self):
        require_plugin(self)

    def test_stop_during_a_yielding_cycle(self):
        c = cluster.Cluster(
            scheduler="sched/easypp", nodes=8, cpus=1,
            scheduler_parameters="sched_interval=2,easypp_interval=1,"
                                 "easypp_yield_interval=1,easypp_yield_sleep=300000")
        c.start()
        try:
            a = c.submit(wrap="sleep 170", time_min=3, nodes=7, user=USERS[1], name="A",
                         extra=("--nodelist=n[1-7]",))
            c.wait_state(a, "RUNNING", 30)
            c.submit(wrap="sleep 1", time_min=1, nodes=8, user=USERS[2], name="W")
            for i in range(30):
                c.submit(wrap="sleep 1", time_min=1, nodes=1, user=USERS[i % 4],
                         name="cand%d" % i, extra=("--exclude=n8",))
            m = c.wait_log(r"sched/easypp: cycle: .* tested=(\d+) .* yields=([1-9]\d*) ",
                           timeout=120)
            sys.stderr.write("\n  a cycle yielded %s times (tested %s)\n"
                             % (m.group(2), m.group(1)))
            # the next cycle starts within easypp_interval (1 s): stop in its middle
            time.sleep(3)
            t0 = time.time()
            os.killpg(c.ctld.pid, signal.SIGTERM)
            try:
                c.ctld.wait(15)
            except subprocess.TimeoutExpired:
                self.fail("slurmctld did not exit within 15 s of SIGTERM during a yielding "
                          "cycle (waiting for bf_active?)")
            took = time.time() - t0
            sys.stderr.write("  slurmctld stopped %.1f s after SIGTERM\n" % took)
            self.assertNotRegex(c.ctld_log_text(), r"BUG: |fatal:")
        finally:
            c.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
