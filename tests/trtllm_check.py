#!/usr/bin/env python3
"""Independent check of trtllm-context, TensorRT-LLM's context FMHA (fmha_v2 flash attention, Ampere/Ada),
modelled from source, not measured (docs/pipelines.md §3c). Every row of the prompt (or the last R rows) is
recomputed here from the kernel's source as docs/pipelines.md describes it, with numpy binary32 and float16
arithmetic, mpmath for 2^y and exact rationals for the roundings (the helpers of engines_check.py), then
compared, head by head, with the slope, the first blind distance and the last-row and matrix zero counts that
`alibi-blind simulate --format json` reports (weight = influence for this kernel); for zero logits and for
captured scores (an .npy of Gaussian scores through --logits).

    m     = exp2f((h + 1) * 2 * (-4 / h_pow2))            h < h_pow2 (get_alibi_head_scaling_factor)
            exp2f((2 (h - h_pow2) + 1) * (-4 / h_pow2))   otherwise; h_pow2 = the power of two <= H
            (the exponent is exact in fp32; exp2f taken as correctly rounded)
    x_j   = RN32(m j)                                     (fma(m, j, 0): apply_mask_alibi's absolute bias)
    tiles of B keys from key 0; M the running max; per later tile alpha = __expf(RN32(M_old - M))
    P_j   = __expf(RN32(x_j - M)) rounded into the model dtype (softmax.pack)
    sum   = RN32(sum * alpha + l) (fma), l the sequential fp32 sum of the tile's (unrounded) P
    acc_j = fp16 accumulator: f16(acc_j * f16(alpha)) (hmul2);  fp32: ftz(RN32(acc_j * alpha))
    w_j   = fp16: f16(acc_j * f16(beta));  fp32: ftz(RN32(acc_j * beta)),  beta = ftz(RN32(1 / sum))

Usage: trtllm_check.py ALIBI_BLIND   (exit 77 without numpy or mpmath: Skipped)
"""
import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

try:
    import mpmath
    import numpy as np
except ImportError:
    print("numpy and mpmath are needed")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engines_check import expf_cached, rn  # noqa: E402  (binary32 __expf from mpmath, exact rounding)

F16 = np.float16
F32 = np.float32


def slope(h, H):
    hp = 1
    while hp * 2 <= H:
        hp *= 2
    neg4 = Fraction(-4, hp)
    e = (h + 1) * 2 * neg4 if h < hp else (2 * (h - hp) + 1) * neg4
    v = mpmath.power(2, mpmath.mpf(e.numerator) / e.denominator)
    man, ex = mpmath.mpf(v).man_exp
    return F32(float(rn(Fraction(int(man)) * Fraction(2) ** int(ex), 24, -126)))


def ftz32(a):
    a = np.asarray(a, dtype=F32)
    return np.where(np.abs(a) < F32(2.0 ** -126), F32(0), a).astype(F32)


def to_dtype(p, dtype):
    return float(F16(p)) if dtype == "fp16" else float(rn(Fraction(float(p)), 8, -126))


def row(x, i, dtype, half, B):
    """The coefficients of row i (keys 0..i): a float16 or float32 array."""
    acc = np.zeros(i + 1, dtype=F16 if half else F32)
    M, L = None, None
    for t0 in range(0, i + 1, B):
        hi = min(t0 + B - 1, i)
        mt = F32(np.max(x[t0:hi + 1]))
        if M is not None:
            mt = max(M, mt)
            alpha = expf_cached(F32(M) - F32(mt))
            if half:
                acc[:t0] = (acc[:t0] * F16(alpha)).astype(F16)
            else:
                acc[:t0] = ftz32(acc[:t0] * alpha)
        l = F32(0)
        for j in range(t0, hi + 1):
            p = expf_cached(F32(x[j]) - F32(mt))
            l = F32(l + p)
            acc[j] = to_dtype(p, dtype)
        if M is None:
            L = l
        else:
            L = F32(float(rn(Fraction(float(L)) * Fraction(float(alpha)) + Fraction(float(l)), 24, -126)))
        M = mt
    beta = F32(1) / L
    beta = F32(0) if abs(beta) < 2.0 ** -126 else beta
    if half:
        return (acc * F16(beta)).astype(F16)
    return ftz32(acc * beta)


def check(binary, H, n, dtype, extra):
    spec = "trtllm-context" + extra
    fields = dict(kv.split("=") for kv in extra.split(",")[1:])
    B = int(fields.get("block", 128))
    R = int(fields.get("rows", 0))
    half = dtype == "fp16" and fields.get("pv-accumulate", "fp16") == "fp16"
    out = subprocess.run([binary, "simulate", "--heads", str(H), "--ctx", str(n), "--pipeline", spec, "--dtype",
                          dtype, "--format", "json"], capture_output=True, text=True, check=True)
    heads = json.loads(out.stdout)["heads"]
    fails = 0
    for k, h in enumerate(heads):
        m = slope(k, H)
        x = (np.arange(n, dtype=np.float64) * float(m)).astype(F32)   # m j: <= 36 bits, exact, rounded once
        c = n - R if R else 0
        mz, last = 0, None
        for i in range(c, n):
            z = row(x, i, dtype, half, B) == 0
            mz += int(z.sum())
            if i == n - 1:
                zd = z[::-1]                      # by distance
                last = (int(np.argmax(zd)) if zd.any() else None, int(z.sum()))
        want = (float(m), last[0], last[1], mz)
        # the JSON prints 9 significant digits: enough to name a binary32 value
        got = (float(F32(h["slope"])), h["first_blind"], h["row_zeros"], h["matrix_zeros"])
        if got != want:
            print(f"{spec} H={H} N={n} {dtype} head {k + 1}: simulate {got}, independent {want}")
            fails += 1
    print(f"{spec} H={H} N={n} {dtype}: {len(heads) - fails} of {len(heads)} heads agree")
    return fails


def check_captured(binary, H, n, dtype, extra, tmpdir):
    """Captured scores (an .npy of N(1000, 3^2) float32 scores): x_ij = RN32(m j + s_ij), s_ij first rounded to
    fp16 and clamped to +-65504 with the fp16 accumulator (Softmax_hmma::unpack)."""
    spec = "trtllm-context" + extra
    half = dtype == "fp16" and "pv-accumulate=fp32" not in extra
    rng = np.random.default_rng(18)
    # around 1000, where fp16 is spaced 0.5: the fp16 accumulator's rounding of the score shows
    scores = (rng.standard_normal((H, n, n)) * 3 + 1000).astype(F32)
    path = os.path.join(tmpdir, f"scores_{H}_{n}.npy")
    np.save(path, scores)
    out = subprocess.run([binary, "simulate", "--heads", str(H), "--ctx", str(n), "--pipeline", spec, "--dtype",
                          dtype, "--logits", path, "--format", "json"], capture_output=True, text=True, check=True)
    heads = json.loads(out.stdout)["heads"]
    fails = 0
    for k, h in enumerate(heads):
        m = Fraction(float(slope(k, H)))
        mz, last = 0, None
        for i in range(n):
            srow = scores[k, i, :i + 1]
            if half:
                srow = np.clip(srow.astype(F16).astype(F32), -65504, 65504)
            x = np.array([float(rn(m * j + Fraction(float(srow[j])), 24, -126)) for j in range(i + 1)], dtype=F32)
            z = row(x, i, dtype, half, 128) == 0
            mz += int(z.sum())
            if i == n - 1:
                zd = z[::-1]
                last = (int(np.argmax(zd)) if zd.any() else None, int(z.sum()))
        want = (last[0], last[1], mz)
        got = (h["first_blind"], h["row_zeros"], h["matrix_zeros"])
        if got != want:
            print(f"{spec} captured H={H} N={n} {dtype} head {k + 1}: simulate {got}, independent {want}")
            fails += 1
    print(f"{spec} captured scores H={H} N={n} {dtype}: {len(heads) - fails} of {len(heads)} heads agree")
    return fails


def main():
    binary = sys.argv[1]
    fails = 0
    for H, n, dtype, extra in ((8, 300, "fp16", ""), (8, 300, "bf16", ""), (12, 400, "fp16", ",block=32"),
                               (4, 700, "fp16", ",pv-accumulate=fp32"), (6, 500, "bf16", ",block=64,rows=7"),
                               (12, 260, "bf16", ",block=16"), (16, 350, "fp16", ",block=64,rows=40")):
        fails += check(binary, H, n, dtype, extra)
    with tempfile.TemporaryDirectory() as tmpdir:
        for dtype, extra in (("fp16", ""), ("bf16", ""), ("fp16", ",pv-accumulate=fp32")):
            fails += check_captured(binary, 3, 160, dtype, extra, tmpdir)
    if fails:
        print(f"{fails} heads differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
