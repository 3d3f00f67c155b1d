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
the presets unchanged."""
import json, math, os, subprocess, sys, tempfile

try:
    import numpy as np
    import torch
except Exception:
    print("skipped: numpy/torch not importable")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(77)

BIN = sys.argv[1]
FULL = "--full" in sys.argv
DEV = "cuda"
D = 64


def press(H):
    def p2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(H).is_integer():
        return p2(H)
    c = 2 ** math.floor(math.log2(H))
    return p2(c) + p2(2 * c)[0::2][: H - c]


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
    return ([h["first_blind_distance"] for h in r["heads"]], [h["row_zeros"] for h in r["heads"]],
            [h["matrix_zeros"] for h in r["heads"]])


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
