#!/usr/bin/python3
"""simulate --backward on softmax=flash (FlashAttention-2's backward, the flash2 preset; modelled from source,
not measured: docs/pipelines.md §9) against an independent recomputation of the kernel's formulas with numpy
and mpmath, from the layer's logits the emulator dumps (simulate --weights), never from its counts.

The model recomputed here, from github:Dao-AILab/flash-attention at 0251105a (csrc/flash_attn/src/softmax.h,
flash_bwd_kernel.h compute_dq_dk_dv_1colblock; built with --use_fast_math, so every fp32 add, multiply and
fma flushes a subnormal result to 0, and exp2f is ex2.approx.ftz):
  forward, per row i, keys in blocks of B from the diagonal block down: m the running max of the logits x,
  ms = fp32(m c) with c = scale_softmax_log2, e = ex2(fma(x, c, -ms)); each of the row's 4 quad threads
  (columns 8k + 2q, 8k + 2q + 1 of a block) sums its e in fp32, the sums scaled by ex2(fp32(fp32(m_old -
  m_new) c)) when the max grows; sum = (l0 + l2) + (l1 + l3); lse = fma(m, softmax_scale, __logf(sum)),
  __logf(s) = fp32(fp32(log2 s) fp32(ln 2));
  backward: P = ex2(fma(x, c, -fp32(lse fp32(log2 e)))), dS = dtype(ftz(fp32(2^j P))).
Exact roundings: numpy float32 add/multiply (IEEE, correctly rounded) with the flush done here; exp2, log2
and fma at 200 bits with mpmath, rounded to nearest-even here. Per head: the last row's first zero distance
and zero count, the matrix's zero count, and the zeros whose forward weight (the dumped W) is not 0; for zero logits the zero-logit predictor
(simulate --backward --predict) too.
design --keep gradient on flash2: every designed head's slope must keep every dS of the N x N matrix non-zero
by the same recomputation, and the next binary32 slope above the steepest one must lose one.
Two mutants must each disagree with the tool somewhere: dS without the flush of the fp32 product
("noftz"), and dS multiplied by the softmax scale before the rounding as the memory-efficient kernel does
("scaled"; FlashAttention-2 scales acc_dq and acc_dk after the GEMMs instead).

usage: flash_backward_check.py ALIBI_BLIND.  Exit 0 all agree, 1 otherwise, 77 without numpy/mpmath.
"""
import json
import os
import subprocess
import sys

try:
    import mpmath
    import numpy as np
except ImportError:
    print("flash_backward_check: numpy or mpmath missing; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch"))
from alibi_reference import dump_rows   # noqa: E402 (the simulate --weights dump the validators share)

mpmath.mp.prec = 200
FMT = {"bf16": (8, -126), "fp16": (11, -14), "fp32": (24, -126)}   # precision p, emin
F32 = np.float32
MIN_NORMAL = 2.0 ** -126


def rnd(x, fmt):
    """x (mpf or float) rounded to nearest-even in a binary format with subnormals, as a Python float."""
    p, emin = FMT[fmt]
    x = mpmath.mpf(x)
    if x == 0:
        return 0.0
    if mpmath.isinf(x):
        return float(x)
    sign = -1 if x < 0 else 1
    a = abs(x)
    m, e = mpmath.frexp(a)            # a = m 2^e, 0.5 <= m < 1: exact
    q = mpmath.ldexp(1, max(e - 1, emin) - (p - 1))   # the spacing at a
    n = a / q
    f = int(mpmath.floor(n))
    r = n - f
    if r > 0.5 or (r == 0.5 and f % 2 == 1):
        f += 1
    return float(sign * f * q)


def ftz(v):
    return 0.0 if abs(v) < MIN_NORMAL else float(v)


def fadd(a, b):
    return ftz(float(F32(a) + F32(b)))


def fmul(a, b):
    return ftz(float(F32(a) * F32(b)))


def fma(a, b, c):
    return ftz(rnd(mpmath.mpf(a) * mpmath.mpf(b) + mpmath.mpf(c), "fp32"))


def ex2(y):
    """ex2.approx.ftz.f32 taken correctly rounded, then flushed."""
    if y == -np.inf:
        return 0.0
    return ftz(rnd(mpmath.power(2, mpmath.mpf(y)), "fp32"))


LN2 = rnd(mpmath.log(2), "fp32")
LOG2E = rnd(1 / mpmath.log(2), "fp32")     # float(M_LOG2E)


def logf(s):
    """__logf: lg2.approx.ftz (taken correctly rounded) times fp32(ln 2)."""
    if s < MIN_NORMAL:
        return -np.inf
    return fmul(rnd(mpmath.log(mpmath.mpf(s), 2), "fp32"), LN2)


def lse_of(x, B, c, scale):
    i = len(x) - 1
    run, lane = -np.inf, [0.0] * 4
    for top in range(i // B, -1, -1):
        lo, hi = top * B, min(top * B + B - 1, i)
        mb = max([run] + [float(v) for v in x[lo:hi + 1]])
        if run != -np.inf and mb != run:
            sc = ex2(fmul(fadd(run, -mb), c))
            lane = [fmul(v, sc) for v in lane]
        run = mb
        ms = rnd(mpmath.mpf(mb) * mpmath.mpf(c), "fp32")
        for j in range(lo, hi + 1):
            q = ((j - lo) % 8) // 2
            lane[q] = fadd(lane[q], ex2(fma(float(x[j]), c, -ms)))
    s = fadd(fadd(lane[0], lane[2]), fadd(lane[1], lane[3]))
    return np.inf if s == 0 else fma(run, scale, logf(s))


def expected(X, W, dtype, j, B, head_dim, mutant=None):
    heads, n, _ = X.shape
    scale = float(F32(head_dim ** -0.5))                       # Python's float, passed as fp32
    c = float(F32(scale * 1.4426950408889634))                  # params.scale_softmax_log2
    up = 2.0 ** j
    out = []
    for h in range(heads):
        mz = only_m = 0
        for i in range(n):
            x = X[h, i, : i + 1]
            lse2 = fmul(lse_of(x, B, c, scale), LOG2E)
            zero = []
            for k in range(i + 1):
                p = ex2(fma(float(x[k]), c, -lse2))
                g = float(F32(p * up)) if mutant == "noftz" else ftz(float(F32(p * up)))
                if mutant == "scaled":
                    g = fmul(g, scale)
                zero.append(rnd(g, dtype) == 0)
            z = np.array(zero)
            w = W[h, i, : i + 1] != 0
            mz += int(z.sum())
            only_m += int((z & w).sum())
            if i == n - 1:
                fb = next((d for d in range(n) if z[n - 1 - d]), None)
                rz, only_r = int(z.sum()), int((z & w).sum())
        out.append((fb, rz, mz, only_r, only_m))
    return out


def case(binary, dtype, n, slopes, std, j, block, head_dim):
    spec = "flash2,block=%d,head-dim=%d" % (block, head_dim)
    args = ["--pipeline", spec, "--dtype", dtype, "--ctx", str(n), "--slopes", slopes]
    if std:
        args += ["--logit-std", str(std), "--seed", "5"]
    heads = len(slopes.split(":")[1].split(","))
    X, W = dump_rows(binary, args, heads, n)
    rep = json.loads(subprocess.run([binary, "simulate", "--backward", "--upstream", "2^%d" % j, "--format",
                                     "json"] + args, check=True, capture_output=True, text=True).stdout)
    if rep["backward_kind"] != "flash":
        print("backward_kind %r, not flash" % rep["backward_kind"])
        return False, 0, False
    got = [(r["first_blind"], r["row_zeros"], r["matrix_zeros"], r["gradient_only_row"],
            r["gradient_only_matrix"]) for r in rep["backward"]]
    want = expected(X, W, dtype, j, block, head_dim)
    ok = got == want
    print("flash %-4s N=%d %s std=%s 2^%d block=%d d=%d: %s%s" % (
        dtype, n, slopes, std, j, block, head_dim, "agree" if ok else "DIFFER",
        "" if ok else "\n  mpmath %s\n  tool   %s" % (want, got)))
    if not std:   # zero logits: the predictor (--predict) must give the same first zero and counts
        prep = json.loads(subprocess.run([binary, "simulate", "--backward", "--predict", "--upstream", "2^%d" % j,
                                          "--format", "json"] + args, check=True, capture_output=True,
                                         text=True).stdout)
        pgot = [(r["first_blind"], r["row_zeros"], r["matrix_zeros"]) for r in prep["backward"]]
        pok = pgot == [w[:3] for w in want]
        print("  --predict: %s%s" % ("agree" if pok else "DIFFER", "" if pok else " %s" % pgot))
        ok = ok and pok
    mutants = [m for m in ("noftz", "scaled") if expected(X, W, dtype, j, block, head_dim, m) != got]
    return ok, sum(w[2] for w in want), mutants


def design_case(binary, dtype, n, heads, j, block, head_dim):
    """design --keep gradient: the designed slopes keep every dS, the next binary32 above the steepest does not."""
    spec = "flash2,block=%d,head-dim=%d" % (block, head_dim)
    out = subprocess.run([binary, "design", "--keep", "gradient", "--pipeline", spec, "--dtype", dtype, "--ctx",
                          str(n), "--heads", str(heads), "--upstream", "2^%d" % j, "--format", "slopes"],
                         check=True, capture_output=True, text=True).stdout.strip()
    slopes = [F32(float(t)) for t in out.split(":", 1)[1].split(",")]
    beyond = np.nextafter(max(slopes), F32(np.inf), dtype=F32)
    tried = slopes + [beyond]
    text = "slopes:" + ",".join(repr(float(m)) for m in tried)
    X, W = dump_rows(binary, ["--pipeline", spec, "--dtype", dtype, "--ctx", str(n), "--slopes", text],
                     len(tried), n)
    want = expected(X, W, dtype, j, block, head_dim)
    kept = all(w[2] == 0 for w in want[:-1])
    lost = want[-1][2] > 0
    print("design flash %-4s N=%d H=%d 2^%d: designed %s keep every dS: %s; next slope %r loses %d" % (
        dtype, n, heads, j, [float(m) for m in slopes], "yes" if kept else "NO", float(beyond), want[-1][2]))
    return kept and lost


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    # (dtype, N, slopes, logit std, log2 upstream, block, head dim)
    cases = [("fp16", 72, "slopes:1,0.25", 0, 0, 16, 128), ("fp16", 72, "slopes:1,0.25", 0, 16, 32, 128),
             ("fp16", 64, "slopes:0.5", 3, -10, 16, 64), ("bf16", 72, "slopes:8,2", 0, 0, 16, 128),
             ("bf16", 72, "slopes:8,2", 0, -10, 64, 128), ("bf16", 64, "slopes:4", 3, 16, 16, 80),
             ("fp16", 96, "slopes:2,0.5,0.125,0.03125", 2, 0, 64, 128)]
    fails = zeros = 0
    killed = set()
    for c in cases:
        ok, z, mutants = case(binary, *c)
        fails += not ok
        zeros += z
        killed.update(mutants)
    for c in [("fp16", 80, 2, 0, 16, 128), ("bf16", 72, 3, -10, 64, 128)]:
        fails += not design_case(binary, *c)
    print("%d cases, %d differ; %d zero dS expected (mpmath); mutants caught: %s" % (
        len(cases), fails, zeros, ", ".join(sorted(killed)) or "none"))
    if zeros == 0:
        print("no zero dS in any case: the test would not test anything")
        return 1
    for m in ("noftz", "scaled"):
        if m not in killed:
            print("the mutant %s agrees everywhere: the cases do not test it" % m)
            return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
