#!/usr/bin/env python3
"""What each of this project's conventions changes (docs/conventions.md).

    conventions.py [--shake N] [--scheduler S] [LOG...]

For every LOG (default: the four thesis logs at the sizes of their headers),
replays SCHEDULER (default easy++) with this project's conventions and once
per departure towards the authors' simulator:

    propagation=no       predictions fixed at submission (this project's old default)
    --pass-per-event     a scheduling pass after each event, not one per timestamp
    --no-correction-pass no pass when only corrections happened at a time
    --clip-runtime       runtimes clipped to the estimate
    rounding=down        an average of runtimes rounded down, not up

each with --shake N (default 9). The copies are the same in every replay
(the load factors depend only on N), so the change of a departure is
measured per copy (paired) and reported as mean +- half-width of the 95%
confidence interval over the copies, with the replays' own figures.
"""
import argparse
import json
import math
import os
import subprocess
import sys

DEPARTURES = [
    ("this project's conventions", [], ""),
    ("propagation=no", [], ":propagation=no"),
    ("--pass-per-event", ["--pass-per-event"], ""),
    ("--no-correction-pass", ["--no-correction-pass"], ""),
    ("--clip-runtime", ["--clip-runtime"], ""),
    ("rounding=down", [], ":rounding=down"),
]
LOGS = ["KTH-SP2-1996-2.1-cln.swf", "CTC-SP2-1996-3.1-cln.swf.gz",
        "SDSC-SP2-1998-4.2-cln.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz"]
# Two-sided 95% Student t quantiles for n - 1 degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 14: 2.145, 19: 2.093, 24: 2.064, 29: 2.045}


def half_width(xs):
    n = len(xs)
    if n < 2:
        return 0.0
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    t = T975.get(n - 1) or T975[min(T975, key=lambda k: abs(k - (n - 1)))]
    return t * sd / math.sqrt(n)


def replay(sim, path, sched, opts, shake):
    cmd = [sim, "-q", "-w", path, "-s", sched, "--shake", str(shake), "--top-users", "0"] + opts
    out = subprocess.run(cmd + ["--json"], check=True, stdout=subprocess.PIPE, text=True).stdout
    return cmd, json.loads(out)["runs"][0]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", default=os.environ.get("EASYPP_SIM", os.path.join(here, "..", "tools", "easypp-sim")))
    ap.add_argument("--workloads", default=os.environ.get("WORKLOADS", os.path.join(here, "..", "..", "shared", "workloads")))
    ap.add_argument("--shake", type=int, default=9)
    ap.add_argument("--scheduler", default="easy++")
    ap.add_argument("logs", nargs="*", default=LOGS)
    a = ap.parse_args()
    print(f"{a.scheduler}, each log shaken ({a.shake} copies, offered load +-1%): "
          "mean +- 95% CI over the copies; change: paired, per copy.\n")
    print("| log | convention replayed | wait (min) | change | bsld | change | longest wait (h) |")
    print("|---|---|---|---|---|---|---|")
    for log in a.logs:
        path = os.path.join(a.workloads, log)
        base = None
        for name, opts, knobs in DEPARTURES:
            _, r = replay(a.sim, path, a.scheduler + knobs, opts, a.shake)
            s = r["shaken"]
            w, b = s["per_copy"]["avg_wait_minutes"], s["per_copy"]["avg_bounded_slowdown"]
            m = s["per_copy"]["max_wait_minutes"]
            if base is None:
                base = (w, b)
                dw = db = "-"
            else:
                cw = [100 * (x / y - 1) for x, y in zip(w, base[0])]
                cb = [100 * (x / y - 1) for x, y in zip(b, base[1])]
                dw = f"{sum(cw) / len(cw):+.1f}% ± {half_width(cw):.1f}"
                db = f"{sum(cb) / len(cb):+.1f}% ± {half_width(cb):.1f}"
            mean = lambda xs: sum(xs) / len(xs)
            print(f"| {log.split('-cln')[0]} | {name} | {mean(w):.1f} ± {half_width(w):.1f} | {dw} | "
                  f"{mean(b):.2f} ± {half_width(b):.2f} | {db} | {mean(m) / 60:.0f} ± {half_width(m) / 60:.0f} |")
            sys.stdout.flush()
    print(f"\n`bench/conventions.py --shake {a.shake} --scheduler {a.scheduler}` "
          "(each row: `easypp-sim -w LOG -s SCHEDULER[:knob] --shake N [option]`)")


if __name__ == "__main__":
    main()
