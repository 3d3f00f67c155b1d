#!/usr/bin/env python3
"""Independent check of the decode-kernel models vllm-paged and trtllm-decode (docs/pipelines.md §3c):
the last row of each head recomputed here from the kernels' source as docs/pipelines.md describes it,
with numpy binary32/float16 arithmetic, mpmath for 2^y, exact rationals for the roundings, and the
flush to zero of -use_fast_math written out; then compared, head by head, with the first blind distance
and the last-row zero count that `alibi-blind simulate --format json` reports.

    x_j   = -m d                       (m = 2^-k for the press slopes of 8 heads: exact in fp32, fp16, bf16)
    e_j   = __expf(x_j) = ftz(RN32(2^ftz(RN32(x_j * fp32(log2 e)))))
    S     = per-thread fp32 sums of keys t, t + T, ... (T threads), an xor butterfly in each warp of 32,
            then over the warps' sums (block_sum)
    inv   = __fdividef(1, S + 1e-6f) = ftz(RN32(1 / RN32(S + 1e-6f)))
    P_j   = model-dtype(ftz(RN32(e_j * inv)))          a weight is zero when P_j is
T = 128 (vLLM paged attention V1); TensorRT-LLM: 64 below 32 steps, 128 below 2048, else 256.

llamacpp-cuda (llama.cpp soft_max_f32, flash attention off), every row i of the prompt, all n keys in the
row (the causal part masked: e = 0):
    x_d   = RN32(-m d)                 (fma(slope, F32 mask -d, 0); m from ggml's powf: m0^(h+1), m1^(2(h-n2)+1))
    e_d   = __expf(x_d - 0)            (the row max is the diagonal's 0)
    S     = per-thread fp32 sums, T = min(1024, pow2 >= n) threads, warp butterfly, then over the warps
    inv   = 1.0f / S = ftz(RN32(1 / S)) (rcp.approx.ftz under -use_fast_math)
    w_d   = ftz(RN32(e_d * inv))       a weight is zero when w_d is; no influence when fp16(w_d) is 0
                                       (P converted to fp16 for cuBLAS's fp16 GEMM)
compared with the matrix and last-row counts of both weight and influence.

vllm-triton (vLLM's Triton unified attention, 2-D kernel), row i of a chunk of the last R queries
(context_len c = N - R), tiles of 32 keys from key 0:
    x_j   = RN32(m (j - c))            (fma(slope, j - c, 0); m = 2^-8k/H for H = 2, 4, 8: exact)
    m_t   = max(M, max x over the tile); P_j = __expf(RN32(x_j - m_t)); alpha = __expf(RN32(M - m_t))
    acc_j = RN32(acc_j * alpha) for the keys of earlier tiles (IEEE: subnormals kept), then dtype(P_j)
    L     = RN32(L alpha + l) (fma), l the fp32 sum of the tile's P; w_j = RN32(acc_j / L)
compared with the matrix and last-row zero counts (weight = influence).

vllm-flash with several KV splits (vLLM's FlashAttention-2 fork, flash_fwd_splitkv_kernel and
flash_fwd_splitkv_combine_kernel, head dim 128: kBlockN 128; docs/pipelines.md §3c), row i of the last R:
    x_j   = RN32(f j), f = fp32(m / fp32(128^-0.5))        (alibi_slope / scale_softmax times the column)
    split s: blocks [s nbps, (s+1) nbps), nbps = ceil(ceil(N/128) / S), from its last block down; per
            block: M = max, e_j = 2^RN32(x_j c - RN32(M c)) (0 below -126), c = fp32(scale log2 e);
            lanes q = (col mod 8) / 2 sum e in fp32; sum = (l0 + l2) + (l1 + l3); P_j = dtype(e_j)
    O_j   = ftz(RN32(P_j rcp(sum))), lse_s = RN32(M scale + __logf(sum)), __logf = RN32(lg2 * fp32(ln 2))
    combine: lse_max, lse_sum = butterfly of __expf(lse_s - lse_max) over the kMaxSplits lanes (several
            splits per lane above 32), lse_logsum = RN32(__logf(lse_sum) + lse_max),
            w_j = dtype(ftz(RN32(__expf(lse_s - lse_logsum) O_j)))
S from num_splits_heuristic (flash_api.cpp, rewritten here) for 2 * 132 SMs at rows=1, or as given.

vllm-triton decode (rows=1) through the 3-D kernel (kernel_unified_attention_3d + reduce_segments, vLLM's
unified_attention for max_seqlen_q = 1 and at most 128 query blocks x KV heads): S segments (16, or given)
of tps = cdiv(N, 16 S) tiles of 16 keys, each segment the 2-D recurrence above with its own M_s, L_s and an
unnormalised acc; the reduce over the cdiv(N, 16 tps) segments that ran: e_s = __expf(RN32(M_s - max M)),
sum = sequential fp32 sum of RN32(L_s e_s), w_j = RN32(RN32(acc_j e_s) / sum).

Usage: engines_check.py ALIBI_BLIND   (exit 77 without numpy or mpmath: Skipped)
"""
import json
import subprocess
import sys
from fractions import Fraction

try:
    import mpmath
    import numpy as np
except ImportError:
    print("numpy and mpmath are needed")
    sys.exit(77)

mpmath.mp.prec = 120
TINY = Fraction(1, 2 ** 126)


def rn(x, p, emin):
    if x == 0:
        return Fraction(0)
    s = -1 if x < 0 else 1
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    qe = max(e - p + 1, emin - p + 1)
    sc = a / Fraction(2) ** qe
    q, r = divmod(sc.numerator, sc.denominator)
    if 2 * r > sc.denominator or (2 * r == sc.denominator and q % 2 == 1):
        q += 1
    return s * Fraction(q) * Fraction(2) ** qe


def ftz(v):
    return Fraction(0) if abs(v) < TINY else v


def f32(v):
    return np.float32(float(v))


L2E = np.float32(1.4426950408889634)


def expf(x):
    y = ftz(Fraction(float(np.float32(x) * L2E)))
    if y < -160:
        return Fraction(0)
    m = mpmath.power(2, mpmath.mpf(y.numerator) / y.denominator)
    man, ex = mpmath.mpf(m).man_exp
    return ftz(rn(Fraction(int(man)) * Fraction(2) ** int(ex), 24, -126))


def butterfly(v):
    v = list(v)
    m = len(v) // 2
    while m >= 1:
        v = [np.float32(v[l]) + np.float32(v[l ^ m]) for l in range(len(v))]
        m //= 2
    return v[0]


def last_row(n, m, threads, dtype):
    e = [expf(-m * d) for d in range(n)]           # key j = n - 1 - d
    ts = [np.float32(0)] * threads
    for j in range(n):
        t = j % threads
        ts[t] = np.float32(ts[t]) + f32(e[n - 1 - j])
    W = threads // 32
    red = [butterfly(ts[w * 32:(w + 1) * 32]) for w in range(W)]
    S = butterfly(red) if W > 1 else red[0]
    S1 = np.float32(S) + np.float32(1e-6)
    inv = ftz(rn(1 / Fraction(float(S1)), 24, -126))
    zeros, first = 0, None
    for d in range(n):
        p = ftz(rn(e[d] * inv, 24, -126))
        P = rn(p, 11, -14) if dtype == "fp16" else rn(p, 8, -126)
        if P == 0:
            zeros += 1
            if first is None:
                first = d
    return first, zeros


def ggml_slopes(H):
    """ggml's ALiBi slopes (max_bias 8): powf modelled as correctly rounded, here with exact rationals."""
    n2 = 1 << (H.bit_length() - 1)
    def powf_2(y):
        m = mpmath.power(2, mpmath.mpf(y.numerator) / y.denominator)
        man, ex = mpmath.mpf(m).man_exp
        return rn(Fraction(int(man)) * Fraction(2) ** int(ex), 24, -126)
    m0, m1 = powf_2(Fraction(-8, n2)), powf_2(Fraction(-4, n2))
    return [rn(m0 ** (h + 1), 24, -126) if h < n2 else rn(m1 ** (2 * (h - n2) + 1), 24, -126) for h in range(H)]


def ftz32(v):
    v = np.asarray(v, dtype=np.float32)
    return np.where(np.abs(v) < np.float32(2.0 ** -126), np.float32(0), v).astype(np.float32)


def xor_butterfly(v):
    """warp_reduce_sum on each row of v (lanes on the last axis): v[l] += v[l ^ mask], mask 16 .. 1."""
    v = np.array(v, dtype=np.float32)
    idx = np.arange(v.shape[-1])
    m = v.shape[-1] // 2
    while m >= 1:
        v = ftz32(v + v[..., idx ^ m])
        m //= 2
    return v[..., 0]


def ggml_cuda_head(n, m):
    """(first blind, row zeros, matrix zeros, first no-influence, row no-influence, matrix no-influence)."""
    e = np.array([float(expf(np.float32(float(m) * d) * np.float32(-1))) for d in range(n)], dtype=np.float32)
    T = 32
    while T < n and T < 1024:
        T *= 2
    mz = mi = 0
    last = None
    for i in range(n):
        row = np.zeros(((n + T - 1) // T) * T, dtype=np.float32)
        row[:i + 1] = e[i::-1]                   # key j holds e_{i - j}; keys after i are masked (0)
        acc = np.zeros(T, dtype=np.float32)
        for c in range(0, len(row), T):          # thread t adds keys t, t + T, ... in order
            acc = ftz32(acc + row[c:c + T])
        sums = xor_butterfly(acc.reshape(T // 32, 32))           # each warp's sum
        # block: lanes < T/32 take the warps' sums, the others 0, and one more warp_reduce_sum
        S = xor_butterfly(np.concatenate([sums, np.zeros(32 - len(sums), dtype=np.float32)])) if T > 32 else sums[0]
        inv = np.float32(float(ftz(rn(1 / Fraction(float(S)), 24, -126))))
        w = ftz32((e[:i + 1].astype(np.float64) * float(inv)).astype(np.float32))   # by distance d
        wz = w == 0
        iz = w.astype(np.float16) == 0
        mz += int(wz.sum())
        mi += int(iz.sum())
        if i == n - 1:
            fw = int(np.argmax(wz)) if wz.any() else None
            fi = int(np.argmax(iz)) if iz.any() else None
            last = (fw, int(wz.sum()), fi, int(iz.sum()))
    return last[0], last[1], mz, last[2], last[3], mi


def check_llamacpp_cuda(binary):
    fails = 0
    for H, n in ((8, 700), (12, 1300), (2, 2100)):
        out = subprocess.run([binary, "simulate", "--heads", str(H), "--ctx", str(n), "--pipeline", "llamacpp-cuda",
                              "--format", "json"], capture_output=True, text=True, check=True)
        heads = json.loads(out.stdout)["heads"]
        for k, (h, m) in enumerate(zip(heads, ggml_slopes(H)), start=1):
            fw, rz, mz, fi, ri, mi = ggml_cuda_head(n, m)
            got = (h["first_blind"], h["row_zeros"], h["matrix_zeros"], h["first_influence_zero"],
                   h["row_influence_zeros"], h["matrix_influence_zeros"])
            if got != (fw, rz, mz, fi, ri, mi):
                print(f"llamacpp-cuda H={H} N={n} head {k}: simulate {got}, independent {(fw, rz, mz, fi, ri, mi)}")
                fails += 1
    return fails


def to_dtype(v, dtype):
    return float(np.float16(v)) if dtype == "fp16" else float(rn(Fraction(float(v)), 8, -126))


_EXP_CACHE = {}


def expf_cached(d):
    """__expf of the fp32 difference d (memoised: the rows repeat the same differences)."""
    key = float(d)
    if key not in _EXP_CACHE:
        _EXP_CACHE[key] = np.float32(float(expf(np.float32(d))))
    return _EXP_CACHE[key]


def triton_tiles(x, acc, k0, k1, dtype, tile):
    """kernel_unified_attention_2d's loop over the key tiles k0..k1 (the 3-D kernel's over one segment): the
    running max M and sum L, acc[k0..k1] each key's unnormalised coefficient (float32). Returns (M, L)."""
    M, L = -np.inf, np.float32(1.0)
    for t0 in range(k0, k1 + 1, tile):
        hi = min(t0 + tile - 1, k1)
        mt = max(M, float(np.max(x[t0:hi + 1])))
        alpha = np.float32(0.0) if M == -np.inf else expf_cached(np.float32(M) - np.float32(mt))
        acc[k0:t0] = acc[k0:t0] * alpha
        l = np.float32(0.0)
        for j in range(t0, hi + 1):
            p = expf_cached(np.float32(x[j]) - np.float32(mt))
            l = np.float32(l + p)
            acc[j] = np.float32(to_dtype(p, dtype))
        L = np.float32(float(rn(Fraction(float(L)) * Fraction(float(alpha)) + Fraction(float(l)), 24, -126)))
        M = mt
    return M, L


def triton_row(x, i, dtype, tile=32):
    """The coefficients of row i (keys 0..i) as float32, from the logits x (float32)."""
    acc = np.zeros(i + 1, dtype=np.float32)
    _, L = triton_tiles(x, acc, 0, i, dtype, tile)
    return acc / L


def check_vllm_triton(binary):
    fails = 0
    for H, n, dtype, R in ((8, 300, "fp16", 0), (4, 400, "bf16", 0), (2, 1500, "fp16", 1), (8, 300, "bf16", 5)):
        # rows=1 pinned to the 2-D kernel (splits=1): the 3-D decode kernel is check_vllm_triton3d's
        spec = "vllm-triton" + (f",rows={R}" if R else "") + (",splits=1" if R == 1 else "")
        out = subprocess.run([binary, "simulate", "--heads", str(H), "--ctx", str(n), "--pipeline", spec,
                              "--dtype", dtype, "--format", "json"], capture_output=True, text=True, check=True)
        heads = json.loads(out.stdout)["heads"]
        c = n - (R if R else n)
        for k, h in enumerate(heads, start=1):
            m = 2.0 ** (-8 * k / H)
            x = np.array([np.float32(m * (j - c)) for j in range(n)], dtype=np.float32)
            mz, last = 0, None
            for i in range(c, n):
                w = triton_row(x, i, dtype)
                z = w == 0
                mz += int(z.sum())
                if i == n - 1:
                    zd = z[::-1]                      # by distance
                    last = (int(np.argmax(zd)) if zd.any() else None, int(z.sum()))
            got = (h["first_blind"], h["row_zeros"], h["matrix_zeros"])
            if got != (last[0], last[1], mz):
                print(f"vllm-triton H={H} N={n} {dtype} R={R} head {k}: simulate {got}, independent "
                      f"{(last[0], last[1], mz)}")
                fails += 1
    return fails


def heuristic(bhm, sms, nblocks, max_splits):
    """num_splits_heuristic of flash_api.cpp, in Python (float32 waves as the C++ computes them)."""
    if np.float32(bhm) >= np.float32(0.8) * np.float32(sms):
        return 1
    max_splits = min(max_splits, sms, nblocks)
    cdiv = lambda a, b: (a + b - 1) // b
    ok = lambda s: s == 1 or cdiv(nblocks, s) != cdiv(nblocks, s - 1)
    eff = {}
    for s in range(1, max_splits + 1):
        if ok(s):
            w = np.float32(np.float32(bhm * s) / np.float32(sms))
            eff[s] = np.float32(w / np.float32(np.ceil(w)))
    best = max(eff.values())
    for s in range(1, max_splits + 1):
        if ok(s) and float(eff[s]) >= 0.85 * float(best):
            return s
    return 1


_EX2 = {}


def ex2_rn(y):
    """2^y for a float32 y >= -126, correctly rounded to binary32 (mpmath)."""
    key = float(y)
    if key not in _EX2:
        m = mpmath.power(2, mpmath.mpf(key))
        man, ex = mpmath.mpf(m).man_exp
        _EX2[key] = np.float32(float(rn(Fraction(int(man)) * Fraction(2) ** int(ex), 24, -126)))
    return _EX2[key]


def fast_logf(v):
    """__logf: lg2.approx.ftz (correctly rounded here) times fp32(ln 2), rounded and flushed."""
    if v < 2.0 ** -126:
        return -np.inf
    man, ex = mpmath.log(mpmath.mpf(float(v)), 2).man_exp
    l2 = rn(Fraction(int(man)) * Fraction(2) ** int(ex), 24, -126)
    return np.float32(float(ftz(rn(l2 * Fraction(float(np.float32(0.6931471805599453))), 24, -126))))


def split_row(x, i, n, S, dtype, sm, c, B=128):
    """Row i's weights after the split-KV kernel and the combine (float values, key order)."""
    nb = (n + B - 1) // B
    per = (nb + S - 1) // S
    col = {}
    lse = []
    for s in range(S):
        lo_b, hi_b = s * per, min((s + 1) * per, nb) - 1
        if lo_b >= nb or lo_b * B > i:
            lse.append(-np.inf)
            continue
        hi_b = min(hi_b, i // B)
        run, lanes = -np.inf, [np.float32(0)] * 4
        for b in range(hi_b, lo_b - 1, -1):
            lo, hi = b * B, min(b * B + B - 1, i)
            mb = max(run, float(np.max(x[lo:hi + 1])))
            assert run == -np.inf or mb == run     # zero logits rise with j: no rescale in a split
            run = mb
            ms = Fraction(float(np.float32(mb * float(c))))
            for j in range(lo, hi + 1):
                y = rn(Fraction(float(x[j])) * Fraction(float(c)) - ms, 24, -126)
                e = np.float32(0) if y < -126 else ex2_rn(np.float32(float(y)))
                q = ((j - lo) % 8) // 2
                lanes[q] = np.float32(float(ftz(Fraction(float(np.float32(lanes[q] + e))))))
                col[j] = to_dtype(e, dtype)
        tot = np.float32(np.float32(lanes[0] + lanes[2]) + np.float32(lanes[1] + lanes[3]))
        inv = Fraction(float(ftz(rn(1 / Fraction(float(tot)), 24, -126))))
        top = min(hi_b * B + B - 1, i)
        for j in range(lo_b * B, top + 1):
            col[j] = float(ftz(rn(Fraction(col[j]) * inv, 24, -126)))
        lse.append(float(rn(Fraction(run) * Fraction(float(sm)) + Fraction(float(fast_logf(tot))), 24, -126)))
    K = 2
    while K < S:
        K *= 2
    R, per_l = min(32, K), (K * 4 + 127) // 128
    mx = max(lse)
    mx = 0.0 if mx == -np.inf else mx
    v = []
    for r in range(R):
        acc = None
        for l in range(per_l):
            row = l * R + r
            t = float(expf(np.float32(lse[row] - mx))) if row < S and lse[row] != -np.inf else 0.0
            acc = np.float32(t) if acc is None else np.float32(acc + np.float32(t))
        v.append(acc)
    lsum = float(butterfly(v)) if R > 1 else float(v[0])
    logsum = np.float32(fast_logf(lsum) + np.float32(mx))
    sc = [float(expf(np.float32(ls - float(logsum)))) if ls != -np.inf else 0.0 for ls in lse]
    return [to_dtype(float(ftz(rn(Fraction(sc[(j // B) // per]) * Fraction(col[j]), 24, -126))), dtype)
            for j in range(i + 1)]


def check_vllm_flash_split(binary):
    fails = 0
    sm = np.float32(128 ** -0.5)
    c = np.float32(float(sm) * 1.4426950408889634)
    for H, n, dtype, S, R in ((8, 4096, "fp16", 0, 1), (4, 1000, "bf16", 0, 1), (2, 700, "fp16", 3, 4),
                              (8, 3000, "bf16", 5, 1), (16, 2500, "fp16", 0, 1)):
        spec = f"vllm-flash,rows={R}" + (f",splits={S}" if S else "")
        out = subprocess.run([binary, "simulate", "--heads", str(H), "--ctx", str(n), "--pipeline", spec,
                              "--dtype", dtype, "--format", "json"], capture_output=True, text=True, check=True)
        heads = json.loads(out.stdout)["heads"]
        splits = S if S else heuristic(H, 2 * 132, (n + 127) // 128, 128)
        for k, h in enumerate(heads, start=1):
            m = 2.0 ** (-8 * k / H)                   # torch.pow(2^-8/H, k): exact for H = 2, 4, 8, 16
            f = np.float32(m / float(sm))
            x = np.array([np.float32(float(f) * j) for j in range(n)], dtype=np.float32)
            mz, last = 0, None
            for i in range(n - R, n):
                z = np.array(split_row(x, i, n, splits, dtype, sm, c)) == 0
                mz += int(z.sum())
                if i == n - 1:
                    zd = z[::-1]
                    last = (int(np.argmax(zd)) if zd.any() else None, int(z.sum()))
            # weight = influence here: a separate influence count, if the JSON gives one, must be the same
            got = (h["first_blind"], h["row_zeros"], h["matrix_zeros"],
                   h.get("first_influence_zero", h["first_blind"]))
            want = (last[0], last[1], mz, last[0])
            if got != want:
                print(f"vllm-flash {spec} H={H} N={n} {dtype} S={splits} head {k}: simulate {got}, "
                      f"independent {want}")
                fails += 1
    return fails


def triton3d_row(x, n, dtype, S=16, tile=16):
    """The decode row's coefficients (key order) through the 3-D kernel and the segment reduce."""
    i = n - 1
    tps = (n + S * tile - 1) // (S * tile)
    act = (n + tps * tile - 1) // (tps * tile)
    acc = np.zeros(n, dtype=np.float32)
    Ms, Ls = [], []
    for s in range(act):
        k0, k1 = s * tps * tile, min((s + 1) * tps * tile - 1, i)
        M, L = triton_tiles(x, acc, k0, k1, dtype, tile)
        Ms.append(M)
        Ls.append(L)
    Mx = max(Ms)
    es = [expf_cached(np.float32(m) - np.float32(Mx)) for m in Ms]
    tot = np.float32(0.0)
    for L, e in zip(Ls, es):
        tot = np.float32(tot + np.float32(L * e))
    seg = np.arange(n) // (tps * tile)
    return np.array([np.float32(np.float32(acc[j] * es[seg[j]]) / tot) for j in range(n)], dtype=np.float32)


def check_vllm_triton3d(binary):
    fails = 0
    for H, n, dtype, S in ((8, 1500, "fp16", 0), (8, 1500, "bf16", 0), (4, 3000, "fp16", 0), (2, 700, "bf16", 5),
                           (16, 257, "fp16", 0)):
        spec = "vllm-triton,rows=1" + (f",splits={S}" if S else "")
        out = subprocess.run([binary, "simulate", "--heads", str(H), "--ctx", str(n), "--pipeline", spec,
                              "--dtype", dtype, "--format", "json"], capture_output=True, text=True, check=True)
        heads = json.loads(out.stdout)["heads"]
        for k, h in enumerate(heads, start=1):
            m = np.float32(2.0 ** (-8 * k / H))      # torch.pow(2^-8/H, k) in fp32: exact for H = 2, 4, 8, 16
            x = np.array([np.float32(float(m) * (j - (n - 1))) for j in range(n)], dtype=np.float32)
            z = triton3d_row(x, n, dtype, S if S else 16) == 0
            zd = z[::-1]
            want = (int(np.argmax(zd)) if zd.any() else None, int(z.sum()), int(z.sum()))
            got = (h["first_blind"], h["row_zeros"], h["matrix_zeros"])
            if got != want:
                print(f"vllm-triton 3-D {spec} H={H} N={n} {dtype} head {k}: simulate {got}, independent {want}")
                fails += 1
    return fails


def main():
    binary = sys.argv[1]
    fails = check_vllm_triton(binary)
    fails += check_vllm_flash_split(binary)
    fails += check_vllm_triton3d(binary)
    fails += check_llamacpp_cuda(binary)
    for preset, dtype, n in (("vllm-paged", "fp16", 3000), ("vllm-paged", "bf16", 1200),
                             ("trtllm-decode", "fp16", 2500), ("trtllm-decode", "bf16", 700),
                             ("trtllm-decode", "fp16", 20)):
        out = subprocess.run([binary, "simulate", "--heads", "8", "--ctx", str(n), "--pipeline", preset,
                              "--dtype", dtype, "--format", "json"], capture_output=True, text=True, check=True)
        heads = json.loads(out.stdout)["heads"]
        threads = 128 if preset == "vllm-paged" else (64 if n - 1 < 32 else 128 if n - 1 < 2048 else 256)
        for k, h in enumerate(heads, start=1):
            m = Fraction(1, 2 ** k)
            first, zeros = last_row(n, m, threads, dtype)
            got = (h["first_blind"], h["row_zeros"])
            if got != (first, zeros):
                print(f"{preset} {dtype} N={n} head {k}: simulate {got}, independent ({first}, {zeros})")
                fails += 1
    print("engines_check:", "ok" if fails == 0 else f"{fails} differences")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
