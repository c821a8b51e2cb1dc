"""Integration tests: sched/easypp in Slurm's own diagnostics.

4 one-CPU nodes under sched/easypp, SlurmctldDebug=verbose and no DebugFlags:
  1. quiet by default: a backfilling scenario (A runs on 3 nodes, W needs all
     4 and holds the reservation, B is backfilled onto the free node) logs
     the starts (as sched/backfill does at info level) but none of the
     per-cycle lines; `scontrol setdebugflags +backfill` turns the cycle,
     reservation and correction lines on at run time, `+backfillmap` the
     per-reservation map, `-backfill` and `-backfillmap` off again; B shows
     Scheduler=Backfill in `scontrol show job`;
  2. sdiag's backfill section is the plugin's: after a few cycles the cycle
     count grows, the last and max cycle times, depth and queue length are
     set, and the backfilled job is counted.
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

PER_CYCLE = re.compile(r"sched/easypp: (cycle|reservation|correction|map):")


def sdiag_backfill(c):
    """sdiag's "Backfilling stats" section as {name: int}."""
    out = c.client("sdiag").stdout
    part = out.split("Backfilling stats", 1)[1]
    part = re.split(r"\n\s*\n", part, 1)[0]
    d = {}
    for line in part.splitlines():
        m = re.match(r"\s+([^:]+):\s+(\d+)", line)
        if m:
            d[m.group(1).strip()] = int(m.group(2))
    return d


class DiagTest(SharedClusterTest):

    CLUSTER = dict(scheduler="sched/easypp", nodes=4, cpus=1, debug="verbose", debug_flags="",
                   scheduler_parameters="sched_interval=2,easypp_interval=1")

    def scenario(self):
        """A on 3 nodes (20 s), W on all 4 (the head), B on 1 (backfilled)."""
        c = self.c
        a = c.submit(wrap="sleep 20", time_min=3, nodes=3, user=U2, name="A")
        c.wait_state(a, "RUNNING", 30)
        w = c.submit(wrap="sleep 1", time_min=1, nodes=4, user=U3, name="W")
        b = c.submit(wrap="sleep 2", time_min=1, nodes=1, user=U1, name="B")
        c.wait_log(r"sched/easypp: started JobId=%d .*\(backfill" % b, timeout=30)
        return a, w, b

    def test_1_quiet_until_debug_flags(self):
        c = self.c
        a, w, b = self.scenario()
        jb = c.job(b)
        self.assertEqual(jb["Scheduler"], "Backfill", jb)
        time.sleep(3)  # a few more cycles with a reservation
        log = c.ctld_log_text()
        self.assertIsNone(PER_CYCLE.search(log), PER_CYCLE.search(log))
        type(self).quiet_log_lines = log.count("\n")
        # on at run time
        c.scontrol("setdebugflags", "+backfill")
        # (W's reservation line came before: they are logged when new or moved;
        # the other tests, with the flag on from the start, read them)
        c.wait_log(r"BACKFILL: sched/easypp: cycle: trigger=\w+ partitions=1 pending=1 "
                   r"running=1 tested=\d+ started=0\(backfill 0\) het=0\(undone 0\) "
                   r"reservations=1 ", timeout=15)
        self.assertNotRegex(c.ctld_log_text(), r"sched/easypp: map:")
        c.scontrol("setdebugflags", "+backfillmap")
        c.wait_log(r"BACKFILL_MAP: sched/easypp: map: partition=batch JobId=%d shadow=\d+ "
                   r"nodes=n\[?" % w, timeout=15)
        # and off again
        c.scontrol("setdebugflags", "-backfill")
        c.scontrol("setdebugflags", "-backfillmap")
        time.sleep(2)  # a cycle may be logging while the flags change
        n = len(PER_CYCLE.findall(c.ctld_log_text()))
        time.sleep(4)
        self.assertEqual(len(PER_CYCLE.findall(c.ctld_log_text())), n)
        c.wait_jobs([a, w, b], timeout=120)

    def test_2_sdiag_backfill_section(self):
        c = self.c
        first = sdiag_backfill(c)
        self.assertGreater(first["Total cycles"], 0, first)
        a, w, b = self.scenario()
        time.sleep(3)
        d = sdiag_backfill(c)
        sys.stderr.write("\n  sdiag backfill: %s\n" % d)
        self.assertGreater(d["Total cycles"], first["Total cycles"] + 2)
        self.assertGreater(d["Last cycle"], 0)
        self.assertGreaterEqual(d["Max cycle"], d["Last cycle"])
        self.assertGreater(d["Mean cycle"], 0)
        self.assertGreaterEqual(d["Last queue length"], 1)  # W pending
        self.assertGreaterEqual(d["Last depth cycle"], 1)
        self.assertGreaterEqual(d["Last table size"], 1)  # W's reservation
        self.assertGreaterEqual(d["Total backfilled jobs (since last slurm start)"],
                                first["Total backfilled jobs (since last slurm start)"] + 1)
        self.assertGreaterEqual(d["Total backfilled jobs (since last slurm start)"], 2)  # test 1
        st = c.status()
        self.assertEqual(d["Total backfilled jobs (since last slurm start)"],
                         st["totals"]["started_backfill"])
        c.wait_jobs([a, w, b], timeout=120)


if __name__ == "__main__":
    unittest.main(verbosity=2)
