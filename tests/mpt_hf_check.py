#!/usr/bin/env python3
"""Independent check of the mpt-hf goldens for head counts that are not powers of two.

Recomputes, without the tool, what transformers' MptAttention (eager, at 43526201) does with zero
logits in bf16, per head: the slopes of build_mpt_alibi_tensor (tests/unit/mpt_slopes_expected.py,
integers and fractions), the fp32 trailing bias RN32(m * (N-1-j)), the fp32 scores 0 + bias, PyTorch's
CPU softmax on them (x - max in fp32, exp rounded to fp32, the sum rounded once, 1/sum in fp32, times
it in fp32), the cast to bf16 (zero iff p <= 2^-134); and spec section 4's distances (delta paper:
the nearest integer of 87.3365447506/m, halves up; delta ieee: ceil(92.8817221950/m), bf16's ftz and
rn-zero thresholds). Then compares every head row of the golden output with it.

Usage: mpt_hf_check.py CLI_DIR            the goldens of CASES below (CTest; exit 77 without numpy)
       mpt_hf_check.py GOLDEN.out {analyze|predict} H N
numpy float32 arithmetic is IEEE (+, -, *, / correctly rounded); exp is numpy's binary64 exp rounded
to fp32, and the sum math.fsum's correctly rounded binary64 sum rounded to fp32: both double roundings,
so the script stops if an exp lands within reach of an fp32 rounding midpoint, and redoes a sum
that does in fractions.
"""
import math
import os
import sys
from decimal import Decimal, getcontext
from fractions import Fraction

try:
    import numpy as np
except ImportError:
    print("numpy not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "unit"))
from mpt_slopes_expected import rn32, slopes_exact  # noqa: E402

getcontext().prec = 50
FTZ_BF16 = 126 * Decimal(2).ln()            # -ln(2^-126), bf16's smallest normal (spec section 3)
RNZERO_BF16 = 134 * Decimal(2).ln()         # -ln(2^-134), half its smallest subnormal
ZERO_AT = np.float32(2.0 ** -134)          # bf16: p <= 2^-134 rounds to 0 (the tie goes to even 0)


def delta_paper(m):
    q = FTZ_BF16 / m
    assert abs(q - q.to_integral_value() - Decimal("0.5")) > Decimal("1e-30")
    return int((q + Decimal("0.5")).to_integral_value(rounding="ROUND_FLOOR"))


def delta_ieee(m):
    return int((RNZERO_BF16 / m).to_integral_value(rounding="ROUND_CEILING"))


def exp_rn32(y):
    """fp32(exp(y)) for fp32 y, checked away from fp32 rounding midpoints."""
    d = np.exp(y.astype(np.float64))
    f = d.astype(np.float32)
    back = f.astype(np.float64)
    # the binary64 result's distance to the fp32 value, in fp32 ulps of the result: a value near 1/2
    # ulp could round the other way from the exact exp
    ulp = np.spacing(f, dtype=np.float32).astype(np.float64)
    near = np.abs(np.abs(d - back) / ulp - 0.5) < 1e-6
    assert not near.any(), "exp near an fp32 midpoint: check by hand"
    return f


def sum_rn32(e):
    """The exact sum rounded once to fp32: fsum's binary64 sum, unless it lies near an fp32 midpoint,
    where the sum is redone in fractions (a sum of fp32 values can be an exact tie)."""
    s = math.fsum(float(x) for x in e)
    f = np.float32(s)
    frac = abs(s - float(f)) / float(np.spacing(f))
    if abs(frac - 0.5) > 1e-6:
        return f
    return np.float32(float(rn32(sum(Fraction(float(x)) for x in e))))


def head_zeros(m32, N):
    """(first zero distance of the last row or None, zeros of the last row, zeros of the matrix)."""
    t = np.arange(N, dtype=np.float32)
    bias = m32 * t                  # RN32(m * (N-1-j)) indexed by t = N-1-j (sign applied below)
    matrix = 0
    first = None
    last_row = 0
    for i in range(N):
        ti = N - 1 - i
        tj = np.arange(N - 1, ti - 1, -1)          # keys j = 0..i
        y = bias[ti] - bias[tj]                     # (-b_j) - (-b_i): x - max, fp32
        e = exp_rn32(y)
        S = sum_rn32(e)
        r = np.float32(1.0) / S
        p = e * r
        zero = p <= ZERO_AT
        matrix += int(zero.sum())
        if i == N - 1:
            last_row = int(zero.sum())
            d = i - np.nonzero(zero)[0]             # distances of the zero weights
            first = int(d.min()) if len(d) else None
    return first, last_row, matrix


# (golden case, table layout, H, N): the mpt-hf goldens whose head count is not a power of two
CASES = [("analyze_mpt_hf_heads12", "analyze", 12, 2048),
         ("simulate_predict_mpt_hf_heads24", "predict", 24, 2048),   # PhoGPT-4B's 24 heads
         ("simulate_mpt_hf_heads5", "predict", 5, 1024),
         ("simulate_slope_calc_mpt_odd_heads", "predict", 3, 100)]


def main():
    if len(sys.argv) == 2:
        bad = 0
        for name, mode, H, N in CASES:
            bad += check(os.path.join(sys.argv[1], name + ".out"), mode, H, N)
        return 1 if bad else 0
    return 1 if check(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])) else 0


def check(golden, mode, H, N):
    slopes = slopes_exact(H, 8)
    rows = {}
    with open(golden, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if len(w) >= 8 and w[0].isdigit() and w[1].startswith("2^"):
                rows[int(w[0])] = w
    assert len(rows) == H, "%d head rows in %s, expected %d" % (len(rows), golden, H)
    bad = 0
    for h in range(1, H + 1):
        m = slopes[h - 1]
        first, row, matrix = head_zeros(np.float32(float(m)), N)
        exact_m = Decimal(2) ** Decimal(rows[h][1][2:])  # 2^X as printed: the schedule's exact slope
        want = [str(delta_paper(exact_m)), str(delta_ieee(exact_m)),
                "none" if first is None else str(first), str(row), str(matrix)]
        w = rows[h]
        if mode == "analyze":
            got = [w[2], w[3], w[4], w[5], w[7]]
        else:
            got = [w[3], w[4], w[5], w[6], w[7]]
        # the slope's fp32 value against the schedule's: the code's slope rounds near the exact one
        assert abs(Decimal(float(m)) - exact_m) <= exact_m / (1 << 23), "slope order differs"
        if got != want:
            bad += 1
            print("head %d: golden %s, independent %s" % (h, got, want))
    print("%s: %d heads checked, %d differ" % (os.path.basename(golden), H, bad))
    return bad


if __name__ == "__main__":
    sys.exit(main())
