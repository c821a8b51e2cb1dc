#!/usr/bin/env python3
"""Scheduling-cycle benchmark: sched/easypp against sched/backfill on the
same queue of a real localhost Slurm cluster (Python 3 stdlib, run as root).

One cluster (default 48 nodes x 16 CPUs, 20 users) is started with
SchedulerType=sched/backfill. Every user first runs a few short jobs (its
history, so the plugin's predictions differ from the time limits); then one
long "blocker" per node and one 2-CPU "filler" per node occupy every CPU,
and thousands of jobs (default 3000) of varied sizes, users and time limits
are submitted behind them. The queue is then measured, unchanged, under both
schedulers: slurmctld is restarted from its saved state with the other
SchedulerType (same jobs, same ids, same running blockers), alternating
backfill, easypp, backfill, easypp ... (--repeat), so both plan exactly the
same queue and noise from other work on the machine hits both alike.

Scenarios (--scenarios):
  full  every CPU busy: nothing can start. Pure planning cost of a blocked
        queue (EASY++ reserves for the head and stops: nothing is free).
  frag  the fillers are cancelled: 2 free CPUs on every node, but every
        queued job needs 4-CPU tasks or whole nodes, so still nothing can
        start; now both schedulers test candidate after candidate (up to
        the max-jobs-tested limit).
  flow  jobs can start: per scheduler, a fresh queue (the same submissions,
        seeded) waits behind whole-node blockers, which are then cancelled
        all at once; jobs started per cycle and in total are reported.

Read per cycle: sched/backfill from `sdiag` (polled; Last cycle, Last depth
cycle, Last depth cycle (try sched), backfilled jobs), sched/easypp from its
DebugFlags=Backfill line "BACKFILL: sched/easypp: cycle: ... tested=.. time=..us"
(SlurmctldDebug=debug, used for both schedulers) and its status file's totals. Also the CPU
time of the scheduler's own thread (bckfl / easypp, from /proc), a figure
measured the same way for both.

The two cycle times are not defined identically: sdiag's backfill cycle
starts after build_job_queue() and leaves out lock-yield sleeps; the
plugin's time= runs from before it takes the locks to after it collected
its status (job scan, queue building, yield sleeps included; the status
file write is not included). The thread CPU column covers everything.

Figures are printed (and written as JSON with --json), never asserted: the
machine is shared. See docs/slurm-benchmark.md.

    sudo python3 bench/slurm_bench.py --quick     # < 2 min
    sudo python3 bench/slurm_bench.py             # full size
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import cluster  # noqa: E402

BF = "sched/backfill"
EP = "sched/easypp"
# The schedulers compared (--schedulers), each a SchedulerType and settings:
#   backfill    sched/backfill, matched limits, a reservation for every job
#               it reaches (Slurm's default bf_job_part_count_reserve=0)
#   bf-min      sched/backfill planning as few jobs as it can:
#               bf_job_part_count_reserve=1 (one reservation per partition,
#               like EASY), the same matched limits
#   easypp      sched/easypp (the plugin under test)
#   easypp-old  sched/easypp from --plugin-before DIR (an earlier build)
KIND = {"backfill": BF, "bf-min": BF, "easypp": EP, "easypp-old": EP}
SHORT = {k: k for k in KIND}
THREAD_NAME = {BF: "bckfl", EP: "easypp"}
BLOCKER_SLEEP = 10 ** 6  # seconds: blockers never end by themselves


class BenchError(RuntimeError):
    pass


def say(msg):
    sys.stderr.write("[bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


# --- settings -------------------------------------------------------------------

def scheduler_parameters(sched, a):
    """Comparable SchedulerParameters: same interval, max jobs tested, time
    budget and lock-yield settings; the main scheduler's the same for both.
    `sched` is a label of KIND."""
    common = ["sched_interval=%d" % a.sched_interval]
    label, sched = sched, KIND[sched]
    if sched == BF:
        p = ["bf_interval=%d" % a.interval, "bf_max_job_test=%d" % a.max_job_test,
             "bf_max_time=%d" % a.max_time, "bf_yield_interval=%d" % a.yield_interval,
             "bf_yield_sleep=%d" % a.yield_sleep]
        if a.bf_window:
            p.append("bf_window=%d" % a.bf_window)
        if label == "bf-min":
            p.append("bf_job_part_count_reserve=1")
    else:
        p = ["easypp_interval=%d" % a.interval, "easypp_max_job_test=%d" % a.max_job_test,
             "easypp_max_time=%d" % a.max_time,
             "easypp_yield_interval=%d" % a.yield_interval,
             "easypp_yield_sleep=%d" % a.yield_sleep]
    extra = a.bf_extra if sched == BF else a.easypp_extra
    if extra:
        p += [x for x in extra.split(",") if x]
    return ",".join(common + p)


# --- the workload ---------------------------------------------------------------

def weighted(rng, table):
    """table: [(value, weight), ...]"""
    total = sum(w for _, w in table)
    x = rng.random() * total
    for v, w in table:
        x -= w
        if x < 0:
            return v
    return table[-1][0]


class Spec:
    """One sbatch submission: user, options, time limit (min), runtime (s)."""

    def __init__(self, user, opts, limit, runtime, kind):
        self.user, self.opts, self.limit, self.runtime, self.kind = \
            user, list(opts), int(limit), int(runtime), kind

    def width(self, cpus_per_node):
        o = " ".join(self.opts)
        if "--exclusive" in o:
            return int(re.search(r"--nodes=(\d+)", o).group(1)) * cpus_per_node
        nt = re.search(r"--ntasks=(\d+)", o)
        if nt:
            return int(nt.group(1)) * 4
        nodes = int(re.search(r"--nodes=(\d+)", o).group(1))
        per = int(re.search(r"--ntasks-per-node=(\d+)", o).group(1))
        return nodes * per * 4


def user_profiles(users, seed):
    """Each user's habit: the fraction of its time limit its jobs run, and
    the runtime of its history jobs (seconds)."""
    rng = random.Random(seed * 7919 + 1)
    return {u: {"fraction": rng.choice((0.05, 0.1, 0.2, 0.3, 0.5, 0.8)),
                "history": rng.randint(1, 8)} for u in users}


def make_queue(n, users, profiles, nodes, cpus, seed, limits, short=False):
    """n job specs of varied size, user (Zipf-like: a few users submit most)
    and time limit. Every job needs tasks of 4 CPUs or whole nodes, so the
    2-CPU fragments of the frag scenario never fit any of them."""
    rng = random.Random(seed)
    uw = [(u, 1.0 / (i + 1)) for i, u in enumerate(users)]
    max_tasks = max(1, nodes * cpus // 4 // 2)  # at most half the machine
    tasks_t = [(k, w) for k, w in ((1, 30), (2, 20), (4, 20), (8, 12), (16, 10), (32, 5),
                                   (64, 3)) if k <= max_tasks]
    if short:
        tasks_t = [(k, w) for k, w in tasks_t if k <= 16]
    nodes_t = [(m, w) for m, w in ((1, 40), (2, 30), (4, 20), (8, 10), (16, 5))
               if m <= max(1, nodes // 2)]
    out = []
    for _ in range(n):
        user = weighted(rng, uw)
        limit = weighted(rng, limits)
        x = rng.random()
        if x < 0.75:
            k = weighted(rng, tasks_t)
            opts = ["--ntasks=%d" % k, "--cpus-per-task=4"]
            kind = "tasks"
        elif x < 0.90:
            m = weighted(rng, nodes_t)
            opts = ["--nodes=%d" % m, "--ntasks-per-node=%d" % max(1, cpus // 4),
                    "--cpus-per-task=4"]
            kind = "nodes"
        else:
            m = weighted(rng, nodes_t)
            opts = ["--nodes=%d" % m, "--exclusive"]
            kind = "exclusive"
        frac = profiles[user]["fraction"] * rng.uniform(0.7, 1.3)
        runtime = max(2, min(limit * 60 - 1, int(limit * 60 * frac)))
        out.append(Spec(user, opts, limit, runtime, kind))
    return out


def make_wide_queue(n, users, profiles, nodes, width, seed, limits):
    """n whole-node jobs (--exclusive) of about `width` of the machine each
    (a half to twice that, in nodes): a queue that saturates the machine
    with few jobs running, so that a front-end cluster (one slurmd and every
    job's slurmstepd on this host) measures the scheduler, not the host."""
    rng = random.Random(seed)
    uw = [(u, 1.0 / (i + 1)) for i, u in enumerate(users)]
    mean = max(1.0, nodes * width)
    out = []
    for _ in range(n):
        user = weighted(rng, uw)
        limit = weighted(rng, limits)
        m = max(1, min(nodes, int(round(mean * 2 ** rng.uniform(-1, 1)))))
        frac = profiles[user]["fraction"] * rng.uniform(0.7, 1.3)
        runtime = max(2, min(limit * 60 - 1, int(limit * 60 * frac)))
        out.append(Spec(user, ["--nodes=%d" % m, "--exclusive"], limit, runtime, "exclusive"))
    return out


QUEUE_LIMITS = [(10, 15), (30, 20), (60, 20), (120, 15), (240, 12), (480, 10), (720, 8)]
FLOW_LIMITS = [(1, 20), (2, 25), (5, 25), (10, 20), (20, 10)]


# --- cluster helpers ------------------------------------------------------------

class Bench:
    def __init__(self, a):
        self.a = a
        self.c = None
        self.users = ["easypp-b%02d" % (i + 1) for i in range(a.users)]
        self.profiles = user_profiles(self.users, a.seed)
        self.results = {"settings": {}, "phases": [], "submissions": {}, "notes": []}
        self.plugin_copy = None

    # -- clients --
    def sbatch_argv(self, spec, name, hold=False):
        c = self.c
        argv = ["sbatch", "--parsable", "--uid=%s" % spec.user, "--time=%d" % spec.limit,
                "--job-name=%s" % name, "--output=/dev/null", "--chdir=%s" % c.path("out")]
        if hold:
            argv.append("--hold")
        return argv + spec.opts + ["--wrap", "sleep %d" % spec.runtime]

    def hold_argv(self, limit, node, ntasks, name):
        """A job that holds `ntasks` CPUs of `node` for `limit` minutes and
        does nothing. On a front-end Slurm an allocation without a shell
        (salloc --no-shell): no process at all on the one slurmd, so
        thousands can run; else a batch job sleeping."""
        if cluster.front_end():
            return ["salloc", "--no-shell", "--time=%d" % limit, "--job-name=%s" % name,
                    "--nodes=1", "--nodelist=%s" % node, "--ntasks=%d" % ntasks]
        return ["sbatch", "--parsable", "--time=%d" % limit, "--job-name=%s" % name,
                "--output=/dev/null", "--chdir=%s" % self.c.path("out"), "--nodes=1",
                "--nodelist=%s" % node, "--ntasks=%d" % ntasks,
                "--wrap", "sleep %d" % BLOCKER_SLEEP]

    def submit_one(self, argv):
        last = None
        for attempt in range(5):
            p = cluster.run(argv, timeout=60, check=False, env=self.c.env())
            if p.returncode == 0 and argv[0] == "salloc":
                m = re.search(r"Granted job allocation (\d+)", p.stdout + p.stderr)
                if not m:
                    raise BenchError("salloc printed %r" % (p.stdout + p.stderr))
                return int(m.group(1))
            if p.returncode == 0:
                try:
                    return int(p.stdout.strip().split(";")[0])
                except ValueError:
                    raise BenchError("sbatch printed %r" % p.stdout)
            last = (p.stdout + p.stderr).strip()
            if not re.search(r"timed out|Resource temporarily|try again|Socket|"
                             r"Unable to contact|Zero Bytes", last, re.I):
                break
            time.sleep(0.5 * (attempt + 1))
        raise BenchError("%s failed: %s" % (" ".join(argv), last))

    def submit_many(self, argvs, label):
        """Submit in parallel (--submitters processes at a time); returns the
        job ids in order and records the submission time."""
        t0 = time.time()
        lat = []

        def one(argv):
            s = time.time()
            j = self.submit_one(argv)
            lat.append(time.time() - s)
            return j

        with concurrent.futures.ThreadPoolExecutor(self.a.submitters) as ex:
            ids = list(ex.map(one, argvs))
        dt = time.time() - t0
        rec = {"jobs": len(argvs), "seconds": round(dt, 2),
               "jobs_per_second": round(len(argvs) / dt, 1) if dt > 0 else None,
               "sbatch_mean_ms": round(1000 * statistics.mean(lat), 1) if lat else None,
               "sbatch_p95_ms": round(1000 * sorted(lat)[int(0.95 * (len(lat) - 1))], 1)
               if lat else None,
               "submitters": self.a.submitters}
        self.results["submissions"].setdefault(label, []).append(rec)
        say("submitted %d %s jobs in %.1fs (%.0f/s, sbatch %.0f ms mean, %d in parallel)" % (
            len(argvs), label, dt, rec["jobs_per_second"] or 0, rec["sbatch_mean_ms"] or 0,
            self.a.submitters))
        return ids

    def build_submitter(self):
        """bench/submit_many.c compiled against the Slurm in use: one RPC per
        job from a few threads, no process per job (sbatch manages some
        30-50 jobs a second here under load). None if it cannot be built."""
        if self.a.sbatch_only:
            return None
        d = tempfile.mkdtemp(prefix="easypp-bench-submit-")
        self.submit_dir = d
        exe = os.path.join(d, "submit_many")
        argv = ["cc", "-O2", "-Wall", "-pthread", "-o", exe, os.path.join(HERE, "submit_many.c")]
        if cluster.SLURM_PREFIX:
            lib = os.path.join(cluster.SLURM_PREFIX, "lib")
            argv += ["-L", lib, "-Wl,-rpath," + lib]
        argv.append("-lslurm")
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            say("submit_many not built (%s): sbatch it is" % p.stderr.strip()[-300:])
            return None
        self.submitter = exe
        return exe

    def submit_specs(self, specs, name, label):
        """Submit Specs (batch jobs sleeping their runtime) through
        submit_many, or sbatch when it is not available."""
        if not getattr(self, "submitter", None):
            return self.submit_many([self.sbatch_argv(sp, name) for sp in specs], label)
        import pwd
        lines = []
        for sp in specs:
            o = " ".join(sp.opts)
            nodes = re.search(r"--nodes=(\d+)", o)
            nt = re.search(r"--ntasks=(\d+)", o)
            tpn = re.search(r"--ntasks-per-node=(\d+)", o)
            cpt = re.search(r"--cpus-per-task=(\d+)", o)
            nodes = int(nodes.group(1)) if nodes else 0
            tpn = int(tpn.group(1)) if tpn else 0
            ntasks = int(nt.group(1)) if nt else nodes * tpn
            pw = pwd.getpwnam(sp.user)
            lines.append("%d %d %d %d %d %d %d %d %d %s" % (
                pw.pw_uid, pw.pw_gid, sp.limit, nodes, ntasks,
                int(cpt.group(1)) if cpt else 0, tpn, 1 if "--exclusive" in o else 0,
                sp.runtime, name))
        t0 = time.time()
        p = subprocess.run([self.submitter, str(self.a.submit_threads), self.c.path("out")],
                           input="\n".join(lines) + "\n", capture_output=True, text=True,
                           env=self.c.env(), timeout=3600)
        dt = time.time() - t0
        if p.returncode != 0:
            raise BenchError("submit_many: %s" % p.stderr.strip()[-2000:])
        ids = [int(x) for x in p.stdout.split()]
        if len(ids) != len(specs):
            raise BenchError("submit_many returned %d ids for %d jobs" % (len(ids), len(specs)))
        rec = {"jobs": len(specs), "seconds": round(dt, 2),
               "jobs_per_second": round(len(specs) / dt, 1) if dt > 0 else None,
               "sbatch_mean_ms": None, "sbatch_p95_ms": None,
               "submitters": self.a.submit_threads, "via": "submit_many"}
        self.results["submissions"].setdefault(label, []).append(rec)
        say("submitted %d %s jobs in %.1fs (%.0f/s, submit_many, %d threads)" % (
            len(specs), label, dt, rec["jobs_per_second"] or 0, self.a.submit_threads))
        return ids

    def job_states(self):
        """{job_id: state} of every job slurmctld knows."""
        p = self.c.client("squeue", "-h", "-t", "all", "-o", "%i %T", timeout=60)
        out = {}
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) == 2 and f[0].isdigit():
                out[int(f[0])] = f[1]
        return out

    def wait_running(self, ids, timeout=180):
        ids = set(ids)
        deadline = time.time() + timeout
        while True:
            st = self.job_states()
            bad = {j: st.get(j) for j in ids if st.get(j) not in ("RUNNING", "PENDING",
                                                                  "CONFIGURING")}
            if bad:
                raise BenchError("jobs ended instead of running: %s" % dict(list(bad.items())[:5]))
            if all(st.get(j) == "RUNNING" for j in ids):
                return
            if time.time() > deadline:
                left = [j for j in ids if st.get(j) != "RUNNING"]
                raise BenchError("%d jobs not running after %ds (e.g. %s)\n%s" % (
                    len(left), timeout, left[:5], self.c.squeue("%i %T %r", ("-j", str(left[0])))))
            time.sleep(1)

    def wait_gone(self, ids, timeout=180):
        """Wait until none of ids is pending, running or completing."""
        ids = set(ids)
        deadline = time.time() + timeout
        while True:
            st = self.job_states()
            left = [j for j in ids if st.get(j) in ("PENDING", "RUNNING", "COMPLETING",
                                                    "CONFIGURING", "SUSPENDED")]
            if not left:
                return
            if time.time() > deadline:
                raise BenchError("%d jobs still active after %ds (e.g. %s)" % (
                    len(left), timeout, left[:5]))
            time.sleep(1)

    def cancel(self, ids):
        ids = sorted(set(ids))
        for i in range(0, len(ids), 500):
            self.c.client("scancel", *[str(j) for j in ids[i:i + 500]], timeout=120)

    def cancel_active(self, ids=None):
        """Cancel the pending jobs first (else the main scheduler starts them
        on the nodes the running ones free), then the running ones; wait."""
        st = self.job_states()
        if ids is not None:
            st = {j: s for j, s in st.items() if j in set(ids)}
        pending = [j for j, s in st.items() if s == "PENDING"]
        active = [j for j, s in st.items() if s in ("RUNNING", "CONFIGURING", "SUSPENDED")]
        if pending:
            self.cancel(pending)
            self.wait_gone(pending, timeout=300)
        if active:
            self.cancel(active)
            self.wait_gone(active, timeout=300)

    def node_states(self):
        p = self.c.client("sinfo", "-h", "-N", "-o", "%N %t", timeout=30, check=False)
        return dict(l.split() for l in p.stdout.splitlines() if len(l.split()) == 2)

    def wait_nodes(self, want, timeout=120):
        """Wait until every node responds and is in one of the states `want`
        (sinfo's short names), twice in a row."""
        deadline = time.time() + timeout
        good = 0
        while True:
            st = self.node_states()
            if len(st) == self.a.nodes and all(s in want for s in st.values()):
                good += 1
                if good >= 2:
                    return
            else:
                good = 0
            if time.time() > deadline:
                bad = {n: s for n, s in st.items() if s not in want}
                raise BenchError("nodes not %s after %ds: %s" % (
                    "/".join(want), timeout, dict(list(bad.items())[:8])))
            if not self.c.slurmctld_alive():
                raise BenchError("slurmctld died\n%s" % cluster.tail(self.c.ctld_log))
            time.sleep(0.3)

    # -- the cluster --
    def prepare_plugin(self):
        """A private copy of sched_easypp.so: a rebuild of the tree during the
        run cannot change the plugin between phases."""
        src = os.path.join(cluster.easypp_plugindir(), "sched_easypp.so")
        if not os.path.exists(src):
            raise BenchError("%s not built (cd %s && make -j2)" % (src, cluster.REPO_ROOT))
        d = tempfile.mkdtemp(prefix="easypp-bench-plugin-")
        os.chmod(d, 0o755)
        shutil.copy2(src, os.path.join(d, "sched_easypp.so"))
        with open(src, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()[:16]
        self.plugin_copy = d
        rev = subprocess.run(["git", "-C", cluster.REPO_ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True).stdout.strip()
        self.results["settings"]["plugin"] = {"path": src, "sha256_16": sha, "tree": rev,
                                              "built": time.strftime(
                                                  "%Y-%m-%dT%H:%M:%S",
                                                  time.localtime(os.path.getmtime(src)))}
        return d

    def start_cluster(self):
        a = self.a
        with cluster._setup_lock:
            cluster.ensure_munge()
            uids = cluster.ensure_users(self.users)
        self.uids = uids
        self.c = cluster.Cluster(
            scheduler=KIND[a.schedulers[0]], nodes=a.nodes, cpus=a.cpus,
            scheduler_parameters=scheduler_parameters(a.schedulers[0], a),
            min_job_age=a.min_job_age, debug="debug", debug_flags="",
            extra_conf="MaxJobCount=%d" % max(10000, 4 * (a.jobs + a.flow_jobs) + 1000),
            plugin_dir=self.plugin_copy)
        if KIND[a.schedulers[0]] == EP:
            self.c.debug_flags = "Backfill"
        self.current = a.schedulers[0]
        self.c.start()
        self.c.users.update(uids)

    def switch(self, sched):
        """Restart slurmctld from its saved state under `sched`, and wait
        until every slurmd registered again (until then the nodes are
        UNKNOWN and not available to any scheduler)."""
        c = self.c
        t0 = time.time()
        offset = os.path.getsize(c.ctld_log)

        def rewrite():
            c.scheduler = KIND[sched]
            # easypp's cycle lines are DebugFlags=Backfill lines; sched/backfill
            # runs without the flag (its own flagged logging would slow it).
            c.debug_flags = "Backfill" if KIND[sched] == EP else ""
            c.plugin_dir = (self.a.plugin_before if sched == "easypp-old"
                            else self.plugin_copy)
            c.scheduler_parameters = scheduler_parameters(sched, self.a)
            c.write_conf()

        c.restart_slurmctld(timeout=120, while_stopped=rewrite)
        # slurmctld asks every slurmd to register a few seconds after it
        # started ("Spawning registration agent"); the nodes are UNKNOWN
        # until their answer arrived.
        deadline = time.time() + 90
        while True:
            with open(c.ctld_log, "rb") as f:
                f.seek(offset)
                asked = b"Spawning registration agent" in f.read()
            if asked:
                p = c.client("scontrol", "show", "node", "-o", timeout=30, check=False)
                states = re.findall(r"\bState=(\S+)", p.stdout)
                if len(states) == len(c.node_names()) and not any(
                        "UNKNOWN" in x or "NOT_RESPONDING" in x for x in states):
                    break
            if time.time() > deadline:
                raise BenchError("the nodes did not register after the restart:\n%s" % (
                    self.c.client("sinfo", "-N", check=False).stdout))
            if not c.slurmctld_alive():
                raise BenchError("slurmctld died\n%s" % cluster.tail(c.ctld_log))
            time.sleep(0.3)
        self.current = sched
        say("slurmctld restarted under %s, all nodes registered in %.1fs" % (
            sched, time.time() - t0))

    def stop(self):
        if self.c is not None:
            try:
                if self.a.out and self.c.dir:
                    shutil.copy(self.c.ctld_log, os.path.join(self.a.out, "slurmctld.log"))
            except OSError:
                pass
            self.c.stop(keep_dir=self.a.keep)
        if self.plugin_copy:
            shutil.rmtree(self.plugin_copy, ignore_errors=True)
        if getattr(self, "submit_dir", None):
            shutil.rmtree(self.submit_dir, ignore_errors=True)

    # -- CPU time of the scheduler thread --
    def thread_cpu(self, sched):
        """CPU seconds of the scheduler's thread and of all of slurmctld."""
        pid = self.c.ctld.pid
        tick = os.sysconf("SC_CLK_TCK")
        thread = None
        try:
            for tid in os.listdir("/proc/%d/task" % pid):
                try:
                    with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                        if f.read().strip() != THREAD_NAME[KIND[sched]]:
                            continue
                    with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                        s = f.read()
                    fields = s[s.rindex(")") + 2:].split()
                    thread = (int(fields[11]) + int(fields[12])) / tick
                except OSError:
                    continue
            with open("/proc/%d/stat" % pid) as f:
                s = f.read()
            fields = s[s.rindex(")") + 2:].split()
            proc = (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            return None, None
        return thread, proc


# --- reading the schedulers' statistics ---------------------------------------------

def parse_sdiag(text):
    """The main-scheduler and backfill sections of sdiag as {key: int}."""
    out = {}
    section = "top"
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("Main schedule statistics"):
            section = "main"
            continue
        if s.startswith("Backfilling stats"):
            section = "bf"
            continue
        if s.startswith("Latency for") or s.startswith("Remote Procedure Call"):
            section = "rest"
            continue
        m = re.match(r"([A-Za-z][^:]*):\s+(-?\d+)", s)
        if m and section in ("top", "main", "bf"):
            out["%s:%s" % (section, m.group(1).strip())] = int(m.group(2))
        m = re.match(r"Last cycle when:.*\((\d+)\)", s)
        if m and section == "bf":
            out["bf:when"] = int(m.group(1))
    return out


CYCLE_RE = re.compile(r"^\[([^\]]+)\] BACKFILL: sched/easypp: cycle: (.*)$")


def parse_easypp_cycle(rest):
    d = {}
    for m in re.finditer(r"(\w+)=(\S+)", rest):
        d[m.group(1)] = m.group(2)
    m = re.search(r"started=(\d+)\(backfill (\d+)\)", rest)
    out = {"trigger": d.get("trigger"), "pending": int(d.get("pending", 0)),
           "running": int(d.get("running", 0)), "tested": int(d.get("tested", 0)),
           "started": int(m.group(1)) if m else 0, "started_backfill": int(m.group(2)) if m else 0,
           "reservations": int(d.get("reservations", 0)), "yields": int(d.get("yields", 0)),
           "seconds": int(d.get("time", "0us").rstrip("us")) / 1e6,
           # locks held (yield sleeps excluded); correction cycles: how late
           # after the prediction's expiry the cycle began (-1: not one)
           "locked": int(d["locked"].rstrip("us")) / 1e6 if "locked" in d else None,
           "late": int(d["late"].rstrip("us")) / 1e6 if "late" in d else None,
           # WILL_RUN probes (the heads' shadow times and nodes); older
           # builds do not print it
           "probes": int(d["probes"]) if "probes" in d else None,
           "interrupted": "(interrupted)" in rest}
    return out


class Monitor:
    """Collects every scheduling cycle of the running scheduler: for backfill
    by polling sdiag, for easypp from its debug lines in slurmctld's log.

    nudge_job: sched/backfill skips a cycle when no job, node, partition or
    reservation changed since its last one (_more_work()), which on a frozen
    queue leaves it idle for up to sched_interval. On a real machine
    something always changes; here the monitor touches one running job
    (scontrol update Comment=...) right after every cycle it sees, for both
    schedulers alike. Right after a cycle, never during one: a change seen
    while backfill yields its locks ends its cycle early."""

    def __init__(self, bench, sched, nudge_job=None):
        self.b, self.sched = bench, sched
        self.nudge_job = nudge_job
        self.nudges = 0
        self.last_seen = time.time()
        self.max_cycle = 0.0
        self.cycles = []
        self.missed = 0
        self.bf_started = None
        self.lock = threading.Lock()
        self.stop_ev = threading.Event()
        self.error = None
        self.prev = None
        self.offset = os.path.getsize(bench.c.ctld_log) if os.path.exists(bench.c.ctld_log) else 0
        self.partial = b""
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop_ev.is_set():
            try:
                n = self.count()
                self.poll()
                if self.count() > n:
                    self.last_seen = time.time()
                    self.max_cycle = max([self.max_cycle] + [
                        c["seconds"] for c in self.since(n)])
                    self.nudge()
                elif self.nudge_job and time.time() - self.last_seen > \
                        4 * self.b.a.interval + 2 * self.max_cycle + 5:
                    self.last_seen = time.time()  # none seen for long: once more
                    self.nudge()
            except Exception as e:  # noqa: BLE001 - reported by wait()
                self.error = e
            self.stop_ev.wait(0.25 if KIND[self.sched] == EP else 0.4)

    def poll(self):
        if KIND[self.sched] == EP:
            with open(self.b.c.ctld_log, "rb") as f:
                f.seek(self.offset)
                data = f.read()
            self.offset += len(data)
            data = self.partial + data
            lines = data.split(b"\n")
            self.partial = lines.pop()
            for raw in lines:
                m = CYCLE_RE.match(raw.decode(errors="replace"))
                if m:
                    cyc = parse_easypp_cycle(m.group(2))
                    cyc["at"] = time.time()
                    with self.lock:
                        self.cycles.append(cyc)
            return
        p = self.b.c.client("sdiag", timeout=30, check=False)
        if p.returncode != 0:
            return
        d = parse_sdiag(p.stdout)
        total = d.get("bf:Total cycles")
        if total is None:
            return
        prev = self.prev
        self.prev = d
        if prev is None:
            return
        # A cycle counts when "Total cycles" grows: it is incremented at the
        # end of a cycle, while "Last cycle when" and the depth counters
        # change as soon as the next cycle starts.
        # jobs started during the cycle are counted while it runs: the
        # difference is taken from one recorded cycle to the next
        bf_started = d.get("bf:Total backfilled jobs (since last slurm start)", 0)
        if self.bf_started is None or bf_started < self.bf_started:
            self.bf_started = prev.get("bf:Total backfilled jobs (since last slurm start)", 0)
        ptotal = prev.get("bf:Total cycles", 0)
        if total < ptotal:  # sdiag -r
            if total == 0:
                return
            ptotal = 0
        if total == ptotal:
            return
        cyc = {"seconds": d.get("bf:Last cycle", 0) / 1e6,
               # sdiag's backfill cycle leaves out the lock-yield sleeps: the
               # time it held the locks (after build_job_queue)
               "locked": d.get("bf:Last cycle", 0) / 1e6,
               "tested": d.get("bf:Last depth cycle (try sched)", 0),
               "depth": d.get("bf:Last depth cycle", 0),
               "queue": d.get("bf:Last queue length", 0),
               "started": max(0, bf_started - self.bf_started),
               "at": time.time()}
        self.bf_started = bf_started
        with self.lock:
            self.missed += max(0, total - ptotal - 1)
            self.cycles.append(cyc)

    def nudge(self):
        if not self.nudge_job:
            return
        self.nudges += 1
        self.b.c.client("scontrol", "update", "JobId=%d" % self.nudge_job,
                        "Comment=bench-nudge-%d" % self.nudges, timeout=60, check=False)

    def count(self):
        with self.lock:
            return len(self.cycles)

    def mark(self):
        return self.count()

    def since(self, mark):
        with self.lock:
            return list(self.cycles[mark:])

    def wait(self, n, start, timeout):
        """Wait until n cycles were seen after `start` (a mark)."""
        deadline = time.time() + timeout
        while self.count() - start < n:
            if self.error is not None:
                raise BenchError("reading %s's statistics: %s" % (self.sched, self.error))
            if not self.b.c.slurmctld_alive():
                raise BenchError("slurmctld died\n%s" % cluster.tail(self.b.c.ctld_log))
            if time.time() > deadline:
                raise BenchError("%s: %d of %d cycles after %ds\n%s" % (
                    self.sched, self.count() - start, n, timeout, cluster.tail(self.b.c.ctld_log)))
            time.sleep(0.2)

    def close(self):
        self.stop_ev.set()
        self.t.join(5)


def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))] if xs else None


def summarize(cycles):
    secs = [c["seconds"] for c in cycles]
    tested = [c["tested"] for c in cycles]
    if not secs:
        return {"cycles": 0}
    tot = sum(secs)
    locked = [c["locked"] for c in cycles if c.get("locked") is not None]
    # sched/easypp only: from a prediction's expiry to the end of the
    # correction cycle that planned again (late start + the cycle)
    delay = [c["late"] + c["seconds"] for c in cycles
             if c.get("trigger") == "correction" and (c.get("late") or -1) >= 0]
    return {"cycles": len(secs),
            "mean_ms": 1000 * statistics.mean(secs),
            "median_ms": 1000 * statistics.median(secs),
            "p95_ms": 1000 * p95(secs),
            "max_ms": 1000 * max(secs),
            "min_ms": 1000 * min(secs),
            "locked_mean_ms": 1000 * statistics.mean(locked) if locked else None,
            "locked_p95_ms": 1000 * p95(locked) if locked else None,
            "locked_max_ms": 1000 * max(locked) if locked else None,
            "tested_total": sum(tested),
            "started_total": sum(c.get("started", 0) for c in cycles),
            "corrections": len(delay),
            "expiry_delay_mean_ms": 1000 * statistics.mean(delay) if delay else None,
            "expiry_delay_p95_ms": 1000 * p95(delay) if delay else None,
            "expiry_delay_max_ms": 1000 * max(delay) if delay else None,
            "tested_per_cycle": statistics.mean(tested),
            "tested_per_second": (sum(tested) / tot) if tot > 0 else None,
            "started_per_cycle": statistics.mean([c.get("started", 0) for c in cycles])}


# --- scenarios ----------------------------------------------------------------

def run_phase(b, sched, scenario, rep, profile=False):
    """Restart under `sched`, skip the warm-up cycles, then record
    --cycles cycles of the unchanged queue."""
    a = b.a
    if b.current != sched or not a.quick:
        b.switch(sched)
    b.wait_nodes(("alloc", "mix"))
    mon = Monitor(b, sched, nudge_job=b.blockers[0] if a.nudge else None)
    perf = None
    try:
        budget = a.interval + a.max_time + 10
        mon.wait(a.warmup, 0, timeout=(a.warmup + 1) * budget + 60)
        b.c.client("sdiag", "-r")
        st0 = b.c.status() if KIND[sched] == EP else None
        cpu0 = b.thread_cpu(sched)
        start = mon.mark()
        if profile:
            perf = start_perf(b, sched, scenario)
        t0 = time.time()
        mon.wait(a.cycles, start, timeout=(a.cycles + 1) * budget + 60)
        wall = time.time() - t0
        cpu1 = b.thread_cpu(sched)
        n_cpu = max(1, mon.count() - start)
        cycles = mon.since(start)[:a.cycles]
        sd = parse_sdiag(b.c.client("sdiag").stdout)
        st1 = b.c.status() if KIND[sched] == EP else None
    finally:
        mon.close()
        if perf is not None:
            finish_perf(b, perf)
    s = summarize(cycles)
    s.update({"scenario": scenario, "scheduler": sched, "rep": rep, "wall_s": wall,
              "missed": mon.missed, "profiled": profile, "nudges": mon.nudges})
    if wall > 0 and s["cycles"]:
        s["tested_per_min"] = 60.0 * s["tested_total"] / wall
        s["started_per_min"] = 60.0 * s["started_total"] / wall
    if cpu0[0] is not None and cpu1[0] is not None:
        s["thread_cpu_ms_per_cycle"] = 1000 * (cpu1[0] - cpu0[0]) / n_cpu
    if cpu0[1] is not None and cpu1[1] is not None:
        s["ctld_cpu_share"] = (cpu1[1] - cpu0[1]) / wall if wall > 0 else None
    if KIND[sched] == BF:
        s["sdiag"] = {k[3:]: v for k, v in sd.items() if k.startswith("bf:")}
        s["depth_per_cycle"] = statistics.mean([c["depth"] for c in cycles]) if cycles else None
        s["queue"] = cycles[-1]["queue"] if cycles else None
    else:
        if st0 and st1:
            t0_, t1_ = st0.get("totals", {}), st1.get("totals", {})
            n = t1_.get("cycles", 0) - t0_.get("cycles", 0)
            s["status_totals"] = {
                "cycles": n, "tested": t1_.get("tested", 0) - t0_.get("tested", 0),
                "seconds": t1_.get("seconds", 0) - t0_.get("seconds", 0),
                "max_seconds": t1_.get("max_seconds")}
            s["last_cycle"] = st1.get("last_cycle")
        s["queue"] = cycles[-1]["pending"] if cycles else None
        s["interrupted"] = sum(1 for c in cycles if c.get("interrupted"))
        s["yields"] = sum(c.get("yields", 0) for c in cycles)
        probes = [c["probes"] for c in cycles if c.get("probes") is not None]
        s["probes_per_cycle"] = statistics.mean(probes) if probes else None
    s["cycles_raw"] = cycles
    say("%s %s rep %d: %d cycles, mean %.1f ms, median %.1f ms, max %.1f ms, tested %.0f/cycle" % (
        scenario, SHORT[sched], rep, s["cycles"], s.get("mean_ms", 0), s.get("median_ms", 0),
        s.get("max_ms", 0), s.get("tested_per_cycle", 0)))
    return s


def start_perf(b, sched, scenario):
    if not shutil.which("perf"):
        say("perf not installed: no profile")
        return None
    pid = b.c.ctld.pid
    tid = None
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                if f.read().strip() == THREAD_NAME[KIND[sched]]:
                    tid = t
        except OSError:
            pass
    out = os.path.join(b.a.out or tempfile.gettempdir(),
                       "perf-%s-%s.data" % (scenario, SHORT[sched]))
    # backfill's cycles are long: a lower rate keeps the DWARF stacks small
    argv = ["perf", "record", "-q", "-F", "1999" if KIND[sched] == EP else "499",
            "--call-graph", "dwarf,8192", "-o", out]
    argv += ["-t", tid] if tid else ["-p", str(pid)]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(0.5)
    if p.poll() is not None:  # no hardware events (VM): the software clock
        argv[2:2] = ["-e", "cpu-clock"]
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return (p, out, scenario, sched)


def finish_perf(b, perf):
    p, out, scenario, sched = perf
    if p.poll() is None:
        p.send_signal(2)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
    r = subprocess.run(["perf", "report", "-i", out, "--stdio", "--no-children",
                        "--sort", "dso,symbol", "--percent-limit", "1.5", "-g", "none"],
                       capture_output=True, text=True)
    lines = [re.sub(r"\s+-\s+-\s*$", "", l)[:150] for l in r.stdout.splitlines()
             if l.strip() and not l.startswith("#")]
    text = "\n".join(lines[:30])
    b.results.setdefault("profiles", {})["%s/%s" % (scenario, SHORT[sched])] = text
    with open(out + ".txt", "w") as f:
        f.write(r.stdout)
    # inclusive times (callees included) of every symbol, for the analysis
    r2 = subprocess.run(["perf", "report", "-i", out, "--stdio", "--children",
                         "--sort", "symbol", "--percent-limit", "1", "-g", "none"],
                        capture_output=True, text=True)
    with open(out + ".children.txt", "w") as f:
        f.write(r2.stdout)
    say("perf profile of %s (%s), scheduler thread, top symbols:\n%s" % (
        SHORT[sched], scenario, text or r.stderr[-2000:]))


def setup_blocked(b):
    """History jobs, then a blocker and a filler on every node, then the queue."""
    a, c = b.a, b.c
    # 1. a short history for every user (learned by the plugin later: the
    #    records stay in slurmctld, MinJobAge is large).
    hist = []
    for u in b.users:
        for k in range(a.history):
            limit = 10 + 10 * ((b.users.index(u) + k) % 5)
            hist.append(b.sbatch_argv(Spec(u, ["--ntasks=1"], limit,
                                           b.profiles[u]["history"] + k % 2, "history"),
                                      "history"))
    if hist:
        ids = b.submit_many(hist, "history")
        c.wait_jobs(ids, timeout=300)
        say("history: %d jobs of %d users completed" % (len(ids), len(b.users)))
    # 2. blockers (cpus-2 CPUs, limits 2-18 h, inside bf_window) and fillers
    blk, fil = [], []
    for i, n in enumerate(c.node_names()):
        limit = 120 * (1 + i % 9)
        blk.append(b.hold_argv(limit, n, a.cpus - 2, "blocker"))
        fil.append(b.hold_argv(1200, n, 2, "filler"))
    b.blockers = b.submit_many(blk, "blockers")
    b.fillers = b.submit_many(fil, "fillers")
    b.wait_running(b.blockers + b.fillers)
    b.wait_nodes(("alloc",))
    # 3. the queue
    specs = make_queue(a.jobs, b.users, b.profiles, a.nodes, a.cpus, a.seed, QUEUE_LIMITS)
    kinds = {}
    for s in specs:
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
    b.queue = b.submit_specs(specs, "q", "queue")
    widths = [s.width(a.cpus) for s in specs]
    b.results["queue"] = {"jobs": len(specs), "kinds": kinds,
                          "users": len({s.user for s in specs}),
                          "width_cpus": {"min": min(widths), "median": statistics.median(widths),
                                         "max": max(widths)},
                          "limits_min": sorted({s.limit for s in specs})}
    st = b.job_states()
    pend = sum(1 for j in b.queue if st.get(j) == "PENDING")
    if pend != len(b.queue):
        raise BenchError("only %d of %d queued jobs are pending" % (pend, len(b.queue)))


def check_queue_intact(b, scenario):
    st = b.job_states()
    moved = [j for j in b.queue if st.get(j) != "PENDING"]
    if moved:
        note = "%s: %d queued jobs left the queue (e.g. %s: %s)" % (
            scenario, len(moved), moved[0], st.get(moved[0]))
        b.results["notes"].append(note)
        say("WARNING " + note)


def run_blocked(b, scenario):
    a = b.a
    # --quick starts each scenario with the scheduler already running (one
    # restart less); otherwise backfill first, and the order alternates.
    order = list(a.schedulers)
    if a.quick and b.current in order:  # start with the one running: a restart less
        order.remove(b.current)
        order.insert(0, b.current)
    for rep in range(1, a.repeat + 1):
        for sched in (order if rep % 2 else order[::-1]) if a.alternate else order:
            b.results["phases"].append(run_phase(b, sched, scenario, rep))
            check_queue_intact(b, scenario)
    if a.perf:
        for sched in order:
            b.results["phases"].append(run_phase(b, sched, scenario, 0, profile=True))


def run_flow(b):
    """Jobs can start: the same submissions behind whole-node blockers, once
    per scheduler; the blockers are cancelled at once and the scheduler
    starts what it can for --flow-seconds."""
    a, c = b.a, b.c
    if a.flow_width:
        specs = make_wide_queue(a.flow_jobs, b.users, b.profiles, a.nodes, a.flow_width,
                                a.seed + 1, FLOW_LIMITS)
    else:
        specs = make_queue(a.flow_jobs, b.users, b.profiles, a.nodes, a.cpus, a.seed + 1,
                           FLOW_LIMITS, short=True)
    b.results["flow_queue"] = {"jobs": len(specs),
                               "runtime_s": {"min": min(s.runtime for s in specs),
                                             "median": statistics.median(
                                                 [s.runtime for s in specs]),
                                             "max": max(s.runtime for s in specs)},
                               "limits_min": sorted({s.limit for s in specs})}
    # What is left of the blocked scenarios. Cancelling tens of thousands of
    # jobs is one RPC each under the job write lock: under sched/backfill,
    # whose cycles hold the locks for seconds at this size, it crawls, so
    # the cancellation runs under the plugin when it is one of those compared.
    if KIND.get(b.current) == BF and "easypp" in a.schedulers:
        b.switch("easypp")
    t0 = time.time()
    b.cancel_active()
    b.wait_nodes(("idle",))
    say("cancelled what the blocked scenarios left in %.0fs" % (time.time() - t0))
    order = list(a.schedulers)
    if a.quick and b.current in order:
        order.remove(b.current)
        order.insert(0, b.current)
    for sched in order:
        if b.current != sched or not a.quick:
            b.switch(sched)
        b.wait_nodes(("idle",))
        blk = [b.hold_argv(1440, n, a.cpus, "blocker") for n in c.node_names()]
        blockers = b.submit_many(blk, "flow-blockers")
        b.wait_running(blockers)
        mon = Monitor(b, sched)
        ids = b.submit_specs(specs, "flow", "flow-queue")
        budget = a.interval + a.max_time + 10
        mon.wait(2, mon.mark(), timeout=3 * budget + 60)  # cycles over the blocked queue
        b.c.client("sdiag", "-r")
        cpu0 = b.thread_cpu(sched)
        start = mon.mark()
        t0 = time.time()
        b.cancel(blockers)
        say("flow %s: blockers cancelled, observing %ds" % (SHORT[sched], a.flow_seconds))
        time.sleep(a.flow_seconds)
        wall = time.time() - t0
        cpu1 = b.thread_cpu(sched)
        sd = parse_sdiag(c.client("sdiag").stdout)
        cycles = mon.since(start)
        mon.close()
        st = b.job_states()
        started = sum(1 for j in ids if st.get(j) not in ("PENDING", None))
        s = summarize(cycles)
        s.update({"scenario": "flow", "scheduler": sched, "rep": 1, "wall_s": wall,
                  "missed": mon.missed, "jobs_started_total": started,
                  "jobs_started_by_scheduler": sum(c_.get("started", 0) for c_ in cycles),
                  "sdiag_jobs_started": sd.get("top:Jobs started"),
                  "sdiag_jobs_completed": sd.get("top:Jobs completed"),
                  "cycles_raw": cycles})
        if KIND[sched] == BF:
            s["sdiag"] = {k[3:]: v for k, v in sd.items() if k.startswith("bf:")}
            s["jobs_started_by_scheduler"] = sd.get(
                "bf:Total backfilled jobs (since last stats cycle start)",
                s["jobs_started_by_scheduler"])
        # one definition for both: the scheduler's own total over the window
        # (sdiag's for backfill, the cycle lines' for easypp) per cycle
        s["started_per_cycle"] = (s["jobs_started_by_scheduler"] or 0) / max(1, len(cycles))
        if wall > 0:
            s["tested_per_min"] = 60.0 * s.get("tested_total", 0) / wall
            s["started_per_min"] = 60.0 * (s["jobs_started_by_scheduler"] or 0) / wall
            s["started_all_per_min"] = 60.0 * started / wall
        if cpu0[0] is not None and cpu1[0] is not None:
            s["thread_cpu_ms_per_cycle"] = 1000 * (cpu1[0] - cpu0[0]) / max(1, len(cycles))
        b.results["phases"].append(s)
        say("flow %s: %d cycles, mean %.1f ms, %d jobs started (%d by the scheduler)" % (
            SHORT[sched], s["cycles"], s.get("mean_ms", 0), started,
            s["jobs_started_by_scheduler"]))
        b.cancel_active(ids + blockers)
        b.wait_nodes(("idle",))


# --- report -------------------------------------------------------------------

def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return ("%%.%df" % nd) % v
    return str(v)


def pooled(phases):
    cycles = [c for p in phases for c in p["cycles_raw"]][:]
    s = summarize(cycles)
    cpu = [p.get("thread_cpu_ms_per_cycle") for p in phases if p.get("thread_cpu_ms_per_cycle")]
    s["thread_cpu_ms_per_cycle"] = statistics.mean(cpu) if cpu else None
    s["mean_ms_by_rep"] = [p.get("mean_ms") for p in phases]
    s["queue"] = phases[-1].get("queue")
    return s


def report(b):
    a = b.a
    out = []
    w = out.append
    w("")
    w("sched/easypp vs sched/backfill: scheduling cycle on the same queue (%s)" % (
        time.strftime("%Y-%m-%d %H:%M %Z")))
    w("command: %s" % b.results["settings"].get("command"))
    w("machine: %s, %d CPUs (%s), load avg %s" % (
        socket.gethostname(), os.cpu_count(), cpu_model(), " ".join(
            "%.2f" % x for x in os.getloadavg())))
    w("cluster: %d nodes x %d CPUs, %d users, queue %d jobs, interval %ds, max jobs tested %d, "
      "yield %d/%d us, max time %ds" % (a.nodes, a.cpus, a.users, a.jobs, a.interval,
                                       a.max_job_test, a.yield_interval, a.yield_sleep,
                                       a.max_time))
    w("schedulers: %s; Slurm: %s" % (", ".join(a.schedulers), "%s (front end: one slurmd "
      "serves every node)" % cluster.SLURM_PREFIX if cluster.front_end() else
      (cluster.SLURM_PREFIX or "the system's")))
    pl = b.results["settings"].get("plugin", {})
    w("plugin: %s (sha256 %s..., tree %s)" % (pl.get("path"), pl.get("sha256_16"), pl.get("tree")))
    for label, recs in b.results["submissions"].items():
        tot = sum(r["jobs"] for r in recs)
        secs = sum(r["seconds"] for r in recs)
        if recs[0].get("via") == "submit_many":
            w("submission %-14s %5d jobs in %6.1fs (%5.0f jobs/s, submit_many, %d threads)" % (
                label, tot, secs, tot / secs if secs else 0, recs[0]["submitters"]))
            continue
        w("submission %-14s %5d jobs in %6.1fs (%5.0f jobs/s, sbatch mean %s ms, p95 %s ms)" % (
            label, tot, secs, tot / secs if secs else 0,
            fmt(statistics.mean([r["sbatch_mean_ms"] for r in recs])),
            fmt(max(r["sbatch_p95_ms"] for r in recs))))
    phases = [p for p in b.results["phases"] if not p.get("profiled")]
    order = [x for x in a.schedulers]
    desc = {
        "full": "every CPU busy, nothing can start (pure planning of a blocked queue)",
        "frag": "2 free CPUs per node that no queued job can use (candidates tested)",
        "flow": "%d queued jobs%s, whole-node blockers cancelled at once, %ds observed" % (
            a.flow_jobs, (" of whole nodes, about %g of the machine each" % a.flow_width)
            if a.flow_width else "", a.flow_seconds)}
    for scen in ("full", "frag", "flow"):
        ph = [p for p in phases if p["scenario"] == scen]
        if not ph:
            continue
        w("")
        w("scenario %s: %s" % (scen, desc[scen]))
        hdr = ("%-10s %4s %6s %8s %8s %8s %8s %8s %8s %8s %8s %9s %9s %9s %8s" % (
            "scheduler", "rep", "cycles", "mean ms", "p95 ms", "max ms", "lock ms",
            "lock p95", "lock max", "tested/c", "thrCPU/c", "tested/min", "started/min",
            "expiry ms", "queue"))
        w(hdr)
        w("-" * len(hdr))
        agg = {}
        for sched in order:
            sp = [p for p in ph if p["scheduler"] == sched]
            if not sp:
                continue
            rows = sorted(sp, key=lambda p: p["rep"])
            if len(rows) > 1:
                g = pooled(rows)
                g["rep"] = "all"
                wall = sum(p["wall_s"] for p in rows)
                g["tested_per_min"] = 60.0 * sum(p.get("tested_total", 0) for p in rows) / wall
                g["started_per_min"] = 60.0 * sum(
                    (p.get("jobs_started_by_scheduler") if scen == "flow" else
                     p.get("started_total")) or 0 for p in rows) / wall
                rows = rows + [g]
            agg[sched] = rows[-1]
            for p in rows:
                w("%-10s %4s %6d %8s %8s %8s %8s %8s %8s %8s %8s %9s %9s %9s %8s" % (
                    sched, p["rep"], p["cycles"], fmt(p.get("mean_ms")), fmt(p.get("p95_ms")),
                    fmt(p.get("max_ms")), fmt(p.get("locked_mean_ms")),
                    fmt(p.get("locked_p95_ms")), fmt(p.get("locked_max_ms")),
                    fmt(p.get("tested_per_cycle")), fmt(p.get("thread_cpu_ms_per_cycle")),
                    fmt(p.get("tested_per_min"), 0), fmt(p.get("started_per_min"), 1),
                    "-" if not p.get("corrections") else "%s/%s/%s(%d)" % (
                        fmt(p.get("expiry_delay_mean_ms"), 0),
                        fmt(p.get("expiry_delay_p95_ms"), 0),
                        fmt(p.get("expiry_delay_max_ms"), 0), p["corrections"]),
                    fmt(p.get("queue"))))
        if scen == "flow":
            for p in ph:
                w("  %-10s jobs started: %s by the scheduler, %s in all (%s/min)" % (
                    p["scheduler"], fmt(p.get("jobs_started_by_scheduler")),
                    fmt(p.get("jobs_started_total")), fmt(p.get("started_all_per_min"), 1)))
        for sched in order:
            if sched in agg and "easypp" in agg and agg[sched].get("mean_ms") and \
                    sched != "easypp":
                e, f = agg["easypp"], agg[sched]
                ratio = e["mean_ms"] / f["mean_ms"] if f["mean_ms"] else None
                lr = (e["locked_mean_ms"] / f["locked_mean_ms"]
                      if e.get("locked_mean_ms") and f.get("locked_mean_ms") else None)
                w("  ratio easypp/%s: mean cycle %s, mean lock hold %s" % (
                    sched, fmt(ratio, 3), fmt(lr, 3)))
                b.results.setdefault("ratios", {}).setdefault(scen, {})[sched] = {
                    "mean": ratio, "locked": lr}
        for p in sorted(ph, key=lambda p: (order.index(p["scheduler"]), p["rep"])):
            if KIND[p["scheduler"]] == BF and p.get("sdiag"):
                d = p["sdiag"]
                w("  sdiag  %-10s rep %s: Total cycles %s, Mean cycle %s us, Max cycle %s us, "
                  "Depth Mean %s, Depth Mean (try depth) %s, missed polls %d" % (
                      p["scheduler"], p["rep"], d.get("Total cycles"), d.get("Mean cycle"),
                      d.get("Max cycle"), d.get("Depth Mean"), d.get("Depth Mean (try depth)"),
                      p.get("missed", 0)))
            elif p.get("status_totals"):
                t = p["status_totals"]
                w("  status %-10s rep %s: cycles %s, tested %s, seconds %.4f (mean %.1f ms), "
                  "interrupted %s, yields %s, WILL_RUN probes/cycle %s" % (
                      p["scheduler"], p["rep"], t.get("cycles"), t.get("tested"),
                      t.get("seconds", 0),
                      1000 * t.get("seconds", 0) / max(1, t.get("cycles") or 1),
                      p.get("interrupted"), p.get("yields"), fmt(p.get("probes_per_cycle"))))
    for note in b.results["notes"]:
        w("note: " + note)
    for k, v in b.results.get("profiles", {}).items():
        w("")
        w("perf profile %s (scheduler thread):" % k)
        w(v)
    text = "\n".join(out)
    print(text)
    sys.stdout.flush()
    return text


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


# --- main -----------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="sched/easypp vs sched/backfill: cycle time and jobs tested per second on "
                    "the same queue of a localhost Slurm cluster (run as root)")
    p.add_argument("--quick", action="store_true",
                   help="small and short: 8 nodes, 5 users, 300 jobs, 3 cycles, 1 repetition, "
                        "interval 2 s, no restart when the scheduler is unchanged "
                        "(checks the script works; < 2 min)")
    p.add_argument("--scale", action="store_true",
                   help="large: 2000 nodes, 50000 pending jobs, 4000 running (needs a "
                        "front-end Slurm: --slurm-prefix), schedulers backfill, bf-min, "
                        "easypp, 3 cycles, 1 repetition, 16 sbatch in parallel")
    p.add_argument("--slurm-prefix", default=os.environ.get("EASYPP_SLURM_PREFIX"),
                   help="a private Slurm build (bench/build-frontend-slurm.sh) instead of "
                        "the system's; the plugin must be built against PREFIX/build")
    p.add_argument("--schedulers", default="backfill,easypp",
                   help="comma list of backfill, bf-min (backfill with "
                        "bf_job_part_count_reserve=1), easypp, easypp-old (--plugin-before)")
    p.add_argument("--plugin-before", help="directory of an earlier sched_easypp.so, "
                                           "measured as scheduler easypp-old")
    p.add_argument("--nodes", type=int, default=48)
    p.add_argument("--cpus", type=int, default=16, help="CPUs per node (>= 4)")
    p.add_argument("--users", type=int, default=20)
    p.add_argument("--jobs", type=int, default=3000, help="pending jobs in the queue")
    p.add_argument("--history", type=int, default=2,
                   help="short jobs per user before the blockers (the plugin's history)")
    p.add_argument("--interval", type=int, default=5,
                   help="bf_interval = easypp_interval (seconds)")
    p.add_argument("--max-job-test", type=int, default=500,
                   help="bf_max_job_test = easypp_max_job_test")
    p.add_argument("--max-time", type=int, default=30, help="bf_max_time = easypp_max_time")
    p.add_argument("--yield-interval", type=int, default=2000000,
                   help="bf_yield_interval = easypp_yield_interval (us)")
    p.add_argument("--yield-sleep", type=int, default=500000,
                   help="bf_yield_sleep = easypp_yield_sleep (us)")
    p.add_argument("--sched-interval", type=int, default=60,
                   help="sched_interval of the main scheduler (both)")
    p.add_argument("--bf-window", type=int, default=0,
                   help="bf_window in minutes (default: Slurm's, 1440)")
    p.add_argument("--bf-extra", default="", help="more SchedulerParameters for backfill")
    p.add_argument("--easypp-extra", default="", help="more SchedulerParameters for easypp")
    p.add_argument("--cycles", type=int, default=6, help="measured cycles per phase")
    p.add_argument("--warmup", type=int, default=1, help="cycles skipped after each restart")
    p.add_argument("--repeat", type=int, default=2,
                   help="repetitions (backfill and easypp phases, alternating order)")
    p.add_argument("--no-alternate", dest="alternate", action="store_false",
                   help="always backfill first within a repetition")
    p.add_argument("--scenarios", default="full,frag,flow",
                   help="comma list of full, frag, flow")
    p.add_argument("--flow-jobs", type=int, default=600)
    p.add_argument("--flow-seconds", type=int, default=120)
    p.add_argument("--flow-width", type=float, default=0.0,
                   help="flow jobs of whole nodes, each about this share of the machine "
                        "(e.g. 0.01: 20 nodes of 2,000): a queue that saturates the machine "
                        "with few jobs running (default: the mixed small jobs of full)")
    p.add_argument("--submitters", type=int, default=4, help="sbatch processes in parallel")
    p.add_argument("--submit-threads", type=int, default=4,
                   help="threads of submit_many (the queue's fast submitter)")
    p.add_argument("--sbatch-only", action="store_true",
                   help="queue every job with sbatch, not bench/submit_many.c")
    p.add_argument("--no-nudge", dest="nudge", action="store_false",
                   help="do not touch a running job after each cycle of the frozen queue "
                        "(sched/backfill then skips cycles while nothing changes)")
    p.add_argument("--min-job-age", type=int, default=86400)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--perf", action="store_true",
                   help="after the measured repetitions, one profiled phase per scheduler "
                        "(perf record on the scheduler thread; not in the tables)")
    p.add_argument("--json", help="write every figure (and every cycle) to this file")
    p.add_argument("--out", help="directory for the slurmctld log, perf data, results")
    p.add_argument("--keep", action="store_true", help="keep the cluster directory")
    a = p.parse_args(argv)
    # --quick and --scale set what was not given on the command line
    given = {x[2:].split("=")[0].replace("-", "_") for x in argv if x.startswith("--")}
    if a.quick:
        defaults = {"nodes": 8, "users": 5, "jobs": 300, "cycles": 3, "repeat": 1,
                    "interval": 2, "flow_jobs": 60, "flow_seconds": 12, "history": 1}
        for k, v in defaults.items():
            if k not in given:
                setattr(a, k, v)
    if a.scale:
        defaults = {"nodes": 2000, "jobs": 50000, "users": 50, "cycles": 3, "repeat": 1,
                    "submitters": 16, "schedulers": "backfill,bf-min,easypp",
                    "flow_jobs": 3000, "flow_seconds": 120}
        for k, v in defaults.items():
            if k not in given:
                setattr(a, k, v)
    a.schedulers = [s for s in a.schedulers.split(",") if s]
    if not a.schedulers or set(a.schedulers) - set(KIND):
        p.error("--schedulers: a comma list of %s" % ", ".join(KIND))
    if "easypp-old" in a.schedulers and not a.plugin_before:
        p.error("easypp-old needs --plugin-before DIR")
    a.scenarios = [s for s in a.scenarios.split(",") if s]
    bad = set(a.scenarios) - {"full", "frag", "flow"}
    if bad:
        p.error("unknown scenario(s): %s" % ", ".join(sorted(bad)))
    if not 0 <= a.flow_width <= 1:
        p.error("--flow-width: a share of the machine between 0 and 1")
    if a.cpus < 4 or a.nodes < 1 or a.jobs < 1 or a.users < 1 or a.cycles < 1:
        p.error("need --cpus >= 4 and positive --nodes, --jobs, --users, --cycles")
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        sys.stderr.write("slurm_bench: run as root (the cluster's slurmd run jobs as other "
                         "users)\n")
        return 2
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    if a.slurm_prefix:
        p = os.path.abspath(a.slurm_prefix)
        cluster.SLURM_PREFIX = p
        cluster.SLURMCTLD = os.path.join(p, "sbin", "slurmctld")
        cluster.SLURMD = os.path.join(p, "sbin", "slurmd")
    if a.scale and not cluster.front_end():
        sys.stderr.write("slurm_bench: --scale needs a front-end Slurm (one slurmd for all "
                         "nodes): bench/build-frontend-slurm.sh, then --slurm-prefix\n")
        return 2
    b = Bench(a)
    b.results["settings"].update({k: v for k, v in vars(a).items()})
    b.results["settings"]["command"] = " ".join([os.path.relpath(__file__)] + sys.argv[1:])
    b.results["settings"]["machine"] = {"host": socket.gethostname(), "cpus": os.cpu_count(),
                                        "model": cpu_model(),
                                        "loadavg_start": os.getloadavg()}
    t_start = time.time()
    rc = 0
    try:
        b.prepare_plugin()
        b.build_submitter()
        b.start_cluster()
        if "full" in a.scenarios or "frag" in a.scenarios:
            setup_blocked(b)
            if "full" in a.scenarios:
                run_blocked(b, "full")
            if "frag" in a.scenarios:
                b.cancel(b.fillers)
                b.wait_gone(b.fillers)
                b.wait_nodes(("mix",))
                check_queue_intact(b, "frag")
                run_blocked(b, "frag")
        if "flow" in a.scenarios:
            run_flow(b)
    except (BenchError, cluster.ClusterError) as e:
        sys.stderr.write("slurm_bench: %s\n" % e)
        rc = 1
    except KeyboardInterrupt:
        sys.stderr.write("slurm_bench: interrupted\n")
        rc = 130
    finally:
        b.stop()
    b.results["settings"]["machine"]["loadavg_end"] = os.getloadavg()
    b.results["total_seconds"] = round(time.time() - t_start, 1)
    if b.results["phases"]:
        text = report(b)
        print("total run time %.0fs" % b.results["total_seconds"])
        if a.out:
            with open(os.path.join(a.out, "report.txt"), "w") as f:
                f.write(text + "\n")
    if a.json or a.out:
        path = a.json or os.path.join(a.out, "results.json")
        with open(path, "w") as f:
            json.dump(b.results, f, indent=1, default=str)
        say("results in %s" % path)
    return rc


if __name__ == "__main__":
    sys.exit(main())
