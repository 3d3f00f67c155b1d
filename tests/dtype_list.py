#!/usr/bin/python3
"""analyze --dtype LIST against the single-dtype runs and the closed form of delta.

usage: dtype_list.py BINARY. For a list of formats, each dtype's part of the output must be exactly the
output of `analyze --dtype THAT` (JSON: analyses[i] is that object; CSV: its rows behind a dtype cell;
text: the section is that report retitled, with the notes common to every section only in the last),
and every paper delta must be round(-tau/m) with tau = emin * ln 2 (the ftz threshold, spec section 4)
computed here with mpmath -- not with the tool. Exit 77 (skipped) without mpmath.
"""
import csv
import io
import json
import subprocess
import sys

try:
    import mpmath
except ImportError:
    print("mpmath not installed: skipped")
    sys.exit(77)

BIN = sys.argv[1]
EMIN = {"bf16": -126, "fp16": -14, "fp32": -126, "fp8-e4m3fn": -6}
fail = 0


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, check=True).stdout


def check(cond, what):
    global fail
    if not cond:
        print("FAIL:", what)
        fail = 1


for base in (["--heads", "8", "--ctx", "4096"], ["--heads", "4", "--ctx", "2048", "--pipeline", "eager"]):
    dts = ["bf16", "fp16", "fp8-e4m3fn"]
    lst = ",".join(dts)
    # JSON: the labels, then exactly the single-dtype objects, in order.
    doc = json.loads(run("analyze", *base, "--dtype", lst, "--format", "json"))
    check(doc["dtypes"] == dts, f"dtypes {doc['dtypes']}")
    for d, obj in zip(dts, doc["analyses"]):
        single = json.loads(run("analyze", *base, "--dtype", d, "--format", "json"))
        check(obj == single, f"{base} {d}: JSON differs from the single run")
        mpmath.mp.prec = 200
        tau = EMIN[d] * mpmath.log(2)
        for h in obj["heads"]:
            m = mpmath.mpf(2) ** mpmath.mpf(h["slope_exact"].split("^")[1])
            check(h["delta"] == int(mpmath.nint(-tau / m)), f"{d} head {h['head']}: delta {h['delta']}")
    # CSV: one header, a dtype cell before each single-dtype row.
    rows = list(csv.reader(io.StringIO(run("analyze", *base, "--dtype", lst, "--format", "csv"))))
    want = []
    for d in dts:
        one = list(csv.reader(io.StringIO(run("analyze", *base, "--dtype", d, "--format", "csv"))))
        if not want:
            want.append(["dtype"] + one[0])
        want += [[d] + r for r in one[1:]]
    check(rows == want, f"{base}: CSV differs from the single runs")
    # Text: an overview, then each single report retitled; notes once, at the end.
    text = run("analyze", *base, "--dtype", lst)
    for i, d in enumerate(dts):
        one = run("analyze", *base, "--dtype", d)
        title, rest = one.split("\n", 1)
        if i + 1 < len(dts):
            rest = rest[: rest.index("\n\nδ")] + "\n" if "\n\nδ" in rest else rest
        section = f"{title}: {d}\n{rest}"
        check(section in text, f"{base} {d}: text section is not the single report")
    check(text.count("δ ieee: ") == 1, "the common notes are printed once")

sys.exit(fail)
