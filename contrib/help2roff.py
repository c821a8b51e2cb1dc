#!/usr/bin/env python3
"""Write a man page from a contrib tool's --help (build helper, not installed).

Usage: help2roff.py TOOL SECTION-TITLE > TOOL.1
The --help text is the single source: lines in capitals become .SH headings,
everything else is kept as preformatted text, so the page says exactly what
--help says.
"""
import os
import re

HEADING = re.compile(r"^[A-Z]{3,}( [A-Z]{2,})*( \(.*\))?$")
import subprocess
import sys


def esc(line):
    line = line.replace("\\", "\\e")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line.replace("-", "\\-")


def main():
    tool, title = sys.argv[1], sys.argv[2]
    name = os.path.basename(tool)
    with open(tool, "rb") as f:
        script = f.read(2) == b"#!"
    # a Python script runs under this interpreter; a built program directly
    runner = [sys.executable, tool] if script else [tool]
    text = subprocess.run(runner + ["--help"], stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout
    version = subprocess.run(runner + ["--version"], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout.split()[-1]
    lines = text.splitlines()
    usage = []
    while lines and lines[0].strip():
        usage.append(re.sub(r"^usage: ", "", lines.pop(0)).strip())
    body = [ln for ln in lines]
    while body and not body[0].strip():
        body.pop(0)
    desc = []
    while body and not HEADING.match(body[0]):
        desc.append(body.pop(0))
    out = ['.TH %s 1 "" "easypp %s" "User Commands"' % (name.upper(), version),
           ".SH NAME", "%s \\- %s" % (name, esc(title)), ".SH SYNOPSIS", ".nf"]
    out += [esc(u) for u in usage] + [".fi", ".SH DESCRIPTION"]
    paras = " ".join(d.strip() if d.strip() else "\n" for d in desc).split("\n")
    out += [x for p in paras if p.strip() for x in (".PP", esc(p.strip()))]
    pre = False
    for ln in body:
        if HEADING.match(ln):
            if pre:
                out.append(".fi")
            out += [".SH " + ln, ".nf"]
            pre = True
        else:
            out.append(esc(ln) if ln.strip() else "")
    if pre:
        out.append(".fi")
    out += [".SH SEE ALSO", ".BR easypp-sim (1),", ".BR easypp-sacct2swf (1),",
            ".BR easypp-sweep (1),", ".BR sacct (1)"]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
