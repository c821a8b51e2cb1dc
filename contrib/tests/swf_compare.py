#!/usr/bin/env python3
"""Test helper: compare two SWF files job line by job line, field by field.

Usage: swf_compare.py EXPECTED ACTUAL
Comment lines (";") are ignored. Every difference is printed with the job
line number and the field's number and name; exit status 1 if any.
"""
import sys

NAMES = ("job number", "submit time", "wait time", "run time", "allocated processors",
         "average CPU time", "used memory", "requested processors", "requested time",
         "requested memory", "status", "user", "group", "application", "queue",
         "partition", "preceding job", "think time")


def jobs(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if s and not s.startswith(";"):
                out.append((n, s.split()))
    return out


def main():
    exp, act = jobs(sys.argv[1]), jobs(sys.argv[2])
    bad = 0
    if len(exp) != len(act):
        print("job lines: expected %d, got %d" % (len(exp), len(act)))
        bad += 1
    for (ne, e), (na, a) in zip(exp, act):
        if len(a) != 18:
            print("%s:%d: %d fields, expected 18" % (sys.argv[2], na, len(a)))
            bad += 1
            continue
        for i, (x, y) in enumerate(zip(e, a)):
            if x != y:
                print("%s:%d (job %s): field %d (%s): expected %s, got %s"
                      % (sys.argv[2], na, e[0], i + 1, NAMES[i], x, y))
                bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
