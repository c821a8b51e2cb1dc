#!/usr/bin/env python3
"""Shaken comparison tables (markdown) over several logs: the verdicts that
docs/guard.md, docs/conventions.md and the README report.

    shaken_table.py [options] LOG[@PROCS]... -- SCHEDULER...

Each LOG (a file name under --workloads, optionally @PROCS for the machine
size) is replayed by easypp-sim under every SCHEDULER with --shake N: N
copies with the offered load spread over +-1% (paired: every scheduler sees
the same copies). Per scheduler the table gives, over the copies, the mean
+- half-width of the 95% confidence interval of the average wait, the
average bounded slowdown and the longest wait; the longest wait against the
first scheduler's (mean of the per-copy ratios, and the worst copy); and,
with --gain-ref NAME, the share of NAME's gain over the first scheduler that
each scheduler keeps (ratio of the means: 100% is NAME's gain, 0% is none).

Figures are what easypp-sim printed (--json); nothing is asserted.
"""
import argparse
import json
import os
import subprocess
import sys


def run(sim, path, procs, scheds, shake, extra):
    cmd = [sim, "-q", "-w", path] + (["--procs", str(procs)] if procs else []) + \
        ["-s", ",".join(scheds), "--shake", str(shake), "--top-users", "0"] + extra + ["--json"]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return cmd, json.loads(out)


def ci(s):
    lo, hi = s["ci95"]
    return (hi - lo) / 2


def fmt(mean, half, digits=1):
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def table(doc, gain_ref):
    runs = doc["runs"]
    base = runs[0]["shaken"]
    ref = None
    if gain_ref:
        ref = next((r["shaken"] for r in runs if r["scheduler"] == gain_ref), None)
        if ref is None:
            sys.exit(f"shaken_table: --gain-ref {gain_ref} is not among the schedulers")
    head = ["scheduler", "wait (min)", "bsld", "longest wait (h)", "vs first: mean, worst copy"]
    if ref:
        head += [f"wait gain kept", f"bsld gain kept"]
    head += ["wins wait/bsld"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    copies = base["copies"]
    for r in runs:
        s = r["shaken"]
        w, b, m = s["avg_wait_minutes"], s["avg_bounded_slowdown"], s["max_wait_minutes"]
        ratios = [x / y if y > 0 else float("inf")
                  for x, y in zip(s["per_copy"]["max_wait_minutes"],
                                  base["per_copy"]["max_wait_minutes"])]
        row = [f"`{r['scheduler']}`", fmt(w["mean"], ci(w)), fmt(b["mean"], ci(b), 2),
               f"{m['mean'] / 60:.0f} ± {ci(m) / 60:.0f}",
               f"{sum(ratios) / len(ratios):.2f}x, {max(ratios):.2f}x"]
        if ref:
            for key in ("avg_wait_minutes", "avg_bounded_slowdown"):
                g_ref = base[key]["mean"] - ref[key]["mean"]
                g = base[key]["mean"] - s[key]["mean"]
                row.append(f"{100 * g / g_ref:.0f}%" if g_ref > 0 else
                           f"(no gain: {g:+.1f})")
        wins = s.get("wins_vs_first")
        row.append("-" if r is runs[0] or not wins else
                   f"{wins['avg_wait_minutes']}/{copies}, {wins['avg_bounded_slowdown']}/{copies}")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(usage="%(prog)s [options] LOG[@PROCS]... -- SCHEDULER...",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", default=os.environ.get("EASYPP_SIM", os.path.join(here, "..", "tools", "easypp-sim")))
    ap.add_argument("--workloads", default=os.environ.get("WORKLOADS", os.path.join(here, "..", "..", "shared", "workloads")))
    ap.add_argument("--shake", type=int, default=9, help="copies per log (default 9)")
    ap.add_argument("--gain-ref", help="the scheduler whose gain over the first is 100%%")
    ap.add_argument("--extra", default="", help="more easypp-sim options, one string")
    ap.add_argument("logs", nargs="+", metavar="LOG[@PROCS]")
    argv = sys.argv[1:]
    scheds = ["easy", "easy++"]
    if "--" in argv:  # the schedulers follow "--" (argparse would drop it)
        i = argv.index("--")
        argv, scheds = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    logs = a.logs
    if not logs or not scheds:
        sys.exit("shaken_table: give LOG[@PROCS]... -- SCHEDULER...")
    for spec in logs:
        name, _, procs = spec.partition("@")
        path = os.path.join(a.workloads, name)
        cmd, doc = run(a.sim, path, procs, scheds, a.shake, a.extra.split())
        sh = doc["shake"]
        inp = doc["input"]
        print(f"### {name} on {procs or inp['procs']} processors\n")
        loads = sh["offered_loads"]
        print(f"{sh['copies']} copies, offered load {min(loads):.3f} to {max(loads):.3f} "
              f"(whole log); mean ± half-width of the 95% confidence interval.\n")
        print("\n".join(table(doc, a.gain_ref)))
        shown = " ".join(c if " " not in c and "," not in c else f"'{c}'"
                         for c in ["easypp-sim"] + cmd[1:-1])
        print(f"\n`{shown.replace(path, '$W/' + name)}`\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
