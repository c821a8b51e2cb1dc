#!/usr/bin/env python3
"""Closed-loop comparison tables (markdown): docs/closed-loop.md and the
README's closed-loop rows.

    closed_loop_table.py [--sim PATH] [--seeds N] [--users LIST] [--days D]
                         [--procs P] -- SCHEDULER...

Each site is the session model's (easypp-sim --workload sessions:...) with
U users, replayed with --feedback under every SCHEDULER, once per seed
(--shake does not apply to a closed system: its load is what its users make
of it, so the spread comes from independent sites, seeds 1..N). Per
scheduler: mean +- half-width of the 95% confidence interval over the seeds
of the throughput (jobs submitted per hour), the session length (jobs per
session), the average wait and bounded slowdown, and the average response
of the jobs of each runtime class (<=1 min, 1-10 min, >10 min); and the
mean of the per-seed changes against the first scheduler, with the number
of seeds in which the scheduler is better.

Figures are what easypp-sim printed (--json); nothing is asserted.
"""
import argparse
import json
import math
import subprocess
import sys

# Student's t, 97.5% quantile, by degrees of freedom (n - 1).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 14: 2.145, 19: 2.093, 29: 2.045}


def t975(df):
    keys = sorted(k for k in T975 if k <= df)
    return T975[keys[-1]] if keys else float("nan")


def spread(xs):
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, 0.0
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, t975(n - 1) * sd / math.sqrt(n)


def run(sim, users, days, procs, seed, scheds):
    w = f"sessions:seed={seed},users={users},days={days},procs={procs}"
    cmd = [sim, "-q", "-w", w, "--feedback", "-s", ",".join(scheds), "--top-users", "0", "--json"]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return cmd, json.loads(out)


FIGS = [
    ("jobs/h", lambda r: r["closed_loop"]["throughput_per_hour"], +1, 2),
    ("jobs/session", lambda r: r["closed_loop"]["avg_session_jobs"], +1, 2),
    ("wait (min)", lambda r: r["avg_wait_minutes"], -1, 1),
    ("bsld", lambda r: r["avg_bounded_slowdown"], -1, 1),
    ("resp <=1m", lambda r: r["closed_loop"]["runtime_classes"][0]["avg_response_minutes"], -1, 1),
    ("resp 1-10m", lambda r: r["closed_loop"]["runtime_classes"][1]["avg_response_minutes"], -1, 1),
    ("resp >10m", lambda r: r["closed_loop"]["runtime_classes"][2]["avg_response_minutes"], -1, 1),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default="tools/easypp-sim")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--users", default="100,200")
    ap.add_argument("--days", type=int, default=28)
    ap.add_argument("--procs", type=int, default=128)
    ap.add_argument("scheds", nargs="+")
    a = ap.parse_args()
    for users in [int(u) for u in a.users.split(",")]:
        per = {s: [] for s in a.scheds}  # scheduler -> list of run dicts, by seed
        for seed in range(1, a.seeds + 1):
            cmd, d = run(a.sim, users, a.days, a.procs, seed, a.scheds)
            for s, r in zip(a.scheds, d["runs"]):
                per[s].append(r)
        print(f"\n{users} users, {a.days} days, {a.procs} processors, seeds 1..{a.seeds} "
              f"(`{' '.join(cmd[:3])} sessions:seed=N,users={users},days={a.days},procs={a.procs} "
              f"--feedback -s {','.join(a.scheds)}`):\n")
        print("| scheduler | " + " | ".join(f[0] for f in FIGS) + " |")
        print("|---|" + "---|" * len(FIGS))
        base = per[a.scheds[0]]
        for s in a.scheds:
            cells = []
            for name, get, better, digits in FIGS:
                m, h = spread([get(r) for r in per[s]])
                cell = f"{m:.{digits}f} ± {h:.{digits}f}"
                if s != a.scheds[0]:
                    ch = [100.0 * (get(r) - get(b)) / get(b) for r, b in zip(per[s], base) if get(b)]
                    wins = sum(1 for r, b in zip(per[s], base) if better * (get(r) - get(b)) > 0)
                    cell += f" ({spread(ch)[0]:+.1f}%, {wins}/{len(ch)})"
                cells.append(cell)
            print(f"| {s} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
