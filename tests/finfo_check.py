#!/usr/bin/python3
"""thresholds' linear values against torch.finfo / numpy.finfo and the ml_dtypes README's closed forms.

usage: finfo_check.py BINARY. Exit 77 (skipped) without numpy. For every built-in format: exp(tau) of
the subnormal, ftz and max kinds is the smallest subnormal, the smallest normal (finfo.tiny) and the
largest finite value; tau itself is ln of it. torch 1.13 and numpy give bf16/fp16/fp32/fp64; the fp8,
fp6 and fp4 maxima are the values the ml_dtypes README states (docs/dtypes.md cites them).
"""
import json
import math
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("numpy not installed: skipped")
    sys.exit(77)
# The script's own folder (tests/) holds a torch/ directory, which Python would import as an empty
# namespace package when PyTorch is not installed: drop it from the path and check for finfo.
sys.path = [p for p in sys.path[1:]]
try:
    import torch
    if not hasattr(torch, "finfo"):
        torch = None
except ImportError:
    torch = None

out = subprocess.run([sys.argv[1], "thresholds", "--dtype", "all", "--digits", "20", "--format", "json"],
                     capture_output=True, text=True, check=True).stdout
rows = json.loads(out)["thresholds"]
got = {}
for r in rows:
    got[(r["dtype"], r["kind"])] = r

want = {}  # dtype -> (smallest subnormal, tiny, max)
for name, npt in (("fp16", np.float16), ("fp32", np.float32), ("fp64", np.float64)):
    fi = np.finfo(npt)
    sub = float(fi.smallest_subnormal) if hasattr(fi, "smallest_subnormal") else float(fi.tiny) * float(fi.eps)
    want[name] = (sub, float(fi.tiny), float(fi.max))
if torch is not None:
    for name, tt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32), ("fp64", torch.float64)):
        fi = torch.finfo(tt)
        # torch 1.13 has no smallest_subnormal: tiny * eps = 2^emin * 2^(1-p).
        w = (fi.tiny * fi.eps, fi.tiny, fi.max)
        if name in want and want[name] != w:
            print(f"{name}: numpy {want[name]} and torch {w} disagree")
            sys.exit(1)
        want[name] = w
# ml_dtypes README maxima; subnormal and tiny from its biases: tiny = 2^(1 - bias) (fnuz: 2^-bias),
# smallest subnormal = tiny * 2^-m.
for name, m, tiny_exp, mx in (("fp8-e5m2", 2, -14, 57344.0), ("fp8-e4m3fn", 3, -6, 448.0),
                              ("fp8-e4m3fnuz", 3, -7, 240.0), ("fp8-e5m2fnuz", 2, -15, 57344.0),
                              ("fp6-e2m3fn", 3, 0, 7.5), ("fp6-e3m2fn", 2, -2, 28.0), ("fp4-e2m1fn", 1, 0, 6.0),
                              ("float8_e4m3", 3, -6, 240.0), ("fp8-e3m4", 4, -2, 15.5),
                              ("fp8-e4m3b11fnuz", 3, -10, 30.0)):
    want[name] = (2.0 ** (tiny_exp - m), 2.0 ** tiny_exp, mx)

fail = 0
for name, (sub, tiny, mx) in sorted(want.items()):
    for kind, value in (("subnormal", sub), ("ftz", tiny), ("max", mx)):
        r = got.get((name, kind))
        if r is None:
            print(f"{name} {kind}: not in the output")
            fail = 1
            continue
        if r["linear"] != value:
            print(f"{name} {kind}: linear {r['linear']!r}, want {value!r}")
            fail = 1
        if abs(float(r["tau_decimal"]) - math.log(value)) > 1e-12 * max(1.0, abs(math.log(value))):
            print(f"{name} {kind}: tau {r['tau_decimal']}, ln(value) = {math.log(value)!r}")
            fail = 1
print(f"{len(want)} formats checked against finfo / closed forms" + (" (torch too)" if torch else ""))
sys.exit(fail)
