#!/usr/bin/env python3
"""The state-file symlink race (docs/security.md, "Files written as root").

easypp-import --state and easypp-shadow --state run as root and write into
SlurmUser's own directory (StateSaveLocation), then give the file to
SlurmUser. Whoever owns that directory (SlurmUser, or whoever took it over)
can swap the fresh file for a link between any two system calls. Until
issue 35, the file was chown()ed by path after the rename: the swap made
root give any file of the host to SlurmUser.

This test is that attacker: a process running as the directory's owner
(SlurmUser here is 'nobody', which every Debian has) replaces the state
file by a link to a victim file owned by another uid, in a loop, while root
runs easypp-import --state into the directory again and again. It passes
if the victim's owner and mode never change, and the imports succeed.

Runs as root only (it must run the import as root and the attacker as
another uid): elsewhere it says why and exits 77 (which setup.sh's
EASYPP_NO_SKIP runs treat as a failure).
"""
import os
import pwd
import signal
import stat
import subprocess
import sys
import tempfile
import time

IMPORT = os.environ.get("EASYPP_IMPORT") or os.path.join(
    os.path.dirname(__file__), "..", "..", "tools", "easypp-import")
ROUNDS = int(os.environ.get("EASYPP_RACE_ROUNDS", "200"))
SECONDS = float(os.environ.get("EASYPP_RACE_SECONDS", "60"))

DOC = """{"meta": {}, "errors": [], "jobs": [
 {"job_id": 1, "user": "nobody", "group": "g", "partition": "batch", "cluster": "c",
  "name": "n", "state": {"current": "COMPLETED"}, "array": {"job_id": 0, "task_id": null},
  "het": {"job_id": 0, "job_offset": null},
  "time": {"submission": 1000, "eligible": 1000, "start": 1010, "end": 1110,
           "elapsed": 100, "limit": 5},
  "required": {"CPUs": 4}, "tres": {"allocated": [{"type": "cpu", "count": 4}],
  "requested": [{"type": "mem", "count": 100}]}}]}
"""


def attacker(spool, victim, stop_file):
    """As the directory's owner: swap the state file for a link to the
    victim whenever it is a regular file (right after each rename)."""
    target = os.path.join(spool, "easypp_state.json")
    link = os.path.join(spool, ".evil")
    swaps = 0
    while not os.path.exists(stop_file):
        try:
            if stat.S_ISREG(os.lstat(target).st_mode):
                try:
                    os.unlink(link)
                except FileNotFoundError:
                    pass
                os.symlink(victim, link)
                os.rename(link, target)
                swaps += 1
        except OSError:
            pass
    return swaps


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (the import runs as root, the attacker as another uid)")
        return 77
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        print("SKIP: no user 'nobody' on this host to play SlurmUser")
        return 77
    top = tempfile.mkdtemp(prefix="easypp-race-")
    try:
        os.chmod(top, 0o755)
        spool = os.path.join(top, "spool")       # SlurmUser's StateSaveLocation
        os.mkdir(spool, 0o755)
        os.chown(spool, nobody.pw_uid, nobody.pw_gid)
        secret = os.path.join(top, "secret")     # somewhere SlurmUser cannot write
        os.mkdir(secret, 0o755)
        victim = os.path.join(secret, "victim")  # root's authorized_keys, say
        with open(victim, "w") as f:
            f.write("precious\n")
        victim_uid = nobody.pw_uid - 1 if nobody.pw_uid > 1 else 4242
        os.chown(victim, victim_uid, victim_uid)
        os.chmod(victim, 0o640)
        before = os.stat(victim)
        doc = os.path.join(top, "doc.json")
        with open(doc, "w") as f:
            f.write(DOC)
        conf = os.path.join(top, "slurm.conf")
        with open(conf, "w") as f:
            f.write("SlurmUser=nobody\n")
        stop_file = os.path.join(top, "stop")

        pid = os.fork()
        if pid == 0:  # the attacker
            try:
                os.setgroups([])
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
                swaps = attacker(spool, victim, stop_file)
                with open(os.path.join(spool, "swaps"), "w") as f:
                    f.write(str(swaps))
            finally:
                os._exit(0)

        state = os.path.join(spool, "easypp_state.json")
        ok = failed = 0
        last_err = ""
        hit_round = None
        t0 = time.monotonic()
        rounds = 0
        while rounds < ROUNDS and time.monotonic() - t0 < SECONDS:
            rounds += 1
            p = subprocess.run([IMPORT, "--sacct-json", doc, "--state", state, "--force",
                                "--slurm-conf", conf, "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode == 0:
                ok += 1
            else:
                failed += 1
                last_err = p.stderr.strip()
            now = os.stat(victim)
            if (now.st_uid, now.st_gid, now.st_mode) != (before.st_uid, before.st_gid,
                                                        before.st_mode):
                hit_round = rounds
                break
        with open(stop_file, "w"):
            pass
        os.waitpid(pid, 0)
        now = os.stat(victim)
        try:
            with open(os.path.join(spool, "swaps")) as f:
                swaps = int(f.read())
        except (OSError, ValueError):
            swaps = 0
        print("%d imports as root (%d exit 0, %d failed) against an attacker who swapped the "
              "state file for a link %d times, %.1f s" % (rounds, ok, failed, swaps,
                                                          time.monotonic() - t0))
        if hit_round is not None:
            print("FAIL: round %d: the victim (uid %d, mode %o) became uid %d, mode %o: root "
                  "followed the attacker's link" % (hit_round, before.st_uid,
                                                    before.st_mode & 0o7777, now.st_uid,
                                                    now.st_mode & 0o7777))
            return 1
        if failed:
            print("FAIL: %d imports failed; the last: %s" % (failed, last_err))
            return 1
        if ok == 0:
            print("FAIL: no import ran")
            return 1
        if swaps == 0:
            print("FAIL: the attacker never swapped the file: the test tested nothing")
            return 1
        # What a clean run leaves: the state file, SlurmUser's, 0600.
        subprocess.run([IMPORT, "--sacct-json", doc, "--state", state, "--force",
                        "--slurm-conf", conf, "--quiet"], check=True)
        st = os.lstat(state)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != nobody.pw_uid or \
                st.st_mode & 0o7777 != 0o600:
            print("FAIL: the state file is not SlurmUser's regular 0600 file: uid %d mode %o"
                  % (st.st_uid, st.st_mode))
            return 1
        leftovers = [n for n in os.listdir(spool) if ".tmp." in n]
        if leftovers:
            print("FAIL: temporary files left behind: %s" % leftovers)
            return 1
        print("ok: the victim kept uid %d and mode %o; the state file is SlurmUser's, 0600"
              % (now.st_uid, now.st_mode & 0o7777))
        return 0
    finally:
        subprocess.run(["rm", "-rf", top])


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
