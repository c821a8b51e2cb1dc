#!/usr/bin/env python3
"""Harness cost against the parse floor (issue 9 point 2).

    floor_bench.py [--repeat N] [--presets LIST] [--cpu-limit S] [--scale] [LOG...]

For every LOG (default: every *.swf and *.swf.gz under $WORKLOADS and its
subdirectories), measures the parse floor: the CPU time (user + system, of
the whole process, from wait4()) of `easypp-sim -q -w LOG --parse-only`,
which reads and parses the log and replays nothing. Then, per preset (default:
every preset easypp-sim --help lists), the CPU time of the whole process
`easypp-sim -q -w LOG -s PRESET` (read, replay, report) and its ratio to the
floor. Each figure is the smallest of --repeat runs (default 3; three times as
many for figures under 0.2 s): the machine
is shared, and the smallest CPU time is the least disturbed one.

The targets (printed, never asserted): every cell within 3x its log's floor,
no cell above 2 s of CPU. Cells over either are marked and counted.

--scale also replays a synthetic workload (the built-in generator,
easypp-gen's, at load 1.2) of 100,000 and of 1,000,000 jobs under easy++ and
prints the CPU per job of each and their ratio (target: the 1M one within 2x
of the 100k one's per-job cost).

Environment: WORKLOADS (default ../shared/workloads), EASYPP_SIM (default the
build tree's tools/easypp-sim).
"""
import argparse
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))


class OverLimit(Exception):
    """A run stopped by --cpu-limit (SIGXCPU or SIGKILL from RLIMIT_CPU)."""


CPU_LIMIT = 0  # seconds; 0: none


def _limit_cpu():
    import resource
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU would dump core


def cpu_of(cmd):
    """Run cmd with its output discarded; (cpu seconds, peak RSS MB, status, stderr).

    Under /usr/bin/time, which writes the command's peak RSS: a child forked
    from this Python process would report Python's peak as its own (Linux
    keeps the larger of the two across exec). The CPU time comes from
    wait4() on /usr/bin/time, which includes the command's (microseconds;
    /usr/bin/time itself costs well under a millisecond)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=_limit_cpu if CPU_LIMIT else None)
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        lines = rss.read().split()
        peak = int(lines[-1]) / 1024.0 if lines and lines[-1].isdigit() else float("nan")
    return ru.ru_utime + ru.ru_stime, peak, p.returncode, err


def best_of(cmd, repeat):
    best = None
    runs = 0
    while runs < repeat or (best[0] < 0.2 and runs < 3 * repeat):  # small: more samples
        runs += 1
        cpu, rss, rc, err = cpu_of(cmd)
        # (/usr/bin/time reports the child's signal as 128 + its number;
        # the kernel's CPU accounting can stop it a little before the
        # limit as rusage counts it.)
        stopped = rc in (128 + signal.SIGXCPU, 128 + signal.SIGKILL,
                         -signal.SIGXCPU, -signal.SIGKILL)
        if CPU_LIMIT and rc != 0 and (cpu >= CPU_LIMIT - 0.5 or stopped):
            if best is not None:  # an earlier repeat finished: keep it
                break
            raise OverLimit(cpu)
        if rc != 0:
            raise RuntimeError("%s: exit status %d: %s" % (" ".join(cmd), rc, err.strip()))
        if best is None or cpu < best[0]:
            best = (cpu, rss)
    return best


def presets_of(sim):
    """The preset names from easypp-sim --help: "Presets: a, b, ..., site (...),
    and selective reservations: sel, sel-d (...), ..." up to --scheduler-file;
    the parenthesized remarks and the phrases of several words are not names."""
    text = subprocess.run([sim, "--help"], capture_output=True, text=True).stdout
    m = re.search(r"Presets:(.*?)--scheduler-file", text, re.S)
    if not m:
        raise RuntimeError("no preset list in %s --help" % sim)
    body = re.sub(r"\([^)]*\)", " ", m.group(1))
    names = []
    for part in re.split(r"[,:]", body):
        words = [w for w in part.split() if w != "and"]
        if len(words) == 1 and re.fullmatch(r"[a-z][a-z0-9+-]*", words[0]):
            names.append(words[0])
    if "easy" not in names or "conservative" not in names:
        raise RuntimeError("unexpected preset list in %s --help: %s" % (sim, names))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--presets", default="")
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--scale-only", action="store_true")
    ap.add_argument("--cpu-limit", type=int, default=0, metavar="SECONDS",
                    help="stop a replay after this much CPU (RLIMIT_CPU) and print the cell "
                         "as '> SECONDS' (default: no limit)")
    ap.add_argument("logs", nargs="*")
    a = ap.parse_args()
    global CPU_LIMIT
    CPU_LIMIT = max(0, a.cpu_limit)
    workloads = os.environ.get("WORKLOADS", os.path.join(HERE, "..", "..", "shared", "workloads"))
    sim = os.environ.get("EASYPP_SIM", os.path.join(HERE, "..", "tools", "easypp-sim"))
    if not os.access(sim, os.X_OK):
        print("floor_bench: %s not built (run make)" % sim, file=sys.stderr)
        return 2
    presets = a.presets.split(",") if a.presets else presets_of(sim)
    logs = a.logs or sorted(glob.glob(os.path.join(workloads, "**", "*.swf"), recursive=True) +
                            glob.glob(os.path.join(workloads, "**", "*.swf.gz"), recursive=True))
    logs = [l if os.path.isabs(l) or os.path.exists(l) else os.path.join(workloads, l) for l in logs]
    over = 0
    cells = 0
    if not a.scale_only:
        print("CPU seconds (user + system, whole process, best of %d) per log: the parse floor "
              "(easypp-sim -q -w LOG --parse-only), then per preset (easypp-sim -q -w LOG -s PRESET) "
              "CPU and CPU / floor; '*' marks a cell over 3x its floor or over 2 s" % a.repeat)
        worst = (0.0, "")
        for log in logs:
            name = os.path.relpath(log, workloads) if log.startswith(workloads) else log
            try:
                floor, frss = best_of([sim, "-q", "-w", log, "--parse-only"], a.repeat)
            except OverLimit:
                print("\n%s: parse floor > %d s CPU (stopped by --cpu-limit): not measured"
                      % (name, CPU_LIMIT))
                continue
            print("\n%s: parse floor %.3f s CPU (peak %.1f MB)" % (name, floor, frss))
            print("  %-13s %9s %7s %9s" % ("preset", "CPU(s)", "x floor", "peak MB"))
            for p in presets:
                try:
                    cpu, rss = best_of([sim, "-q", "-w", log, "-s", p], a.repeat)
                except OverLimit as e:
                    over += 1
                    cells += 1
                    worst = max(worst, (e.args[0] / floor if floor > 0 else float("inf"),
                                        "%s %s (stopped)" % (name, p)))
                    print("  %-13s %9s %7s %9s  * (stopped by --cpu-limit)" % (
                        p, "> %d" % CPU_LIMIT, "> %.0f" % (CPU_LIMIT / floor) if floor > 0
                        else "-", "-"))
                    sys.stdout.flush()
                    continue
                ratio = cpu / floor if floor > 0 else float("inf")
                bad = ratio > 3 or cpu > 2
                over += bad
                cells += 1
                if ratio > worst[0]:
                    worst = (ratio, "%s %s" % (name, p))
                print("  %-13s %9.3f %7.2f %9.1f%s" % (p, cpu, ratio, rss, "  *" if bad else ""))
            sys.stdout.flush()
        print("\n%d cells (%d logs x %d presets): %d over 3x the floor or 2 s; largest ratio %.2f (%s)"
              % (cells, len(logs), len(presets), over, worst[0], worst[1]))
    if a.scale or a.scale_only:
        print("\nSynthetic workload at load 1.2 under easy++ (easypp-sim -q -w "
              "synthetic:seed=1,jobs=N,load=1.2 -s easy++), CPU per job, best of %d:" % a.repeat)
        per = {}
        for n in (100000, 1000000):
            spec = "synthetic:seed=1,jobs=%d,load=1.2" % n
            try:
                floor, _ = best_of([sim, "-q", "-w", spec, "--parse-only"], a.repeat)
                cpu, rss = best_of([sim, "-q", "-w", spec, "-s", "easy++"], a.repeat)
            except OverLimit:
                print("  %8d jobs: > %d s CPU (stopped by --cpu-limit)" % (n, CPU_LIMIT))
                per[n] = None
                continue
            per[n] = cpu / n
            print("  %8d jobs: generation floor %.3f s, whole process %.3f s CPU = %.2f us/job, "
                  "peak %.1f MB" % (n, floor, cpu, 1e6 * cpu / n, rss))
        if per[1000000] is None or per[100000] is None:
            print("  1M per-job cost / 100k per-job cost: not measured (a run was stopped)")
        else:
            print("  1M per-job cost / 100k per-job cost: %.2f (target: within 2)"
                  % (per[1000000] / per[100000]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
