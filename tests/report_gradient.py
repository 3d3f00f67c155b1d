#!/usr/bin/env python3
"""The HTML report's gradient section (issue 20) against the closed form computed here with mpmath.

usage: report_gradient.py ALIBI_BLIND

A layer of slopes 1/2 and 1/4 at N = 2048 in fp16 on `eager` (upcast backward): dS = P 2^j rounds to 0
iff P <= 2^(emin - p - j) = 2^-(25 + j), so with zero logits the last row's first zero dS is
ceil(((25 + j) ln 2 - ln S_N) / m), S_N = (1 - e^(-m N)) / (1 - e^(-m)), and the keys with a zero dS
whose weight is not 0 are the difference of the counts at j and at 0 (N - d each). m d is exact in
fp16 for these slopes and every quotient is more than 0.02 tokens from an integer, so the kernel's
roundings cannot move them. Exit 77 without mpmath.
"""
import os
import re
import subprocess
import sys
import tempfile

try:
    from mpmath import mp, mpf, exp, log, ceil
except ImportError:
    print("mpmath missing: skipped")
    sys.exit(77)

mp.dps = 60
N, SLOPES = 2048, ("0.5", "0.25")


def first(m, j):
    m = mpf(m)
    lnS = log((1 - exp(-m * N)) / (1 - exp(-m)))
    q = ((25 + j) * log(2) - lnS) / m
    assert abs(q - round(q)) > 0.02, q
    return int(ceil(q))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.html")
        subprocess.run([sys.argv[1], "report", "--slopes", "slopes:" + ",".join(SLOPES), "--ctx", str(N), "--dtype",
                        "fp16", "--pipeline", "eager", "--output", out], check=True, capture_output=True)
        page = open(out, encoding="utf-8").read()
    sec = page[page.index("<h2>Training: gradient blindness</h2>"):]
    sec = sec[: sec.index("</table>")]
    fails = 0
    for j in (-8, 0, 16):
        row = re.search(r"<tr><td class=\"n\">2\^%d</td>(.*?)</tr>" % j, sec)
        want_d = [first(m, j) for m in SLOPES]
        only = sum(max(0, (N - first(m, j)) - (N - first(m, 0))) for m in SLOPES)
        want = "<td class=\"n\">%d of %d</td><td>%s</td><td class=\"n\">%d</td>" % (
            len(SLOPES), len(SLOPES), ", ".join(str(d) for d in want_d), only)
        ok = row is not None and row.group(1) == want
        fails += not ok
        print("2^%d: %s" % (j, "agree" if ok else "DIFFER\n  page %s\n  want %s" % (row.group(1) if row else None,
                                                                                 want)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
