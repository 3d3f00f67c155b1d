#!/usr/bin/python3
"""analyze --gradient against an independent mpmath computation of the closed form (spec §15).

dS = P * 2^j rounds to 0 in a format (p, emin) iff P <= 2^(emin - p - j). Zero logits, last row of N keys,
P(d) = e^(-m d) / S_N with S_N = (1 - e^(-m N)) / (1 - e^(-m)) (weight level) or P(d) = e^(-m d) (exponent
level): delta = ceil(((p + j - emin) ln 2 - ln S) / m), at least 1 at the exponent level; the last row
loses max(0, N - delta) keys. The expected values are computed here with mpmath at 60 digits, never taken
from the tool. Exit 77 without mpmath.
"""
import json
import subprocess
import sys

try:
    from mpmath import mp, mpf, exp, log, ceil
except ImportError:
    print("mpmath missing: skipped")
    sys.exit(77)

mp.dps = 60
FMT = {"fp16": (11, -14), "bf16": (8, -126), "fp32": (24, -126)}


def expected(dtype, level, j, slopes, n):
    p, emin = FMT[dtype]
    out = []
    for m in slopes:
        m = mpf(m)
        lnS = log((1 - exp(-m * n)) / (1 - exp(-m))) if level == "weight" else 0
        q = ((p + j - emin) * log(2) - lnS) / m
        d = int(ceil(q))
        if level == "exponent":
            d = max(1, d)
        out.append((d, max(0, n - d)))
    return out


def main():
    binary = sys.argv[1]
    fails = 0
    cases = [("fp16", "weight", -8, ["0.25", "0.0625"], 2048), ("fp16", "weight", 16, ["0.25", "0.0625"], 2048),
             ("bf16", "weight", 0, ["0.5", "0.125", "0.03125"], 4096), ("bf16", "exponent", 16, ["0.5", "0.0078125"], 8192),
             ("fp32", "weight", -10, ["1", "0.25"], 1024), ("fp16", "exponent", 0, ["0.7", "0.01"], 100000)]
    for dtype, level, j, slopes, n in cases:
        args = [binary, "analyze", "--gradient", "--upstream", "2^%d" % j, "--dtype", dtype, "--level", level,
                "--slopes", "slopes:" + ",".join(slopes), "--ctx", str(n), "--format", "json"]
        rep = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        heads = sorted(rep["heads"], key=lambda h: h["head"])
        got = [(h["delta"], h["row_zeros"]) for h in heads]
        want = expected(dtype, level, j, slopes, n)
        fwd = expected(dtype, level, 0, slopes, n)
        only = sum(max(0, wz - fz) for (_, wz), (_, fz) in zip(want, fwd))
        ok = got == want and rep["gradient_only_row"] == only
        fails += not ok
        print("%s %s j=%d N=%d: %s" % (dtype, level, j, n, "agree" if ok else "DIFFER tool %s/%s want %s/%s" %
                                      (got, rep["gradient_only_row"], want, only)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
