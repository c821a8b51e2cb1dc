"""Integration tests, phase 1: sched/easypp loads into a real slurmctld, its
agent runs, jobs run to completion on several nodes, reconfigure works, and
slurmctld refuses a build of the plugin for another Slurm version.

Run as root after `make` (see run_integration.sh):
    python3 -m unittest -v test_load
"""

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402

PLUGIN_SO = os.path.join(cluster.easypp_plugindir(), "sched_easypp.so")


def elf_symbol_offset(path, name):
    """File offset and size of dynamic symbol `name` in a 64-bit little-endian
    ELF shared object (stdlib only)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("%s: not a 64-bit little-endian ELF file" % path)
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        (sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link,
         sh_info, sh_addralign, sh_entsize) = struct.unpack_from("<IIQQQQIIQQ", data, off)
        sections.append((sh_type, sh_addr, sh_offset, sh_size, sh_link, sh_entsize))
    SHT_DYNSYM = 11
    for sh_type, _, sym_off, sym_size, link, entsize in sections:
        if sh_type != SHT_DYNSYM:
            continue
        str_off = sections[link][2]
        for k in range(sym_size // entsize):
            st_name, st_info, st_other, st_shndx, st_value, st_size = \
                struct.unpack_from("<IBBHQQ", data, sym_off + k * entsize)
            end = data.index(b"\0", str_off + st_name)
            if data[str_off + st_name:end].decode() == name:
                _, sec_addr, sec_off, _, _, _ = sections[st_shndx]
                return st_value - sec_addr + sec_off, st_size
    raise KeyError("%s: no dynamic symbol %s" % (path, name))


def require_plugin(test):
    if not os.path.exists(PLUGIN_SO):
        raise unittest.SkipTest("cannot run here: %s not built" % PLUGIN_SO)
    if os.geteuid() != 0:
        raise unittest.SkipTest("cannot run here: needs root")


class SharedClusterTest(unittest.TestCase):
    """Tests sharing one cluster, started once for the class: CLUSTER holds
    cluster.Cluster's keyword arguments."""

    CLUSTER = {}

    @classmethod
    def setUpClass(cls):
        require_plugin(cls)
        cls.c = cluster.Cluster(**cls.CLUSTER)
        cls.c.start()

    @classmethod
    def tearDownClass(cls):
        c = getattr(cls, "c", None)
        if c is not None:
            c.stop()


class PluginBinaryTest(unittest.TestCase):
    """Static checks of the built shared object."""

    def setUp(self):
        require_plugin(self)
        if not shutil.which("nm"):
            self.skipTest("cannot run here: nm (binutils) not installed")

    def nm(self, *args):
        return subprocess.run(["nm", "-D"] + list(args), capture_output=True,
                              text=True, check=True).stdout

    def test_exports_only_the_plugin_abi(self):
        names = {l.split()[-1] for l in self.nm("--defined-only", PLUGIN_SO).splitlines()}
        self.assertEqual(names, {"plugin_name", "plugin_type", "plugin_version",
                                 "init", "fini", "sched_p_reconfig"})

    def test_plugin_version_is_the_installed_slurm(self):
        off, size = elf_symbol_offset(PLUGIN_SO, "plugin_version")
        with open(PLUGIN_SO, "rb") as f:
            f.seek(off)
            version, = struct.unpack("<I", f.read(4))
        with open(cluster.SLURM_VERSION_H) as f:
            want = int(re.search(r"#define SLURM_VERSION_NUMBER (0x[0-9a-fA-F]+)",
                                 f.read()).group(1), 16)
        self.assertEqual(size, 4)
        self.assertEqual(version, want)
        major, minor, micro = cluster.slurm_version()  # slurmctld -V
        self.assertEqual(version, (major << 16) | (minor << 8) | micro)

    def test_build_check_of_plugin_version(self):
        """plugin/check-plugin-version.sh, run by the build before it puts
        sched_easypp.so in place, accepts this build for the installed Slurm
        and refuses it, naming both versions, for another one."""
        script = os.path.join(cluster.REPO_ROOT, "plugin", "check-plugin-version.sh")
        with open(cluster.SLURM_VERSION_H) as f:
            want = re.search(r"#define SLURM_VERSION_NUMBER (0x[0-9a-fA-F]+)", f.read()).group(1)
        ok = subprocess.run(["sh", script, PLUGIN_SO, want], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        other = "0x%06x" % (int(want, 16) - 1)
        bad = subprocess.run(["sh", script, PLUGIN_SO, other], capture_output=True, text=True)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("plugin_version is 0x%06x" % int(want, 16), bad.stderr)
        self.assertIn(other, bad.stderr)

    def test_slurm_symbols_are_provided_by_slurmctld(self):
        """Every unversioned undefined symbol must be exported by slurmctld,
        the libraries it links, or the plugin's own libraries (LD_BIND_NOW
        cannot check this: some of Debian's own plugins fail under it)."""
        wanted = set()
        for line in self.nm("--undefined-only", PLUGIN_SO).splitlines():
            parts = line.split()
            if parts[0] == "U" and "@" not in parts[-1]:
                wanted.add(parts[-1])
        have = set()
        libs = [cluster.SLURMCTLD]
        for obj in (cluster.SLURMCTLD, PLUGIN_SO):  # and the plugin's own NEEDED libs
            ldd = subprocess.run(["ldd", obj], capture_output=True, text=True)
            libs += re.findall(r"=> (/\S+)", ldd.stdout)
        for lib in libs:
            for line in self.nm("--defined-only", lib).splitlines():
                have.add(line.split()[-1].split("@")[0])
        self.assertTrue(wanted, "expected the plugin to use Slurm symbols")
        self.assertEqual(wanted - have, set())


class LoadTest(SharedClusterTest):
    """One cluster of 8 nodes x 4 CPUs running sched/easypp."""

    CLUSTER = dict(scheduler="sched/easypp", nodes=8, cpus=4,
                   scheduler_parameters="sched_interval=5,easypp_interval=2")

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        c = getattr(cls, "c", None)
        if c is not None:
            sys.stderr.write("\ncluster start %.1fs, stop %.1fs\n" % (
                c.start_seconds or -1, c.stop_seconds or -1))

    def test_1_scheduler_type(self):
        self.assertEqual(self.c.show_config()["SchedulerType"], "sched/easypp")

    def test_2_load_line_and_agent(self):
        m = self.c.wait_log(r"sched/easypp: loaded \((.*)\)$", timeout=5)
        self.assertIn("Slurm %s." % cluster.slurm_release(), m.group(1))
        self.assertIn("interval=2s", m.group(1))
        self.c.wait_log(r"sched/easypp: agent running", timeout=10)

    def test_3_jobs_run_on_several_nodes(self):
        c = self.c
        users = list(cluster.TEST_USERS)
        # 4 CPUs per node: 2-node jobs of 4 tasks each fill their nodes, so
        # the eight jobs need more than two nodes.
        ids = []
        for i in range(8):
            ids.append(c.submit(wrap="sleep 2", time_min=1, nodes=2, ntasks=8,
                                name="load%d" % i, user=users[i % len(users)]))
        done = c.wait_jobs(ids, timeout=120)
        nodes = set()
        for j in ids:
            self.assertEqual(done[j]["JobState"], "COMPLETED", done[j])
            self.assertIsNotNone(done[j]["start"])
            self.assertGreaterEqual(done[j]["end"], done[j]["start"])
            nodes.add(done[j]["NodeList"])
        self.assertGreaterEqual(len(nodes), 2, nodes)
        owners = {done[j]["UserId"].split("(")[0] for j in ids}
        self.assertEqual(owners, set(users))
        recs = {int(r["JobId"]) for r in c.jobcomp_records() if "JobId" in r}
        self.assertTrue(set(ids) <= recs, "jobcomp lacks %s" % (set(ids) - recs))

    def test_4_reconfigure(self):
        c = self.c
        c.set_scheduler_parameters("sched_interval=5,easypp_interval=3,easypp_bogus=1")
        c.wait_log(cluster.reconfigured_pattern(r"interval=3s "), timeout=15)
        c.wait_log(r"error: sched/easypp: unknown SchedulerParameters key 'easypp_bogus'",
                   timeout=5)
        c.set_scheduler_parameters("sched_interval=5,easypp_interval=junk")
        c.wait_log(r"error: sched/easypp: invalid easypp_interval='junk'", timeout=15)
        # sched/backfill's keys (plugin_config.h, backfill_keys()): an honoured
        # one is read (bf_interval as easypp_interval), the ones not honoured
        # are named in one warning line, bf_licenses in an error of its own.
        c.set_scheduler_parameters("sched_interval=5,bf_interval=4,bf_window=2880,bf_continue,"
                                   "bf_licenses")
        c.wait_log(cluster.reconfigured_pattern(r"interval=4s "), timeout=15)
        warned = c.wait_log(r"error: sched/easypp: warning: SchedulerParameters keys of "
                            r"sched/backfill that sched/easypp does not honour: bf_window "
                            r"\(no window: [^)]*\); bf_continue \([^)]*\)$", timeout=5)
        harmful = c.wait_log(r"error: sched/easypp: SchedulerParameters=bf_licenses is harmful "
                             r"under sched/easypp \(no license planning.*", timeout=5)
        sys.stderr.write("\n  %s\n  %s\n" % (warned.group(0), harmful.group(0)))
        c.set_scheduler_parameters("sched_interval=5")
        self.assertTrue(c.slurmctld_alive())
        self.assertEqual(c.show_config()["SchedulerType"], "sched/easypp")

    def test_5_restart_keeps_state(self):
        c = self.c
        job = c.submit(wrap="sleep 1", time_min=1, nodes=1)
        c.wait_jobs([job], timeout=60)
        loads = len(re.findall(r"sched/easypp: loaded", c.ctld_log_text()))
        c.restart_slurmctld()
        self.assertEqual(c.job_state(job), "COMPLETED")
        self.assertEqual(len(re.findall(r"sched/easypp: loaded", c.ctld_log_text())), loads + 1)
        job2 = c.submit(wrap="sleep 1", time_min=1, nodes=3)
        self.assertEqual(c.wait_jobs([job2], timeout=60)[job2]["JobState"], "COMPLETED")

    def test_6_stop_is_clean(self):
        # runs last (alphabetical order): stop here and look at the shutdown
        c = self.c
        c.stop()
        self.assertLess(c.stop_seconds, 30)
        log = c.final_ctld_log
        self.assertRegex(log, r"sched/easypp: stopped after \d+ cycles")
        self.assertNotRegex(log, r"fatal:")


class VersionMismatchTest(unittest.TestCase):
    """slurmctld itself refuses a sched_easypp.so whose plugin_version is not
    its own (plugin.c checks major, minor and micro), before the plugin's
    init(); the plugin's constructor (run by dlopen, earlier still) logs one
    line naming both releases and the fix; `easypp-ctl check` predicts it."""

    def setUp(self):
        require_plugin(self)

    def test_other_version_refused(self):
        tmp = tempfile.mkdtemp(prefix="easypp-badver-")
        try:
            bad = os.path.join(tmp, "sched_easypp.so")
            shutil.copy(PLUGIN_SO, bad)
            off, _ = elf_symbol_offset(bad, "plugin_version")
            with open(bad, "r+b") as f:
                f.seek(off)
                real, = struct.unpack("<I", f.read(4))
                fake = real - 1 if real & 0xFF else real + 1  # another micro version
                f.seek(off)
                f.write(struct.pack("<I", fake))
            text = lambda v: "%d.%02d.%d" % (v >> 16, (v >> 8) & 0xFF, v & 0xFF)
            # Before the restart: easypp-ctl check says it (exit 1), and
            # accepts the real build (exit 0).
            ctl = os.path.join(cluster.REPO_ROOT, "plugin", "easypp-ctl")
            ctl = os.environ.get("EASYPP_CTL", ctl)
            # easypp-ctl check asks /usr/sbin/slurmctld; a private build's
            # release is given instead (the same comparison).
            against = ["--slurm-version", text(real)] if cluster.SLURM_PREFIX else []
            if os.access(ctl, os.X_OK):
                p = subprocess.run([ctl, "check", "--plugin", bad] + against, capture_output=True,
                                   text=True)
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertIn("MISMATCH: slurmctld %s refuses a plugin built for Slurm %s"
                              % (text(real), text(fake)), p.stdout)
                p = subprocess.run([ctl, "check", "--plugin", PLUGIN_SO] + against,
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn("OK: slurmctld %s loads this plugin" % text(real), p.stdout)
            c = cluster.Cluster(scheduler="sched/easypp", nodes=1, plugin_dir=tmp,
                                keep_dir_on_failure=False)
            with self.assertRaises(cluster.ClusterError) as cm:
                c.start()
            msg = str(cm.exception)
            c.stop()
            log = c.final_ctld_log or msg
            mine = re.findall(r"error: sched/easypp: .*", log)
            sys.stderr.write("\n  refused as expected: %s\n" % (mine or [msg])[0])
            self.assertIn("slurmctld exited", msg)
            self.assertEqual(len(mine), 1, log)
            self.assertRegex(mine[0], r"error: sched/easypp: \S*/sched_easypp\.so was built for "
                             r"Slurm %s but this slurmctld is Slurm %s, .*: rebuild it against "
                             r"Slurm %s and install it" % (re.escape(text(fake)),
                                                           re.escape(text(real)),
                                                           re.escape(text(real))))
            self.assertRegex(msg, r"Incompatible Slurm plugin \S*sched_easypp\.so version "
                                  r"\(%d\.%02d\.%d\)" % (fake >> 16, (fake >> 8) & 0xFF,
                                                         fake & 0xFF))
            self.assertRegex(msg, r"fatal: .*sched")
            self.assertLess(log.index("error: sched/easypp:"), log.index("Incompatible Slurm"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
