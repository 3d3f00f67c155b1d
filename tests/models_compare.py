#!/usr/bin/env python3
"""analyze/check --model a,b,c (issue 19, "Compare models"): each model's part of the JSON document is its
own single-model run (the independent path), plus head_count = the number of its head rows and
first_blind_any = the smallest first blind distance of those rows (null when none); check's exit status is 1
when any model fails its limits. usage: models_compare.py BINARY"""
import json
import subprocess
import sys

MODELS = ["bloom-560m", "mpt-30b", "falcon-rw-7b", "poro-34b"]


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def main():
    b = sys.argv[1]
    fails = []
    for cmd, extra in (("analyze", []), ("check", ["--max-blind-heads", "64"])):
        rc, out, err = run(b, cmd, "--model", ",".join(MODELS), "--ctx", "4k", "--format", "json", *extra)
        if rc != 0:
            return print("%s list: exit %d %s" % (cmd, rc, err)) or 1
        doc = json.loads(out)
        if doc["models"] != MODELS:
            fails.append("%s: models %r" % (cmd, doc["models"]))
        for name, got in zip(MODELS, doc["analyses"]):
            rc1, out1, err1 = run(b, cmd, "--model", name, "--ctx", "4k", "--format", "json", *extra)
            want = json.loads(out1)
            rows = want["heads"]
            firsts = [h["first_blind"] for h in rows if h["first_blind"] is not None]
            # check lists only the blind heads: the head count is that of analyze's rows (one per head)
            _, aout, _ = run(b, "analyze", "--model", name, "--ctx", "4k", "--format", "json")
            nheads = len(json.loads(aout)["heads"])
            if got.pop("head_count") != nheads:
                fails.append("%s %s: head_count is not the %d head rows" % (cmd, name, nheads))
            if got.pop("first_blind_any") != (min(firsts) if firsts else None):
                fails.append("%s %s: first_blind_any is not the rows' smallest first_blind" % (cmd, name))
            if got != want:
                fails.append("%s %s: the list's part differs from the single run" % (cmd, name))
    rc, _, _ = run(b, "check", "--model", "bloom-560m,mpt-7b", "--ctx", "2k", "--max-blind-heads", "4")
    if rc != 1:
        fails.append("check list over the limit: exit %d, expected 1" % rc)
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
