#!/usr/bin/env python3
"""Independent check of the flex-alibi preset (PyTorch FlexAttention with attention-gym's ALiBi score_mod).

Recomputes, without the tool, what the FlexAttention Triton forward does (docs/pipelines.md section 3f),
in numpy float32 (IEEE +, -, *, / correctly rounded):
  slope  = exp2(-((h + 1) * 8.0 / H)) in fp32: the exponent RN32(8(h+1) / H), its power of two by mpmath at
           60 digits, rounded once to fp32;
  bias   = (kv_idx - q_idx) * slope: the int32 distance times the fp32 slope (fp32 product);
  x      = score + bias (fp32), y = x * fp32(1.44269504);
  order  = the 128-key block holding the diagonal first, then blocks from key 0, in sub-blocks of 64 keys,
           running max m over the sub-blocks processed so far (this one included);
  P      = exp2(fp32(y - m)), 0 when y - m < -126 (ex2.approx.ftz), rounded into the output dtype: zero
           iff P <= half the dtype's smallest subnormal.
Then runs `simulate --pipeline flex-alibi` (zero logits and captured scores written here as .npy) and
compares every head's slope, first blind distance, last-row zeros and matrix zeros.

Usage: flex_check.py ALIBI_BLIND          (CTest; exit 77 without numpy or mpmath)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import mpmath
except ImportError:
    print("numpy or mpmath not installed: skipped")
    sys.exit(77)

mpmath.mp.dps = 60
SPARSE = 128
ZERO_AT = {"bf16": 2.0 ** -134, "fp16": 2.0 ** -25}
RCP_LN2 = np.float32(1.44269504)


def rn32_exp2(e):
    """RN32(2^e) for an fp32 e, from a 60-digit value (no fp32 midpoint is that close)."""
    v = mpmath.power(2, mpmath.mpf(float(e)))
    f = np.float32(float(v))
    # float(v) is within 2^-53 relative of v; the fp32 rounding of it is v's unless v sits at a midpoint
    lo, hi = np.nextafter(f, np.float32(0)), np.nextafter(f, np.float32(np.inf))
    assert abs(v - mpmath.mpf(float(f))) <= min(abs(v - mpmath.mpf(float(lo))), abs(v - mpmath.mpf(float(hi))))
    return f


def flex_slope(h, H):
    e = np.float32(np.float32(8.0 * (h + 1)) / np.float32(H))
    return rn32_exp2(-e)


def exp2_ftz(d):
    """the kernel's exp2 of fp32 differences d (array): 0 below -126, else RN32(2^d)"""
    out = np.exp2(d.astype(np.float64)).astype(np.float32)
    out[d < np.float32(-126.0)] = np.float32(0.0)
    return out


def row_zeros(y, i, zero_at, block=64):
    """zero flags of row i (keys 0..i) for fp32 y[0..i] in the kernel's block order"""
    ps = i - i % SPARSE
    order = [(lo, min(lo + block - 1, i)) for lo in range(ps, i + 1, block)]
    order += [(lo, lo + block - 1) for lo in range(0, ps, block)]
    m = np.float32(-np.inf)
    zero = np.zeros(i + 1, dtype=bool)
    for lo, hi in order:
        m = max(m, y[lo:hi + 1].max())
        p = exp2_ftz((y[lo:hi + 1] - m).astype(np.float32))
        zero[lo:hi + 1] = p.astype(np.float64) <= zero_at
    return zero


def independent(scores, H, N, dtype):
    """per head (slope, first blind or None, last-row zeros, matrix zeros); scores[h] N x N or None"""
    out = []
    for h in range(H):
        s = flex_slope(h, H)
        bias = -(np.arange(N, dtype=np.float32) * s)          # fp32 product, by distance d
        matrix, first, last = 0, None, 0
        for i in range(N):
            b = bias[i - np.arange(i + 1)]
            sc = scores[h][i, :i + 1] if scores is not None else np.zeros(i + 1, dtype=np.float32)
            y = ((sc + b).astype(np.float32) * RCP_LN2).astype(np.float32)
            z = row_zeros(y, i, ZERO_AT[dtype])
            matrix += int(z.sum())
            if i == N - 1:
                last = int(z.sum())
                d = i - np.nonzero(z)[0]
                first = int(d.min()) if len(d) else None
        out.append((float(s), first, last, matrix))
    return out


def run_tool(tool, H, N, dtype, npy):
    args = [tool, "simulate", "--heads", str(H), "--ctx", str(N), "--dtype", dtype, "--pipeline", "flex-alibi",
            "--format", "json"]
    if npy:
        args += ["--logits", npy]
    return json.loads(subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout)


def check(tool, H, N, dtype, std, seed, tmp):
    scores, npy = None, None
    if std:
        rng = np.random.default_rng(seed)
        scores = (rng.standard_normal((H, N, N)) * std).astype(np.float32)
        npy = os.path.join(tmp, "scores.npy")
        np.save(npy, scores)
    got = run_tool(tool, H, N, dtype, npy)
    want = independent(scores, H, N, dtype)
    bad = 0
    for h, w in enumerate(want):
        g = got["heads"][h]
        gv = (float(np.float32(g["slope"])), g["first_blind"], g["row_zeros"], g["matrix_zeros"])
        if gv != w:
            bad += 1
            print("H=%d N=%d %s std=%s head %d: tool %s, independent %s" % (H, N, dtype, std, h + 1, gv, w))
    zeros = sum(w[3] for w in want)
    print("H=%d N=%d %s std=%s: %d heads, %d matrix zeros, %d differ" % (H, N, dtype, std, H, zeros, bad))
    return bad


# (H, N, dtype, logit std (0: zero logits), seed): powers of two and not (12, 24: not Press's slopes),
# contexts across the 128-key partial block, bf16 (exp2's flush decides) and fp16 (the P rounding decides)
CASES = [(16, 300, "bf16", 0, 0), (64, 260, "bf16", 0, 0), (12, 200, "bf16", 0, 0), (24, 140, "fp16", 0, 0),
         (16, 200, "bf16", 3.0, 1), (12, 160, "fp16", 2.0, 2)]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for H, N, dtype, std, seed in CASES:
            bad += check(sys.argv[1], H, N, dtype, std, seed, tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
