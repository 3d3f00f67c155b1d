#!/usr/bin/python3
"""Validate `alibi-blind design --keep gradient` (spec §15) against PyTorch's CPU autograd and mpmath.

usage: validate_design_gradient.py ALIBI_BLIND

For each case design gives the steepest binary32 slope m1 whose head keeps a non-zero rounded gradient dS
for every key of the N x N causal matrix (zero logits) when |dP - D| x loss scale = 2^j. Two independent
checks:

1. PyTorch autograd, exactly. The layer's logits for m1 and for the next binary32 slope up are dumped by the
   emulator (`simulate --weights`, the forward validated against torch by torch.validate); torch runs the
   preset's softmax call on them (eager: F.softmax(x, dtype=torch.float32).to(dtype), the upcast kind; mpt:
   torch.softmax(x) in the dtype, the native kind) and P.backward(dP) with dP = 2^j on the farthest key of
   every row (column 0) and 0 elsewhere. Then dS of that key is P0 (2^j - D) with D = 2^j P0, i.e. the key's
   rounded P0 2^j (1 - P0): the unit-upstream gradient of the farthest key, the first one a steeper slope
   loses. m1's column 0 must have no zero gradient, the next slope's must have one.
2. mpmath, the closed form without kernel roundings: m* solves e^(-m (N-1)) / S_N(m) = 2^(emin - p - j)
   (S_N the exact zero-logit row sum, (1 - e^(-m N)) / (1 - e^(-m))); m1 must lie within the bias
   dtype's relative rounding of it (the logits -m d are stored in the dtype: 2^-p' with p' its precision,
   times two for the sum's and exp's fp32 roundings), and the other heads must be the Press spread
   m1 2^(-8 (h-1)/H) rounded down to binary32.

Exit status: 0 when every case agrees, 1 otherwise, 77 when torch or mpmath cannot be imported.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    from mpmath import mp, mpf, exp, log, findroot
except ImportError:
    print("validate_design_gradient: torch or mpmath is not importable; skipped")
    sys.exit(77)
from alibi_reference import read_rows

torch.set_num_threads(1)
mp.dps = 50
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
FMT = {"bf16": (8, -126), "fp16": (11, -14), "fp32": (24, -126)}   # precision p, emin


def design(binary, preset, dtype, n, heads, j):
    args = [binary, "design", "--keep", "gradient", "--pipeline", preset, "--dtype", dtype, "--ctx", str(n),
            "--heads", str(heads), "--upstream", "2^%d" % j, "--format", "slopes"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()
    return [np.float32(float(t)) for t in out.split(":", 1)[1].split(",")]


def read_logits(path, heads, n):
    return read_rows(path, heads, n, "L")


def column0_zeros(binary, preset, dtype, n, slopes, j):
    """Per slope: the rows whose farthest key gets an exactly-zero gradient in PyTorch's autograd."""
    spec = "slopes:" + ",".join(repr(float(m)) for m in slopes)
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "w.txt")
        subprocess.run([binary, "simulate", "--weights", dump, "--pipeline", preset, "--dtype", dtype, "--ctx",
                        str(n), "--slopes", spec], check=True, capture_output=True)
        L = read_logits(dump, len(slopes), n)
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    x = torch.from_numpy(L).to(DT[dtype]).masked_fill(causal, torch.finfo(DT[dtype]).min)
    x.requires_grad_(True)
    if preset == "mpt":
        p = torch.softmax(x, dim=-1)
    else:
        p = F.softmax(x, dim=-1, dtype=torch.float32).to(DT[dtype])
    dp = torch.zeros(len(slopes), n, n)
    dp[:, :, 0] = 2.0 ** j
    p.backward(dp.to(DT[dtype]))
    g = x.grad.float()[:, 1:, 0]   # row 0 is the key itself: P = 1, D = dP, its dS is 0 by construction
    return [int((g[h] == 0).sum()) for h in range(len(slopes))]


def threshold_log2(preset, dtype, j):
    """k with dS = 0 iff P <= 2^-k. Upcast: P 2^j rounds to 0 iff P <= 2^(emin - p - j), where P is an fp32
    value (k at most 150: below 2^-150 only P = 0). Native with j >= 0: the stored weight is 0 or at least the
    smallest subnormal, whose product with 2^j is not 0: the forward threshold (j = 0)."""
    p, emin = FMT[dtype]
    if preset == "mpt":
        j = min(j, 0)
    return min(p + j - emin, 150)


def closed_form_slope(preset, dtype, n, j):
    target = threshold_log2(preset, dtype, j) * log(2)   # -ln 2^-k

    def f(m):
        return m * (n - 1) + log((1 - exp(-m * n)) / (1 - exp(-m))) - target
    return findroot(f, target / (n - 1))


def press_spread(m1, heads):
    out = [m1]
    for h in range(1, heads):
        v = mpf(float(m1)) * mpf(2) ** (mpf(-8 * h) / heads)
        f = np.float32(float(v))
        if mpf(float(f)) > v:
            f = np.nextafter(f, np.float32(0))
        out.append(f)
    return out


def run_case(binary, preset, dtype, n, heads, j):
    slopes = design(binary, preset, dtype, n, heads, j)
    m1 = slopes[0]
    up = np.nextafter(m1, np.float32(np.inf))
    z_m1, z_up = column0_zeros(binary, preset, dtype, n, [m1, up], j)
    mstar = closed_form_slope(preset, dtype, n, j)
    # the kernel's roundings, in nats of the farthest key's log-weight: its logit -m (N-1) stored in the
    # dtype (relative 2^-p, twice for margin), and P's own rounding in fp32 near the threshold 2^-k (2^-22,
    # or the subnormal spacing 2^-149 relative to 2^-k when k > 126); divided by d/dm of the log-weight
    k = threshold_log2(preset, dtype, j)
    nats = 2.0 ** (1 - FMT[dtype][0]) * float(m1) * (n - 1) + (float(log(1 + 2.0 ** (k - 148))) if k > 126 else 2.0 ** -22)
    tol = nats / (float(m1) * (n - 1) - 1)
    rel = abs(mpf(float(m1)) / mstar - 1)
    spread = press_spread(m1, heads) == slopes
    ok = z_m1 == 0 and z_up > 0 and rel <= tol and spread
    print("%-5s %-4s N=%-5d H=%d 2^%-3d m1=%.9g (closed form %s, rel %.2e <= %.2e): torch zero dS in column 0: "
          "m1 %d, next slope %d; spread %s: %s" % (preset, dtype, n, heads, j, float(m1), mp.nstr(mstar, 9),
                                                    float(rel), tol, z_m1, z_up, spread, "agree" if ok else "DIFFER"))
    return ok


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    cases = [("eager", "fp16", 1025, 4, 0), ("eager", "fp16", 1025, 4, -8), ("eager", "fp16", 2048, 8, 15),
             ("eager", "bf16", 2048, 4, 16), ("eager", "bf16", 1024, 4, -4), ("eager", "fp32", 1024, 2, -10),
             ("mpt", "bf16", 1025, 4, 0), ("mpt", "bf16", 2048, 2, 8)]
    fails = sum(not run_case(binary, *c) for c in cases)
    print("%d cases, %d differ" % (len(cases), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
