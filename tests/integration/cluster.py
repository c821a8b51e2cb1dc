"""A real Slurm cluster on localhost for integration tests (Python 3 stdlib).

Starts a private munged (one per test run, its own key and socket), one
slurmctld and N slurmd daemons (one per node,
all on 127.0.0.1 with their own ports) from a generated slurm.conf in a fresh
temporary directory, and always stops them again: on stop(), at interpreter
exit, on SIGTERM/SIGHUP and on Ctrl-C.

    with Cluster(scheduler="sched/easypp", nodes=8) as c:
        job = c.submit(time_min=2, nodes=2, wrap="sleep 5", user="easypp-u1")
        c.wait_jobs([job])
        print(c.job(job)["JobState"])

Cluster(accounting=True) adds a private MariaDB and slurmdbd (sacct works);
Cluster(rest=True) also slurmrestd, as a non-root user (class Accounting).

Needs root (slurmd runs jobs as other users; SlurmUser=root). See
docs/plugin-internals.md and the Slurm integration spec, section 5.

Every job submitted through Cluster.submit() is recorded in JOB_REGISTRY; when
a cluster stops, the final record of each of its jobs is read first, so a
last test can check over the whole suite that no job ended before its time
limit unless its own script finished (see test_zz_suite.py).

Environment:
  EASYPP_PLUGIN_DIR       directory holding the built sched_easypp.so
                          (default: <repo>/plugin)
  EASYPP_SLURM_PLUGINDIR  Slurm's own plugin directory (default: detected)
  EASYPP_KEEP_CLUSTER_DIR keep the temporary directory after stop (debugging)
  EASYPP_SLURM_PREFIX     a private Slurm build (bench/build-frontend-slurm.sh,
                          contrib/build-slurm-tarball.sh): its sbin/ daemons
                          (slurmdbd and slurmrestd too where it has them), bin/
                          clients and lib/slurm plugins instead of the
                          system's; a front-end build is run
                          with one slurmd as FrontendName serving every node
  EASYPP_CTLD_PRELOAD     LD_PRELOAD for slurmctld only, e.g. libasan.so.8 to
                          load a plugin built with -fsanitize=address (make
                          check-plugin-asan)
"""

import atexit
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SLURM_PREFIX = os.environ.get("EASYPP_SLURM_PREFIX") or None
SLURMCTLD = os.path.join(SLURM_PREFIX or "/usr", "sbin", "slurmctld")
SLURMD = os.path.join(SLURM_PREFIX or "/usr", "sbin", "slurmd")
# The public header of the Slurm in use (its SLURM_VERSION_NUMBER).
SLURM_VERSION_H = os.path.join(SLURM_PREFIX or "/usr", "include", "slurm", "slurm_version.h")
MUNGED = "/usr/sbin/munged"
# slurmdbd and slurmrestd of the same release as slurmctld (an older slurmdbd
# refuses a newer slurmctld): the prefix's when it has them.
SLURMDBD = os.path.join(SLURM_PREFIX if SLURM_PREFIX and os.access(
    os.path.join(SLURM_PREFIX, "sbin", "slurmdbd"), os.X_OK) else "/usr", "sbin", "slurmdbd")
SLURMRESTD = os.path.join(SLURM_PREFIX if SLURM_PREFIX and os.access(
    os.path.join(SLURM_PREFIX, "sbin", "slurmrestd"), os.X_OK) else "/usr", "sbin", "slurmrestd")
MARIADBD = "/usr/sbin/mariadbd"
MARIADB_INSTALL_DB = "/usr/bin/mariadb-install-db"
# slurmrestd refuses to run as root (or SlurmUser): it runs as this user.
REST_USER = "easypp-rest"
TEST_USERS = ("easypp-u1", "easypp-u2", "easypp-u3", "easypp-u4")
# Marker put into every daemon's environment: processes that carry it (job
# steps, their children) belong to this harness and are killed on stop().
MARKER = "EASYPP_TEST_CLUSTER"

_PLUGINDIR_CANDIDATES = (
    "/usr/lib/x86_64-linux-gnu/slurm-wlm",
    "/usr/lib/aarch64-linux-gnu/slurm-wlm",
    "/usr/lib64/slurm",
    "/usr/lib/slurm",
)



def ctl_job(ctl, state_dir, job_id):
    """Job `job_id` as `easypp-ctl --json jobs` shows it from the plugin's
    status file in `state_dir` (a dict), or None."""
    p = subprocess.run([ctl, "--dir", state_dir, "--json", "jobs"],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        return None
    for j in json.loads(p.stdout):
        if j.get("job_id") == job_id:
            return j
    return None

# slurm.conf's KillWait and MessageTimeout; wait_jobs() derives from them how
# long Slurm takes to re-send a kill whose epilog-complete reply was lost.
KILL_WAIT = 5
MESSAGE_TIMEOUT = 10


class ClusterError(RuntimeError):
    """A daemon failed to start or a client command failed."""


def log(msg):
    sys.stderr.write("[cluster %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def run(cmd, timeout=30, check=True, env=None, input=None):
    """Run cmd (list) under `timeout`; return CompletedProcess (text; bytes
    that are not UTF-8, as in a job name a user typed, as surrogates)."""
    full = ["timeout", "-k", "3", str(int(timeout))] + list(cmd)
    try:
        p = subprocess.run(full, capture_output=True, text=True, env=env,
                           errors="surrogateescape", input=input, timeout=timeout + 10)
    except subprocess.TimeoutExpired:
        raise ClusterError("command hung: %s" % " ".join(cmd))
    if check and p.returncode != 0:
        what = "timed out after %ss" % timeout if p.returncode == 124 else \
            "exit status %d" % p.returncode
        raise ClusterError("%s: %s\n%s%s" % (" ".join(cmd), what, p.stdout, p.stderr))
    return p


def tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "(cannot read %s: %s)" % (path, e)


# --- the Slurm release under test ------------------------------------------------
# Tests branch on the release only where Slurm itself behaves differently;
# each such difference is named here.

_slurm_version = None


def slurm_version():
    """The installed slurmctld's (major, minor, micro), from `slurmctld -V`
    ("slurm-wlm 22.05.8", "slurm 24.11.5")."""
    global _slurm_version
    if _slurm_version is None:
        out = run([SLURMCTLD, "-V"], timeout=10).stdout
        m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
        if not m:
            raise ClusterError("cannot read the Slurm version from %r" % out)
        _slurm_version = tuple(int(x) for x in m.groups())
    return _slurm_version


def slurm_release():
    """"22.05", "24.11": the release the plugin was built for."""
    return "%02d.%02d" % slurm_version()[:2]


def reconfigure_restarts():
    """From Slurm 23.11 on, `scontrol reconfigure` makes slurmctld exec itself
    again: the plugin is unloaded (fini, state saved) and loaded anew (init,
    state restored), which logs `sched/easypp: loaded (...)` with the new
    settings. Up to 23.02 slurmctld calls sched_p_reconfig() and the plugin
    logs `sched/easypp: reconfigured (...)`."""
    return slurm_version() >= (23, 11)


def reconfigured_pattern(settings):
    """Regex of the log line showing that a reconfigure took effect with
    settings matching `settings` (a regex of the settings' start)."""
    if reconfigure_restarts():
        return r"sched/easypp: loaded \(easypp [^,]*, Slurm [^,]*, " + settings
    return r"sched/easypp: reconfigured \(" + settings


def front_end():
    """True when the Slurm in use was built with --enable-front-end: one
    slurmd (FrontendName) serves every node, nodes need no slurmd each."""
    if SLURM_PREFIX is None:
        return False
    try:
        with open(os.path.join(SLURM_PREFIX, "build", "config.h")) as f:
            return "#define HAVE_FRONT_END 1" in f.read()
    except OSError:
        return False


def slurm_plugindir():
    d = os.environ.get("EASYPP_SLURM_PLUGINDIR")
    if d:
        return d
    if SLURM_PREFIX is not None:
        return os.path.join(SLURM_PREFIX, "lib", "slurm")
    for d in _PLUGINDIR_CANDIDATES:
        if os.path.exists(os.path.join(d, "sched_backfill.so")):
            return d
    raise ClusterError("cannot find Slurm's plugin directory (set EASYPP_SLURM_PLUGINDIR)")


def easypp_plugindir():
    return os.path.abspath(os.environ.get("EASYPP_PLUGIN_DIR",
                                          os.path.join(REPO_ROOT, "plugin")))


def parse_time(value):
    """Slurm's local ISO time (2024-01-02T03:04:05) to Unix time; None if unset."""
    if not value or value in ("None", "Unknown", "N/A", "(null)"):
        return None
    try:
        return int(time.mktime(time.strptime(value, "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


_KEY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_:/]*)=(.*)$")


def parse_kv_line(line):
    """'A=1 B=x y C=2' -> dict; a word without '=' continues the previous value."""
    out = {}
    last = None
    for word in line.strip().split(" "):
        m = _KEY_RE.match(word)
        if m:
            last = m.group(1)
            out[last] = m.group(2)
        elif last is not None:
            out[last] += " " + word
    return out


# --- munge and test users ----------------------------------------------------

class PrivateMunge:
    """A munged of this test run only: its own key, socket, log and seed in
    a fresh directory, run as user munge in the foreground. Every daemon and
    client of the test clusters finds it through slurm.conf's (and
    slurmdbd.conf's) AuthInfo=socket=; the machine's own munged, if any, is
    neither used nor touched. Stopped, and its directory removed, when the
    last cluster of the run has stopped (_stop_all, at exit)."""

    def __init__(self):
        try:
            self.pw = pwd.getpwnam("munge")
        except KeyError:
            raise ClusterError("user 'munge' does not exist (apt-get install munge)")
        self.dir = tempfile.mkdtemp(prefix="easypp-munge-")
        self.proc = None
        os.chown(self.dir, self.pw.pw_uid, self.pw.pw_gid)
        os.chmod(self.dir, 0o755)  # clients (test users) reach the socket
        self.socket = os.path.join(self.dir, "munge.socket")
        self.key = os.path.join(self.dir, "munge.key")
        with open(self.key, "wb") as f:
            f.write(os.urandom(1024))
        os.chown(self.key, self.pw.pw_uid, self.pw.pw_gid)
        os.chmod(self.key, 0o400)

    def works(self):
        try:
            p = subprocess.run("munge -n -S %s | unmunge -S %s" % (self.socket, self.socket),
                               shell=True, capture_output=True, timeout=10)
            return p.returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def start(self):
        log("starting a private munged (socket %s)" % self.socket)
        d = self.dir
        self.proc = subprocess.Popen(
            ["runuser", "-u", "munge", "--", MUNGED, "--foreground", "--socket", self.socket,
             "--key-file", self.key, "--pid-file", os.path.join(d, "munged.pid"),
             "--log-file", os.path.join(d, "munged.log"),
             "--seed-file", os.path.join(d, "munged.seed")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            if self.works():
                return
            time.sleep(0.2)
        why = tail(os.path.join(d, "munged.log"))
        self.stop()
        raise ClusterError("munged did not start: %s" % why)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(10)
        self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


_munge = None


def ensure_munge():
    """This run's private munged (PrivateMunge), started on first use;
    returns its socket path."""
    global _munge
    if _munge is None or _munge.proc is None or _munge.proc.poll() is not None:
        if _munge is not None:
            _munge.stop()
        _munge = PrivateMunge()
        _munge.start()
    return _munge.socket


def stop_munge():
    global _munge
    if _munge is not None:
        log("stopping the private munged")
        _munge.stop()
        _munge = None


def ensure_users(names=TEST_USERS):
    """Create unprivileged test users if missing; return {name: uid}."""
    out = {}
    for n in names:
        try:
            out[n] = pwd.getpwnam(n).pw_uid
            continue
        except KeyError:
            pass
        run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
             "--shell", "/bin/sh", "--user-group", n])
        out[n] = pwd.getpwnam(n).pw_uid
    return out


def _port_free(port):
    # Without SO_REUSEADDR: a port with connections in TIME_WAIT (a daemon of
    # an earlier cluster closed them) counts as busy, since a daemon that
    # binds without SO_REUSEADDR would fail there (24.11's slurmrestd did, in
    # a full run: "Unable to bind socket: Address already in use").
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _ephemeral_range():
    """The kernel's range of local ports for outgoing connections."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
            return lo, hi
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def port_share():
    """EASYPP_PORT_SHARE=K/N: this run's daemons take their ports only from
    the thousands T (20000-20999 is T=20) with T % N == K; default 0/1 (all).
    Suites that run at once on one host take different shares (./setup.sh
    test runs the sanitizer build's clusters beside the other release's
    suite): a block one suite picked is not bound until its daemons start,
    and the other suite would find it free meanwhile (seen: slurmd "Unable
    to bind listen port (22608): Address already in use")."""
    text = os.environ.get("EASYPP_PORT_SHARE", "").strip()
    if not text:
        return 0, 1
    m = re.fullmatch(r"(\d+)/(\d+)", text)
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)) <= 8:
        raise ClusterError("EASYPP_PORT_SHARE=%r: expected K/N with 0 <= K < N <= 8" % text)
    return int(m.group(1)), int(m.group(2))


def pick_ports(count):
    """A random block of `count` consecutive free TCP ports, outside the
    kernel's ephemeral range: a port free when picked is not bound until the
    daemon starts, and in between any outgoing connection of the daemons
    already up (slurmd to slurmctld, clients to slurmdbd) may be given it
    as its local port (a full CI run: slurmrestd "Unable to bind socket:
    Address already in use" on a port picked 30 s before)."""
    lo, hi = _ephemeral_range()
    k, n = port_share()
    choices = [b for b in range(20000, 60000 - count, 1)
               if (b + count <= lo or b > hi) and
               (n == 1 or (b // 1000 % n == k and (b + count - 1) // 1000 == b // 1000))]
    if not choices:
        raise ClusterError("no ports between 20000 and 60000 outside the ephemeral range %d-%d"
                           "%s" % (lo, hi, " in share %d/%d" % (k, n) if n > 1 else ""))
    for _ in range(200):
        base = random.choice(choices)
        if all(_port_free(base + i) for i in range(count)):
            return base
    raise ClusterError("no free block of %d ports" % count)


# --- every job of the suite ----------------------------------------------------

# One dict per job submitted through Cluster.submit(): cluster (its
# directory), job_id, time_limit (minutes), user, name, cancelled (by the
# test itself), and once the cluster stopped: final (the last
# `scontrol show job` record as a dict, None if slurmctld had forgotten it).
JOB_REGISTRY = []

FINISHED_STATES = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                   "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED")


def parse_duration(value):
    """Slurm's [D-]HH:MM:SS, MM:SS or minutes to seconds; None for UNLIMITED."""
    if not value or value in ("UNLIMITED", "INFINITE", "Partition_Limit", "NONE"):
        return None
    days = 0
    if "-" in value:
        d, value = value.split("-", 1)
        days = int(d)
    parts = [int(p) for p in value.split(":")]
    if len(parts) == 1:
        secs = parts[0] * 60
    elif len(parts) == 2:
        secs = parts[0] * 60 + parts[1]
    else:
        secs = parts[0] * 3600 + parts[1] * 60 + parts[2]
    return days * 86400 + secs


def ended_early(rec):
    """Why a finished job of the registry violates the kill-time rule (it
    ended before its time limit although its own script did not finish), or
    None. Jobs the test cancelled itself and jobs still running when their
    cluster stopped are not judged."""
    f = rec.get("final")
    if rec.get("cancelled") or f is None:
        return None
    state = f.get("JobState")
    if state not in FINISHED_STATES:
        return None  # still pending/running at teardown: killed by the harness
    if state in ("COMPLETED", "FAILED"):
        return None  # the script itself ended (exit status 0 or not)
    limit = parse_duration(f.get("TimeLimit"))
    start, end = f.get("start"), f.get("end")
    if start is None or end is None or limit is None:
        return "state %s, start %s, end %s, limit %s" % (state, start, end, limit)
    if end - start >= limit:
        return None  # TIMEOUT at or after the limit
    return "state %s after %d s, limit %d s" % (state, end - start, limit)


# --- scenarios running in the background ---------------------------------------

# Long, mostly idle scenarios (waiting for Slurm's 30 s time-limit check, say)
# run in a thread on their own cluster while the other tests run:
# test_aa_background.py starts every registered one first, and the module
# that registered it joins it and makes its assertions in its usual place.
_background = {}  # name -> {"fn", "thread", "result", "error"}


def background(name, fn):
    """Register fn() (returns a result, may raise) as background scenario."""
    _background.setdefault(name, {"fn": fn, "thread": None, "result": None, "error": None})


def _run_background(rec):
    try:
        rec["result"] = rec["fn"]()
    except BaseException as e:  # noqa: BLE001 - handed to the joining test
        rec["error"] = e


def start_background(names=None):
    """Start the registered scenarios not started yet; return their names."""
    started = []
    for name, rec in _background.items():
        if (names is None or name in names) and rec["thread"] is None:
            rec["thread"] = threading.Thread(target=_run_background, args=(rec,),
                                             name="easypp-" + name, daemon=True)
            rec["thread"].start()
            started.append(name)
    return started


def join_background(name, timeout):
    """Wait for scenario `name` (starting it if nobody did); return its result
    or raise its exception."""
    start_background([name])
    rec = _background[name]
    rec["thread"].join(timeout)
    if rec["thread"].is_alive():
        raise ClusterError("background scenario %s still running after %ds" % (name, timeout))
    if rec["error"] is not None:
        raise rec["error"]
    return rec["result"]


# --- the cluster -------------------------------------------------------------

_live_clusters = []
_setup_lock = threading.Lock()


def _stop_all():
    for c in list(_live_clusters):
        try:
            c.stop()
        except Exception as e:  # noqa: BLE001 - best effort at exit
            log("stop failed: %s" % e)
    stop_munge()  # after every daemon that used it


def _on_signal(signum, frame):
    _stop_all()
    # re-raise the default behaviour (exit status 128 + signum)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


atexit.register(_stop_all)
for _sig in (signal.SIGTERM, signal.SIGHUP):
    try:
        signal.signal(_sig, _on_signal)
    except (ValueError, OSError):  # not the main thread
        pass


class Cluster:
    def __init__(self, scheduler="sched/easypp", nodes=8, cpus=4,
                 partition="batch", scheduler_parameters=None,
                 min_job_age=3600, debug="verbose", debug_flags="Backfill", extra_conf="",
                 plugin_dir=None, bind_now=False, max_time="INFINITE",
                 keep_dir_on_failure=True, partitions=None, accounting=False,
                 rest=False):
        if os.geteuid() != 0:
            raise ClusterError("the test cluster needs root")
        for prog in (SLURMCTLD, SLURMD):
            if not os.access(prog, os.X_OK):
                raise ClusterError("%s not found (apt-get install slurmctld slurmd)" % prog)
        self.scheduler = scheduler
        self.nodes = int(nodes)
        self.cpus = int(cpus)
        self.partition = partition
        self.scheduler_parameters = scheduler_parameters
        self.min_job_age = int(min_job_age)
        # SlurmctldDebug and DebugFlags. sched/easypp's per-cycle lines
        # (reservations, corrections, the cycle summary) are DebugFlags=Backfill
        # lines, which Slurm logs at level verbose and above, as sched/backfill's:
        # most tests read them, so both are on by default.
        self.debug = debug
        self.debug_flags = debug_flags
        self.extra_conf = extra_conf
        self.plugin_dir = plugin_dir or easypp_plugindir()
        self.bind_now = bind_now
        self.max_time = max_time
        self.keep_dir_on_failure = keep_dir_on_failure
        # slurm.conf PartitionName= lines replacing the default partition
        # (all nodes, named `partition`); None keeps the default.
        self.partitions = partitions
        # accounting=True: a private MariaDB (datadir and socket in the
        # cluster directory, TCP on a loopback port) and slurmdbd, so sacct
        # and the slurmdb API answer; rest=True (implies accounting):
        # slurmrestd as REST_USER, JWT on a loopback TCP port (rest_url) and
        # local auth on a unix socket (rest_socket). See class Accounting.
        self.rest = bool(rest)
        self.accounting = bool(accounting) or self.rest
        self.acct = None
        self.dir = None
        self.ctld = None
        self.slurmds = {}
        self.start_seconds = None
        self.stop_seconds = None
        self.users = {}
        self.munge_socket = None
        self.final_ctld_log = ""

    # -- paths --
    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    @property
    def conf_path(self):
        return self.path("slurm.conf")

    @property
    def ctld_log(self):
        return self.path("slurmctld.log")

    @property
    def jobcomp_path(self):
        return self.path("jobcomp.txt")

    @property
    def cluster_name(self):
        return "easypp%d" % (self.ctld_port % 100000)

    def node_names(self):
        return ["n%d" % i for i in range(1, self.nodes + 1)]

    def env(self, **extra):
        e = dict(os.environ)
        e["SLURM_CONF"] = self.conf_path
        if SLURM_PREFIX is not None:
            e["PATH"] = os.path.join(SLURM_PREFIX, "bin") + ":" + e.get("PATH", "/usr/bin:/bin")
        for k in list(e):
            if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_", "SINFO_", "SCONTROL_")) \
                    and k != "SLURM_CONF":
                del e[k]
        e.update(extra)
        return e

    def daemon_env(self):
        e = self.env()
        e[MARKER] = self.dir
        if self.bind_now:
            # resolve every symbol at dlopen. Not the default: some of
            # Debian's own plugins (prep/script) then fail in slurmctld.
            e["LD_BIND_NOW"] = "1"
        return e

    # -- configuration --
    def write_conf(self):
        plugindir = slurm_plugindir()
        sp = self.scheduler_parameters
        if sp is None:
            sp = "sched_interval=5,bf_interval=5,easypp_interval=2" \
                if self.scheduler != "sched/builtin" else "sched_interval=5"
        if self.scheduler == "sched/easypp" and "easypp_learn_min_runtime" not in sp:
            # Test jobs run seconds, not minutes: learn every runtime (the
            # plugin's default, the preset `site`, learns runtimes >= 60 s).
            sp = ",".join(x for x in (sp, "easypp_learn_min_runtime=0") if x)
        host = socket.gethostname().split(".")[0]
        last = self.node_port + self.nodes - 1
        lines = [
            "# generated by tests/integration/cluster.py",
            "ClusterName=%s" % self.cluster_name,
            "SlurmctldHost=%s(127.0.0.1)" % host,
            "SlurmctldPort=%d" % self.ctld_port,
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "AuthInfo=socket=%s" % self.munge_socket,
            "CredType=cred/munge",
            "StateSaveLocation=%s" % self.path("state"),
            "SlurmdSpoolDir=%s" % self.path("spool", "%n"),
            "SlurmctldPidFile=%s" % self.path("slurmctld.pid"),
            "SlurmdPidFile=%s" % self.path("slurmd-%n.pid"),
            "SlurmctldLogFile=%s" % self.ctld_log,
            "SlurmdLogFile=%s" % self.path("slurmd-%n.log"),
            "SlurmctldDebug=%s" % self.debug,
            "DebugFlags=%s" % self.debug_flags if self.debug_flags else "#DebugFlags=",
            "SlurmdDebug=info",
            "PluginDir=%s:%s" % (plugindir, self.plugin_dir),
            "SchedulerType=%s" % self.scheduler,
            "SchedulerParameters=%s" % sp if sp else "#SchedulerParameters=",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "PriorityType=priority/basic",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
        ]
        if self.acct is not None:
            lines += self.acct.slurm_conf_lines()
        else:
            lines.append("AccountingStorageType=accounting_storage/none")
        lines += [
            "JobCompType=jobcomp/filetxt",
            "JobCompLoc=%s" % self.jobcomp_path,
            "MpiDefault=none",
            "MailProg=/bin/true",
            "SwitchType=switch/none",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            # finished jobs stay in slurmctld (the plugin learns from them)
            "MinJobAge=%d" % self.min_job_age,
            "KillWait=%d" % KILL_WAIT,
            "InactiveLimit=0",
            "MessageTimeout=%d" % MESSAGE_TIMEOUT,
            "SlurmctldTimeout=60",
            "SlurmdTimeout=120",
        ]
        if front_end():
            # one slurmd for all: nodes are names only (Slurm FAQ "Can Slurm
            # emulate a larger cluster?"); every batch script runs on fe1
            lines += [
                "FrontendName=fe1 FrontendAddr=127.0.0.1 Port=%d" % self.node_port,
                "NodeName=n[1-%d] NodeHostname=localhost NodeAddr=127.0.0.1 "
                "CPUs=%d RealMemory=1000 State=UNKNOWN" % (self.nodes, self.cpus)]
        else:
            lines.append(
                "NodeName=n[1-%d] NodeHostname=localhost NodeAddr=127.0.0.1 "
                "Port=[%d-%d] CPUs=%d RealMemory=1000 State=UNKNOWN"
                % (self.nodes, self.node_port, last, self.cpus))
        if self.partitions:
            lines += list(self.partitions)
        else:
            lines.append("PartitionName=%s Nodes=n[1-%d] Default=YES MaxTime=%s State=UP"
                         % (self.partition, self.nodes, self.max_time))
        if self.extra_conf:
            lines.append(self.extra_conf)
        with open(self.conf_path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def set_scheduler_parameters(self, params, reconfigure=True):
        """Rewrite SchedulerParameters and (by default) scontrol reconfigure."""
        self.scheduler_parameters = params
        self.write_conf()
        if reconfigure:
            self.reconfigure()

    # -- lifecycle --
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        t0 = time.time()
        with _setup_lock:  # clusters may start in several threads at once
            self.munge_socket = ensure_munge()
            self.users = ensure_users()
        self.dir = tempfile.mkdtemp(prefix="easypp-cluster-")
        os.chmod(self.dir, 0o755)
        _live_clusters.append(self)
        try:
            for d in ("state", "spool", "out"):
                # 0755 whatever the umask: the plugin and the tools write
                # only into directories no one else can write to
                os.makedirs(self.path(d), mode=0o755)
                os.chmod(self.path(d), 0o755)
            os.chmod(self.path("out"), 0o1777)
            self.ctld_port = pick_ports(2 if front_end() else 1 + self.nodes)
            self.node_port = self.ctld_port + 1
            if self.accounting:
                self.acct = Accounting(self)
                self.write_conf()
                self.acct.start()
            self.write_conf()
            self._start_ctld(clear=True)
            for n in (["fe1"] if front_end() else self.node_names()):
                self._start_slurmd(n)
            self.wait_idle(timeout=max(60, self.nodes // 20))
            if self.rest:
                self.acct.start_rest()
        except BaseException:
            log("start failed; stopping what was started (dir %s)" % self.dir)
            self.stop(keep_dir=self.keep_dir_on_failure)
            raise
        self.start_seconds = time.time() - t0
        log("cluster up in %.1fs: %d nodes x %d CPUs, %s, dir %s" % (
            self.start_seconds, self.nodes, self.cpus, self.scheduler, self.dir))

    def _spawn(self, argv, logname, preload=None):
        out = open(self.path(logname), "ab")
        env = self.daemon_env()
        if preload:
            env["LD_PRELOAD"] = preload
        try:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True, cwd=self.dir)
        finally:
            out.close()

    def _start_ctld(self, clear=False):
        argv = [SLURMCTLD, "-D", "-f", self.conf_path]
        if clear:
            argv.append("-c")
        self.ctld = self._spawn(argv, "slurmctld.stdout",
                                preload=os.environ.get("EASYPP_CTLD_PRELOAD"))
        self._wait_ctld_up()

    def _wait_ctld_up(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.ctld.poll() is not None:
                raise ClusterError("slurmctld exited with status %s at start\n"
                                   "--- %s (tail) ---\n%s\n--- stdout ---\n%s" % (
                                       self.ctld.returncode, self.ctld_log,
                                       tail(self.ctld_log),
                                       tail(self.path("slurmctld.stdout"), 10)))
            p = run(["scontrol", "ping"], timeout=5, check=False, env=self.env())
            if p.returncode == 0 and "UP" in p.stdout:
                return
            time.sleep(0.3)
        raise ClusterError("slurmctld not responding after %ds\n%s" % (
            timeout, tail(self.ctld_log)))

    def _start_slurmd(self, node):
        os.makedirs(self.path("spool", node), exist_ok=True)
        self.slurmds[node] = self._spawn(
            [SLURMD, "-D", "-N", node, "-f", self.conf_path], "slurmd-%s.stdout" % node)

    def wait_idle(self, timeout=60):
        """Wait until every node is idle."""
        deadline = time.time() + timeout
        last = ""
        while time.time() < deadline:
            for n, p in self.slurmds.items():
                if p.poll() is not None:
                    raise ClusterError("slurmd %s exited with status %s\n%s" % (
                        n, p.returncode, tail(self.path("slurmd-%s.log" % n))))
            if self.ctld.poll() is not None:
                raise ClusterError("slurmctld exited with status %s\n%s" % (
                    self.ctld.returncode, tail(self.ctld_log)))
            p = run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=10, check=False,
                    env=self.env())
            last = p.stdout
            states = [l.split()[1] for l in p.stdout.splitlines() if len(l.split()) == 2]
            if len(states) == self.nodes and all(s == "idle" for s in states):
                return
            time.sleep(0.3)
        raise ClusterError("nodes not idle after %ds:\n%s\n%s" % (
            timeout, last, tail(self.ctld_log)))

    def _kill(self, proc, name, term_wait):
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(term_wait)
        except subprocess.TimeoutExpired:
            log("%s (pid %d) ignored SIGTERM for %ss; SIGKILL" % (name, proc.pid, term_wait))
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(10)

    def _kill_leftovers(self):
        """Kill job steps and job processes of this cluster that outlive the
        daemons: processes carrying the marker or this cluster's SLURM_CONF
        in their environment, or whose working directory or command line lies
        in the cluster directory (batch scripts run from the spool
        directory), and every process in their sessions."""
        me = os.getpid()
        try:
            my_sid = os.getsid(0)
        except OSError:
            my_sid = -1
        marks = (("%s=%s" % (MARKER, self.dir)).encode(),
                 ("SLURM_CONF=%s" % self.conf_path).encode())
        prefix = self.dir.rstrip("/") + "/"
        for _ in range(3):
            sessions, victims, procs = set(), set(), []
            for name in os.listdir("/proc"):
                if not name.isdigit() or int(name) == me:
                    continue
                pid = int(name)
                try:
                    with open("/proc/%d/stat" % pid, "rb") as f:
                        stat = f.read()
                    sid = int(stat[stat.rindex(b")") + 2:].split()[3])
                except (OSError, ValueError, IndexError):
                    continue
                procs.append((pid, sid))
                hit = False
                try:
                    with open("/proc/%d/environ" % pid, "rb") as f:
                        env = f.read().split(b"\0")
                    hit = any(m in env for m in marks)
                except OSError:
                    pass
                if not hit:
                    try:
                        cwd = os.readlink("/proc/%d/cwd" % pid) + "/"
                        hit = cwd.startswith(prefix)
                    except OSError:
                        pass
                if not hit:
                    try:
                        with open("/proc/%d/cmdline" % pid, "rb") as f:
                            hit = prefix.encode() in f.read()
                    except OSError:
                        pass
                if hit:
                    victims.add(pid)
                    if sid not in (0, 1, my_sid):
                        sessions.add(sid)
            victims |= {pid for pid, sid in procs if sid in sessions}
            if not victims:
                return
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.2)

    def stop(self, keep_dir=False):
        """Stop slurmd (all nodes), then slurmctld; kill leftovers. Idempotent."""
        if self.dir is None:
            return
        t0 = time.time()
        self._collect_final_records()
        procs = list(self.slurmds.items())
        for n, p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.time() + 5
        for n, p in procs:
            try:
                p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                pass
        for n, p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(10)
        if self.acct is not None:
            self.acct.stop_rest()
        self._kill(self.ctld, "slurmctld", 20)
        if self.acct is not None:
            self.acct.stop()
            self.acct = None
        self._kill_leftovers()
        self.stop_seconds = time.time() - t0
        # the log outlives the directory, for assertions about the shutdown
        self.final_ctld_log = self.ctld_log_text()
        if self in _live_clusters:
            _live_clusters.remove(self)
        log("cluster stopped in %.1fs" % self.stop_seconds)
        if keep_dir or os.environ.get("EASYPP_KEEP_CLUSTER_DIR"):
            log("kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        self.slurmds = {}
        self.ctld = None

    def _collect_final_records(self):
        """Read the last record of every registered job of this cluster."""
        mine = [r for r in JOB_REGISTRY if r["cluster"] == self.dir and r.get("final") is None]
        if not mine or not self.slurmctld_alive():
            return
        try:
            records = self.all_jobs()
        except ClusterError:
            return
        for r in mine:
            r["final"] = records.get(r["job_id"])

    def restart_slurmctld(self, timeout=30, while_stopped=None):
        """Stop slurmctld and start it again from its saved state;
        while_stopped() runs in between (e.g. to damage a state file)."""
        self._kill(self.ctld, "slurmctld", 20)
        if while_stopped is not None:
            while_stopped()
        self._start_ctld(clear=False)
        self._wait_ctld_up(timeout)

    def slurmctld_alive(self):
        return self.ctld is not None and self.ctld.poll() is None

    # -- clients --
    def client(self, *argv, timeout=30, check=True, user=None, input=None):
        cmd = list(argv)
        if user is not None and user != "root":
            cmd = ["runuser", "-u", user, "--", "env", "SLURM_CONF=%s" % self.conf_path] + cmd
        return run(cmd, timeout=timeout, check=check, env=self.env(), input=input)

    def scontrol(self, *args, **kw):
        return self.client("scontrol", *args, **kw).stdout

    def reconfigure(self):
        """scontrol reconfigure (from 23.11 a restart of slurmctld: see
        reconfigure_restarts())."""
        self.scontrol("reconfigure")

    def wake_scheduler(self):
        """Make slurmctld call the plugin's sched_p_reconfig() (the agent
        runs a cycle at once, trigger=reconfigure) without re-reading
        slurm.conf or restarting, in every release: `scontrol setdebugflags`
        with a change that leaves the flags as they are (Triggers: never
        set by the tests)."""
        self.scontrol("setdebugflags", "-Triggers")

    def show_config(self):
        """`scontrol show config` as a dict."""
        out = {}
        for line in self.scontrol("show", "config").splitlines():
            if " = " in line:
                k, v = line.split(" = ", 1)
                out[k.strip()] = v.strip()
        return out

    def submit(self, wrap="sleep 1", time_min=5, nodes=None, ntasks=None, name=None,
               user=None, partition=None, extra=(), begin=None):
        """sbatch --wrap; time_min may be int minutes or a Slurm time string;
        begin: a Unix time before which the job is not eligible. Returns the
        job id (recorded in JOB_REGISTRY)."""
        t = time_min if isinstance(time_min, str) else str(int(time_min))
        cmd = ["sbatch", "--parsable", "--time=%s" % t,
               "--output=%s" % self.path("out", "slurm-%j.out"),
               "--chdir=%s" % self.path("out")]
        if nodes is not None:
            cmd.append("--nodes=%s" % nodes)
        if ntasks is not None:
            cmd.append("--ntasks=%s" % ntasks)
        if name:
            cmd.append("--job-name=%s" % name)
        if partition:
            cmd.append("--partition=%s" % partition)
        if begin is not None:
            cmd.append("--begin=%s" % time.strftime("%Y-%m-%dT%H:%M:%S",
                                                      time.localtime(int(begin))))
        cmd += list(extra)
        cmd += ["--wrap", wrap]
        out = self.client(*cmd, user=user).stdout.strip()
        try:
            job_id = int(out.split(";")[0])
        except ValueError:
            raise ClusterError("sbatch printed %r" % out)
        JOB_REGISTRY.append({"cluster": self.dir, "scheduler": self.scheduler,
                             "job_id": job_id, "time_limit": t, "user": user,
                             "name": name, "cancelled": False, "final": None})
        return job_id

    def cancel(self, *job_ids):
        """scancel; the jobs are marked as cancelled by the test (the
        suite-wide kill-time check does not judge them)."""
        ids = {int(j) for j in job_ids}
        for r in JOB_REGISTRY:
            if r["cluster"] == self.dir and r["job_id"] in ids:
                r["cancelled"] = True
        if ids:
            self.client("scancel", *[str(j) for j in sorted(ids)])

    # -- sched/easypp's files --
    def status_path(self):
        return self.path("state", "easypp_status.json")

    def state_path(self):
        return self.path("state", "easypp_state.json")

    def read_json(self, path):
        """A JSON file as a dict, None if missing or (being replaced) unreadable."""
        import json
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def status(self):
        return self.read_json(self.status_path())

    def history(self, user):
        """The plugin's learned runtimes of `user` (name or uid) from the
        status file, oldest first; [] if none."""
        uid = self.users.get(user, user) if isinstance(user, str) else user
        st = self.status() or {}
        for ring in st.get("history", []):
            if ring.get("user") == uid and ring.get("estimate_key", -1) == -1:
                return [e[0] for e in ring.get("history", [])]
        return []

    def run_history(self, user, runtimes, time_min=10, timeout=60, window=2):
        """Give `user` a history: one one-node `sleep r` job per runtime, all
        at once; wait until they completed and the plugin (predictor window
        `window`) learned them. Returns the job ids."""
        before = len(self.history(user))
        ids = [self.submit(wrap="sleep %d" % r, time_min=time_min, nodes=1, user=user,
                           name="history") for r in runtimes]
        self.wait_jobs(ids, timeout=timeout)
        want = min(before + len(runtimes), window)
        self.wait_for("the plugin to learn %s's jobs" % user,
                      lambda: len(self.history(user)) >= want, timeout=timeout)
        return ids

    def planned_start(self, job_id):
        """squeue --start's planned start of a pending job (Unix time) or None."""
        p = self.client("squeue", "--start", "-h", "-o", "%i %S", "-j", str(job_id),
                        check=False)
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == str(job_id):
                return parse_time(f[1])
        return None

    def wait_for(self, what, predicate, timeout=30, interval=0.3):
        """Poll predicate() until it returns something true; return that."""
        deadline = time.time() + timeout
        while True:
            v = predicate()
            if v:
                return v
            if time.time() > deadline:
                raise ClusterError("timed out after %ds waiting for %s\n%s" % (
                    timeout, what, tail(self.ctld_log)))
            if not self.slurmctld_alive():
                raise ClusterError("slurmctld died while waiting for %s\n%s" % (
                    what, tail(self.ctld_log)))
            time.sleep(interval)

    def job(self, job_id):
        """scontrol show job -o as a dict (StartTime/EndTime/SubmitTime also
        as Unix times under start/end/submit); None if unknown."""
        p = self.client("scontrol", "show", "job", "-o", str(job_id), check=False)
        if p.returncode != 0 or not p.stdout.strip():
            return None
        d = parse_kv_line(p.stdout.splitlines()[0])
        d["start"] = parse_time(d.get("StartTime"))
        d["end"] = parse_time(d.get("EndTime"))
        d["submit"] = parse_time(d.get("SubmitTime"))
        return d

    def all_jobs(self):
        """Every job slurmctld knows, {id: dict like job()}, in one call."""
        p = self.client("scontrol", "show", "job", "-o", check=False)
        out = {}
        for line in p.stdout.splitlines():
            d = parse_kv_line(line)
            if "JobId" not in d:
                continue
            d["start"] = parse_time(d.get("StartTime"))
            d["end"] = parse_time(d.get("EndTime"))
            d["submit"] = parse_time(d.get("SubmitTime"))
            out[int(d["JobId"])] = d
        return out

    def job_state(self, job_id):
        j = self.job(job_id)
        return j["JobState"] if j else None

    def squeue(self, fmt="%i %T", extra=()):
        return self.client("squeue", "-h", "-o", fmt, *extra).stdout

    def wait_jobs(self, job_ids, timeout=120,
                  states=("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                          "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
                          "PREEMPTED")):
        """Wait until every job is in one of `states`; return {id: job dict}.

        A job whose script has ended but that is still COMPLETING when the
        timeout passes gets more time, once: slurmctld only clears it when
        the node's epilog-complete message arrives, and if that message is
        lost Slurm itself re-sends the kill, from its purge pass (every 60 s),
        once KillWait + 2 x MessageTimeout have passed (22.05
        job_mgr.c:_list_find_job_old). That is node cleanup, not
        scheduling, so it is logged and waited for rather than failed."""
        started = time.time()
        deadline = started + timeout
        extended = False
        pending = set(job_ids)
        done = {}
        while pending:
            recs = self.all_jobs() if len(pending) > 3 else \
                {j: self.job(j) for j in pending}
            for j in list(pending):
                d = recs.get(j)
                if d and d["JobState"] in states:
                    done[j] = d
                    pending.discard(j)
            if not pending:
                break
            if time.time() > deadline:
                completing = sorted(j for j in pending if recs.get(j) and
                                    recs[j]["JobState"] == "COMPLETING")
                if not extended and len(completing) == len(pending):
                    extended = True
                    grace = 60 + KILL_WAIT + 2 * MESSAGE_TIMEOUT + 10
                    log("jobs %s still COMPLETING after %ds (the node's epilog-"
                        "complete message is late or lost); waiting up to %ds "
                        "more for Slurm's re-kill" % (completing, timeout, grace))
                    deadline = time.time() + grace
                else:
                    raise ClusterError("jobs %s not finished after %ds:\n%s\n%s" % (
                        sorted(pending), time.time() - started,
                        self.squeue("%i %T %r %S %N"), tail(self.ctld_log)))
            if not self.slurmctld_alive():
                raise ClusterError("slurmctld died\n%s" % tail(self.ctld_log))
            time.sleep(0.5)
        return done

    def wait_state(self, job_id, states, timeout=60):
        states = (states,) if isinstance(states, str) else tuple(states)
        deadline = time.time() + timeout
        while time.time() < deadline:
            d = self.job(job_id)
            if d and d["JobState"] in states:
                return d
            time.sleep(0.3)
        raise ClusterError("job %s not in %s after %ds (now %s)" % (
            job_id, states, timeout, self.job_state(job_id)))

    def jobcomp_records(self):
        """Finished jobs from the jobcomp/filetxt file, as dicts."""
        try:
            with open(self.jobcomp_path, errors="replace") as f:
                return [parse_kv_line(l) for l in f if l.strip()]
        except FileNotFoundError:
            return []

    def ctld_log_text(self):
        try:
            with open(self.ctld_log, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_log(self, pattern, timeout=30):
        """Wait until the slurmctld log matches regex `pattern`; return the match."""
        rx = re.compile(pattern, re.M)
        deadline = time.time() + timeout
        while True:
            m = rx.search(self.ctld_log_text())
            if m:
                return m
            if time.time() > deadline:
                raise ClusterError("slurmctld log never matched %r\n%s" % (
                    pattern, tail(self.ctld_log)))
            time.sleep(0.3)


# --- accounting: MariaDB, slurmdbd, slurmrestd ----------------------------------

def accounting_available():
    """None if a cluster with accounting=True, rest=True can start here, else
    why not (for a skip message)."""
    for prog, pkg in ((MARIADBD, "mariadb-server"), (MARIADB_INSTALL_DB, "mariadb-server"),
                      (SLURMDBD, "slurmdbd"), (SLURMRESTD, "slurmrestd")):
        if not os.access(prog, os.X_OK):
            return "%s not installed (apt-get install %s)" % (prog, pkg)
    if not os.path.exists(os.path.join(slurm_plugindir(), "accounting_storage_slurmdbd.so")):
        return "Slurm's accounting_storage/slurmdbd plugin is not installed"
    if not os.path.exists(os.path.join(slurm_plugindir(), "auth_jwt.so")):
        return "Slurm's auth/jwt plugin is not installed (apt-get install slurm-wlm-jwt-plugin)"
    return None


class Accounting:
    """The accounting side of a Cluster, all inside the cluster directory:

    - MariaDB (Debian's mariadb-server) with a private datadir (db/data), a
      unix socket (db/mysqld.sock, root's administration) and a loopback TCP
      port for slurmdbd (which cannot name a socket);
    - slurmdbd (slurmdbd.conf beside slurm.conf, where slurmdbd looks for it
      through SLURM_CONF; mode 0600) on a loopback port, accepting munge
      and JWT (auth/jwt, key jwt.key, mode 0600);
    - slurmrestd (start_rest()), run as REST_USER because it refuses root:
      JWT on 127.0.0.1:rest_port (rest_url) and local auth on rest_socket.

    The cluster is registered with `sacctmgr add cluster` before slurmctld
    starts. stop() ends slurmrestd, slurmdbd and mariadbd (SIGTERM, then
    SIGKILL)."""

    def __init__(self, cluster):
        self.c = cluster
        # three ports outside the cluster's own block
        cl = range(cluster.ctld_port, cluster.ctld_port + 1 + cluster.nodes)
        while True:
            self.db_port = pick_ports(3)
            if not any(p in cl for p in range(self.db_port, self.db_port + 3)):
                break
        self.dbd_port = self.db_port + 1
        self.rest_port = self.db_port + 2
        self.mariadb = self.slurmdbd = self.restd = None
        self.db_password = "easypp-%d" % random.randrange(1 << 30)
        self.db_name = "slurm_acct_db"
        # An external MariaDB server instead of our own (EASYPP_TEST_DB=
        # "PORT:USER:PASSWORD" on 127.0.0.1, a user allowed to create and drop
        # the databases slurm_acct_db_*): tests/integration/host-mariadb.sh
        # starts one. setup.sh gives one to the Slurm 24.11 suite, whose
        # slurmdbd (Debian 13's 24.11.5) refuses Debian 13's MariaDB 11.8
        # server (error 5027 in _check_mysql_concat_is_sane) but accepts
        # MariaDB 10.11, Debian 12's.
        self.external_db = None
        ext = os.environ.get("EASYPP_TEST_DB")
        if ext:
            port, user, password = ext.split(":", 2)
            self.external_db = (int(port), user, password)
            self.db_port = self.external_db[0]
            while True:
                self.dbd_port = pick_ports(2)
                if self.dbd_port not in cl and self.dbd_port + 1 not in cl:
                    break
            self.rest_port = self.dbd_port + 1
            self.db_name = "slurm_acct_db_%s" % cluster.cluster_name

    # paths
    def path(self, *parts):
        return self.c.path(*parts)

    @property
    def jwt_key(self):
        return self.path("jwt.key")

    @property
    def dbd_conf(self):
        return self.path("slurmdbd.conf")

    @property
    def db_socket(self):
        return self.path("db", "mysqld.sock")

    @property
    def rest_socket(self):
        return self.path("rest", "slurmrestd.sock")

    @property
    def rest_url(self):
        return "http://127.0.0.1:%d" % self.rest_port

    @property
    def dbd_log(self):
        return self.path("slurmdbd.log")

    @property
    def rest_log(self):
        return self.path("slurmrestd.log")

    def slurm_conf_lines(self):
        return ["AccountingStorageType=accounting_storage/slurmdbd",
                "AccountingStorageHost=127.0.0.1",
                "AccountingStoragePort=%d" % self.dbd_port,
                # Connections to slurmdbd are signed with AccountingStoragePass
                # (for munge: its socket), not AuthInfo: this run's munged.
                "AccountingStoragePass=socket=%s" % self.c.munge_socket,
                "AuthAltTypes=auth/jwt",
                "AuthAltParameters=jwt_key=%s" % self.jwt_key]

    def start(self):
        t0 = time.time()
        why = accounting_available()
        if why:
            raise ClusterError(why)
        with open(self.jwt_key, "wb") as f:
            f.write(os.urandom(64))
        os.chmod(self.jwt_key, 0o600)
        self._start_mariadb()
        self._start_slurmdbd()
        # slurmctld registers with slurmdbd at start: the cluster must exist.
        self.c.client("sacctmgr", "-i", "add", "cluster", self.c.cluster_name)
        # Users with an association: the slurmdb API names a job's user from
        # it (a job without one shows "user": null).
        self.c.client("sacctmgr", "-i", "add", "account", "easypp",
                      "cluster=%s" % self.c.cluster_name)
        self.c.client("sacctmgr", "-i", "add", "user", ",".join(TEST_USERS + ("root",)),
                      "account=easypp", "cluster=%s" % self.c.cluster_name)
        log("accounting up in %.1fs: MariaDB on 127.0.0.1:%d, slurmdbd on 127.0.0.1:%d"
            % (time.time() - t0, self.db_port, self.dbd_port))

    def _start_mariadb(self):
        if self.external_db:
            _, user, password = self.external_db
            self.sql("DROP DATABASE IF EXISTS %s; CREATE DATABASE %s" % (self.db_name, self.db_name))
            self.db_user, self.db_password = user, password
            return
        self.db_user = "slurm"
        d = self.path("db")
        os.makedirs(d)
        datadir = os.path.join(d, "data")
        run([MARIADB_INSTALL_DB, "--no-defaults", "--datadir=%s" % datadir, "--user=root",
             "--auth-root-authentication-method=socket", "--skip-test-db"],
            timeout=120)
        self.mariadb = self.c._spawn(
            [MARIADBD, "--no-defaults", "--user=root", "--datadir=%s" % datadir,
             "--socket=%s" % self.db_socket, "--port=%d" % self.db_port,
             "--bind-address=127.0.0.1", "--pid-file=%s" % os.path.join(d, "mariadbd.pid"),
             "--log-error=%s" % os.path.join(d, "error.log"), "--skip-log-bin",
             "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=16M",
             "--innodb-flush-log-at-trx-commit=0", "--innodb-lock-wait-timeout=900",
             "--max-connections=50"], "mariadbd.stdout")
        self._wait("MariaDB", self.mariadb, os.path.join(d, "error.log"),
                   lambda: self.sql("SELECT 1", check=False).returncode == 0)
        self.sql("CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '%s'; "
                 "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES"
                 % self.db_password)

    def sql(self, statement, check=True):
        if self.external_db:
            port, user, password = self.external_db
            # --skip-ssl: Debian 13's client (MariaDB 11.8) insists on TLS by
            # default, which the host's 10.11 server on loopback does not offer.
            return run(["mariadb", "--no-defaults", "--skip-ssl", "-h", "127.0.0.1", "-P", str(port),
                        "-u", user, "-p%s" % password, "-N", "-e", statement], timeout=30,
                       check=check)
        return run(["mariadb", "--no-defaults", "--socket=%s" % self.db_socket, "-u", "root",
                    "-N", "-e", statement], timeout=30, check=check)

    def _start_slurmdbd(self):
        conf = ["# generated by tests/integration/cluster.py",
                "AuthType=auth/munge",
                "AuthInfo=socket=%s" % self.c.munge_socket,
                "AuthAltTypes=auth/jwt",
                "AuthAltParameters=jwt_key=%s" % self.jwt_key,
                "DbdHost=localhost",
                "DbdAddr=127.0.0.1",
                "DbdPort=%d" % self.dbd_port,
                "SlurmUser=root",
                "DebugLevel=info",
                "LogFile=%s" % self.dbd_log,
                "PidFile=%s" % self.path("slurmdbd.pid"),
                "PluginDir=%s" % slurm_plugindir(),
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                "StoragePort=%d" % self.db_port,
                "StorageUser=%s" % self.db_user,
                "StoragePass=%s" % self.db_password,
                "StorageLoc=%s" % self.db_name]
        fd = os.open(self.dbd_conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(conf) + "\n")
        self.slurmdbd = self.c._spawn([SLURMDBD, "-D"], "slurmdbd.stdout")
        self._wait("slurmdbd", self.slurmdbd, self.dbd_log,
                   lambda: self.c.client("sacctmgr", "-n", "show", "cluster", timeout=10,
                                         check=False).returncode == 0, timeout=60)

    def start_rest(self):
        """slurmrestd as REST_USER, twice: JWT on rest_url (SLURM_JWT=daemon,
        so its own requests carry the client's token) and local auth on
        rest_socket (munge as REST_USER; accepts REST_USER and root)."""
        with _setup_lock:
            ensure_users((REST_USER,))
        os.makedirs(self.path("rest"), exist_ok=True)
        pw = pwd.getpwnam(REST_USER)
        os.chown(self.path("rest"), pw.pw_uid, pw.pw_gid)
        os.chmod(self.path("rest"), 0o755)
        self.restd = [
            self._spawn_rest(["-a", "rest_auth/jwt", "127.0.0.1:%d" % self.rest_port],
                             jwt=True),
            self._spawn_rest(["-a", "rest_auth/local", "unix:%s" % self.rest_socket],
                             jwt=False)]

        def up():
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.settimeout(1)
                return s.connect_ex(("127.0.0.1", self.rest_port)) == 0 and \
                    os.path.exists(self.rest_socket)
        for p in self.restd:
            self._wait("slurmrestd", p, self.rest_log, up)
        log("slurmrestd up as %s: %s (JWT) and unix:%s (local)"
            % (REST_USER, self.rest_url, self.rest_socket))

    def _spawn_rest(self, args, jwt):
        argv = ["runuser", "-u", REST_USER, "--", SLURMRESTD, "-f", self.c.conf_path, "-v"] + args
        out = open(self.rest_log, "ab")
        env = self.c.daemon_env()
        env.pop("SLURM_JWT", None)
        if jwt:
            env["SLURM_JWT"] = "daemon"
        try:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True, cwd=self.path("rest"))
        finally:
            out.close()

    def stop_rest(self):
        for p in self.restd or ():
            self.c._kill(p, "slurmrestd", 10)
        self.restd = None

    def rest_alive(self):
        return bool(self.restd) and all(p.poll() is None for p in self.restd)

    def token(self, user, lifespan=600):
        """A JWT for `user` (scontrol token, as root)."""
        out = self.c.scontrol("token", "username=%s" % user, "lifespan=%d" % lifespan).strip()
        if not out.startswith("SLURM_JWT="):
            raise ClusterError("scontrol token printed %r" % out)
        return out[len("SLURM_JWT="):]

    def stop(self):
        self.stop_rest()
        self.c._kill(self.slurmdbd, "slurmdbd", 20)
        self.slurmdbd = None
        self.c._kill(self.mariadb, "mariadbd", 30)
        self.mariadb = None
        if self.external_db:
            self.sql("DROP DATABASE IF EXISTS %s" % self.db_name, check=False)

    def _wait(self, what, proc, logfile, ready, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                raise ClusterError("%s exited with status %s at start\n--- %s (tail) ---\n%s"
                                   % (what, proc.returncode, logfile, tail(logfile)))
            if ready():
                return
            time.sleep(0.3)
        raise ClusterError("%s not ready after %ds\n%s" % (what, timeout, tail(logfile)))
