#!/usr/bin/python3
"""`alibi-blind rope` against PyTorch (CPU) and mpmath (issue 22, docs/rope.md).

Each code path is rebuilt here from its source (transformers LlamaRotaryEmbedding + apply_rotary_pos_emb,
flash_attn RotaryEmbedding's cos/sin cache + the rotary kernel's fp32 arithmetic, llama.cpp ggml_rope's
theta loop in fp32, and llama.cpp's own YaRN: ggml_rope_yarn_corr_dims, rope_yarn_ramp, rope_yarn and
llama_context's attention factor, line for line in numpy float32) and compared value for value with what the library says the code applies (rope_dump):
the fp32 angles, the cos/sin in the table's dtype, the rotated q. Then the report's per-pair errors, logit
error and shift sensitivity are recomputed from PyTorch's cos/sin tables and mpmath's exact angles.
Expected values come from PyTorch, numpy and mpmath, never from the tool.

hf-llama and flash-rotary must agree bit for bit with PyTorch CPU (frequencies, angles, cos/sin in the
table's dtype, rotated q, logits): the tool computes pow/cos/sin through the SLEEF functions PyTorch calls
(docs/rope.md). ggml-cpu's cos/sin are llama.cpp's libm cosf/sinf, modelled as correctly rounded: against
PyTorch's SLEEF they may differ by 1 ulp (counted); its report is checked against mpmath's rounded values.
usage: validate_rope.py path/to/alibi-blind path/to/rope_dump"""
import json
import math
import os
import random
import subprocess
import sys

import mpmath
import numpy as np
import torch

TOOL, DUMP = sys.argv[1], sys.argv[2]
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
FAIL = []
HALVES = {}  # hf: the second half of emb's cos/sin tables, per case
STATS = {"values": 0}  # values compared bit for bit against PyTorch


def check(cond, what):
    if not cond:
        FAIL.append(what)
        print("FAIL:", what)


def hf_inv_freq(d, base, scaling, factor, maxpos, seq_len):
    """transformers modeling_rope_utils (_compute_default/_linear/_dynamic_ntk_parameters)."""
    if scaling == "dynamic" and seq_len > maxpos:
        sl = torch.tensor(seq_len)  # torch.max(position_ids) + 1: an int64 tensor
        base = base * ((factor * sl / maxpos) - (factor - 1)) ** (d / (d - 2))
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    if scaling == "linear":
        inv /= factor
    if scaling.startswith("llama3:"):  # _compute_llama3_parameters, line for line
        low_freq_factor, high_freq_factor = (float(x) for x in scaling.split(":")[1:])
        old_context_len = maxpos
        low_freq_wavelen = old_context_len / low_freq_factor
        high_freq_wavelen = old_context_len / high_freq_factor
        wavelen = 2 * math.pi / inv
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv / factor, inv)
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
        is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        inv = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    if scaling.startswith("yarn:"):
        inv = yarn_inv_freq(d, base, scaling, factor, maxpos)[0]
    if scaling.startswith("longrope:"):
        inv = longrope_inv_freq(d, base, scaling, factor, maxpos, seq_len)[0]
    return inv


def longrope_inv_freq(d, base, scaling, factor, maxpos, seq_len):
    """_compute_longrope_parameters as the per-length update calls it (transformers' dynamic update for longrope;
    Phi-3's Phi3LongRoPEScaledRotaryEmbedding.forward), line for line, with original_max_position_embeddings =
    maxpos, factor = max_position_embeddings / original given, and seq_len = max(position_ids) + 1 = N;
    scaling = longrope:L0,L1,...:S0,S1,..."""
    long_factor, short_factor = ([float(x) for x in f.split(",")] for f in scaling.split(":")[1:3])
    original_max_position_embeddings = maxpos
    attention_factor = None
    if attention_factor is None:
        if factor <= 1.0:
            attention_factor = 1.0
        else:
            attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max_position_embeddings))
    if seq_len and seq_len > original_max_position_embeddings:
        ext_factors = torch.tensor(long_factor, dtype=torch.float32)
    else:
        ext_factors = torch.tensor(short_factor, dtype=torch.float32)
    inv_freq_shape = torch.arange(0, d, 2, dtype=torch.int64).float() / d
    inv_freq = 1.0 / (ext_factors * base**inv_freq_shape)
    return inv_freq, attention_factor


def yarn_inv_freq_later(d, base, f, factor, original):
    """_compute_yarn_parameters of later transformers revisions (rope_scaling's mscale, mscale_all_dim, truncate,
    original_max_position_embeddings; docs/rope.md), line for line; f = BETA_FAST, BETA_SLOW, ATT (0: None),
    MSCALE, MSCALE_ALL_DIM (0: None), TRUNCATE (0/1); original = original_max_position_embeddings."""
    dim = d
    attention_factor = float(f[2]) or None
    mscale, mscale_all_dim = float(f[3]) or None, float(f[4]) or None
    original_max_position_embeddings = original

    def get_mscale(scale, mscale=1):
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = float(f[0]) or 32
    beta_slow = float(f[1]) or 1

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings, truncate):
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):
        if min == max:
            max += 0.001
        linear_func = (torch.arange(dim, dtype=torch.float32) - min) / (max - min)
        return torch.clamp(linear_func, 0, 1)

    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype=torch.float) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    truncate = bool(int(f[5]))
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, original_max_position_embeddings, truncate)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).to(dtype=torch.float)
    inv_freq = (inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
                + inv_freq_extrapolation * inv_freq_extrapolation_factor)
    return inv_freq, attention_factor, low, high


def yarn_inv_freq(d, base, scaling, factor, maxpos):
    """_compute_yarn_parameters (transformers 0044e3b3), line for line; scaling = yarn:BETA_FAST:BETA_SLOW[:ATT]
    (with MSCALE:MSCALE_ALL_DIM:TRUNCATE after ATT: the later revision, yarn_inv_freq_later)."""
    f = scaling.split(":")[1:]
    if len(f) > 3:
        return yarn_inv_freq_later(d, base, f, factor, maxpos)
    beta_fast, beta_slow = float(f[0]) or 32, float(f[1]) or 1
    attention_factor = float(f[2]) if len(f) > 2 else 0.1 * math.log(factor) + 1.0
    dim, max_position_embeddings = d, maxpos

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings):
        low = math.floor(find_correction_dim(low_rot, dim, base, max_position_embeddings))
        high = math.ceil(find_correction_dim(high_rot, dim, base, max_position_embeddings))
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):
        if min == max:
            max += 0.001
        linear_func = (torch.arange(dim, dtype=torch.float32) - min) / (max - min)
        return torch.clamp(linear_func, 0, 1)

    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, max_position_embeddings)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).float()
    inv_freq = (inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
                + inv_freq_extrapolation * inv_freq_extrapolation_factor)
    return inv_freq, attention_factor, low, high


def hf_cos_sin(dtype, d, base, scaling, factor, maxpos, n, positions):
    """LlamaRotaryEmbedding.forward: freqs = inv_freq @ position_ids.float() in fp32, cos/sin fp32, .to(dtype)."""
    inv = hf_inv_freq(d, base, scaling, factor, maxpos, n)
    pos = torch.tensor(positions, dtype=torch.int64)[None, :]
    freqs = (inv[None, :, None].float() @ pos[:, None, :].float()).transpose(1, 2)[0]
    att = yarn_inv_freq(d, base, scaling, factor, maxpos)[1] if scaling.startswith("yarn:") else 1.0
    att = longrope_inv_freq(d, base, scaling, factor, maxpos, n)[1] if scaling.startswith("longrope:") else att
    # emb = torch.cat((freqs, freqs), dim=-1); cos = emb.cos() * self.attention_scaling (fp32), then .to(dtype).
    # On emb, not freqs: SLEEF's cos/sin of a lane depends on its group of 8 (docs/rope.md), so the table is taken
    # as transformers takes it. Both halves are returned: rotate_half's second half uses emb's columns h..d-1.
    emb = torch.cat((freqs, freqs), dim=-1)
    h = d // 2
    c, s = (emb.cos() * att).to(DT[dtype]), (emb.sin() * att).to(DT[dtype])
    HALVES[(dtype, d, base, scaling, factor, maxpos, n)] = (c[:, h:], s[:, h:])
    return freqs, c[:, :h], s[:, :h]


def flash_cos_sin(dtype, d, base, positions):
    """flash_attn/layers/rotary.py RotaryEmbedding._update_cos_sin_cache: torch.outer(t fp32, inv_freq fp32)."""
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    t = torch.tensor(positions, dtype=torch.float32)
    freqs = torch.outer(t, inv)
    return freqs, torch.cos(freqs).to(DT[dtype]), torch.sin(freqs).to(DT[dtype])


def rn32(v):
    """An mpmath value rounded to the nearest binary32 (correctly: the binary64 neighbour's float32 and its two
    neighbours, the nearest to v wins), for llama.cpp's libm logf/cosf/sinf modelled as correctly rounded."""
    f = np.float32(float(v))
    cands = (f, np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf)))
    return min(cands, key=lambda c: abs(mpmath.mpf(float(c)) - v))


def logf(x):
    with mpmath.workdps(40):
        return rn32(mpmath.log(mpmath.mpf(float(x))))


def powf(x, y):
    """llama.cpp's powf (libm), modelled as correctly rounded: mpmath, then rn32 (numpy's float32 power is not:
    np.power(float32(10000), float32(-1/32)) is 1 ulp above; glibc's powf agrees with the model there)."""
    with mpmath.workdps(40):
        v = rn32(mpmath.mpf(float(x)) ** mpmath.mpf(float(y)))
    GLIBC_DIFF["powf"] += GLIBC.powf(float(x), float(y)) != float(v)
    GLIBC_DIFF["npowf"] += 1
    return v


class _NoLibm:   # not glibc: nothing to count (the libm values are informational only)
    def __getattr__(self, name):
        return lambda *a: float("nan")


try:
    GLIBC = __import__("ctypes").CDLL("libm.so.6")
    for _fn in ("logf", "cosf", "sinf", "powf"):
        getattr(GLIBC, _fn).restype = __import__("ctypes").c_float
        getattr(GLIBC, _fn).argtypes = [__import__("ctypes").c_float] * (2 if _fn == "powf" else 1)
except OSError:
    GLIBC = _NoLibm()
GLIBC_DIFF = {"logf": 0, "cosf": 0, "sinf": 0, "n": 0, "powf": 0, "npowf": 0}   # glibc's own values against the correctly rounded model


def ggml_angles(d, base, factor, positions):
    """ggml-cpu ops.cpp: theta_scale = powf(freq_base, -2.0f/n_dims); theta = p; theta *= theta_scale per pair;
    rope_yarn: theta_interp = freq_scale * theta (ext_factor 0); freq_scale = 1.0f/factor."""
    f32 = np.float32
    ts = powf(f32(base), f32(f32(-2.0) / f32(d)))
    fs = f32(f32(1.0) / f32(factor))
    out = np.zeros((len(positions), d // 2), dtype=np.float32)
    for r, p in enumerate(positions):
        theta = f32(p)
        for i in range(d // 2):
            out[r, i] = f32(fs * theta)
            theta = f32(theta * ts)
    freqs = torch.from_numpy(out)
    return freqs, freqs.cos(), freqs.sin()


def ggml_yarn(d, base, factor, orig, beta_fast, beta_slow):
    """llama.cpp, line for line in float32 (numpy scalars: each operation rounded to binary32):
    ggml.c ggml_rope_yarn_corr_dim/_dims; llama_model::load_hparams rope_freq_scale_train = 1.0f/ropescale;
    llama_context: factor = 1.0f/freq_scale, yarn_attn_factor = get_mscale(factor, 1.0f) * (1.0f / (1.0f + 0.1f *
    logf(factor))) * rope_attn_factor (1); ops.cpp rope_yarn_ramp and rope_yarn's mscale *= 1.0f + 0.1f *
    logf(1.0f / freq_scale). Returns (ramp_mix per pair, freq_scale, mscale, low, den)."""
    f32 = np.float32
    pi = f32(math.pi)   # (float)M_PI

    def corr_dim(n_rot):
        return f32(f32(f32(d) * logf(f32(f32(orig) / f32(f32(f32(n_rot) * f32(2)) * pi)))) / f32(f32(2) * logf(f32(base))))
    start, end = np.floor(corr_dim(beta_fast)), np.ceil(corr_dim(beta_slow))
    low = f32(0) if f32(0) > start else start                      # MAX(0, start)
    high = f32(d - 1) if f32(d - 1) < end else end                 # MIN(n_dims - 1, end)
    den = f32(0.001) if f32(0.001) > f32(high - low) else f32(high - low)
    ramp = []
    for i in range(d // 2):
        y = f32(f32(f32(i) - low) / den)
        ramp.append(f32(f32(f32(1) - min(f32(1), max(f32(0), y))) * f32(1.0)))   # * ext_factor (1.0f)
    fs = f32(f32(1) / f32(factor))
    fac = f32(f32(1) / fs)
    g = f32(f32(f32(f32(0.1) * f32(1.0)) * logf(fac)) + f32(1))   # get_mscale(factor, 1.0f)
    attn = g if fac > f32(1) else f32(1)
    attn = f32(attn * f32(f32(1) / f32(f32(1) + f32(f32(0.1) * logf(fac)))))
    attn = f32(attn * f32(1.0))                                   # hparams.rope_attn_factor
    mscale = f32(attn * f32(f32(1) + f32(f32(0.1) * logf(f32(f32(1) / fs)))))
    return ramp, fs, mscale, low, den


def ggml_yarn_values(d, base, scaling, factor, maxpos, positions):
    """ggml_rope_cache_init + rope_yarn with YaRN: theta_extrap = p ts^i (i fp32 multiplications), theta_interp =
    freq_scale * theta_extrap, theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix (unfused),
    cos = cosf(theta) * mscale (cosf correctly rounded; glibc's own cosf counted against it)."""
    f32 = np.float32
    bf, bs = (float(x) for x in scaling.split(":")[1:3])
    ramp, fs, mscale, _, _ = ggml_yarn(d, base, factor, maxpos, bf, bs)
    ts = powf(f32(base), f32(f32(-2.0) / f32(d)))
    ang = np.zeros((len(positions), d // 2), dtype=np.float32)
    c = np.zeros_like(ang); s = np.zeros_like(ang)
    with mpmath.workdps(40):
        for r, p in enumerate(positions):
            theta = f32(p)
            for i in range(d // 2):
                interp = f32(fs * theta)
                a = f32(f32(interp * f32(f32(1) - ramp[i])) + f32(theta * ramp[i]))
                ang[r, i] = a
                cc, ss = rn32(mpmath.cos(mpmath.mpf(float(a)))), rn32(mpmath.sin(mpmath.mpf(float(a))))
                GLIBC_DIFF["cosf"] += GLIBC.cosf(float(a)) != float(cc)
                GLIBC_DIFF["sinf"] += GLIBC.sinf(float(a)) != float(ss)
                GLIBC_DIFF["n"] += 1
                c[r, i], s[r, i] = f32(cc * mscale), f32(ss * mscale)
                theta = f32(theta * ts)
    return torch.from_numpy(ang), torch.from_numpy(c), torch.from_numpy(s)


def tool_values(path, dtype, d, base, scaling, factor, maxpos, n, positions):
    args = [DUMP, path, dtype, str(d), str(base), scaling, str(factor), str(maxpos), str(n)]
    text = "v " + " ".join(str(p) for p in positions) + "\n"
    out = subprocess.run(args, input=text, capture_output=True, text=True, check=True).stdout.split("\n")
    h = d // 2
    ang = np.zeros((len(positions), h)); cs = np.zeros_like(ang); sn = np.zeros_like(ang)
    index = {p: r for r, p in enumerate(positions)}
    for line in out:
        f = line.split()
        if len(f) == 5:
            r, i = index[int(f[0])], int(f[1])
            ang[r, i], cs[r, i], sn[r, i] = (float.fromhex(x) for x in f[2:])
    return ang, cs, sn


def ulp(x, dtype):
    p = {"bf16": 8, "fp16": 11, "fp32": 24}[dtype]
    e = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** -126)))
    return 2.0 ** (e - p + 1)


def compare_values(name, dtype, ref, got):
    """Bit for bit: the fp32 frequencies (PyTorch's SLEEF powf on vector lanes, libm powf on the tail), the fp32
    angles and the cos/sin in the table's dtype (PyTorch's SLEEF cos/sin by groups of 8, times the attention
    scaling, then the cast)."""
    freqs, c, s = (t.double().numpy() for t in ref)
    ang, cs, sn = got
    f_tool, f_torch = ang[1] if len(ang) > 1 else ang[0], freqs[1] if len(freqs) > 1 else freqs[0]
    off = np.argwhere(f_tool != f_torch).ravel().tolist()  # the frequency at p = 1 (hf, flash: inv_freq; ggml: ts^i)
    check(not off, f"{name}: fp32 frequency of pairs {off} differs from torch's")
    eq = freqs == ang
    check(eq.all(), f"{name}: fp32 angles differ at {np.argwhere(~eq)[:3].tolist()}")
    tab = "fp32" if name.startswith("ggml") else dtype
    STATS["values"] += 0 if name.startswith("ggml") else 2 * c.size + ang.size
    for label, a, b in (("cos", c, cs), ("sin", s, sn)):
        diff = a != b
        worst = np.max(np.abs(a - b) / ulp(a, tab)) if diff.any() else 0.0
        ref_name = "the float32 rebuild (cosf correctly rounded)" if name == "ggml-cpu-yarn" else "torch"
        print(f"  {name} {label}: {diff.sum()} of {diff.size} differ from {ref_name} (<= {worst:.3g} ulp of {tab})")
        if name == "ggml-cpu-yarn":   # against the line-for-line rebuild with correctly rounded cosf/sinf
            check(not diff.any(), f"{name} {label}: {diff.sum()} of {diff.size} differ from the rebuild")
        elif name.startswith("ggml"):   # llama.cpp calls libm cosf/sinf, not PyTorch's SLEEF: counted, not required
            check(worst <= 1.0, f"{name} {label}: {diff.sum()} differ, worst {worst} ulp")
        else:
            check(not diff.any(), f"{name} {label}: {diff.sum()} of {diff.size} differ from torch, worst {worst} ulp")


def positions_for(n):
    rnd = random.Random(n)
    ps = set(range(min(n, 200)))
    ps.update(rnd.randrange(n) for _ in range(300))
    ps.update(min(n - 1, (1 << k) + j) for k in range(1, 18) for j in (-1, 0, 1) if (1 << k) + j < n)
    ps.add(n - 1)
    return sorted(ps)


CASES = [  # path, dtype, d, base, scaling, factor, maxpos, n
    ("hf-llama", "bf16", 128, 10000, "none", 1, 0, 1 << 17),
    ("hf-llama", "fp16", 64, 10000, "none", 1, 0, 4096),
    ("hf-llama", "fp32", 128, 500000, "none", 1, 0, 1 << 17),
    ("hf-llama", "bf16", 128, 1000000, "none", 1, 0, 1 << 17),
    ("hf-llama", "bf16", 96, 10000, "linear", 4, 0, 16384),
    ("hf-llama", "bf16", 128, 10000, "dynamic", 2, 4096, 16384),
    ("hf-llama", "bf16", 128, 500000, "llama3:1:4", 8, 8192, 1 << 17),
    ("hf-llama", "fp32", 64, 10000, "llama3:1:4", 4, 2048, 16384),
    ("hf-llama", "bf16", 128, 10000, "yarn:32:1", 4, 4096, 1 << 17),
    ("hf-llama", "fp32", 128, 1000000, "yarn:32:1", 4, 32768, 1 << 17),
    ("hf-llama", "fp16", 64, 10000, "yarn:16:2:1.25", 8, 2048, 16384),
    ("hf-llama", "bf16", 96, 500000, "yarn:32:1", 16, 8192, 1 << 17),
    # yarn with the later revisions' keys: DeepSeek-V3's mscale = mscale_all_dim (factor 40, original 4096), an
    # mscale ratio with truncate false, and truncate false alone (ramp ends not floored/ceiled)
    ("hf-llama", "bf16", 64, 10000, "yarn:32:1:0:1:1:1", 40, 4096, 1 << 17),
    ("hf-llama", "fp32", 128, 500000, "yarn:32:1:0:0.8:1:0", 8, 4096, 1 << 17),
    ("hf-llama", "fp16", 96, 1000000, "yarn:16:2:0:0:0:0", 4, 32768, 1 << 17),
    ("hf-llama", "bf16", 16, 10000, "longrope:1,1.5,2,2.5,3,3.5,4,4.5:1,1,1,1,1,1,1,1", 4, 128, 512),
    ("hf-llama", "fp32", 16, 10000, "longrope:1,1.5,2,2.5,3,3.5,4,4.5:1,1.25,1,1,1,1,1,1.125", 1, 128, 512),
    # the per-length switch: N <= original takes the short list (with the attention factor of F = 32)
    ("hf-llama", "fp32", 16, 10000, "longrope:1,1.5,2,2.5,3,3.5,4,4.5:1,1.25,1,1,1,1,1,1.125", 32, 4096, 4096),
    ("hf-llama", "bf16", 96, 10000, "longrope:" + ",".join(str(1 + i / 7) for i in range(48)) + ":"
     + ",".join(str(1 + i / 97) for i in range(48)), 32, 4096, 1 << 17),
    ("flash-rotary", "bf16", 128, 10000, "none", 1, 0, 1 << 17),
    ("flash-rotary", "fp16", 80, 10000, "none", 1, 0, 8192),
    ("ggml-cpu", "fp32", 128, 10000, "none", 1, 0, 1 << 17),
    ("ggml-cpu", "fp16", 128, 500000, "linear", 2, 0, 32768),
    # ggml-cpu with YaRN (llama.cpp's rope_yarn; maxpos = n_ctx_orig_yarn): Llama-style 4x from 4096, Qwen2.5-style
    # 4x from 32768 on base 1e6, factor 40 (1/40 is not a binary32: the factor llama_context recovers is 1/fs),
    # factor 3 with beta 16/2 on a short head
    ("ggml-cpu", "fp32", 128, 10000, "yarn:32:1", 4, 4096, 1 << 17),
    ("ggml-cpu", "fp16", 128, 1000000, "yarn:32:1", 4, 32768, 1 << 17),
    ("ggml-cpu", "fp32", 64, 10000, "yarn:32:1", 40, 4096, 1 << 17),
    ("ggml-cpu", "fp16", 16, 10000, "yarn:16:2", 3, 128, 4096),
]


def reference(path, dtype, d, base, scaling, factor, maxpos, n, positions):
    if path == "hf-llama":
        return hf_cos_sin(dtype, d, base, scaling, factor, maxpos, n, positions)
    if path == "flash-rotary":
        return flash_cos_sin(dtype, d, base, positions)
    if scaling.startswith("yarn:"):
        return ggml_yarn_values(d, base, scaling, factor, maxpos, positions)
    return ggml_angles(d, base, factor, positions)


def apply_ref(path, dtype, x, c, s):
    """hf: q*cos + rotate_half(q)*sin in the model dtype; flash/ggml: fp32 x0*cos - x1*sin, one cast. c, s: the
    cos/sin as applied (checked against torch's separately), so that this checks the rotation's arithmetic."""
    h = x.shape[-1] // 2
    if path == "hf-llama":
        xd = x.to(DT[dtype])
        cc = (c if c.shape[-1] == 2 * h else torch.cat((c, c), -1)).to(DT[dtype])
        ss = (s if s.shape[-1] == 2 * h else torch.cat((s, s), -1)).to(DT[dtype])
        rot = torch.cat((-xd[..., h:], xd[..., :h]), -1)
        return (xd * cc + rot * ss).double()
    x0, x1 = x[..., :h].float(), x[..., h:].float()
    c, s = c.float(), s.float()
    o = torch.cat((x0 * c - x1 * s, x0 * s + x1 * c), -1)
    return o.to(DT[dtype]).double()


def check_apply(case, ref_cs):
    path, dtype, d = case[0], case[1], case[2]
    rnd = torch.Generator().manual_seed(d)
    args = [DUMP, path, dtype, str(d), str(case[3]), case[4], str(case[5]), str(case[6]), str(case[7])]
    positions = [0, 1, 17, case[7] - 1]
    _, c, s = ref_cs
    lines, want = [], []
    for p in positions:
        x = torch.randn(d, generator=rnd).to(DT[dtype]).float()
        lines.append(f"a {p} " + " ".join(float(v).hex() for v in x))
        r = case[8].index(p)
        cr, sr = c[r].float(), s[r].float()
        if path == "hf-llama":   # emb's full row: columns h..d-1 are SLEEF's values of the second copy
            c2, s2 = HALVES[tuple(case[1:8])]
            cr, sr = torch.cat((cr, c2[r].float())), torch.cat((sr, s2[r].float()))
        want.append(apply_ref(path, dtype, x, cr, sr).numpy())
    out = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout
    got = [np.array([float.fromhex(v) for v in line.split()]) for line in out.strip().split("\n")]
    bad = sum(int((g != w).sum()) for g, w in zip(got, want))
    STATS["values"] += len(positions) * d if path != "ggml-cpu" else 0
    print(f"  {path} {dtype} d={d}: rotated q, {bad} of {len(positions) * d} values differ")
    check(bad == 0, f"{path} {dtype} d={d}: rotated q differs in {bad} values")


for case in CASES:
    pos = positions_for(case[7])
    print(case)
    ref = reference(*case, pos)
    got = tool_values(*case, pos)
    compare_values(case[0] + ("-yarn" if case[0] == "ggml-cpu" and case[4].startswith("yarn:") else ""),
                   case[1], ref, got)
    # ggml-cpu: llama.cpp's cos/sin are libm's, not PyTorch's: its rotation is checked on the tool's cos/sin
    check_apply(case + (pos,), ref if case[0] != "ggml-cpu" else
                (None, torch.from_numpy(got[1]).float(), torch.from_numpy(got[2]).float()))


def yarn_theta(theta, i, d, base, factor, scaling, maxpos):
    """The yarn frequency in real arithmetic (mpmath) on the code's ramp ends: theta ((1 - e) / factor + e)."""
    _, _, low, high = yarn_inv_freq(d, base, scaling, factor, maxpos)
    high = high + 0.001 if low == high else high
    r = min(max((mpmath.mpf(i) - low) / (mpmath.mpf(high) - low), 0), 1)
    e = 1 - r
    return theta * ((1 - e) / factor + e)


def llama3_theta(theta, factor, scaling, old):
    """The llama3 frequency in real arithmetic (mpmath): the piecewise formula of _compute_llama3_parameters."""
    low, high = (mpmath.mpf(x) for x in scaling.split(":")[1:])
    wavelen = 2 * mpmath.pi / theta
    if wavelen < old / high:
        return theta
    if wavelen > old / low:
        return theta / factor
    s = (old / wavelen - low) / (high - low)
    return (1 - s) * theta / factor + s * theta


CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "configs")


def report_check(path, dtype, d, base, n, d1=0, d2=16, scaling="none", factor=1, tol=None, cr=False, maxpos=0,
                 config=None):
    """The report's numbers from PyTorch's cos/sin tables (cr, ggml-cpu only: mpmath's correctly rounded fp32
    cos/sin, the tool's model of llama.cpp's libm cosf/sinf) and mpmath's exact angles (50 digits). The goldens
    tests/cli/rope_*.out are runs of these configurations."""
    mpmath.mp.dps = 50
    pos = list(range(n + d2))
    freqs, c, s = (t.double().numpy() for t in reference(path, dtype, d, base, scaling, factor, maxpos, n, pos))
    if cr and not scaling.startswith("yarn:"):   # llama.cpp's cosf/sinf (libm): mpmath's correctly rounded fp32 values
        c = np.vectorize(lambda a: float(mpmath.cos(mpmath.mpf(float(a)))))(freqs).astype(np.float32).astype(float)
        s = np.vectorize(lambda a: float(mpmath.sin(mpmath.mpf(float(a)))))(freqs).astype(np.float32).astype(float)
    args = [TOOL, "rope", "--pipeline", path, "--dtype", dtype, "--head-dim", str(d), "--base", str(base), "--ctx",
            str(n), "--shift", f"{d1},{d2}", "--format", "json"]
    args += ["--scaling", f"linear:{factor}"] if scaling == "linear" else []
    if scaling.startswith("llama3:"):
        args += ["--scaling", f"llama3:{factor}:{scaling.split(':')[1]}:{scaling.split(':')[2]}:{maxpos}"]
    if config is not None:   # the config.json instead of --scaling/--ctx (longrope has no --scaling spelling)
        args = [TOOL, "rope", "--config", config, "--pipeline", path, "--shift", f"{d1},{d2}", "--format", "json"]
    if scaling.startswith("yarn:") and config is None:
        args += ["--scaling", f"yarn:{factor}:{maxpos}:{scaling.split(':')[1]}:{scaling.split(':')[2]}"]
    if scaling.startswith("longrope:") and config is None:
        lists = scaling.split(":", 1)[1]
        args += ["--scaling", f"longrope:{factor}:{maxpos}:{lists}"]
    args += ["--tolerance", str(tol)] if tol is not None else []
    rep = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    want_src = "correctly rounded (MPFR)" if path == "ggml-cpu" else "PyTorch CPU's SLEEF (AVX2), bit for bit"
    check(rep["cos_sin_source"] == want_src, f"report cos_sin_source {rep['cos_sin_source']!r}")
    h = d // 2
    theta = [mpmath.mpf(base) ** (mpmath.mpf(-2 * i) / d) / (factor if scaling == "linear" else 1) for i in range(h)]
    if scaling.startswith("llama3:"):
        theta = [llama3_theta(x, factor, scaling, maxpos) for x in theta]
    att = 1.0
    if scaling.startswith("yarn:") and path == "ggml-cpu":   # ggml's ends; the exact pair is (0.1 ln F + 1) (cos, sin)
        _, _, mscale, low, den = ggml_yarn(d, base, factor, maxpos, *(float(x) for x in scaling.split(":")[1:3]))
        e = [1 - min(max((mpmath.mpf(i) - mpmath.mpf(float(low))) / mpmath.mpf(float(den)), 0), 1) for i in range(h)]
        theta = [x * ((1 - e[i]) / factor + e[i]) for i, x in enumerate(theta)]
        att = 1 + mpmath.mpf(0.1) * mpmath.log(factor)
        check(rep["attention_factor"] == float(mscale), f"report attention_factor {rep['attention_factor']} != {mscale}")
    elif scaling.startswith("yarn:"):
        theta = [yarn_theta(x, i, d, base, factor, scaling, maxpos) for i, x in enumerate(theta)]
        att = yarn_inv_freq(d, base, scaling, factor, maxpos)[1]   # the exact pair is att (cos, sin)
    if scaling.startswith("longrope:"):
        ext = [mpmath.mpf(x) for x in scaling.split(":")[1 if n > maxpos else 2].split(",")]
        theta = [x / ext[i] for i, x in enumerate(theta)]
        att = longrope_inv_freq(d, base, scaling, factor, maxpos, n)[1]
    if scaling.startswith(("yarn:", "longrope:")) and path != "ggml-cpu":   # the fp32 factor the multiply applies
        check(rep["attention_factor"] == float(np.float32(att)), f"report attention_factor {rep['attention_factor']}")
    ex = np.zeros((n + d2, h), dtype=complex)
    for i in range(h):
        worst = {"angle_error": 0.0, "cos_sin_error": 0.0, "effective_error": 0.0}
        first = None
        for p in range(n + d2):
            a = mpmath.mpf(p) * theta[i]
            ex[p, i] = complex(float(att * mpmath.cos(a)), float(att * mpmath.sin(a)))
            if p >= n:
                continue
            zc, zs = mpmath.mpf(c[p, i]), mpmath.mpf(s[p, i])
            eff = abs(mpmath.atan2(zs * mpmath.cos(a) - zc * mpmath.sin(a), zc * mpmath.cos(a) + zs * mpmath.sin(a)))
            worst["angle_error"] = max(worst["angle_error"], float(abs(mpmath.mpf(freqs[p, i]) - a)))
            worst["cos_sin_error"] = max(worst["cos_sin_error"],
                                         float(mpmath.hypot(zc - att * mpmath.cos(a), zs - att * mpmath.sin(a))))
            worst["effective_error"] = max(worst["effective_error"], float(eff))
            if first is None and eff > (theta[i] if tol is None else tol):
                first = p
        row = rep["pairs"][i]
        for k, v in worst.items():
            check(math.isclose(row[k], v, rel_tol=1e-9, abs_tol=1e-15), f"report {path} pair {i} {k}: {row[k]} != {v}")
        check(row["first_effective_over"] == first, f"report pair {i} first_effective_over {row['first_effective_over']} != {first}")
    z = c + 1j * s
    rot = np.max(np.abs(z[:n] * np.conj(z[0]) - ex[:n] * np.conj(ex[0])))
    shift = np.max(np.abs(z[d1:n + d1] * np.conj(z[d1]) - z[d2:n + d2] * np.conj(z[d2])))
    check(math.isclose(rep["logit_rotation_error_first"], rot, rel_tol=1e-9), f"report rotation error {rep['logit_rotation_error_first']} != {rot}")
    check(math.isclose(rep["shift_first"], shift, rel_tol=1e-9), f"report shift_first {rep['shift_first']} != {shift}")
    print(f"  report {path} {dtype} d={d} N={n}: per-pair errors, first positions, logit error {rot:.4g}, "
          f"shift sensitivity {shift:.4g} agree")


report_check("hf-llama", "bf16", 16, 10000, 1024)
report_check("hf-llama", "fp16", 8, 500000, 512)
report_check("flash-rotary", "bf16", 8, 10000, 512)
report_check("hf-llama", "bf16", 8, 10000, 256)                                # tests/cli/rope_text
report_check("ggml-cpu", "fp16", 4, 10000, 64, cr=True)                          # tests/cli/rope_json
report_check("hf-llama", "fp32", 4, 10000, 64, d1=1, d2=5, tol=0.001)   # tests/cli/rope_csv
report_check("hf-llama", "fp16", 8, 10000, 256, scaling="linear", factor=2)      # tests/cli/rope_config_linear
report_check("hf-llama", "bf16", 16, 10000, 512, scaling="llama3:1:4", factor=8, maxpos=256)  # tests/cli/rope_llama3
report_check("hf-llama", "bf16", 16, 10000, 512, scaling="yarn:32:1", factor=4, maxpos=128)   # tests/cli/rope_yarn
report_check("hf-llama", "bf16", 16, 10000, 128, scaling="yarn:32:1", factor=4, maxpos=128)   # rope_config_yarn
report_check("hf-llama", "fp32", 8, 10000, 256, scaling="yarn:8:2", factor=2, maxpos=64)
report_check("hf-llama", "bf16", 16, 10000, 512, scaling="yarn:32:1:0:1:1:1", factor=4, maxpos=128,
             config=os.path.join(CONFIGS, "rope_yarn_mscale.json"))                # tests/cli/rope_config_yarn_mscale
report_check("hf-llama", "fp16", 32, 500000, 512, scaling="yarn:32:1:0:0.8:1:0", factor=8, maxpos=256,
             config=os.path.join(CONFIGS, "rope_yarn_truncate.json"))              # tests/cli/rope_config_yarn_truncate
report_check("hf-llama", "fp16", 8, 10000, 256, scaling="longrope:1,2,3,4:1,1.25,1.5,1.125", factor=8, maxpos=256)
report_check("hf-llama", "bf16", 8, 10000, 300, scaling="longrope:1,2,3,4:1,1.25,1.5,1.125", factor=8, maxpos=256)
report_check("hf-llama", "bf16", 16, 10000, 512, scaling="longrope:1,1.5,2,2.5,3,3.5,4,4.5:1,1,1,1,1,1,1,1",
             factor=4, maxpos=128, config=os.path.join(os.path.dirname(__file__), "..", "data", "configs",
                                                        "rope_longrope.json"))   # tests/cli/rope_config_longrope
report_check("ggml-cpu", "fp32", 16, 10000, 512, scaling="yarn:32:1", factor=4, maxpos=128, cr=True)  # rope_ggml_yarn
report_check("ggml-cpu", "fp16", 8, 10000, 256, scaling="yarn:16:2", factor=3, maxpos=64, cr=True)
report_check("ggml-cpu", "fp32", 16, 500000, 256, scaling="yarn:32:1", factor=8, maxpos=64, cr=True,
             config=os.path.join(CONFIGS, "rope_ggml_yarn.json"))                 # tests/cli/rope_config_ggml_yarn


def logits_check(path, dtype, d, base, n, dist, d2=16, qk=None):
    """--q/--k: each logit the tool says the code computes (rope_dump l) against PyTorch (the rotated q, k from
    PyTorch's cos/sin and its own elementwise ops, the dot product in float64 rounded once into the dtype; also
    torch.matmul in the dtype, whose fp32 accumulation order may differ in the last place: counted), then the
    report's qk_* maxima against those logits and mpmath's exact relative logit."""
    import tempfile, os
    mpmath.mp.dps = 50
    g = torch.Generator().manual_seed(d + n)
    q = torch.randn(d, generator=g).to(DT[dtype]).double()
    k = (8 * torch.randn(d, generator=g)).to(DT[dtype]).double()   # a large key, like the first token's
    if qk is not None:
        q, k = (torch.from_numpy(np.load(f)).double().to(DT[dtype]).double() for f in qk)
    pos = list(range(n + d2))
    _, c, s = reference(path, dtype, d, base, "none", 1, 0, n, pos)
    rot = lambda x, p: apply_ref(path, dtype, x.float(), c[p].float(), s[p].float())
    qr = [rot(q, p) for p in pos]
    kr = [rot(k, p) for p in pos]
    logit = lambda a, b: torch.tensor(float((qr[a] * kr[b]).sum())).to(DT[dtype]).item()
    args = [DUMP, path, dtype, str(d), str(base), "none", "1", "0", str(n)]
    sample = [(r, 0) for r in range(0, n, 7)] + [(r + d2, d2) for r in range(0, n, 11)] + [(p + dist, p) for p in range(0, n - dist, 13)]
    vals = " ".join(float(x).hex() for x in list(q) + list(k))
    text = "".join(f"l {a} {b} {vals}\n" for a, b in sample)
    got = [float.fromhex(x) for x in subprocess.run(args, input=text, capture_output=True, text=True, check=True).stdout.split()]
    want = [logit(a, b) for a, b in sample]
    bad = sum(1 for x, y in zip(got, want) if x != y)
    mm = "not run (no CPU matmul in fp16)" if dtype == "fp16" else sum(
        1 for (a, b), y in zip(sample, want) if torch.matmul(qr[a].to(DT[dtype])[None], kr[b].to(DT[dtype])[:, None]).item() != y)
    print(f"  logits {path} {dtype} d={d}: {bad} of {len(sample)} differ from float64-then-{dtype}; torch.matmul in "
          f"{dtype} differs from that in {mm}")
    check(bad == 0, f"logits {path} {dtype}: {bad} differ")
    theta = [mpmath.mpf(base) ** (mpmath.mpf(-2 * i) / d) for i in range(d // 2)]
    h = d // 2
    qf, kf = [float(x) for x in q], [float(x) for x in k]
    def exact(r):
        return float(sum((qf[i] * kf[i] + qf[i + h] * kf[i + h]) * mpmath.cos(r * theta[i]) +
                         (qf[i] * kf[i + h] - qf[i + h] * kf[i]) * mpmath.sin(r * theta[i]) for i in range(h)))
    first = max(abs(logit(r, 0) - exact(r)) for r in range(n))
    pair = max(abs(logit(p + dist, p) - exact(dist)) for p in range(n - dist))
    shift = max(abs(logit(r, 0) - logit(r + d2, d2)) for r in range(n))
    shift_pair = max(abs(logit(p + dist, p) - logit(p + dist + d2, p + d2)) for p in range(n - dist))
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "q.npy"), q.numpy()); np.save(os.path.join(tmp, "k.npy"), k.numpy())
        rep = json.loads(subprocess.run([TOOL, "rope", "--pipeline", path, "--dtype", dtype, "--head-dim", str(d),
                                         "--base", str(base), "--ctx", str(n), "--q", os.path.join(tmp, "q.npy"),
                                         "--k", os.path.join(tmp, "k.npy"), "--distance", str(dist), "--format", "json"],
                                        capture_output=True, text=True, check=True).stdout)
    for key, v in (("qk_first_error", first), ("qk_pair_error", pair), ("qk_shift_first", shift), ("qk_shift_pair", shift_pair)):
        check(math.isclose(rep[key], v, rel_tol=1e-9, abs_tol=1e-12), f"logits {key}: {rep[key]} != {v}")
    print(f"  logits report: first-row error {first:.4g}, pair error {pair:.4g}, shift first {shift:.4g}, shift pairs {shift_pair:.4g} agree")


logits_check("hf-llama", "bf16", 16, 10000, 256, 3)
logits_check("flash-rotary", "fp16", 8, 500000, 128, 5)
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli", "data")
logits_check("hf-llama", "bf16", 8, 10000, 128, 3, qk=(os.path.join(DATA, "rope_q8.npy"), os.path.join(DATA, "rope_k8.npy")))  # tests/cli/rope_qk
print(f"{STATS['values']} frequencies, angles, cos/sin and rotated values compared with PyTorch bit for bit")
for _f in (4, 3, 8, 40, 16, 32):   # the logf arguments of the ggml yarn cases: glibc against correctly rounded
    GLIBC_DIFF["logf"] += GLIBC.logf(float(np.float32(1) / (np.float32(1) / np.float32(_f)))) != float(logf(
        np.float32(1) / (np.float32(1) / np.float32(_f))))
if isinstance(GLIBC, _NoLibm):
    print("ggml-cpu yarn: no libm.so.6 here: glibc's own logf/cosf/sinf/powf not counted")
else:
    print(f"ggml-cpu yarn: this machine's glibc logf differs from the correctly rounded model in {GLIBC_DIFF['logf']} "
          f"of 6 factors, cosf in {GLIBC_DIFF['cosf']} and sinf in {GLIBC_DIFF['sinf']} of {GLIBC_DIFF['n']} angles, "
          f"powf in {GLIBC_DIFF['powf']} of {GLIBC_DIFF['npowf']} theta_scale calls (counted)")
print("FAILED:", len(FAIL)) if FAIL else print("all rope checks agree")
sys.exit(1 if FAIL else 0)
