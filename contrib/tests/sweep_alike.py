#!/usr/bin/env python3
"""easypp-sweep keeps the specs that easypp-sim replays once (its
alike_key) in the same share, so that splitting a cell into shares adds no
replay. alike_key restates easypp-sim's replay_key (libsim batch.cc) in
Python; this checks the two agree on the whole thesis grid: easypp-sim,
given the 8,640 specs at once on a small workload, names for each spec the
one whose replay it reused (the CSV's same_as). Every spec must have the
alike_key of the spec it reused, and there must be as many distinct
alike_keys as replays. And split_shares() must keep each key in one share.

usage: sweep_alike.py EASYPP_SWEEP EASYPP_SIM (exit 1 on a mismatch)"""
import csv
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile

sweep_path, sim = sys.argv[1], sys.argv[2]
loader = importlib.machinery.SourceFileLoader("easypp_sweep", sweep_path)
module_spec = importlib.util.spec_from_loader("easypp_sweep", loader)
sweep = importlib.util.module_from_spec(module_spec)
loader.exec_module(sweep)

names = [s for s, _ in sweep.configurations("easy++", list(sweep.THESIS_GRID))]
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "specs")
    with open(path, "w") as f:
        f.write("\n".join(names) + "\n")
    out = subprocess.run([sim, "-w", "synthetic:seed=3,jobs=40,procs=16,users=4", "--csv", "-q",
                          "--threads", "1", "--scheduler-file", path],
                         capture_output=True, text=True, check=True).stdout
rows = list(csv.DictReader(out.splitlines()))
bad = []
if [r["scheduler"] for r in rows] != names:
    bad.append("easypp-sim's rows are not the specs in order")
replays = 0
for r in rows:
    reused = r["same_as"] or r["scheduler"]
    replays += not r["same_as"]
    if sweep.alike_key(r["scheduler"]) != sweep.alike_key(reused):
        bad.append("%s reused %s, another alike_key" % (r["scheduler"], reused))
keys = {sweep.alike_key(n) for n in names}
if len(keys) != replays:
    bad.append("%d alike_keys but easypp-sim replayed %d" % (len(keys), replays))
for n in (2, 3, 4, 7):
    owner = {}
    for i, share in enumerate(sweep.split_shares(names, n)):
        for s in share:
            if owner.setdefault(sweep.alike_key(s), i) != i:
                bad.append("%d shares: %s split from its alike specs" % (n, s))
for b in bad[:10]:
    print(b)
print("%d specs, %d replays, %d alike_keys, %d problems" % (len(names), replays, len(keys), len(bad)))
sys.exit(1 if bad else 0)
