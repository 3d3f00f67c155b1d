#!/usr/bin/env python3
"""plot gradient as files (issue 20): plot_gradient.py BINARY WORKDIR

As tests/plot_files.py checks the other kinds: for PNG, SVG and PDF the file exists and starts with the
format's magic bytes, the SVG parses as XML and draws exactly two series (forward and gradient), each in
its own colour as one <polyline> plus its legend sample, and two runs give the same bytes. A kernel whose
backward is not modelled (sdpa-cudnn) and an option of another kind (--head) are refused with exit 2, one line
on stderr, nothing on stdout and no file. Standard library only."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF"}
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(args):
    p = subprocess.run([BIN] + args, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def series_colours(svg):
    counts = {}
    for el in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}polyline"):
        c = el.get("stroke", "").upper()
        counts[c] = counts.get(c, 0) + 1
    # not series: black (text, frame), greys (grid, band), white
    return {c: n for c, n in counts.items() if len(c) == 7 and not (c[1:3] == c[3:5] == c[5:7])}


ARGS = ["--heads", "8", "--ctx", "1024", "--dtype", "fp16", "--upstream", "2^-8"]
for ext in ("png", "svg", "pdf"):
    out, again = os.path.join(WORK, "gradient." + ext), os.path.join(WORK, "gradient.again." + ext)
    for f in (out, again):
        if os.path.exists(f):
            os.remove(f)
    rc, so, se = run(["plot", "gradient"] + ARGS + ["--output", out])
    if rc != 0 or so or se:
        fail("gradient %s: exit %d, stdout %r, stderr %r" % (ext, rc, so[:200], se[:200]))
        continue
    data = open(out, "rb").read()
    if not data.startswith(MAGIC[ext]):
        fail("gradient %s: magic %r" % (ext, data[:8]))
    if ext == "svg":
        cols = series_colours(data)
        if len(cols) != 2 or any(n != 2 for n in cols.values()):
            fail("gradient svg: series colours %r (want two, each a line and a legend sample)" % cols)
    run(["plot", "gradient"] + ARGS + ["--output", again])
    if not os.path.exists(again) or open(again, "rb").read() != data:
        fail("gradient %s: a second run gives other bytes" % ext)

for bad in (["--pipeline", "sdpa-cudnn"], ["--head", "2"], ["--upstream", "3"]):
    out = os.path.join(WORK, "gradient.bad.svg")
    if os.path.exists(out):
        os.remove(out)
    rc, so, se = run(["plot", "gradient"] + bad + ["--output", out])
    if rc != 2 or so or se.count(b"\n") != 1 or os.path.exists(out):
        fail("plot gradient %s: exit %d, stdout %r, stderr %r, file %s" % (" ".join(bad), rc, so, se,
                                                                           os.path.exists(out)))

print("plot gradient: %d failures" % len(failures))
sys.exit(1 if failures else 0)
