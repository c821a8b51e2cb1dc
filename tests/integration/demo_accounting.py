"""Shows an import, a warm start and a shadow report on a localhost cluster
(sched/backfill, MariaDB, slurmdbd, slurmrestd; three waves of jobs of three
users), printing each command and its output. Not a test. As root, in a
built tree:

    python3 tests/integration/demo_accounting.py "$PWD"
"""
import os, shlex, signal, subprocess, sys, time
TREE = sys.argv[1]
sys.path.insert(0, os.path.join(TREE, "tests", "integration"))
import cluster  # noqa
U1, U2, U3, U4 = cluster.TEST_USERS
T = lambda p: os.path.join(TREE, "tools", p)

def show(cmd, env, **kw):
    print("$", " ".join(shlex.quote(x) for x in cmd), flush=True)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)
    sys.stdout.write(p.stdout[-3000:]); sys.stdout.write(p.stderr[-3000:])
    print("(exit %d)" % p.returncode, flush=True)
    return p

c = cluster.Cluster(scheduler="sched/backfill", nodes=2, cpus=2, rest=True,
                    scheduler_parameters="sched_interval=2,bf_interval=2,easypp_learn_min_runtime=0")
c.start()
try:
    out = c.path("demo"); os.makedirs(out); os.chmod(out, 0o755)
    tok = c.acct.token("root", lifespan=3600)
    env = c.env(SLURM_JWT=tok)
    sh = subprocess.Popen([T("easypp-shadow"), "--url", c.acct.rest_url, "--user", "root",
                           "--interval", "2", "--slurm-conf", c.conf_path,
                           "--shadow-state", os.path.join(out, "shadow-state.json"),
                           "--state", os.path.join(out, "shadow_easypp_state.json"),
                           "--report", os.path.join(out, "html")],
                          env=env, stdout=open(os.path.join(out, "shadow.txt"), "w"),
                          stderr=open(os.path.join(out, "shadow.log"), "w"))
    time.sleep(3)
    ids = []
    for wave in range(3):
        ids += [c.submit(wrap="sleep %d" % (3 + wave * 4), time_min=5, ntasks=1, user=U1),
                c.submit(wrap="sleep 2", time_min=10, ntasks=1, user=U2),
                c.submit(wrap="sleep 4", time_min=3, ntasks=1, user=U3)]
        c.wait_jobs(ids, timeout=120)
        time.sleep(2)
    c.wait_for("accounting", lambda: c.client("sacct", "-a", "-X", "-n", "-P", "-o", "State",
               "-S", "now-1days", check=False).stdout.count("COMPLETED") >= len(ids), timeout=60)
    time.sleep(6)
    sh.send_signal(signal.SIGTERM); sh.wait(30)
    print("$ easypp-shadow --url %s --user root --interval 2 --slurm-conf ... --report DIR "
          "(stopped with SIGTERM after 3 waves of jobs; exit %d)" % (c.acct.rest_url, sh.returncode))
    sys.stdout.write(open(os.path.join(out, "shadow.txt")).read()[-4000:])
    print("--- its log (tail)"); sys.stdout.write(open(os.path.join(out, "shadow.log")).read()[-1500:])
    show([T("easypp-import"), "--url", c.acct.rest_url, "--user", "root", "--days", "1",
          "-o", os.path.join(out, "site.swf")], env)
    show([T("easypp-sim"), "-w", os.path.join(out, "site.swf"), "-s", "easy,easy++,site"], env)
    state = c.state_path()
    c.scheduler = "sched/easypp"
    c.scheduler_parameters = "sched_interval=2,easypp_interval=1,easypp_learn_min_runtime=0"
    def seed():
        c.write_conf()
        show([T("easypp-import"), "--url", c.acct.rest_url, "--user", "root", "--days", "1",
              "--state", state, "--slurm-conf", c.conf_path], env)
    c.restart_slurmctld(while_stopped=seed)
    print(c.wait_log(r"sched/easypp: history of .*").group(0))
    j = c.submit(wrap="sleep 30", time_min=10, ntasks=1, user=U1)
    c.wait_for("the plugin's cycle", lambda: any(str(j) in l for l in subprocess.run(
        [os.path.join(TREE, "plugin", "easypp-ctl"), "--dir", c.path("state"), "jobs"],
        capture_output=True, text=True).stdout.splitlines()), timeout=30)
    show([os.path.join(TREE, "plugin", "easypp-ctl"), "--dir", c.path("state"), "jobs"], env)
    show([os.path.join(TREE, "plugin", "easypp-ctl"), "--dir", c.path("state"), "users"], env)
finally:
    c.stop()
