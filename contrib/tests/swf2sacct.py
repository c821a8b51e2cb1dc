#!/usr/bin/env python3
"""Test helper: write an SWF log as the sacct export easypp-sacct2swf reads.

The inverse of easypp-sacct2swf's mapping, for round-trip tests: a real
archive log turned into "accounting" and back must replay identically.
Usage: swf2sacct.py [--iso] [--max-jobs N] [--cluster NAME] FILE.swf[.gz] > out.sacct
Times are Unix seconds (as sacct prints them with SLURM_TIME_FORMAT=%s), or
ISO 8601 in UTC with --iso (run the converter with TZ=UTC then).
"""
import argparse
import gzip
import sys
import time

FORMAT = ("JobIDRaw|JobID|Cluster|Partition|User|UID|Group|GID|JobName|Submit|Eligible|"
          "Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqCPUS|ReqMem|State")
STATE = {1: "COMPLETED", 0: "FAILED", 5: "CANCELLED"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("swf")
    ap.add_argument("--iso", action="store_true")
    ap.add_argument("--max-jobs", type=int, default=0)
    ap.add_argument("--cluster", default="archive")
    a = ap.parse_args()
    opener = gzip.open if a.swf.endswith(".gz") else open
    t0 = 0
    out = sys.stdout
    out.write(FORMAT + "\n")

    def ts(t):
        if t is None:
            return "Unknown"
        if a.iso:
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
        return str(t)

    n = 0
    with opener(a.swf, "rt") as f:
        for line in f:
            if line.startswith(";"):
                if "UnixStartTime:" in line:
                    t0 = int(line.split(":", 1)[1])
                continue
            v = line.split()
            if len(v) != 18:
                continue
            job, submit, wait, run, alloc = (int(float(x)) for x in v[:5])
            req, reqtime, status, user, group, part = (
                int(float(v[7])), int(float(v[8])), int(v[10]), int(v[11]), int(v[12]),
                int(v[15]))
            sub = t0 + submit
            started = wait >= 0 and run >= 0 and alloc > 0
            start = sub + wait if started else None
            end = start + run if started else sub
            limit = "UNLIMITED" if reqtime <= 0 else str((reqtime + 59) // 60)
            out.write("|".join([
                str(job), str(job), a.cluster, "p%d" % part if part >= 0 else "batch",
                "u%d" % user, str(10000 + user), "g%d" % group, str(20000 + group),
                "job%d" % job, ts(sub), ts(sub), ts(start), ts(end),
                str(run if started else 0), limit, str(alloc if started else 0),
                str(req) if req > 0 else "", "", STATE.get(status, "FAILED")]) + "\n")
            n += 1
            if a.max_jobs and n >= a.max_jobs:
                break


if __name__ == "__main__":
    main()
