#!/usr/bin/python3
"""simulate --backward on softmax=sdpa-efficient (the memory-efficient SDPA backward, modelled from source,
not measured; docs/pipelines.md §9) against an independent recomputation of the kernel's formulas with
numpy and mpmath, from the layer's logits the emulator dumps (simulate --weights), never from its counts;
with zero logits the zero-logit predictor (simulate --backward --predict) too.

The model recomputed here, from kernel_forward.h / kernel_backward.h / epilogue_thread_apply_logsumexp.h:
  forward, per row, keys in blocks of B from key 0: y = fp32(x log2 e), mi the running max of y, s the fp32
  row sum, s = fp32(s * exp2(mi_old - mi_new)) when the max grows, s = fp32(s + fp32(exact block sum of
  exp2(fp32(y - mi))));  lse = fp32(fp32(mi / log2 e) + fp32(log s));
  backward: P = dtype(fp32(exp(fp32(x - lse)))), dS = dtype(fp32(fp32(2^j P) * fp32(1 / sqrt(head_dim)))).
Every transcendental and every rounding to binary32 or the dtype is done here with mpmath at 200 bits and
explicit round-to-nearest-even (subnormals included). Per head: the last row's first zero distance and zero
count, the matrix's zero count, and the zeros whose forward weight (the dumped W) is not 0.

usage: memeff_backward_check.py ALIBI_BLIND.  Exit 0 all agree, 1 otherwise, 77 without numpy/mpmath.
"""
import json
import os
import subprocess
import sys

try:
    import mpmath
    import numpy as np
except ImportError:
    print("memeff_backward_check: numpy or mpmath missing; skipped")
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch"))
from alibi_reference import dump_rows   # noqa: E402 (the simulate --weights dump the validators share)

mpmath.mp.prec = 200
FMT = {"bf16": (8, -126), "fp16": (11, -14), "fp32": (24, -126)}   # precision p, emin


def rnd(x, fmt):
    """x (mpf) rounded to nearest-even in a binary format with subnormals (overflow not reached here)."""
    p, emin = FMT[fmt]
    if x == 0:
        return mpmath.mpf(0)
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = int(mpmath.floor(mpmath.log(a, 2)))
    # guard the floor of log2 against its own rounding
    while mpmath.mpf(2) ** e > a:
        e -= 1
    while mpmath.mpf(2) ** (e + 1) <= a:
        e += 1
    q = mpmath.mpf(2) ** (max(e, emin) - (p - 1))   # the spacing at a
    n = a / q
    f = int(mpmath.floor(n))
    r = n - f
    if r > 0.5 or (r == 0.5 and f % 2 == 1):
        f += 1
    return sign * f * q


def f32(x):
    return rnd(x, "fp32")


L2E = f32(mpmath.mpf("1.4426950408889634074"))   # the kernel's float kLog2e


def lse_of(x, B):
    mi, s = None, mpmath.mpf(0)
    for lo in range(0, len(x), B):
        ys = [f32(mpmath.mpf(float(v)) * L2E) for v in x[lo:lo + B]]
        bm = max(ys)
        if mi is None or bm > mi:
            if mi is not None:
                s = f32(s * f32(mpmath.power(2, mi - bm)))
            mi = bm
        block = mpmath.fsum(f32(mpmath.power(2, f32(y - mi))) for y in ys)
        s = f32(s + f32(block))
    return f32(f32(mi / L2E) + f32(mpmath.log(s)))


def expected(X, W, dtype, j, B, head_dim):
    heads, n, _ = X.shape
    scale = f32(1 / mpmath.sqrt(head_dim))
    up = mpmath.mpf(2) ** j
    out = []
    for h in range(heads):
        mz = only_m = 0
        for i in range(n):
            x = X[h, i, : i + 1]
            lse = lse_of(x, B)
            zero = []
            for k in range(i + 1):
                p = rnd(f32(mpmath.exp(f32(mpmath.mpf(float(x[k])) - lse))), dtype)
                ds = rnd(f32(f32(p * up) * scale), dtype)
                zero.append(ds == 0)
            z = np.array(zero)
            mz += int(z.sum())
            only_m += int((z & (W[h, i, : i + 1] != 0)).sum())
            if i == n - 1:
                fb = next((d for d in range(n) if z[n - 1 - d]), None)
                rz, only_r = int(z.sum()), int((z & (W[h, i, : i + 1] != 0)).sum())
        out.append((fb, rz, mz, only_r, only_m))
    return out


def case(binary, dtype, n, slopes, std, j, block):
    spec = "sdpa-efficient,block=%d" % block
    args = ["--pipeline", spec, "--dtype", dtype, "--ctx", str(n), "--slopes", slopes]
    if std:
        args += ["--logit-std", str(std), "--seed", "3"]
    heads = len(slopes.split(":")[1].split(","))
    X, W = dump_rows(binary, args, heads, n)
    rep = json.loads(subprocess.run([binary, "simulate", "--backward", "--upstream", "2^%d" % j, "--format",
                                     "json"] + args, check=True, capture_output=True, text=True).stdout)
    if rep["backward_kind"] != "memeff":
        print("backward_kind %r, not memeff" % rep["backward_kind"])
        return False, 0
    got = [(r["first_blind"], r["row_zeros"], r["matrix_zeros"], r["gradient_only_row"],
            r["gradient_only_matrix"]) for r in rep["backward"]]
    want = expected(X, W, dtype, j, block, 64)
    ok = got == want
    if not std:   # zero logits: the zero-logit predictor (--predict) must give the same counts
        prep = json.loads(subprocess.run([binary, "simulate", "--backward", "--predict", "--upstream", "2^%d" % j,
                                          "--format", "json"] + args, check=True, capture_output=True,
                                         text=True).stdout)
        pgot = [(r["first_blind"], r["row_zeros"], r["matrix_zeros"], r["gradient_only_row"],
                 r["gradient_only_matrix"]) for r in prep["backward"]]
        if pgot != want:
            print("  predictor %s" % (pgot,))
        ok = ok and pgot == want
    print("memeff %-4s N=%d %s std=%s 2^%d block=%d: %s%s" % (dtype, n, slopes, std, j, block,
                                                            "agree" if ok else "DIFFER",
                                                            "" if ok else "\n  mpmath %s\n  tool   %s" % (want, got)))
    return ok, sum(w[2] for w in want)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    cases = [("bf16", 80, "slopes:4,1.5", 0, 0, 16), ("bf16", 80, "slopes:4,1.5", 0, -8, 64),
             ("fp16", 80, "slopes:1,0.5", 0, 0, 16), ("fp16", 80, "slopes:1,0.5", 0, 16, 32),
             ("fp16", 64, "slopes:0.5", 4, -4, 16), ("bf16", 64, "slopes:2", 4, 0, 16)]
    fails = zeros = 0
    for c in cases:
        ok, z = case(binary, *c)
        fails += not ok
        zeros += z
    print("%d cases, %d differ; %d zero dS expected (mpmath)" % (len(cases), fails, zeros))
    if zeros == 0:
        print("no zero dS in any case: the test would not test anything")
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
