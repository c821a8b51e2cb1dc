"""Integration test: easypp-shadow following a real cluster under sched/backfill.

One cluster scheduled by sched/backfill (a site before the switch) with
MariaDB, slurmdbd and slurmrestd (cluster.Cluster(rest=True));
SchedulerParameters carries an easypp_* key (easypp_fullness=partial: a
prediction from a single finished job too), which Slurm ignores and the
shadow must apply. Two shadows follow it from the start:

  A  slurmrestd (JWT over TCP), every 2 s, --slurm-conf, writing sched/easypp's
     state file (--state) and the HTML page (--report);
  B  squeue --json and sacct --json, every 3 s, settings from `scontrol show
     config`; stopped by SIGTERM in the middle of the run and started again
     on its own state file (it must continue, replaying the time it was
     down).

Three users run jobs with known runtimes and limits in three waves, so
predictions come from history and some jobs outlive them (corrections
fire); a held job is cancelled (never ran), an array splits into tasks.
Then:
  1. every judged job's first prediction is what the PredictionBook predicts
     for the history before it arrived (computed here from sacct's runtimes:
     the mean of the user's last two, rounded up, at most the limit; the
     limit without history), a job is corrected exactly when it ran longer
     than its prediction, and the accuracy figures are the metrics' (time-
     weighted over the job's life; limits: runtime / limit), per job and in
     the summary, per user and per partition;
  2. both shadows saw the same predictions and corrections, job for job;
  3. the state file A wrote loads in the plugin: slurmctld restarted with
     sched/easypp on it logs `history of 3 users`, easypp-ctl users shows the
     shadow's history, and a new job of a user is planned with the prediction
     that history gives.
No recorded response stands in for slurmrestd, squeue or sacct.
"""

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402

U1, U2, U3, U4 = cluster.TEST_USERS
BUILD = os.environ.get("EASYPP_BUILD_DIR", cluster.REPO_ROOT)
# setup.sh names the binaries built for the release under test (a Slurm 24.11
# root builds out of tree)
SHADOW = os.environ.get("EASYPP_SHADOW") or os.path.join(BUILD, "tools", "easypp-shadow")
CTL = os.environ.get("EASYPP_CTL") or os.path.join(BUILD, "plugin", "easypp-ctl")
REPORT_SCRIPT = os.path.join(cluster.REPO_ROOT, "tools", "easypp-report")
IMPORT = os.environ.get("EASYPP_IMPORT") or os.path.join(BUILD, "tools", "easypp-import")
# a job name of bytes that are not UTF-8 (sbatch -J $'a\xff\xfeb'): str with
# surrogates, which subprocess passes on as those bytes
BAD_NAME = os.fsdecode(b"a\xff\xfeb")


def accuracy(p, r):
    """libsim's prediction_accuracy."""
    if p == r:
        return 1.0
    if p <= 0 or r <= 0:
        return 0.0
    return r / p if p > r else p / r


@unittest.skipUnless(os.access(SHADOW, os.X_OK), "easypp-shadow not built")
class ShadowTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        why = cluster.accounting_available()
        if why:
            raise unittest.SkipTest(why)
        t0 = time.time()
        cls.timings = {}
        # The test jobs run seconds: the shadow learns every runtime, as the
        # plugin does in these tests (cluster.py; the default learns >= 60 s).
        cls.c = c = cluster.Cluster(
            scheduler="sched/backfill", nodes=2, cpus=2, rest=True,
            scheduler_parameters="sched_interval=2,bf_interval=2,easypp_fullness=partial,"
                                 "easypp_learn_min_runtime=0")
        c.start()
        cls.timings["cluster start"] = time.time() - t0
        try:
            cls.follow()
        except BaseException:
            for p in getattr(cls, "procs", {}).values():
                if p.poll() is None:
                    p.kill()
            c.stop()
            raise

    @classmethod
    def shadow(cls, name, *args):
        env = cls.c.env(SLURM_JWT=cls.token, EASYPP_REPORT=REPORT_SCRIPT)
        out = open(cls.out(name + ".json"), "a")
        err = open(cls.out(name + ".log"), "a")
        try:
            return subprocess.Popen([SHADOW] + list(args), stdout=out, stderr=err, env=env)
        finally:
            out.close()
            err.close()

    @classmethod
    def out(cls, name):
        return cls.c.path("shadow", name)

    @classmethod
    def follow(cls):
        c = cls.c
        t0 = time.time()
        os.makedirs(c.path("shadow"))
        os.chmod(c.path("shadow"), 0o755)  # (the shadow refuses group-writable directories)
        cls.token = c.acct.token("root", lifespan=3600)
        cls.procs = {}
        a_args = ["--url", c.acct.rest_url, "--user", "root", "--interval", "2",
                  "--slurm-conf", c.conf_path, "--shadow-state", cls.out("a-state.json"),
                  "--state", cls.out("easypp_state.json"), "--report", cls.out("html"),
                  "--json"]
        b_args = ["--commands", "--interval", "3", "--shadow-state", cls.out("b-state.json"),
                  "--json"]
        cls.procs["a"] = cls.shadow("a", *a_args)
        cls.procs["b"] = cls.shadow("b", *b_args)
        c.wait_for("both shadows' first poll", lambda: all(
            "poll 1:" in cls.log(n) for n in ("a", "b")), timeout=30)

        # wave 1: no history yet (predictions are the limits)
        # (U1's job is named with bytes that are not UTF-8, which Slurm
        # accepts and 22.05 emits raw in JSON: the shadows must not care)
        ids = [c.submit(wrap="sleep 3", time_min=5, ntasks=1, user=U1, name=BAD_NAME),
               c.submit(wrap="sleep 2", time_min=3, ntasks=1, user=U2),
               c.submit(wrap="sleep 4", time_min=2, ntasks=1, user=U3)]
        held = c.submit(wrap="sleep 1", time_min=1, ntasks=1, user=U4, extra=["--hold"])
        c.wait_jobs(ids, timeout=60)
        time.sleep(2)  # arrivals of the next wave well after these ends
        # wave 2: U1's job outlives its prediction (3 s), U2's array tasks and
        # U3's job do not
        w2 = [c.submit(wrap="sleep 10", time_min=5, ntasks=1, user=U1),
              c.submit(wrap="sleep 1", time_min=3, ntasks=1, user=U2, extra=["--array=1-2"]),
              c.submit(wrap="sleep 1", time_min=2, ntasks=1, user=U3)]
        c.cancel(held)
        c.wait_jobs(w2[2:], timeout=60)
        # B goes down in the middle, while U1's long job runs
        cls.procs["b"].send_signal(signal.SIGTERM)
        cls.procs["b"].wait(30)
        cls.b_first_rc = cls.procs["b"].returncode
        time.sleep(4)
        cls.procs["b"] = cls.shadow("b", *b_args)
        c.wait_jobs(w2, timeout=60)
        time.sleep(2)
        # wave 3: U1 from (3, 10): 7 s, runs 2; U2 from its array tasks, runs 5
        w3 = [c.submit(wrap="sleep 2", time_min=5, ntasks=1, user=U1),
              c.submit(wrap="sleep 5", time_min=3, ntasks=1, user=U2)]
        cls.jobs = c.wait_jobs(ids + w2 + w3 + [held], timeout=60)
        cls.timings["jobs"] = time.time() - t0
        # both shadows have seen every end (a poll after the last end + 1 s)
        last = max(j["end"] for j in cls.jobs.values() if j["end"])
        c.wait_for("a poll of each shadow after the last end", lambda: time.time() > last + 8,
                   timeout=30)
        for p in cls.procs.values():
            p.send_signal(signal.SIGTERM)
        for name, p in cls.procs.items():
            p.wait(60)
        cls.rc = {n: p.returncode for n, p in cls.procs.items()}
        cls.reports = {}
        for n in ("a", "b"):
            with open(cls.out(n + ".json")) as f:
                text = f.read()
            # B printed a report when it was stopped in the middle, then the final one
            docs, pos, dec = [], 0, json.JSONDecoder()
            while text[pos:].strip():
                doc, end = dec.raw_decode(text, pos + len(text[pos:]) - len(text[pos:].lstrip()))
                docs.append(doc)
                pos = end
            cls.reports[n] = docs[-1]
            cls.report_count = getattr(cls, "report_count", {})
            cls.report_count[n] = len(docs)
        cls.sacct = cls.accounting()
        cls.timings["following"] = time.time() - t0

    @classmethod
    def log(cls, name):
        try:
            with open(cls.out(name + ".log")) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    @classmethod
    def accounting(cls):
        """Every job in sacct: id -> (user, start, end, runtime, limit seconds, state)."""
        p = cls.c.client("sacct", "-a", "-X", "-n", "-P", "-o",
                         "JobIDRaw,User,Start,End,ElapsedRaw,TimelimitRaw,State",
                         "-S", "now-1days")
        out = {}
        for line in p.stdout.splitlines():
            f = line.split("|")
            if len(f) < 7 or not f[0].isdigit():
                continue
            start, end = cluster.parse_time(f[2]), cluster.parse_time(f[3])
            out[int(f[0])] = {"user": f[1], "start": start, "end": end, "runtime": int(f[4] or 0),
                              "limit": int(f[5]) * 60 if f[5].isdigit() else None,
                              "state": f[6].split()[0]}
        return out

    @classmethod
    def tearDownClass(cls):
        c = getattr(cls, "c", None)
        if c is not None:
            t0 = time.time()
            c.stop()
            cls.timings["cluster stop"] = time.time() - t0
            sys.stderr.write("[shadow] timings: %s\n" % ", ".join(
                "%s %.1fs" % kv for kv in cls.timings.items()))

    # --- 1. the predictions are the core's for that history ----------------------

    def test_1_predictions_from_history(self):
        self.assertEqual(self.rc, {"a": 0, "b": 0}, self.log("a")[-2000:] + self.log("b")[-2000:])
        self.assertEqual(self.b_first_rc, 0)
        doc = self.reports["a"]
        self.assertEqual(doc["settings"]["easypp_fullness"], "partial", "slurm.conf's key applied")
        # the highest OpenAPI versions slurmrestd serves: 22.05 serves v0.0.36-38
        self.assertRegex(doc["source"], r"/slurm/v0\.0\.(\d+)/jobs \+ /slurmdb/v0\.0\.\d+/jobs")
        if cluster.slurm_release() == "22.05":
            self.assertIn("/slurm/v0.0.38/jobs + /slurmdb/v0.0.38/jobs", doc["source"])
        jobs = doc["jobs"]
        ran = {i: j for i, j in self.sacct.items() if j["runtime"] > 0}
        self.assertEqual(len(jobs), 9, [j["name"] for j in jobs])
        self.assertEqual({j["job_id"] for j in jobs}, set(ran), "every job that ran is judged")
        self.assertEqual(doc["not_judged"]["never_ran"], 1, "the held job, cancelled")
        # the core's prediction for the history before each arrival
        for j in jobs:
            with self.subTest(job=j["name"]):
                acct = self.sacct[j["job_id"]]
                self.assertEqual(j["user"], acct["user"])
                self.assertEqual(j["runtime"], acct["runtime"])
                self.assertEqual(j["limit"], acct["limit"])
                before = sorted((o["end"], i) for i, o in ran.items()
                                if o["user"] == j["user"] and o["end"] < j["arrival"])
                last = [ran[i]["runtime"] for _, i in before][-2:]
                want = min(-(-sum(last) // len(last)), j["limit"]) if last else j["limit"]
                self.assertEqual(j["first_prediction"], want, (j, last))
                self.assertEqual(j["from_history"], bool(last))
                self.assertEqual(j["start_prediction"], j["first_prediction"])
                # corrected exactly when it outlived its prediction (correction=estimate:
                # to its limit)
                self.assertEqual(j["corrections"], 1 if j["runtime"] > j["start_prediction"] else 0)
                self.assertEqual(j["final_prediction"],
                                 j["limit"] if j["corrections"] else j["start_prediction"])
                # the metrics' accuracy, time-weighted over its life
                life = j["end"] - j["arrival"]
                due = j["start"] + j["start_prediction"] + 1
                if j["corrections"] and life > 0:
                    want_acc = (accuracy(j["start_prediction"], j["runtime"]) * (due - j["arrival"]) +
                                accuracy(j["limit"], j["runtime"]) * (j["end"] - due)) / life
                else:
                    want_acc = accuracy(j["final_prediction"], j["runtime"])
                self.assertAlmostEqual(j["accuracy"], want_acc, places=5)
                self.assertAlmostEqual(j["limit_accuracy"], accuracy(j["limit"], j["runtime"]), places=5)
        corrected = [j["name"] for j in jobs if j["corrections"]]
        self.assertGreaterEqual(len(corrected), 2, "U1's 10 s job and U2's 5 s job outlive theirs")
        self.assertEqual(doc["corrections"], sum(j["corrections"] for j in jobs))
        self.assertGreaterEqual(sum(j["from_history"] for j in jobs), 6)

    def test_1_summary_figures(self):
        doc = self.reports["a"]
        jobs = doc["jobs"]
        s = doc["summary"]
        n = len(jobs)
        self.assertEqual(s["jobs"], n)
        self.assertAlmostEqual(s["prediction_accuracy_percent"],
                               100 * sum(j["accuracy"] for j in jobs) / n, places=2)
        self.assertAlmostEqual(s["limit_accuracy_percent"],
                               100 * sum(j["limit_accuracy"] for j in jobs) / n, places=2)
        for k in (2, 5, 10):
            self.assertAlmostEqual(s["limit_over_%dx_runtime_percent" % k],
                                   100 * sum(j["limit"] > k * j["runtime"] for j in jobs) / n,
                                   places=2)
        self.assertGreater(s["prediction_accuracy_percent"], s["limit_accuracy_percent"])
        users = {u["user"]: u for u in doc["users"]}
        self.assertEqual(set(users), {U1, U2, U3})
        for name, u in users.items():
            mine = [j for j in jobs if j["user"] == name]
            self.assertEqual(u["jobs"], len(mine))
            self.assertEqual(u["corrections"], sum(j["corrections"] for j in mine))
            self.assertAlmostEqual(u["prediction_accuracy_percent"],
                                   100 * sum(j["accuracy"] for j in mine) / len(mine), places=2)
        self.assertEqual([p["partition"] for p in doc["partitions"]], ["batch"])
        self.assertEqual(doc["partitions"][0]["jobs"], n)
        # the page and its data
        with open(self.out("html/index.html")) as f:
            page = f.read()
        self.assertIn("easypp-shadow report", page)
        self.assertEqual(page.count("<svg"), 3, "accuracy, ratios, users")
        self.assertEqual(os.stat(self.out("html")).st_mode & 0o777, 0o700)
        # accounting was read on every poll
        self.assertRegex(self.log("a"), r"read \d+ jobs from slurmctld, [1-9]\d* from accounting")

    @unittest.skipUnless(os.access(os.environ.get("CHROMIUM", "/usr/bin/chromium"), os.X_OK),
                         "cannot run here: chromium not installed (apt-get install chromium; "
                         "./setup.sh test installs it on the host and in the Debian 13 root)")
    def test_1_page_in_chromium(self):
        """The page as a reader sees it: no console error, nothing fetched,
        every chart drawn (the checker of easypp-sim's page)."""
        check = os.path.join(cluster.REPO_ROOT, "tests", "cli", "check_report_page.py")
        p = subprocess.run(["/usr/bin/python3", check, self.out("html/index.html"),
                            "accuracy", "ratio", "users"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    # --- 2. both sources, and B's restart -------------------------------------------

    def test_2_both_shadows_agree(self):
        keys = ("name", "user", "limit", "runtime", "first_prediction", "start_prediction",
                "final_prediction", "corrections", "from_history", "arrival")
        a = {j["job_id"]: {k: j[k] for k in keys} for j in self.reports["a"]["jobs"]}
        b = {j["job_id"]: {k: j[k] for k in keys} for j in self.reports["b"]["jobs"]}
        # An array task gets its own job id when it leaves the array's
        # pending record; each observer first sees that id at one of its own
        # polls, so the task's arrival may differ by a second or two between
        # them (the arrays' other figures may not).
        self.assertEqual(sorted(a), sorted(b))
        for jid in a:
            if "_" in a[jid]["name"]:
                self.assertLessEqual(abs(a[jid]["arrival"] - b[jid]["arrival"]), 3,
                                     (jid, a[jid], b[jid]))
                a[jid]["arrival"] = b[jid]["arrival"]
        self.assertEqual(a, b)
        self.assertEqual(self.reports["b"]["source"], "squeue --json + sacct --json")
        self.assertIn("continuing from", self.log("b"))
        self.assertEqual(self.report_count["b"], 2, "a report at each stop")
        self.assertEqual(self.reports["b"]["settings"]["easypp_fullness"], "partial",
                         "scontrol show config's SchedulerParameters")
        self.assertEqual(self.reports["a"]["corrections"], self.reports["b"]["corrections"])
        self.assertEqual(os.stat(self.out("b-state.json")).st_mode & 0o777, 0o600)

    # --- 3. the switch: the plugin starts with the shadow's history --------------------

    def test_3_plugin_loads_the_history(self):
        t0 = time.time()
        c = self.c
        state = self.out("easypp_state.json")
        st = os.stat(state)
        self.assertEqual((st.st_mode & 0o777, st.st_uid), (0o600, 0))  # SlurmUser=root
        with open(state) as f:
            saved = json.load(f)
        rings = {r["user"]: [e[0] for e in r["history"]] for r in saved["users"]}
        self.assertEqual(len(rings), 3)
        self.assertEqual(saved["learned_jobs"], 9)

        def switch():
            c.scheduler = "sched/easypp"
            c.scheduler_parameters = "sched_interval=2,easypp_interval=1,easypp_fullness=partial"
            c.write_conf()
            shutil.copy2(state, c.state_path())
        c.restart_slurmctld(while_stopped=switch)
        m = c.wait_log(r"sched/easypp: history of (\d+) users \((\d+) jobs learned so far\)")
        self.assertEqual((m.group(1), m.group(2)), ("3", "9"))
        c.wait_for("the plugin's first cycles", lambda: (c.status() or {}).get("totals", {})
                   .get("cycles", 0) >= 2, timeout=30)
        p = subprocess.run([CTL, "--dir", c.path("state"), "--json", "users"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        ctl = {r["user"]: [e[0] for e in r["history"]] for r in json.loads(p.stdout)
               if r["estimate_key"] == -1}
        self.assertEqual(ctl, rings, "the plugin learned nothing twice")
        # U1's next job: planned with the prediction the shadow's history gives
        u1 = rings[c.users[U1]]
        want = -(-sum(u1[-2:]) // len(u1[-2:]))
        job = c.submit(wrap="sleep 30", time_min=30, ntasks=1, user=U1)
        seen = c.wait_for("U1's job in easypp-ctl jobs", lambda: self.ctl_job(job))
        c.cancel(job)
        self.assertTrue(seen["from_history"], seen)
        self.assertEqual(seen["prediction"], want, (seen, u1))
        self.timings["switch"] = time.time() - t0

    def ctl_job(self, job_id):
        return cluster.ctl_job(CTL, self.c.path("state"), job_id)

    # --- 4. a job name that is not UTF-8 blinds no tool -------------------------------

    def test_4_import_reads_a_name_that_is_not_utf8(self):
        """easypp-import, from slurmrestd and from sacct --json, over the same
        range as the shadows (U1's first job is named a\xff\xfeb): every job
        read, the bytes replaced and counted, exit 0."""
        c = self.c
        e = c.env(SLURM_JWT=self.token)
        for name, args in (("rest", ["--url", c.acct.rest_url]), ("sacct", ["--run-sacct"])):
            with self.subTest(source=name):
                out = self.out("import-%s.swf" % name)
                p = subprocess.run([IMPORT] + args + ["--days", "1", "--procs", "8", "-o", out],
                                   capture_output=True, text=True, errors="surrogateescape",
                                   env=e, timeout=120)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(out) as f:
                    jobs = [ln for ln in f if ln.strip() and not ln.startswith(";")]
                self.assertGreaterEqual(len(jobs), 9, p.stderr)
        # Whether accounting hands the raw bytes on depends on the database
        # (MariaDB may store them replaced): if sacct --json carries them,
        # the import must have counted them.
        raw = subprocess.run(["sacct", "--json", "-a", "-S", "now-1days"], capture_output=True,
                             env=c.env(), timeout=60).stdout
        if b"a\xff\xfeb" in raw:
            self.assertIn("records with bytes that are not UTF-8", p.stderr)

    def test_5_shadow_polls_a_pending_name_that_is_not_utf8(self):
        """A pending job named a\xff\xfeb, as squeue --json shows it (Slurm
        22.05 emits the bytes raw: checked), and one more poll of a shadow
        over squeue and sacct: exit 0, the jobs read."""
        c = self.c
        job = c.submit(wrap="sleep 1", time_min=1, ntasks=1, user=U2, name=BAD_NAME,
                       extra=["--hold"])
        try:
            raw = subprocess.run(["squeue", "--json"], capture_output=True, env=c.env(),
                                 timeout=60).stdout
            if cluster.slurm_release() == "22.05":
                self.assertIn(b"a\xff\xfeb", raw, "22.05's squeue --json emits the bytes raw")
            p = subprocess.run([SHADOW, "--commands", "--polls", "1", "--json",
                                "--shadow-state", self.out("c-state.json")],
                               capture_output=True, text=True, errors="surrogateescape",
                               env=c.env(), timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("malformed", p.stderr)
            # (a held job is not counted as pending, but it is read)
            self.assertRegex(p.stderr, r"poll 1: .*read [1-9]\d* jobs from slurmctld")
        finally:
            c.cancel(job)


if __name__ == "__main__":
    unittest.main()
