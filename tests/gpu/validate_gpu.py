"""Measure ALiBi attention kernels on a CUDA GPU and compare every count with `alibi-blind simulate`.

Usage: validate_gpu.py BINARY [--full]
Exit 77 (reported as skipped by CTest) without torch or without a CUDA device; 0 when every count agrees;
1 otherwise. For each case of the grid -- heads (including non-powers of two), contexts, dtypes, kernels
(torch softmax = `eager`, SDPA EFFICIENT_ATTENTION = `sdpa-efficient`, CUDNN_ATTENTION = `sdpa-cudnn`,
MATH = `eager`), zero and Gaussian scores -- the script builds the relative ALiBi bias as the H200
calibration script does (fp32 product cast to the dtype), saves the scores to .npy, reads every weight
back (SDPA: through one-hot value vectors, out[i, c] = p(i, jD + c)), and compares each head's first
blind distance, last-row zeros and matrix zeros with `simulate --logits FILE.npy`.

With Gaussian scores s the fused kernels get them through the float mask, mask = dtype(s + bias), so the
emulated pipeline is `<preset>,bias-add=scores,logit-dtype=model` (the mask's rounding); zero scores use
the presets unchanged.

FlexAttention (`flex-alibi`, modelled from source, not measured until this runs): where
torch.nn.attention.flex_attention exists, the attention-gym ALiBi score_mod (slopes exp2(-(h+1)*8/H) in the
kernel; Gaussian scores added inside the score_mod from a captured fp32 tensor) with a causal block mask,
compiled, one-hot value vectors as above. What comes back is the coefficient of v_j in the output, P / l
in the output dtype, while the preset's weight is P itself (P rounded to the query dtype before P.V): every
zero of the model must be a measured zero (checked), and the measured zeros beyond it (a non-zero P whose
P / l underflows the output dtype: an influence zero) are counted and printed, not failed. Without
flex_attention (torch < 2.5) those cases are skipped with a line saying so."""

import json, os, subprocess, sys, tempfile

try:
    import numpy as np
    import torch
except Exception:
    print("skipped: numpy/torch not importable")
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
from alibi_reference import press_slopes   # noqa: E402 (shared with the CPU validators)
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(77)

BIN = sys.argv[1]
FULL = "--full" in sys.argv
DEV = "cuda"
D = 64


press = press_slopes   # Press et al.'s get_slopes (tests/torch/alibi_reference.py)


def counts(p):
    H, n, _ = p.shape
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool, device=p.device))
    z = (p == 0) & causal
    last = z[:, n - 1, :]
    fb = []
    for h in range(H):
        idx = torch.nonzero(last[h]).flatten()
        fb.append(None if len(idx) == 0 else int(n - 1 - idx.max().item()))
    return fb, last.sum(dim=1).tolist(), z.sum(dim=(1, 2)).tolist()


def logits(H, N, dtype, scores):
    m = torch.tensor(press(H), dtype=torch.float32, device=DEV)
    i = torch.arange(N, device=DEV)
    dist = (i[:, None] - i[None, :]).float()
    bias = (-(m[:, None, None] * dist[None])).to(dtype)
    x = (scores + bias.float()).to(dtype) if scores is not None else bias
    return x.masked_fill(dist[None] < 0, float("-inf"))


def run_kernel(kind, x):
    H, N, _ = x.shape
    if kind == "eager":
        return torch.softmax(x, dim=-1, dtype=torch.float32).to(x.dtype).float()
    from torch.nn.attention import sdpa_kernel, SDPBackend
    be = {"sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
          "math": SDPBackend.MATH}[kind]
    q = torch.zeros(1, H, N, D, dtype=x.dtype, device=DEV)
    k = torch.zeros_like(q)
    P = torch.empty(H, N, N, dtype=torch.float32, device=DEV)
    with torch.no_grad(), sdpa_kernel([be]):
        for b in range(N // D):
            v = torch.zeros(1, H, N, D, dtype=x.dtype, device=DEV)
            v[0, :, b * D:(b + 1) * D, :] = torch.eye(D, dtype=x.dtype, device=DEV)
            o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=x[None])
            P[:, :, b * D:(b + 1) * D] = o[0].float()
    return P


def simulate(npy, preset, dt, gaussian):
    spec = preset + (",bias-add=scores,logit-dtype=model" if gaussian and preset != "eager" else "")
    out = subprocess.run([BIN, "simulate", "--logits", npy, "--pipeline", spec, "--dtype", dt, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return ([h["first_blind"] for h in r["heads"]], [h["row_zeros"] for h in r["heads"]],
            [h["matrix_zeros"] for h in r["heads"]])


def run_flex(H, N, dt, scores):
    """FlexAttention with attention-gym's alibi_mod (attn_gym/mods/alibi.py at 290c1e74), causal block mask:
    the output coefficient of every key, read through one-hot value vectors."""
    from torch.nn.attention.flex_attention import flex_attention, create_block_mask
    S = scores.float().contiguous() if scores is not None else None

    def alibi_mod(score, b, h, q_idx, kv_idx):
        scale = torch.exp2(-((h + 1) * 8.0 / H))
        bias = (kv_idx - q_idx) * scale
        if S is not None:
            score = score + S[h, q_idx, kv_idx]
        return score + bias

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    bm = create_block_mask(causal, None, None, N, N, device=DEV)
    fa = torch.compile(flex_attention)
    q = torch.zeros(1, H, N, D, dtype=dt, device=DEV)
    k = torch.zeros_like(q)
    P = torch.empty(H, N, N, dtype=torch.float32, device=DEV)
    with torch.no_grad():
        for b in range(N // D):
            v = torch.zeros(1, H, N, D, dtype=dt, device=DEV)
            v[0, :, b * D:(b + 1) * D, :] = torch.eye(D, dtype=dt, device=DEV)
            o = fa(q, k, v, score_mod=alibi_mod, block_mask=bm)
            P[:, :, b * D:(b + 1) * D] = o[0].float()
    return P


def flex_compare(H, N, dn, dt, s, npy, gaussian):
    """flex-alibi: every model zero must be a measured zero; extra measured zeros (influence) are reported."""
    try:
        import torch.nn.attention.flex_attention  # noqa: F401
    except Exception:
        print("flex-alibi      H=%-3d N=%-5d %s: skipped (no torch.nn.attention.flex_attention)" % (H, N, dn))
        return True
    got = counts(run_flex(H, N, dt, s))
    out = subprocess.run([BIN, "simulate", "--logits", npy, "--heads", str(H), "--pipeline", "flex-alibi", "--dtype",
                          dn, "--format", "json"], check=True, capture_output=True, text=True).stdout
    r = json.loads(out)["heads"]
    ok, extra = True, 0
    for h in range(H):
        mz, gz = r[h]["matrix_zeros"], got[2][h]
        ok &= gz >= mz and got[1][h] >= r[h]["row_zeros"]
        extra += gz - mz
        if gz < mz or got[1][h] < r[h]["row_zeros"]:
            print("   head %d: GPU %s zeros, flex-alibi %s (a model zero the kernel does not have)" % (h + 1, gz, mz))
    print("%-15s H=%-3d N=%-5d %s %-5s %s (%d output zeros beyond P's)" % ("flex-alibi", H, N, dn,
          "gauss" if gaussian else "zero", "agree" if ok else "DIFFER", extra), flush=True)
    return ok


def main():
    heads = [12, 16, 24] if FULL else [12, 16]
    ctxs = [2048, 4096, 8192] if FULL else [2048, 4096]
    dts = {"bf16": torch.bfloat16, "fp16": torch.float16}
    kinds = [("eager", "eager"), ("sdpa-efficient", "sdpa-efficient"), ("sdpa-cudnn", "sdpa-cudnn"),
             ("math", "eager")]
    ok = True
    gen = torch.Generator(device=DEV).manual_seed(1)
    with tempfile.TemporaryDirectory() as tmp:
        for H in heads:
            for N in ctxs:
                for dn, dt in dts.items():
                    for gaussian in (False, True):
                        s = torch.randn(H, N, N, generator=gen, device=DEV) * 2 if gaussian else None
                        npy = os.path.join(tmp, "scores.npy")
                        np.save(npy, (s if s is not None else torch.zeros(H, N, N, device=DEV)).cpu().numpy())
                        x = logits(H, N, dt, s)
                        ok &= flex_compare(H, N, dn, dt, s, npy, gaussian)
                        for kind, preset in kinds:
                            try:
                                got = counts(run_kernel(kind, x))
                            except Exception as e:
                                print("%-15s H=%-3d N=%-5d %s %s: kernel unavailable (%s)" % (kind, H, N, dn,
                                      "gauss" if gaussian else "zero", str(e).splitlines()[0][:60]))
                                continue
                            want = simulate(npy, preset, dn, gaussian)
                            same = got == want
                            ok &= same
                            print("%-15s H=%-3d N=%-5d %s %-5s %s" % (kind, H, N, dn, "gauss" if gaussian else "zero",
                                                                  "agree" if same else "DIFFER"), flush=True)
                            if not same:
                                for h in range(H):
                                    a = (got[0][h], got[1][h], got[2][h])
                                    b = (want[0][h], want[1][h], want[2][h])
                                    if a != b:
                                        print("   head %d: GPU %s, simulate %s" % (h + 1, a, b))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
